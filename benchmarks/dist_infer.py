"""Labelling jobs (``sapiens2-infer --launcher``): rank scaling, decoding workers, and the cost of a huge listing.

    python benchmarks/dist_infer.py --images 2000                 # everything (takes a while on 2 cores)
    python benchmarks/dist_infer.py --images 400 --parts scale    # 2 ranks x 1 thread vs 1 rank x 1 thread only

* ``scale``: the same folder of 640x480 JPEGs through pose-tiny and seg-tiny (the shipped models), once as one rank
  (``tools/infer.py --launcher none``) and once as 2 ranks (``tools/dist_infer.sh 2``), one thread each. The rate is
  read off the ledgers (the per-rank records of finished items) between 10 % and 100 % of the items, so start-up
  (imports, model build, process group) is left out; the ratio of the two rates is printed.
* ``busy``: the share of the wall time pose-tiny's forward takes in ``Sapiens2Inferencer`` on those JPEGs with
  ``workers`` = 0 (decoding in a thread) and 2 (DataLoader processes), torch on one thread.
* ``listing``: 100,000 paths in a ``.txt`` list (empty files), listed (``expand_inputs``, ``collect_sources``), checked
  against a ledger recording half of them as done, and split for 8 ranks: seconds and the peak of Python's allocations
  (tracemalloc), with 0 and with 50,000 items done.
"""
import argparse
import os
import os.path as osp
import subprocess
import sys
import tempfile
import time
import tracemalloc

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks.infer_pipeline import write_images  # noqa: E402

MODELS = ('pose-tiny', 'seg-tiny')


def ledger_lines(out: str) -> int:
    folder = osp.join(out, '.sapiens2_job', 'ledger')
    if not osp.isdir(folder):
        return 0
    total = 0
    for name in os.listdir(folder):
        with open(osp.join(folder, name), 'rb') as f:
            total += f.read().count(b'\n')
    return total


def timed_job(cmd: list, out: str, total: int) -> float:
    """Items/s of a job between 10 % and 100 % of its items (ledgers polled every 50 ms)."""
    env = dict(os.environ, OMP_NUM_THREADS='1', MKL_NUM_THREADS='1', PYTHONPATH=ROOT, PYTHON=sys.executable)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    start_count, start = None, None
    while proc.poll() is None:
        done = ledger_lines(out)
        if start is None and done >= total // 10:
            start_count, start = done, time.perf_counter()
        time.sleep(0.05)
    end = time.perf_counter()
    if proc.returncode != 0:
        raise RuntimeError(f'{cmd} failed: {proc.stderr.read()[-2000:]}')
    return (ledger_lines(out) - start_count) / (end - start)


def scale(images: str, count: int, work: str) -> None:
    print(f'## 2 ranks x 1 thread vs 1 rank x 1 thread, {count} JPEGs 640x480')
    for model in MODELS:
        common = [images, '--model', model, '--device', 'cpu', '--quiet', '--batch-size', '4', '--person-finder',
                  'none']  # gradients without people: one whole-image box each, the model's work alone
        one_out, two_out = osp.join(work, f'{model}_1'), osp.join(work, f'{model}_2')
        one = timed_job([sys.executable, 'tools/infer.py', *common, '--out', one_out, '--launcher', 'none'],
                        one_out, count)
        two = timed_job(['bash', 'tools/dist_infer.sh', '2', *common, '--out', two_out], two_out, count)
        print(f'{model}: 1 rank {one:.2f} items/s, 2 ranks {two:.2f} items/s, ratio {two / one:.2f}')


def busy(images: str, count: int, work: str) -> None:
    import torch

    from sapiens2.apis import Sapiens2Inferencer
    from sapiens2.registration import register_all_modules
    torch.set_num_threads(1)
    register_all_modules()
    print(f'## pose-tiny forward share of the wall time, {count} JPEGs 640x480, torch on 1 thread')
    inferencer = Sapiens2Inferencer('pose-tiny', device='cpu', dtype='fp32', batch_size=4,
                                    task_options=dict(pose=dict(person_finder=None)))  # one whole-image box each
    model = inferencer.tasks[0].model
    spent = [0.0]
    began = []
    model.register_forward_pre_hook(lambda *_: began.append(time.perf_counter()))
    model.register_forward_hook(lambda *_: spent.__setitem__(0, spent[0] + time.perf_counter() - began.pop()))
    for workers in (0, 2):
        spent[0] = 0.0
        start = time.perf_counter()
        inferencer(images, out_dir=osp.join(work, f'busy_{workers}'), show_progress=False, return_results=False,
                   workers=workers)
        wall = time.perf_counter() - start
        print(f'workers={workers}: {count / wall:.2f} images/s, forward {spent[0]:.1f} s of {wall:.1f} s: '
              f'busy {spent[0] / wall:.2f}')


def listing(work: str, count: int = 100_000) -> None:
    from sapiens2.apis.io.input_lists import expand_inputs
    from sapiens2.apis.io.sources import collect_sources
    from sapiens2.apis.labelling.ledger import DONE, Ledger, read_ledgers
    from sapiens2.apis.labelling.share import rank_share
    folder = osp.join(work, 'many')
    os.makedirs(folder, exist_ok=True)
    paths = [osp.join(folder, f'{i // 1000:03d}', f'{i:07d}.jpg') for i in range(count)]
    for path in paths:
        os.makedirs(osp.dirname(path), exist_ok=True)
        open(path, 'wb').close()
    with open(osp.join(work, 'list.txt'), 'w') as f:
        f.write('\n'.join(paths) + '\n')
    print(f'## {count} listed paths: listed, checked against the ledgers, split for 8 ranks')
    for done in (0, count // 2):
        job = osp.join(work, f'job_{done}')
        ledger = Ledger(job, 0)
        for path in paths[:done]:
            ledger.record(osp.splitext(osp.basename(path))[0], DONE, path)
        ledger.close()

        def check():
            sources = collect_sources(expand_inputs([osp.join(work, 'list.txt')]), check_images=False)  # as a job lists
            finished = {name for name, entry in read_ledgers(job).items() if entry['status'] == DONE}
            todo = [source for source in sources if source.name not in finished]
            return todo, [rank_share(todo, rank, 8) for rank in range(8)]

        start = time.perf_counter()
        todo, shares = check()
        seconds = time.perf_counter() - start
        tracemalloc.start()  # a second pass for the memory: tracing slows Python down 2-3x
        check()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f'{done} done: {seconds:.2f} s, {len(todo)} to do in shares of {len(shares[0])}, peak Python '
              f'allocations {peak / 2 ** 20:.0f} MiB')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--images', type=int, default=2000)
    parser.add_argument('--parts', nargs='+', choices=('scale', 'busy', 'listing'), default=('scale', 'busy',
                                                                                             'listing'))
    args = parser.parse_args()
    print(f'load average before: {os.getloadavg()}')
    with tempfile.TemporaryDirectory() as work:
        images = write_images(work, args.images) if {'scale', 'busy'} & set(args.parts) else None
        if 'scale' in args.parts:
            scale(images, args.images, work)
        if 'busy' in args.parts:
            busy(images, args.images, work)
        if 'listing' in args.parts:
            listing(work)
    print(f'load average after: {os.getloadavg()}')


if __name__ == '__main__':
    main()
