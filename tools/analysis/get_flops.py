"""Parameters and FLOPs of a config's model for one input, counted on the meta device (no memory, any size).

Usage: python tools/analysis/get_flops.py CONFIG [--shape H W] [--cfg-options k=v ...]

FLOPs count a multiply-add as 2 (torch.utils.flop_counter); GMACs = GFLOPs / 2.
"""
import argparse
import sys

import torch
from mmengine.registry import MODELS, init_default_scope
from torch.utils.flop_counter import FlopCounterMode

from sapiens2.apis.builder import model_input_size
from sapiens2.config.cli_options import ConfigOptionsAction
from sapiens2.engine.launch import load_config
from sapiens2.utils.cli_errors import add_debug_argument, run_cli


def count(config: str, shape=None, cfg_options=None) -> dict:
    """{'params', 'backbone_params', 'flops', 'input_shape'} of the config's model for a batch of one."""
    cfg = load_config(config, cfg_options)
    init_default_scope(cfg.get('default_scope', 'sapiens2'))
    model_cfg = cfg.model.copy()
    if isinstance(model_cfg.get('backbone'), dict):
        model_cfg.backbone = dict(model_cfg.backbone, init_cfg=None)
    height, width = shape or model_input_size(cfg)
    with torch.device('meta'):
        model = MODELS.build(model_cfg).eval()
        inputs = torch.empty(1, 3, height, width)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(inputs, None, mode='tensor')
    backbone = getattr(model, 'backbone', None)
    return dict(params=sum(p.numel() for p in model.parameters()),
                backbone_params=sum(p.numel() for p in backbone.parameters()) if backbone is not None else None,
                flops=counter.get_total_flops(), input_shape=(1, 3, height, width))


def main() -> int:
    parser = argparse.ArgumentParser(description='Count parameters and FLOPs of a config\'s model')
    parser.add_argument('config')
    parser.add_argument('--shape', type=int, nargs=2, metavar=('H', 'W'), help='input size (default: the config\'s)')
    parser.add_argument('--cfg-options', nargs='+', action=ConfigOptionsAction)
    add_debug_argument(parser)
    args = parser.parse_args()
    result = count(args.config, args.shape, args.cfg_options)
    print(f'input shape:      {result["input_shape"]}')
    print(f'params:           {result["params"] / 1e6:.2f} M')
    if result['backbone_params'] is not None:
        print(f'backbone params:  {result["backbone_params"] / 1e6:.2f} M')
    print(f'FLOPs:            {result["flops"] / 1e9:.2f} GFLOPs ({result["flops"] / 2e9:.2f} GMACs)')
    return 0


if __name__ == '__main__':
    sys.exit(run_cli(main))
