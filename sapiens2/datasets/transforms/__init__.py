from .dense_photometric import RandomDownUpSample, RandomSolarize
from .dense_random_crop import DenseRandomCropContinuous
from .dense_random_flip import DenseRandomFlip
from .dense_random_scale import DenseRandomScale
from .filter_dense_sample import FilterDenseSample
from .letterbox import Letterbox
from .pack_dense_inputs import PackDenseInputs

__all__ = [
    'RandomDownUpSample', 'RandomSolarize', 'DenseRandomCropContinuous', 'DenseRandomFlip', 'DenseRandomScale',
    'FilterDenseSample', 'Letterbox', 'PackDenseInputs'
]
