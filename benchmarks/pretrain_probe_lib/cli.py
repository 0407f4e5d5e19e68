"""Does Sapiens2 pretraining give better dense features than random init, and the joint objective than MAE alone?

The command line of ``benchmarks/pretrain_probe.py`` (the package docstring says what it measures)."""
import argparse
import os
import os.path as osp
import sys

from . import COMBINED, DIAGNOSTICS, LEVERS, ROOT, SETTINGS
from .health import run_health, run_levers
from .jobs import job_error, run_job
from .pretrainers import quiet_mmengine
from .reports import report
from .scheduler import schedule


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--setting', default='full', choices=[n for n in SETTINGS if n != 'quick'],
                        help='full: SynthHumans plain scenes (default); rich: the rich scene variety, with the [CLS] '
                        'probes and the fine-tuning (issue 42)')
    parser.add_argument('--quick', action='store_true', help='smoke setting (tiny data, few iterations, one seed)')
    parser.add_argument('--workers', type=int, default=2, help='cells run in parallel, one thread each (default 2)')
    parser.add_argument('--results', default=None, help='cell JSON folder (default benchmarks/results/pretrain_probe/'
                        '<setting>)')
    parser.add_argument('--work-dir', default=None, help='training work dirs and checkpoints (default '
                        'work_dirs/pretrain_probe/<setting>)')
    parser.add_argument('--docs', default=None, help='markdown file whose table to update (default '
                        'docs/pretraining.md, none for --quick)')
    parser.add_argument('--diagnostics', action='store_true',
                        help=f'also run the ablations and diagnostics {DIAGNOSTICS}')
    parser.add_argument('--report', action='store_true', help='only build the table and pictures from the cells')
    parser.add_argument('--health', action='store_true', help='health check: pretrain from scratch with --lever '
                        'and say whether the self-distillation learns (teacher targets on held-out images)')
    parser.add_argument('--levers', action='store_true', help='the lever sweep: one health cell per lever (cached)')
    parser.add_argument('--lever', default='full', choices=sorted(LEVERS) + ['combined'],
                        help='recipe of --health: the full objective or one lever of it (default full)')
    parser.add_argument('--job', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.job and (why := job_error(args.job)):
        parser.error(why)
    args.setting = SETTINGS['quick' if args.quick else args.setting]
    name = args.setting.name
    args.results = args.results or osp.join(ROOT, 'benchmarks', 'results', 'pretrain_probe', name)
    args.work_dir = args.work_dir or osp.join(ROOT, 'work_dirs', 'pretrain_probe', name)
    args.health_results = osp.join(args.results, 'health')
    if args.lever == 'combined' and not COMBINED:
        parser.error('--lever combined: no lever is listed in COMBINED yet')
    if args.docs is None and not args.quick:
        args.docs = osp.join(ROOT, 'docs', 'pretraining.md')
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.job:
        run_job(args, args.job)
        return
    if args.health or args.levers:
        import torch
        torch.set_num_threads(int(os.environ.get('OMP_NUM_THREADS', '1')))
        quiet_mmengine()
        run_levers(args) if args.levers else run_health(args)
        return
    if not args.report:
        schedule(args)
    report(args)


def run(argv=None) -> None:
    """:func:`main`; a cell whose checkpoint is not on this machine ends it with one line that says what to do."""
    try:
        main(argv)
    except FileNotFoundError as e:
        sys.exit(f'pretrain_probe.py: error: {e}')
