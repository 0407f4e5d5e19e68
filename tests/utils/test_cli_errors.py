"""User mistakes give one error line (traceback only with --debug); commands print no pkg_resources notice."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sapiens2.engine.checkpoint import CheckpointMismatchError
from sapiens2.utils.cli_errors import error_message, run_cli

REPO = Path(__file__).resolve().parents[2]
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')


def test_user_errors_become_one_line(capsys):
    def missing(argv=None):
        raise FileNotFoundError('input x.png does not exist')
    assert run_cli(missing, [], prog='tool') == 1
    assert capsys.readouterr().err == 'tool: error: input x.png does not exist (--debug shows the traceback)\n'
    with pytest.raises(FileNotFoundError):
        run_cli(missing, ['--debug'], prog='tool')


def test_other_exceptions_keep_their_traceback(capsys):
    def bug(argv=None):
        raise ZeroDivisionError('a bug')
    with pytest.raises(ZeroDivisionError):
        run_cli(bug, [])
    assert run_cli(lambda argv=None: None, []) == 0 and run_cli(lambda argv=None: 3, []) == 3


def test_messages_name_library_error_types_only():
    assert error_message(KeyError('unknown alias pose-9b')) == 'unknown alias pose-9b'
    assert error_message(CheckpointMismatchError('keys differ')) == 'CheckpointMismatchError: keys differ'
    assert error_message(ValueError()) == 'ValueError'


def run(*args, cwd=REPO):
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS='1')
    env.pop('SAPIENS2_DEBUG', None)
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=600, env=env)


def bad_configs(folder: Path):
    (folder / 'broken.py').write_text("model = dict(type='X'\n")
    (folder / 'typo.py').write_text(f"_base_ = ['{POSE}']\nmodel = dict(head=dict(type='Sapiens2HeatmapHed'))\n")
    return folder


MISTAKES = {
    'missing input': (['tools/infer.py', 'missing.png', '--model', POSE, '--out', '{tmp}/o'],
                      'sapiens2-infer: error: input missing.png does not exist'),
    'unknown alias': (['tools/infer.py', '{tmp}', '--model', 'pose-9b', '--out', '{tmp}/o'],
                      "sapiens2-infer: error: unknown model alias 'pose-9b'"),
    'package command': (['-m', 'sapiens2.cli', 'infer', '{tmp}', '--model', '{tmp}/broken.py', '--out', '{tmp}/o'],
                        'sapiens2: error: config {tmp}/broken.py (or one of its _base_ files) is not valid Python'),
    'bad config': (['tools/train.py', '{tmp}/broken.py'], 'train.py: error: config {tmp}/broken.py'),
    'type typo': (['tools/test.py', '{tmp}/typo.py', '{tmp}/w.pth'], "did you mean 'Sapiens2HeatmapHead'"),
    'missing checkpoint': (['tools/convert_checkpoint.py', '{tmp}/none.pth', '{tmp}/x.safetensors'],
                           'convert_checkpoint.py: error: Checkpoint {tmp}/none.pth does not exist'),
    'missing export config': (['tools/deploy/export.py', '{tmp}/none.py', '--out', '{tmp}/e'],
                              'export.py: error: Config file {tmp}/none.py does not exist'),
    'flops at a size off the patch grid': (['tools/analysis/get_flops.py', 'configs/pose/'
                                            'sapiens2_nano_pose_synthhumans-128x96.py', '--shape', '127', '96'],
                                           'get_flops.py: error: Sapiens2 input size (H, W) = (127, 96) must be '
                                           'multiples of patch_size'),
    'missing benchmark config': (['tools/analysis/benchmark.py', '{tmp}/none.py'],
                                 'benchmark.py: error: Config file {tmp}/none.py does not exist'),
    'missing print_config config': (['tools/misc/print_config.py', '{tmp}/none.py'],
                                    'print_config.py: error: Config file {tmp}/none.py does not exist'),
    'missing browse_dataset config': (['tools/misc/browse_dataset.py', '{tmp}/none.py', '--out', '{tmp}/b'],
                                      'browse_dataset.py: error: Config file {tmp}/none.py does not exist'),
    'missing dense_probe config': (['tools/dense_probe.py', '{tmp}/none.py', '--task', 'seg', '--data-root', '{tmp}'],
                                   'dense_probe.py: error: Config file {tmp}/none.py does not exist'),
}


@pytest.mark.slow
@pytest.mark.parametrize('mistake', sorted(MISTAKES))
def test_commands_report_mistakes_in_one_line_without_pkg_resources_notice(tmp_path, mistake):
    (tmp_path / 'shot.png').write_bytes(b'')
    (tmp_path / 'w.pth').write_bytes(b'')  # a checkpoint that exists: a missing one is said before the config
    bad_configs(tmp_path)
    args, expected = MISTAKES[mistake]
    proc = run(*[a.format(tmp=tmp_path) for a in args])
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert 'Traceback' not in proc.stderr and 'pkg_resources' not in proc.stderr, proc.stderr
    assert expected.format(tmp=tmp_path) in proc.stderr
    assert proc.stderr.rstrip().endswith('(--debug shows the traceback)')


@pytest.mark.slow
def test_debug_shows_the_traceback(tmp_path):
    bad_configs(tmp_path)
    proc = run('tools/train.py', str(tmp_path / 'broken.py'), '--debug')
    assert proc.returncode == 1 and 'Traceback (most recent call last)' in proc.stderr
    assert 'SyntaxError' in proc.stderr and 'pkg_resources' not in proc.stderr
