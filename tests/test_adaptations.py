"""Each change sapiens2 makes to MMEngine's behaviour (sapiens2.adaptations) does what it says, once."""
import os.path as osp

import numpy as np
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


def test_pkg_resources_notice_is_hidden_only_from_mmengine():
    import warnings
    message = 'pkg_resources is deprecated as an API. See https://setuptools.pypa.io/...'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')  # instead of pytest's filters
        adaptations._silence_mmengine_pkg_resources_warning()
        for module in ('mmengine.utils.package_utils', 'importlib', 'someone.else', 'mmengine.utils.package_utils2'):
            warnings.warn_explicit(message, UserWarning, f'{module}.py', 1, module=module)
        warnings.warn_explicit('another warning', UserWarning, 'x.py', 1, module='mmengine.utils.package_utils')
    assert [(str(w.message)[:14], w.filename) for w in caught] == [
        ('pkg_resources ', 'someone.else.py'), ('pkg_resources ', 'mmengine.utils.package_utils2.py'),
        ('another warnin', 'x.py')]


@pytest.mark.parametrize('adapted', [False, True])
def test_mmseg_build_loss_notice_is_hidden(adapted):
    import warnings

    from mmseg.models.builder import build_loss
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')  # instead of pytest's filters
        if adapted:
            adaptations._silence_mmseg_build_loss_notice()
        build_loss(dict(type='mmseg.CrossEntropyLoss'))
    assert bool([w for w in caught if 'build_loss' in str(w.message)]) is not adapted


def pose_sample(num_keypoints: int, height: int = 96, width: int = 80):
    from mmengine.structures import InstanceData
    from mmpose.structures import PoseDataSample
    rng = np.random.default_rng(0)
    sample = PoseDataSample()
    sample.pred_instances = InstanceData(
        keypoints=rng.uniform([5, 5], [width - 5, height - 5], (1, num_keypoints, 2)).astype(np.float32),
        keypoint_scores=np.ones((1, num_keypoints), np.float32),
        bboxes=np.array([[2, 2, width - 2, height - 2]], np.float32), bbox_scores=np.ones(1, np.float32))
    return sample


@pytest.mark.parametrize('metainfo', ['sapiens2', 'mmpose_coco'])
def test_pose_visualizer_draws_keypoints_on_numpy_2_4(metainfo):
    import mmpose
    from mmpose.datasets.datasets.utils import parse_pose_metainfo
    from mmpose.visualization import PoseLocalVisualizer

    from sapiens2.datasets.pose import keypoints308_metainfo
    coco = osp.join(osp.dirname(mmpose.__file__), '.mim', 'configs', '_base_', 'datasets', 'coco.py')
    meta = parse_pose_metainfo(keypoints308_metainfo() if metainfo == 'sapiens2' else dict(from_file=coco))
    visualizer = PoseLocalVisualizer(name=f'probe_{metainfo}', radius=3)
    visualizer.set_dataset_meta(meta)
    image = np.zeros((96, 80, 3), np.uint8)
    drawn = visualizer.add_datasample('probe', image, pose_sample(meta['num_keypoints']), draw_gt=False,
                                      draw_bbox=True, kpt_thr=0.0, show=False)
    assert drawn.shape == image.shape and (drawn > 0).sum() > 100


def test_runner_logs_the_config_path_at_info_and_the_config_at_debug(tmp_path, monkeypatch):
    from mmengine.config import Config
    from mmengine.runner import Runner
    monkeypatch.syspath_prepend(osp.join(osp.dirname(__file__), 'data'))
    toy = osp.join(osp.dirname(__file__), 'data', 'toy_config.py')
    logs = {}
    for level in ('INFO', 'DEBUG'):
        cfg = Config.fromfile(toy)
        cfg.work_dir, cfg.log_level = str(tmp_path / level), level
        cfg.experiment_name = f'config_log_{level}'
        runner = Runner.from_cfg(cfg)
        logs[level] = open(runner.logger.handlers[-1].baseFilename).read()
        assert osp.isfile(osp.join(cfg.work_dir, 'toy_config.py'))  # the config is still written to the work dir
    path_line = f"Config: {osp.join(str(tmp_path / 'INFO'), 'toy_config.py')}"
    assert path_line in logs['INFO'] and 'Config:\n' not in logs['INFO']
    assert "Config:\n" in logs['DEBUG'] and "type='ToySapiens2Regressor'" in logs['DEBUG']
