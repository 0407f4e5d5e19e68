import os
import os.path as osp
import subprocess
import sys

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from sapiens2.engine import CheckpointMismatchError, load_model_weights, load_weights, save_weights
from sapiens2.engine.checkpoint import (
    CheckpointContentError,
    NonFiniteWeightsError,
    UnsafeCheckpointError,
    convert_checkpoint,
    find_resume_checkpoint,
    read_checkpoint_file,
    register_checkpoint_scheme,
    safe_globals,
    trusted_checkpoints,
)
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

    from sapiens2.engine.checkpoint import schemes as checkpoint_module
    target = str(tmp_path / 'resolved.safetensors')
    save_weights({'w': torch.ones(2)}, target)
    monkeypatch.setitem(checkpoint_module._SCHEMES, 'memo://', lambda name: target)
    assert checkpoint_module.resolve_checkpoint_path('memo://anything') == target
    assert torch.equal(load_weights('memo://anything')['w'], torch.ones(2))
    assert torch.equal(CheckpointLoader.load_checkpoint('memo://anything')['state_dict']['w'], torch.ones(2))

    existing = str(tmp_path / 'existing.safetensors')
    save_weights({'w': torch.zeros(2)}, existing)
    monkeypatch.setitem(checkpoint_module._SCHEMES, str(tmp_path), lambda name: target)
    assert checkpoint_module.resolve_checkpoint_path(existing) == existing  # an existing file wins over a scheme
    assert checkpoint_module.resolve_checkpoint_path(str(tmp_path / 'missing.pth')) == target


def _run_tool(*args, cwd):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, osp.join(REPO, 'tests', 'data')]))
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
    # a real training checkpoint needs nothing beyond the allow-list (no builtins.getattr from the message hub)
    unsafe = torch.serialization.get_unsafe_globals_in_checkpoint(ckpt2)
    assert 'builtins.getattr' not in unsafe and 'mmengine.logging.history_buffer.HistoryBuffer' in unsafe
    with torch.serialization.safe_globals(safe_globals()):
        assert torch.serialization.get_unsafe_globals_in_checkpoint(ckpt2) == []

    resumed = _run_tool(osp.join(REPO, 'tools', 'train.py'), TOY_CONFIG, '--work-dir', work, '--resume', cwd=REPO)
    assert resumed.returncode == 0, resumed.stderr[-3000:]  # --resume loads with weights_only=True
    assert 'resumed' in (resumed.stdout + resumed.stderr).lower()
    assert 'weights_only=False' not in resumed.stderr
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


# ------------------------------------------------------------------------------------------------- safe loading
class CreatesMarker:
    """Unpickling this runs ``open(marker, 'w')``: a stand-in for a checkpoint that executes code."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return open, (self.marker, 'w')


def _malicious_checkpoint(tmp_path, state_dict=None) -> tuple:
    marker, path = tmp_path / 'code_ran', tmp_path / 'evil.pth'
    torch.save({'state_dict': state_dict if state_dict is not None else nano().state_dict(),
                'meta': {'note': CreatesMarker(str(marker))}}, path)
    return str(path), marker


def test_malicious_pickle_does_not_run_by_default(tmp_path):
    path, marker = _malicious_checkpoint(tmp_path)
    for load in (lambda: read_checkpoint_file(path), lambda: load_weights(path),
                 lambda: load_model_weights(nano(), path),
                 lambda: Sapiens2(arch='sapiens2_nano', img_size=(32, 32),
                                  init_cfg=dict(type='Pretrained', checkpoint=path)).init_weights()):
        with pytest.raises(UnsafeCheckpointError) as err:
            load()
        assert not marker.exists()
    message = str(err.value)
    assert path in message and 'pickle globals io.open' in message
    assert 'trust_checkpoint=True' in message and '--trust-checkpoint' in message


def test_malicious_pickle_runs_only_when_trusted(tmp_path):
    path, marker = _malicious_checkpoint(tmp_path)
    with pytest.warns(UserWarning, match='weights_only=False because it is trusted: it holds io.open'):
        read_checkpoint_file(path, trust_checkpoint=True)
    assert marker.exists()
    marker.unlink()
    with trusted_checkpoints():
        with pytest.warns(UserWarning, match='runs any code'):
            load_model_weights(nano(), path)
    assert marker.exists()
    with pytest.raises(UnsafeCheckpointError):  # the context restored the default
        read_checkpoint_file(path)


def test_a_checkpoint_saved_by_mmengine_without_sapiens2_is_refused_with_a_hint(tmp_path, monkeypatch):
    from mmengine.logging import HistoryBuffer
    buffer = HistoryBuffer([1.0], [1])
    with monkeypatch.context() as patch:  # MMEngine's own __getstate__: the statistics methods go into the pickle
        patch.setattr(HistoryBuffer, '__getstate__', lambda self: dict(self.__dict__,
                                                                       statistics_methods=self._statistics_methods))
        torch.save({'state_dict': nano().state_dict(), 'message_hub': {'log_scalars': {'loss': buffer}}},
                   tmp_path / 'upstream.pth')
    with pytest.raises(UnsafeCheckpointError, match=r'pickle globals builtins.getattr \(builtins.getattr usually '
                                                    r'comes from the message hub'):
        read_checkpoint_file(str(tmp_path / 'upstream.pth'))
    with pytest.warns(UserWarning, match='builtins.getattr'):
        load_model_weights(nano(), str(tmp_path / 'upstream.pth'), trust_checkpoint=True)


def test_converting_a_trusted_file_gives_one_that_needs_no_trust(tmp_path):
    path, marker = _malicious_checkpoint(tmp_path)
    clean = str(tmp_path / 'clean.safetensors')
    with pytest.raises(UnsafeCheckpointError):
        convert_checkpoint(path, clean)
    with pytest.warns(UserWarning):
        convert_checkpoint(path, clean, trust_checkpoint=True)  # the meta entry holding the object is dropped
    assert marker.exists()
    marker.unlink()
    load_model_weights(nano(), clean)
    assert not marker.exists()


def test_a_trusted_weights_only_file_loads_without_warning(tmp_path, recwarn):
    path = str(tmp_path / 'w.pth')
    save_weights(nano().state_dict(), path, meta={'dataset_meta': {'sigmas': np.ones(3, dtype=np.float32)}})
    read_checkpoint_file(path, trust_checkpoint=True)
    assert not [w for w in recwarn if 'weights_only' in str(w.message)]


def test_mmengine_training_state_loads_with_weights_only(tmp_path):
    """Numpy arrays, dtypes and scalars and a message hub of HistoryBuffers, as MMEngine's checkpoints hold them."""
    from mmengine.logging import MessageHub
    hub = MessageHub.get_instance('test_checkpoint_hub')
    hub.update_scalar('train/loss', 0.5)
    hub.update_info('iter', np.int64(3))
    path = tmp_path / 'train.pth'
    torch.save({'state_dict': nano().state_dict(), 'message_hub': hub.state_dict(),
                'meta': {'dataset_meta': {'sigmas': np.arange(3.0), 'dtype': np.dtype('float32'),
                                          'scale': np.float64(1.5)}}}, path)
    checkpoint = read_checkpoint_file(str(path))
    assert checkpoint['meta']['dataset_meta']['scale'] == 1.5
    restored = MessageHub.get_instance('test_checkpoint_hub_restored')
    restored.load_state_dict(checkpoint['message_hub'])
    assert restored.get_scalar('train/loss').mean() == 0.5


# ----------------------------------------------------------------------------------------------- content checks
@pytest.mark.parametrize('content, described', [([1, 2, 3], 'a list of 3 items'), ('weights', "a string ('weights')"),
                                                (torch.zeros(2, 3), 'a single tensor of shape (2, 3)')])
def test_a_pth_holding_no_dict_says_what_it_holds(tmp_path, content, described):
    path = tmp_path / 'odd.pth'
    torch.save(content, path)
    with pytest.raises(CheckpointContentError) as err:
        load_model_weights(nano(), str(path))
    message = str(err.value)
    assert str(path) in message and described in message and 'expected a dict of tensors' in message


def test_non_tensor_entries_are_named(tmp_path):
    path = tmp_path / 'mixed.pth'
    torch.save({'a': torch.ones(1), 'epoch': 3}, path)
    with pytest.raises(CheckpointContentError, match=r"mixed.pth holds non-tensor entries \['epoch'\]"):
        load_weights(str(path))


def _poisoned(count: int) -> dict:
    state = {k: v.clone() for k, v in nano().state_dict().items()}
    floats = [k for k, v in state.items() if v.is_floating_point()]
    for i, key in enumerate(floats[:count]):
        state[key].view(-1)[0] = float('nan') if i % 2 == 0 else float('inf')
    return state, floats[:count]


def test_non_finite_weights_fail_naming_the_tensors(tmp_path):
    state, poisoned = _poisoned(2)
    path = str(tmp_path / 'nan.safetensors')
    save_weights(state, path)
    model = nano()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(NonFiniteWeightsError) as err:
        load_model_weights(model, path)
    message = str(err.value)
    assert path in message and all(f'{k} (1/' in message for k in poisoned)
    assert 'allow_non_finite_weights' in message
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())  # nothing was loaded
    with pytest.raises(NonFiniteWeightsError):
        Sapiens2(arch='sapiens2_nano', img_size=(32, 32),
                 init_cfg=dict(type='Pretrained', checkpoint=path)).init_weights()
    load_model_weights(model, path, allow_non_finite_weights=True)
    assert torch.isnan(model.state_dict()[poisoned[0]]).any()


def test_non_finite_listing_stops_at_ten():
    state, poisoned = _poisoned(12)
    with pytest.raises(NonFiniteWeightsError, match=r'in 12 tensor\(s\).*\.\.\. and 2 more') as err:
        load_model_weights(nano(), state)
    assert poisoned[9] in str(err.value) and poisoned[10] not in str(err.value)


# ----------------------------------------------------------------------------------------- safetensors meta
def test_safetensors_carry_meta(tmp_path):
    from mmengine.runner.checkpoint import CheckpointLoader
    meta = {'dataset_meta': {'classes': ['bg', 'person'], 'sigmas': np.array([0.1, 0.2], dtype=np.float32)},
            'iter': 4}
    path = str(tmp_path / 'm.safetensors')
    save_weights(nano().state_dict(), path, meta=meta)
    for checkpoint in (read_checkpoint_file(path), CheckpointLoader.load_checkpoint(path, map_location='cpu')):
        assert checkpoint['meta']['iter'] == 4 and checkpoint['meta']['dataset_meta']['classes'] == ['bg', 'person']
        sigmas = checkpoint['meta']['dataset_meta']['sigmas']
        assert sigmas.dtype == np.float32 and np.array_equal(sigmas, meta['dataset_meta']['sigmas'])
    bare = str(tmp_path / 'bare.safetensors')
    save_file({'x': torch.zeros(1)}, bare)
    assert read_checkpoint_file(bare)['meta'] == {}


def test_convert_keeps_meta(tmp_path):
    src, dst = str(tmp_path / 'a.pth'), str(tmp_path / 'b.safetensors')
    torch.save({'state_dict': {'w': torch.ones(2)}, 'meta': {'dataset_meta': {'classes': ('a', 'b')}, 'seed': 0}},
               src)
    convert_checkpoint(src, dst)
    assert read_checkpoint_file(dst)['meta'] == {'dataset_meta': {'classes': ['a', 'b']}, 'seed': 0}


def test_unserialisable_meta_is_refused_with_the_file_name(tmp_path):
    with pytest.raises(TypeError, match='m.safetensors cannot be stored as JSON'):
        save_weights({'w': torch.ones(1)}, str(tmp_path / 'm.safetensors'), meta={'fn': print})


# ------------------------------------------------------------------------------------------------ URI schemes
@pytest.fixture
def toy_scheme_root(tmp_path, monkeypatch):
    import tests.engine.toy_scheme as toy_scheme
    monkeypatch.setenv(toy_scheme.ROOT_VARIABLE, str(tmp_path))
    return tmp_path


def test_a_registered_scheme_works_in_init_cfg_and_mmengine(toy_scheme_root):
    from mmengine.runner.checkpoint import CheckpointLoader
    source = nano()
    save_weights(source.state_dict(), str(toy_scheme_root / 'nano.safetensors'))
    model = Sapiens2(arch='sapiens2_nano', img_size=(32, 32),
                     init_cfg=dict(type='Pretrained', checkpoint='toy://nano.safetensors'))
    model.init_weights()
    assert torch.equal(model.storage_tokens, source.storage_tokens)
    assert torch.equal(CheckpointLoader.load_checkpoint('toy://nano.safetensors')['state_dict']['ln1.weight'],
                       source.ln1.weight)
    with pytest.raises(FileNotFoundError, match='missing.pth does not exist'):
        load_weights('toy://missing.pth')


def test_a_registered_scheme_works_for_load_from(toy_scheme_root):
    from tests.engine.dist_launch import build_toy_runner
    from tests.engine.dist_toy import DistToyModel
    source = DistToyModel(seed=3)
    save_weights(source.state_dict(), str(toy_scheme_root / 'toy.pth'))
    runner = build_toy_runner(toy_scheme_root / 'work', load_from='toy://toy.pth')
    runner.load_or_resume()
    assert torch.equal(runner.model.head.weight, source.head.weight)


def test_scheme_prefix_must_be_given_once():
    with pytest.raises(KeyError, match="'' is already registered"):  # model aliases (sapiens2.hub)
        register_checkpoint_scheme('', str)
    import tests.engine.toy_scheme as toy_scheme
    with pytest.raises(KeyError, match="'toy://' is already registered"):
        register_checkpoint_scheme(toy_scheme.PREFIX, toy_scheme.resolve)


# --------------------------------------------------------------------------------------------- resume record
def _work_dir_with(tmp_path, record, checkpoints=('iter_2.pth', 'iter_4.pth')):
    for i, name in enumerate(checkpoints):
        torch.save({'w': torch.zeros(1)}, tmp_path / name)  # a checkpoint by its bytes
        os.utime(tmp_path / name, (1000 + i, 1000 + i))
    if record is not None:
        (tmp_path / 'last_checkpoint').write_text(record)
    return str(tmp_path)


@pytest.mark.parametrize('record, problem', [('', 'is empty'), ('gone/iter_8.pth', 'names gone/iter_8.pth')])
def test_a_bad_last_checkpoint_record_falls_back_to_the_newest_checkpoint(tmp_path, record, problem, monkeypatch):
    import sapiens2.engine.checkpoint.resume as checkpoint_module
    logged = []
    monkeypatch.setattr(checkpoint_module, 'print_log', lambda msg, **kwargs: logged.append(msg))
    work_dir = _work_dir_with(tmp_path, record)
    newest = osp.join(work_dir, 'iter_4.pth')
    assert find_resume_checkpoint(work_dir) == newest
    problem += ', which does not exist' if record else ''
    assert logged == [f'{osp.join(work_dir, "last_checkpoint")} {problem}; resuming from the newest complete '
                      f'checkpoint in the work dir instead: {newest}']


@pytest.mark.parametrize('record, problem', [('', 'is empty'), ('gone/iter_8.pth', 'names gone/iter_8.pth')])
def test_a_bad_last_checkpoint_record_without_checkpoints_names_the_record(tmp_path, record, problem):
    work_dir = _work_dir_with(tmp_path, record, checkpoints=())
    with pytest.raises(FileNotFoundError) as err:
        find_resume_checkpoint(work_dir)
    assert f'{osp.join(work_dir, "last_checkpoint")} {problem}' in str(err.value) and '--resume PATH' in str(err.value)


def test_a_valid_or_missing_record_behaves_as_mmengine(tmp_path):
    assert find_resume_checkpoint(_work_dir_with(tmp_path, None)) is None
    recorded = str(tmp_path / 'iter_2.pth')
    assert find_resume_checkpoint(_work_dir_with(tmp_path, recorded)) == recorded


def test_resume_with_an_empty_record_continues_from_the_newest_checkpoint(tmp_path):
    from tests.engine.dist_launch import build_toy_runner
    work = tmp_path / 'work'
    build_toy_runner(work, **{'train_cfg.max_iters': 3}).train()
    (work / 'last_checkpoint').write_text('')
    runner = build_toy_runner(work, resume=True, experiment_name='resumed', **{'train_cfg.max_iters': 4})
    runner.train()
    log = next(work.glob('*/*.log'), None)
    logs = ''.join(p.read_text() for p in work.glob('*/*.log'))
    assert log is not None and 'last_checkpoint is empty; resuming from the newest complete checkpoint' in logs
    assert 'resumed epoch: 0, iter: 3' in logs and runner.iter == 4


def test_a_resume_at_the_end_of_the_schedule_reads_no_batch(tmp_path, monkeypatch):
    """MMEngine's iteration loop loads every batch it skips on resume; at the schedule's end none is read."""
    from tests.engine.dist_launch import build_toy_runner
    work = tmp_path / 'work'
    build_toy_runner(work, **{'train_cfg.max_iters': 3}).train()
    runner = build_toy_runner(work, resume=True, experiment_name='at_end', **{'train_cfg.max_iters': 3})
    fetched = []
    monkeypatch.setattr(type(runner.train_dataloader.dataset), '__getitem__', lambda self, i: fetched.append(i))
    runner.train()
    assert runner.iter == 3 and not fetched
    assert 'nothing is left to train' in ''.join(p.read_text() for p in work.glob('*/*.log'))


@pytest.mark.slow
def test_tools_test_reads_a_scheme_uri_and_trusts_only_when_told(tmp_path):
    """tools/test.py: a toy:// checkpoint (scheme registered by the config's custom_imports); a pickle that runs code
    fails without --trust-checkpoint and runs with it."""
    from tests.engine.dist_launch import TOY_CONFIG, child_config, evaluate, run
    from tests.engine.dist_toy import DistToyModel
    config = child_config(tmp_path / 'scheme.py', TOY_CONFIG, "custom_imports = dict(imports=['sapiens2', "
                          "'tests.engine.dist_toy', 'tests.engine.toy_scheme'], allow_failed_imports=False)")
    save_weights(DistToyModel().state_dict(), str(tmp_path / 'toy.pth'))
    os.environ['SAPIENS2_TOY_SCHEME_ROOT'] = str(tmp_path)
    try:
        tested = evaluate(config, 'toy://toy.pth', tmp_path / 'work')
    finally:
        del os.environ['SAPIENS2_TOY_SCHEME_ROOT']
    assert 'mse' in tested.stdout + tested.stderr

    evil, marker = _malicious_checkpoint(tmp_path, DistToyModel().state_dict())
    refused = run([sys.executable, 'tools/test.py', TOY_CONFIG, evil, '--work-dir', tmp_path / 'w2'], check=False)
    assert refused.returncode != 0 and 'UnsafeCheckpointError' in refused.stderr and not marker.exists()
    assert '--trust-checkpoint' in refused.stderr
    evaluate(TOY_CONFIG, evil, tmp_path / 'w3', 1, '--trust-checkpoint')
    assert marker.exists()
