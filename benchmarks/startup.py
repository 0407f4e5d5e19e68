"""Start-up time of the commands, as a ratio to ``python -c pass`` and to ``import torch``.

    python benchmarks/startup.py [--repeats 5] [--repo CHECKOUT]

Each command runs in a fresh interpreter (this one, with ``--repo``, default this checkout, first on the path),
``--repeats`` times; the median and the minimum wall and CPU times are reported. The console scripts are timed
through ``sapiens2_entry``, as their installed wrappers call it; the tools as ``python tools/<tool>.py``.
``import sapiens2`` (the core modules registered) is the cost a command pays once it builds a model. The one-photo
rows are whole runs, from the interpreter's start to the written result: pose-tiny on a real photo with a ``--bboxes``
file, by the command and by ``Sapiens2Inferencer``; the mistakes a user makes first (a text file named
``.jpg``, a checkpoint that does not exist) end in their one error line. The unreachable-alias rows run with an empty
Hub cache and checkpoint root against a local port that refuses connections, one that never answers (a listener that
accepts nothing) and ``HF_HUB_OFFLINE=1``.
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
PHOTO = 'benchmarks/data/realpose/images/000000000785.jpg'  # a COCO val2017 photo of one skier, 640x425
PHOTO_BOX = [281, 45, 499, 391]  # its person (benchmarks/data/realpose/gt_body12.json), x1, y1, x2, y2
BBOXES = '{tmp}/bboxes.json'  # written by write_inputs()
ONE_PHOTO = (f'import sapiens2_entry; sapiens2_entry.infer_main(["{PHOTO}", "--model", "pose-tiny", "--bboxes", '
             f'"{BBOXES}", "--out", "{{tmp}}/cli", "--quiet"])')
ONE_PHOTO_PYTHON = (f'from sapiens2.apis import Sapiens2Inferencer; Sapiens2Inferencer("pose-tiny")("{PHOTO}", '
                    f'out_dir="{{tmp}}/python", bboxes="{BBOXES}", show_progress=False)')
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
    'sapiens2-infer PHOTO --model pose-tiny --bboxes B --out O': (['-c', ONE_PHOTO], None),
    'Sapiens2Inferencer("pose-tiny")(PHOTO, bboxes=B, out_dir=O)': (['-c', ONE_PHOTO_PYTHON], None),
    'sapiens2-infer, a text file named .jpg': (['-c', 'import sapiens2_entry; sapiens2_entry.infer_main(['
                                                '"{tmp}/notes.jpg", "--model", "pose-tiny", "--out", "{tmp}/o"])'],
                                               None),
    'sapiens2-infer, missing checkpoint': (['-c', 'import sapiens2_entry; sapiens2_entry.infer_main(['
                                            f'"{PHOTO}", "--model", "pose-tiny", "--weights", "{{tmp}}/none.pth", '
                                            '"--out", "{tmp}/o"])'], None),
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


def run_times(repo: str, args: List[str], env: dict, repeats: int, timeout: float) -> Tuple[List[float], List[float]]:
    """Wall and CPU (user + system) seconds of each run of ``python args``; CPU time varies less on a busy machine. A
    run stopped after ``timeout`` seconds counts as ``timeout`` (its CPU time is lost)."""
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
    return walls, cpus


def write_inputs(tmp: str) -> None:
    """The ``--bboxes`` file of the one-photo rows and a text file named .jpg."""
    import json
    with open(osp.join(tmp, 'bboxes.json'), 'w') as f:
        json.dump({osp.splitext(osp.basename(PHOTO))[0]: [PHOTO_BOX]}, f)
    with open(osp.join(tmp, 'notes.jpg'), 'w') as f:
        f.write('not a photo\n')


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
        write_inputs(tmp)
        times = {name: run_times(args.repo, [a.format(tmp=tmp) for a in argv], hub_env(hub, tmp, black_hole),
                                 args.repeats, args.timeout) for name, (argv, hub) in commands.items()}
    base = statistics.median(times['python -c pass'][0])
    torch_wall, torch_cpu = (statistics.median(values) for values in times['import torch'])
    print('| command | wall s, median | wall s, min | x python -c pass | x import torch | CPU s | CPU x import torch |'
          '\n|---|---|---|---|---|---|---|')
    for name, (walls, cpus) in times.items():
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        print(f'| `{name}` | {wall:.2f} | {min(walls):.2f} | {wall / base:.1f} | {wall / torch_wall:.2f} | {cpu:.2f} | '
              f'{cpu / torch_cpu:.2f} |')
    print(f'load average after: {" ".join(f"{x:.2f}" for x in os.getloadavg())}')


if __name__ == '__main__':
    main()
