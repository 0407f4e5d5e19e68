"""Evaluate a checkpoint: ``python tools/test.py CONFIG CHECKPOINT [--work-dir D] [--out ...] [--show-dir D]``.

CHECKPOINT is a file, a Hub reference (``hf://org/repo[@revision][/<file>]``) or a model alias (``seg-1b``). CONFIG may
be an alias too: its packaged config, and its checkpoint when CHECKPOINT is omitted.

The output options mean what they mean in the task's upstream tool:

* pose (mmpose): ``--out metrics.json``, ``--dump predictions.pkl``, ``--show-dir D`` (pictures), ``--interval N``;
* seg (mmseg): ``--out D`` (``<image>.png`` label maps), ``--show-dir D``, ``--tta`` (flip test-time augmentation);
* normal / pointmap / albedo (seg style): ``--out D`` (the files ``sapiens2-infer`` writes), ``--show-dir D``.
"""
import argparse
import sys

import sapiens2_entry  # noqa: F401  (first: sapiens2 imports without torch until main() registers its modules)

# isort: split
from sapiens2.config.cli_options import add_runner_arguments
from sapiens2.engine.checkpoint.policy import TRUST_CHECKPOINT_HELP
from sapiens2.hub.locate import fetch_released
from sapiens2.hub.model_zoo import resolve_model
from sapiens2.registration import register_all_modules
from sapiens2.utils.cli_errors import add_debug_argument, run_cli


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Test a sapiens2 model')
    parser.add_argument('config', help='config file path, or a model alias such as seg-1b')
    parser.add_argument('checkpoint', nargs='?', default=None,
                        help='checkpoint: .safetensors/.pth, hf://org/repo[@revision][/<file>] or an alias '
                        '(default: the alias of CONFIG)')
    parser.add_argument('--work-dir', help='directory for logs and results (default work_dirs/<config name>)')
    parser.add_argument('--trust-checkpoint', action='store_true', help=TRUST_CHECKPOINT_HELP)
    parser.add_argument('--out', help='pose: file for the metrics (.json/.yaml/.pkl); seg and dense projects: folder '
                        'for the predictions')
    parser.add_argument('--dump', help='pose: pickle file (.pkl) of every prediction, for offline evaluation')
    parser.add_argument('--show-dir', help='directory where the painted pictures are saved (relative to the current '
                        'directory, as --out; mmpose\'s own test.py puts a relative one under the work dir)')
    parser.add_argument('--show', action='store_true', help='pose and seg: show the pictures in a window')
    parser.add_argument('--wait-time', type=float, default=None, help='seconds each shown picture stays')
    parser.add_argument('--interval', type=int, default=None, help='pose: draw every N-th sample (default 1)')
    parser.add_argument('--tta', action='store_true', help='seg: test-time augmentation (tta_model, tta_pipeline)')
    add_runner_arguments(parser)
    add_debug_argument(parser)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    config, checkpoint = resolve_model(args.config, args.checkpoint)
    if checkpoint is None:
        raise SystemExit(f'give the CHECKPOINT to test {config} (a file, hf://... or an alias)')
    fetch_released(checkpoint)  # an unreachable released checkpoint fails before torch is imported
    register_all_modules()
    from sapiens2.engine.dist import name_unresponsive_ranks
    from sapiens2.engine.launch import build_runner, load_config, prepare_test_config
    cfg = load_config(config, args.cfg_options)
    try:
        cfg = prepare_test_config(cfg, config, checkpoint, args.work_dir, args.launcher, args.trust_checkpoint,
                                  out=args.out, dump=args.dump, show_dir=args.show_dir, show=args.show,
                                  wait_time=args.wait_time, interval=args.interval, tta=args.tta)
    except ValueError as err:
        raise SystemExit(f'tools/test.py: error: {err}') from None
    with name_unresponsive_ranks():
        build_runner(cfg).test()


if __name__ == '__main__':
    sys.exit(run_cli(main))
