"""Unit tests of sapiens2.engine.dist: the CPU-safe process group, model wrappers, strategies and AMP wrapper."""
import pytest
import torch
import torch.distributed as torch_dist
import torch.nn as nn
from mmengine.model.wrappers import MMDistributedDataParallel
from mmengine.optim import OptimWrapper
from mmengine.registry import MODEL_WRAPPERS, OPTIM_WRAPPERS, STRATEGIES
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

from sapiens2.engine import CheckpointMismatchError
from sapiens2.engine.dist import (
    Sapiens2AmpOptimWrapper,
    checkpoint_modules_by_class_name,
    init_distributed,
    wrap_modules_by_class_name,
)
from tests.engine.dist_launch import (  # noqa: F401  (fixtures)
    TOY_CONFIG,
    TOY_FSDP_CONFIG,
    build_toy_runner,
    free_port,
    gloo_world,
    single_rank_env,
)
from tests.engine.dist_toy import DistToyBlock, DistToyModel

cpu_only = pytest.mark.skipif(torch.cuda.is_available(), reason='checks the CPU (gloo) code path')


def _batch() -> dict:
    return dict(inputs=torch.randn(4, 8), targets=torch.randn(4), index=torch.arange(4))


def test_init_distributed_without_launcher_is_a_no_op():
    for launcher in (None, 'none'):
        init_distributed(launcher)
    assert not torch_dist.is_initialized()


@cpu_only
def test_init_distributed_uses_gloo_without_gpu(single_rank_env):
    init_distributed('pytorch', backend='nccl', timeout=60)
    assert torch_dist.get_backend() == 'gloo'
    init_distributed('pytorch')  # already initialised: no-op


@cpu_only
def test_init_distributed_reads_slurm_variables(monkeypatch, single_rank_env):
    for key in ('RANK', 'LOCAL_RANK', 'WORLD_SIZE', 'MASTER_ADDR'):
        monkeypatch.delenv(key)
    for key, value in dict(SLURM_PROCID='0', SLURM_NTASKS='1', SLURM_LOCALID='0', SLURM_NODELIST='node[1-2]').items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr('subprocess.getoutput', lambda cmd: '127.0.0.1')
    init_distributed('slurm', port=free_port())
    assert torch_dist.get_world_size() == 1 and torch_dist.get_rank() == 0


@cpu_only
def test_init_distributed_rejects_mpi_without_gpu():
    with pytest.raises(ValueError, match="'mpi' is not supported without a GPU"):
        init_distributed('mpi')


@cpu_only
def test_mmengine_ddp_rejects_cpu_modules_with_device_ids(gloo_world):
    """The MMEngine obstacle the Sapiens2 wrapper exists for (fails if torch/MMEngine ever lift it)."""
    with pytest.raises(ValueError, match='device_ids'):
        MMDistributedDataParallel(module=DistToyModel(), device_ids=[0])


def test_flexible_runner_with_the_ddp_strategy_saves_unwrapped_keys(gloo_world, tmp_path):
    runner = build_toy_runner(tmp_path, launcher='pytorch', runner_type='FlexibleRunner',
                              strategy=dict(type='Sapiens2DDPStrategy'))
    runner.train()
    assert type(runner.model).__name__ == 'Sapiens2DistributedDataParallel'
    state = torch.load(tmp_path / 'iter_6.pth', weights_only=False)['state_dict']
    assert state.keys() == DistToyModel().state_dict().keys()


def test_ddp_wrapper_trains_a_cpu_module(gloo_world):
    model = DistToyModel()
    ddp = MODEL_WRAPPERS.build(dict(type='Sapiens2DistributedDataParallel'),
                               default_args=dict(module=model, device_ids=[0]))  # as MMEngine's runner passes
    assert ddp.device_ids is None
    before = model.head.weight.detach().clone()
    log_vars = ddp.train_step(_batch(), OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1)))
    assert torch.isfinite(log_vars['loss'])
    assert not torch.equal(before, model.head.weight)


def test_fsdp_wrapper_shards_a_cpu_module_per_block(gloo_world):
    fsdp = MODEL_WRAPPERS.build(
        dict(type='Sapiens2FullyShardedDataParallel',
             auto_wrap_policy=dict(type='wrap_modules_by_class_name', class_names=['DistToyBlock']),
             mixed_precision=dict(param_dtype='bfloat16')),
        default_args=dict(module=DistToyModel(), device_id=0))
    units = [m for m in fsdp.modules() if isinstance(m, FSDP)]
    assert len(units) == 3  # root + one per DistToyBlock
    if not torch.cuda.is_available():
        assert fsdp.mixed_precision.param_dtype is None  # bf16 is dropped on the CPU
    assert fsdp.train_step(_batch(), OptimWrapper(torch.optim.SGD(fsdp.parameters(), lr=0.1)))['loss'].isfinite()


def test_fsdp_strategy_binds_check_fn_and_keeps_full_state_on_cpu():
    strategy = STRATEGIES.build(
        dict(type='Sapiens2FSDPStrategy', state_dict_cfg='full',
             activation_checkpointing=dict(check_fn=dict(type='checkpoint_modules_by_class_name',
                                                         class_names=['DistToyBlock']))))
    check_fn = strategy.activation_checkpointing['check_fn']
    assert check_fn(DistToyBlock(4)) and not check_fn(nn.Linear(2, 2))
    assert strategy.state_dict_config.offload_to_cpu is torch.cuda.is_available()
    assert strategy.optim_state_dict_config.offload_to_cpu is torch.cuda.is_available()


def test_fsdp_strategy_reports_unknown_check_fn():
    with pytest.raises(KeyError, match="'no_such_fn' is not in the FUNCTIONS registry"):
        STRATEGIES.build(dict(type='Sapiens2FSDPStrategy', activation_checkpointing=dict(check_fn=dict(
            type='no_such_fn'))))


def test_module_class_policies():
    block, linear = DistToyBlock(4), nn.Linear(2, 2)
    assert wrap_modules_by_class_name(linear, recurse=True, nonwrapped_numel=0, class_names=['DistToyBlock'])
    assert wrap_modules_by_class_name(block, recurse=False, nonwrapped_numel=0, class_names=['DistToyBlock'])
    assert not wrap_modules_by_class_name(linear, recurse=False, nonwrapped_numel=0, class_names=['DistToyBlock'])
    assert checkpoint_modules_by_class_name(block, class_names=('DistToyBlock', ))
    assert not checkpoint_modules_by_class_name(linear, class_names=('DistToyBlock', ))


@cpu_only
def test_amp_wrapper_autocasts_to_bf16_on_cpu():
    model = nn.Linear(4, 2)
    wrapper = OPTIM_WRAPPERS.build(dict(type='Sapiens2AmpOptimWrapper', optimizer=torch.optim.SGD(
        model.parameters(), lr=0.1)))
    before = model.weight.detach().clone()
    with wrapper.optim_context(model):
        out = model(torch.randn(3, 4))
    assert out.dtype == torch.bfloat16
    wrapper.update_params(out.float().pow(2).mean())
    assert model.weight.dtype == torch.float32 and not torch.equal(before, model.weight)
    state = wrapper.state_dict()
    wrapper.load_state_dict(state)


@cpu_only
def test_amp_wrapper_falls_back_from_fp16_on_cpu():
    wrapper = Sapiens2AmpOptimWrapper(dtype='float16', optimizer=torch.optim.SGD(nn.Linear(2, 2).parameters(), lr=1))
    assert wrapper.cast_dtype == torch.bfloat16


def _renamed_checkpoint(tmp_path, rename=True, reshape=False) -> str:
    state = DistToyModel(seed=2).state_dict()
    if rename:
        state['head.weight_renamed'] = state.pop('head.weight')
    if reshape:
        state['head.weight'] = torch.zeros(1, 9)
    path = tmp_path / 'toy.pth'
    torch.save({'state_dict': state, 'meta': {}}, path)
    return str(path)


@pytest.mark.parametrize('config, strategy', [(TOY_FSDP_CONFIG, {}),
                                              (TOY_CONFIG, dict(runner_type='FlexibleRunner',
                                                                strategy=dict(type='Sapiens2DDPStrategy')))])
def test_flexible_runner_load_from_is_strict(gloo_world, tmp_path, config, strategy):
    checkpoint = _renamed_checkpoint(tmp_path)
    runner = build_toy_runner(tmp_path / 'strict', config, launcher='pytorch', load_from=checkpoint,
                              **{'train_cfg.max_iters': 1}, **strategy)
    with pytest.raises(CheckpointMismatchError) as err:
        runner.train()
    assert checkpoint in str(err.value)
    assert 'missing (1): head.weight' in str(err.value) and 'unexpected (1): head.weight_renamed' in str(err.value)
    relaxed = build_toy_runner(tmp_path / 'relaxed', config, launcher='pytorch', load_from=checkpoint,
                               load_strict=False, **{'train_cfg.max_iters': 1}, **strategy)
    relaxed.train()  # partial load, mismatches logged


def test_fsdp_load_from_reports_a_shape_mismatch(gloo_world, tmp_path):
    checkpoint = _renamed_checkpoint(tmp_path, rename=False, reshape=True)
    runner = build_toy_runner(tmp_path, TOY_FSDP_CONFIG, launcher='pytorch', load_from=checkpoint,
                              **{'train_cfg.max_iters': 1})
    with pytest.raises(CheckpointMismatchError, match=f'(?s){checkpoint}.*head.weight'):
        runner.train()


def test_fsdp_load_from_loads_a_matching_checkpoint(gloo_world, tmp_path):
    checkpoint = _renamed_checkpoint(tmp_path, rename=False)
    runner = build_toy_runner(tmp_path, TOY_FSDP_CONFIG, launcher='pytorch', load_from=checkpoint,
                              **{'train_cfg.max_iters': 1, 'optim_wrapper.optimizer.lr': 0.0})
    runner.train()
    saved = torch.load(tmp_path / 'iter_1.pth', weights_only=False)['state_dict']
    assert all(torch.equal(v, DistToyModel(seed=2).state_dict()[k]) for k, v in saved.items())
