"""Multi-process training and evaluation on CPU (gloo, 2 processes) through tools/dist_train.sh and dist_test.sh.

The toy run (tests/engine/dist_toy.py) is deterministic: the same initial weights and the same global batches
whether it runs in one process (batch 8) or two (batch 4 each).
"""
import json
import re

import pytest
import torch
import torch.nn.functional as F

from sapiens2.engine import load_model_weights
from tests.engine.dist_launch import (  # noqa: F401  (fixtures)
    TOY_CONFIG,
    TOY_FSDP_CONFIG,
    build_toy_runner,
    child_config,
    evaluate,
    gloo_world,
    max_abs_diff,
    single_rank_env,
    train,
    weights,
)
from tests.engine.dist_toy import DistToyDataset, DistToyModel

pytestmark = pytest.mark.slow
DDP_TOLERANCE = 1e-5  # gradient all-reduce sums in another order than one big batch; observed ~6e-8


def _run(tmp_path_factory, name: str, base, gpus: int, batch_size: int, *args):
    root = tmp_path_factory.mktemp(name)
    config = child_config(root / f'{name}.py', base,
                          f"train_dataloader = dict(batch_size={batch_size})\n"
                          f"custom_hooks = [dict(type='DistToyParamGroupsHook', out_dir='{root / 'groups'}')]")
    train(config, root / 'work', gpus, *args)
    return root


@pytest.fixture(scope='module')
def single_run(tmp_path_factory):
    return _run(tmp_path_factory, 'single', TOY_CONFIG, 1, 8)


@pytest.fixture(scope='module')
def ddp_run(tmp_path_factory):
    return _run(tmp_path_factory, 'ddp', TOY_CONFIG, 2, 4)


@pytest.fixture(scope='module')
def fsdp_run(tmp_path_factory):
    return _run(tmp_path_factory, 'fsdp', TOY_FSDP_CONFIG, 2, 4)


def _losses(run) -> list[str]:
    log = next((run / 'work').glob('*/*.log')).read_text()
    return re.findall(r'Iter\(train\) \[\d+/\d+\].*? loss: ([0-9.]+)', log)


def test_ddp_matches_one_process_on_the_same_global_batch(single_run, ddp_run):
    single, ddp = weights(single_run / 'work/iter_6.pth'), weights(ddp_run / 'work/iter_6.pth')
    assert max_abs_diff(single, ddp) < DDP_TOLERANCE
    assert max_abs_diff(single, weights(single_run / 'work/iter_3.pth')) > 1e-3  # the weights did move


def test_fsdp_follows_the_ddp_loss_curve(ddp_run, fsdp_run):
    assert len(_losses(fsdp_run)) == 6
    assert _losses(fsdp_run) == _losses(ddp_run)
    assert max_abs_diff(weights(fsdp_run / 'work/iter_6.pth'), weights(ddp_run / 'work/iter_6.pth')) < DDP_TOLERANCE


def test_fsdp_checkpoint_loads_back(fsdp_run, gloo_world, tmp_path):
    load_model_weights(DistToyModel(), str(fsdp_run / 'work/iter_6.pth'), strict=True)
    # Resume the 2-rank FSDP run at iteration 3 on one rank (same global batch of 8): model and sharded optimizer
    # states load, and the run ends where the 2-rank run ended. Another initial seed proves the weights were loaded.
    runner = build_toy_runner(tmp_path, TOY_FSDP_CONFIG, launcher='pytorch', resume=True,
                              load_from=str(fsdp_run / 'work/iter_3.pth'),
                              **{'train_dataloader.batch_size': 8, 'model.seed': 1})
    runner.train()
    assert max_abs_diff(weights(tmp_path / 'iter_6.pth'), weights(fsdp_run / 'work/iter_6.pth')) < DDP_TOLERANCE


def test_layer_decay_groups_identical_wrapped_and_unwrapped(single_run, ddp_run, fsdp_run):
    unwrapped = json.loads((single_run / 'groups/rank0.json').read_text())
    assert len({g['lr'] for g in unwrapped}) >= 3  # embeddings, blocks and head get different rates
    for run in (ddp_run, fsdp_run):
        for rank in (0, 1):
            assert json.loads((run / f'groups/rank{rank}.json').read_text()) == unwrapped


def test_dist_test_counts_every_sample_once(ddp_run, tmp_path):
    checkpoint, out = ddp_run / 'work/iter_6.pth', tmp_path / 'metric.json'
    # 63 samples on 2 ranks: the sampler pads one duplicate, which the evaluator must drop.
    evaluate(TOY_CONFIG, checkpoint, tmp_path / 'work', 2, '--cfg-options', 'test_dataloader.dataset.num_samples=63',
             f'test_evaluator.out_file={out}')
    result = json.loads(out.read_text())
    assert sorted(result['indices']) == list(range(63))
    model, data = DistToyModel(), DistToyDataset(num_samples=63)
    load_model_weights(model, str(checkpoint))
    with torch.no_grad():
        expected = F.mse_loss(model(data.inputs), data.targets).item()
    assert result['mse'] == pytest.approx(expected, rel=1e-5)


def test_fsdp_load_from_on_two_ranks_is_strict(fsdp_run, tmp_path):
    """A full checkpoint loads into the 2-rank shards exactly; a renamed key stops both ranks, naming it."""
    good = fsdp_run / 'work/iter_6.pth'
    config = child_config(tmp_path / 'load.py', TOY_FSDP_CONFIG, 'optim_wrapper = dict(optimizer=dict(lr=0.0))\n'
                          'train_cfg = dict(max_iters=1)\ndefault_hooks = dict(checkpoint=dict(interval=1))')
    train(config, tmp_path / 'ok', 2, '--cfg-options', f'load_from={good}')
    assert max_abs_diff(weights(tmp_path / 'ok/iter_1.pth'), weights(good)) == 0
    state = weights(good)
    state['head.weight_renamed'] = state.pop('head.weight')
    bad = tmp_path / 'renamed.pth'
    torch.save({'state_dict': state, 'meta': {}}, bad)
    proc = train(config, tmp_path / 'bad', 2, '--cfg-options', f'load_from={bad}', check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0 and 'CheckpointMismatchError' in output and 'missing (1): head.weight' in output
