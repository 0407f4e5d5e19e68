"""Build a model for inference from a config and a checkpoint."""
import warnings
from typing import Optional, Union

import torch
from mmengine.config import Config
from mmengine.registry import MODELS, init_default_scope
from torch import nn

from sapiens2.engine.launch import load_config


def default_device() -> str:
    return 'cuda' if torch.cuda.is_available() else 'cpu'


def init_model(config: Union[str, Config],
               checkpoint: Optional[str] = None,
               device: Optional[str] = None,
               cfg_options: Optional[dict] = None,
               trust_checkpoint: Optional[bool] = None) -> nn.Module:
    """Build ``cfg.model`` in eval mode on ``device`` and load ``checkpoint`` strictly.

    The backbone's ``init_cfg`` (pretrained weights) is dropped, since the checkpoint holds every weight.
    Official task checkpoints (``backbone.``/``decode_head.`` keys, .safetensors or .pth) load as they are.
    Without a checkpoint the weights stay random (useful for tests and benchmarks only). The config is attached
    as ``model.cfg``. ``trust_checkpoint=True`` loads a torch file holding more than weights (runs its code; see
    docs/checkpoints.md).
    """
    cfg = load_config(config, cfg_options)
    init_default_scope(cfg.get('default_scope', 'sapiens2'))
    model_cfg = cfg.model.copy()
    if isinstance(model_cfg.get('backbone'), dict):
        model_cfg.backbone = dict(model_cfg.backbone, init_cfg=None)
    model = MODELS.build(model_cfg)
    if checkpoint is not None:
        from sapiens2.engine.checkpoint import load_model_weights
        load_model_weights(model, checkpoint, strict=True, trust_checkpoint=trust_checkpoint)
    else:
        warnings.warn(f'no checkpoint given for {getattr(config, "filename", config)}: the model has random weights')
    model.cfg = cfg
    return model.to(device or default_device()).eval()
