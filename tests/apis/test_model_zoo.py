"""Model aliases resolve to a repository config and a local checkpoint; nothing is downloaded."""
import os.path as osp

import pytest

from sapiens2.apis import model_zoo


def test_alias_resolves_config_and_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setenv('SAPIENS2_CHECKPOINT_ROOT', str(tmp_path))
    (tmp_path / 'pose').mkdir()
    ckpt = tmp_path / 'pose' / 'sapiens2_1b_pose.safetensors'
    ckpt.write_bytes(b'')
    config, checkpoint = model_zoo.resolve_model('pose-1b')
    assert osp.basename(config).startswith('sapiens2_1b_pose_') and osp.isfile(config)
    assert checkpoint == str(ckpt)
    assert model_zoo.resolve_model('pose-1b', 'mine.pth')[1] == 'mine.pth'


def test_missing_checkpoint_and_unknown_alias_explain_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv('SAPIENS2_CHECKPOINT_ROOT', str(tmp_path))
    with pytest.raises(FileNotFoundError, match='SAPIENS2_CHECKPOINT_ROOT'):
        model_zoo.find_checkpoint('seg', '0.4b')
    with pytest.raises(ValueError, match='unknown model alias'):
        model_zoo.parse_alias('pose-3b')
    with pytest.raises(FileNotFoundError, match='neither a config file nor an alias'):
        model_zoo.resolve_model('nothing.py')


def test_default_checkpoint_root(monkeypatch):
    monkeypatch.delenv('SAPIENS2_CHECKPOINT_ROOT', raising=False)
    assert model_zoo.checkpoint_root() == osp.expanduser('~/.cache/sapiens2/checkpoints')
