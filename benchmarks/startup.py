"""Start-up time of the console scripts, as a ratio to ``python -c pass`` and to ``import torch``.

    python benchmarks/startup.py [--repeats 5]

Each command runs in a fresh interpreter (this one, with this checkout first on the path), ``--repeats`` times; the
median wall and CPU times are reported. The console scripts are timed through ``sapiens2_entry``, as their installed
wrappers call it; ``import sapiens2`` (every module registered) is the cost a command pays once it builds a model.
"""
import argparse
import os
import os.path as osp
import resource
import statistics
import subprocess
import sys
import time
from typing import Tuple

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
COMMANDS = {
    'python -c pass': 'pass',
    'import torch': 'import torch',
    'sapiens2-infer --help': 'import sapiens2_entry; sapiens2_entry.infer_main(["--help"])',
    'sapiens2 models': 'import sapiens2_entry; sapiens2_entry.main(["models"])',
    'sapiens2-infer, unknown alias': 'import sapiens2_entry; sapiens2_entry.infer_main(['
                                     '"docs/images/demo_composite.jpg", "--model", "pose-9b", "--out", "o"])',
    'import sapiens2': 'import sapiens2',
}


def run_times(code: str, repeats: int) -> Tuple[float, float]:
    """Median wall and CPU (user + system) seconds of ``python -c code``; CPU time varies less on a busy machine."""
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get('PYTHONPATH', ''))
    walls, cpus = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, '-c', code], cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--repeats', type=int, default=5, help='runs per command (the median is reported)')
    args = parser.parse_args()
    times = {name: run_times(code, args.repeats) for name, code in COMMANDS.items()}
    (base, _), (torch_wall, torch_cpu) = times['python -c pass'], times['import torch']
    print('| command | wall s | x python -c pass | x import torch | CPU s | CPU x import torch |\n'
          '|---|---|---|---|---|---|')
    for name, (wall, cpu) in times.items():
        print(f'| `{name}` | {wall:.2f} | {wall / base:.1f} | {wall / torch_wall:.2f} | {cpu:.2f} | '
              f'{cpu / torch_cpu:.2f} |')


if __name__ == '__main__':
    main()
