"""COCO-style 308-keypoint dataset (the official eval-file format) on mmpose's ``BaseCocoStyleDataset``."""
import math
from typing import List, Optional, Tuple

import numpy as np
from mmengine.logging import MessageHub
from mmpose.datasets.datasets.base import BaseCocoStyleDataset
from mmpose.registry import DATASETS

from .metainfo import NUM_KEYPOINTS, keypoints308_metainfo


class AnnotationError(ValueError):
    """A malformed annotation file: the message names the file, the record and how to fix it."""


@DATASETS.register_module()
class Keypoints308CocoDataset(BaseCocoStyleDataset):
    """Top-down 308-keypoint dataset reading a COCO-format JSON.

    Images need ``id``, ``file_name`` (joined to ``data_prefix['img']``), ``width`` and ``height``. Annotations need
    ``id``, ``image_id``, ``bbox`` (xywh), and the keypoints as a flat 308x3 list under ``keypoints`` or, as in the
    official eval files, ``goliath_wholebody_kpts`` (visible iff v > 0). ``area`` defaults to bbox area x 0.53 (as
    mmpose), ``iscrowd`` to 0; ``num_keypoints`` is recounted (v > 0). Crowd instances, instances without visible
    keypoints and empty boxes are skipped, as in the official reader. Malformed records raise ``AnnotationError``.

    The metadata defaults to the packaged ``keypoints308.json``. In test mode the ground truth that mmpose's
    ``CocoMetric`` / ``KeypointPartitionMetric`` evaluate is the dataset's own normalised annotations (packed as
    ``raw_ann_info``), not a re-read of ``ann_file``: that keeps ``goliath_wholebody_kpts`` files and per-part
    evaluation working with standard xtcocotools.
    """

    METAINFO: dict = keypoints308_metainfo()
    KEYPOINT_FIELDS: Tuple[str, ...] = ('keypoints', 'goliath_wholebody_kpts')

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.test_mode:
            # BaseCocoStyleDataset publishes ann_file for CocoMetric; withdraw it so metrics use raw_ann_info.
            MessageHub.get_current_instance().update_info_dict({f"{self.metainfo['dataset_name']}_ann_file": None})

    def _load_annotations(self) -> Tuple[List[dict], List[dict]]:
        instance_list, image_list = super()._load_annotations()
        self._metainfo.setdefault('CLASSES', [dict(id=1, name='person')])  # CocoMetric needs the categories
        orphans = [a['id'] for a in self.coco.dataset.get('annotations', []) if a['image_id'] not in self.coco.imgs]
        if orphans:
            raise AnnotationError(f'{self.ann_file}: annotations {orphans[:5]} (of {len(orphans)}) refer to image ids '
                                  'missing from "images"; add the images or remove the annotations.')
        return instance_list, image_list

    def parse_data_info(self, raw_data_info: dict) -> Optional[dict]:
        """Validate and normalise one annotation (keypoints under ``keypoints``, ``area`` set), then parse it."""
        img = raw_data_info['raw_img_info']
        missing = [key for key in ('file_name', 'width', 'height') if key not in img]
        if missing:
            raise AnnotationError(f'{self.ann_file}: image {img.get("id")} lacks {missing}; every image needs id, '
                                  'file_name, width and height.')
        ann = self.normalise_annotation(raw_data_info['raw_ann_info'])
        return super().parse_data_info(dict(raw_ann_info=ann, raw_img_info=img))

    def normalise_annotation(self, ann: dict) -> dict:
        """Return a copy of ``ann`` with a checked 308x3 ``keypoints`` list, a checked bbox, area and num_keypoints."""
        keypoints = self.read_keypoints(ann)
        bbox = self._check_bbox(ann)
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

    def _check_bbox(self, ann: dict) -> List[float]:
        bbox = ann.get('bbox')
        if (not isinstance(bbox, (list, tuple)) or len(bbox) != 4
                or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in bbox) or min(bbox[2:]) < 0):
            raise AnnotationError(f'{self.ann_file}: annotation {ann.get("id")} has bbox {bbox!r}; expected '
                                  '[x, y, w, h] with 4 finite numbers and w, h >= 0.')
        return list(bbox)
