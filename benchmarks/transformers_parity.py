"""Max output differences between our models and transformers' Sapiens2 classes on the same random weights.

    python benchmarks/transformers_parity.py CONFIG [CONFIG ...] [--size 512 384] [--layers N] [--batch 1]
        [--backbone-only [--arch sapiens2_0.1b]]

For each config: random weights (the model's init, LayerScale and norm gains perturbed), export to a temporary
transformers folder (zero missing/unexpected/mismatched keys required), then the max |ours - transformers| of every
output, once with our RoPE tables in bf16 (the default, the official behaviour) and once in fp32 (transformers'
choice). ``--layers`` keeps the arch widths with fewer blocks (fewer than 17 blocks are all full attention);
``--size`` sets the input (and the backbone/pointmap ``img_size``); ``--backbone-only`` compares the config's backbone
(``Sapiens2Model``, last hidden state), ``--arch`` replaces its arch.
"""
import argparse
import tempfile

import torch

from sapiens2.engine.launch import load_config
from sapiens2.interop.transformers import (
    build_model,
    load_transformers_model,
    model_to_transformers,
    output_differences,
)
from sapiens2.models.backbones.sapiens2 import resolve_arch


def our_outputs(model: torch.nn.Module, images: torch.Tensor):
    out = model(images)[-1] if type(model).__name__ == 'Sapiens2' else model(images, None, mode='tensor')
    return out if isinstance(out, (tuple, list)) else [out]


def random_weights(model: torch.nn.Module) -> torch.nn.Module:
    """The model's own random init, with LayerScale in [0.1, 0.5] (1e-4 at init would mute attention) and norm
    gains around 1."""
    torch.manual_seed(0)
    model.init_weights()
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if 'gamma' in name:
                param.copy_(0.1 + 0.4 * torch.rand(param.shape, generator=generator))
            elif param.dim() == 1 and ('ln' in name or 'norm' in name):
                param.copy_(1 + 0.1 * torch.randn(param.shape, generator=generator))
    return model.eval()


def configured(path: str, size, layers, rope_dtype: str, arch=None, backbone_only=False):
    cfg = load_config(path)
    backbone = cfg.model.get('backbone', cfg.model)
    if backbone_only:
        cfg.model = dict(backbone, out_type='raw', out_indices=-1, init_cfg=None)
        backbone = cfg.model
    if arch:
        backbone['arch'] = arch
    if layers:
        backbone['arch'] = dict(resolve_arch(backbone['arch']), num_layers=layers)
    if size:
        backbone['img_size'] = tuple(size)
        if 'img_size' in cfg.model.get('decode_head', {}):
            cfg.model.decode_head.img_size = tuple(size)
    backbone['pos_embed_rope_dtype'] = rope_dtype
    return cfg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('configs', nargs='+')
    parser.add_argument('--size', type=int, nargs=2, default=None, metavar=('H', 'W'))
    parser.add_argument('--layers', type=int, default=None)
    parser.add_argument('--batch', type=int, default=1)
    parser.add_argument('--backbone-only', action='store_true')
    parser.add_argument('--arch', default=None, help='replace the config backbone arch, e.g. sapiens2_0.1b')
    args = parser.parse_args()
    torch.set_grad_enabled(False)
    for path in args.configs:
        state = None
        for rope_dtype in ('bf16', 'fp32'):
            cfg = configured(path, args.size, args.layers, rope_dtype, args.arch, args.backbone_only)
            model = build_model(cfg, device='cpu')
            if state is None:
                state = random_weights(model).state_dict()
            else:
                model.load_state_dict(state)
                (model if type(model).__name__ == 'Sapiens2' else model.backbone).rope_embed.reset_parameters()
            backbone = model if type(model).__name__ == 'Sapiens2' else model.backbone
            images = torch.randn(args.batch, 3, *backbone.img_size, generator=torch.Generator().manual_seed(1))
            with tempfile.TemporaryDirectory() as folder:
                hf_model = load_transformers_model(model_to_transformers(model, folder))
                differences = output_differences(model.eval(), hf_model, images)
            scales = [float(out.abs().max()) for out in our_outputs(model, images)]
            sizes = 'x'.join(map(str, backbone.img_size))
            print(f'{path} ({backbone.num_layers} blocks, {sizes}) RoPE {rope_dtype}: max |ours - transformers| ' +
                  ', '.join(f'{name} {value:.2e} (max |{name}| {scale:.3g})'
                            for (name, value), scale in zip(differences.items(), scales)), flush=True)


if __name__ == '__main__':
    main()
