"""A labelling job: ``sapiens2-infer --launcher none|pytorch|slurm``, the ranks of one job over one input listing.

Every rank lists the same inputs (sorted), reads the ledgers of earlier runs, and labels a deterministic share of
the items still to do (:func:`.share.rank_share`), on its own device (``cuda:LOCAL_RANK``, or the CPU over gloo),
writing each item's files (atomically) and then its ledger line (:mod:`.ledger`); only rank 0 writes the settings, the
merged files and the progress line. A rerun of the same command skips the items recorded as done and redoes the
rest; other settings are refused (:mod:`.settings`) unless ``--overwrite``.
"""
import argparse
import glob
import logging
import os
import os.path as osp
import time
from typing import Callable, List

from mmengine.dist import barrier, get_rank, get_world_size

from ..io.sources import Source
from .ledger import DONE, FAILED, LEDGER_GLOB, Ledger, ledger_folder, read_ledgers
from .merge import job_folder, merge_outputs
from .progress import JobProgress
from .settings import check_settings, file_identity
from .share import rank_share

logger = logging.getLogger(__name__)
FINISHED_KEY = 'sapiens2/infer/finished/{}'
#: Seconds between two looks of rank 0 at the ranks that finished their share.
POLL_S = 0.2


def job_settings(args: argparse.Namespace) -> dict:
    """What the labels depend on: models, weights, tasks and the output options (not the inputs, which may grow)."""
    from ..io.output_switches import OUTPUT_SWITCHES
    keys = ('task', 'dtype', 'backend', 'keypoint_format', 'kpt_thr', 'bbox_thr', 'nms_thr', 'det_interval',
            'person_finder', 'no_track', 'smooth', 'smooth_min_cutoff', 'smooth_beta', 'smooth_lag', 'people',
            'per_person')
    settings = {key: getattr(args, key) for key in keys}
    settings.update(size=args.size if args.task else None, model=[file_identity(m) for m in args.model],
                    weights=[file_identity(w) for w in args.weights or ()],
                    det=[file_identity(args.det_config), file_identity(args.det_checkpoint)],
                    bboxes=file_identity(args.bboxes))
    settings.update({switch.keyword: not getattr(args, switch.dest) for switch in OUTPUT_SWITCHES})
    return settings


def rank_device(device: str | None) -> str | None:
    """``cuda:LOCAL_RANK`` for ``None`` (with a GPU) or ``cuda`` in a job of several ranks; else ``device``."""
    import torch
    local = os.environ.get('LOCAL_RANK')
    if local is not None and (device == 'cuda' or (device is None and torch.cuda.is_available())):
        return f'cuda:{local}'
    return device


def run_job(args: argparse.Namespace, sources: List[Source], build: Callable[[str | None], Callable]) -> int:
    """Label ``sources`` as rank ``get_rank()`` of the job ``args.launcher`` started.

    ``build(device)`` returns a callable running the inferencer on a list of sources with ``item_done``,
    ``item_failed``, ``shared_folder`` and ``show_progress`` given by keyword. Returns the exit code.
    """
    from sapiens2.engine.dist import init_distributed
    init_distributed(args.launcher)
    rank, world = get_rank(), get_world_size()
    job = job_folder(args.out)
    check_settings(job, job_settings(args), args.overwrite, write=rank == 0)
    if rank == 0 and args.overwrite:  # everything anew: the ledgers of earlier runs are void
        for path in glob.glob(osp.join(glob.escape(ledger_folder(job)), LEDGER_GLOB)):
            os.remove(path)
    barrier()
    earlier = {name for name, entry in read_ledgers(job).items() if entry['status'] == DONE}
    todo = [source for source in sources if source.name not in earlier]
    barrier()  # every rank has read the ledgers before any rank adds to them: the same split everywhere
    share = rank_share(todo, rank, world)
    ledger = Ledger(job, rank)
    progress = JobProgress(len(sources), len(sources) - len(todo), rank, show=not args.quiet)

    def item_done(source: Source) -> None:
        ledger.record(source.name, DONE, source.path)
        progress.add()

    def item_failed(source: Source, reason: str) -> None:
        ledger.record(source.name, FAILED, source.path, reason)
        logger.warning('%s failed, the run goes on (failures.jsonl): %s', source.path or source.name, reason)
        progress.add()

    try:
        infer = build(rank_device(args.device))
        infer(share, item_done=item_done, item_failed=item_failed, shared_folder=True, show_progress=False)
    finally:
        ledger.close()
    _wait_for_ranks(rank, world)
    progress.close()
    if rank != 0:
        return 0
    counts = merge_outputs(args.out, args.overwrite)
    names = {source.name for source in sources}
    entries = read_ledgers(job)
    failed = sum(entry['status'] == FAILED for name, entry in entries.items() if name in names)
    done_now = sum(entry['status'] == DONE for name, entry in entries.items() if name in names and name not in
                   earlier)
    print(f'{len(sources)} items: {done_now} succeeded, {failed} failed, {len(sources) - len(todo)} skipped (done '
          f'by an earlier run); merged: {counts["done"]} labelled items in {args.out} (index.jsonl, failures.jsonl)')
    return 0


def _wait_for_ranks(rank: int, world: int) -> None:
    """Rank 0 waits until every rank has finished its share. Not a collective: shares of videos may end hours apart,
    beyond a collective's timeout; a rank that dies ends the job through torchrun's agent (or srun's
    ``--kill-on-bad-exit``), which names it."""
    if world == 1:
        return
    import torch.distributed as torch_dist
    store = torch_dist.distributed_c10d._get_default_store()
    store.set(FINISHED_KEY.format(rank), '1')
    if rank == 0:
        keys = [FINISHED_KEY.format(other) for other in range(world)]
        while not store.check(keys):
            time.sleep(POLL_S)
