"""Convert models both ways between sapiens2 and Hugging Face transformers' Sapiens2 classes (transformers >= 5).

A transformers Sapiens2 folder is ``config.json`` (a ``Sapiens2Config``) + ``model.safetensors`` (or shards with
``model.safetensors.index.json``) in the **official key layout**: transformers 5.x ``save_pretrained`` writes the
official names and ``from_pretrained`` renames them on load. So

* **export** (:func:`export_to_transformers`, :func:`model_to_transformers`) writes our weights in the official
  layout, a ``config.json`` describing the architecture (:mod:`sapiens2.interop.transformers_config`; whatever
  transformers cannot express fails with :class:`TransformersConversionError`) and a model card, then loads the
  folder with ``from_pretrained(..., output_loading_info=True)`` and requires zero missing, unexpected and mismatched
  keys;
* **import** (:func:`import_from_transformers`, :func:`load_model_from_transformers`) checks the ``config.json``
  against one of our configs and writes (or loads) a strictly matching checkpoint.

RoPE: transformers computes the RoPE tables in fp32; our default (the official behaviour) is bf16, which changes
outputs by about 1e-3 to 1e-2 (docs/differences.md). An export records our setting in the model card and as
``sapiens2_pos_embed_rope_dtype`` in ``config.json``; :func:`load_model_from_transformers` builds the backbone with
``pos_embed_rope_dtype='fp32'`` unless told otherwise, so it reproduces transformers' outputs. The RoPE ``periods``
buffer is derived from the config (transformers ignores it): an import recomputes it in the config's RoPE dtype.

transformers is imported only when a function that needs it runs.
"""
import json
import os
import os.path as osp
from collections import OrderedDict
from typing import Dict, List, Optional, Sequence, Tuple, Union

import torch
from mmengine.config import Config
from mmengine.logging import MMLogger
from torch import nn

from sapiens2.engine.atomic_save import atomic_write_text, refuse_links
from sapiens2.engine.checkpoint import (
    adapt_keys,
    compare_keys,
    extract_state_dict,
    load_model_weights,
    load_weights,
    read_checkpoint_file,
    save_weights,
)
from sapiens2.version import __version__

from .transformers_config import (
    BACKBONE_HF_CLASS,
    HEAD_CONVERTERS,
    TransformersConversionError,
    describe_model,
    find_head,
    mismatches,
)

CONFIG_NAME = 'config.json'
WEIGHTS_NAME = 'model.safetensors'
INDEX_NAME = 'model.safetensors.index.json'
CARD_NAME = 'README.md'
MIN_TRANSFORMERS = (5, 0)
ROPE_DTYPE_FIELD = 'sapiens2_pos_embed_rope_dtype'
#: The dtypes an export can write its weights in (``config.json``'s ``dtype``).
WEIGHT_DTYPES = ('float32', 'bfloat16', 'float16')
StateDict = Dict[str, torch.Tensor]

__all__ = [
    'TransformersConversionError', 'export_to_transformers', 'model_to_transformers', 'import_from_transformers',
    'load_model_from_transformers', 'load_transformers_model', 'read_transformers_weights', 'build_model',
    'output_differences', 'compare_export'
]


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


# ----------------------------------------------------------------------------------------------------- building
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


def _backbone_of(model: nn.Module) -> Tuple[nn.Module, str]:
    """(backbone, its key prefix in the model's state dict)."""
    return (model, '') if _is_backbone(model) else (model.backbone, 'backbone.')


def _head_rename(model: nn.Module) -> Tuple[str, str]:
    """(our head prefix, official head prefix): mmpose keeps the head in ``head``, the official layout in
    ``decode_head``."""
    converter, _ = (None, None) if _is_backbone(model) else find_head(model)
    if converter is not None and converter.head_attr != 'decode_head':
        return f'{converter.head_attr}.', 'decode_head.'
    return 'decode_head.', 'decode_head.'


def _rename_prefix(state_dict: StateDict, old: str, new: str) -> StateDict:
    if old == new:
        return OrderedDict(state_dict)
    return OrderedDict((new + k[len(old):] if k.startswith(old) else k, v) for k, v in state_dict.items())


def _check_strict(model: nn.Module, state_dict: StateDict, source: str) -> None:
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


# ----------------------------------------------------------------------------------------------------- export
def _official_weights(model: nn.Module, state_dict: StateDict) -> StateDict:
    """Our state dict in the official layout, with LayerScale 1 where our blocks have none (transformers always has
    one; multiplying by 1 is exact)."""
    ours, official = _head_rename(model)
    weights = _rename_prefix(state_dict, ours, official)
    backbone, prefix = _backbone_of(model)
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
    if backbone_only and not _is_backbone(model):
        state_dict = None if state_dict is None else OrderedDict(
            (k[len('backbone.'):], v) for k, v in state_dict.items() if k.startswith('backbone.'))
        model = model.backbone
    state_dict = model.state_dict() if state_dict is None else state_dict
    _check_strict(model, state_dict, 'The checkpoint')
    hf_class, fields = describe_model(model)
    rope_dtype = 'bf16' if _backbone_of(model)[0].rope_embed.dtype == torch.bfloat16 else 'fp32'
    weights = _official_weights(model, state_dict)
    if dtype is not None:
        weights = OrderedDict((k, v.to(_weight_dtype(dtype)) if v.is_floating_point() else v)
                              for k, v in weights.items())
    _writable(out_dir, (CONFIG_NAME, WEIGHTS_NAME, CARD_NAME), overwrite)
    dtype = str(next(iter(weights.values())).dtype).replace('torch.', '')
    config = transformers.Sapiens2Config(**fields, architectures=[hf_class], dtype=dtype,
                                         **{ROPE_DTYPE_FIELD: rope_dtype})
    refuse_links(osp.join(out_dir, CONFIG_NAME))
    config.save_pretrained(out_dir)  # direct write: transformers writes config.json by itself
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
    if _is_backbone(model) and any(k.startswith('backbone.') for k in state_dict):
        state_dict = OrderedDict((k[len('backbone.'):], v) for k, v in state_dict.items() if k.startswith('backbone.'))
    state_dict = adapt_keys(state_dict, model)
    name = osp.basename(str(config if isinstance(config, str) else getattr(config, 'filename', 'a config')))
    return model_to_transformers(model, out_dir, state_dict, verify=verify, overwrite=overwrite,
                                 source=f'`{osp.basename(str(checkpoint))}` with the config `{name}`', dtype=dtype)


# ----------------------------------------------------------------------------------------------------- import
def _local_dir(hf_dir: str) -> str:
    hf_dir = osp.expanduser(str(hf_dir))
    if not osp.isfile(osp.join(hf_dir, CONFIG_NAME)):
        raise FileNotFoundError(f'{hf_dir} is not a transformers model folder (no {CONFIG_NAME}); give a local '
                                'folder, e.g. one downloaded with huggingface_hub.snapshot_download.')
    return hf_dir


def read_transformers_config(hf_dir: str):
    """The folder's ``Sapiens2Config`` (defaults resolved by transformers)."""
    transformers = require_transformers()
    config = transformers.AutoConfig.from_pretrained(_local_dir(hf_dir))
    if config.model_type != 'sapiens2':
        raise TransformersConversionError(f'{hf_dir}/{CONFIG_NAME} is a {config.model_type!r} model, not sapiens2.')
    return config


def read_transformers_weights(hf_dir: str) -> StateDict:
    """The tensors of a transformers folder (single file or shards), keys as stored (the official layout)."""
    hf_dir = _local_dir(hf_dir)
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


def _config_dict(config) -> dict:
    values = config.to_dict()
    values['num_labels'] = config.num_labels
    head = config.head_config
    values['head_config'] = head.to_dict() if hasattr(head, 'to_dict') else (head or {})
    return values


def _imported_state_dict(hf_dir: str, model: nn.Module) -> StateDict:
    """The folder's weights in ``model``'s layout, checked strictly; RoPE periods recomputed from the model."""
    weights = read_transformers_weights(hf_dir)
    if _is_backbone(model) and any(k.startswith('backbone.') for k in weights):
        weights = OrderedDict((k[len('backbone.'):], v) for k, v in weights.items() if k.startswith('backbone.'))
    dropped = [k for k in weights if k.endswith('mask_token')]
    if dropped:
        MMLogger.get_current_instance().warning(f'{hf_dir}: {dropped} (masked-image-modeling pretraining only) has '
                                                'no counterpart in sapiens2 and is not imported.')
    weights = OrderedDict((k, v) for k, v in weights.items() if k not in dropped)
    weights = adapt_keys(weights, model)
    backbone, prefix = _backbone_of(model)
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
    _check_strict(model, weights, f'The weights in {hf_dir}')
    return weights


def _check_config(hf_dir: str, model: nn.Module) -> str:
    """Compare the folder's config.json with the model; return the RoPE dtype it was exported with (or '')."""
    config = read_transformers_config(hf_dir)
    hf_class, expected = describe_model(model)
    architecture = (config.architectures or [BACKBONE_HF_CLASS])[0]
    if not _is_backbone(model) and architecture != hf_class:
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
    ours, official = _head_rename(model)
    if osp.exists(dst) and not overwrite:
        raise FileExistsError(f'{dst} exists; choose another path or pass overwrite=True (--overwrite).')
    save_weights(_rename_prefix(weights, ours, official), dst)
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


def _is_backbone(model: nn.Module) -> bool:
    return type(model).__name__ == 'Sapiens2'


# ----------------------------------------------------------------------------------------------------- checks
def load_transformers_model(hf_dir: str, hf_class: Optional[str] = None,
                            dtype: Optional[torch.dtype] = None) -> nn.Module:
    """``from_pretrained(hf_dir, output_loading_info=True)`` with the folder's (or the given) class, requiring zero
    missing, unexpected and mismatched keys; returns the model in eval mode, in ``dtype`` (default: transformers',
    the ``dtype`` of ``config.json``)."""
    transformers = require_transformers()
    hf_class = hf_class or (read_transformers_config(hf_dir).architectures or [BACKBONE_HF_CLASS])[0]
    options = {} if dtype is None else dict(dtype=dtype)
    model, info = getattr(transformers, hf_class).from_pretrained(_local_dir(hf_dir), output_loading_info=True,
                                                                  **options)
    bad = {name: sorted(map(str, info.get(name) or ())) for name in ('missing_keys', 'unexpected_keys',
                                                                     'mismatched_keys')}
    bad = {name: keys for name, keys in bad.items() if keys}
    if bad or info.get('error_msgs'):
        raise TransformersConversionError(f'transformers {hf_class}.from_pretrained({hf_dir}) does not load every '
                                          f'weight: {bad or info["error_msgs"]}')
    return model.eval()


def _our_outputs(model: nn.Module, images: torch.Tensor) -> List[torch.Tensor]:
    if _is_backbone(model):
        out = model(images)[-1]
    else:
        out = model(images, None, mode='tensor')
    return list(out) if isinstance(out, (tuple, list)) else [out]


def hf_output_names(hf_class: str) -> Tuple[str, ...]:
    """The output attributes of a transformers class that equal our tensor-mode outputs, in order."""
    if hf_class == BACKBONE_HF_CLASS:
        return ('last_hidden_state', )
    names = next((c.hf_outputs for c in HEAD_CONVERTERS.values() if c.hf_class == hf_class), ())
    if not names:
        raise TransformersConversionError(f'No output comparison for {hf_class}: no registered head converter names '
                                          'its outputs (HeadConverter.hf_outputs).')
    return names


def _their_outputs(hf_model: nn.Module, images: torch.Tensor, like: nn.Module) -> List[torch.Tensor]:
    hf_class = type(hf_model).__name__
    names = hf_output_names(hf_class)
    output = hf_model(pixel_values=images)
    outs = [getattr(output, name) for name in names]
    if hf_class == BACKBONE_HF_CLASS:
        tokens, backbone = outs[0], like
        if backbone.out_type == 'featmap':
            patches = tokens[:, backbone.num_extra_tokens:]
            grid = (images.shape[2] // backbone.patch_size, images.shape[3] // backbone.patch_size)
            outs = [patches.reshape(tokens.shape[0], *grid, -1).permute(0, 3, 1, 2)]
        elif backbone.out_type == 'cls_token':
            outs = [tokens[:, 0]]
    return outs


@torch.no_grad()
def output_differences(model: nn.Module, hf_model: nn.Module, images: torch.Tensor) -> Dict[str, float]:
    """Max absolute difference of each output (ours in tensor mode vs the transformers model) on ``images``.

    Names are the transformers output attributes (``heatmaps``, ``logits``, ``normals``, ``pointmaps``,
    ``scales``, ``last_hidden_state``). Both models must be in eval mode on the same device.
    """
    ours = _our_outputs(model, images)
    theirs = _their_outputs(hf_model, images, model)
    names = hf_output_names(type(hf_model).__name__)
    if len(ours) != len(theirs):
        raise TransformersConversionError(f'{type(model).__name__} returns {len(ours)} outputs, '
                                          f'{type(hf_model).__name__} {len(theirs)}.')
    return {name: float((a.float() - b.float()).abs().max()) for name, a, b in zip(names, ours, theirs)}


def compare_export(config: Union[str, Config],
                   checkpoint: str,
                   hf_dir: str,
                   backbone_only: bool = False,
                   cfg_options: Optional[dict] = None,
                   trust_checkpoint: Optional[bool] = None) -> Tuple[Dict[str, float], str]:
    """Max |ours - transformers| of each output on one random image, and what was compared, in words.

    Both models run in float32 on the same values: ours is the config's model (float32 parameters) with the
    checkpoint's weights, the transformers model is ``hf_dir`` loaded in float32 whatever dtype its weights are
    stored in. Our RoPE ``periods`` are recomputed from the config in its RoPE dtype, as an import does (a checkpoint
    stores them bf16-rounded), so with ``pos_embed_rope_dtype='fp32'`` the difference is float32 rounding.
    """
    model = build_model(config, backbone_only, device='cpu', cfg_options=cfg_options)
    prefix = None
    if backbone_only:
        keys = load_weights(checkpoint, trust_checkpoint=trust_checkpoint)
        prefix = 'backbone.' if any(key.startswith('backbone.') for key in keys) else None
    load_model_weights(model, checkpoint, prefix=prefix, trust_checkpoint=trust_checkpoint)
    backbone, _ = _backbone_of(model)
    backbone.rope_embed.reset_parameters()
    images = torch.randn(1, 3, *backbone.img_size, generator=torch.Generator().manual_seed(0))
    hf_model = load_transformers_model(hf_dir, dtype=torch.float32)
    rope = 'bf16' if backbone.rope_embed.dtype == torch.bfloat16 else 'fp32'
    stored = str(read_transformers_config(hf_dir).dtype).replace('torch.', '')
    tables = ('RoPE tables in fp32 in both' if rope == 'fp32' else "our RoPE tables in bf16, transformers' in fp32: "
              "pos_embed_rope_dtype='fp32' compares like with like")
    what = f'both in float32, the folder stores {stored}; {tables}'

    return output_differences(model, hf_model, images), what


def supported_heads() -> List[str]:
    """Class names of the heads with a transformers conversion."""
    return sorted(HEAD_CONVERTERS)
