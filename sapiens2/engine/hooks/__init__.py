"""Generic training hooks (registered in MMEngine's root HOOKS registry)."""
from .non_finite_loss_hook import NonFiniteLossHook

__all__ = ['NonFiniteLossHook']
