from .albedo_head import AlbedoHead
from .chromaticity_loss import AlbedoChromaticityL1Loss

__all__ = ['AlbedoHead', 'AlbedoChromaticityL1Loss']
