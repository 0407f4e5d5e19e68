"""A transformers Sapiens2 folder and our models' key layout, shared by export, import and comparison: the folder's
files, reading them, loading them with transformers, building our model of a config and renaming its keys.

transformers is imported only when a function that needs it runs.
"""
import json
import os.path as osp
from collections import OrderedDict
from typing import Dict, List, Optional, Tuple, Union

import torch
from mmengine.config import Config
from torch import nn

from sapiens2.engine.checkpoint import compare_keys, load_weights

from .transformers_config import BACKBONE_HF_CLASS, TransformersConversionError, find_head

CONFIG_NAME = 'config.json'
WEIGHTS_NAME = 'model.safetensors'
INDEX_NAME = 'model.safetensors.index.json'
CARD_NAME = 'README.md'
MIN_TRANSFORMERS = (5, 0)
ROPE_DTYPE_FIELD = 'sapiens2_pos_embed_rope_dtype'
#: The dtypes an export can write its weights in (``config.json``'s ``dtype``).
WEIGHT_DTYPES = ('float32', 'bfloat16', 'float16')
StateDict = Dict[str, torch.Tensor]


def require_transformers():
    """The transformers module (>= 5), or an ImportError saying how to install it."""
    try:
        import transformers
    except ImportError as err:
        raise ImportError('Converting to or from transformers needs transformers >= 5: pip install '
                          '"transformers>=5" (requirements/tests.txt pins the tested version).') from err
    version = tuple(int(part) for part in transformers.__version__.split('.')[:2] if part.isdigit())
    if version < MIN_TRANSFORMERS or not hasattr(transformers, 'Sapiens2Config'):
        raise ImportError(f'transformers {transformers.__version__} has no Sapiens2 classes (or renames keys the '
                          'old way); install transformers >= 5.')
    return transformers


def build_model(config: Union[str, Config], backbone_only: bool = False, device: Union[str, torch.device] = 'meta',
                cfg_options: Optional[dict] = None) -> nn.Module:
    """Build ``cfg.model`` (or only its ``backbone``) without loading any checkpoint, on ``device``.

    On the default ``meta`` device no memory is allocated: enough to read the architecture and the state-dict keys.
    """
    from mmengine.registry import MODELS, init_default_scope

    from sapiens2.engine.launch import load_config
    cfg = load_config(config, cfg_options, check_data_layout=False)  # conversion reads no dataset
    init_default_scope(cfg.get('default_scope', 'sapiens2'))
    model_cfg = cfg.model.copy()
    if isinstance(model_cfg.get('backbone'), dict):
        model_cfg.backbone = dict(model_cfg.backbone, init_cfg=None)
    if backbone_only:
        if not isinstance(model_cfg.get('backbone'), dict):
            raise TransformersConversionError(f'The config model ({model_cfg.get("type")}) has no backbone.')
        model_cfg = model_cfg.backbone
    with torch.device(device):
        model = MODELS.build(model_cfg)
    return model.eval()


def backbone_of(model: nn.Module) -> Tuple[nn.Module, str]:
    """(backbone, its key prefix in the model's state dict)."""
    return (model, '') if is_backbone(model) else (model.backbone, 'backbone.')


def head_rename(model: nn.Module) -> Tuple[str, str]:
    """(our head prefix, official head prefix): mmpose keeps the head in ``head``, the official layout in
    ``decode_head``."""
    converter, _ = (None, None) if is_backbone(model) else find_head(model)
    if converter is not None and converter.head_attr != 'decode_head':
        return f'{converter.head_attr}.', 'decode_head.'
    return 'decode_head.', 'decode_head.'


def rename_prefix(state_dict: StateDict, old: str, new: str) -> StateDict:
    """``state_dict`` with the key prefix ``old`` replaced by ``new``."""
    if old == new:
        return OrderedDict(state_dict)
    return OrderedDict((new + k[len(old):] if k.startswith(old) else k, v) for k, v in state_dict.items())


def check_strict(model: nn.Module, state_dict: StateDict, source: str) -> None:
    """Raise :class:`TransformersConversionError` naming the keys of ``state_dict`` (from ``source``) that do not
    match ``model``'s (missing, unexpected, other shapes)."""
    missing, unexpected, mismatched = compare_keys(model, state_dict)
    if missing or unexpected or mismatched:
        own = model.state_dict()
        shapes = [f'{k} {tuple(state_dict[k].shape)} vs {tuple(own[k].shape)}' for k in mismatched]
        lines = [f'{title} ({len(keys)}): {", ".join(keys[:20])}{" ..." if len(keys) > 20 else ""}'
                 for title, keys in (('missing', missing), ('unexpected', unexpected), ('shape mismatch', shapes))
                 if keys]
        raise TransformersConversionError(f'{source} does not match {type(model).__name__} built from the config:\n  '
                                          + '\n  '.join(lines) + '\nCheck that the config is the one the weights '
                                          'were trained with.')


def is_backbone(model: nn.Module) -> bool:
    """Whether ``model`` is a bare ``Sapiens2`` backbone (no task head)."""
    return type(model).__name__ == 'Sapiens2'


def local_dir(hf_dir: str) -> str:
    """``hf_dir`` (``~`` expanded), refused unless it is a local transformers folder."""
    hf_dir = osp.expanduser(str(hf_dir))
    if not osp.isfile(osp.join(hf_dir, CONFIG_NAME)):
        raise FileNotFoundError(f'{hf_dir} is not a transformers model folder (no {CONFIG_NAME}); give a local '
                                'folder, e.g. one downloaded with huggingface_hub.snapshot_download.')
    return hf_dir


def read_transformers_config(hf_dir: str):
    """The folder's ``Sapiens2Config`` (defaults resolved by transformers)."""
    transformers = require_transformers()
    config = transformers.AutoConfig.from_pretrained(local_dir(hf_dir))
    if config.model_type != 'sapiens2':
        raise TransformersConversionError(f'{hf_dir}/{CONFIG_NAME} is a {config.model_type!r} model, not sapiens2.')
    return config


def weight_names(hf_dir: str) -> List[str]:
    """The tensor names of a transformers folder, read from the headers (no tensor is loaded); [] without
    weights."""
    hf_dir = local_dir(hf_dir)
    single, index = osp.join(hf_dir, WEIGHTS_NAME), osp.join(hf_dir, INDEX_NAME)
    try:
        if osp.isfile(single):
            from safetensors import safe_open
            with safe_open(single, framework='pt') as f:
                return list(f.keys())
        if osp.isfile(index):
            with open(index) as f:
                return list(json.load(f)['weight_map'])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return []


def read_transformers_weights(hf_dir: str) -> StateDict:
    """The tensors of a transformers folder (single file or shards), keys as stored (the official layout)."""
    hf_dir = local_dir(hf_dir)
    single, index = osp.join(hf_dir, WEIGHTS_NAME), osp.join(hf_dir, INDEX_NAME)
    if osp.isfile(single):
        return load_weights(single)
    if osp.isfile(index):
        with open(index) as f:
            shards = sorted(set(json.load(f)['weight_map'].values()))
        weights: StateDict = OrderedDict()
        for shard in shards:
            weights.update(load_weights(osp.join(hf_dir, shard)))
        return weights
    raise FileNotFoundError(f'{hf_dir} has no {WEIGHTS_NAME} or {INDEX_NAME}; only safetensors folders are read.')


def load_transformers_model(hf_dir: str, hf_class: Optional[str] = None,
                            dtype: Optional[torch.dtype] = None) -> nn.Module:
    """``from_pretrained(hf_dir, output_loading_info=True)`` with the folder's (or the given) class, requiring zero
    missing, unexpected and mismatched keys; returns the model in eval mode, in ``dtype`` (default: transformers',
    the ``dtype`` of ``config.json``)."""
    transformers = require_transformers()
    hf_class = hf_class or (read_transformers_config(hf_dir).architectures or [BACKBONE_HF_CLASS])[0]
    options = {} if dtype is None else dict(dtype=dtype)
    model, info = getattr(transformers, hf_class).from_pretrained(local_dir(hf_dir), output_loading_info=True,
                                                                  **options)
    bad = {name: sorted(map(str, info.get(name) or ())) for name in ('missing_keys', 'unexpected_keys',
                                                                     'mismatched_keys')}
    bad = {name: keys for name, keys in bad.items() if keys}
    if bad or info.get('error_msgs'):
        raise TransformersConversionError(f'transformers {hf_class}.from_pretrained({hf_dir}) does not load every '
                                          f'weight: {bad or info["error_msgs"]}')
    return model.eval()
