"""mmpose's own APIs with sapiens2 pose configs and checkpoints: MMPoseInferencer (image, folder, video, whole image
without a detector, nothing downloaded), init_model / inference_topdown (.pth and .safetensors), and the pose
visualization hook of tools/test.py."""
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch

from sapiens2.apis.builder import init_model as sapiens2_init_model
from sapiens2.engine.checkpoint import save_weights
from sapiens2.engine.launch import load_config

REPO = Path(__file__).resolve().parents[2]
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')
POSE_1B = str(REPO / 'configs' / 'pose' / 'sapiens2_1b_pose_goliath-1024x768.py')


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Any attempt to download (a default detector, weights) fails the test instead of reaching the network."""
    def refuse(*args, **kwargs):
        raise AssertionError('a test tried to open a network connection')
    monkeypatch.setattr(socket.socket, 'connect', refuse)
    monkeypatch.setattr(socket, 'create_connection', refuse)


@pytest.fixture(scope='module')
def checkpoints(tmp_path_factory):
    """The nano pose model with random weights, saved as .safetensors and as an MMEngine-style .pth."""
    torch.manual_seed(0)
    state_dict = sapiens2_init_model(POSE, device='cpu').state_dict()
    folder = tmp_path_factory.mktemp('pose_ckpt')
    save_weights(state_dict, str(folder / 'pose.safetensors'))
    torch.save(dict(state_dict=state_dict, meta=dict()), str(folder / 'pose.pth'))
    return dict(safetensors=str(folder / 'pose.safetensors'), pth=str(folder / 'pose.pth'), state_dict=state_dict)


@pytest.fixture(scope='module')
def photos(synthhumans_root, tmp_path_factory):
    """Two SynthHumans validation images in a folder, and a 3-frame video of them."""
    folder = tmp_path_factory.mktemp('photos')
    for index in (0, 1):
        shutil.copy(os.path.join(synthhumans_root, 'val', 'rgb', f'{index:06d}.png'), folder / f'p{index}.png')
    video = str(folder.parent / 'walk.mp4')
    first = cv2.imread(str(folder / 'p0.png'))
    writer = cv2.VideoWriter(video, cv2.VideoWriter_fourcc(*'mp4v'), 5, first.shape[1::-1])
    for index in (0, 1, 0):
        writer.write(cv2.imread(str(folder / f'p{index}.png')))
    writer.release()
    return dict(folder=str(folder), image=str(folder / 'p0.png'), video=video, size=first.shape[:2])


@pytest.mark.parametrize('config', [POSE, POSE_1B])
def test_pose_configs_declare_topdown_and_a_dataset_without_a_default_detector(config):
    from mmpose.apis.inferencers.utils.default_det_models import default_det_models
    from mmpose.registry import DATASETS
    cfg = load_config(config)
    assert cfg.data_mode == 'topdown' and cfg.test_dataloader.dataset.type == cfg.dataset_type
    # MMPoseInferencer's rule: the word after 'datasets.' in the dataset's module picks a default (downloaded)
    # detector when it is body, face, hand, human, wholebody or animal.
    object_type = DATASETS.get(cfg.dataset_type).__module__.split('datasets.')[-1].split('.')[0].lower()
    assert object_type not in default_det_models


@pytest.mark.parametrize('det_model', [None, 'whole_image'])
def test_mmpose_inferencer_on_an_image_uses_the_whole_image(checkpoints, photos, tmp_path, det_model):
    from mmpose.apis import MMPoseInferencer, inference_topdown
    inferencer = MMPoseInferencer(pose2d=POSE, pose2d_weights=checkpoints['safetensors'], device='cpu',
                                  det_model=det_model)
    assert inferencer.inferencer.detector is None
    results = list(inferencer(photos['image'], pred_out_dir=str(tmp_path / 'pred'), vis_out_dir=str(tmp_path / 'vis')))
    (instance, ) = results[0]['predictions'][0]
    height, width = photos['size']
    np.testing.assert_allclose(instance['bbox'][0], [0, 0, width, height])
    assert np.asarray(instance['keypoints']).shape == (308, 2) and len(instance['keypoint_scores']) == 308
    saved = json.loads((tmp_path / 'pred' / 'p0.json').read_text())
    np.testing.assert_allclose(saved[0]['keypoints'], instance['keypoints'], atol=1e-3)
    drawn = cv2.imread(str(tmp_path / 'vis' / 'p0.png'))
    assert drawn.shape[:2] == (height, width) and (drawn != cv2.imread(photos['image'])).any()
    # the same keypoints as mmpose's lower-level API with the whole-image box
    model = inferencer.inferencer.model
    (sample, ) = inference_topdown(model, photos['image'], np.array([[0, 0, width, height]], np.float32))
    np.testing.assert_allclose(sample.pred_instances.keypoints[0], instance['keypoints'], atol=1e-3)


def test_mmpose_inferencer_on_a_folder_and_a_video(checkpoints, photos, tmp_path):
    from mmpose.apis import MMPoseInferencer
    inferencer = MMPoseInferencer(pose2d=POSE, pose2d_weights=checkpoints['pth'], device='cpu')
    results = list(inferencer(photos['folder'], pred_out_dir=str(tmp_path / 'fp'), vis_out_dir=str(tmp_path / 'fv')))
    assert len(results) == 2
    assert sorted(os.listdir(tmp_path / 'fp')) == ['p0.json', 'p1.json']
    assert sorted(os.listdir(tmp_path / 'fv')) == ['p0.png', 'p1.png']
    results = list(inferencer(photos['video'], pred_out_dir=str(tmp_path / 'vp'), vis_out_dir=str(tmp_path / 'vv')))
    assert len(results) == 3
    frames = json.loads((tmp_path / 'vp' / 'walk.json').read_text())
    assert [frame['frame_id'] for frame in frames] == [0, 1, 2]
    assert all(np.asarray(frame['instances'][0]['keypoints']).shape == (308, 2) for frame in frames)
    capture = cv2.VideoCapture(str(tmp_path / 'vv' / 'walk.mp4'))
    assert int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) == 3
    capture.release()


def test_mmpose_init_model_and_inference_topdown_read_both_checkpoint_formats(checkpoints, photos):
    from mmpose.apis import inference_topdown, init_model
    boxes = np.array([[10, 5, 120, 200], [0, 0, 60, 90]], np.float32)
    keypoints = []
    for kind in ('pth', 'safetensors'):
        model = init_model(POSE, checkpoints[kind], device='cpu')
        for key, value in model.state_dict().items():
            torch.testing.assert_close(value, checkpoints['state_dict'][key], msg=f'{kind}: {key} not loaded')
        assert len(model.dataset_meta['keypoint_id2name']) == 308
        samples = inference_topdown(model, photos['image'], boxes)
        assert len(samples) == 2 and samples[0].pred_instances.keypoints.shape == (1, 308, 2)
        keypoints.append(np.concatenate([s.pred_instances.keypoints for s in samples]))
    np.testing.assert_array_equal(keypoints[0], keypoints[1])


@pytest.mark.slow
def test_test_tool_draws_with_mmpose_visualization_hook_and_logs_briefly(checkpoints, synthhumans_root, tmp_path):
    cmd = [sys.executable, str(REPO / 'tools' / 'test.py'), POSE, checkpoints['pth'], '--work-dir', str(tmp_path),
           '--cfg-options', f'test_dataloader.dataset.data_root={synthhumans_root}',
           'test_dataloader.dataset.indices=3', 'default_hooks.visualization.enable=True',
           'default_hooks.visualization.interval=1']
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS='1')
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    drawn = sorted(tmp_path.glob('*/vis_data/vis_image/*.png'))
    assert len(drawn) == 3
    picture = cv2.imread(str(drawn[0]))
    assert picture.ndim == 3 and picture.std() > 0
    # the log names the config file instead of printing its 1,000+ lines; no pkg_resources notice
    log = proc.stdout + proc.stderr
    assert f"Config: {tmp_path / 'sapiens2_nano_pose_synthhumans-128x96.py'}" in log and 'Config:\n' not in log
    assert 'codec = dict(' not in log and 'pkg_resources' not in log
    assert (tmp_path / 'sapiens2_nano_pose_synthhumans-128x96.py').is_file()
