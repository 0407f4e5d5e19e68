"""Comparison: our model's outputs against a transformers model's on the same images (the parity checks of an
export)."""
from typing import Dict, List, Optional, Tuple, Union

import torch
from mmengine.config import Config
from torch import nn

from sapiens2.engine.checkpoint import load_model_weights, load_weights

from .transformers_config import BACKBONE_HF_CLASS, HEAD_CONVERTERS, TransformersConversionError
from .transformers_folder import (
    backbone_of,
    build_model,
    is_backbone,
    load_transformers_model,
    read_transformers_config,
)


def _our_outputs(model: nn.Module, images: torch.Tensor) -> List[torch.Tensor]:
    if is_backbone(model):
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
    backbone, _ = backbone_of(model)
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
