"""SavePredictionsHook writes a test batch's predictions with the config's inference task (tools/test.py --out)."""
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch

from sapiens2.apis import SavePredictionsHook, init_model
from sapiens2.apis.pipeline import inference_pipeline, run_test_step

REPO = Path(__file__).resolve().parents[2]
NORMAL = str(REPO / 'projects' / 'normal' / 'configs' / 'sapiens2_nano_normal_synthhumans-128x96.py')
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')


class _Runner:
    def __init__(self, model):
        self.model, self.cfg = model, model.cfg


def test_writes_the_inference_tasks_files_named_by_image(tmp_path):
    torch.manual_seed(0)
    model = init_model(NORMAL, device='cpu')
    image = np.random.default_rng(0).integers(0, 255, (70, 40, 3), dtype=np.uint8)
    cv2.imwrite(str(tmp_path / 'person.png'), image)
    samples = run_test_step(model, inference_pipeline(model.cfg), [dict(img=image)])
    samples[0].set_metainfo(dict(img_path=str(tmp_path / 'person.png')))
    hook = SavePredictionsHook(str(tmp_path / 'out'))
    hook.before_test(_Runner(model))
    hook.after_test_iter(None, 0, {}, samples)
    assert [p.name for p in (tmp_path / 'out').iterdir()] == ['person.npy']
    saved = np.load(tmp_path / 'out' / 'person.npy')
    np.testing.assert_array_equal(saved, samples[0].pred_dense.data.permute(1, 2, 0).numpy())


def test_pose_is_not_a_per_image_task(tmp_path):
    with pytest.raises(TypeError, match='--dump'):
        SavePredictionsHook(str(tmp_path)).before_test(_Runner(init_model(POSE, device='cpu')))
