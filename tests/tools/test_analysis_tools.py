"""tools/analysis (FLOPs, benchmark) and tools/misc/print_config."""
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.scripts import load_script

REPO = Path(__file__).resolve().parents[2]
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')
SEG = str(REPO / 'configs' / 'seg' / 'sapiens2_nano_seg_synthhumans-128x96.py')


load_tool = load_script


def test_flops_count_params_exactly_and_scale_with_the_input_area():
    from sapiens2.apis import init_model
    get_flops = load_tool('tools/analysis/get_flops.py')
    small = get_flops.count(SEG)
    big = get_flops.count(SEG, shape=(256, 192))
    assert small['params'] == sum(p.numel() for p in init_model(SEG, device='cpu').parameters())
    assert small['input_shape'] == (1, 3, 128, 96)
    assert 4.0 <= big['flops'] / small['flops'] <= 16.0  # 4x the pixels: convolutions linear, attention quadratic


def test_flops_of_a_full_size_config_on_meta():
    result = load_tool('tools/analysis/get_flops.py').count(str(REPO / 'configs' / 'pose' /
                                                                'sapiens2_0.4b_pose_goliath-1024x768.py'))
    assert 0.35e9 < result['backbone_params'] < 0.45e9 and result['flops'] > 1e12


def test_benchmark_reports_a_median():
    result = load_tool('tools/analysis/benchmark.py').benchmark(POSE, device='cpu', warmup=1, repeats=3, iters=1)
    assert len(result['all_ms']) == 3 and result['images_per_s'] > 0
    assert min(result['all_ms']) <= result['ms_per_batch'] <= max(result['all_ms'])


def test_print_config_applies_options(capsys):
    assert load_tool('tools/misc/print_config.py').main([POSE, '--cfg-options', 'train_cfg.max_iters=7']) == 0
    out = capsys.readouterr().out
    assert 'sapiens2_nano' in out and 'max_iters=7' in out


@pytest.mark.parametrize('config', [POSE, SEG])
def test_browse_dataset_draws_targets(config, synthhumans_root, tmp_path):
    browse = load_tool('tools/misc/browse_dataset.py')
    assert browse.main([config, '--out', str(tmp_path), '--num', '2', '--cfg-options',
                        f'train_dataloader.dataset.data_root={synthhumans_root}']) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ['train_0000.png', 'train_0001.png']
    picture = cv2.imread(str(tmp_path / 'train_0000.png'))
    left, right = np.split(picture, 2, axis=1)
    assert picture.shape == (128, 192, 3) and (left != right).any()  # targets drawn on the right half


def test_browse_dataset_draws_the_alpha_matte(synthhumans_root, tmp_path):
    config = str(REPO / 'projects' / 'matting' / 'configs' / 'sapiens2_nano_matting_synthhumans-128x96.py')
    browse = load_tool('tools/misc/browse_dataset.py')
    assert browse.main([config, '--out', str(tmp_path), '--num', '1', '--cfg-options',
                        f'train_dataloader.dataset.data_root={synthhumans_root}/train']) == 0
    right = np.split(cv2.imread(str(tmp_path / 'train_0000.png')), 2, axis=1)[1]
    assert (right[..., 0] == right[..., 2]).all() and right.max() == 255 and right.min() == 0
