"""Start-up time of the commands, as a ratio to ``python -c pass`` and to ``import torch``.

    python benchmarks/startup.py [--repeats 5] [--repo CHECKOUT]

Each command runs in a fresh interpreter (this one, with ``--repo``, default this checkout, first on the path),
``--repeats`` times; the median wall and CPU times are reported. The console scripts are timed through
``sapiens2_entry``, as their installed wrappers call it; the tools as ``python tools/<tool>.py``. ``import sapiens2``
(every module registered) is the cost a command pays once it builds a model. The unreachable-alias rows run with an
empty Hub cache and checkpoint root against a local port that refuses connections, one that never answers (a
listener that accepts nothing) and ``HF_HUB_OFFLINE=1``.
"""
import argparse
import os
import os.path as osp
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Tuple

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
IMAGE = 'docs/images/demo_composite.jpg'
UNREACHABLE = ['tools/infer.py', IMAGE, '--model', 'seg-0.4b', '--out', '{tmp}/out']
# name: (arguments after `python`, the Hub it sees: None, 'refused', 'black hole' or 'offline')
COMMANDS: Dict[str, Tuple[List[str], object]] = {
    'python -c pass': (['-c', 'pass'], None),
    'import torch': (['-c', 'import torch'], None),
    'sapiens2-infer --help': (['-c', 'import sapiens2_entry; sapiens2_entry.infer_main(["--help"])'], None),
    'sapiens2 models': (['-c', 'import sapiens2_entry; sapiens2_entry.main(["models"])'], None),
    'sapiens2-infer, unknown alias': (['-c', 'import sapiens2_entry; sapiens2_entry.infer_main(['
                                       f'"{IMAGE}", "--model", "pose-9b", "--out", "o"])'], None),
    'tools/train.py --help': (['tools/train.py', '--help'], None),
    'tools/train.py CONFIG --no-such-option': (['tools/train.py', 'x.py', '--no-such-option'], None),
    'tools/test.py --help': (['tools/test.py', '--help'], None),
    'tools/deploy/export.py --help': (['tools/deploy/export.py', '--help'], None),
    'tools/infer.py IMAGE --model seg-0.4b, Hub refused': (UNREACHABLE, 'refused'),
    'tools/infer.py IMAGE --model seg-0.4b, Hub never answers': (UNREACHABLE, 'black hole'),
    'tools/infer.py IMAGE --model seg-0.4b, HF_HUB_OFFLINE=1': (UNREACHABLE, 'offline'),
    'import sapiens2': (['-c', 'import sapiens2'], None),
}


def hub_env(hub, tmp: str, black_hole: socket.socket) -> dict:
    if hub is None:
        return {}
    env = dict(HF_HOME=osp.join(tmp, 'hf'), SAPIENS2_CHECKPOINT_ROOT=osp.join(tmp, 'checkpoints'), HF_HUB_OFFLINE='0')
    if hub == 'offline':
        env['HF_HUB_OFFLINE'] = '1'
    elif hub == 'refused':
        with socket.socket() as sock:
            sock.bind(('127.0.0.1', 0))
            env['HF_ENDPOINT'] = f'http://127.0.0.1:{sock.getsockname()[1]}'
    else:
        env['HF_ENDPOINT'] = f'http://127.0.0.1:{black_hole.getsockname()[1]}'
    return env


def run_times(repo: str, args: List[str], env: dict, repeats: int, timeout: float) -> Tuple[float, float]:
    """Median wall and CPU (user + system) seconds of ``python args``; CPU time varies less on a busy machine. A run
    stopped after ``timeout`` seconds counts as ``timeout`` (its CPU time is lost)."""
    env = dict(os.environ, PYTHONPATH=repo + os.pathsep + os.environ.get('PYTHONPATH', ''), **env)
    walls, cpus = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        try:
            subprocess.run([sys.executable, *args], cwd=repo, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--repeats', type=int, default=5, help='runs per command (the median is reported)')
    parser.add_argument('--repo', default=REPO, help='checkout to time (default: this one)')
    parser.add_argument('--only', nargs='+', default=None, help='time only the commands whose name contains one of '
                        'these words (python -c pass and import torch are always timed)')
    parser.add_argument('--timeout', type=float, default=120.0, help='seconds after which a run is stopped')
    args = parser.parse_args()
    commands = {name: command for name, command in COMMANDS.items()
                if args.only is None or name in ('python -c pass', 'import torch') or any(w in name for w in args.only)}
    print(f'load average before: {" ".join(f"{x:.2f}" for x in os.getloadavg())}')
    with tempfile.TemporaryDirectory() as tmp, socket.socket() as black_hole:
        black_hole.bind(('127.0.0.1', 0))
        black_hole.listen(64)
        times = {name: run_times(args.repo, [a.format(tmp=tmp) for a in argv], hub_env(hub, tmp, black_hole),
                                 args.repeats, args.timeout) for name, (argv, hub) in commands.items()}
    (base, _), (torch_wall, torch_cpu) = times['python -c pass'], times['import torch']
    print('| command | wall s | x python -c pass | x import torch | CPU s | CPU x import torch |\n'
          '|---|---|---|---|---|---|')
    for name, (wall, cpu) in times.items():
        print(f'| `{name}` | {wall:.2f} | {wall / base:.1f} | {wall / torch_wall:.2f} | {cpu:.2f} | '
              f'{cpu / torch_cpu:.2f} |')
    print(f'load average after: {" ".join(f"{x:.2f}" for x in os.getloadavg())}')


if __name__ == '__main__':
    main()
