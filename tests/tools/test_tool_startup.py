"""The torch tools answer ``--help`` and argument errors without importing torch or the OpenMMLab libraries.

Each tool runs as ``python tools/<tool>.py`` would (``runpy``, ``__main__``) in one fresh interpreter, case after case;
after each case the heavy modules in ``sys.modules`` are listed (a case that imported one names it first).
tools/dense_probe.py is not here: its parser reads the pretraining project's settings, whose package registers modules
and imports torch.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scripts import RUN_TOOLS

REPO = Path(__file__).resolve().parents[2]
HEAVY = ('torch', 'mmengine', 'mmcv', 'mmpose', 'mmseg', 'mmdet', 'cv2', 'transformers', 'huggingface_hub')

# name: (tool, arguments, exit code, text in the output)
CASES = {
    'train --help': ('tools/train.py', ['--help'], 0, 'usage: train.py'),
    'train, unknown option': ('tools/train.py', ['cfg.py', '--no-such-option'], 2,
                              'unrecognized arguments: --no-such-option'),
    'test --help': ('tools/test.py', ['--help'], 0, 'usage: test.py'),
    'test, missing config': ('tools/test.py', [], 2, 'the following arguments are required: config'),
    'infer --help': ('tools/infer.py', ['--help'], 0, 'usage: infer.py'),
    'infer, no task': ('tools/infer.py', ['a.png', '--out', 'o'], 2, 'give --task'),
    'convert_checkpoint --help': ('tools/convert_checkpoint.py', ['--help'], 0, 'usage: convert_checkpoint.py'),
    'convert_checkpoint, one path': ('tools/convert_checkpoint.py', ['a.pth'], 2, 'give SRC and DST'),
    'export --help': ('tools/deploy/export.py', ['--help'], 0, 'usage: export.py'),
    'export, no --out': ('tools/deploy/export.py', ['seg-tiny'], 2, 'the following arguments are required: --out'),
}



@pytest.fixture(scope='module')
def report() -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS='1')
    env.pop('SAPIENS2_DEBUG', None)
    cases = json.dumps({name: (tool, argv) for name, (tool, argv, _, _) in CASES.items()})
    proc = subprocess.run([sys.executable, '-c', RUN_TOOLS, cases, *HEAVY], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize('name', list(CASES))
def test_tool_answers_without_heavy_imports(report, name):
    _, _, code, text = CASES[name]
    case = report[name]
    assert case['code'] == code, case['output']
    assert text in case['output']
    assert case['heavy'] == [], f'{name} imported {case["heavy"]}'
