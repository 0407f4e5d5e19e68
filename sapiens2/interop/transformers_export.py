"""Export: our weights in the official key layout, a ``config.json`` that describes the architecture
(:mod:`sapiens2.interop.transformers_config`) and a model card, checked by loading the folder with transformers."""
import os
import os.path as osp
from collections import OrderedDict
from typing import Optional, Sequence, Union

import torch
from mmengine.config import Config
from torch import nn

from sapiens2.engine.checkpoint import adapt_keys, extract_state_dict, read_checkpoint_file, save_weights
from sapiens2.utils.atomic_save import atomic_write_text
from sapiens2.version import __version__

from .transformers_config import describe_model
from .transformers_folder import (
    CARD_NAME,
    CONFIG_NAME,
    ROPE_DTYPE_FIELD,
    WEIGHT_DTYPES,
    WEIGHTS_NAME,
    StateDict,
    backbone_of,
    build_model,
    check_strict,
    head_rename,
    is_backbone,
    load_transformers_model,
    rename_prefix,
    require_transformers,
)


def _official_weights(model: nn.Module, state_dict: StateDict) -> StateDict:
    """Our state dict in the official layout, with LayerScale 1 where our blocks have none (transformers always has
    one; multiplying by 1 is exact)."""
    ours, official = head_rename(model)
    weights = rename_prefix(state_dict, ours, official)
    backbone, prefix = backbone_of(model)
    for index in range(backbone.num_layers):
        key = f'{prefix}blocks.{index}.attn.gamma.weight'
        if key not in weights:
            dtype = state_dict[f'{prefix}blocks.{index}.attn.wq.weight'].dtype
            weights[key] = torch.ones(backbone.embed_dims, dtype=dtype)
    return weights


def _writable(out_dir: str, names: Sequence[str], overwrite: bool) -> None:
    existing = [name for name in names if osp.exists(osp.join(out_dir, name))]
    if existing and not overwrite:
        raise FileExistsError(f'{out_dir} already holds {existing}; choose an empty folder or pass overwrite=True '
                              '(--overwrite).')
    os.makedirs(out_dir, exist_ok=True)


def _model_card(hf_class: str, fields: dict, rope_dtype: str, source: str) -> str:
    rope = ('fp32, as transformers computes them, so the outputs match sapiens2 to float32 rounding'
            if rope_dtype == 'fp32' else
            'bf16 (the official Sapiens2 behaviour); transformers computes them in fp32, so its outputs differ from '
            "sapiens2's by about 1e-3 to 1e-2. In sapiens2, `model.backbone.pos_embed_rope_dtype='fp32'` reproduces "
            "transformers' numbers")
    return '\n'.join([
        '---', 'library_name: transformers', 'tags:', '- sapiens2', '---', f'# Sapiens2 ({hf_class})', '',
        f'Exported by sapiens2 {__version__} from {source}.', '',
        '```python', f'from transformers import {hf_class}', '', f'model = {hf_class}.from_pretrained("PATH")', '```',
        '', f'Architecture: hidden size {fields["hidden_size"]}, {fields["num_hidden_layers"]} layers, '
        f'{fields["num_attention_heads"]} heads, patch {fields["patch_size"]}, image size {fields["image_size"]}.', '',
        f'RoPE tables: this model was trained/validated in sapiens2 with {rope} (sapiens2 docs/differences.md).', '',
        'Weights derived from the released Sapiens2 checkpoints keep the Sapiens2 license.', ''])


def model_to_transformers(model: nn.Module,
                          out_dir: str,
                          state_dict: Optional[StateDict] = None,
                          backbone_only: bool = False,
                          verify: bool = True,
                          overwrite: bool = False,
                          source: str = 'a sapiens2 model',
                          dtype: Optional[str] = None) -> str:
    """Write a transformers Sapiens2 folder (config.json, model.safetensors, README.md) for a built model.

    Args:
        model: A ``Sapiens2`` backbone or a task model (pose, seg, normal, pointmap, or a registered head); it may
            live on the ``meta`` device when ``state_dict`` is given. Its ``dataset_meta`` (when set) names the
            labels: ``id2label`` from the keypoint or class names.
        out_dir: Output folder (created); existing output files are an error unless ``overwrite``.
        state_dict: The weights in the model's own layout (default: ``model.state_dict()``); checked strictly.
        backbone_only: Export the backbone of a task model as a ``Sapiens2Model``.
        verify: Load the folder with transformers and require zero missing/unexpected/mismatched keys.
        source: What the weights are, for the model card.
        dtype: ``'float32'``, ``'bfloat16'`` or ``'float16'``: the floating-point weights are cast to it (and
            ``config.json`` says so); None keeps the dtype the weights have.
    Returns:
        ``out_dir``.
    """
    transformers = require_transformers()
    if backbone_only and not is_backbone(model):
        state_dict = None if state_dict is None else OrderedDict(
            (k[len('backbone.'):], v) for k, v in state_dict.items() if k.startswith('backbone.'))
        model = model.backbone
    state_dict = model.state_dict() if state_dict is None else state_dict
    check_strict(model, state_dict, 'The checkpoint')
    hf_class, fields = describe_model(model)
    rope_dtype = 'bf16' if backbone_of(model)[0].rope_embed.dtype == torch.bfloat16 else 'fp32'
    weights = _official_weights(model, state_dict)
    if dtype is not None:
        weights = OrderedDict((k, v.to(_weight_dtype(dtype)) if v.is_floating_point() else v)
                              for k, v in weights.items())
    _writable(out_dir, (CONFIG_NAME, WEIGHTS_NAME, CARD_NAME), overwrite)
    dtype = str(next(iter(weights.values())).dtype).replace('torch.', '')
    config = transformers.Sapiens2Config(**fields, architectures=[hf_class], dtype=dtype,
                                         **{ROPE_DTYPE_FIELD: rope_dtype})
    atomic_write_text(osp.join(out_dir, CONFIG_NAME), config.to_json_string(use_diff=True))  # as save_pretrained
    save_weights(weights, osp.join(out_dir, WEIGHTS_NAME))
    atomic_write_text(osp.join(out_dir, CARD_NAME), _model_card(hf_class, fields, rope_dtype, source))
    if verify:
        load_transformers_model(out_dir, hf_class)
    return out_dir


def _weight_dtype(name: str) -> torch.dtype:
    if name not in WEIGHT_DTYPES:
        raise ValueError(f'dtype {name!r} is not one of {", ".join(WEIGHT_DTYPES)}')
    return getattr(torch, name)


def export_to_transformers(config: Union[str, Config],
                           checkpoint: str,
                           out_dir: str,
                           backbone_only: bool = False,
                           verify: bool = True,
                           overwrite: bool = False,
                           cfg_options: Optional[dict] = None,
                           trust_checkpoint: Optional[bool] = None,
                           dtype: Optional[str] = None) -> str:
    """Export a checkpoint of ours (any supported file, URI and layout) with its config to a transformers folder.

    The model is built on the ``meta`` device (no memory for weights), the checkpoint is checked strictly against it,
    and :func:`model_to_transformers` writes the folder, its labels (``id2label``) named by the layout the checkpoint
    carries (``meta.dataset_meta``), else by the config's dataset metainfo. A bare backbone checkpoint (pretrain) goes
    with ``backbone_only=True`` and any config whose ``model.backbone`` matches it. ``trust_checkpoint`` is that of
    :func:`sapiens2.engine.checkpoint.load_weights`; ``dtype`` that of :func:`model_to_transformers` (None: the
    checkpoint's).
    """
    model = build_model(config, backbone_only, cfg_options=cfg_options)
    loaded = read_checkpoint_file(checkpoint, trust_checkpoint=trust_checkpoint)
    state_dict = extract_state_dict(loaded, str(checkpoint))
    if not backbone_only:
        from sapiens2.apis.builder import model_dataset_meta
        from sapiens2.engine.launch import load_config
        cfg = load_config(config, cfg_options, check_data_layout=False)
        model.dataset_meta = model_dataset_meta(cfg, model, loaded)
    if is_backbone(model) and any(k.startswith('backbone.') for k in state_dict):
        state_dict = OrderedDict((k[len('backbone.'):], v) for k, v in state_dict.items() if k.startswith('backbone.'))
    state_dict = adapt_keys(state_dict, model)
    name = osp.basename(str(config if isinstance(config, str) else getattr(config, 'filename', 'a config')))
    return model_to_transformers(model, out_dir, state_dict, verify=verify, overwrite=overwrite,
                                 source=f'`{osp.basename(str(checkpoint))}` with the config `{name}`', dtype=dtype)
