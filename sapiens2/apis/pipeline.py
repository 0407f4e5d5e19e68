"""The config's own test pipeline, made to run on in-memory images without ground truth.

Inference uses the transforms evaluation uses (``cfg.test_dataloader.dataset.pipeline``), as mmseg's
``inference_model`` and mmpose's ``inference_topdown`` do, with two generic changes:

* transforms that only read or derive ground truth are dropped: subclasses of mmcv's ``LoadAnnotations`` (the
  upstream convention, e.g. mmseg's ``LoadAnnotations``) and transforms whose class sets
  ``ground_truth_only = True`` (e.g. ``LoadNormalAnnotations``, ``PointmapGenerateTarget``);
* mmcv's file loader ``LoadImageFromFile`` becomes :class:`LoadImageFromArray` (what mmseg's
  ``LoadImageFromNDArray`` does, without importing mmseg for a dense task; loaders that already accept an ``img``
  array, such as mmpose's ``LoadImage``, are kept).
"""
from typing import List, Sequence

import torch
from mmcv.transforms import LoadAnnotations, LoadImageFromFile
from mmengine.config import Config
from mmengine.dataset import Compose, pseudo_collate
from mmengine.registry import TRANSFORMS, DefaultScope
from torch import nn


def is_ground_truth_transform(transform) -> bool:
    """Whether a transform (object or class) only reads or derives ground truth."""
    cls = transform if isinstance(transform, type) else type(transform)
    return issubclass(cls, LoadAnnotations) or bool(getattr(cls, 'ground_truth_only', False))


class LoadImageFromArray(LoadImageFromFile):
    """``LoadImageFromFile`` for an image given as an array in ``results['img']``: sets ``img_shape`` and
    ``ori_shape`` (and float32 with ``to_float32``) as the file loader does."""

    def transform(self, results: dict) -> dict:
        img = results['img']
        if self.to_float32:
            img = img.astype('float32')
        results.update(img_path=None, img=img, img_shape=img.shape[:2], ori_shape=img.shape[:2])
        return results


def config_test_pipeline(cfg: Config) -> List[dict]:
    """The transforms of ``cfg.test_dataloader.dataset.pipeline`` (what ``tools/test.py`` runs)."""
    try:
        return list(cfg.test_dataloader.dataset.pipeline)
    except AttributeError as err:
        raise KeyError(f'{getattr(cfg, "filename", "the config")} has no test_dataloader.dataset.pipeline; inference '
                       'runs the test pipeline of the config') from err


def inference_pipeline(cfg: Config) -> Compose:
    """Build the test pipeline of ``cfg`` (in its ``default_scope``) for images given as (H, W, 3) BGR arrays.

    The returned pipeline takes ``dict(img=image)`` plus any task inputs (e.g. pose ``bbox``).
    """
    with DefaultScope.overwrite_default_scope(cfg.get('default_scope')):
        transforms = [TRANSFORMS.build(t) if isinstance(t, dict) else t for t in config_test_pipeline(cfg)]
    kept = []
    for transform in transforms:
        if is_ground_truth_transform(transform):
            continue
        if type(transform) is LoadImageFromFile:
            transform = LoadImageFromArray(to_float32=transform.to_float32)
        kept.append(transform)
    return Compose(kept)


def run_test_step(model: nn.Module, pipeline: Compose, data_infos: Sequence[dict]) -> list:
    """Run ``data_infos`` through ``pipeline`` and ``model.test_step`` as one batch (without gradients); return the
    predicted data samples, as mmseg's ``inference_model`` and mmpose's ``inference_topdown`` do."""
    batch = pseudo_collate([pipeline(dict(info)) for info in data_infos])
    with torch.no_grad():
        return model.test_step(batch)
