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
    """Returns the un-letterboxed map and the extras as arrays."""
    name = 'map'

    def decode(self, dense, extras):
        return dict(map=dense.permute(1, 2, 0).numpy(), **{k: v.numpy() for k, v in extras.items()})


@pytest.mark.parametrize('task', ['normal', 'pointmap', 'albedo'])
def test_dense_project_models_come_back_at_the_image_size(task):
    torch.manual_seed(0)
    model = init_model(config(task), device='cpu')
    runner = MapTask(model, model.cfg)
    assert runner.input_size == (128, 96)
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 255, (90, 200, 3), dtype=np.uint8), rng.integers(0, 255, (160, 60, 3), dtype=np.uint8)]
    results = runner.predict(images)
    for image, result in zip(images, results):
        assert result['map'].shape == (*image.shape[:2], 3)
    if task == 'normal':  # the head's postprocess normalises before resizing; interpolation only shortens them
        norms = np.linalg.norm(results[0]['map'], axis=-1)
        assert norms.max() <= 1 + 1e-5 and norms.max() > 0.99
    if task == 'albedo':
        assert results[0]['map'].min() >= 0 and results[0]['map'].max() <= 1
    if task == 'pointmap':
        assert results[0]['pred_scale'].shape == (1, )


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
