"""Evaluate a checkpoint: ``python tools/test.py CONFIG CHECKPOINT [--work-dir D] [--cfg-options ...]``.

CHECKPOINT is a file, a Hub reference (``hf://org/repo[@revision][/<file>]``) or a model alias (``seg-1b``). CONFIG may
be an alias too: its packaged config, and its checkpoint when CHECKPOINT is omitted.
"""
import argparse
import sys

from sapiens2.engine.launch import TRUST_CHECKPOINT_HELP, DictAction, build_runner, load_config, prepare_test_config
from sapiens2.hub.model_zoo import resolve_model
from sapiens2.utils.cli_errors import add_debug_argument, run_cli


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Test a sapiens2 model')
    parser.add_argument('config', help='config file path, or a model alias such as seg-1b')
    parser.add_argument('checkpoint', nargs='?', default=None,
                        help='checkpoint: .safetensors/.pth, hf://org/repo[@revision][/<file>] or an alias '
                        '(default: the alias of CONFIG)')
    parser.add_argument('--work-dir', help='directory for logs and results (default work_dirs/<config name>)')
    parser.add_argument('--trust-checkpoint', action='store_true', help=TRUST_CHECKPOINT_HELP)
    parser.add_argument('--cfg-options', nargs='+', action=DictAction, help='override config keys, key=value')
    parser.add_argument('--launcher', choices=['none', 'pytorch', 'slurm', 'mpi'], default='none')
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0)
    add_debug_argument(parser)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    config, checkpoint = resolve_model(args.config, args.checkpoint)
    if checkpoint is None:
        raise SystemExit(f'give the CHECKPOINT to test {config} (a file, hf://... or an alias)')
    cfg = load_config(config, args.cfg_options)
    cfg = prepare_test_config(cfg, config, checkpoint, args.work_dir, args.launcher, args.trust_checkpoint)
    build_runner(cfg).test()


if __name__ == '__main__':
    sys.exit(run_cli(main))
