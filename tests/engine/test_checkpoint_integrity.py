"""Complete and truncated checkpoint files are told apart from their structure, and ``--resume`` falls back from a
truncated latest checkpoint to the newest complete one, saying so (in-process runs of the toy model,
tests/engine/dist_toy.py)."""
import pytest
import torch
from mmengine.runner import save_checkpoint

from sapiens2.engine import save_weights
from sapiens2.engine.checkpoint.integrity import incomplete_reason, newest_complete_checkpoint
from tests.engine.dist_launch import build_toy_runner, weights


def _truncate(path, keep: float = 0.5) -> None:
    path.write_bytes(path.read_bytes()[:int(path.stat().st_size * keep)])


@pytest.mark.parametrize('name', ['iter_3.pth', 'w.safetensors'])
def test_complete_and_truncated_files(tmp_path, name):
    path = tmp_path / name
    if name.endswith('.pth'):
        save_checkpoint(dict(state_dict=dict(w=torch.ones(1000))), str(path))
    else:
        save_weights(dict(w=torch.ones(1000)), str(path))
    assert incomplete_reason(str(path)) is None
    _truncate(path)
    assert incomplete_reason(str(path)) is not None
    path.write_bytes(b'')
    assert incomplete_reason(str(path)) is not None
    assert incomplete_reason(str(tmp_path / 'missing.pth')) is None  # left to the loader


def test_newest_complete_checkpoint_skips_truncated_ones(tmp_path):
    for step in (3, 6, 9, 12):
        save_checkpoint(dict(state_dict=dict(w=torch.ones(100))), str(tmp_path / f'iter_{step}.pth'))
    _truncate(tmp_path / 'iter_9.pth')
    (tmp_path / 'best_acc.pth').write_bytes(b'')  # not a resumable name: ignored
    path, skipped = newest_complete_checkpoint(str(tmp_path), exclude=str(tmp_path / 'iter_12.pth'))
    assert path == str(tmp_path / 'iter_6.pth') and [p for p, _ in skipped] == [str(tmp_path / 'iter_9.pth')]


def test_resume_falls_back_to_the_newest_complete_checkpoint(tmp_path):
    build_toy_runner(tmp_path / 'uninterrupted').train()
    work_dir = tmp_path / 'work'
    build_toy_runner(work_dir).train()
    assert (work_dir / 'last_checkpoint').read_text().endswith('iter_6.pth')
    _truncate(work_dir / 'iter_6.pth')
    build_toy_runner(work_dir, resume=True, load_from=None, experiment_name='resumed').train()
    log = ''.join(path.read_text() for path in work_dir.glob('*/*.log'))
    assert f'The latest checkpoint {work_dir}/iter_6.pth is truncated or damaged' in log
    assert f'resuming from the newest complete checkpoint in the work dir instead: {work_dir}/iter_3.pth' in log
    resumed, uninterrupted = weights(work_dir / 'iter_6.pth'), weights(tmp_path / 'uninterrupted/iter_6.pth')
    assert all(torch.equal(resumed[k], uninterrupted[k]) for k in uninterrupted)


def test_explicit_truncated_checkpoint_is_named(tmp_path):
    runner = build_toy_runner(tmp_path)
    runner.train()
    _truncate(tmp_path / 'iter_6.pth')
    runner = build_toy_runner(tmp_path, resume=True, load_from=str(tmp_path / 'iter_6.pth'), experiment_name='again')
    with pytest.raises(ValueError, match=rf'Cannot resume from {tmp_path}/iter_6\.pth: the file is truncated or '
                       rf'damaged .*newest complete checkpoint of the work dir is {tmp_path}/iter_3\.pth'):
        runner.train()
