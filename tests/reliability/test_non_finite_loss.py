"""NonFiniteLossHook: a NaN loss is reported with its iteration and loss name, stops or skips the run by config,
and NaN weights never reach a checkpoint (in-process runs of the tiny toy model, tests/engine/dist_toy.py)."""
import math

import pytest
import torch
from mmengine.registry import HOOKS

from sapiens2.engine.launch import build_runner, load_config, prepare_train_config
from tests.engine.dist_launch import TOY_CONFIG, weights

NAN_SAMPLE = 9  # unshuffled batches of 4: sample 9 is in iteration 3, the iteration of the first checkpoint


def _runner(work_dir, action: str):
    cfg = load_config(str(TOY_CONFIG), {
        'train_dataloader.sampler.shuffle': False,
        'train_dataloader.dataset.nan_indices': [NAN_SAMPLE],
        'default_hooks.non_finite': dict(type='NonFiniteLossHook', action=action, max_consecutive_skips=1),
        'experiment_name': f'nan_{action}',
        'optim_wrapper.constructor': 'DefaultOptimWrapperConstructor',  # plain AdamW: this test is about NaNs
        'optim_wrapper.paramwise_cfg': None,
    })
    return build_runner(prepare_train_config(cfg, str(TOY_CONFIG), str(work_dir)))


def _finite(model: torch.nn.Module) -> bool:
    return all(torch.isfinite(p).all() for p in model.parameters())


def test_stop_reports_iteration_and_loss_name_and_saves_nothing(tmp_path):
    runner = _runner(tmp_path, 'stop')
    with pytest.raises(FloatingPointError, match=r'Iteration 3: non-finite loss \(loss_mse\).*Training stopped'):
        runner.train()
    assert _finite(runner.model)
    assert not list(tmp_path.glob('*.pth'))


def test_skip_drops_the_update_and_finishes_with_finite_checkpoints(tmp_path):
    runner = _runner(tmp_path, 'skip')
    runner.train()
    assert _finite(runner.model)
    for checkpoint in ('iter_3.pth', 'iter_6.pth'):
        assert all(torch.isfinite(v).all() for v in weights(tmp_path / checkpoint).values())
    log = next(tmp_path.glob('*/*.log')).read_text()
    assert 'Iteration 3: non-finite loss (loss_mse)' in log and 'Skipped (1 in a row)' in log


def test_too_many_consecutive_skips_stop_the_run():
    hook = HOOKS.build(dict(type='NonFiniteLossHook', action='skip', max_consecutive_skips=1))
    runner = type('Runner', (), dict(iter=0, logger=type('L', (), dict(warning=print))()))()
    hook.after_train_iter(runner, 0, outputs=dict(loss=torch.tensor(math.inf)))
    with pytest.raises(FloatingPointError, match='2 iterations in a row were skipped'):
        hook.after_train_iter(runner, 1, outputs=dict(loss=torch.tensor(math.nan)))


def test_refuses_to_save_non_finite_weights():
    hook = HOOKS.build(dict(type='NonFiniteLossHook'))
    runner = type('Runner', (), dict(iter=7))()
    hook.before_save_checkpoint(runner, dict(state_dict=dict(w=torch.ones(2), step=torch.tensor(3))))
    with pytest.raises(FloatingPointError, match=r"iteration 7: non-finite weights in \['w'\]"):
        hook.before_save_checkpoint(runner, dict(state_dict=dict(w=torch.tensor([1.0, math.nan]))))


def test_rejects_unknown_action():
    with pytest.raises(ValueError, match="action must be one of"):
        HOOKS.build(dict(type='NonFiniteLossHook', action='ignore'))
