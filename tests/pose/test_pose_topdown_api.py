"""Top-down pose inference: the geometry from a heatmap peak to an image pixel for any aspect ratio, with and without
a box; user boxes (checked), detector boxes (score filter + NMS, nobody found), official checkpoints."""
import json
import logging
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from mmengine.structures import InstanceData

import sapiens2.apis.pose_video.topdown as api
import sapiens2.apis.tasks.pose as pose_task
from sapiens2.apis import PoseInferenceTask, init_model
from sapiens2.engine.checkpoint import save_weights

TINY = str(Path(__file__).resolve().parents[2] / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')
INPUT_W, INPUT_H = 96, 128  # the tiny config's input (w, h); heatmaps are 24 x 32
HEATMAP_W, HEATMAP_H = 24, 32
# width / height from 0.25 to 4
IMAGE_SHAPES = [(400, 100), (300, 150), (128, 96), (200, 200), (150, 200), (100, 200), (100, 400)]


@pytest.fixture(scope='module')
def model():
    torch.manual_seed(0)
    return init_model(TINY, device='cpu')


@pytest.fixture(scope='module')
def model_no_flip():
    torch.manual_seed(0)
    return init_model(TINY, device='cpu', cfg_options={'model.test_cfg.flip_test': False})


def gaussian(h, w, x0, y0, sigma):
    y, x = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing='ij')
    return torch.exp(-((x - x0)**2 + (y - y0)**2) / (2 * sigma**2))


def peak_head(model, monkeypatch, x0, y0):
    """Make the head output one Gaussian peak at heatmap pixel (x0, y0) for every keypoint."""
    peak = gaussian(HEATMAP_H, HEATMAP_W, x0, y0, 1.5)
    monkeypatch.setattr(model.head, 'forward',
                        lambda feats: peak.expand(feats[-1].shape[0], 308, HEATMAP_H, HEATMAP_W).clone())


def expected_pixel(box, x0, y0):
    """Where heatmap pixel (x0, y0) lies in the image: the box, padded 1.25x and grown to the input's 3:4 aspect
    ratio around its centre, spans heatmap pixels 0 .. W-1 (UDP: pixel centres at both ends)."""
    x1, y1, x2, y2 = box
    centre = np.array([(x1 + x2) / 2, (y1 + y2) / 2])
    w, h = (x2 - x1) * 1.25, (y2 - y1) * 1.25
    if w / h > INPUT_W / INPUT_H:
        h = w * INPUT_H / INPUT_W
    else:
        w = h * INPUT_W / INPUT_H
    return centre - np.array([w, h]) / 2 + np.array([x0 / (HEATMAP_W - 1) * w, y0 / (HEATMAP_H - 1) * h])


@pytest.mark.parametrize('shape', IMAGE_SHAPES, ids=lambda s: f'{s[1]}x{s[0]}')
@pytest.mark.parametrize('with_box', [False, True], ids=['whole-image', 'box'])
def test_a_heatmap_peak_maps_to_its_image_pixel(model_no_flip, monkeypatch, shape, with_box):
    height, width = shape
    image = np.zeros((height, width, 3), np.uint8)
    box = [0.1 * width, 0.2 * height, 0.7 * width, 0.9 * height] if with_box else [0, 0, width, height]
    for x0, y0 in [(11.5, 15.5), (4.3, 6.8), (19.6, 27.2)]:
        peak_head(model_no_flip, monkeypatch, x0, y0)
        results = api.inference_pose_topdown(model_no_flip, image, [box] if with_box else None)
        assert len(results) == 1
        np.testing.assert_allclose(results[0].pred_instances.bboxes[0], box, rtol=1e-6)
        keypoints = results[0].pred_instances.keypoints[0]
        pixel_size = max(box[2] - box[0], box[3] - box[1]) * 1.25 / min(HEATMAP_W - 1, HEATMAP_H - 1)
        np.testing.assert_allclose(keypoints, np.broadcast_to(expected_pixel(box, x0, y0), keypoints.shape),
                                   atol=0.02 * pixel_size)


def dot_finder(model, monkeypatch):
    """Make the model an ideal dot detector: its heatmaps are the crop's brightness sampled at the heatmap pixels
    (UDP: the corner pixels of crop and heatmap coincide), so a bright dot in the image must come back at its own
    pixel, through the crop, the flip test and the decoding."""
    monkeypatch.setattr(model, 'extract_feat', lambda inputs: (inputs, ))

    def heatmaps(feats):
        brightness = feats[-1].mean(1, keepdim=True)
        brightness = brightness - brightness.amin((2, 3), keepdim=True)
        maps = F.interpolate(brightness, size=(HEATMAP_H, HEATMAP_W), mode='bilinear', align_corners=True)
        return maps.expand(-1, 308, -1, -1).clone()

    monkeypatch.setattr(model.head, 'forward', heatmaps)


@pytest.mark.parametrize('shape', IMAGE_SHAPES, ids=lambda s: f'{s[1]}x{s[0]}')
def test_a_dot_in_the_image_is_found_at_its_pixel_with_the_flip_test(model, monkeypatch, shape):
    assert model.test_cfg['flip_test']
    dot_finder(model, monkeypatch)
    height, width = shape
    # a blob about 1.5 heatmap pixels wide for the whole-image crop, centred or 3 sigma away from the image borders
    # (a blob cut on one side by a border is no longer centred on its peak)
    sigma = 1.5 * max(width * 1.25 / (HEATMAP_W - 1), height * 1.25 / (HEATMAP_H - 1))
    fits = (0.2, 0.35, 0.65, 0.8)
    xs = [0.5] + [f for f in fits if min(f, 1 - f) * (width - 1) > 3 * sigma]
    ys = [0.5] + [f for f in fits if min(f, 1 - f) * (height - 1) > 3 * sigma]
    assert len(xs) + len(ys) > 2
    for fx, fy in zip(xs * len(ys), ys * len(xs)):
        blob = gaussian(height, width, fx * (width - 1), fy * (height - 1), sigma).numpy()
        image = np.repeat((255 * blob).astype(np.uint8)[..., None], 3, axis=-1)
        keypoints = api.inference_pose_topdown(model, image)[0].pred_instances.keypoints[0]
        np.testing.assert_allclose(keypoints[0], [fx * (width - 1), fy * (height - 1)], atol=0.1 * sigma)
        assert np.ptp(keypoints, axis=0).max() < 1e-3  # every keypoint (flipped pairs included) agrees


def test_xywh_boxes_equal_xyxy(model):
    img = np.random.default_rng(1).integers(0, 255, (120, 100, 3), dtype=np.uint8)
    a = api.inference_pose_topdown(model, img, [[10, 10, 60, 100]])
    b = api.inference_pose_topdown(model, img, [[10, 10, 50, 90]], bbox_format='xywh')
    np.testing.assert_allclose(a[0].pred_instances.keypoints, b[0].pred_instances.keypoints, atol=1e-4)
    with pytest.raises(ValueError, match='bbox_format'):
        api.inference_pose_topdown(model, img, [[0, 0, 1, 1]], bbox_format='cxcywh')


def test_user_boxes_are_batched_and_keep_their_scores(model):
    img = np.random.default_rng(0).integers(0, 255, (240, 320, 3), dtype=np.uint8)
    boxes = np.array([[10, 20, 90, 200, 0.9], [200, 40, 300, 230, 0.8], [150, 10, 190, 60, 0.7]], np.float32)
    results = api.inference_pose_topdown(model, img, boxes, batch_size=2)
    assert len(results) == 3
    for res, box in zip(results, boxes):
        np.testing.assert_allclose(res.pred_instances.bboxes[0], box[:4])
        np.testing.assert_allclose(res.pred_instances.bbox_scores, box[4:], rtol=1e-6)
    alone = api.inference_pose_topdown(model, img, boxes[1:2])[0]
    np.testing.assert_allclose(alone.pred_instances.keypoints, results[1].pred_instances.keypoints, atol=1e-3)


@pytest.mark.parametrize('box,message', [
    ([10, 10, 10, 40], 'empty or inverted'),
    ([30, 50, 20, 40], 'empty or inverted'),
    ([float('nan'), 0, 20, 40], 'non-finite'),
    ([0, 0, float('inf'), 40], 'non-finite'),
    ([-50, 0, -10, 40], 'outside the 100x120'),
    ([0, 130, 50, 160], 'outside the 100x120'),
])
def test_invalid_boxes_are_a_clear_error(box, message):
    with pytest.raises(ValueError, match=message) as err:
        api.check_bboxes([box], (120, 100), name='street.jpg')
    assert str(err.value).startswith('street.jpg: person box 0')
    with pytest.raises(ValueError, match='shape'):
        api.check_bboxes([[1, 2, 3]], (120, 100))
    assert api.check_bboxes([], (120, 100)).shape == (0, 5)


def no_person_detector(monkeypatch):
    import mmdet.apis
    empty = InstanceData(bboxes=torch.zeros(0, 4), scores=torch.zeros(0), labels=torch.zeros(0, dtype=torch.long))
    monkeypatch.setattr(mmdet.apis, 'inference_detector', lambda det, img: type('R', (), {'pred_instances': empty}))
    return torch.nn.Identity()


def test_a_detector_that_finds_nobody_gives_no_pose_and_a_notice(model, monkeypatch):
    from mmengine.logging import MMLogger
    detector = no_person_detector(monkeypatch)
    img = np.zeros((64, 48, 3), np.uint8)
    assert api.inference_pose_topdown(model, img, detector=detector) == []
    monkeypatch.setattr(pose_task, 'init_person_detector', lambda *args: detector)
    task = PoseInferenceTask(model, model.cfg, det_config='det.py', det_checkpoint='det.pth')
    notices = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: notices.append(record.getMessage())
    MMLogger.get_current_instance().addHandler(handler)
    try:
        result = task.predict([img], names=['frame_000003'])[0]
    finally:
        MMLogger.get_current_instance().removeHandler(handler)
    assert result['keypoints'].shape == (0, 308, 2) and result['bboxes'].shape == (0, 4)
    assert len(notices) == 1 and notices[0].startswith('frame_000003: the person detector found nobody (score > 0.3)')


def test_detector_boxes_are_filtered_and_nmsed(monkeypatch):
    import mmdet.apis
    pred = InstanceData(
        bboxes=torch.tensor([[0., 0., 10., 20.], [1., 0., 11., 20.], [30., 30., 50., 60.], [0., 0., 5., 5.],
                             [60., 0., 70., 9.]]),
        scores=torch.tensor([0.9, 0.8, 0.7, 0.95, 0.2]),
        labels=torch.tensor([0, 0, 0, 1, 0]))
    monkeypatch.setattr(mmdet.apis, 'inference_detector', lambda det, img: type('R', (), {'pred_instances': pred}))
    dets = api.detect_persons(object(), np.zeros((80, 80, 3), np.uint8), score_thr=0.3, nms_thr=0.3)
    np.testing.assert_allclose(dets, [[0, 0, 10, 20, 0.9], [30, 30, 50, 60, 0.7]], rtol=1e-6)


def test_init_model_loads_official_style_checkpoint(model, tmp_path):
    official = {(f'decode_{k}' if k.startswith('head.') else k): v for k, v in model.state_dict().items()}
    path = tmp_path / 'pose.safetensors'
    save_weights(official, str(path))
    loaded = init_model(TINY, str(path), device='cpu')
    for k, v in model.state_dict().items():
        assert torch.equal(v, loaded.state_dict()[k]), k
    assert loaded.dataset_meta['num_keypoints'] == 308 and len(loaded.dataset_meta['flip_indices']) == 308


@pytest.mark.slow
def test_cli_with_an_mmdet_detector_that_finds_nobody(tmp_path):
    """Any mmdet model works as --det-config/--det-checkpoint; frames without a person get no pose and a notice."""
    import mmdet
    from mmdet.apis import init_detector
    det_config = Path(mmdet.__file__).parent / '.mim' / 'configs' / 'rtmdet' / 'rtmdet_tiny_8xb32-300e_coco.py'
    torch.manual_seed(0)
    det_checkpoint = str(tmp_path / 'rtmdet_tiny_random.pth')
    torch.save({'state_dict': init_detector(str(det_config), None, device='cpu').state_dict()}, det_checkpoint)
    pose_checkpoint = str(tmp_path / 'pose.safetensors')
    save_weights(init_model(TINY, device='cpu').state_dict(), pose_checkpoint)
    folder = tmp_path / 'street'
    folder.mkdir()
    for name in ('empty_a', 'empty_b'):
        cv2.imwrite(str(folder / f'{name}.png'), np.full((120, 160, 3), 90, np.uint8))
    # random detector scores are about 0.5: a 0.99 threshold keeps nobody
    proc = subprocess.run([sys.executable, 'tools/infer.py', str(folder), '--model', TINY, '--weights',
                           pose_checkpoint, '--det-config', str(det_config), '--det-checkpoint', det_checkpoint,
                           '--bbox-thr', '0.99', '--out', str(tmp_path / 'out'), '--device', 'cpu', '--quiet'],
                          cwd=Path(TINY).parents[2], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    for name in ('empty_a', 'empty_b'):
        assert f'{name}: the person detector found nobody' in proc.stdout + proc.stderr
    frames = [json.loads((tmp_path / 'out' / 'pose' / f'{name}.json').read_text()) for name in ('empty_a', 'empty_b')]
    assert [(f['image_name'], f['instances']) for f in frames] == [('empty_a', []), ('empty_b', [])]


def test_the_person_detector_runs_in_fp32_under_the_pose_models_bf16_autocast():
    """``--dtype bf16`` (and ``auto`` on bf16 CPUs) autocasts the pose forward; the mmdet detector it calls keeps
    fp32 (mmcv's NMS raised 'expected scalar type Float but found BFloat16')."""
    import mmdet
    from mmdet.apis import init_detector
    det_config = Path(mmdet.__file__).parent / '.mim' / 'configs' / 'rtmdet' / 'rtmdet_tiny_8xb32-300e_coco.py'
    torch.manual_seed(0)
    detector = init_detector(str(det_config), None, device='cpu')
    with torch.autocast('cpu', dtype=torch.bfloat16):
        boxes = api.detect_persons(detector, np.full((120, 160, 3), 90, np.uint8), score_thr=0.0)
    assert boxes.dtype == np.float32 and boxes.ndim == 2 and boxes.shape[1] == 5


@pytest.mark.parametrize('shape, noticed', [((427, 640), True), ((128, 96), False), ((200, 200), False),
                                            ((400, 100), True)], ids=['landscape', '3:4', 'square', 'tall'])
def test_a_whole_image_box_far_from_the_model_aspect_gets_a_notice(model, shape, noticed):
    from mmengine.logging import MMLogger
    assert api.whole_image_person_share(model, 640, 427) == pytest.approx(0.75 / (640 / 427))
    notices = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: notices.append(record.getMessage())
    MMLogger.get_current_instance().addHandler(handler)
    try:
        api.inference_pose_topdown(model, np.zeros((*shape, 3), np.uint8), name='photo')
        api.inference_pose_topdown(model, np.zeros((*shape, 3), np.uint8), bboxes=[[0, 0, 20, 20]], name='photo')
    finally:
        MMLogger.get_current_instance().removeHandler(handler)
    assert len(notices) == int(noticed)
    if noticed:
        assert notices[0].startswith(f'photo: no person boxes and no detector, so the whole {shape[1]}x{shape[0]}')
        assert '--det-config' in notices[0]


def test_the_whole_image_notice_names_every_image_and_each_video_once(model):
    """Each photo of a run that falls back to the whole image is named (not only the first); a video's frames are
    named once for the video."""
    from mmengine.logging import MMLogger

    from sapiens2.apis.notices import Notices
    notices, shown = Notices(), []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: shown.append(record.getMessage())
    MMLogger.get_current_instance().addHandler(handler)
    try:
        for name in ('street', 'beach'):
            api.inference_pose_topdown(model, np.zeros((427, 640, 3), np.uint8), name=name, notices=notices)
        for frame in range(3):
            api.inference_pose_topdown(model, np.zeros((427, 640, 3), np.uint8), name=f'clip_{frame:06d}',
                                       notices=notices, stream='clip')
    finally:
        MMLogger.get_current_instance().removeHandler(handler)
    assert [message.split(':')[0] for message in shown] == ['street', 'beach', 'clip_000000']
    assert shown[2].endswith('(shown once for clip)')
