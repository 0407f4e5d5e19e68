"""tools/dataset_converters/make_synthhumans.py: refuses a user's folder, --overwrite keeps the user's files."""
import json
import os
from pathlib import Path

import pytest

from tests.scripts import load_script

REPO = Path(__file__).resolve().parents[2]
TINY = ['--num-train', '2', '--num-val', '1', '--size', '32', '24']


def _tool():
    return load_script('tools/dataset_converters/make_synthhumans.py')


def test_refuses_a_user_folder_then_overwrite_keeps_the_user_file(tmp_path, capsys):
    tool = _tool()
    out = tmp_path / 'photos'
    out.mkdir()
    (out / 'holiday.jpg').write_bytes(b'my photo')
    with pytest.raises(SystemExit) as exit_:
        tool.main(['--out', str(out)] + TINY)
    assert str(out) in str(exit_.value.code) and '--overwrite' in str(exit_.value.code)
    assert os.listdir(out) == ['holiday.jpg']

    tool.main(['--out', str(out), '--overwrite'] + TINY)
    assert 'SynthHumans ready' in capsys.readouterr().out
    manifest = json.loads((out / 'manifest.json').read_text())
    assert len(manifest['files']) == 3 * 12 + 4 and (out / 'holiday.jpg').read_bytes() == b'my photo'

    tool.main(['--out', str(out), '--seed', '1'] + TINY)
    assert json.loads((out / 'manifest.json').read_text())['seed'] == 1
    assert (out / 'holiday.jpg').read_bytes() == b'my photo'
    assert sorted(os.listdir(tmp_path)) == ['photos']


def test_photo_options_reach_the_manifest_and_bad_ones_are_one_line(tmp_path, capsys):
    import cv2
    import numpy as np
    tool = _tool()
    photos = tmp_path / 'scenes'
    photos.mkdir()
    cv2.imwrite(str(photos / 'wall.png'), np.random.default_rng(0).integers(0, 255, (40, 50, 3), dtype=np.uint8))
    out = tmp_path / 'set'
    tool.main(['--out', str(out), '--photo-ratio', '1', '--photo-folder', str(photos)] + TINY)
    manifest = json.loads((out / 'manifest.json').read_text())
    assert manifest['photo_ratio'] == 1.0 and manifest['photo_files'] == ['wall.png'] and manifest['photos']
    for argv, message in ((['--photo-ratio', '2'], 'between 0 and 1'),
                          (['--photo-ratio', '0.5', '--photo-folder', str(tmp_path / 'nowhere')], 'does not exist')):
        with pytest.raises(SystemExit) as exit_:
            tool.main(['--out', str(tmp_path / 'other')] + argv + TINY)
        assert str(exit_.value.code).startswith('error: ') and message in str(exit_.value.code)
    assert not (tmp_path / 'other').exists()
