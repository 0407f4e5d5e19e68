"""Each change sapiens2 makes to MMEngine's behaviour (sapiens2.adaptations) does what it says, once."""
import os.path as osp

import pytest
import torch

import sapiens2
from sapiens2 import adaptations


def test_every_adaptation_is_applied_on_the_pinned_stack():
    assert set(adaptations.applied()) == {a.name for a in adaptations.ADAPTATIONS}
    for line in adaptations.describe().splitlines():
        assert '[applied]' in line, line


def test_apply_is_idempotent():
    from mmengine.config import Config
    patched = Config._dict_to_config_dict
    adaptations.apply_adaptations()
    assert Config._dict_to_config_dict is patched


def test_a_version_it_was_not_written_for_is_skipped_with_a_warning(monkeypatch):
    calls = []
    fake = adaptations.Adaptation('probe', 'mmengine', ('0.0.1', ), 'a probe.', lambda: calls.append(1))
    monkeypatch.setattr(adaptations, 'ADAPTATIONS', [fake])
    with pytest.warns(UserWarning, match="'probe' was written for mmengine 0.0.1 but 0.10.7 is installed"):
        adaptations.apply_adaptations()
    assert calls == [] and 'probe' not in adaptations.applied()
    monkeypatch.delitem(adaptations._APPLIED, 'probe')


def test_version_patterns():
    assert adaptations._version_matches('0.10.7', ('0.10.*', ))
    assert not adaptations._version_matches('0.11.0', ('0.10.*', '0.10.7'))


def test_mmengine_checkpoint_loader_reads_safetensors(tmp_path):
    from mmengine.runner.checkpoint import CheckpointLoader
    from safetensors.torch import save_file
    path = str(tmp_path / 'w.safetensors')
    save_file({'a': torch.ones(2)}, path)
    checkpoint = CheckpointLoader.load_checkpoint(path, map_location='cpu')
    assert torch.equal(checkpoint['state_dict']['a'], torch.ones(2))
    assert CheckpointLoader._schemes['hf://'] is CheckpointLoader._schemes['']  # Hub references: the same loader


def test_local_file_backend_is_atomic(tmp_path):
    from mmengine.fileio import get_file_backend

    from sapiens2.engine.atomic_save import AtomicLocalBackend
    path = str(tmp_path / 'x.bin')
    backend = get_file_backend(path)
    assert isinstance(backend, AtomicLocalBackend)
    backend.put(b'abc', path)
    assert open(path, 'rb').read() == b'abc'


def test_installed_path_of_an_editable_package_is_its_source_folder():
    import mmengine.config.config as config_module
    path = config_module.get_installed_path('sapiens2')
    assert osp.samefile(path, osp.dirname(sapiens2.__file__))
    assert osp.isfile(osp.join(path, '.mim', 'configs', 'pose', 'sapiens2_1b_pose_goliath-1024x768.py'))


@pytest.mark.parametrize('name, scope', [('pose/sapiens2_nano_pose_synthhumans-128x96.py', 'mmpose'),
                                         ('seg/sapiens2_nano_seg_synthhumans-128x96.py', 'mmseg'),
                                         ('normal/sapiens2_nano_normal_synthhumans-128x96.py', 'sapiens2')])
def test_sapiens2_bases_keep_the_scope_they_declare(tmp_path, name, scope):
    from mmengine.config import Config
    user = tmp_path / 'mine.py'
    user.write_text(f"_base_ = ['sapiens2::{name}']\n")
    cfg = Config.fromfile(str(user))
    assert cfg.model._scope_ == scope
    assert cfg.train_dataloader.dataset._scope_ == scope
