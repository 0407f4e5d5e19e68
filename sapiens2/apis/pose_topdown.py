"""Top-down 308-keypoint pose inference: boxes given by the user, the whole image, or an mmdet person detector."""
from pathlib import Path
from typing import List, Optional, Sequence, Union

import mmcv
import numpy as np
from mmengine.config import Config
from mmpose.apis import inference_topdown
from mmpose.apis import init_model as mmpose_init_model
from mmpose.evaluation.functional import nms
from mmpose.structures import PoseDataSample
from torch import nn

from sapiens2.engine.checkpoint import load_model_weights

ConfigLike = Union[str, Path, Config]


def init_pose_model(config: ConfigLike, checkpoint: Optional[str] = None, device: str = 'cpu',
                    cfg_options: Optional[dict] = None) -> nn.Module:
    """Build a top-down pose estimator in eval mode from a config and load a checkpoint strictly.

    The checkpoint may be official (``backbone.*`` / ``decode_head.*``, .safetensors or torch) or one saved by this
    project (``head.*``). ``model.cfg`` and ``model.dataset_meta`` (the 308-keypoint metadata) are set as mmpose's
    ``init_model`` does.
    """
    model = mmpose_init_model(config, checkpoint=None, device='cpu', cfg_options=cfg_options)
    if checkpoint is not None:
        load_model_weights(model, checkpoint, strict=True)
    return model.to(device).eval()


def init_person_detector(config: ConfigLike, checkpoint: str, device: str = 'cpu') -> nn.Module:
    """Build an mmdet detector (e.g. the official RTMDet-m person detector); needs mmdet installed."""
    try:
        from mmdet.apis import init_detector
    except ImportError as err:
        raise ImportError('A person detector needs mmdet (pip install mmdet==3.3.0 --no-deps, see README); '
                          'or pass boxes yourself.') from err
    return init_detector(str(config), checkpoint, device=device)


def detect_persons(detector: nn.Module, img: np.ndarray, score_thr: float = 0.3, nms_thr: float = 0.3,
                   person_label: int = 0) -> np.ndarray:
    """Return the person boxes (N, 5) [x1, y1, x2, y2, score] of an mmdet detector, after score filter + NMS."""
    from mmdet.apis import inference_detector
    pred = inference_detector(detector, img).pred_instances.cpu().numpy()
    keep = (pred.labels == person_label) & (pred.scores > score_thr)
    dets = np.concatenate([pred.bboxes[keep], pred.scores[keep, None]], axis=1).astype(np.float32)
    return dets[nms(dets, nms_thr)] if len(dets) else dets.reshape(0, 5)


def inference_pose_topdown(model: nn.Module,
                           img: Union[str, np.ndarray],
                           bboxes: Optional[Union[Sequence, np.ndarray]] = None,
                           bbox_format: str = 'xyxy',
                           detector: Optional[nn.Module] = None,
                           det_score_thr: float = 0.3,
                           det_nms_thr: float = 0.3,
                           batch_size: int = 8) -> List[PoseDataSample]:
    """Estimate the pose of every person box in ``img`` (a path or a BGR array).

    Boxes come from ``bboxes`` (N, 4) in ``bbox_format`` ('xyxy' or 'xywh'); if None, from ``detector``
    (label 0 with score > ``det_score_thr``, then IoU NMS at ``det_nms_thr``, as the official demo); if that finds
    nobody or there is no detector, the whole image is one box. Crops run through the config's test pipeline in
    batches of ``batch_size`` (flip test as the config sets it).

    Returns:
        One ``PoseDataSample`` per box; ``pred_instances.keypoints`` (1, K, 2) are in image pixels,
        ``keypoint_scores`` (1, K), ``bboxes`` (1, 4) xyxy.
    """
    image = mmcv.imread(img) if isinstance(img, (str, Path)) else img
    if image is None:
        raise FileNotFoundError(f'Cannot read image {img}.')
    if bboxes is not None and bbox_format not in ('xyxy', 'xywh'):
        raise ValueError(f'bbox_format must be "xyxy" or "xywh", got {bbox_format!r}.')
    if bboxes is None and detector is not None:
        bboxes, bbox_format = detect_persons(detector, image, det_score_thr, det_nms_thr)[:, :4], 'xyxy'
    boxes = np.asarray(bboxes if bboxes is not None else np.zeros((0, 4)), dtype=np.float32).reshape(-1, 4)
    if len(boxes) == 0:
        return inference_topdown(model, image, None)
    results: List[PoseDataSample] = []
    for start in range(0, len(boxes), batch_size):
        results += inference_topdown(model, image, boxes[start:start + batch_size], bbox_format=bbox_format)
    return results
