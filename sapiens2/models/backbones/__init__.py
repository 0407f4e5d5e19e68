from .sapiens2 import ARCH_SETTINGS, Sapiens2

__all__ = ['ARCH_SETTINGS', 'Sapiens2']
