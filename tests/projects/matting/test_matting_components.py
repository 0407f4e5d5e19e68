"""Matting head, channel layout, pictures, visualisation hook and inference task."""
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch
from mmengine.structures import PixelData
from sapiens2_matting import MattingHead, MattingInferenceTask, MattingVisualizationHook
from sapiens2_matting.matting_channels import alpha_channel, split_prediction, split_target, unknown_region
from sapiens2_matting.matting_pictures import alpha_to_bgr, checkerboard, composite_over, rgba_cutout

from sapiens2.apis import Sapiens2Inferencer, init_model
from sapiens2.apis.cli import parse_args
from sapiens2.apis.tasks import build_task
from sapiens2.structures import DenseDataSample

REPO = Path(__file__).resolve().parents[3]
NANO = str(REPO / 'projects' / 'matting' / 'configs' / 'sapiens2_nano_matting_synthhumans-128x96.py')


def test_head_outputs_keys_and_postprocess():
    head = MattingHead(in_channels=16, upsample_channels=(8, 8, 8, 8), conv_out_channels=(8, 4))
    out = head(torch.randn(2, 16, 2, 3))
    assert out.shape == (2, 4, 32, 48)
    pred = head.postprocess(out)['map']
    assert pred.min() >= 0 and pred.max() <= 1
    foreground, alpha = split_prediction(pred)
    assert foreground.shape == (2, 3, 32, 48) and alpha.shape == (2, 1, 32, 48)
    keys = set(head.state_dict())
    assert {'input_conv.0.weight', 'upsample_blocks.3.0.bias', 'conv_layers.3.weight', 'conv_matting.weight'} <= keys
    assert head.conv_matting.out_channels == 4
    default = MattingHead(in_channels=1536)
    assert [block[0].out_channels // 4 for block in default.upsample_blocks] == [768, 512, 256, 128]


def test_head_loss_uses_the_sigmoid_outputs_and_the_mask():
    head = MattingHead(in_channels=8, upsample_channels=(4, ), conv_out_channels=(4, ),
                       loss_decode=[dict(type='MattingAlphaL1Loss'), dict(type='MattingForegroundL1Loss')])
    samples = []
    for _ in range(2):
        s = DenseDataSample()
        target = torch.rand(11, 4, 4)
        s.gt_dense = PixelData(data=target, mask=torch.ones(1, 4, 4, dtype=torch.bool))
        samples.append(s)
    features = torch.randn(2, 8, 2, 2)
    losses = head.loss(features, samples)
    assert set(losses) == {'loss_alpha_l1', 'loss_foreground_l1'}
    pred = head(features).sigmoid()
    target = torch.stack([s.gt_dense.data for s in samples])
    expected = (pred[:, 3:] - target[:, :1]).abs().mean()
    assert losses['loss_alpha_l1'].item() == pytest.approx(expected.item(), rel=1e-5)


def test_channel_helpers_check_the_layout():
    target = split_target(torch.arange(11.0).view(11, 1, 1).expand(11, 2, 2))
    assert target.alpha[0, 0, 0] == 0 and target.trimap[0, 0, 0] == 4 and target.image[:, 0, 0].tolist() == [8, 9, 10]
    assert split_target(torch.zeros(5, 2, 2)).background is None
    assert unknown_region(torch.tensor([0.0, 0.5, 1.0])).tolist() == [False, True, False]
    assert alpha_channel(torch.arange(4.0).view(4, 1, 1))[0, 0, 0] == 3
    with pytest.raises(ValueError, match='4 channels'):
        split_prediction(torch.zeros(3, 2, 2))
    with pytest.raises(ValueError, match='FormatMattingTarget'):
        split_target(torch.zeros(6, 2, 2))


def test_pictures_by_hand():
    fg = np.full((1, 2, 3), 0.25)
    alpha = np.array([[0.5, 0.0]])
    cutout = rgba_cutout(fg * alpha[..., None] * 2, alpha)  # pre-multiplied 0.25 at alpha 0.5 -> colour 0.5
    np.testing.assert_array_equal(cutout[0, 0], [128, 128, 128, 128])
    np.testing.assert_array_equal(cutout[0, 1], [0, 0, 0, 0])
    over = composite_over(np.array([[[0.2, 0.0, 0.0]]]), np.array([[0.5]]), np.full((1, 1, 3), 100, np.uint8))
    np.testing.assert_array_equal(over[0, 0], [50, 50, 101])  # BGR: R = 51 + 50
    board = checkerboard(4, 4, cell=2)
    assert board[0, 0, 0] != board[0, 2, 0] and board[0, 0, 0] == board[2, 2, 0]
    np.testing.assert_array_equal(alpha_to_bgr(np.array([[0.0, 1.0]]))[0, :, 0], [0, 255])


def test_visualization_hook_draws_gt_and_prediction_alpha():
    hook = MattingVisualizationHook()
    gt, pred = np.zeros((5, 3, 2), np.float32), np.zeros((4, 3, 2), np.float32)
    gt[0], pred[3] = 1.0, 0.5
    assert hook.render(gt, None)[0, 0, 0] == 255 and hook.render(pred, None)[0, 0, 0] == 128


def test_inference_task_decodes_draws_and_writes(tmp_path):
    torch.manual_seed(0)
    model = init_model(NANO, device='cpu')
    task = build_task(model, model.cfg)
    assert isinstance(task, MattingInferenceTask) and task.name == 'matting'
    image = np.random.default_rng(0).integers(0, 255, (90, 70, 3), dtype=np.uint8)
    result = task.predict([image])[0]
    assert result['alpha'].shape == (90, 70) and result['foreground'].shape == (90, 70, 3)
    assert 0 <= result['alpha'].min() and result['alpha'].max() <= 1
    assert task.visualize(image, result).shape == (90, 210, 3)
    cutout, alpha = task.save(image, result, str(tmp_path), 'x')
    assert cutout.endswith('x_cutout.png') and alpha.endswith('x_alpha.png')
    rgba = cv2.imread(cutout, cv2.IMREAD_UNCHANGED)
    grey = cv2.imread(alpha, cv2.IMREAD_UNCHANGED)
    assert rgba.shape == (90, 70, 4) and grey.shape == (90, 70)
    np.testing.assert_array_equal(rgba[..., 3], grey)
    np.testing.assert_allclose(grey, np.round(result['alpha'] * 255), atol=1)


def test_seg_and_matting_run_together(tmp_path):
    assert parse_args(['in.jpg', '--out', 'o', '--task', 'seg', 'matting']).task == ['seg', 'matting']
    torch.manual_seed(0)
    seg = str(REPO / 'configs' / 'seg' / 'sapiens2_nano_seg_synthhumans-128x96.py')
    inferencer = Sapiens2Inferencer([seg, NANO], device='cpu')
    image = np.random.default_rng(1).integers(0, 255, (80, 60, 3), dtype=np.uint8)
    result = inferencer([image], out_dir=str(tmp_path), show_progress=False)[0]
    assert result['seg']['labels'].shape == (80, 60) and result['matting']['alpha'].shape == (80, 60)
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob('*.png'))
    assert written == ['matting/array_000000.png', 'matting/array_000000_alpha.png',
                       'matting/array_000000_cutout.png', 'seg/array_000000.png']


def test_the_matting_alias_finds_the_packaged_1b_config(tmp_path, monkeypatch):
    from sapiens2.hub import model_zoo
    monkeypatch.setenv('SAPIENS2_CHECKPOINT_ROOT', str(tmp_path))
    (tmp_path / 'sapiens2_1b_matting.safetensors').write_bytes(b'')
    config, checkpoint = model_zoo.resolve_model('matting-1b')
    assert config.endswith('matting/sapiens2_1b_matting_humans-1024x768.py') and Path(config).is_file()
    assert checkpoint == 'matting-1b' and 'matting' in model_zoo.tasks()
    entry = model_zoo.get_entry('matting-1b')
    assert entry.repo == 'facebook/sapiens2-matting-1b'
    assert model_zoo.find_local_checkpoint(entry) == str(tmp_path / 'sapiens2_1b_matting.safetensors')


def test_inference_drops_the_ground_truth_transforms_of_the_test_pipeline():
    from sapiens2.apis.pipeline import inference_pipeline
    from sapiens2.engine.launch import load_config
    kept = [type(t).__name__ for t in inference_pipeline(load_config(NANO)).transforms]
    assert kept == ['LoadImageFromArray', 'Letterbox', 'PackDenseInputs']
