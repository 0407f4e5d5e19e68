"""tools/infer.py end to end on a folder and a video, with a checkpoint."""
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch

from sapiens2.apis.builder import init_model
from sapiens2.apis.cli import main, parse_args
from sapiens2.engine.checkpoint import save_weights

REPO = Path(__file__).resolve().parents[2]
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')


@pytest.fixture(scope='module')
def pose_checkpoint(tmp_path_factory):
    torch.manual_seed(0)
    path = str(tmp_path_factory.mktemp('ckpt') / 'pose.safetensors')
    save_weights(init_model(POSE, device='cpu').state_dict(), path)
    return path


def test_cli_writes_pictures_and_predictions(tmp_path, pose_checkpoint):
    folder = tmp_path / 'in'
    folder.mkdir()
    rng = np.random.default_rng(0)
    for name in ('a', 'b'):
        cv2.imwrite(str(folder / f'{name}.jpg'), rng.integers(0, 255, (80, 60, 3), dtype=np.uint8))
    out = tmp_path / 'out'
    cmd = [sys.executable, str(REPO / 'tools' / 'infer.py'), str(folder), '--model', POSE, '--weights',
           pose_checkpoint, '--out', str(out), '--device', 'cpu', '--quiet', '--kpt-thr', '0.0']
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert 'pose: results in' in proc.stdout
    assert sorted(p.name for p in (out / 'pose').iterdir()) == ['a.png', 'b.png', 'in_predictions.json']
    drawn = cv2.imread(str(out / 'pose' / 'a.png'))
    assert drawn.shape == (80, 60, 3) and (drawn != cv2.imread(str(folder / 'a.jpg'))).any()


def test_cli_in_process_on_a_video(tmp_path, pose_checkpoint):
    clip = str(tmp_path / 'walk.mp4')
    writer = cv2.VideoWriter(clip, cv2.VideoWriter_fourcc(*'mp4v'), 8, (48, 64))
    for i in range(3):
        writer.write(np.full((64, 48, 3), 60 * i, np.uint8))
    writer.release()
    assert main([clip, '--model', POSE, '--weights', pose_checkpoint, '--out', str(tmp_path / 'o'), '--device',
                 'cpu', '--quiet', '--no-pred']) == 0
    assert (tmp_path / 'o' / 'pose' / 'walk.mp4').is_file()
    assert not (tmp_path / 'o' / 'pose' / 'walk_predictions.json').exists()  # --no-pred


def test_cli_argument_errors():
    with pytest.raises(SystemExit):
        parse_args(['x.png', '--out', 'o'])  # neither --task nor --model
    with pytest.raises(SystemExit):
        parse_args(['x.png', '--out', 'o', '--model', 'a.py', 'b.py', '--weights', 'w.pth'])
    args = parse_args(['x.png', '--out', 'o', '--task', 'pose', 'seg', '--size', '0.4b'])
    assert args.task == ['pose', 'seg'] and args.size == '0.4b' and args.aliases == ['pose-0.4b', 'seg-0.4b']
