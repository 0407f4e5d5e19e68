"""A run killed with SIGKILL in the middle of writing a checkpoint leaves only complete checkpoints, and ``--resume``
ends with the same weights as an uninterrupted run (deterministic CPU toy run, tests/engine/dist_toy.py)."""
import signal

import pytest
from mmengine.runner import find_latest_checkpoint

from tests.engine.dist_launch import TOY_CONFIG, child_config, train, weights

pytestmark = pytest.mark.slow


def test_sigkill_during_a_save_then_resume_matches_the_uninterrupted_run(tmp_path):
    train(TOY_CONFIG, tmp_path / 'uninterrupted')
    config = child_config(tmp_path / 'killed.py', TOY_CONFIG,
                          "custom_hooks = [dict(type='DistToyKillHook', during_save_iter=6)]")
    work_dir = tmp_path / 'work'
    proc = train(config, work_dir, check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    assert not (work_dir / 'iter_6.pth').exists() and list(work_dir.glob('.iter_6.pth.*.tmp'))
    assert find_latest_checkpoint(str(work_dir)) == str(work_dir / 'iter_3.pth')
    weights(work_dir / 'iter_3.pth')  # complete and loadable
    # Another initial seed: equal final weights prove the resumed run started from the checkpoint.
    train(TOY_CONFIG, work_dir, 1, '--resume', '--cfg-options', 'model.seed=1')
    assert not list(work_dir.glob('.*.tmp'))  # the killed save's temporary file was cleaned up
    resumed, uninterrupted = weights(work_dir / 'iter_6.pth'), weights(tmp_path / 'uninterrupted/iter_6.pth')
    assert all((resumed[k] == uninterrupted[k]).all() for k in uninterrupted)
