"""Top-down inference helper: user boxes, whole image, detector boxes (score filter + NMS), official checkpoints."""
from pathlib import Path

import numpy as np
import pytest
import torch
from mmengine.structures import InstanceData

import sapiens2.apis.pose_topdown as api
from sapiens2.engine.checkpoint import save_weights

TINY = str(Path(__file__).resolve().parents[2] / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')


@pytest.fixture(scope='module')
def model():
    torch.manual_seed(0)
    return api.init_pose_model(TINY, device='cpu')


def centred_peak_head(model, monkeypatch):
    """Make the head output a Gaussian peak at the heatmap centre, so every keypoint decodes to the box centre."""
    h, w = 32, 24
    y, x = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing='ij')
    peak = torch.exp(-((x - (w - 1) / 2)**2 + (y - (h - 1) / 2)**2) / (2 * 1.5**2))
    monkeypatch.setattr(model.head, 'forward', lambda feats: peak.expand(feats[-1].shape[0], 308, h, w).clone())


def test_user_boxes_map_keypoints_back_into_each_box(model, monkeypatch):
    centred_peak_head(model, monkeypatch)
    img = np.random.default_rng(0).integers(0, 255, (240, 320, 3), dtype=np.uint8)
    boxes = np.array([[10, 20, 90, 200], [200, 40, 300, 230], [150, 10, 190, 60]], np.float32)
    results = api.inference_pose_topdown(model, img, boxes, batch_size=2)
    assert len(results) == 3
    for res, box in zip(results, boxes):
        kpts, scores = res.pred_instances.keypoints[0], res.pred_instances.keypoint_scores[0]
        assert kpts.shape == (308, 2) and scores.shape == (308, )
        centre = (box[:2] + box[2:]) / 2
        np.testing.assert_allclose(kpts, np.broadcast_to(centre, kpts.shape), atol=0.01 * (box[3] - box[1]))
        np.testing.assert_allclose(res.pred_instances.bboxes[0], box)


def test_xywh_boxes_equal_xyxy(model):
    img = np.random.default_rng(1).integers(0, 255, (120, 100, 3), dtype=np.uint8)
    a = api.inference_pose_topdown(model, img, [[10, 10, 60, 100]])
    b = api.inference_pose_topdown(model, img, [[10, 10, 50, 90]], bbox_format='xywh')
    np.testing.assert_allclose(a[0].pred_instances.keypoints, b[0].pred_instances.keypoints, atol=1e-4)
    with pytest.raises(ValueError, match='bbox_format'):
        api.inference_pose_topdown(model, img, [[0, 0, 1, 1]], bbox_format='cxcywh')


def test_whole_image_when_no_boxes_and_no_detection(model, monkeypatch):
    centred_peak_head(model, monkeypatch)
    img = np.zeros((64, 48, 3), np.uint8)
    res = api.inference_pose_topdown(model, img)
    assert len(res) == 1
    np.testing.assert_allclose(res[0].pred_instances.bboxes[0], [0, 0, 48, 64])
    np.testing.assert_allclose(res[0].pred_instances.keypoints[0], np.full((308, 2), [24., 32.]), atol=0.7)
    monkeypatch.setattr(api, 'detect_persons', lambda *a, **k: np.zeros((0, 5), np.float32))
    assert len(api.inference_pose_topdown(model, img, detector=object())) == 1


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


def test_init_pose_model_loads_official_style_checkpoint(model, tmp_path):
    official = {(f'decode_{k}' if k.startswith('head.') else k): v for k, v in model.state_dict().items()}
    path = tmp_path / 'pose.safetensors'
    save_weights(official, str(path))
    loaded = api.init_pose_model(TINY, str(path))
    for k, v in model.state_dict().items():
        assert torch.equal(v, loaded.state_dict()[k]), k
