"""sapiens2's warnings print as one line in the commands; MMEngine's and mmseg's messages about their own machinery
are silenced (sapiens2.adaptations), and a short seg training prints none of them."""
import logging
import os
import subprocess
import sys
import warnings

import pytest
from mmengine.logging import MMLogger, print_log

from sapiens2.adaptations import QUIET_INFERENCER_MESSAGES, QUIET_MMENGINE_MESSAGES, QUIET_MMSEG_MESSAGES
from sapiens2.engine.launch import load_config
from sapiens2.utils.cli_errors import run_cli
from tests.config.test_layout_checks import REPO, SEG, THREE, config, own_classes

NOISE = ('"FileClient" will be deprecated', '"HardDiskBackend" is the alias', 'The prefix is not set in metric class',
         'The current default scope', 'The draw is False', 'UserWarning', 'warnings.warn(')


def test_a_layout_notice_is_one_line_and_other_warnings_keep_their_format(tmp_path, capsys):
    body = own_classes(THREE) + ("model = dict(decode_head=dict(num_classes=3, loss_decode=[dict(type='Sapiens2Seg"
                                 "CrossEntropyLoss', class_weight=[1.0] * 3), dict(type='Sapiens2DiceLoss')]))\n")
    path = config(tmp_path, SEG, body)

    def main(argv) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter('always')
            load_config(path)
            warnings.warn('a warning of another library', FutureWarning)

    with pytest.warns(FutureWarning) as passed_on:  # other warnings go on to Python's (here pytest's) display
        assert run_cli(main, [], prog='train.py') == 0
    assert FutureWarning in [type(w.message) for w in passed_on]  # (and the pkg_resources one, on first import)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f'train.py: notice: {path}: the 29-class left/right pairs'), err


def test_mmengine_and_mmseg_machinery_messages_are_silenced(capsys):
    logger = MMLogger.get_instance('quiet-test')
    quiet = QUIET_MMENGINE_MESSAGES + QUIET_MMSEG_MESSAGES + QUIET_INFERENCER_MESSAGES
    for message in quiet:
        print_log(f'{message} (test)', logger=logger, level=logging.WARNING)
    print_log('a message a user can act on', logger=logger, level=logging.WARNING)
    out = capsys.readouterr()
    assert 'a message a user can act on' in out.out + out.err
    assert not any(message in out.out + out.err for message in quiet)
    from sapiens2 import adaptations
    draw_false = 'The draw is False, it means that the hook for visualization will not take effect.'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')  # instead of pytest's filters
        adaptations._silence_mmseg_draw_false_notice()
        for module in ('mmseg.engine.hooks.visualization_hook', 'someone.else'):
            warnings.warn_explicit(draw_false, UserWarning, f'{module}.py', 60, module=module)
    assert [w.filename for w in caught] == ['someone.else.py']


@pytest.mark.slow
def test_a_short_seg_training_prints_no_library_noise(synthhumans_root, tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS='1', PYTHONPATH=str(REPO))
    roots = [f'{loader}.dataset.data_root={synthhumans_root}' for loader in ('train_dataloader', 'val_dataloader')]
    proc = subprocess.run(
        [sys.executable, 'tools/train.py', str(SEG), '--work-dir', str(tmp_path), '--cfg-options', *roots,
         'train_cfg.max_iters=2', 'train_cfg.val_interval=2', 'train_dataloader.batch_size=2',
         'val_dataloader.batch_size=16'], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    output = proc.stdout + proc.stderr
    assert 'mIoU' in output  # it validated
    assert [noise for noise in NOISE if noise in output] == [], proc.stderr[-3000:]
