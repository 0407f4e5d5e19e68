"""DenseInferenceTask on the projects' tiny normal / pointmap / albedo models (their configs load the projects)."""
from pathlib import Path

import numpy as np
import pytest
import torch

from sapiens2.apis import DenseInferenceTask, init_model

REPO = Path(__file__).resolve().parents[2]


def config(task):
    return str(REPO / 'projects' / task / 'configs' / f'sapiens2_nano_{task}_synthhumans-128x96.py')


class MapTask(DenseInferenceTask):
    """Returns the predicted map and the pointmap extras as arrays."""
    name = 'map'

    def decode(self, sample):
        result = dict(map=sample.pred_dense.data.permute(1, 2, 0).numpy())
        if 'pred_scale' in sample:
            result.update(pred_scale=sample.pred_scale.numpy(), metric=sample.pred_pointmap.data.numpy())
        return result


@pytest.mark.parametrize('task', ['normal', 'pointmap', 'albedo'])
def test_dense_project_models_come_back_at_the_image_size(task):
    torch.manual_seed(0)
    model = init_model(config(task), device='cpu')
    runner = MapTask(model, model.cfg)
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 255, (90, 200, 3), dtype=np.uint8), rng.integers(0, 255, (160, 60, 3), dtype=np.uint8)]
    results = runner.predict(images)
    for image, result in zip(images, results):
        assert result['map'].shape == (*image.shape[:2], 3)
    if task == 'normal':  # the head normalises before and after resizing to the image
        np.testing.assert_allclose(np.linalg.norm(results[0]['map'], axis=-1), 1.0, atol=1e-5)
    if task == 'albedo':
        assert results[0]['map'].min() >= 0 and results[0]['map'].max() <= 1
    if task == 'pointmap':  # metric pointmap = canonical / predicted scale
        assert results[0]['pred_scale'].shape == (1, )
        np.testing.assert_allclose(results[0]['metric'].transpose(1, 2, 0) * results[0]['pred_scale'],
                                   results[0]['map'], rtol=1e-5, atol=1e-6)


def test_inferencer_runs_every_dense_project_task_and_writes_files(tmp_path):
    from sapiens2.apis import Sapiens2Inferencer
    torch.manual_seed(0)
    inferencer = Sapiens2Inferencer([config(t) for t in ('normal', 'pointmap', 'albedo')], device='cpu')
    assert sorted(t.name for t in inferencer.tasks) == ['albedo', 'normal', 'pointmap']
    image = np.random.default_rng(0).integers(0, 255, (100, 70, 3), dtype=np.uint8)
    result = inferencer([image], out_dir=str(tmp_path), show_progress=False)[0]
    assert result['normal']['normal'].shape == (100, 70, 3)
    np.testing.assert_allclose(np.linalg.norm(result['normal']['normal'], axis=-1), 1.0, atol=1e-3)
    assert result['pointmap']['depth'].shape == (100, 70)
    assert 0 <= result['albedo']['albedo'].min() and result['albedo']['albedo'].max() <= 1
    written = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob('*') if p.is_file()}
    assert any(n.endswith('.ply') for n in written) and any(n.endswith('_depth.npy') for n in written)
    assert sum(n.endswith('.png') for n in written) >= 3
    for task in inferencer.tasks:  # the raw files are the ones each task declares (checked before a run writes)
        raw = [n for n in written if n.startswith(task.name + '/') and not n.endswith('.png')]
        assert raw and all(n.endswith(task.raw_suffixes) for n in raw), (task.name, raw)
