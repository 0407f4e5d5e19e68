"""``--dtype auto`` / ``Sapiens2Inferencer(dtype='auto')``: the pick is said in one notice line and recorded in the
pose JSON (the CPU's bf16 support mocked, so the test runs the same on any CPU)."""
import json
import warnings
from pathlib import Path

import cv2
import numpy as np
import pytest

from sapiens2.apis.cli import main
from sapiens2.utils import devices

REPO = Path(__file__).resolve().parents[2]
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')


@pytest.mark.parametrize('feature, expected', [(None, 'fp32'), ('avx512_bf16', 'bf16')])
def test_auto_is_said_once_and_recorded_in_the_pose_json(tmp_path, monkeypatch, capsys, feature, expected):
    monkeypatch.setattr(devices, 'cpu_bf16_feature', lambda: feature)
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
    from sapiens2.apis import Sapiens2Inferencer
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', devices.DtypeNotice)
        inferencer = Sapiens2Inferencer(POSE, device='cpu', dtype='fp32')
    assert not [w for w in caught if w.category is devices.DtypeNotice]
    image = np.random.default_rng(1).integers(0, 255, (80, 60, 3), dtype=np.uint8)
    inferencer(image, out_dir=str(tmp_path), save_vis=False, show_progress=False)
    assert json.loads((tmp_path / 'pose' / 'array_000000.json').read_text())['dtype'] == 'fp32'

