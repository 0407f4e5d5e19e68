"""Evaluate a checkpoint: ``python tools/test.py CONFIG CHECKPOINT [--work-dir D] [--cfg-options ...]``."""
import argparse

from sapiens2.engine.launch import TRUST_CHECKPOINT_HELP, DictAction, build_runner, load_config, prepare_test_config


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Test a sapiens2 model')
    parser.add_argument('config', help='config file path')
    parser.add_argument('checkpoint', help='checkpoint (.safetensors or .pth)')
    parser.add_argument('--work-dir', help='directory for logs and results (default work_dirs/<config name>)')
    parser.add_argument('--trust-checkpoint', action='store_true', help=TRUST_CHECKPOINT_HELP)
    parser.add_argument('--cfg-options', nargs='+', action=DictAction, help='override config keys, key=value')
    parser.add_argument('--launcher', choices=['none', 'pytorch', 'slurm', 'mpi'], default='none')
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    cfg = load_config(args.config, args.cfg_options)
    cfg = prepare_test_config(cfg, args.config, args.checkpoint, args.work_dir, args.launcher,
                              args.trust_checkpoint)
    build_runner(cfg).test()


if __name__ == '__main__':
    main()
