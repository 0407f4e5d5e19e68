"""The console scripts answer at once, ``import sapiens2`` imports no task library, and every module still registers.

``--help``, ``sapiens2 models``, argument errors, missing inputs, unknown aliases or configs, a file that is not an
image and a checkpoint that does not exist import neither torch nor the OpenMMLab libraries nor gradio (the console
scripts enter through ``sapiens2_entry``); ``register_all_modules`` after such a light import, and a config's
``custom_imports=['sapiens2']`` in a fresh process (the pose and seg modules at their first lookup), register every
module and apply the adaptations; a one-photo run imports only the library of its task. Each check runs in a
subprocess, whose ``sys.modules`` starts empty.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')
HEAVY = ('torch', 'mmengine', 'mmcv', 'mmpose', 'mmseg', 'mmdet', 'gradio')

# name: (entry function of sapiens2_entry, arguments, exit code, text in the output); {tmp} is a folder with a.png.
FAST_PATHS = {
    'sapiens2-infer --help': ('infer_main', ['--help'], 0, 'usage: sapiens2-infer'),
    'sapiens2 --help': ('main', ['--help'], 0, 'usage: sapiens2'),
    'sapiens2 --version': ('main', ['--version'], 0, 'sapiens2 0.'),
    'sapiens2 models': ('main', ['models'], 0, 'pose-tiny\t'),
    'sapiens2 web --help': ('main', ['web', '--help'], 0, '--port'),
    'argument error': ('infer_main', ['{tmp}/a.png', '--out', '{tmp}/o'], 2, 'give --task'),
    'unknown size': ('infer_main', ['{tmp}/a.png', '--task', 'pose', '--size', '9b', '--out', '{tmp}/o'], 2,
                     "invalid choice: '9b'"),
    'missing input': ('infer_main', ['{tmp}/missing.png', '--task', 'pose', '--out', '{tmp}/o'], 1,
                      'sapiens2-infer: error: input {tmp}/missing.png does not exist'),
    'unknown alias': ('infer_main', ['{tmp}/a.png', '--model', 'pose-9b', '--out', '{tmp}/o'], 1,
                      "sapiens2-infer: error: unknown model alias 'pose-9b'"),
    'missing config': ('infer_main', ['{tmp}/a.png', '--model', '{tmp}/none.py', '--out', '{tmp}/o'], 1,
                       'Config file {tmp}/none.py does not exist'),
    'sapiens2 infer, missing input': ('main', ['infer', '{tmp}/missing.png', '--task', 'seg', '--out', '{tmp}/o'], 1,
                                      'sapiens2: error: input {tmp}/missing.png does not exist'),
    'not an image': ('infer_main', ['{tmp}/notes.jpg', '--model', 'pose-tiny', '--out', '{tmp}/o'], 1,
                     'input {tmp}/notes.jpg is not an image OpenCV can read'),
    'missing checkpoint': ('infer_main', ['{tmp}/a.png', '--model', 'pose-tiny', '--weights', '{tmp}/missing.pth',
                                          '--out', '{tmp}/o'], 1, 'Checkpoint {tmp}/missing.pth does not exist'),
}

RUN_FAST_PATHS = '''
import contextlib, io, json, sys
import sapiens2_entry
report = {}
for name, (function, argv) in json.loads(sys.argv[1]).items():
    sys.argv[0] = {'main': 'sapiens2', 'infer_main': 'sapiens2-infer'}[function]  # as the console scripts
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        try:
            code = getattr(sapiens2_entry, function)(argv)
        except SystemExit as exit:
            code = exit.code
    report[name] = dict(code=code, output=output.getvalue(),
                        heavy=[module for module in sys.argv[2].split(',') if module in sys.modules])
import sapiens2
sapiens2.register_all_modules()  # what the commands call before they build a model
from mmengine.registry import MODELS
from sapiens2.adaptations import applied
from sapiens2.engine.checkpoint.schemes import _SCHEMES
from sapiens2.registry import INFERENCE_TASKS
report['registered'] = dict(backbone=MODELS.get('Sapiens2') is not None, schemes=sorted(_SCHEMES),
                            tasks=sorted(INFERENCE_TASKS.module_dict), adaptations=applied())
print(json.dumps(report))
'''

CUSTOM_IMPORTS = '''
import json, sys
from mmengine.config import Config
cfg = Config.fromfile(sys.argv[1])  # custom_imports = dict(imports=['sapiens2'])
from mmengine.registry import MODELS
from mmpose.registry import MODELS as POSE_MODELS
from mmseg.registry import MODELS as SEG_MODELS
from sapiens2.adaptations import applied
from sapiens2.engine.checkpoint.schemes import _SCHEMES
from sapiens2.registry import INFERENCE_TASKS
# the pose and seg modules register at their first lookup
found = dict(pose_head=POSE_MODELS.get('Sapiens2HeatmapHead') is not None,
             seg_head=SEG_MODELS.get('Sapiens2SegHead') is not None)
print(json.dumps(dict(backbone=MODELS.get('Sapiens2') is not None, schemes=sorted(_SCHEMES),
                      tasks=[name for name in ('PoseInferenceTask', 'SegInferenceTask') if INFERENCE_TASKS.get(name)],
                      adaptations=applied(), custom_imports=cfg.custom_imports.imports, **found)))
'''


def run_python(code: str, *args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS='1')
    env.pop('SAPIENS2_DEBUG', None)
    proc = subprocess.run([sys.executable, '-c', code, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope='module')
def fast_paths(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp('fast')
    cv2.imwrite(str(tmp / 'a.png'), np.zeros((8, 8, 3), np.uint8))
    (tmp / 'notes.jpg').write_text('not a photo\n')
    cases = {name: (function, [arg.format(tmp=tmp) for arg in argv])
             for name, (function, argv, _, _) in FAST_PATHS.items()}
    report = run_python(RUN_FAST_PATHS, json.dumps(cases), ','.join(HEAVY))
    return dict(report=report, tmp=str(tmp))


@pytest.mark.parametrize('name', list(FAST_PATHS))
def test_fast_paths_import_no_heavy_library(fast_paths, name):
    _, _, code, text = FAST_PATHS[name]
    case = fast_paths['report'][name]
    assert case['code'] == code, case['output']
    assert text.format(tmp=fast_paths['tmp']) in case['output']
    assert case['heavy'] == [], f'{name} imported {case["heavy"]}'


def check_registered(registered: dict) -> None:
    assert registered['backbone']
    assert {'', 'hf://'} <= set(registered['schemes'])  # model aliases and Hub references
    assert {'PoseInferenceTask', 'SegInferenceTask'} <= set(registered['tasks'])
    assert {'checkpoint-loader', 'quiet-pkg-resources'} <= set(registered['adaptations'])


def test_register_all_modules_after_a_light_import(fast_paths):
    check_registered(fast_paths['report']['registered'])


def test_custom_imports_register_every_module():
    registered = run_python(CUSTOM_IMPORTS, POSE)
    assert registered['custom_imports'] == ['sapiens2']
    check_registered(registered)
    assert registered['pose_head'] and registered['seg_head']


# A run of one photo in Python, then the libraries it imported.
RUN_ONE_PHOTO = '''
import json, sys
from sapiens2.apis import Sapiens2Inferencer
model, image, out = sys.argv[1:4]
bboxes = dict(a=[[0, 0, 8, 8]]) if model.startswith('pose') else None
Sapiens2Inferencer(model, device='cpu')(image, out_dir=out, bboxes=bboxes, show_progress=False)
print(json.dumps([name for name in ('mmpose', 'mmseg', 'mmdet.apis') if name in sys.modules]))
'''


@pytest.mark.parametrize('model, imported', [('pose-tiny', ['mmpose']), ('seg-tiny', ['mmseg']),
                                             ('normal-tiny', [])])
def test_a_run_imports_only_the_libraries_of_its_task(fast_paths, tmp_path, model, imported):
    """Pose needs mmpose, not mmseg nor mmdet's APIs (no detector; mmpose's models import the light mmdet.utils, and
    mmseg's decode heads mmdet's models, where mmdet is installed); segmentation mmseg; a dense task neither: seconds
    of imports a one-photo run does not pay."""
    proc = subprocess.run([sys.executable, '-c', RUN_ONE_PHOTO, model, f"{fast_paths['tmp']}/a.png", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS='1'))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == imported


def test_import_sapiens2_imports_no_task_library():
    """`import sapiens2` (and `from sapiens2.apis import Sapiens2Inferencer`) leaves mmpose, mmseg and mmdet to the
    first lookup that needs them."""
    code = ('import json, sys; from sapiens2.apis import Sapiens2Inferencer; '
            'print(json.dumps([m for m in ("mmpose", "mmseg", "mmdet") if m in sys.modules]))')  # none at all
    assert run_python(code) == []
