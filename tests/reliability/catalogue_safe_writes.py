"""Round 4 of the bad-input catalogue (issue 36): no write follows a symbolic link (inference outputs, their
manifest, export bundles, people outputs, tools/test.py --out), and training never writes over or deletes a file in
its work dir that it did not write. Every case checks that the user's files are unchanged (hashes before/after).
The cases register into :data:`tests.reliability.catalogue.CASES` (this module is imported at its end)."""
import hashlib
import sys
from pathlib import Path
from unittest import mock

import numpy as np

from tests.reliability.catalogue import NANO_SEG, REPO, CommandError, _infer, _infer_cli, _photos, case

LINK = r'is a symbolic link to {tmp}/mine\S*: sapiens2 never writes through a link \(even with --overwrite\)'


def _hashes(*paths: Path) -> dict:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def _user_file(tmp: Path, name: str = 'mine.png', content: bytes = b'my own file') -> Path:
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def _unchanged(*paths: Path, links=()):
    """A verify step: ``paths`` keep their content and ``links`` are still links."""
    before = _hashes(*paths)

    def verify(_):
        assert _hashes(*paths) == before, "a user's file was changed"
        for link in links:
            assert link.is_symlink(), f'{link} is no longer a link'

    return verify


def _link(link: Path, target: Path) -> Path:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return link


# ------------------------------------------------------------------------------------------- inference outputs
@case('infer-output-symlink', 'inference outputs', 'OUT/seg/p0.png is a symbolic link to a file outside --out',
      'refused before anything is written: one line naming the link, where it points and the fix; the file it '
      'points to is intact', error=FileExistsError, kind='LinkedOutputError',
      match=r'^the output {tmp}/out/seg/p0.png ' + LINK + r'.*remove the link')
def _(tmp):
    _photos(tmp / 'in')
    mine = _user_file(tmp)
    link = _link(tmp / 'out/seg/p0.png', mine)
    return _infer(tmp / 'in', tmp / 'out'), _unchanged(mine, links=[link])


@case('infer-output-symlink-overwrite', 'inference outputs', 'sapiens2-infer --overwrite, with OUT/pose/a.png a '
      'symbolic link to a file outside --out (the file outside was replaced)', 'refused, even with --overwrite: one '
      'line naming the link and where it points; the file it points to is intact', error=CommandError,
      match=r'^exit \d+: .*the output {tmp}/out/pose/a.png ' + LINK)
def _(tmp):
    mine = _user_file(tmp)
    link = _link(tmp / 'out/pose/a.png', mine)
    verify = _unchanged(mine, links=[link])

    def check(err):
        lines = [line for line in str(err).splitlines() if 'warning: no checkpoint given' not in line]
        assert len(lines) == 1 and 'Traceback' not in str(err), f'not one line: {err}'
        verify(err)

    return _infer_cli(tmp, '--overwrite'), check


@case('infer-output-swapped-for-symlink', 'inference outputs', 'an output of an earlier run (listed in the '
      "manifest) swapped for a symbolic link to a user's file, and the same run again (it was written through, "
      'without --overwrite)', 'refused: one line naming the link; the file it points to is intact',
      error=FileExistsError, kind='LinkedOutputError', match=r'^the output {tmp}/out/seg/p0_seg.npy ' + LINK)
def _(tmp):
    _photos(tmp / 'in')
    _infer(tmp / 'in', tmp / 'out')()
    mine = _user_file(tmp, 'mine.npy')
    (tmp / 'out/seg/p0_seg.npy').unlink()
    link = _link(tmp / 'out/seg/p0_seg.npy', mine)
    return _infer(tmp / 'in', tmp / 'out'), _unchanged(mine, links=[link])


@case('infer-output-folder-symlink', 'inference outputs', 'OUT/seg is a symbolic link to a folder of the user '
      '(with --overwrite)', 'refused: one line naming the output and the linked folder; the folder is intact',
      error=FileExistsError, kind='LinkedOutputError',
      match=r'^the output {tmp}/out/seg/p0.png is below {tmp}/out/seg, a symbolic link to {tmp}/mine: ')
def _(tmp):
    _photos(tmp / 'in')
    mine = _user_file(tmp, 'mine/p0.png')
    link = _link(tmp / 'out/seg', tmp / 'mine')
    verify = _unchanged(mine, links=[link])

    def intact(value):
        verify(value)
        assert sorted(p.name for p in (tmp / 'mine').iterdir()) == ['p0.png'], 'files were written into the folder'

    return _infer(tmp / 'in', tmp / 'out', overwrite=True), intact


@case('infer-manifest-symlink', 'inference outputs', "OUT/.sapiens2_outputs.json is a symbolic link to a user's "
      'file', 'refused: one line naming the manifest link; the file it points to is intact', error=FileExistsError,
      kind='LinkedOutputError', match=r'^the output {tmp}/out/.sapiens2_outputs.json ' + LINK)
def _(tmp):
    _photos(tmp / 'in')
    mine = _user_file(tmp, 'mine.json', b'{"files": []}')
    link = _link(tmp / 'out/.sapiens2_outputs.json', mine)
    return _infer(tmp / 'in', tmp / 'out'), _unchanged(mine, links=[link])


@case('people-ply-symlink', 'inference outputs', "a people output (NAME_skeleton3d.ply) that is a symbolic link to a "
      "user's file", 'refused: one line naming the link; the file it points to is intact', error=FileExistsError,
      kind='LinkedOutputError', match=r'^the output {tmp}/out/p0_skeleton3d.ply ' + LINK)
def _(tmp):
    from sapiens2.apis.people.ply import write_skeleton_ply
    mine = _user_file(tmp, 'mine.ply')
    link = _link(tmp / 'out/p0_skeleton3d.ply', mine)
    skeletons = np.zeros((1, 2, 3))
    return (lambda: write_skeleton_ply(str(link), skeletons, [(0, 1)], [(255, 0, 0)])), \
        _unchanged(mine, links=[link])


# ------------------------------------------------------------------------------------------ export and test --out
@case('export-output-symlink', 'export', 'tools/deploy/export.py --overwrite into a folder whose '
      "sapiens2_bundle.json is a symbolic link to a user's file", 'refused before the model is built: one line '
      'naming the link; the file it points to is intact', error=FileExistsError, kind='LinkedOutputError',
      match=r'^the output {tmp}/b/sapiens2_bundle.json ' + LINK + r'.*choose another --out')
def _(tmp):
    from tests.scripts import load_script
    mine = _user_file(tmp, 'mine.json')
    link = _link(tmp / 'b/sapiens2_bundle.json', mine)
    tool = load_script('tools/deploy/export.py', 'export_tool')

    def export():
        with mock.patch.object(sys, 'argv', ['export.py', str(NANO_SEG), '--out', str(tmp / 'b'), '--overwrite']):
            return tool.main()

    return export, _unchanged(mine, links=[link])


@case('test-out-symlink', 'outputs', "tools/test.py --out metrics.json (pose) that is a symbolic link to a user's "
      'file', 'refused: one line naming the link; the file it points to is intact', error=FileExistsError,
      kind='LinkedOutputError', match=r'^the output {tmp}/metrics.json ' + LINK)
def _(tmp):
    from sapiens2.engine.hooks.save_test_metrics_hook import SaveTestMetricsHook
    mine = _user_file(tmp, 'mine.json')
    link = _link(tmp / 'metrics.json', mine)
    hook = SaveTestMetricsHook(str(link))
    return (lambda: hook.after_test_epoch(None, {'PCK': 0.5})), _unchanged(mine, links=[link])


# ------------------------------------------------------------------------------------------------------ training
def _train(work_dir: Path, resume=None, **options):
    """tools/train.py on the toy config into ``work_dir`` (its lock and checkpoint record taken), 6 iterations,
    a checkpoint every 3."""
    from sapiens2.engine.launch import build_runner, load_config, prepare_train_config
    config = REPO / 'tests/engine/configs/dist_toy.py'
    options.setdefault('experiment_name', f'safe_writes_{work_dir.parent.name}_{work_dir.name}')
    cfg = load_config(str(config), options)
    return build_runner(prepare_train_config(cfg, str(config), str(work_dir), resume=resume), lock_work_dir=True)


def _release(work_dir: Path):
    from sapiens2.engine.work_dir import unlock_work_dir
    from sapiens2.engine.work_dir_record import release_checkpoints
    unlock_work_dir(str(work_dir))
    release_checkpoints(str(work_dir))


def _untrained(work_dir: Path, *mine: Path):
    verify = _unchanged(*mine)

    def check(value):
        _release(work_dir)
        verify(value)
        assert not (work_dir / 'last_checkpoint').exists(), 'training started'

    return check


@case('train-work-dir-user-checkpoints', 'training', "a --work-dir holding the user's own iter_3.pth and iter_6.pth "
      '(notes, another run\'s files; training wrote its checkpoints over them)', 'refused before the first '
      'iteration: one line naming the files and the fixes (another --work-dir, move them, --resume); they are intact',
      error=FileExistsError, match=r'^--work-dir {tmp}/run holds iter_3.pth, iter_6.pth, which sapiens2 training did '
      r'not write \(not listed in {tmp}/run/.sapiens2_checkpoints.json\): .*Choose another --work-dir, move them '
      r'away, or pass --resume')
def _(tmp):
    mine = [_user_file(tmp, f'run/iter_{i}.pth', f'my notes {i}'.encode()) for i in (3, 6)]
    return (lambda: _train(tmp / 'run')), _untrained(tmp / 'run', *mine)


@case('train-max-keep-ckpts-user-file', 'training', "max_keep_ckpts=1 with the user's iter_3.pth in the work dir "
      '(training deleted it after writing iter_6.pth)', 'refused before the first iteration, naming the file; it is '
      'intact', error=FileExistsError, match=r'^--work-dir {tmp}/run holds iter_3.pth, which sapiens2 training did '
      r'not write')
def _(tmp):
    mine = _user_file(tmp, 'run/iter_3.pth', b'my notes')
    return (lambda: _train(tmp / 'run', **{'default_hooks.checkpoint.max_keep_ckpts': 1})), \
        _untrained(tmp / 'run', mine)


@case('train-resume-user-file', 'training', "--resume in a work dir whose best_acc_iter_3.pth is the user's file, "
      'not a training checkpoint', 'refused before the first iteration, naming the file (not adopted); it is intact',
      error=FileExistsError, match=r'^--work-dir {tmp}/run holds best_acc_iter_3.pth, which sapiens2 training did '
      r'not write \(.*; not resumable training checkpoints\)')
def _(tmp):
    mine = _user_file(tmp, 'run/best_acc_iter_3.pth', b'my notes')
    return (lambda: _train(tmp / 'run', resume='auto')), _untrained(tmp / 'run', mine)


@case('train-resume-unrecorded-work-dir', 'training', '--resume in a work dir written by a sapiens2 run made before '
      'the checkpoint record (iter_3.pth and last_checkpoint, no .sapiens2_checkpoints.json)', 'its real '
      'checkpoints are adopted and training resumes to iteration 6; the record lists them')
def _(tmp):
    from tests.engine.dist_launch import build_toy_runner
    build_toy_runner(tmp / 'run', experiment_name=f'safe_writes_{tmp.name}_first', **{'train_cfg.max_iters': 3}
                     ).train()  # no lock, so no record: as before the record existed
    assert not (tmp / 'run/.sapiens2_checkpoints.json').exists()

    def resume():
        try:
            _train(tmp / 'run', resume='auto', experiment_name=f'safe_writes_{tmp.name}_second').train()
        finally:
            _release(tmp / 'run')

    def resumed(_):
        import json
        listed = json.loads((tmp / 'run/.sapiens2_checkpoints.json').read_text())['files']
        assert {'iter_3.pth', 'iter_6.pth', 'last_checkpoint'} <= set(listed), f'record: {listed}'

    return resume, resumed
