import os
import os.path as osp
import subprocess
import sys

import pytest
import torch
from safetensors.torch import save_file

from sapiens2.engine import CheckpointMismatchError, load_model_weights, load_weights, save_weights
from sapiens2.models import Sapiens2

REPO = osp.abspath(osp.join(osp.dirname(__file__), '..', '..'))
TOY_CONFIG = osp.join(REPO, 'tests', 'data', 'toy_config.py')


def nano(**kwargs):
    model = Sapiens2(arch='sapiens2_nano', img_size=(32, 32), **kwargs)
    model.init_weights()
    return model


@pytest.mark.parametrize('suffix', ['.safetensors', '.pth'])
def test_save_and_load_round_trip(tmp_path, suffix):
    model = nano()
    path = str(tmp_path / f'weights{suffix}')
    save_weights(model.state_dict(), path)
    loaded = load_weights(path)
    assert sorted(loaded) == sorted(model.state_dict())
    for key, value in model.state_dict().items():
        assert loaded[key].dtype == value.dtype
        assert torch.equal(loaded[key], value)


def test_wrappers_are_unwrapped(tmp_path):
    state = nano().state_dict()
    for wrapper in ('state_dict', 'model'):
        torch.save({wrapper: state, 'meta': {}}, tmp_path / 'w.pth')
        assert list(load_weights(str(tmp_path / 'w.pth'))) == list(state)
    torch.save({'teacher': {f'backbone.{k}': v for k, v in state.items()}}, tmp_path / 't.pth')
    assert list(load_weights(str(tmp_path / 't.pth'))) == list(state)


def test_strict_load_lists_mismatched_keys():
    model = nano()
    state = dict(model.state_dict())
    state['blocks.0.attn.wq_renamed.weight'] = state.pop('blocks.0.attn.wq.weight')
    with pytest.raises(CheckpointMismatchError) as err:
        load_model_weights(nano(), state)
    assert 'blocks.0.attn.wq.weight' in str(err.value) and 'wq_renamed' in str(err.value)
    missing, unexpected = load_model_weights(nano(), state, strict=False)
    assert missing == ['blocks.0.attn.wq.weight'] and unexpected == ['blocks.0.attn.wq_renamed.weight']


def test_task_checkpoint_backbone_prefix_and_head_renaming():
    backbone = nano()
    task_state = {f'backbone.{k}': v for k, v in backbone.state_dict().items()}
    task_state['decode_head.conv.weight'] = torch.ones(2, 2)
    target = nano()
    load_model_weights(target, task_state, prefix='backbone.')
    assert torch.equal(target.blocks[0].attn.wq.weight, backbone.blocks[0].attn.wq.weight)

    class PoseLike(torch.nn.Module):

        def __init__(self):
            super().__init__()
            self.backbone = nano()
            self.head = torch.nn.Module()
            self.head.conv = torch.nn.Linear(2, 2, bias=False)

    pose = PoseLike()
    load_model_weights(pose, task_state)
    assert torch.equal(pose.head.conv.weight, torch.ones(2, 2))


def test_corrupt_and_missing_files_give_clear_errors(tmp_path):
    path = tmp_path / 'bad.safetensors'
    save_file({'x': torch.zeros(1000)}, str(path))
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ValueError, match='truncated or corrupt'):
        load_weights(str(path))
    with pytest.raises(FileNotFoundError, match='does not exist'):
        load_weights(str(tmp_path / 'nope.pth'))
    (tmp_path / 'trunc.pth').write_bytes(b'PK\x03\x04 not a zip')
    with pytest.raises(ValueError, match='truncated or corrupt'):
        load_weights(str(tmp_path / 'trunc.pth'))


def test_init_cfg_pretrained_is_strict(tmp_path):
    path = str(tmp_path / 'pretrain.safetensors')
    source = nano()
    save_weights(source.state_dict(), path)
    model = Sapiens2(arch='sapiens2_nano', img_size=(32, 32), init_cfg=dict(type='Pretrained', checkpoint=path))
    model.init_weights()
    assert torch.equal(model.storage_tokens, source.storage_tokens)

    state = dict(source.state_dict())
    state['ln1.weight_renamed'] = state.pop('ln1.weight')
    save_weights(state, path)
    bad = Sapiens2(arch='sapiens2_nano', img_size=(32, 32), init_cfg=dict(type='Pretrained', checkpoint=path))
    with pytest.raises(CheckpointMismatchError, match='ln1.weight'):
        bad.init_weights()
    relaxed = Sapiens2(arch='sapiens2_nano', img_size=(32, 32),
                       init_cfg=dict(type='Pretrained', checkpoint=path, strict=False))
    relaxed.init_weights()
    assert torch.equal(relaxed.storage_tokens, source.storage_tokens)


def test_registered_schemes_resolve_in_our_loader_and_in_mmengine(tmp_path, monkeypatch):
    from mmengine.runner.checkpoint import CheckpointLoader

    from sapiens2.engine import checkpoint as checkpoint_module
    target = str(tmp_path / 'resolved.safetensors')
    save_weights({'w': torch.ones(2)}, target)
    monkeypatch.setitem(checkpoint_module._CHECKPOINT_SCHEMES, 'memo://', lambda name: target)
    assert checkpoint_module.resolve_checkpoint_path('memo://anything') == target
    assert torch.equal(load_weights('memo://anything')['w'], torch.ones(2))
    assert torch.equal(CheckpointLoader.load_checkpoint('memo://anything')['state_dict']['w'], torch.ones(2))

    existing = str(tmp_path / 'existing.safetensors')
    save_weights({'w': torch.zeros(2)}, existing)
    monkeypatch.setitem(checkpoint_module._CHECKPOINT_SCHEMES, str(tmp_path), lambda name: target)
    assert checkpoint_module.resolve_checkpoint_path(existing) == existing  # an existing file wins over a scheme
    assert checkpoint_module.resolve_checkpoint_path(str(tmp_path / 'missing.pth')) == target


def _run_tool(*args, cwd):
    env = dict(os.environ, PYTHONPATH=osp.join(REPO, 'tests', 'data'))
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_train_resume_load_from_and_test_entry_points(tmp_path):
    """Trains 2 iterations, resumes to 4; load_from and tools/test.py are strict; .safetensors accepted."""
    work = str(tmp_path / 'work')
    first = _run_tool(osp.join(REPO, 'tools', 'train.py'), TOY_CONFIG, '--work-dir', work, '--cfg-options',
                      'train_cfg.max_iters=2', cwd=REPO)
    assert first.returncode == 0, first.stderr[-3000:]
    ckpt2 = osp.join(work, 'iter_2.pth')
    assert osp.isfile(ckpt2)

    resumed = _run_tool(osp.join(REPO, 'tools', 'train.py'), TOY_CONFIG, '--work-dir', work, '--resume', cwd=REPO)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert 'resumed' in (resumed.stdout + resumed.stderr).lower()
    state4 = load_weights(osp.join(work, 'iter_4.pth'))
    assert not torch.equal(state4['backbone.ln1.weight'], load_weights(ckpt2)['backbone.ln1.weight'])

    st_path = str(tmp_path / 'model.safetensors')
    save_weights(state4, st_path)
    tested = _run_tool(osp.join(REPO, 'tools', 'test.py'), TOY_CONFIG, st_path, '--work-dir', work, cwd=REPO)
    assert tested.returncode == 0, tested.stderr[-3000:]
    assert 'mse' in tested.stdout + tested.stderr

    renamed = dict(state4)
    renamed['head.weight_renamed'] = renamed.pop('head.weight')
    bad_path = str(tmp_path / 'renamed.safetensors')
    save_weights(renamed, bad_path)
    failed = _run_tool(osp.join(REPO, 'tools', 'test.py'), TOY_CONFIG, bad_path, '--work-dir', work, cwd=REPO)
    assert failed.returncode != 0 and 'CheckpointMismatchError' in failed.stderr
    assert 'head.weight' in failed.stderr
    failed_load = _run_tool(osp.join(REPO, 'tools', 'train.py'), TOY_CONFIG, '--work-dir', str(tmp_path / 'w2'),
                            '--cfg-options', f'load_from={bad_path}', cwd=REPO)
    assert failed_load.returncode != 0 and 'CheckpointMismatchError' in failed_load.stderr


def test_convert_checkpoint_tool_round_trip(tmp_path):
    source = {f'backbone.{k}': v for k, v in nano(use_tokenizer=False).state_dict().items()}
    source['head.conv.weight'] = torch.randn(3, 3)
    src = str(tmp_path / 'official.safetensors')
    save_weights(source, src)
    tool = osp.join(REPO, 'tools', 'convert_checkpoint.py')
    to_pth = _run_tool(tool, src, str(tmp_path / 'model.pth'), '--rename', 'head.=decode_head.', cwd=REPO)
    assert to_pth.returncode == 0, to_pth.stderr
    back = _run_tool(tool, str(tmp_path / 'model.pth'), str(tmp_path / 'back.safetensors'), '--rename',
                     'decode_head.=head.', cwd=REPO)
    assert back.returncode == 0, back.stderr
    pth = load_weights(str(tmp_path / 'model.pth'))
    assert 'decode_head.conv.weight' in pth and 'head.conv.weight' not in pth
    restored = load_weights(str(tmp_path / 'back.safetensors'))
    assert sorted(restored) == sorted(source)
    for key, value in source.items():
        assert restored[key].dtype == value.dtype and torch.equal(restored[key], value)
