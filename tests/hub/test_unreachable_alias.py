"""A released alias that is neither cached nor reachable is one error line, before torch is imported.

The commands download an alias's checkpoint before their imports (:func:`sapiens2.hub.locate.fetch_released`), and
the Hub counts as unreachable when it does not answer within ``CONNECT_TIMEOUT``: a refused port, a listener that
never accepts nor answers (a black hole), and ``HF_HUB_OFFLINE=1``. Each command runs in a fresh interpreter with an
empty Hub cache and checkpoint root; the subprocess timeout guards against huggingface_hub's minute of retries
(``sys.modules`` says that the answer came before torch).
"""
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scripts import RUN_TOOLS

REPO = Path(__file__).resolve().parents[2]
HEAVY = ('torch', 'mmengine', 'mmpose', 'mmseg')  # cv2 may check the inputs
ALIAS, CHECKPOINT = 'seg-0.4b', 'sapiens2_0.4b_seg.safetensors'
GUARD_S = 30  # far above the 2 s the Hub is given, far below huggingface_hub's retries



def run_tool(tmp_path: Path, tool: str, argv: list, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(('HF_', 'SAPIENS2_')) and 'proxy' not in
               k.lower()}
    environ.update(PYTHONPATH=str(REPO), OMP_NUM_THREADS='1', HF_HOME=str(tmp_path / 'hf'),
                   SAPIENS2_CHECKPOINT_ROOT=str(tmp_path / 'checkpoints'), **env)
    proc = subprocess.run([sys.executable, '-c', RUN_TOOLS, json.dumps({tool: (tool, argv)}), *HEAVY], cwd=REPO,
                          env=environ, capture_output=True, text=True, timeout=GUARD_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])[tool]


@pytest.fixture
def black_hole_endpoint():
    """A port that takes connections into its backlog and never accepts or answers them."""
    with socket.socket() as server:
        server.bind(('127.0.0.1', 0))
        server.listen(8)
        yield f'http://127.0.0.1:{server.getsockname()[1]}'


def infer_argv(tmp_path: Path) -> list:
    # a 1x1 PNG (its header is checked; its pixels are never read: the checkpoint fails first)
    (tmp_path / 'a.png').write_bytes(bytes.fromhex('89504e470d0a1a0a0000000d49484452000000010000000108000000003a7e9b'
                                                   '550000000a49444154081d6360000000020001cfc835e50000000049454e44ae'
                                                   '426082'))
    return [str(tmp_path / 'a.png'), '--model', ALIAS, '--out', str(tmp_path / 'out')]


def check_one_line(case: dict, prog: str, offline: str) -> None:
    assert case['code'] == 1, case['output']
    errors = [line for line in case['output'].splitlines() if line.startswith(f'{prog}: error:')]
    assert len(errors) == 1, case['output']
    assert errors[0].startswith(f'{prog}: error: HubCheckpointNotFoundError: Model alias {ALIAS} (hf://facebook/')
    assert f'offline mode (HF_HUB_OFFLINE): {offline}' in case['output']
    assert f'hf download facebook/sapiens2-seg-0.4b {CHECKPOINT}' in case['output']
    assert 'Traceback' not in case['output'] and 'Retrying' not in case['output']
    assert case['heavy'] == [], f'imported {case["heavy"]} before failing'


def test_refused_hub(tmp_path, refused_endpoint):
    case = run_tool(tmp_path, 'tools/infer.py', infer_argv(tmp_path), HF_ENDPOINT=refused_endpoint)
    check_one_line(case, 'sapiens2-infer', 'off, but the Hub could not be reached')


def test_black_hole_hub(tmp_path, black_hole_endpoint):
    case = run_tool(tmp_path, 'tools/infer.py', infer_argv(tmp_path), HF_ENDPOINT=black_hole_endpoint)
    check_one_line(case, 'sapiens2-infer', 'off, but the Hub could not be reached')


def test_offline(tmp_path):
    case = run_tool(tmp_path, 'tools/test.py', [ALIAS], HF_HUB_OFFLINE='1')
    check_one_line(case, 'test.py', 'on')
