"""The pointmap model converts to and from transformers' ``Sapiens2ForPointmapEstimation`` (``sapiens2.interop``):
the dense trunk and the focal-scale branch, whose outputs are transformers' ``pointmaps`` and ``scales``."""
from torch import nn

from sapiens2.interop.transformers_config import (
    HeadConverter,
    check_dense_trunk,
    check_head_feature,
    layers_of_type,
    raise_if_problems,
    register_head_converter,
)

# The scale branch's layers transformers' checkpoint mapping renames (transformers/conversion_mapping.py, 5.x).
MAX_SCALE_CONVS, SCALE_HIDDEN_LAYERS = 3, 2


def describe_pointmap_head(head: nn.Module, backbone: nn.Module) -> dict:
    """``PointmapHead`` -> ``Sapiens2ForPointmapEstimation`` (trunk + focal-scale branch)."""
    problems = []
    check_head_feature(backbone, -1, problems)
    head_config = check_dense_trunk(head, problems)
    scale_convs = layers_of_type(head.scale_conv_layers, nn.Conv2d)
    linears = layers_of_type(head.scale_final_layer, nn.Linear)
    if not 1 <= len(scale_convs) <= MAX_SCALE_CONVS:
        problems.append(f'{len(scale_convs)} scale convs: transformers\' checkpoint mapping takes 1 to '
                        f'{MAX_SCALE_CONVS}')
    if any(m.kernel_size != (1, 1) or m.stride != (2, 2) or m.padding != (0, 0) for m in scale_convs):
        problems.append('scale convs: transformers builds them 1x1, stride 2, unpadded')
    if len(linears) != SCALE_HIDDEN_LAYERS + 1:
        problems.append(f'scale_hidden_channels has {len(linears) - 1} entries: transformers\' scale MLP has exactly '
                        f'{SCALE_HIDDEN_LAYERS} hidden layers')
    raise_if_problems(problems, 'The pointmap head')
    head_config.update(scale_conv_out_channels=[m.out_channels for m in scale_convs],
                       scale_conv_kernel_sizes=[1] * len(scale_convs), scale_final_input_size=linears[0].in_features,
                       scale_final_hidden_sizes=[m.out_features for m in linears[:-1]])
    return dict(head_config=head_config, num_labels=head.conv_pointmap.out_channels)


POINTMAP_CONVERTER = HeadConverter(task='pointmap', hf_class='Sapiens2ForPointmapEstimation', head_attr='decode_head',
                                   describe=describe_pointmap_head, hf_outputs=('pointmaps', 'scales'))

register_head_converter('PointmapHead', POINTMAP_CONVERTER)
