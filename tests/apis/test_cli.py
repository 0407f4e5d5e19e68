"""tools/infer.py end to end on folders, videos and GIFs, with a checkpoint."""
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch
from PIL import Image

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
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS='1')
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert 'pose: results in' in proc.stdout
    assert sorted(p.name for p in (out / 'pose').iterdir()) == ['a.json', 'a.png', 'b.json', 'b.png']
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
    assert not (tmp_path / 'o' / 'pose' / 'walk_predictions.jsonl').exists()  # --no-pred


def test_cli_argument_errors():
    with pytest.raises(SystemExit):
        parse_args(['x.png', '--out', 'o'])  # neither --task nor --model
    with pytest.raises(SystemExit):
        parse_args(['x.png', '--out', 'o', '--model', 'a.py', 'b.py', '--weights', 'w.pth'])
    args = parse_args(['x.png', '--out', 'o', '--task', 'pose', 'seg', '--size', '0.4b'])
    assert args.task == ['pose', 'seg'] and args.size == '0.4b' and args.aliases == ['pose-0.4b', 'seg-0.4b']


def test_cli_on_a_gif_with_a_progress_bar(tmp_path, pose_checkpoint, capsys):
    frames = [Image.new('RGB', (48, 64), (40 * i, 80, 120)) for i in range(3)]
    frames[0].save(tmp_path / 'wave.gif', save_all=True, append_images=frames[1:], duration=100, loop=0)
    out = tmp_path / 'o'
    assert main([str(tmp_path / 'wave.gif'), '--model', POSE, '--weights', pose_checkpoint, '--out', str(out),
                 '--device', 'cpu', '--person-finder', 'none']) == 0  # flat frames: the whole image as one box
    assert '3/3' in capsys.readouterr().err  # progress over the GIF's frames
    header, *frames = map(json.loads, (out / 'pose' / 'wave_predictions.jsonl').read_text().splitlines())
    assert [frame['image_name'] for frame in frames] == [f'wave_00000{i}' for i in range(3)]
    assert [[i['track_id'] for i in frame['instances']] for frame in frames] == [[1]] * 3
    capture = cv2.VideoCapture(str(out / 'pose' / 'wave.mp4'))
    assert int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) == 3
    capture.release()


def test_cli_keeps_outputs_of_same_stems_apart(tmp_path, pose_checkpoint, caplog):
    for relative in ('x/a.png', 'x/a.jpg', 'y/a.png', 'y/deep/a.png'):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(tmp_path / relative), np.full((40, 30, 3), 50, np.uint8))
    out = tmp_path / 'out'
    assert main([str(tmp_path / 'x'), str(tmp_path / 'y'), '--recursive', '--model', POSE, '--weights',
                 pose_checkpoint, '--out', str(out), '--device', 'cpu', '--quiet']) == 0
    assert "output name 'a' is already used" in caplog.text
    pictures = sorted(p.relative_to(out / 'pose').as_posix() for p in (out / 'pose').rglob('*.png'))
    assert pictures == ['a.png', 'a_2.png', 'a_3.png', 'deep/a.png']
    records = sorted(p.relative_to(out / 'pose').as_posix() for p in (out / 'pose').rglob('*.json'))
    assert records == ['a.json', 'a_2.json', 'a_3.json', 'deep/a.json']
    assert json.loads((out / 'pose' / 'deep' / 'a.json').read_text())['image_name'] == 'deep/a'


def test_cli_refuses_an_output_folder_inside_a_recursive_input(tmp_path, capsys):
    (tmp_path / 'in').mkdir()
    with pytest.raises(SystemExit):
        parse_args([str(tmp_path / 'in'), '--recursive', '--model', POSE, '--out', str(tmp_path / 'in' / 'out')])
    assert 'is inside the input folder' in capsys.readouterr().err


def test_cli_input_mistakes_are_one_line_before_any_model_is_built(tmp_path, capsys):
    assert main([str(tmp_path / 'nope.png'), '--model', 'pose-9b', '--out', str(tmp_path / 'o')]) == 1
    assert capsys.readouterr().err.strip() == (f'sapiens2-infer: error: input {tmp_path}/nope.png does not exist '
                                               '(--debug shows the traceback)')
    cv2.imwrite(str(tmp_path / 'a.png'), np.zeros((8, 8, 3), np.uint8))
    (tmp_path / 'boxes.json').write_text('{not json')
    assert main([str(tmp_path / 'a.png'), '--model', 'pose-9b', '--out', str(tmp_path / 'o'),
                 '--bboxes', str(tmp_path / 'boxes.json')]) == 1
    assert 'boxes.json is not valid JSON' in capsys.readouterr().err


def test_cli_keypoint_format(tmp_path, pose_checkpoint):
    from sapiens2.apis.cli import pose_options
    assert pose_options(parse_args(['x.png', '--out', 'o', '--task', 'pose']))['keypoint_format'] is None
    with pytest.raises(SystemExit):
        parse_args(['x.png', '--out', 'o', '--task', 'pose', '--keypoint-format', 'coco18'])
    image = str(tmp_path / 'p.png')
    cv2.imwrite(image, np.random.default_rng(0).integers(0, 255, (64, 48, 3), dtype=np.uint8))
    assert main([image, '--model', POSE, '--weights', pose_checkpoint, '--out', str(tmp_path / 'o'), '--device',
                 'cpu', '--quiet', '--keypoint-format', 'coco17']) == 0
    content = json.loads((tmp_path / 'o' / 'pose' / 'p.json').read_text())
    assert content['keypoint_format'] == 'coco17' and content['num_keypoints'] == 17
    assert len(content['instances'][0]['keypoints']) == 17


def test_two_runs_with_two_photos_into_one_out_keep_both_photos_predictions(tmp_path, pose_checkpoint):
    rng = np.random.default_rng(1)
    for name in ('first', 'second'):
        cv2.imwrite(str(tmp_path / f'{name}.jpg'), rng.integers(0, 255, (64, 48, 3), dtype=np.uint8))
    out = tmp_path / 'out'
    for name in ('first', 'second'):
        assert main([str(tmp_path / f'{name}.jpg'), '--model', POSE, '--weights', pose_checkpoint, '--out', str(out),
                     '--device', 'cpu', '--quiet']) == 0
    assert sorted(p.name for p in (out / 'pose').iterdir()) == ['first.json', 'first.png', 'second.json',
                                                                'second.png']
    for name in ('first', 'second'):
        content = json.loads((out / 'pose' / f'{name}.json').read_text())
        assert content['image_name'] == name and len(content['instances'][0]['keypoints']) == content['num_keypoints']


def test_cli_bboxes_from_coco_detection_results_covering_more_images(tmp_path, pose_checkpoint):
    from mmengine.logging import MMLogger
    cv2.imwrite(str(tmp_path / '000000000785.jpg'), np.full((64, 48, 3), 90, np.uint8))
    (tmp_path / 'dets.json').write_text(json.dumps([
        dict(image_id=785, bbox=[4, 6, 20, 30], score=0.9, category_id=1),
        dict(image_id=785, bbox=[0, 0, 8, 8], score=0.2, category_id=1),  # below --bbox-thr 0.3
        dict(image_id=139, bbox=[1, 2, 3, 4], score=0.8, category_id=1)]))  # an image of another run
    out, logged = tmp_path / 'out', []
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: logged.append(record.getMessage())
    MMLogger.get_current_instance().addHandler(handler)
    try:
        assert main([str(tmp_path / '000000000785.jpg'), '--model', POSE, '--weights', pose_checkpoint, '--out',
                     str(out), '--device', 'cpu', '--quiet', '--bboxes', str(tmp_path / 'dets.json')]) == 0
    finally:
        MMLogger.get_current_instance().removeHandler(handler)
    assert f'--bboxes {tmp_path}/dets.json: 1 of 2 entries used (the others name no input of this run, e.g. [139])' \
        in logged
    instances = json.loads((out / 'pose' / '000000000785.json').read_text())['instances']
    assert [instance['bbox'] for instance in instances] == [[4, 6, 24, 36]]
