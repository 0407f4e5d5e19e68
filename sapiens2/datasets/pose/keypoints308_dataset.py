"""COCO-style 308-keypoint dataset (the official eval-file format) on mmpose's ``BaseCocoStyleDataset``."""
import os.path as osp
from collections import Counter
from typing import Dict, List, Optional, Tuple

import numpy as np
from mmcv.transforms import LoadImageFromFile
from mmengine.fileio import exists, get_local_path
from mmengine.logging import MessageHub
from mmpose.datasets.datasets.base import BaseCocoStyleDataset
from mmpose.registry import DATASETS
from xtcocotools.coco import COCO

from .annotation_schema import AnnotationError, read_annotation_json, validate_keypoint_coco
from .metainfo import NUM_KEYPOINTS, keypoints308_metainfo
from .transforms.check_image_size import ANNOTATED_SHAPE_KEY, CheckAnnotatedImageSize

__all__ = ['AnnotationError', 'Keypoints308CocoDataset']


@DATASETS.register_module()
class Keypoints308CocoDataset(BaseCocoStyleDataset):
    """Top-down 308-keypoint dataset reading a COCO-format JSON.

    Images need ``id``, ``file_name`` (joined to ``data_prefix['img']``), ``width`` and ``height``. Annotations need
    ``id``, ``image_id``, ``bbox`` (xywh), and the keypoints as a flat 308x3 list under ``keypoints`` or, as in the
    official eval files, ``goliath_wholebody_kpts`` (visible iff v > 0). ``area`` defaults to bbox area x 0.53 (as
    mmpose), ``iscrowd`` to 0; ``num_keypoints`` is recounted (v > 0). Crowd instances, instances without visible
    keypoints and empty boxes are skipped, as in the official reader. The file is schema-checked
    (:func:`~.annotation_schema.validate_keypoint_coco`, which also rejects boxes outside their image) before
    xtcocotools indexes it; malformed files and records raise ``AnnotationError`` naming the file and the record, and
    so does a file in which no annotation is usable (with the count of each reason). With ``check_image_size``
    (default) a :class:`~.transforms.CheckAnnotatedImageSize` follows every image loading of the pipeline: an image
    whose size is not the annotated width/height raises an error instead of training on misplaced keypoints.

    The metadata defaults to the packaged ``keypoints308.json``. In test mode the ground truth that mmpose's
    ``CocoMetric`` / ``KeypointPartitionMetric`` evaluate is the dataset's own normalised annotations (packed as
    ``raw_ann_info``), not a re-read of ``ann_file``: that keeps ``goliath_wholebody_kpts`` files and per-part
    evaluation working with standard xtcocotools.
    """

    METAINFO: dict = keypoints308_metainfo()
    KEYPOINT_FIELDS: Tuple[str, ...] = ('keypoints', 'goliath_wholebody_kpts')

    def __init__(self, *args, check_image_size: bool = True, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if check_image_size:
            self._insert_image_size_checks()
        if self.test_mode:
            # BaseCocoStyleDataset publishes ann_file for CocoMetric; withdraw it so metrics use raw_ann_info.
            MessageHub.get_current_instance().update_info_dict({f"{self.metainfo['dataset_name']}_ann_file": None})

    def _insert_image_size_checks(self) -> None:
        transforms = self.pipeline.transforms
        for i in reversed(range(len(transforms))):
            followed = i + 1 < len(transforms) and isinstance(transforms[i + 1], CheckAnnotatedImageSize)
            if isinstance(transforms[i], LoadImageFromFile) and not followed:
                transforms.insert(i + 1, CheckAnnotatedImageSize(self.ann_file))

    def load_data_list(self) -> List[dict]:
        """mmpose's data list; a file without a single usable annotation raises ``AnnotationError``."""
        self._skipped: Counter = Counter()
        data_list = super().load_data_list()
        if not data_list and not self.bbox_file:
            reasons = ', '.join(f'{n} {why}' for why, n in self._skipped.items()) or 'the file lists no annotation'
            raise AnnotationError(f'{self.ann_file}: no usable person annotation ({reasons}); crowd annotations, '
                                  'empty boxes (w or h = 0) and annotations without a visible keypoint (v > 0) are '
                                  'skipped. Fix the boxes and keypoints, or check that this is the right file.')
        return data_list

    def _get_topdown_data_infos(self, instance_list: List[Dict]) -> List[Dict]:
        """mmpose's filter of the instances, counting why each skipped one is skipped."""
        kept = super()._get_topdown_data_infos(instance_list)
        if len(kept) < len(instance_list):
            kept_ids = {id(info) for info in kept}
            self._skipped.update(_skip_reason(info) for info in instance_list if id(info) not in kept_ids)
        return kept

    def keypoint_schema(self) -> Tuple[Dict[str, int], Tuple[str, ...]]:
        """Return ({keypoint field: number of keypoints}, fields of which an annotation needs at least one)."""
        return {field: NUM_KEYPOINTS for field in self.KEYPOINT_FIELDS}, self.KEYPOINT_FIELDS

    def _load_annotations(self) -> Tuple[List[dict], List[dict]]:
        """mmpose's COCO loading, with the JSON read and schema-checked here before xtcocotools indexes it."""
        if not exists(self.ann_file):
            raise FileNotFoundError(f'{self.ann_file}: annotation file not found; check data_root and ann_file.')
        with get_local_path(self.ann_file) as local_path:
            data = read_annotation_json(local_path, name=self.ann_file)
        validate_keypoint_coco(data, self.ann_file, *self.keypoint_schema())
        for ann in data['annotations']:
            ann.setdefault('category_id', 1)  # xtcocotools indexes by category
        self.coco = COCO(self.ann_file, ann_data=data)
        if 'categories' in data:
            self._metainfo['CLASSES'] = self.coco.loadCats(self.coco.getCatIds())
        self._metainfo.setdefault('CLASSES', [dict(id=1, name='person')])  # CocoMetric needs the categories
        instance_list, image_list = [], []
        for img_id in self.coco.getImgIds():
            if img_id % self.sample_interval != 0:
                continue
            img = self.coco.loadImgs(img_id)[0]
            img.update(img_id=img_id, img_path=osp.join(self.data_prefix['img'], img['file_name']))
            image_list.append(img)
            for ann in self.coco.loadAnns(self.coco.getAnnIds(imgIds=img_id)):
                instance_info = self.parse_data_info(dict(raw_ann_info=ann, raw_img_info=img))
                if instance_info:
                    instance_list.append(instance_info)
        return instance_list, image_list

    def parse_data_info(self, raw_data_info: dict) -> Optional[dict]:
        """Normalise one (schema-checked) annotation (keypoints under ``keypoints``, ``area`` set), then parse it."""
        ann = self.normalise_annotation(raw_data_info['raw_ann_info'])
        img = raw_data_info['raw_img_info']
        data_info = super().parse_data_info(dict(raw_ann_info=ann, raw_img_info=img))
        if data_info is not None and self.data_mode == 'topdown':
            data_info[ANNOTATED_SHAPE_KEY] = (img['height'], img['width'])
        return data_info

    def normalise_annotation(self, ann: dict) -> dict:
        """Return a copy of a schema-checked ``ann`` with a 308x3 ``keypoints`` list, area and num_keypoints."""
        keypoints = self.read_keypoints(ann)
        bbox = ann['bbox']
        out = {k: v for k, v in ann.items() if k not in self.KEYPOINT_FIELDS}
        out['keypoints'] = keypoints.reshape(-1).tolist()
        out['num_keypoints'] = int((keypoints[:, 2] > 0).sum())
        out.setdefault('area', max(float(bbox[2] * bbox[3]) * 0.53, 1.0))
        out.setdefault('iscrowd', 0)
        out.setdefault('category_id', 1)
        return out

    def read_keypoints(self, ann: dict) -> np.ndarray:
        """Return the annotation's keypoints as a (308, 3) float array (x, y, visibility)."""
        field = next((f for f in self.KEYPOINT_FIELDS if f in ann), None)
        if field is None:
            raise AnnotationError(f'{self.ann_file}: annotation {ann.get("id")} has none of the keypoint fields '
                                  f'{list(self.KEYPOINT_FIELDS)}.')
        return self._as_keypoints(ann[field], NUM_KEYPOINTS, ann, field)

    def _as_keypoints(self, values, num: int, ann: dict, field: str) -> np.ndarray:
        flat = np.asarray(values, dtype=np.float32).reshape(-1)
        if flat.size != num * 3:
            raise AnnotationError(f'{self.ann_file}: annotation {ann.get("id")} field "{field}" has {flat.size} '
                                  f'values; expected {num} keypoints x 3 (x, y, v) = {num * 3}.')
        return flat.reshape(num, 3)


def _skip_reason(info: dict) -> str:
    if info.get('iscrowd'):
        return 'crowd'
    box = info['bbox'][0]
    if box[2] <= box[0] or box[3] <= box[1]:
        return 'with an empty box'
    return 'without a visible keypoint'
