"""Write the key -> shape manifests of transformers' ``Sapiens2ForImageMatting`` in the official key layout.

Run from the repository root with transformers 5.23.0 installed:

    python tests/data/transformers/make_matting_manifests.py

For every size, the model is built on the meta device (no weights exist) with the architecture of our
``sapiens2_<size>`` backbone and a head config taking the widths and kernels of the same-size normal head (an
assumption: the released ``facebook/sapiens2-matting-1b`` ``config.json`` is not available here and wins over it).
The keys are those ``save_pretrained`` writes: transformers' own ``revert_weight_conversion`` applied to the meta state
dict (``save_pretrained`` itself cannot copy meta tensors). The script first checks on a tiny configuration that this
gives exactly the header of a real ``save_pretrained`` file.
"""
import json
import os.path as osp
import struct
import tempfile

import torch
import transformers
from transformers import Sapiens2Config, Sapiens2ForImageMatting
from transformers.core_model_loading import revert_weight_conversion

HERE = osp.dirname(osp.abspath(__file__))
# Backbone (hidden, layers, heads, ffn) of our ARCH_SETTINGS, and the normal head's (upsample, conv) widths per size.
SIZES = {
    '0.4b': ((1024, 24, 16, 4096), (768, 512, 256, 128), (64, 32, 16)),
    '0.8b': ((1280, 32, 16, 5120), (768, 512, 256, 128), (64, 32, 16)),
    '1b': ((1536, 40, 24, 6144), (768, 512, 256, 128), (64, 32, 16)),
    '5b': ((2432, 56, 32, 9728), (1536, 768, 512, 256), (128, 64, 32)),
}


def matting_config(hidden, layers, heads, ffn, upsample, conv, image_size=(1024, 768), patch_size=16):
    """A ``Sapiens2Config`` for the matting model: GQA with heads / 2 kv heads in the middle blocks, 8 storage
    tokens, a PixelShuffle head with 3x3 kernels and 4 outputs."""
    return Sapiens2Config(
        hidden_size=hidden, intermediate_size=ffn, num_hidden_layers=layers, num_attention_heads=heads,
        num_key_value_attention_heads=heads // 2, image_size=list(image_size), patch_size=patch_size, num_labels=4,
        head_config=dict(upsample_out_channels=list(upsample), upsample_kernel_sizes=[3] * len(upsample),
                         use_pixel_shuffle=True, conv_out_channels=list(conv), conv_kernel_sizes=[3] * len(conv)))


def saved_layout(model) -> dict:
    """Key -> shape of what ``save_pretrained`` writes for ``model``."""
    return {k: list(v.shape) for k, v in revert_weight_conversion(model, model.state_dict()).items()}


def header_layout(path: str) -> dict:
    with open(path, 'rb') as f:
        header = json.loads(f.read(struct.unpack('<Q', f.read(8))[0]))
    return {k: v['shape'] for k, v in header.items() if k != '__metadata__'}


def check_against_save_pretrained() -> None:
    config = matting_config(64, 2, 2, 256, (32, 16), (16, ), image_size=(64, 48), patch_size=8)
    model = Sapiens2ForImageMatting(config)
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        assert header_layout(osp.join(folder, 'model.safetensors')) == saved_layout(model)


def main() -> None:
    check_against_save_pretrained()
    configs = {}
    for size, (backbone, upsample, conv) in SIZES.items():
        config = matting_config(*backbone, upsample, conv)
        with torch.device('meta'):
            model = Sapiens2ForImageMatting(config)
        layout = saved_layout(model)
        with open(osp.join(HERE, f'sapiens2_{size}_matting.json'), 'w') as f:
            f.write('{\n' + ',\n'.join(f'{json.dumps(k)}: {json.dumps(v)}' for k, v in layout.items()) + '\n}\n')
        configs[size] = dict(hidden_size=config.hidden_size, num_hidden_layers=config.num_hidden_layers,
                             num_attention_heads=config.num_attention_heads,
                             intermediate_size=config.intermediate_size,
                             num_key_value_heads_per_layer=config.num_key_value_heads_per_layer,
                             head_config={k: v for k, v in config.head_config.to_dict().items()
                                          if k in ('upsample_out_channels', 'upsample_kernel_sizes',
                                                   'conv_out_channels', 'conv_kernel_sizes', 'use_pixel_shuffle')})
    with open(osp.join(HERE, 'sapiens2_matting_configs.json'), 'w') as f:
        json.dump(dict(transformers_version=transformers.__version__, configs=configs), f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()
