"""The model zoo table: released repositories, rows added by projects and users, local files, config aliases."""
import json
import os.path as osp
from pathlib import Path

import pytest
import torch

from sapiens2.config.packaged import config_path
from sapiens2.hub import model_zoo
from sapiens2.hub.download import HubCheckpointNotFoundError
from sapiens2.hub.resolve import resolve_alias
from tests.hub.fake_hub import add_snapshot

RELEASED = ([f'facebook/sapiens2-pretrain-{s}' for s in ('0.1b', '0.4b', '0.8b', '1b', '5b', '1b-4k')] +
            [f'facebook/sapiens2-{t}-{s}' for t in ('pose', 'seg', 'normal', 'pointmap')
             for s in ('0.4b', '0.8b', '1b', '5b')] +
            ['facebook/sapiens2-matting-1b', 'facebook/sapiens-pose-bbox-detector'])


def write_table(path, rows) -> str:
    path.write_text(json.dumps({'models': rows}))
    return str(path)


def test_every_released_repository_has_an_alias_and_every_config_exists():
    zoo = model_zoo.model_zoo()
    assert sorted({e.repo for e in zoo.values() if not e.packaged}) == sorted(RELEASED)
    for alias in ('pose-1b', 'seg-0.4b', 'normal-5b', 'pointmap-1b', 'pretrain-0.1b', 'pretrain-1b-4k', 'matting-1b',
                  'pose-bbox-detector'):
        assert alias in zoo
    for entry in zoo.values():
        if entry.config:
            assert osp.isfile(config_path(entry.config)), entry.alias
    pose = zoo['pose-1b']
    assert pose.files == ('sapiens2_1b_pose.safetensors', 'model.safetensors') and pose.task == 'pose'
    assert zoo['pretrain-1b-4k'].files[0] == 'sapiens2_1b_4k_pretrain.safetensors'
    assert model_zoo.tasks() == ['albedo', 'matting', 'normal', 'pointmap', 'pose', 'seg']
    assert model_zoo.sizes() == ['0.4b', '0.8b', '1b', '5b', 'tiny']  # tiny: the demo models in the package


def test_a_project_adds_the_config_of_a_released_repository(tmp_path, monkeypatch):
    configs = tmp_path / 'configs'
    (configs / 'matting').mkdir(parents=True)
    (configs / 'matting' / 'sapiens2_1b_matting.py').write_text('model = dict()\n')
    write_table(configs / 'matting' / 'model_zoo.json',
                [{'alias': 'matting-1b', 'config': 'sapiens2::matting/sapiens2_1b_matting.py'}])
    monkeypatch.setattr('sapiens2.config.packaged.config_dir', lambda: str(configs))
    entry = model_zoo.get_entry('matting-1b')
    assert entry.repo == 'facebook/sapiens2-matting-1b' and entry.config == 'sapiens2::matting/sapiens2_1b_matting.py'
    assert len(entry.sources) == 2 and 'matting' in model_zoo.tasks()

    write_table(configs / 'matting' / 'model_zoo.json',
                [{'alias': 'matting-1b', 'repo': 'someone/else'}])
    with pytest.raises(ValueError, match="repo is 'facebook/sapiens2-matting-1b' in .* but 'someone/else' in"):
        model_zoo.model_zoo()


def test_user_tables_override_and_template_rows_expand(tmp_path, monkeypatch):
    table = write_table(tmp_path / 'mine.json', [
        {'alias': 'seg-1b', 'revision': 'v2'},
        {'alias': 'mine-{size}', 'sizes': ['1b', '5b'], 'repo': 'me/mine-{size}', 'files': ['w_{size}.pth']}])
    monkeypatch.setenv('SAPIENS2_MODEL_ZOO', table)
    assert model_zoo.get_entry('seg-1b').uri() == 'hf://facebook/sapiens2-seg-1b@v2'
    mine = model_zoo.get_entry('mine-5b')
    assert (mine.repo, mine.files, mine.size) == ('me/mine-5b', ('w_5b.pth', ), '5b')

    write_table(tmp_path / 'mine.json', [{'alias': 'x', 'repo': 'a/b', 'filez': ['y']}])
    with pytest.raises(ValueError, match=r"unknown fields \['filez'\]"):
        model_zoo.model_zoo()
    write_table(tmp_path / 'mine.json', [{'alias': 'x', 'repo': 'a/b'}])
    with pytest.raises(ValueError, match="alias 'x' has no files"):
        model_zoo.model_zoo()


def test_a_packaged_row_resolves_to_the_file_in_the_package(tmp_path, monkeypatch):
    table = write_table(tmp_path / 'mine.json', [
        {'alias': 'mine-tiny', 'packaged': 'demo_models/mine.safetensors', 'task': 'pose', 'size': 'tiny'},
        {'alias': 'gone-tiny', 'packaged': 'demo_models/gone.safetensors'}])
    monkeypatch.setenv('SAPIENS2_MODEL_ZOO', table)
    package = tmp_path / 'package'
    (package / 'demo_models').mkdir(parents=True)
    (package / 'demo_models' / 'mine.safetensors').write_bytes(b'')
    monkeypatch.setattr(model_zoo, 'PACKAGE_DIR', str(package))
    entry = model_zoo.get_entry('mine-tiny')
    assert (entry.repo, entry.files) == ('', ('mine.safetensors', ))
    assert entry.uri() == str(package / 'demo_models' / 'mine.safetensors')
    assert resolve_alias('mine-tiny', local_files_only=True) == entry.uri()
    with pytest.raises(FileNotFoundError, match=r'gone-tiny .* names the packaged file .*gone.safetensors'):
        resolve_alias('gone-tiny')
    write_table(tmp_path / 'mine.json', [{'alias': 'both', 'packaged': 'demo_models/x.safetensors', 'repo': 'a/b'}])
    with pytest.raises(ValueError, match="alias 'both' has both a packaged file and a repository"):
        model_zoo.model_zoo()


def test_a_file_under_the_checkpoint_root_wins_over_the_hub(tmp_path, monkeypatch):
    root, cache = tmp_path / 'root', tmp_path / 'cache'
    (root / 'pose').mkdir(parents=True)
    monkeypatch.setenv('SAPIENS2_CHECKPOINT_ROOT', str(root))
    add_snapshot(str(cache), 'facebook/sapiens2-pose-1b', {'sapiens2_1b_pose.safetensors': {'w': torch.ones(1)}})
    from_hub = resolve_alias('pose-1b', cache_dir=str(cache), local_files_only=True)
    assert 'snapshots' in Path(from_hub).parts
    local = root / 'pose' / 'sapiens2_1b_keypoints308_goliath.safetensors'
    local.write_bytes(b'')
    assert resolve_alias('pose-1b', cache_dir=str(cache), local_files_only=True) == str(local)
    assert resolve_alias('work_dirs/missing.pth') == 'work_dirs/missing.pth'


def test_missing_alias_checkpoint_names_the_alias_and_both_fixes(tmp_path, monkeypatch):
    monkeypatch.setenv('SAPIENS2_CHECKPOINT_ROOT', str(tmp_path / 'root'))
    with pytest.raises(HubCheckpointNotFoundError) as err:
        resolve_alias('seg-0.4b', cache_dir=str(tmp_path), local_files_only=True)
    message = str(err.value)
    assert 'Model alias seg-0.4b (hf://facebook/sapiens2-seg-0.4b' in message and 'not in the cache' in message
    assert 'SAPIENS2_CHECKPOINT_ROOT' in message and str(tmp_path / 'root') in message


def test_resolve_model_gives_config_and_checkpoint_name(tmp_path):
    config, checkpoint = model_zoo.resolve_model('pose-1b')
    assert osp.basename(config) == 'sapiens2_1b_pose_goliath-1024x768.py' and osp.isfile(config)
    assert checkpoint == 'pose-1b'
    assert model_zoo.resolve_model('pose-1b', 'mine.pth')[1] == 'mine.pth'
    with pytest.raises(ValueError, match='checkpoint without a model config'):
        model_zoo.resolve_model('pretrain-1b')
    with pytest.raises(FileNotFoundError, match='Config file nothing.py does not exist'):
        model_zoo.resolve_model('nothing.py')
    with pytest.raises(FileNotFoundError, match="unknown model alias 'pose-9b'"):
        model_zoo.resolve_model('pose-9b')
    with pytest.raises(ValueError, match=r"no released pose model of size 3b; sizes with a pose model: \['0.4b'"):
        model_zoo.alias_for('pose', '3b')
    assert model_zoo.alias_for('seg', '1b') == 'seg-1b'


def test_default_checkpoint_root(monkeypatch):
    monkeypatch.delenv('SAPIENS2_CHECKPOINT_ROOT', raising=False)
    assert model_zoo.checkpoint_root() == osp.expanduser('~/.cache/sapiens2/checkpoints')
