"""Our Sapiens2 models described as the fields of transformers' ``Sapiens2Config`` (and its ``head_config``).

The description is read from built modules (a model built on the ``meta`` device is enough), so every default a
config leaves out is seen as it is built. Whatever transformers' classes cannot express raises
:class:`TransformersConversionError` naming the setting; nothing here imports transformers, mmpose or mmseg.

Task models are described by a :class:`HeadConverter` registered under the class name of their head
(:data:`HEAD_CONVERTERS`). A project adds its own with :func:`register_head_converter`, e.g. a matting head on the
dense trunk (``transformers.Sapiens2ForImageMatting``, predictor ``conv_matting``, 4 outputs)::

    register_head_converter('MattingHead', HeadConverter(
        task='matting', hf_class='Sapiens2ForImageMatting', head_attr='decode_head',
        describe=dense_trunk_describer('conv_matting'), hf_outputs=()))

(transformers' matting model returns sigmoid-activated ``foregrounds``/``alphas``; ``hf_outputs`` names the outputs
that equal our tensor-mode outputs one to one, for :func:`sapiens2.interop.transformers.output_differences`.)
"""
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from torch import nn

from sapiens2.models.layers import LayerScale
from sapiens2.structures import layout

# The head layers transformers' checkpoint mapping renames (transformers/conversion_mapping.py, 5.x): a head with more
# layers than this would leave keys unloaded.
MAX_POSE_DECONVS, MAX_POSE_CONVS = 2, 3
MAX_SEG_DECONVS, MAX_SEG_CONVS = 4, 2
MAX_DENSE_CONVS = 3


class TransformersConversionError(ValueError):
    """A model (or a config.json) that transformers' Sapiens2 classes and ours cannot both express."""


def raise_if_problems(problems: List[str], what: str) -> None:
    """Raise :class:`TransformersConversionError` listing ``problems`` of ``what`` (the pose head...), if any."""
    if problems:
        raise TransformersConversionError(f'{what} cannot be expressed by transformers\' Sapiens2:\n  - ' +
                                          '\n  - '.join(problems))


def backbone_fields(backbone: nn.Module) -> dict:
    """``Sapiens2Config`` fields of a built ``Sapiens2`` backbone.

    RoPE: transformers always computes the tables in fp32; the backbone's ``pos_embed_rope_dtype`` is not a field
    (see docs/differences.md). Training-only settings without a counterpart (``drop_rate``, ``with_cp``,
    ``frozen_stages``) are not carried.
    """
    problems = []
    if backbone.tokenizer is not None:
        problems.append('the 4K window tokenizer (use_tokenizer=True) has no transformers counterpart')
    if backbone.cls_token is None:
        problems.append('with_cls_token=False: transformers always has a [CLS] token')
    if isinstance(backbone.ln1, nn.Identity):
        problems.append('final_norm=False: transformers always applies the final RMSNorm')
    rope = backbone.rope_embed
    if rope.min_period is not None or rope.max_period is not None:
        problems.append('pos_embed_rope_min_period/max_period: transformers only has the base period (rope_theta)')
    if rope.normalize_coords != 'separate':
        problems.append(f"pos_embed_rope_normalize_coords={rope.normalize_coords!r}: transformers normalises each "
                        "axis by its own length ('separate')")
    conv, patch = backbone.patch_embed.projection, backbone.patch_size
    if (conv.kernel_size != (patch, patch) or conv.stride != (patch, patch) or conv.padding != (0, 0)
            or conv.dilation != (1, 1) or conv.groups != 1 or conv.bias is None):
        problems.append('patch_cfg: transformers\' patch embedding is Conv2d(kernel = stride = patch_size, bias)')
    # Blocks differ only in their kv heads and LayerScale (layer_cfgs); the rest is one setting, as in transformers.
    attns, first = [block.attn for block in backbone.blocks], backbone.blocks[0]
    scales = [a.gamma.init_value for a in attns if isinstance(a.gamma, LayerScale)]
    raise_if_problems(problems, 'The Sapiens2 backbone')
    return dict(
        hidden_size=backbone.embed_dims, intermediate_size=first.ffn.w3.in_features,
        num_hidden_layers=backbone.num_layers, num_attention_heads=backbone.num_heads,
        num_key_value_heads_per_layer=[a.num_kv_heads for a in attns],
        image_size=list(backbone.img_size), patch_size=patch, num_channels=backbone.patch_embed.in_channels,
        query_bias=first.attn.wq.bias is not None, key_bias=first.attn.wk.bias is not None,
        value_bias=first.attn.wv.bias is not None, proj_bias=True, mlp_bias=first.ffn.w12.bias is not None,
        use_gated_mlp=True, hidden_act='silu', use_qk_norm=isinstance(first.attn.q_norm, nn.RMSNorm),
        rms_norm_eps=1e-6,
        num_register_tokens=backbone.n_storage_tokens, rope_theta=float(rope.base), pos_embed_shift=rope.shift_coords,
        pos_embed_jitter=rope.jitter_coords, pos_embed_rescale=rope.rescale_coords,
        layerscale_value=float(scales[0]) if scales else 1.0, use_mask_token=False)


# Fields that must agree between a config.json and our model for the weights to mean the same function.
ARCHITECTURE_FIELDS = ('hidden_size', 'intermediate_size', 'num_hidden_layers', 'num_attention_heads',
                       'num_key_value_heads_per_layer', 'patch_size', 'num_channels', 'query_bias', 'key_bias',
                       'value_bias', 'proj_bias', 'mlp_bias', 'use_gated_mlp', 'hidden_act', 'use_qk_norm',
                       'rms_norm_eps', 'num_register_tokens', 'rope_theta', 'num_labels')
HEAD_FIELDS = ('upsample_out_channels', 'upsample_kernel_sizes', 'use_pixel_shuffle', 'conv_out_channels',
               'conv_kernel_sizes', 'scale_conv_out_channels', 'scale_conv_kernel_sizes', 'scale_final_input_size',
               'scale_final_hidden_sizes')


@dataclass(frozen=True)
class HeadConverter:
    """How a task head maps to a transformers class.

    Attributes:
        task: Task name (``pose``, ``seg``, ...).
        hf_class: The transformers class (``Sapiens2ForPoseEstimation``...).
        head_attr: Attribute of our task model holding the head (``head`` in mmpose, ``decode_head`` otherwise).
        describe: ``(head, backbone) -> dict`` with ``head_config`` (a ``Sapiens2HeadConfig`` dict), ``num_labels``
            and optionally other ``Sapiens2Config`` fields; raises :class:`TransformersConversionError`.
        hf_outputs: The transformers output attributes equal to our tensor-mode outputs, in order (for comparisons).
    """
    task: str
    hf_class: str
    head_attr: str
    describe: Callable[[nn.Module, nn.Module], dict]
    hf_outputs: Tuple[str, ...] = ()


HEAD_CONVERTERS: Dict[str, HeadConverter] = {}


def register_head_converter(head_type: str, converter: HeadConverter) -> None:
    """Register how the head class ``head_type`` converts (a later registration replaces an earlier one)."""
    HEAD_CONVERTERS[head_type] = converter


def layers_of_type(layers: nn.Module, kind: type) -> List[nn.Module]:
    """The ``kind`` layers of a Sequential (an ``nn.Identity`` when a head has no such stage)."""
    return [m for m in layers.modules() if type(m) is kind]


def _check_deconvs(deconvs: List[nn.ConvTranspose2d], limit: int, problems: List[str]) -> None:
    if not 1 <= len(deconvs) <= limit:
        problems.append(f'{len(deconvs)} deconv layers: transformers\' checkpoint mapping for this task takes 1 to '
                        f'{limit}')
    for index, m in enumerate(deconvs):
        if (m.stride != (2, 2) or m.padding != (1, 1) or m.output_padding != (0, 0) or m.bias is not None
                or m.kernel_size[0] != m.kernel_size[1]):
            problems.append(f'deconv layer {index} (kernel {m.kernel_size[0]}): transformers builds '
                            'ConvTranspose2d(kernel, stride 2, padding 1, no bias, no output_padding); use kernel 4')


def _check_plain_convs(convs: List[nn.Conv2d], limit: int, problems: List[str]) -> None:
    if len(convs) > limit:
        problems.append(f'{len(convs)} conv layers: transformers\' checkpoint mapping for this task takes at most '
                        f'{limit}')
    for index, m in enumerate(convs):
        if m.kernel_size != (1, 1) or m.stride != (1, 1) or m.bias is None:
            problems.append(f'conv layer {index} (kernel {m.kernel_size[0]}): transformers pads these convs by 0, '
                            'so only 1x1 convs (with bias) keep the size; use kernel 1')


def _upsample_head_config(deconvs, convs) -> dict:
    return dict(upsample_out_channels=[m.out_channels for m in deconvs],
                upsample_kernel_sizes=[m.kernel_size[0] for m in deconvs], use_pixel_shuffle=False,
                conv_out_channels=[m.out_channels for m in convs], conv_kernel_sizes=[1] * len(convs))


def check_head_feature(backbone: nn.Module, out_position: int, problems: List[str]) -> None:
    """transformers' task models feed the head the final layer's normalised feature map."""
    if backbone.out_type != 'featmap' or backbone.out_indices[out_position] != backbone.num_layers - 1:
        problems.append(f"the head reads backbone output {out_position} (out_indices={backbone.out_indices}, "
                        f"out_type={backbone.out_type!r}); transformers' task heads read the last layer's feature "
                        "map (out_indices=-1, out_type='featmap')")


def describe_pose_head(head: nn.Module, backbone: nn.Module) -> dict:
    """``Sapiens2HeatmapHead`` -> ``Sapiens2ForPoseEstimation`` (transposed-conv upsampling, 1x1 convs)."""
    problems = []
    check_head_feature(backbone, -1, problems)
    deconvs = layers_of_type(head.deconv_layers, nn.ConvTranspose2d)
    convs = layers_of_type(head.conv_layers, nn.Conv2d)
    _check_deconvs(deconvs, MAX_POSE_DECONVS, problems)
    _check_plain_convs(convs, MAX_POSE_CONVS, problems)
    raise_if_problems(problems, 'The pose head')
    return dict(head_config=_upsample_head_config(deconvs, convs), num_labels=head.conv_pose.out_channels)


def describe_seg_head(head: nn.Module, backbone: nn.Module) -> dict:
    """``Sapiens2SegHead`` -> ``Sapiens2ForSemanticSegmentation``."""
    problems = []
    if head.input_transform is not None:
        problems.append(f'input_transform={head.input_transform!r}: transformers\' head reads one feature map')
    else:
        check_head_feature(backbone, head.in_index, problems)
    deconvs = layers_of_type(head.deconv_layers, nn.ConvTranspose2d)
    convs = layers_of_type(head.conv_layers, nn.Conv2d)
    _check_deconvs(deconvs, MAX_SEG_DECONVS, problems)
    _check_plain_convs(convs, MAX_SEG_CONVS, problems)
    raise_if_problems(problems, 'The seg head')
    return dict(head_config=_upsample_head_config(deconvs, convs), num_labels=head.conv_seg.out_channels,
                semantic_loss_ignore_index=int(head.ignore_index))


def check_dense_trunk(head: nn.Module, problems: List[str]) -> dict:
    """The ``head_config`` of a PixelShuffle trunk (input conv, x2 upsample blocks, convs; InstanceNorm only), with
    what transformers cannot build added to ``problems``."""
    if any(type(m).__name__ == 'RMSNorm2d' for m in head.modules()):
        problems.append('RMSNorm2d in the trunk (albedo-style): transformers\' dense heads use InstanceNorm2d')
    upsample = [block[0] for block in head.upsample_blocks]
    convs = layers_of_type(head.conv_layers, nn.Conv2d)
    for index, m in enumerate(upsample + convs):
        k = m.kernel_size[0]
        if m.kernel_size != (k, k) or m.stride != (1, 1) or m.padding != ((k - 1) // 2, ) * 2 or m.bias is None:
            problems.append(f'trunk conv {index}: transformers builds square, stride-1, same-padded convs with bias')
    if len(convs) > MAX_DENSE_CONVS:
        problems.append(f'{len(convs)} conv layers: transformers\' checkpoint mapping takes at most '
                        f'{MAX_DENSE_CONVS}')
    if not upsample:
        problems.append('no upsample block: transformers\' dense heads need at least one')
    return dense_trunk_head_config(head)


def dense_trunk_head_config(head: nn.Module) -> dict:
    """The transformers ``head_config`` of a PixelShuffle dense-trunk head's layers (channels and kernels)."""
    upsample = [block[0] for block in head.upsample_blocks]
    convs = layers_of_type(head.conv_layers, nn.Conv2d)
    return dict(upsample_out_channels=[m.out_channels // 4 for m in upsample],
                upsample_kernel_sizes=[m.kernel_size[0] for m in upsample], use_pixel_shuffle=True,
                conv_out_channels=[m.out_channels for m in convs], conv_kernel_sizes=[m.kernel_size[0] for m in convs])


def dense_trunk_describer(predictor: str) -> Callable[[nn.Module, nn.Module], dict]:
    """A ``describe`` for a :class:`~sapiens2.models.heads.DenseTrunkHead` subclass whose output conv is the
    attribute ``predictor`` (``conv_normal``, ``conv_matting``...)."""

    def describe(head: nn.Module, backbone: nn.Module) -> dict:
        problems = []
        check_head_feature(backbone, -1, problems)
        head_config = check_dense_trunk(head, problems)
        raise_if_problems(problems, f'The {type(head).__name__}')
        return dict(head_config=head_config, num_labels=getattr(head, predictor).out_channels)

    return describe


register_head_converter('Sapiens2HeatmapHead', HeadConverter('pose', 'Sapiens2ForPoseEstimation', 'head',
                                                             describe_pose_head, ('heatmaps', )))
register_head_converter('Sapiens2SegHead', HeadConverter('seg', 'Sapiens2ForSemanticSegmentation', 'decode_head',
                                                         describe_seg_head, ('logits', )))

BACKBONE_HF_CLASS = 'Sapiens2Model'


def find_head(model: nn.Module) -> Tuple[Optional[HeadConverter], Optional[nn.Module]]:
    """The converter and head of a task model, or (None, None) for a bare backbone.

    Raises :class:`TransformersConversionError` for a head without converter or parts transformers lacks (neck,
    auxiliary head).
    """
    if type(model).__name__ == 'Sapiens2':
        return None, None
    for attr in ('neck', 'auxiliary_head'):
        if getattr(model, attr, None) is not None:
            raise TransformersConversionError(f'The model has a {attr}; transformers\' Sapiens2 task models have '
                                              'backbone + head only.')
    for attr in ('head', 'decode_head'):
        head = getattr(model, attr, None)
        if isinstance(head, nn.Module):
            converter = HEAD_CONVERTERS.get(type(head).__name__)
            if converter is None:
                raise TransformersConversionError(
                    f'No transformers conversion for the head {type(head).__name__}; supported heads: '
                    f'{sorted(HEAD_CONVERTERS)} (a project registers more with register_head_converter). '
                    'Export only the backbone with backbone_only=True (--backbone-only).')
            return converter, head
    raise TransformersConversionError(f'{type(model).__name__} has neither a Sapiens2 backbone alone nor a head '
                                      '(head / decode_head) to convert.')


def layout_fields(task: str, meta: Optional[dict], num_labels: Optional[int]) -> dict:
    """``id2label`` (pose: the keypoint names, and ``flip_pairs``; seg: the class names) of a model's layout, its
    ``dataset_meta`` (:mod:`sapiens2.structures.layout`: the 308/29 layouts for a model that carries none); {} when
    the labels have no names."""
    if task == 'pose':
        names, fields = layout.keypoint_names(meta, num_labels), dict(flip_pairs=layout.flip_pairs(meta, num_labels))
    elif task == 'seg':
        names, fields = layout.class_names(meta, num_labels), {}
    else:
        return {}
    fields = {key: value for key, value in fields.items() if value is not None}
    return dict(fields, id2label=dict(enumerate(names))) if names else fields


def describe_model(model: nn.Module, backbone_only: bool = False) -> Tuple[str, dict]:
    """(transformers class name, ``Sapiens2Config`` fields) of a built backbone or task model; labels named by the
    model's ``dataset_meta`` (:func:`layout_fields`)."""
    converter, head = (None, None) if backbone_only else find_head(model)
    backbone = model if type(model).__name__ == 'Sapiens2' else getattr(model, 'backbone', None)
    if type(backbone).__name__ != 'Sapiens2':
        raise TransformersConversionError(f'{type(model).__name__} has no Sapiens2 backbone '
                                          f'(found {type(backbone).__name__}).')
    fields = backbone_fields(backbone)
    if converter is None:
        return BACKBONE_HF_CLASS, fields
    fields.update(converter.describe(head, backbone))
    fields.update(layout_fields(converter.task, getattr(model, 'dataset_meta', None), fields.get('num_labels')))
    return converter.hf_class, fields


def mismatches(expected: dict, config: dict) -> List[str]:
    """The architecture fields where a transformers config (as a dict) disagrees with ``expected``."""
    def normal(value):
        return list(value) if isinstance(value, (list, tuple)) else value

    found = []
    for name in ARCHITECTURE_FIELDS:
        if name in expected and normal(config.get(name)) != normal(expected[name]):
            found.append(f'{name}: config.json has {config.get(name)!r}, the config gives {expected[name]!r}')
    if 'head_config' not in expected:
        return found
    head = config.get('head_config') or {}
    for name in HEAD_FIELDS:
        want = (expected.get('head_config') or {}).get(name)
        have = head.get(name)
        if name == 'use_pixel_shuffle':
            want, have = bool(want), bool(have)
        if normal(have) != normal(want):
            found.append(f'head_config.{name}: config.json has {have!r}, the config gives {want!r}')
    return found
