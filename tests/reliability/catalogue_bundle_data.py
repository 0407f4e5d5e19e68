"""Bad-input cases of round 4 (issue 36): a bundle is data. Its config is read, never run, and its manifest names
files inside its folder only; a config a checkpoint carries is read as data too. Each case asserts one error line
and that no file changed (nor a marker appeared)."""
import hashlib
import os
from pathlib import Path

from tests.reliability.catalogue import CommandError, _bundle_cli, _one_line, case


def _files(tmp: Path) -> dict:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(tmp.rglob('*')) if p.is_file()}


def _unchanged(tmp: Path, marker: Path = None):
    """The check that the error is one line, no file of ``tmp`` changed and ``marker`` was not created."""
    before = _files(tmp)

    def verify(err):
        _one_line(err)
        assert marker is None or not marker.exists(), f'{marker} was created: the config ran'
        after = {p: h for p, h in _files(tmp).items() if 'out' not in p.relative_to(tmp).parts}
        assert after == before, 'a file changed'

    return verify


def _config_case(tmp: Path, text: str):
    """``sapiens2-infer`` on a bundle whose config.py is ``text`` (``{marker}``: the file running it would write)."""
    trigger = _bundle_cli(tmp)
    marker = tmp / 'marker'
    (tmp / 'b' / 'config.py').write_text(text.format(marker=marker))
    return trigger, _unchanged(tmp, marker)


@case('bundle-config-code', 'bundles', "a bundle whose config.py begins _x = __import__('os').system(...) (it ran "
      'on load, exit 0)', "one line: the line and the call found; a bundle's config is read as data, never run; "
      'export again', error=CommandError,
      match=r"^exit 1: sapiens2-infer: error: BundleError: {tmp}/b/config\.py, line 1: a call to "
      r"__import__\('os'\)\.system; a bundle's config is read as data and never run .*tools/deploy/export\.py")
def _(tmp):
    return _config_case(tmp, "_x = __import__('os').system('touch {marker}')\nmodel = dict(type='Sapiens2')\n")


@case('bundle-config-import', 'bundles', 'a bundle whose config.py imports a module and calls it',
      "one line: an import at line 2; a bundle's config is read as data, never run", error=CommandError,
      match=r"^exit 1: sapiens2-infer: error: BundleError: {tmp}/b/config\.py, line 2: an import \(import os\); a "
      r"bundle's config is read as data")
def _(tmp):
    return _config_case(tmp, "model = dict(type='Sapiens2')\nimport os\nos.system('touch {marker}')\n")


@case('bundle-config-type-path', 'bundles', "a bundle config (pure data) whose model type is "
      "'subprocess.getoutput' (MMEngine's registry imports a dotted type and calls it)",
      'one line: the type is not a registered class; nothing runs', error=CommandError,
      match=r"^exit 1: sapiens2-infer: error: BundleError: {tmp}/b/config\.py: type 'subprocess\.getoutput' is not "
      r'the name of a registered class')
def _(tmp):
    return _config_case(tmp, "model = dict(type='subprocess.getoutput', cmd='touch {marker}')\n")


def _path_case(tmp: Path, field: str, value: str):
    """``sapiens2-infer`` on a bundle whose manifest gives ``value`` for ``field`` (``onnx.fp32``: in ``onnx``)."""
    elsewhere = tmp / 'elsewhere'
    elsewhere.mkdir()
    for name in ('model.onnx', 'config.py'):
        (elsewhere / name).write_text('')
    value = value.format(elsewhere=elsewhere)
    key, _, precision = field.partition('.')
    manifest = {key: dict({'fp32': 'model.onnx'}, **{precision: value})} if precision else {key: value}
    trigger = _bundle_cli(tmp, **manifest)
    return trigger, _unchanged(tmp)


_OUTSIDE = r'outside the bundle folder; bundle files must lie inside the bundle folder'


@case('bundle-path-outside', 'bundles', 'a manifest whose onnx.fp32 is ../elsewhere/model.onnx',
      'one line: the field, where it points, that bundle files lie inside the folder', error=CommandError,
      match=r"^exit 1: sapiens2-infer: error: BundleError: {tmp}/b/sapiens2_bundle\.json: onnx\.fp32 is "
      r"'\.\./elsewhere/model\.onnx', a path to {tmp}/elsewhere/model\.onnx, " + _OUTSIDE)
def _(tmp):
    return _path_case(tmp, 'onnx.fp32', '../elsewhere/model.onnx')


@case('bundle-path-absolute', 'bundles', 'a manifest whose config is an absolute path (an existing file)',
      'one line: the field is an absolute path; bundle files lie inside the folder', error=CommandError,
      match=r"^exit 1: sapiens2-infer: error: BundleError: {tmp}/b/sapiens2_bundle\.json: config is "
      r"'{tmp}/elsewhere/config\.py', an absolute path, " + _OUTSIDE)
def _(tmp):
    return _path_case(tmp, 'config', '{elsewhere}/config.py')


@case('bundle-path-int8-outside', 'bundles', 'a manifest whose onnx.int8 is ../elsewhere/model.onnx',
      'one line naming onnx.int8 and where it points', error=CommandError,
      match=r"^exit 1: sapiens2-infer: error: BundleError: {tmp}/b/sapiens2_bundle\.json: onnx\.int8 is "
      r"'\.\./elsewhere/model\.onnx', a path to {tmp}/elsewhere/model\.onnx, " + _OUTSIDE)
def _(tmp):
    return _path_case(tmp, 'onnx.int8', '../elsewhere/model.onnx')


@case('bundle-path-pt2-outside', 'bundles', 'a manifest whose pt2 is ../elsewhere/model.onnx',
      'one line naming pt2 and where it points', error=CommandError,
      match=r"^exit 1: sapiens2-infer: error: BundleError: {tmp}/b/sapiens2_bundle\.json: pt2 is "
      r"'\.\./elsewhere/model\.onnx', a path to {tmp}/elsewhere/model\.onnx, " + _OUTSIDE)
def _(tmp):
    return _path_case(tmp, 'pt2', '../elsewhere/model.onnx')


@case('bundle-path-symlink-out', 'bundles', "a bundle whose model.onnx is a symbolic link to a file outside its "
      'folder', 'one line: onnx.fp32 is a symbolic link out of the folder', error=CommandError,
      match=r"^exit 1: sapiens2-infer: error: BundleError: {tmp}/b/sapiens2_bundle\.json: onnx\.fp32 is "
      r"'model\.onnx', a symbolic link to {tmp}/elsewhere/model\.onnx, " + _OUTSIDE)
def _(tmp):
    trigger, _ = _path_case(tmp, 'onnx.fp32', 'model.onnx')
    (tmp / 'b' / 'model.onnx').unlink()
    os.symlink(tmp / 'elsewhere' / 'model.onnx', tmp / 'b' / 'model.onnx')
    return trigger, _unchanged(tmp)


@case('checkpoint-config-code', 'checkpoints', "--resume from a checkpoint whose meta.config is code (MMEngine's "
      'resume ran it with Config.fromstring)', 'refused without running it, naming the line; load_from or '
      '--trust-checkpoint', error=RuntimeError, kind='UnsafeCheckpointError',
      match=r"^the config a checkpoint carries \(meta\.config or meta\.cfg\), line 1: a call to "
      r"__import__\('os'\)\.system: MMEngine would run it .*load_from .*--trust-checkpoint")
def _(tmp):
    import torch

    from tests.engine.dist_launch import build_toy_runner
    work, marker = tmp / 'work', tmp / 'marker'
    build_toy_runner(work, **{'train_cfg.max_iters': 1}).train()
    checkpoint = torch.load(work / 'iter_1.pth', weights_only=False)
    checkpoint['meta']['config'] = f"_x = __import__('os').system('touch {marker}')\n"
    torch.save(checkpoint, work / 'iter_1.pth')
    runner = build_toy_runner(work, resume=True, load_from=str(work / 'iter_1.pth'), **{'train_cfg.max_iters': 2})

    def verify(_):
        assert not marker.exists(), f'{marker} was created: the config ran'

    return runner.train, verify
