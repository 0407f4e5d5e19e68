"""Train a model from a config: ``python tools/train.py CONFIG [--work-dir D] [--resume [CKPT]] [--amp] ...``."""
import argparse
import sys

import sapiens2_entry  # noqa: F401  (first: sapiens2 imports without torch until main() registers its modules)

# isort: split
from sapiens2.config.cli_options import add_runner_arguments
from sapiens2.engine.checkpoint.policy import TRUST_CHECKPOINT_HELP
from sapiens2.registration import register_all_modules
from sapiens2.utils.cli_errors import add_debug_argument, run_cli


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Train a sapiens2 model')
    parser.add_argument('config', help='config file path')
    parser.add_argument('--work-dir', help='directory for logs and checkpoints (default work_dirs/<config name>)')
    parser.add_argument('--resume', nargs='?', const='auto', default=None,
                        help='resume from CKPT, or from the latest checkpoint in the work dir when no path is given')
    parser.add_argument('--amp', action='store_true', help='automatic mixed precision')
    parser.add_argument('--trust-checkpoint', action='store_true', help=TRUST_CHECKPOINT_HELP)
    add_runner_arguments(parser)
    add_debug_argument(parser)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    register_all_modules()
    from sapiens2.engine.dist import name_unresponsive_ranks
    from sapiens2.engine.launch import build_runner, load_config, prepare_train_config
    cfg = load_config(args.config, args.cfg_options)
    cfg = prepare_train_config(cfg, args.config, args.work_dir, args.resume, args.amp, args.launcher,
                               args.trust_checkpoint)
    with name_unresponsive_ranks():
        build_runner(cfg, lock_work_dir=True).train()


if __name__ == '__main__':
    sys.exit(run_cli(main))
