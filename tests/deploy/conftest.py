"""Bundles exported once for the deploy tests (ONNX export takes most of their time)."""
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
SEG = REPO / 'configs' / 'seg' / 'sapiens2_nano_seg_synthhumans-128x96.py'


@pytest.fixture(scope='session')
def bundles(tmp_path_factory):
    """{task: (bundle folder, config, checkpoint of the same weights)}: the shipped tiny pose model (trained: peaked
    heatmaps, so that keypoints are comparable) and a nano seg model (random weights), each written by
    :func:`~sapiens2.deploy.bundle.write_bundle` (ONNX parity checked)."""
    from sapiens2.apis import init_model
    from sapiens2.deploy.bundle import write_bundle
    from sapiens2.hub.model_zoo import resolve_model
    root = tmp_path_factory.mktemp('bundles')
    torch.manual_seed(0)
    seg = init_model(str(SEG), device='cpu')
    torch.save(seg.state_dict(), root / 'seg.pth')
    out = dict(pose=(root / 'pose', *resolve_model('pose-tiny')), seg=(root / 'seg', str(SEG), str(root / 'seg.pth')))
    for task, (folder, config, checkpoint) in out.items():
        folder.mkdir()
        write_bundle(seg if task == 'seg' else init_model(config, checkpoint, device='cpu'), str(folder))
    return out
