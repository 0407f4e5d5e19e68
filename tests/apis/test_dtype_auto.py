"""``--dtype auto``, the default of inference (``sapiens2-infer``, ``Sapiens2Inferencer``, the web demo): the pick is
said in one notice line once the inputs and outputs are checked, and recorded in the pose JSON (the CPU's bf16
support mocked, so the tests run the same on any CPU)."""
import inspect
import json
import warnings
from pathlib import Path

import cv2
import numpy as np
import pytest

from sapiens2.apis import Sapiens2Inferencer, build_task, init_model
from sapiens2.apis.cli import main, parse_args
from sapiens2.engine.checkpoint import save_weights
from sapiens2.utils import devices

REPO = Path(__file__).resolve().parents[2]
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')


@pytest.mark.parametrize('feature, int8_measured, expected', [
    (None, False, 'fp32'), ('avx512_bf16', False, 'bf16'), (None, True, 'int8')])
def test_auto_is_said_once_and_recorded_in_the_pose_json(tmp_path, monkeypatch, capsys, feature, int8_measured,
                                                         expected):
    """On an AVX2 CPU (mocked) auto runs int8 only where int8 was measured to hold there (``INT8_MEASURED``)."""
    if expected == 'int8' and not devices.torch_has_fbgemm():
        pytest.skip('this torch has no fbgemm engine')
    monkeypatch.setattr(devices, 'cpu_bf16_feature', lambda: feature)
    monkeypatch.setattr(devices, 'cpu_flags', lambda: ('fpu', 'avx2'))
    monkeypatch.setattr(devices, 'INT8_MEASURED', {'avx2': devices.Int8Measurement(0.2, 1.4, 'a test')}
                        if int8_measured else {})
    rng = np.random.default_rng(0)
    for name in ('a', 'b'):
        cv2.imwrite(str(tmp_path / f'{name}.png'), rng.integers(0, 255, (80, 60, 3), dtype=np.uint8))
    out = tmp_path / 'out'
    with warnings.catch_warnings():
        warnings.simplefilter('always', devices.DtypeNotice)  # pytest.ini ignores UserWarnings
        assert main([str(tmp_path / 'a.png'), str(tmp_path / 'b.png'), '--model', POSE, '--device', 'cpu',
                     '--dtype', 'auto', '--out', str(out), '--quiet', '--no-vis']) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if 'dtype auto' in line]
    assert len(lines) == 1 and lines[0].startswith(f'sapiens2-infer: notice: dtype auto -> {expected} (')
    for name in ('a', 'b'):
        assert json.loads((out / 'pose' / f'{name}.json').read_text())['dtype'] == expected


def test_an_explicit_dtype_says_nothing_and_is_recorded(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', devices.DtypeNotice)
        inferencer = Sapiens2Inferencer(POSE, device='cpu', dtype='fp32')
    assert not [w for w in caught if w.category is devices.DtypeNotice]
    image = np.random.default_rng(1).integers(0, 255, (80, 60, 3), dtype=np.uint8)
    inferencer(image, out_dir=str(tmp_path), save_vis=False, show_progress=False)
    assert json.loads((tmp_path / 'pose' / 'array_000000.json').read_text())['dtype'] == 'fp32'



@pytest.fixture(scope='module')
def pose_checkpoint(tmp_path_factory) -> str:
    torch = pytest.importorskip('torch')
    torch.manual_seed(0)
    path = str(tmp_path_factory.mktemp('ckpt') / 'pose.safetensors')
    save_weights(init_model(POSE, device='cpu').state_dict(), path)
    return path


def test_auto_is_the_default_of_inference_but_not_of_evaluation(tmp_path, monkeypatch, capsys, pose_checkpoint):
    """``sapiens2-infer`` without --dtype, ``Sapiens2Inferencer`` and the web demo run ``auto``; ``build_task`` (the
    evaluation hook's path, tools/test.py) stays fp32."""
    from sapiens2.apis import web_demo
    from sapiens2.cli import main as sapiens2_main
    assert parse_args(['x.png', '--model', POSE, '--out', str(tmp_path)]).dtype == devices.AUTO
    for function in (Sapiens2Inferencer.__init__, web_demo.WebDemo.__init__, web_demo.serve):
        assert inspect.signature(function).parameters['dtype'].default == devices.AUTO
    assert inspect.signature(build_task).parameters['dtype'].default == 'fp32'
    served = {}
    monkeypatch.setattr(web_demo, 'serve', lambda *args: served.setdefault('dtype', args[-1]))
    assert sapiens2_main(['web']) == 0 and served == dict(dtype=devices.AUTO)  # ``sapiens2 web`` without --dtype

    monkeypatch.setattr(devices, 'cpu_bf16_feature', lambda: 'amx')
    cv2.imwrite(str(tmp_path / 'a.png'), np.zeros((80, 60, 3), np.uint8))
    with warnings.catch_warnings():
        warnings.simplefilter('always', devices.DtypeNotice)
        assert main([str(tmp_path / 'a.png'), '--model', POSE, '--weights', pose_checkpoint, '--device', 'cpu',
                     '--out', str(tmp_path / 'out'), '--quiet', '--no-vis']) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if 'dtype auto' in line] == [
        'sapiens2-infer: notice: dtype auto -> bf16 (the CPU computes bf16 natively: amx)']
    assert json.loads((tmp_path / 'out' / 'pose' / 'a.json').read_text())['dtype'] == 'bf16'


def test_the_auto_notice_never_precedes_a_bad_input_error(tmp_path, monkeypatch, capsys, pose_checkpoint):
    """A run that fails on its inputs or outputs prints the error line alone (the reliability catalogue's rule)."""
    monkeypatch.setattr(devices, 'cpu_bf16_feature', lambda: 'amx')
    cv2.imwrite(str(tmp_path / 'a.png'), np.zeros((80, 60, 3), np.uint8))
    (tmp_path / 'out' / 'pose').mkdir(parents=True)
    (tmp_path / 'out' / 'pose' / 'a.json').write_text('not written by sapiens2')
    with warnings.catch_warnings():
        warnings.simplefilter('always', devices.DtypeNotice)
        assert main([str(tmp_path / 'a.png'), '--model', POSE, '--weights', pose_checkpoint, '--device', 'cpu',
                     '--out', str(tmp_path / 'out'), '--quiet']) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith('sapiens2-infer: error: ') and 'already exists' in err[0], err


def test_an_explicit_fp32_says_nothing_and_gives_the_official_numerics(tmp_path, monkeypatch, capsys,
                                                                         pose_checkpoint):
    """``--dtype fp32`` on a CPU where auto would pick bf16: no notice, and exactly the keypoints of the fp32
    evaluation path (``build_task``)."""
    monkeypatch.setattr(devices, 'cpu_bf16_feature', lambda: 'amx')
    image = np.random.default_rng(2).integers(0, 255, (80, 60, 3), dtype=np.uint8)
    cv2.imwrite(str(tmp_path / 'a.png'), image)
    with warnings.catch_warnings():
        warnings.simplefilter('always', devices.DtypeNotice)
        assert main([str(tmp_path / 'a.png'), '--model', POSE, '--weights', pose_checkpoint, '--device', 'cpu',
                     '--dtype', 'fp32', '--out', str(tmp_path / 'out'), '--quiet', '--no-vis', '--kpt-thr',
                     '0']) == 0
    assert not [line for line in capsys.readouterr().err.splitlines() if 'notice' in line]
    written = json.loads((tmp_path / 'out' / 'pose' / 'a.json').read_text())
    assert written['dtype'] == 'fp32'
    model = init_model(POSE, pose_checkpoint, device='cpu')
    expected = build_task(model, model.cfg).predict([cv2.imread(str(tmp_path / 'a.png'))])[0]
    assert written['instances'][0]['keypoints'] == np.round(expected['keypoints'][0], 2).tolist()
