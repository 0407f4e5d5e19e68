"""Hugging Face transformers' Sapiens2 models with the weights of ours, for side-by-side benchmarks.

The peer is made by the repository's own conversion (:mod:`sapiens2.interop.transformers`): our modules are
written as a transformers folder (in a temporary directory) and loaded back with ``from_pretrained``, which requires
every weight to match. Transformers' RoPE runs in fp32 (ours follows the official bf16 flow), so outputs agree to
bf16 rounding, not bitwise; with ``pos_embed_rope_dtype='fp32'`` they agree to fp32 rounding
(:func:`check_mapping`).
"""
import tempfile
from typing import Optional

import torch
from torch import nn

from sapiens2.interop.transformers import load_transformers_model, model_to_transformers
from sapiens2.interop.transformers_config import find_head


class TaskModel(nn.Module):
    """A backbone and a head under the attribute names our task models (and so the conversion) use."""

    def __init__(self, backbone: nn.Module, head: nn.Module, head_attr: str):
        super().__init__()
        self.backbone = backbone
        setattr(self, head_attr, head)


def build_peer(backbone: nn.Module, head: Optional[nn.Module] = None) -> nn.Module:
    """Transformers' model (``Sapiens2Model``, or the ``Sapiens2For*`` of the head) loaded strictly with our
    weights, in eval mode with SDPA attention."""
    model = backbone
    if head is not None:
        converter, _ = find_head(TaskModel(backbone, head, 'head'))
        model = TaskModel(backbone, head, converter.head_attr)
    with tempfile.TemporaryDirectory() as folder:
        model_to_transformers(model, folder, verify=False, source='the benchmark model')
        peer = load_transformers_model(folder)
    peer.config._attn_implementation = 'sdpa'
    return peer


def check_mapping(arch: str = 'sapiens2_nano', size=(64, 48)) -> float:
    """Max abs difference of ours (fp32 RoPE) and the transformers peer on a random image; fp32 rounding if right."""
    from sapiens2.models import Sapiens2
    ours = Sapiens2(arch=arch, img_size=size, pos_embed_rope_dtype='fp32', out_type='raw').eval()
    ours.init_weights()
    peer = build_peer(ours)
    x = torch.randn(1, 3, *size)
    with torch.no_grad():
        return float((ours(x)[0] - peer(pixel_values=x).last_hidden_state).abs().max())
