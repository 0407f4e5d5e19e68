"""Import: a transformers Sapiens2 folder checked against one of our configs (``config.json`` against the model it
builds, the weights strictly against its state dict), written as our checkpoint or loaded into the model."""
import os.path as osp
import re
from collections import OrderedDict
from typing import Optional, Union

import torch
from mmengine.config import Config
from mmengine.logging import MMLogger
from torch import nn

from sapiens2.engine.checkpoint import adapt_keys, save_weights

from .transformers_config import (
    BACKBONE_HF_CLASS,
    HEAD_CONVERTERS,
    TransformersConversionError,
    describe_model,
    mismatches,
)
from .transformers_folder import (
    CONFIG_NAME,
    ROPE_DTYPE_FIELD,
    StateDict,
    backbone_of,
    build_model,
    check_strict,
    head_rename,
    is_backbone,
    read_transformers_config,
    read_transformers_weights,
    rename_prefix,
    weight_names,
)


def _config_dict(config) -> dict:
    values = config.to_dict()
    values['num_labels'] = config.num_labels
    head = config.head_config
    values['head_config'] = head.to_dict() if hasattr(head, 'to_dict') else (head or {})
    return values


def _imported_state_dict(hf_dir: str, model: nn.Module) -> StateDict:
    """The folder's weights in ``model``'s layout, checked strictly; RoPE periods recomputed from the model."""
    weights = read_transformers_weights(hf_dir)
    if is_backbone(model) and any(k.startswith('backbone.') for k in weights):
        weights = OrderedDict((k[len('backbone.'):], v) for k, v in weights.items() if k.startswith('backbone.'))
    dropped = [k for k in weights if k.endswith('mask_token')]
    if dropped:
        MMLogger.get_current_instance().warning(f'{hf_dir}: {dropped} (masked-image-modeling pretraining only) has '
                                                'no counterpart in sapiens2 and is not imported.')
    weights = OrderedDict((k, v) for k, v in weights.items() if k not in dropped)
    weights = adapt_keys(weights, model)
    backbone, prefix = backbone_of(model)
    weights[f'{prefix}rope_embed.periods'] = backbone.rope_embed._init_periods().to('cpu')
    own = model.state_dict()
    for index in range(backbone.num_layers):
        key = f'{prefix}blocks.{index}.attn.gamma.weight'
        if key in weights and key not in own:
            if not torch.all(weights[key] == 1):
                raise TransformersConversionError(
                    f'{hf_dir}: block {index} has a LayerScale other than 1, but the config builds blocks without one '
                    '(layer_scale_init_value=0); set layer_scale_init_value > 0 in the backbone config.')
            del weights[key]
    check_strict(model, weights, f'The weights in {hf_dir}')
    return weights


def _class_of_weights(hf_dir: str) -> str:
    """The transformers class a folder's weights are of, when its config.json names no ``architectures``: each
    task's predictor is ``decode_head.conv_<task>`` (a backbone alone has none)."""
    tasks = {c.task: c.hf_class for c in HEAD_CONVERTERS.values()}
    for name in weight_names(hf_dir):
        found = re.fullmatch(r'decode_head\.conv_(\w+)\.weight', name)
        if found and found.group(1) in tasks:
            return tasks[found.group(1)]
    return BACKBONE_HF_CLASS


def _check_config(hf_dir: str, model: nn.Module) -> str:
    """Compare the folder's config.json with the model; return the RoPE dtype it was exported with (or '')."""
    config = read_transformers_config(hf_dir)
    hf_class, expected = describe_model(model)
    architecture = (config.architectures or [_class_of_weights(hf_dir)])[0]
    if not is_backbone(model) and architecture != hf_class:
        def task(name: str) -> str:
            found = next((c.task for c in HEAD_CONVERTERS.values() if c.hf_class == name), None)
            return f'a {found} model ({name})' if found else f'a {name}'
        raise TransformersConversionError(f'{hf_dir} holds {task(architecture)} but the config builds '
                                          f'{task(hf_class)}; use a config of the folder\'s task (or '
                                          'backbone_only=True for its backbone alone).')
    found = mismatches(expected, _config_dict(config))
    if found:
        raise TransformersConversionError(f'{hf_dir}/{CONFIG_NAME} does not describe the model of the config:\n  - ' +
                                          '\n  - '.join(found))
    return getattr(config, ROPE_DTYPE_FIELD, '')


def import_from_transformers(hf_dir: str,
                             config: Union[str, Config],
                             dst: str,
                             backbone_only: bool = False,
                             overwrite: bool = False,
                             cfg_options: Optional[dict] = None) -> str:
    """Write a transformers Sapiens2 folder's weights as a checkpoint of ours (``.safetensors`` or ``.pth`` by suffix).

    ``config.json`` is checked against the model of ``config`` (architecture, head layers, number of labels) and the
    weights strictly against its state dict. The checkpoint has the official layout (``backbone.*``/``decode_head.*``,
    bare keys for ``backbone_only``), which ``load_from``, ``init_cfg`` and ``tools/test.py`` read as they are.
    Set ``pos_embed_rope_dtype='fp32'`` in the backbone config to reproduce transformers' outputs exactly.
    """
    model = build_model(config, backbone_only, cfg_options=cfg_options)
    _check_config(hf_dir, model)
    weights = _imported_state_dict(hf_dir, model)
    ours, official = head_rename(model)
    if osp.exists(dst) and not overwrite:
        raise FileExistsError(f'{dst} exists; choose another path or pass overwrite=True (--overwrite).')
    save_weights(rename_prefix(weights, ours, official), dst)
    return dst


def load_model_from_transformers(hf_dir: str,
                                 config: Union[str, Config],
                                 rope_dtype: Optional[str] = 'fp32',
                                 backbone_only: bool = False,
                                 device: Union[str, torch.device] = 'cpu',
                                 cfg_options: Optional[dict] = None) -> nn.Module:
    """Build the model of ``config`` and load a transformers folder into it (strictly), in eval mode.

    ``rope_dtype`` sets the backbone's ``pos_embed_rope_dtype``: ``'fp32'`` (default) reproduces transformers'
    outputs, ``'bf16'`` is the official Sapiens2 behaviour, None keeps the config's value.
    """
    options = dict(cfg_options or {})
    if rope_dtype is not None:
        key = 'model.pos_embed_rope_dtype' if _is_bare(config) else 'model.backbone.pos_embed_rope_dtype'
        options[key] = rope_dtype
    meta = build_model(config, backbone_only, cfg_options=options)
    _check_config(hf_dir, meta)
    model = build_model(config, backbone_only, device='cpu', cfg_options=options)
    weights = _imported_state_dict(hf_dir, model)
    model.load_state_dict(weights, strict=True)
    return model.to(device).eval()


def _is_bare(config: Union[str, Config]) -> bool:
    from sapiens2.engine.launch import load_config
    return load_config(config, check_data_layout=False).model.get('type') == 'Sapiens2'
