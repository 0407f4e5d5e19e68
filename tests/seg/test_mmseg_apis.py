"""mmseg's own APIs with the sapiens2 seg config and checkpoints: init_model, inference_model, show_result_pyplot and
MMSegInferencer."""
import os
import shutil

import cv2
import numpy as np
import pytest
import torch

from sapiens2.apis.builder import init_model as sapiens2_init_model
from sapiens2.engine.checkpoint import save_weights

SEG = os.path.join(os.path.dirname(__file__), '..', '..', 'configs', 'seg', 'sapiens2_nano_seg_synthhumans-128x96.py')


@pytest.fixture(scope='module')
def checkpoints(tmp_path_factory):
    """The nano seg model with random weights: a .pth as MMEngine's CheckpointHook writes it (with the dataset
    metainfo in ``meta``) and a .safetensors file with the same meta in its metadata."""
    from mmseg.registry import DATASETS
    torch.manual_seed(0)
    state_dict = sapiens2_init_model(SEG, device='cpu').state_dict()
    folder = tmp_path_factory.mktemp('seg_ckpt')
    meta = dict(dataset_meta=dict(DATASETS.get('BodyPart29Dataset').METAINFO))
    torch.save(dict(state_dict=state_dict, meta=meta), str(folder / 'seg.pth'))
    save_weights(state_dict, str(folder / 'seg.safetensors'), meta=meta)
    return dict(pth=str(folder / 'seg.pth'), safetensors=str(folder / 'seg.safetensors'), state_dict=state_dict)


@pytest.fixture(scope='module')
def photo(synthhumans_root, tmp_path_factory):
    path = tmp_path_factory.mktemp('seg_photo') / 'person.png'
    shutil.copy(os.path.join(synthhumans_root, 'val', 'rgb', '000003.png'), path)
    return str(path)


def check_init_and_inference(checkpoint, state_dict, photo, tmp_path):
    from mmseg.apis import inference_model, init_model, show_result_pyplot
    model = init_model(SEG, checkpoint, device='cpu')
    for key, value in model.state_dict().items():
        torch.testing.assert_close(value, state_dict[key], msg=f'{key} not loaded')
    assert len(model.dataset_meta['classes']) == 29 and model.dataset_meta['classes'][0] == 'Background'
    result = inference_model(model, photo)
    height, width = cv2.imread(photo).shape[:2]
    assert tuple(result.pred_sem_seg.data.shape) == (1, height, width)
    assert result.seg_logits.data.shape == (29, height, width)
    out_file = str(tmp_path / 'overlay.png')
    drawn = show_result_pyplot(model, photo, result, show=False, out_file=out_file)
    assert drawn.shape == (height, width, 3) and cv2.imread(out_file).shape == (height, width, 3)


def test_mmseg_init_model_inference_model_and_show_result_on_a_pth(checkpoints, photo, tmp_path):
    check_init_and_inference(checkpoints['pth'], checkpoints['state_dict'], photo, tmp_path)


def test_mmseg_init_model_on_a_safetensors_file(checkpoints, photo, tmp_path):
    check_init_and_inference(checkpoints['safetensors'], checkpoints['state_dict'], photo, tmp_path)


def test_mmseg_inferencer_writes_predictions_and_pictures(checkpoints, photo, tmp_path):
    from mmseg.apis import MMSegInferencer
    inferencer = MMSegInferencer(model=SEG, weights=checkpoints['pth'], device='cpu')
    outputs = inferencer([photo], out_dir=str(tmp_path))
    height, width = cv2.imread(photo).shape[:2]
    assert outputs['predictions'].shape == (height, width)
    assert set(np.unique(outputs['predictions'])) <= set(range(29))
    assert cv2.imread(str(tmp_path / 'vis' / 'person.png')).shape == (height, width, 3)
    (label_file, ) = (tmp_path / 'pred').iterdir()  # mmseg names it by index: 00000000_pred.png
    np.testing.assert_array_equal(cv2.imread(str(label_file), cv2.IMREAD_UNCHANGED), outputs['predictions'])
