"""``--compile`` / ``Sapiens2Inferencer(compile=True)``: the backbone runs compiled with fused q/k/v projections and
computes what the eager model computes; bundles (ONNX Runtime) refuse it in one line before anything is built."""
from pathlib import Path

import cv2
import numpy as np
import pytest
from torch import nn

from sapiens2.apis import Sapiens2Inferencer
from sapiens2.apis.backends import plan_model
from sapiens2.apis.cli import main
from sapiens2.apis.tasks import compile_backbone

REPO = Path(__file__).resolve().parents[2]
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')


def test_compiled_inferencer_computes_the_eager_result():
    """The shipped tiny pose model on a rendered person (peaked heatmaps: random weights decode noise)."""
    from sapiens2.datasets.synthhumans.render import render_image
    from sapiens2.datasets.synthhumans.scene import sample_scene
    image = render_image(sample_scene(np.random.default_rng(0), (256, 192)))
    results = {}
    for compile in (False, True):
        inferencer = Sapiens2Inferencer('pose-tiny', device='cpu', dtype='fp32', compile=compile)
        backbone = inferencer.tasks[0].model.backbone
        assert (backbone.block_runner is not None) == compile and backbone.fuse_qkv == compile
        results[compile] = inferencer(image, show_progress=False)[0]['pose']
    assert np.abs(results[True]['keypoint_scores'] - results[False]['keypoint_scores']).max() < 1e-4
    confident = results[False]['keypoint_scores'] > 0.3
    assert confident.sum() > 50
    assert np.abs(results[True]['keypoints'] - results[False]['keypoints'])[confident].max() < 0.05  # pixels


def test_bundles_and_models_without_a_sapiens2_backbone_refuse_compile(tmp_path, capsys):
    bundle = tmp_path / 'bundle'  # a folder is a bundle: refused before it is read
    bundle.mkdir()
    with pytest.raises(ValueError, match='runs with onnxruntime .*leave out --compile'):
        plan_model(str(bundle), None, 'cpu', 'fp32', compile=True)
    cv2.imwrite(str(tmp_path / 'x.png'), np.zeros((8, 8, 3), np.uint8))  # a readable input: the model is refused
    assert main([str(tmp_path / 'x.png'), '--model', str(bundle), '--compile', '--out', str(tmp_path / 'o')]) != 0
    err = capsys.readouterr().err.strip()
    assert err.startswith('sapiens2-infer: error: ') and 'leave out --compile' in err and '\n' not in err
    with pytest.raises(ValueError, match='lacks; leave out compile'):
        compile_backbone(nn.Linear(2, 2))
