"""Hugging Face transformers' Sapiens2 models with the weights of ours, for side-by-side benchmarks.

Transformers' ``Sapiens2Model`` / ``Sapiens2For*`` (present with the same modules and config fields in transformers
5.17 and 5.23) are built from our backbone's settings and receive our weights: the key mapping below, with the
SwiGLU ``w12`` split into ``gate_proj`` (first half) and ``up_proj``. Their RoPE runs in fp32 (ours follows the
official bf16 flow), so outputs agree to bf16 rounding, not bitwise; with ``pos_embed_rope_dtype='fp32'`` they agree
to fp32 rounding (:func:`check_mapping`).
"""
from typing import Dict, List, Optional

import torch
from torch import nn

BLOCK_KEYS = {  # ours (under blocks.{i}.) -> theirs (under layer.{i}.)
    'ln1.weight': 'norm1.weight', 'ln2.weight': 'norm2.weight', 'attn.q_norm.weight': 'attention.q_norm.weight',
    'attn.k_norm.weight': 'attention.k_norm.weight', 'attn.gamma.weight': 'layer_scale1.lambda1',
    **{f'attn.{ours}.{p}': f'attention.{theirs}.{p}' for ours, theirs in (('wq', 'q_proj'), ('wk', 'k_proj'),
                                                                          ('wv', 'v_proj'), ('proj', 'o_proj'))
       for p in ('weight', 'bias')},
    'ffn.w3.weight': 'mlp.down_proj.weight', 'ffn.w3.bias': 'mlp.down_proj.bias',
}
# Head layouts of the official task heads, in transformers' Sapiens2HeadConfig terms.
HEAD_CONFIGS = {
    'pose': dict(num_labels=308, head=dict(upsample_out_channels=[1024, 768], upsample_kernel_sizes=[4, 4],
                                           conv_out_channels=[512, 512, 256], conv_kernel_sizes=[1, 1, 1])),
    'seg': dict(num_labels=29, head=dict(upsample_out_channels=[512, 256, 128, 64], upsample_kernel_sizes=[4] * 4,
                                         conv_out_channels=[64, 64], conv_kernel_sizes=[1, 1])),
    'normal': dict(num_labels=3, head=dict(use_pixel_shuffle=True, upsample_out_channels=[768, 512, 256, 128],
                                           upsample_kernel_sizes=[3] * 4, conv_out_channels=[64, 32, 16],
                                           conv_kernel_sizes=[3, 3, 3])),
}
TASK_CLASSES = {'pose': 'Sapiens2ForPoseEstimation', 'seg': 'Sapiens2ForSemanticSegmentation',
                'normal': 'Sapiens2ForNormalEstimation'}


def peer_config(backbone: nn.Module, task: Optional[str] = None):
    """A ``Sapiens2Config`` with the settings of our ``Sapiens2`` backbone (and the official head of ``task``)."""
    from transformers import Sapiens2Config
    block = backbone.blocks[0]
    kwargs = dict(
        hidden_size=backbone.embed_dims, intermediate_size=block.ffn.w3.in_features,
        num_hidden_layers=backbone.num_layers, num_attention_heads=backbone.num_heads,
        num_key_value_heads_per_layer=[b.attn.num_kv_heads for b in backbone.blocks],
        image_size=list(backbone.img_size), patch_size=backbone.patch_size,
        num_register_tokens=backbone.n_storage_tokens, layerscale_value=float(block.attn.gamma.weight.detach()[0]),
        use_gated_mlp=True, use_qk_norm=True, rope_theta=float(backbone.rope_embed.base))
    if task is not None:
        spec = HEAD_CONFIGS[task]
        kwargs.update(num_labels=spec['num_labels'], head_config=spec['head'])
    return Sapiens2Config(**kwargs)


def backbone_state_dict(backbone: nn.Module, prefix: str = '') -> Dict[str, torch.Tensor]:
    """Our backbone's weights under transformers' ``Sapiens2Model`` keys (``prefix`` e.g. ``'model.'``)."""
    ours = backbone.state_dict()
    theirs = {
        'embeddings.cls_token': ours['cls_token'], 'embeddings.register_tokens': ours['storage_tokens'],
        'embeddings.patch_embeddings.weight': ours['patch_embed.projection.weight'],
        'embeddings.patch_embeddings.bias': ours['patch_embed.projection.bias'], 'norm.weight': ours['ln1.weight'],
    }
    for i in range(backbone.num_layers):
        for key, their_key in BLOCK_KEYS.items():
            theirs[f'model.layer.{i}.{their_key}'] = ours[f'blocks.{i}.{key}']
        for p in ('weight', 'bias'):
            gate, up = ours[f'blocks.{i}.ffn.w12.{p}'].chunk(2, dim=0)
            theirs[f'model.layer.{i}.mlp.gate_proj.{p}'], theirs[f'model.layer.{i}.mlp.up_proj.{p}'] = gate, up
    return {prefix + k: v for k, v in theirs.items()}


def head_convs(head: nn.Module) -> List[nn.Module]:
    """The convolutions of one of our dense heads (pose, seg, normal), in forward order."""
    convs = []
    for name in ('input_conv', 'deconv_layers', 'upsample_blocks', 'conv_layers'):
        module = getattr(head, name, None)
        if module is not None:
            convs += [m for m in module.modules() if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d))]
    for name in ('conv_pose', 'conv_seg', 'conv_normal'):
        if getattr(head, name, None) is not None:
            convs.append(getattr(head, name))
    return convs


def build_peer(backbone: nn.Module, head: Optional[nn.Module] = None, task: Optional[str] = None) -> nn.Module:
    """Transformers' model (``Sapiens2Model`` or the task's ``Sapiens2For*``) loaded strictly with our weights."""
    import transformers
    config = peer_config(backbone, task if head is not None else None)
    config._attn_implementation = 'sdpa'
    if head is None:
        model = transformers.Sapiens2Model(config)
        state = backbone_state_dict(backbone)
    else:
        model = getattr(transformers, TASK_CLASSES[task])(config)
        state = backbone_state_dict(backbone, prefix='model.')
        theirs = [model.decode_head.input_conv.convolution] if config.head_config.use_pixel_shuffle else []
        theirs += [layer.convolution for layer in model.decode_head.upsample_layers]
        theirs += [layer.convolution for layer in model.decode_head.conv_layers] + [model.decode_head.predictor]
        names = {id(m): n for n, m in model.named_modules()}
        ours = head_convs(head)
        if len(ours) != len(theirs):
            raise ValueError(f'{task} head: {len(ours)} convolutions in ours, {len(theirs)} in transformers\'')
        for our_conv, their_conv in zip(ours, theirs):
            for p in ('weight', 'bias'):
                value = getattr(our_conv, p)
                if value is not None:
                    state[f'{names[id(their_conv)]}.{p}'] = value.detach()
    model.load_state_dict(state, strict=True)
    return model.eval()


def check_mapping(arch: str = 'sapiens2_nano', size=(64, 48)) -> float:
    """Max abs difference of ours (fp32 RoPE) and the transformers peer on a random image; fp32 rounding if right."""
    from sapiens2.models import Sapiens2
    ours = Sapiens2(arch=arch, img_size=size, pos_embed_rope_dtype='fp32', out_type='raw').eval()
    ours.init_weights()
    peer = build_peer(ours)
    x = torch.randn(1, 3, *size)
    with torch.no_grad():
        return float((ours(x)[0] - peer(pixel_values=x).last_hidden_state).abs().max())
