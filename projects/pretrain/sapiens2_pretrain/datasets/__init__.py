from .image_folder import ImageFolderDataset, find_images
from .load_image_or_skip import LoadImageOrSkip
from .multi_view import MultiViewCrop
from .pack_multi_view import PackMultiViewInputs

__all__ = ['ImageFolderDataset', 'find_images', 'LoadImageOrSkip', 'MultiViewCrop', 'PackMultiViewInputs']
