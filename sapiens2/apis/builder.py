"""Build a model for inference from a config and a checkpoint (every task: pose, seg, the dense projects)."""
import sys
import warnings
from typing import Optional, Tuple, Union

from mmengine.config import Config
from mmengine.registry import DATASETS, MODELS, init_default_scope
from torch import nn

from sapiens2.engine.launch import load_config
from sapiens2.utils.devices import resolve_device


def model_input_size(cfg: Config) -> Tuple[int, int]:
    """Network input (H, W) of a config: the backbone's ``img_size``."""
    size = cfg.model.get('backbone', {}).get('img_size')
    if size is None:
        raise KeyError('cannot tell the network input size: set model.backbone.img_size in the config')
    size = (size, size) if isinstance(size, int) else tuple(size)
    return int(size[0]), int(size[1])


def config_dataset_meta(cfg: Config, model: nn.Module) -> Optional[dict]:
    """The dataset metainfo a model predicts with, as the upstream ``init_model`` functions attach it.

    Pose estimators get mmpose's parsed metainfo of the training dataset (keypoint names, flip indices, skeleton,
    colours), as mmpose's ``init_model``; other models the ``METAINFO`` of their test dataset class updated with the
    config's ``metainfo`` (e.g. seg classes and palette), or None when there is none.
    """
    pose_estimators = sys.modules.get('mmpose.models.pose_estimators.base')  # imported by every pose model
    if pose_estimators is not None and isinstance(model, pose_estimators.BasePoseEstimator):
        return pose_dataset_meta(cfg)
    dataset_cfg = cfg.get('test_dataloader', {}).get('dataset', {})
    dataset_type = dataset_cfg.get('type')
    if dataset_type is None:
        return None
    scope = cfg.get('default_scope')
    if isinstance(dataset_type, str) and scope and '.' not in dataset_type:
        dataset_type = f'{scope}.{dataset_type}'  # the root registry finds a scope's classes by the scoped name
    dataset_cls = dataset_type if isinstance(dataset_type, type) else DATASETS.get(dataset_type)
    meta = dict(getattr(dataset_cls, 'METAINFO', None) or {})
    meta.update(dataset_cfg.get('metainfo') or {})
    return meta or None


def pose_dataset_meta(cfg: Config) -> Optional[dict]:
    """mmpose's parsed metainfo of the config's training dataset (its ``metainfo``, else its class's ``METAINFO``),
    as mmpose's ``init_model`` attaches it, without importing ``mmpose.apis`` (whose inferencers import mmdet)."""
    from mmpose.datasets.datasets.utils import parse_pose_metainfo
    from mmpose.registry import DATASETS
    dataset_cfg = cfg.get('train_dataloader', {}).get('dataset')
    if not dataset_cfg:
        return None
    metainfo = dataset_cfg.get('metainfo')
    if metainfo is None:
        kind = dataset_cfg['type']
        dataset_cls = kind if isinstance(kind, type) else DATASETS.get(kind)
        metainfo = getattr(dataset_cls, 'METAINFO', None)
    return parse_pose_metainfo(dict(metainfo)) if metainfo else None


def checkpoint_dataset_meta(checkpoint: dict) -> Optional[dict]:
    """The ``meta.dataset_meta`` a checkpoint carries (training saves the training dataset's metainfo there, for pose
    as mmpose's ``parse_pose_metainfo`` gives it), or None."""
    meta = checkpoint.get('meta')
    dataset_meta = meta.get('dataset_meta') if isinstance(meta, dict) else None
    if not isinstance(dataset_meta, dict) or not dataset_meta:
        return None
    return json_dataset_meta(dataset_meta)


def json_dataset_meta(dataset_meta: dict) -> dict:
    """A ``dataset_meta`` read back from JSON (a checkpoint's, a bundle's), with ``keypoint_id2name``'s int keys."""
    dataset_meta = dict(dataset_meta)
    if isinstance(dataset_meta.get('keypoint_id2name'), dict):  # int keys, strings after a JSON round trip
        dataset_meta['keypoint_id2name'] = {int(k): v for k, v in dataset_meta['keypoint_id2name'].items()}
    return dataset_meta


def model_dataset_meta(cfg: Config, model: nn.Module, checkpoint: Optional[dict] = None) -> Optional[dict]:
    """A model's layout: the ``dataset_meta`` of its loaded ``checkpoint`` dict, else its config's (mmpose's
    ``init_model`` order)."""
    return (checkpoint_dataset_meta(checkpoint) if checkpoint is not None else None) or config_dataset_meta(cfg, model)


def _with_hub_head_widths(model: nn.Module, cfg: Config, model_cfg: Config, checkpoint: str) -> nn.Module:
    """``model``, rebuilt with the dense-head widths of the checkpoint's Hub ``config.json`` when they differ from
    the config's (the released widths win; ``cfg.model`` is updated to match)."""
    from sapiens2.engine.checkpoint import resolve_checkpoint_path
    from sapiens2.hub.config_check import hub_head_widths
    config_file, widths = hub_head_widths(model, resolve_checkpoint_path(checkpoint))
    if not widths:
        return model
    head_key = 'decode_head' if 'decode_head' in model_cfg else 'head'
    warnings.warn(f'head widths from {config_file} override the config: {widths}')
    cfg.model[head_key].update(widths)
    model_cfg[head_key] = dict(model_cfg[head_key], **widths)
    return MODELS.build(model_cfg)


def init_model(config: Union[str, Config],
               checkpoint: Optional[str] = None,
               device: Optional[str] = None,
               cfg_options: Optional[dict] = None,
               trust_checkpoint: Optional[bool] = None) -> nn.Module:
    """Build ``cfg.model`` in eval mode on ``device`` and load ``checkpoint`` strictly; the one model builder of
    sapiens2 (inferencer, tools, tests), for every task.

    ``config`` is a path, a packaged name (``sapiens2::pose/...py``) or a ``Config``. The backbone's ``init_cfg``
    (pretrained weights) is dropped, since the checkpoint holds every weight. Official task checkpoints
    (``backbone.``/``decode_head.`` keys, .safetensors or .pth) and MMEngine checkpoints load as they are. Without a
    checkpoint the weights stay random (useful for tests and benchmarks only). The config is attached as
    ``model.cfg`` and the dataset metainfo, the model's layout, as ``model.dataset_meta``
    (:func:`model_dataset_meta`: the checkpoint's, else the config's).
    ``trust_checkpoint=True`` loads a torch file holding more than weights (runs its code; see docs/checkpoints.md).
    """
    device = resolve_device(device)
    cfg = load_config(config, cfg_options, check_data_layout=False)  # inference reads no dataset
    init_default_scope(cfg.get('default_scope', 'sapiens2'))
    model_cfg = cfg.model.copy()
    if isinstance(model_cfg.get('backbone'), dict):
        model_cfg.backbone = dict(model_cfg.backbone, init_cfg=None)
    model = MODELS.build(model_cfg)
    loaded = None
    if checkpoint is not None:
        model = _with_hub_head_widths(model, cfg, model_cfg, checkpoint)
        from sapiens2.engine.checkpoint import load_model_weights, read_model_checkpoint
        loaded = read_model_checkpoint(model, checkpoint, trust_checkpoint=trust_checkpoint)
        load_model_weights(model, loaded, strict=True, source=str(checkpoint))
    else:
        warnings.warn(f'no checkpoint given for {getattr(config, "filename", config)}: the model has random weights')
    model.cfg = cfg
    dataset_meta = model_dataset_meta(cfg, model, loaded)
    if dataset_meta is not None:
        model.dataset_meta = dataset_meta
    return model.to(device).eval()
