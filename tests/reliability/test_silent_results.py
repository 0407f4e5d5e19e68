"""Round 3 of the bad-input catalogue, beyond its one case each: every threshold argument, the codec check in the
inferencer, the seg supervision hook over epochs, integer buffers that do load, the pointmap validity mask in every
output, and the device / dtype table."""
from pathlib import Path
from unittest import mock

import cv2
import numpy as np
import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
POSE_NANO = REPO / 'configs/pose/sapiens2_nano_pose_synthhumans-128x96.py'
POINTMAP_NANO = REPO / 'projects/pointmap/configs/sapiens2_nano_pointmap_synthhumans-128x96.py'


@pytest.mark.parametrize('option', ['--kpt-thr', '--bbox-thr', '--nms-thr'])
@pytest.mark.parametrize('value', ['nan', 'inf', '-0.1', '1.5', 'high'])
def test_every_threshold_argument_is_a_finite_number_in_0_1(option, value, capsys):
    from sapiens2.apis.cli import parse_args
    with pytest.raises(SystemExit) as exit_:
        parse_args(['a.png', '--task', 'pose', '--out', 'o', option, value])
    assert exit_.value.code == 2
    assert f'error: argument {option}: ' in capsys.readouterr().err
    assert getattr(parse_args(['a.png', '--task', 'pose', '--out', 'o', option, '1']),
                   option[2:].replace('-', '_')) == 1.0


def test_the_inferencer_refuses_a_codec_input_size_other_than_the_pipelines(tmp_path):
    from sapiens2.apis import Sapiens2Inferencer
    from sapiens2.config.checks import ConfigValueError
    config = tmp_path / 'pose.py'
    config.write_text(f"_base_ = ['{POSE_NANO}']\nmodel = dict(head=dict(decoder=dict(input_size=(192, 256))))\n")
    with pytest.raises(ConfigValueError, match=r'model\.head\.decoder\.input_size = \(192, 256\) but '
                                               r'train_dataloader\.dataset\.pipeline\[4\]\.input_size = \(96, 128\)'):
        Sapiens2Inferencer(str(config), device='cpu')


def _seg_batch(labels: np.ndarray) -> dict:
    from mmengine.structures import PixelData
    from mmseg.structures import SegDataSample
    sample = SegDataSample()
    sample.gt_sem_seg = PixelData(data=torch.from_numpy(labels)[None])
    return dict(data_samples=[sample])


def test_supervised_pixels_hook_counts_each_epoch_of_the_dataloader():
    from sapiens2.engine.hooks import SupervisedPixelsHook
    ignored, labelled = np.full((4, 4), 255, np.uint8), np.full((4, 4), 255, np.uint8)
    labelled[0, 0] = 3
    dataset = type('Folders', (), dict(data_root='data/'))()
    loader = type('Loader', (), dict(__len__=lambda self: 2, dataset=dataset))()
    runner = type('Runner', (), dict(iter=0, train_dataloader=loader))()
    hook = SupervisedPixelsHook()
    hook.before_train(runner)
    for batch in (ignored, labelled, ignored, ignored):  # epoch 1 has one supervised pixel, epoch 2 none
        if runner.iter == 3:
            with pytest.raises(ValueError, match=r'Iteration 4: a whole epoch of training batches \(2 iterations\) '
                                                 r"of Folders\(data_root='data/'\) had no supervised pixel"):
                hook.after_train_iter(runner, runner.iter, data_batch=_seg_batch(batch))
        else:
            hook.after_train_iter(runner, runner.iter, data_batch=_seg_batch(batch))
        runner.iter += 1


def test_integer_buffers_of_the_model_load_as_usual(tmp_path):
    from sapiens2.engine import load_model_weights, save_weights
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 1), torch.nn.BatchNorm2d(4))
    model[1].num_batches_tracked.fill_(7)
    save_weights(model.state_dict(), str(tmp_path / 'bn.safetensors'))
    other = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 1), torch.nn.BatchNorm2d(4))
    load_model_weights(other, str(tmp_path / 'bn.safetensors'))
    assert int(other[1].num_batches_tracked) == 7 and torch.equal(other[0].weight, model[0].weight)


def test_pointmap_outputs_share_one_validity_mask(tmp_path):
    """Negative, non-finite or too deep points: kept in the .npy, 0 in <name>_valid.png, black in the picture, not in
    the .ply."""
    from mmengine.structures import PixelData

    from sapiens2.apis import build_task, init_model
    from sapiens2.structures import DenseDataSample
    from sapiens2.utils.ply import read_ply
    model = init_model(str(POINTMAP_NANO), device='cpu')
    task = build_task(model, model.cfg)
    pointmap = np.ones((3, 8, 6), np.float32) * 2.0
    pointmap[2, :2] = -66.8  # behind the camera
    pointmap[0, 5, 5] = np.nan
    pointmap[2, 7, 0] = 1e6  # beyond the fp16 depth file
    sample = DenseDataSample()
    sample.pred_pointmap = PixelData(data=torch.from_numpy(pointmap))
    result = task.decode(sample)
    expected = np.ones((8, 6), bool)
    expected[:2], expected[5, 5], expected[7, 0] = False, False, False
    np.testing.assert_array_equal(result['valid'], expected)
    image = np.full((8, 6, 3), 200, np.uint8)
    depth_path, valid_path, ply_path = task.save(image, result, str(tmp_path), 'a')
    assert (np.load(depth_path)[:2] == np.float16(-66.8)).all()  # the prediction, as it is
    np.testing.assert_array_equal(cv2.imread(valid_path, cv2.IMREAD_UNCHANGED), expected.astype(np.uint8) * 255)
    assert len(read_ply(ply_path)['points']) == expected.sum()
    picture = task.visualize(image, result)[:, 6:]
    assert not picture[~expected].any() and picture[expected].any(axis=-1).all()


def test_device_and_dtype_table():
    from sapiens2.utils.devices import DTYPES, check_dtype, resolve_device
    assert DTYPES == ('fp32', 'bf16', 'int8', 'fp16')
    with mock.patch('sapiens2.utils.devices.cpu_runs_bf16', return_value=True):  # a CPU with AVX512-BF16 or AMX
        check_dtype('bf16', 'cpu')
    check_dtype('fp16', 'cuda:1')
    check_dtype('int8', 'cpu', backend='onnxruntime')
    with pytest.raises(ValueError, match=r"dtype 'int4' is not known; dtypes: fp32, bf16, int8, fp16"):
        check_dtype('int4', 'cpu')
    with pytest.raises(ValueError, match=r'dtype int8 does not run on the cuda with the torch backend, which runs '
                                         r'fp32, fp16, bf16; int8 runs on cpu \(torch\), cpu \(onnxruntime\)'):
        check_dtype('int8', 'cuda')
    with pytest.raises(ValueError, match=r"backend 'tensorrt' is not known; backends: onnxruntime, torch"):
        check_dtype('fp32', 'cpu', backend='tensorrt')
    with mock.patch('torch.cuda.is_available', return_value=False):
        assert resolve_device(None) == 'cpu' and resolve_device('cpu') == 'cpu'
    with mock.patch('torch.cuda.is_available', return_value=True), mock.patch('torch.cuda.device_count',
                                                                              return_value=1):
        assert resolve_device(None) == 'cuda' and resolve_device('cuda:0') == 'cuda:0'
        with pytest.raises(ValueError, match=r"device 'cuda:3' does not exist: this machine has 1 CUDA GPU\(s\), "
                                             r'cuda:0 to cuda:0'):
            resolve_device('cuda:3')
    with pytest.raises(ValueError, match=r"device 'cpu:x' is not one sapiens2 runs on"):
        resolve_device('cpu:x')
