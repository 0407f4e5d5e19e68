"""Every entry point that takes a checkpoint resolves Hub references and model aliases offline, and loads strictly.

Each check runs in a subprocess whose environment points huggingface_hub at a Hub cache in a temporary folder
(HF_HUB_CACHE, HF_HOME) with HF_HUB_OFFLINE=1: huggingface_hub reads them when it is imported, so they cannot be
changed in this process. ``$SAPIENS2_MODEL_ZOO`` points ``seg-0.4b`` at the nano seg config (weights of that size are
in the cache) and adds a ``toy-nano`` alias for the engine's toy config.
"""
import io
import json
import os.path as osp
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch

from sapiens2.engine.checkpoint import load_weights, save_weights
from tests.hub.fake_hub import REVISION, add_snapshot, offline_env, sapiens2_config

REPO = Path(__file__).resolve().parents[2]
SEG_NANO = 'sapiens2::seg/sapiens2_nano_seg_synthhumans-128x96.py'
TOY_CONFIG = str(REPO / 'tests' / 'data' / 'toy_config.py')
TOY_URI = f'hf://hub-test/toy-nano@{REVISION}/toy.safetensors'
pytestmark = pytest.mark.slow


def _nano_backbone_state(seed: int, **kwargs) -> dict:
    from sapiens2.models import Sapiens2
    torch.manual_seed(seed)
    backbone = Sapiens2(arch='sapiens2_nano', **kwargs)
    backbone.init_weights()
    return backbone.state_dict()


@pytest.fixture(scope='module')
def hub(tmp_path_factory) -> dict:
    from sapiens2.apis import init_model
    root = tmp_path_factory.mktemp('hub')
    cache, home = str(root / 'cache'), str(root / 'home')
    torch.manual_seed(0)
    seg = init_model(SEG_NANO, device='cpu').state_dict()
    add_snapshot(cache, 'facebook/sapiens2-seg-0.4b', {
        'sapiens2_0.4b_seg.safetensors': seg,
        'config.json': sapiens2_config(patch_size=8, image_size=(128, 96),
                                       architecture='Sapiens2ForSemanticSegmentation', num_labels=29)})
    pretrain = _nano_backbone_state(1, img_size=(32, 32))
    add_snapshot(cache, 'facebook/sapiens2-pretrain-0.4b', {'model.safetensors': pretrain,
                                                            'config.json': sapiens2_config()})
    toy = {f'backbone.{k}': v for k, v in _nano_backbone_state(2, img_size=(32, 32)).items()}
    toy.update({'head.weight': torch.randn(1, 64), 'head.bias': torch.randn(1)})
    add_snapshot(cache, 'hub-test/toy-nano', {'toy.safetensors': toy})
    detector = io.BytesIO()
    torch.save({'state_dict': {'bbox_head.w': torch.ones(1)}, 'meta': {}}, detector)
    add_snapshot(cache, 'facebook/sapiens-pose-bbox-detector', {'rtmdet_m.pth': detector.getvalue()})
    table = root / 'model_zoo.json'
    table.write_text(json.dumps({'models': [
        {'alias': 'seg-0.4b', 'config': SEG_NANO},
        {'alias': 'toy-nano', 'repo': 'hub-test/toy-nano', 'files': ['toy.safetensors'], 'config': TOY_CONFIG}]}))
    for name, state in (('seg', seg), ('pretrain', pretrain), ('toy', toy)):
        save_weights(state, str(root / f'{name}.safetensors'))
    env = offline_env(cache, home, SAPIENS2_MODEL_ZOO=str(table), PYTHONPATH=str(REPO / 'tests' / 'data'),
                      OMP_NUM_THREADS='1')
    return dict(root=root, env=env, seg=seg, toy=toy)


def run(hub: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=REPO, env=hub['env'], capture_output=True, text=True,
                          timeout=600)


def same(state: dict, expected: dict) -> bool:
    return sorted(state) == sorted(expected) and all(torch.equal(state[k], expected[k]) for k in expected)


DRIVER = '''
import json, sys
import numpy as np, torch
from mmengine.runner.checkpoint import CheckpointLoader
from safetensors.torch import load_file
from sapiens2.apis import Sapiens2Inferencer
from sapiens2.engine.checkpoint import load_weights
from sapiens2.models import Sapiens2

seg, pretrain = load_file(sys.argv[1]), load_file(sys.argv[2])
same = lambda model, expected, prefix='': all(torch.equal(v, expected[prefix + k]) for k, v in
                                              model.state_dict().items())
out = {}
backbone = Sapiens2(arch='sapiens2_nano', img_size=(32, 32),
                    init_cfg=dict(type='Pretrained', checkpoint='pretrain-0.4b'))
backbone.init_weights()
out['init_cfg alias'] = same(backbone, pretrain)
backbone = Sapiens2(arch='sapiens2_nano', img_size=(128, 96), patch_size=8,
                    init_cfg=dict(type='Pretrained', checkpoint='hf://facebook/sapiens2-seg-0.4b', prefix='backbone.'))
backbone.init_weights()
out['init_cfg hf://'] = same(backbone, seg, 'backbone.')
inferencer = Sapiens2Inferencer('seg-0.4b', device='cpu')
out['Sapiens2Inferencer'] = same(inferencer.tasks[0].model, seg)
labels = inferencer(np.zeros((60, 40, 3), np.uint8), show_progress=False)[0]['seg']['labels']
out['Sapiens2Inferencer ran'] = labels.shape == (60, 40)
out['mmengine CheckpointLoader'] = sorted(CheckpointLoader.load_checkpoint('pose-bbox-detector')['state_dict'])
for name in ('hf://facebook/sapiens2-missing-1b', 'hf://facebook/sapiens2-seg-0.4b/nope.safetensors'):
    try:
        load_weights(name)
    except FileNotFoundError as err:
        out[name] = str(err)
print('RESULT ' + json.dumps(out))
'''


def test_init_cfg_inferencer_mmengine_loader_and_errors(hub):
    proc = run(hub, '-c', DRIVER, str(hub['root'] / 'seg.safetensors'), str(hub['root'] / 'pretrain.safetensors'))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.split('RESULT ', 1)[1])
    assert out['init_cfg alias'] and out['init_cfg hf://']  # the alias found the transformers-format model.safetensors
    assert out['Sapiens2Inferencer'] and out['Sapiens2Inferencer ran']
    assert out['mmengine CheckpointLoader'] == ['bbox_head.w']  # what mmdet's init_detector uses
    missing_repo = out['hf://facebook/sapiens2-missing-1b']
    assert 'facebook/sapiens2-missing-1b' in missing_repo and 'the repository is not in the cache' in missing_repo
    assert 'offline mode (HF_HUB_OFFLINE): on' in missing_repo and hub['env']['HF_HUB_CACHE'] in missing_repo
    missing_file = out['hf://facebook/sapiens2-seg-0.4b/nope.safetensors']
    assert 'tried nope.safetensors' in missing_file
    assert 'is cached with config.json, sapiens2_0.4b_seg.safetensors' in missing_file


def test_train_load_from_hub_reference(hub, tmp_path):
    proc = run(hub, 'tools/train.py', TOY_CONFIG, '--work-dir', str(tmp_path), '--cfg-options', f'load_from={TOY_URI}',
               'train_cfg.max_iters=2', 'optim_wrapper.optimizer.lr=0.0')
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f'Load checkpoint from {TOY_URI}' in proc.stdout + proc.stderr
    assert same(load_weights(str(tmp_path / 'iter_2.pth')), hub['toy'])  # lr 0: the loaded weights, unchanged


def test_tools_test_with_an_alias(hub, tmp_path):
    proc = run(hub, 'tools/test.py', 'toy-nano', '--work-dir', str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert 'mse' in proc.stdout + proc.stderr and 'snapshots' in proc.stdout + proc.stderr


def test_sapiens2_infer_with_task_and_size(hub, tmp_path):
    image = tmp_path / 'photo.jpg'
    cv2.imwrite(str(image), np.random.default_rng(0).integers(0, 255, (80, 60, 3), dtype=np.uint8))
    proc = run(hub, 'tools/infer.py', str(image), '--task', 'seg', '--size', '0.4b', '--out', str(tmp_path / 'out'),
               '--device', 'cpu', '--quiet')
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert 'seg: results in' in proc.stdout and (tmp_path / 'out' / 'seg' / 'photo.png').is_file()


def test_convert_from_a_hub_reference(hub, tmp_path):
    dst = str(tmp_path / 'seg.pth')
    proc = run(hub, 'tools/convert_checkpoint.py', 'hf://facebook/sapiens2-seg-0.4b', dst)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert same(load_weights(dst), hub['seg'])


def test_export_an_alias(hub, tmp_path):
    prefix = str(tmp_path / 'seg')
    proc = run(hub, 'tools/deploy/export.py', 'seg-0.4b', '--out', prefix, '--formats', 'pt2')
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert osp.isfile(osp.join(prefix, 'model.pt2')) and json.loads(Path(prefix, 'sapiens2_bundle.json').read_text())
