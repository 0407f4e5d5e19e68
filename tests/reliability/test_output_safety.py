"""Outputs never replace a user's file: sapiens2-infer (one line, --overwrite, Ctrl-C), the test hook, the demo, and
the permissions of atomically saved files (the bad-input cases of the same rules are in catalogue.py)."""
import json
import os
import stat
from pathlib import Path
from unittest import mock

import cv2
import numpy as np
import pytest
import torch

from sapiens2.apis.cli import main
from sapiens2.apis.tasks.pose import PoseInferenceTask
from sapiens2.utils.output_paths import MAX_NAME_BYTES, fit_name
from tests.reliability.bad_input_files import H, W
from tests.scripts import load_script

REPO = Path(__file__).resolve().parents[2]
POSE = str(REPO / 'configs/pose/sapiens2_nano_pose_synthhumans-128x96.py')
SEG = str(REPO / 'configs/seg/sapiens2_nano_seg_synthhumans-128x96.py')


def photos(folder: Path, count: int) -> list:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f'p{i}.png' for i in range(count)]
    for i, path in enumerate(paths):
        cv2.imwrite(str(path), np.full((H, W, 3), 30 * i, np.uint8))
    return paths


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_cli_refuses_an_out_that_replaces_an_input_even_with_overwrite(tmp_path, capsys):
    inputs = photos(tmp_path / 'seg', 2)
    before = [p.read_bytes() for p in inputs]
    code = main([str(tmp_path / 'seg'), '--model', SEG, '--out', str(tmp_path), '--device', 'cpu', '--quiet',
                 '--overwrite'])
    assert code == 1
    assert one_error_line(capsys) == (
        f'sapiens2-infer: error: the output {tmp_path}/seg/p0.png is the input {tmp_path}/seg/p0.png: writing it '
        'would replace the input; choose an --out outside the input folders (--debug shows the traceback)')
    assert [p.read_bytes() for p in inputs] == before
    assert sorted(p.name for p in (tmp_path / 'seg').iterdir()) == ['p0.png', 'p1.png']


def test_cli_replaces_a_users_file_only_with_overwrite(tmp_path, capsys):
    photos(tmp_path / 'in', 1)
    mine = tmp_path / 'out/seg/p0_seg.npy'
    mine.parent.mkdir(parents=True)
    mine.write_bytes(b'mine')
    args = [str(tmp_path / 'in'), '--model', SEG, '--out', str(tmp_path / 'out'), '--device', 'cpu', '--quiet']
    assert main(args) == 1
    assert f'{mine} already exists and was not written by sapiens2' in one_error_line(capsys)
    assert mine.read_bytes() == b'mine' and not (tmp_path / 'out/seg/p0.png').exists()
    assert main(args + ['--overwrite']) == 0
    assert np.load(mine).shape == (H, W)
    listed = json.loads((tmp_path / 'out/.sapiens2_outputs.json').read_text())['files']
    assert listed == ['seg/p0.png', 'seg/p0_seg.npy']
    assert main(args) == 0  # the same command again: its own files are replaced


def test_ctrl_c_keeps_the_predictions_of_the_finished_images(tmp_path, capsys):
    photos(tmp_path / 'in', 6)
    predict, calls = PoseInferenceTask.predict, []

    def interrupted_after_three(self, images, **kwargs):
        calls.append(len(images))
        if len(calls) > 3:
            raise KeyboardInterrupt
        return predict(self, images, **kwargs)

    with mock.patch.object(PoseInferenceTask, 'predict', interrupted_after_three):
        code = main([str(tmp_path / 'in'), '--model', POSE, '--out', str(tmp_path / 'out'), '--device', 'cpu',
                     '--batch-size', '1', '--quiet', '--person-finder', 'none'])  # noise: one whole-image box
    assert code == 130
    assert one_error_line(capsys) == (f'sapiens2-infer: interrupted after 3 of 6 images; their predictions and '
                                      f'pictures are written to {tmp_path}/out')
    assert sorted(p.name for p in (tmp_path / 'out/pose').glob('p*.json')) == ['p0.json', 'p1.json', 'p2.json']
    assert json.loads((tmp_path / 'out/pose/p2.json').read_text())['image_name'] == 'p2'
    assert sorted(p.name for p in (tmp_path / 'out/pose').glob('p*.png')) == ['p0.png', 'p1.png', 'p2.png']


def test_test_hook_refuses_to_replace_a_file_it_did_not_write(tmp_path):
    from sapiens2.apis import SavePredictionsHook, init_model
    from sapiens2.apis.pipeline import inference_pipeline, run_test_step
    model = init_model(str(REPO / 'projects/normal/configs/sapiens2_nano_normal_synthhumans-128x96.py'),
                       device='cpu')
    image = np.zeros((H, W, 3), np.uint8)
    cv2.imwrite(str(tmp_path / 'person.png'), image)
    samples = run_test_step(model, inference_pipeline(model.cfg), [dict(img=image)])
    samples[0].set_metainfo(dict(img_path=str(tmp_path / 'person.png')))
    runner = type('Runner', (), dict(model=model, cfg=model.cfg))()
    (tmp_path / 'out').mkdir()
    (tmp_path / 'out/person.npy').write_bytes(b'mine')
    hook = SavePredictionsHook(str(tmp_path / 'out'))
    hook.before_test(runner)
    with pytest.raises(FileExistsError, match=r'person.npy already exists .*; move it or choose another --out$'):
        hook.after_test_iter(None, 0, {}, samples)
    assert (tmp_path / 'out/person.npy').read_bytes() == b'mine'
    (tmp_path / 'out/person.npy').unlink()
    hook.after_test_iter(None, 0, {}, samples)
    hook.after_test_epoch(None)
    hook = SavePredictionsHook(str(tmp_path / 'out'))  # tools/test.py again
    hook.before_test(runner)
    hook.after_test_iter(None, 0, {}, samples)  # its own file, replaced
    assert np.load(tmp_path / 'out/person.npy').shape == (H, W, 3)


def test_demo_refuses_a_work_dir_file_it_did_not_write(tmp_path):
    demo = load_script('tools/misc/demo.py', 'demo_tool')
    outputs = demo.demo_outputs(str(tmp_path), str(tmp_path / 'pictures'), ['val_0'], train=False)
    (tmp_path / 'metrics.md').write_text('my notes')
    with pytest.raises(SystemExit, match=r'^demo.py: error: .*metrics.md already exists .*--work-dir, or pass '
                                         r'--overwrite'):
        demo.checked_outputs(str(tmp_path), outputs, overwrite=False)
    demo.checked_outputs(str(tmp_path), outputs, overwrite=True).record(outputs)
    demo.checked_outputs(str(tmp_path), outputs, overwrite=False)  # a demo run wrote them: accepted


@pytest.mark.parametrize('umask', [0o022, 0o077])
def test_saved_checkpoints_get_the_permissions_open_gives(tmp_path, umask):
    from sapiens2.engine.checkpoint import save_weights
    from sapiens2.utils.atomic_save import atomic_write_bytes
    previous = os.umask(umask)
    try:
        save_weights({'w': torch.ones(2)}, str(tmp_path / 'a.safetensors'))
        atomic_write_bytes(tmp_path / 'b.json', b'{}')
        (tmp_path / 'c.pth').touch()
        os.chmod(tmp_path / 'c.pth', 0o640)
        save_weights({'w': torch.ones(2)}, str(tmp_path / 'c.pth'))
    finally:
        os.umask(previous)
    mode = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert mode == {'a.safetensors': 0o666 & ~umask, 'b.json': 0o666 & ~umask, 'c.pth': 0o640}


def test_long_names_are_shortened_deterministically_within_the_limit():
    long = 'ü' * 150  # 300 bytes
    assert fit_name('short') == 'short' and fit_name(long) == fit_name(long)
    assert fit_name(long) != fit_name(long[:-1] + 'u')
    assert len(fit_name(long).encode()) <= MAX_NAME_BYTES and fit_name(long).startswith('ü' * 94 + '_')
