"""Start-up time of the console scripts, as a ratio to ``python -c pass`` and to ``import torch``.

    python benchmarks/startup.py [--repeats 5]

Each command runs in a fresh interpreter (this one, with this checkout first on the path), ``--repeats`` times; the
median wall time is reported. The console scripts are timed through ``sapiens2_entry``, as their installed wrappers
call it; ``import sapiens2`` (every module registered) is the cost a command pays once it builds a model.
"""
import argparse
import os
import os.path as osp
import statistics
import subprocess
import sys
import time

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


def wall_time(code: str, repeats: int) -> float:
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get('PYTHONPATH', ''))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, '-c', code], cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--repeats', type=int, default=5, help='runs per command (the median is reported)')
    args = parser.parse_args()
    times = {name: wall_time(code, args.repeats) for name, code in COMMANDS.items()}
    base, torch_time = times['python -c pass'], times['import torch']
    print('| command | seconds | x python -c pass | x import torch |\n|---|---|---|---|')
    for name, seconds in times.items():
        print(f'| `{name}` | {seconds:.2f} | {seconds / base:.1f} | {seconds / torch_time:.2f} |')


if __name__ == '__main__':
    main()
