"""Each change sapiens2 makes to MMEngine's behaviour (sapiens2.adaptations) does what it says, once."""
import logging
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


def test_local_file_backend_is_atomic(tmp_path):
    from mmengine.fileio import get_file_backend

    from sapiens2.engine.work_dir_backend import AtomicLocalBackend
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


def test_torchs_no_cuda_runtime_notice_is_hidden_and_its_other_lines_kept(caplog):
    adaptations.apply_adaptations()
    logger = logging.getLogger('torch.utils.cpp_extension')
    with caplog.at_level(logging.WARNING, logger='torch.utils.cpp_extension'):
        logger.warning("No CUDA runtime is found, using CUDA_HOME='%s'", 'cuda-home')
        logger.warning('Something else about extensions')
    assert [r.getMessage() for r in caplog.records] == ['Something else about extensions']


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


def test_last_checkpoint_record_is_written_atomically(tmp_path, monkeypatch):
    import mmengine.hooks.checkpoint_hook as checkpoint_hook

    from sapiens2.engine import work_dir_backend
    from sapiens2.utils import atomic_save
    assert checkpoint_hook.open is work_dir_backend.open_writing_atomically
    record = tmp_path / 'last_checkpoint'
    with checkpoint_hook.open(str(record), 'w') as f:
        f.write(str(tmp_path / 'iter_3.pth'))
    assert record.read_text() == str(tmp_path / 'iter_3.pth')

    def die(src, dst):
        raise OSError('killed before the commit')

    monkeypatch.setattr(atomic_save.os, 'replace', die)
    with pytest.raises(OSError, match='killed before the commit'):
        with checkpoint_hook.open(str(record), 'w') as f:
            f.write(str(tmp_path / 'iter_6.pth'))
    assert record.read_text() == str(tmp_path / 'iter_3.pth') and sorted(p.name for p in tmp_path.iterdir()) == [
        'last_checkpoint']
    with checkpoint_hook.open(str(record)) as f:  # other modes are the builtin open
        assert f.read() == str(tmp_path / 'iter_3.pth')


class _RejectingDataset:
    """An MMEngine dataset of two samples whose pipeline rejects every one."""

    @staticmethod
    def build(test_mode: bool = False, reject=True):
        from mmengine.dataset import BaseDataset

        class Reject:
            def __call__(self, results):
                if reject is True:
                    return None
                raise reject

            def __repr__(self):
                return 'Reject()'

        class Probe(BaseDataset):
            def load_data_list(self):
                return [dict(img_path=f'data/{i}.png') for i in range(2)]

        return Probe(pipeline=[Reject()], test_mode=test_mode, max_refetch=5, serialize_data=False)


@pytest.mark.parametrize('test_mode', [False, True])
def test_a_dataset_rejecting_every_sample_names_it(test_mode):
    from sapiens2.engine.rejected_samples import NoValidSampleError
    with pytest.raises(NoValidSampleError, match=r'Probe\(\) with 2 samples: .*sample 0 \(img_path=data/0\.png\).*'
                       r'Reject\(\)'):
        _RejectingDataset.build(test_mode)[0]
    with pytest.raises(KeyError, match='a bug'):  # other errors of the pipeline are not touched
        _RejectingDataset.build(test_mode, reject=KeyError('a bug'))[0]


def test_image_loading_refuses_bombs_and_names_the_file(tmp_path, monkeypatch):
    import mmcv
    from mmcv.transforms import LoadImageFromFile
    from mmpose.datasets.transforms import LoadImage
    from PIL import Image

    from tests.reliability.catalogue import png_declaring
    path = tmp_path / 'big.png'
    path.write_bytes(png_declaring(30000, 30000))
    with pytest.raises(ValueError, match='decompression bomb'):
        mmcv.imfrombytes(path.read_bytes())
    for loader in (LoadImageFromFile(), LoadImage()):
        with pytest.raises(ValueError, match=rf'^cannot read image {path}: .*decompression bomb'):
            loader(dict(img_path=str(path)))
    path.write_bytes(png_declaring(3000, 3000))  # within the limit: decoded, and its missing data reported
    with pytest.raises(OSError, match=rf'^cannot read image {path}: the file is empty, truncated'):
        LoadImage()(dict(img_path=str(path)))
    monkeypatch.setattr(Image, 'MAX_IMAGE_PIXELS', 1000)  # the limit is Pillow's setting (twice it is refused)
    with pytest.raises(ValueError, match='decompression bomb'):
        LoadImageFromFile()(dict(img_path=str(path)))
    with pytest.raises(FileNotFoundError, match=rf'^image {tmp_path}/none\.png does not exist$'):
        LoadImage()(dict(img_path=str(tmp_path / 'none.png')))


def test_history_buffer_pickles_without_its_methods(tmp_path):
    import pickle

    from mmengine.logging import HistoryBuffer
    buffer = HistoryBuffer([1.0, 3.0], [1, 1])
    data = pickle.dumps(buffer)
    assert b'getattr' not in data and 'statistics_methods' not in buffer.__dict__
    restored = pickle.loads(data)
    assert restored.mean() == 2.0 and restored.statistics('max') == 3.0
    path = tmp_path / 'hub.pth'
    torch.save({'buffer': buffer}, path)
    assert sorted(torch.serialization.get_unsafe_globals_in_checkpoint(path)) == [
        'mmengine.logging.history_buffer.HistoryBuffer', 'numpy._core.multiarray._reconstruct', 'numpy.dtype',
        'numpy.ndarray']  # all allow-listed; no builtins.getattr


@pytest.fixture
def http_root(tmp_path, monkeypatch):
    """A local HTTP server over tmp_path/served; downloads go to a torch hub dir under tmp_path."""
    import functools
    import http.server
    import threading
    served = tmp_path / 'served'
    served.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv('TORCH_HOME', str(tmp_path / 'torch_home'))
    yield served, f'http://127.0.0.1:{server.server_address[1]}'
    server.shutdown()
    server.server_close()


def test_downloaded_checkpoints_go_through_the_safe_loader(http_root, tmp_path):
    from mmengine.runner.checkpoint import CheckpointLoader

    from sapiens2.engine.checkpoint import UnsafeCheckpointError
    from tests.engine.test_checkpoint import CreatesMarker
    served, url = http_root
    torch.save({'state_dict': {'w': torch.ones(2)}}, served / 'ok.pth')
    checkpoint = CheckpointLoader.load_checkpoint(f'{url}/ok.pth', map_location='cpu')
    assert torch.equal(checkpoint['state_dict']['w'], torch.ones(2))
    assert (tmp_path / 'torch_home' / 'hub' / 'checkpoints' / 'ok.pth').is_file()
    marker = tmp_path / 'code_ran'
    torch.save({'state_dict': {}, 'x': CreatesMarker(str(marker))}, served / 'evil.pth')
    with pytest.raises(UnsafeCheckpointError, match='evil.pth is not loaded'):
        CheckpointLoader.load_checkpoint(f'{url}/evil.pth', map_location='cpu')
    assert not marker.exists()


def test_resume_record_is_read_by_sapiens2_everywhere_mmengine_reads_it():
    import mmengine.runner
    import mmengine.runner._flexible_runner
    import mmengine.runner.runner

    from sapiens2.engine.checkpoint import find_resume_checkpoint
    for module in (mmengine.runner, mmengine.runner.checkpoint, mmengine.runner.runner,
                   mmengine.runner._flexible_runner):
        assert module.find_latest_checkpoint is find_resume_checkpoint


def test_a_config_carried_by_a_checkpoint_is_read_as_data_unless_trusted(tmp_path):
    from mmengine.config import Config

    from sapiens2.engine.checkpoint import UnsafeCheckpointError, trusted_checkpoints
    marker = tmp_path / 'marker'
    code = f"gpu_ids = [0]\n_x = open({str(marker)!r}, 'w').close()\n"
    with pytest.raises(UnsafeCheckpointError, match=r'^the config a checkpoint carries \(meta\.config or meta\.cfg\), '
                       r'line 2: a call to open\(.*: MMEngine would run it .*load_from .*--trust-checkpoint'):
        Config.fromstring(code, file_format='.py')
    assert not marker.exists()
    assert Config.fromstring("gpu_ids = [0, 1]\nmodel = dict(type='M')\n", '.py').to_dict() == dict(
        gpu_ids=[0, 1], model=dict(type='M'))
    with trusted_checkpoints():
        Config.fromstring(code, file_format='.py')
    assert marker.exists()


def test_resume_refuses_a_checkpoint_whose_meta_config_is_code(tmp_path):
    """MMEngine's resume runs ``meta['config']`` (``Config.fromstring``) to compare GPU counts."""
    from sapiens2.engine.checkpoint import UnsafeCheckpointError
    from tests.engine.dist_launch import build_toy_runner
    work, marker = tmp_path / 'work', tmp_path / 'marker'
    build_toy_runner(work, **{'train_cfg.max_iters': 1}).train()
    saved = next(work.glob('iter_1.pth'))
    checkpoint = torch.load(saved, weights_only=False)
    checkpoint['meta']['config'] = f"_x = __import__('os').system('touch {marker}')\n"
    torch.save(checkpoint, saved)
    runner = build_toy_runner(work, resume=True, load_from=str(saved), **{'train_cfg.max_iters': 2})
    with pytest.raises(UnsafeCheckpointError, match=r"line 1: a call to __import__\('os'\)\.system: MMEngine"):
        runner.train()
    assert not marker.exists()


def test_a_patch_waits_for_the_first_import_of_its_module(tmp_path, monkeypatch):
    (tmp_path / 'late_module_for_adaptations.py').write_text('value = 1\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    adaptations._patch_module('late_module_for_adaptations', lambda module: setattr(module, 'value', 2))
    import late_module_for_adaptations
    assert late_module_for_adaptations.value == 2
    assert 'late_module_for_adaptations' not in adaptations._ON_IMPORT.pending


# --- mmpose / mmseg / mmdet init_model: strict for Sapiens2 models, meta from .safetensors -----------------------
REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
POSE = osp.join(REPO, 'configs', 'pose', 'sapiens2_nano_pose_synthhumans-128x96.py')
SEG = osp.join(REPO, 'configs', 'seg', 'sapiens2_nano_seg_synthhumans-128x96.py')


def _without(state: dict, key: str) -> dict:
    assert key in state
    return {k: v for k, v in state.items() if k != key}


def test_mmpose_init_model_is_strict_and_reads_safetensors_meta(tmp_path):
    import numpy as np
    from mmpose.apis import init_model

    from sapiens2.engine import CheckpointMismatchError, save_weights
    torch.manual_seed(0)
    source = init_model(POSE, device='cpu')
    official = {(f'decode_{k}' if k.startswith('head.') else k): v for k, v in source.state_dict().items()}
    meta = {'dataset_meta': dict(source.dataset_meta, sigmas=np.full(308, 0.5, dtype=np.float32))}
    path = str(tmp_path / 'pose.safetensors')
    save_weights(official, path, meta=meta)
    model = init_model(POSE, path, device='cpu')
    assert all(torch.equal(v, source.state_dict()[k]) for k, v in model.state_dict().items())
    assert np.array_equal(model.dataset_meta['sigmas'], meta['dataset_meta']['sigmas'])
    assert model.dataset_meta['num_keypoints'] == 308
    key = [k for k in official if k.startswith('decode_head.')][-1]
    save_weights(_without(official, key), path)
    with pytest.raises(CheckpointMismatchError,
                       match=f'(?s)pose.safetensors.*missing \\(1\\): {key.replace("decode_", "")}'):
        init_model(POSE, path, device='cpu')


def test_mmseg_init_model_is_strict_and_reads_safetensors_meta(tmp_path):
    from mmseg.apis import init_model

    from sapiens2.engine import CheckpointMismatchError, save_weights
    source = init_model(SEG, device='cpu')
    classes = [f'part{i}' for i in range(29)]
    path = str(tmp_path / 'seg.safetensors')
    save_weights(source.state_dict(), path, meta={'dataset_meta': {'classes': classes, 'palette': [[0, 0, 0]] * 29}})
    model = init_model(SEG, path, device='cpu')
    assert model.dataset_meta['classes'] == classes
    assert all(torch.equal(v, source.state_dict()[k]) for k, v in model.state_dict().items())
    key = next(k for k in source.state_dict() if k.startswith('decode_head.'))
    save_weights(_without(source.state_dict(), key), path)
    with pytest.raises(CheckpointMismatchError, match=f'missing \\(1\\): {key}'):
        init_model(SEG, path, device='cpu')


@pytest.mark.parametrize('module_name', ['mmpose.apis.inference', 'mmseg.apis.inference', 'mmdet.apis.inference'])
def test_only_models_with_a_sapiens2_backbone_load_strictly(tmp_path, module_name):
    import importlib

    from sapiens2.engine import CheckpointMismatchError, save_weights
    from sapiens2.models import Sapiens2
    load_checkpoint = importlib.import_module(module_name).load_checkpoint
    assert load_checkpoint.__module__ == 'sapiens2.engine.checkpoint'
    plain = torch.nn.Sequential(torch.nn.Linear(2, 2))
    path = str(tmp_path / 'partial.pth')
    save_weights({'0.weight': torch.ones(2, 2)}, path)
    load_checkpoint(plain, path, map_location='cpu')  # upstream: missing 0.bias is only reported
    assert torch.equal(plain[0].weight, torch.ones(2, 2))
    with_backbone = torch.nn.Module()
    with_backbone.backbone = Sapiens2(arch='sapiens2_nano', img_size=(32, 32))
    save_weights(_without({f'backbone.{k}': v for k, v in with_backbone.backbone.state_dict().items()},
                          'backbone.ln1.weight'), path)
    with pytest.raises(CheckpointMismatchError, match='backbone.ln1.weight'):
        load_checkpoint(with_backbone, path, map_location='cpu')


def test_mmseg_label_maps_are_written_atomically_and_never_through_a_link(tmp_path):
    from mmseg.evaluation.metrics import IoUMetric
    from PIL import Image

    from sapiens2.utils.atomic_save import LinkedOutputError
    metric = IoUMetric(output_dir=str(tmp_path / 'out'), format_only=True)
    metric.dataset_meta = dict(classes=('a', 'b'))
    sample = dict(pred_sem_seg=dict(data=torch.ones(1, 4, 3, dtype=torch.long)), img_path='x/p0.jpg')
    metric.process({}, [sample])
    assert np.asarray(Image.open(tmp_path / 'out/p0.png')).tolist() == [[1] * 3] * 4
    mine = tmp_path / 'mine.png'
    mine.write_bytes(b'my picture')
    (tmp_path / 'out/p0.png').unlink()
    (tmp_path / 'out/p0.png').symlink_to(mine)
    with pytest.raises(LinkedOutputError, match='p0.png is a symbolic link to'):
        metric.process({}, [sample])
    assert mine.read_bytes() == b'my picture'
