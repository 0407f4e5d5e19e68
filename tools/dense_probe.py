"""Dense probing: freeze a config's backbone (+ checkpoint), train one fixed lightweight decoder, report the metric.

Usage: python tools/dense_probe.py CONFIG [--checkpoint CKPT] --task {seg,normal,depth} --data-root ROOT
                                   [--prefix auto] [--size H W] [--layers all|last] [--steps N] [--num-train N]
                                   [--seed S] [--device cpu] [--out result.json] [--cfg-options KEY=VALUE ...]
CONFIG is any config whose ``model.backbone`` is a registered backbone (task or pretraining configs); CKPT is a
bare-key backbone file (``export_backbone`` output, official pretrain weights) or a task/pretraining checkpoint.
Without --checkpoint the randomly initialised backbone is probed. Every run uses the same decoder and
hyper-parameters, so the printed metric ranks backbones. See projects/pretrain/README.md.
"""
import argparse
import sys

from mmengine.registry import init_default_scope

from sapiens2.config.cli_options import ConfigOptionsAction
from sapiens2.engine.launch import load_config
from sapiens2.utils import strict_json
from sapiens2.utils.atomic_save import atomic_write_text
from sapiens2.utils.cli_errors import add_debug_argument, run_cli
from sapiens2_pretrain.dense_probe import LAYERS, TASKS, ProbeSettings, dense_probe


def parse_args() -> argparse.Namespace:
    defaults = ProbeSettings()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('config', help='config with a model.backbone entry')
    parser.add_argument('--checkpoint', help='backbone, task or pretraining checkpoint (default: random init)')
    parser.add_argument('--prefix', default='auto',
                        help="key prefix to strip: 'auto' (backbone. when present), 'none', or e.g. "
                        "'teacher.backbone.' for the teacher of a pretraining checkpoint")
    parser.add_argument('--task', required=True, choices=sorted(TASKS))
    parser.add_argument('--data-root', required=True, help='dataset root in the SynthHumans layout')
    parser.add_argument('--size', nargs=2, type=int, default=defaults.size, metavar=('H', 'W'))
    parser.add_argument('--layers', choices=LAYERS, default=defaults.layers,
                        help='features of every block (default) or of the last one')
    parser.add_argument('--steps', type=int, default=defaults.steps, help='decoder training steps')
    parser.add_argument('--num-train', type=int, default=None, help='labeled training images (default: all)')
    parser.add_argument('--seed', type=int, default=defaults.seed)
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--out', help='write the result as JSON to this file')
    parser.add_argument('--cfg-options', nargs='+', action=ConfigOptionsAction, help='override config keys, key=value')
    add_debug_argument(parser)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    cfg = load_config(args.config, args.cfg_options)
    init_default_scope(cfg.get('default_scope', 'sapiens2'))
    if 'model' not in cfg or 'backbone' not in cfg.model:
        raise KeyError(f'{args.config} has no model.backbone to probe.')
    settings = ProbeSettings(size=tuple(args.size), layers=args.layers, steps=args.steps, num_train=args.num_train,
                             seed=args.seed)
    prefix = None if args.prefix == 'none' else args.prefix
    result = dense_probe(cfg.model.backbone.to_dict(), args.checkpoint, args.task, args.data_root, settings,
                         prefix=prefix, device=args.device)
    result['config'] = args.config
    print(strict_json.dumps(result))
    if args.out:
        atomic_write_text(args.out, strict_json.dumps(result, indent=2))


if __name__ == '__main__':
    sys.exit(run_cli(main))
