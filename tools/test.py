"""Evaluate a checkpoint: ``python tools/test.py CONFIG CHECKPOINT [--work-dir D] [--cfg-options ...]``."""
import argparse
import sys

from sapiens2.engine.dist import name_unresponsive_ranks
from sapiens2.engine.launch import DictAction, build_runner, load_config, prepare_test_config
from sapiens2.utils.cli_errors import add_debug_argument, run_cli


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Test a sapiens2 model')
    parser.add_argument('config', help='config file path')
    parser.add_argument('checkpoint', help='checkpoint (.safetensors or .pth)')
    parser.add_argument('--work-dir', help='directory for logs and results (default work_dirs/<config name>)')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction, help='override config keys, key=value')
    parser.add_argument('--launcher', choices=['none', 'pytorch', 'slurm', 'mpi'], default='none')
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0)
    add_debug_argument(parser)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    cfg = load_config(args.config, args.cfg_options)
    cfg = prepare_test_config(cfg, args.config, args.checkpoint, args.work_dir, args.launcher)
    with name_unresponsive_ranks():
        build_runner(cfg).test()


if __name__ == '__main__':
    sys.exit(run_cli(main))
