"""Generic training and test hooks (registered in MMEngine's root HOOKS registry)."""
from .data_check_hook import DataCheckHook
from .non_finite_loss_hook import NonFiniteLossHook
from .save_test_metrics_hook import SaveTestMetricsHook
from .supervised_pixels_hook import SupervisedPixelsHook

__all__ = ['DataCheckHook', 'NonFiniteLossHook', 'SaveTestMetricsHook', 'SupervisedPixelsHook']
