"""tools/train.py and tools/test.py report a diverging run (non-finite loss) and an unsafe checkpoint in one line with
the remedy, without a traceback (``--debug`` keeps it). The tools run in this process (runpy), as from a shell."""
import argparse

import torch

from tests.engine.dist_launch import TOY_CONFIG, child_config, run_tool


def error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert 'Traceback' not in err, err[-3000:]
    return err.strip().splitlines()[-1]


def test_a_non_finite_loss_stops_train_py_with_one_line(tmp_path, monkeypatch, capsys):
    config = child_config(tmp_path / 'nan.py', TOY_CONFIG,
                          'train_dataloader = dict(dataset=dict(nan_indices=list(range(64))))')
    assert run_tool(monkeypatch, 'train.py', config, '--work-dir', tmp_path / 'w') == 1
    line = error_line(capsys)
    assert line.startswith('train.py: error: NonFiniteTrainingError: Iteration 1: non-finite loss (loss_mse)')
    assert 'Lower the learning rate, enable clip_grad' in line and line.endswith('(--debug shows the traceback)')


def test_an_unsafe_checkpoint_stops_test_py_with_one_line(tmp_path, monkeypatch, capsys):
    checkpoint = tmp_path / 'unsafe.pth'
    torch.save(dict(state_dict={}, meta=argparse.Namespace(note='not a weight')), checkpoint)
    assert run_tool(monkeypatch, 'test.py', TOY_CONFIG, checkpoint, '--work-dir', tmp_path / 'w') == 1
    line = error_line(capsys)
    assert line.startswith(f'test.py: error: UnsafeCheckpointError: {checkpoint} is not loaded: it holds pickle '
                           'globals argparse.Namespace')
    assert '--trust-checkpoint' in line and line.endswith('(--debug shows the traceback)')
