"""29-class body-part segmentation dataset: an image folder and a label-map folder (mmseg layout)."""
import os.path as osp
from typing import List, Optional

from mmcv.transforms import LoadAnnotations
from mmseg.datasets import BaseSegDataset
from mmseg.datasets.transforms import LoadAnnotations as SegLoadAnnotations
from mmseg.registry import DATASETS

from sapiens2.metainfo.seg29 import seg29_metainfo, source_label_map

from .check_seg_labels import CheckSegLabels
from .load_seg_annotations import LoadSegAnnotations


@DATASETS.register_module()
class BodyPart29Dataset(BaseSegDataset):
    """Images under ``data_prefix['img_path']`` with same-named label maps under ``data_prefix['seg_map_path']``.

    Label maps hold the 29 class ids of ``seg29.json`` (255 = ignore). Label maps annotated in a source taxonomy
    (e.g. the 34-class dome labels) are remapped on load when ``source_mapping`` names one of the tables of
    ``seg29.json`` (``DOME_MAPPING_34_to_29``, ``DOME_MAPPING_52_to_29``, ``INTERNAL_MAPPING_32_to_29``); ids the
    table does not map become 255. The remap rides on mmseg's ``label_map``, applied by ``LoadAnnotations``.

    With ``check_labels`` (default) every plain ``LoadAnnotations`` of the pipeline becomes a
    :class:`LoadSegAnnotations` (a damaged file, 16-bit ids above 255, a colour label map or one of another size than
    its image raise an error naming the file, instead of loading wrong ids or failing in the loss or the metric), and
    a :class:`CheckSegLabels` follows every ``LoadAnnotations`` (unless the pipeline already has one there): a label
    map holding, after the remap, an id that is neither a class nor ``ignore_index`` raises ``ValueError`` naming the
    file and the ids, instead of corrupting the loss.

    Args:
        source_mapping: Name of a source-to-29 table, or None when the label maps already hold the 29 ids.
        check_labels: Check the loaded label ids (see above).
        img_suffix: Suffix of the image files.
        seg_map_suffix: Suffix of the label-map files.
        **kwargs: :class:`BaseSegDataset` arguments (``data_root``, ``data_prefix``, ``pipeline``...).
    """

    METAINFO = seg29_metainfo()

    def __init__(self,
                 source_mapping: Optional[str] = None,
                 img_suffix: str = '.png',
                 seg_map_suffix: str = '.png',
                 check_labels: bool = True,
                 **kwargs) -> None:
        self.source_label_map = None if source_mapping is None else source_label_map(source_mapping)
        super().__init__(img_suffix=img_suffix, seg_map_suffix=seg_map_suffix, **kwargs)
        if self.source_label_map is not None and self.label_map is not None:
            raise ValueError('source_mapping cannot be combined with a metainfo that changes the classes; '
                             'keep the 29 classes of seg29.json')
        if check_labels:
            self._insert_label_checks()

    def _insert_label_checks(self) -> None:
        """Read label maps with LoadSegAnnotations, and put a CheckSegLabels right after each LoadAnnotations of the
        pipeline that lacks one."""
        transforms = self.pipeline.transforms
        for i, transform in enumerate(transforms):
            if type(transform) is SegLoadAnnotations:
                transforms[i] = LoadSegAnnotations.replacing(transform)
        for i in reversed(range(len(transforms))):
            followed = i + 1 < len(transforms) and isinstance(transforms[i + 1], CheckSegLabels)
            if isinstance(transforms[i], LoadAnnotations) and not followed:
                transforms.insert(i + 1, CheckSegLabels(len(self.metainfo['classes']), self.ignore_index))

    def load_data_list(self) -> List[dict]:
        """Scan the image folder; attach the source remap to every sample."""
        img_dir = self.data_prefix.get('img_path', '')
        if not self.ann_file and not osp.isdir(img_dir):
            raise FileNotFoundError(f'{type(self).__name__}: image folder {img_dir!r} does not exist; '
                                    'check data_root and data_prefix.img_path')
        data_list = super().load_data_list()
        if not data_list:
            raise FileNotFoundError(f'{type(self).__name__}: no *{self.img_suffix} images under {img_dir!r}; '
                                    'check data_prefix.img_path and img_suffix')
        if self.source_label_map is not None:
            for info in data_list:
                info['label_map'] = self.source_label_map
        return data_list
