from .matting_metric import MattingMetric, connectivity_error, gradient_error, mse, sad

__all__ = ['MattingMetric', 'connectivity_error', 'gradient_error', 'mse', 'sad']
