"""Top-down pose inference: boxes given by the user, an mmdet person detector, or the whole image."""
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Sequence, Union

import mmcv
import numpy as np
from mmengine.config import Config
from mmengine.dataset import Compose
from torch import nn

from sapiens2.structures.person_boxes import check_person_boxes as check_bboxes

from ..notices import Notices
from ..pipeline import inference_pipeline, run_test_step

if TYPE_CHECKING:  # mmpose's modules load when a pose model is built (sapiens2.registration), not with this one
    from mmpose.structures import PoseDataSample

ConfigLike = Union[str, Path, Config]


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
    """Return the person boxes (N, 5) [x1, y1, x2, y2, score] of an mmdet detector, after score filter + NMS.

    The detector runs in fp32 even under the pose model's bf16/fp16 autocast (``--dtype``, ``auto``): mmcv's NMS
    takes float32 only."""
    from mmdet.apis import inference_detector
    from mmpose.evaluation.functional import nms
    with _without_autocast():
        pred = inference_detector(detector, img).pred_instances.cpu().numpy()
    keep = (pred.labels == person_label) & (pred.scores > score_thr)
    dets = np.concatenate([pred.bboxes[keep], pred.scores[keep, None]], axis=1).astype(np.float32)
    return dets[nms(dets, nms_thr)] if len(dets) else dets.reshape(0, 5)


def _without_autocast() -> contextlib.ExitStack:
    """A context that turns off the autocast active on the CPU and on CUDA (none when none is)."""
    import torch
    stack = contextlib.ExitStack()
    for device_type in ('cpu', 'cuda'):
        if torch.is_autocast_enabled(device_type):
            stack.enter_context(torch.autocast(device_type, enabled=False))
    return stack


def whole_image_person_share(model: nn.Module, width: int, height: int) -> float:
    """The share of the model's crop that a person filling the whole ``width`` x ``height`` image covers.

    The whole-image box is expanded to the model's aspect ratio as every box is (the official demo and mmpose's
    ``inference_topdown`` do the same), so on an image far from that ratio the person fills only a band of the crop.
    """
    input_w, input_h = model.cfg.codec['input_size']
    crop_aspect, image_aspect = input_w / input_h, width / height
    return min(crop_aspect / image_aspect, image_aspect / crop_aspect)


def _notice_whole_image_box(model: nn.Module, name: str, width: int, height: int, notices: Notices,
                            stream: Optional[str] = None) -> None:
    """Said for every image (once per video or stream) whose whole-image box is far from the model's aspect."""
    share = whole_image_person_share(model, width, height)
    if share < 0.75:
        once = f' (shown once for {stream})' if stream else ''
        notices.warn(f'whole-image:{stream or name}',
                     f'{name}: no person boxes and no detector, so the whole {width}x{height} image is one box; '
                     f'expanded to the model\'s aspect ratio, a person filling the image covers {share:.0%} of the '
                     'crop, where top-down models are less accurate. Pass --bboxes or --det-config/--det-checkpoint '
                     f'(a person detector) for reliable keypoints.{once}')


def inference_pose_topdown(model: nn.Module,
                           img: Union[str, np.ndarray],
                           bboxes: Optional[Union[Sequence, np.ndarray]] = None,
                           bbox_format: str = 'xyxy',
                           detector: Optional[nn.Module] = None,
                           det_score_thr: float = 0.3,
                           det_nms_thr: float = 0.3,
                           batch_size: int = 8,
                           pipeline: Optional[Compose] = None,
                           name: Optional[str] = None,
                           notices: Optional[Notices] = None,
                           stream: Optional[str] = None) -> List['PoseDataSample']:
    """Estimate the pose of every person box in ``img`` (a path or a BGR array) with the model's test path.

    Boxes come from ``bboxes`` (N, 4) or (N, 5) with scores, in ``bbox_format`` ('xyxy' or 'xywh'; checked with
    :func:`check_bboxes`); if None, from ``detector`` (label 0 with score > ``det_score_thr``, then IoU NMS at
    ``det_nms_thr``, as the official demo); a detector that finds nobody gives no result (an empty list). Without
    boxes and detector the whole image is one box. Each box runs through the config's test pipeline
    (:func:`~sapiens2.apis.pipeline.inference_pipeline`, or ``pipeline``: box padding, expansion to the model's
    aspect ratio, affine crop) and ``model.test_step`` (flip test and decoding as the config sets them), in batches
    of ``batch_size``, as mmpose's ``inference_topdown`` does.

    Args:
        model: A pose estimator from :func:`sapiens2.apis.init_model` (``cfg`` and ``dataset_meta`` attached).
        name: Names the image in error messages (default: the path, or ``'image'``).
        notices: Warnings already shown (:class:`~sapiens2.apis.notices.Notices`), so that the frames of a video warn
            once; default: a new one (every call warns).
        stream: The video or stream ``img`` is a frame of: its notices are said once for it (images: each one).

    Returns:
        One ``PoseDataSample`` per box; ``pred_instances.keypoints`` (1, K, 2) are in image pixels,
        ``keypoint_scores`` (1, K), ``bboxes`` (1, 4) xyxy, ``bbox_scores`` (1, ).
    """
    crops = pose_crops(model, img, bboxes, bbox_format, detector, det_score_thr, det_nms_thr, name, notices, stream)
    return pose_of_crops(model, crops, batch_size, pipeline)


def pose_crops(model: nn.Module,
               img: Union[str, np.ndarray],
               bboxes: Optional[Union[Sequence, np.ndarray]] = None,
               bbox_format: str = 'xyxy',
               detector: Optional[nn.Module] = None,
               det_score_thr: float = 0.3,
               det_nms_thr: float = 0.3,
               name: Optional[str] = None,
               notices: Optional[Notices] = None,
               stream: Optional[str] = None) -> List[dict]:
    """The person boxes of an image (see :func:`inference_pose_topdown`) as the data infos of the test pipeline, one
    per person; those of several images run together in :func:`pose_of_crops` (crops batched across images)."""
    name = name or (str(img) if isinstance(img, (str, Path)) else 'image')
    image = mmcv.imread(img) if isinstance(img, (str, Path)) else img
    if image is None:
        raise FileNotFoundError(f'Cannot read image {img}.')
    if bboxes is not None:
        boxes = check_bboxes(bboxes, image.shape, name, bbox_format)
    elif detector is not None:
        boxes = detect_persons(detector, image, det_score_thr, det_nms_thr)
    else:
        height, width = image.shape[:2]
        boxes = np.array([[0, 0, width, height, 1]], dtype=np.float32)
        _notice_whole_image_box(model, name, width, height, notices or Notices(), stream)
    return [dict(img=image, bbox=box[None, :4], bbox_score=box[4:5], **model.dataset_meta) for box in boxes]


def pose_of_crops(model: nn.Module, crops: Sequence[dict], batch_size: int = 8,
                  pipeline: Optional[Compose] = None) -> List['PoseDataSample']:
    """One ``PoseDataSample`` per crop of :func:`pose_crops` (of one or several images), ``batch_size`` crops per
    forward."""
    pipeline = pipeline or inference_pipeline(model.cfg)
    results: List['PoseDataSample'] = []
    for start in range(0, len(crops), batch_size):
        results += run_test_step(model, pipeline, crops[start:start + batch_size])
    return results
