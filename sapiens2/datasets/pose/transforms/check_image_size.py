"""Refuse an image whose size differs from the width/height its annotation file gives (run right after LoadImage)."""
from mmcv.transforms import BaseTransform
from mmpose.registry import TRANSFORMS

#: The data-info key holding the annotated (height, width) of the image; set by Keypoints308CocoDataset.
ANNOTATED_SHAPE_KEY = 'annotated_img_shape'


@TRANSFORMS.register_module()
class CheckAnnotatedImageSize(BaseTransform):
    """Raise ``ValueError`` naming the image and the annotation file when the loaded image (``ori_shape``) is not
    the ``width`` x ``height`` its annotation gives: the keypoints and boxes would then point at the wrong pixels
    (an image resized after annotation, or the wrong file). Samples without an annotated size pass unchecked.

    :class:`~sapiens2.datasets.pose.Keypoints308CocoDataset` inserts it after every ``LoadImage`` of its pipeline.

    Args:
        ann_file: The annotation file, named in the error.
    """

    def __init__(self, ann_file: str = '') -> None:
        self.ann_file = ann_file

    def transform(self, results: dict) -> dict:
        """Check ``results['ori_shape']`` against the annotated shape; return ``results`` unchanged."""
        annotated = results.get(ANNOTATED_SHAPE_KEY)
        loaded = results.get('ori_shape')
        if annotated is None or loaded is None or tuple(loaded[:2]) == tuple(annotated):
            return results
        raise ValueError(
            f"image {results.get('img_path')} is {loaded[1]}x{loaded[0]} (width x height) but "
            f'{self.ann_file or "its annotation file"} gives {annotated[1]}x{annotated[0]} for image '
            f"{results.get('img_id')}; the keypoints would be off. Use the image that was annotated, or fix its width "
            'and height (and the keypoints) in the annotation file.')

    def __repr__(self) -> str:
        return f'{type(self).__name__}(ann_file={self.ann_file!r})'
