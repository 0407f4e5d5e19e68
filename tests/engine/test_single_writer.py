"""Every file write of sapiens2/, tools/ and projects/ goes through sapiens2/utils/atomic_save.py, which writes
atomically and never through a symbolic link: a new direct write (``open(path, 'w')``, ``cv2.imwrite``,
``np.save``, ``torch.save``, ``json.dump`` to such a file...) elsewhere fails this test.

A write is routed when it is inside ``with AtomicOutput(...)`` / ``open_atomic(...)`` / ``open_fresh(...)``, or
writes ``<output>.tmp`` (the temporary file of an ``AtomicOutput``), or its line says ``# direct write: <why>`` (a
library that must write by itself, after :func:`~sapiens2.utils.atomic_save.refuse_links`)."""
import ast
from pathlib import Path
from typing import Iterator, List

REPO = Path(__file__).resolve().parents[2]
THE_WRITER = REPO / 'sapiens2/utils/atomic_save.py'
#: Functions that write the file named by an argument, by name (any receiver).
WRITERS = {'imwrite', 'savez', 'savez_compressed', 'savetxt', 'savefig', 'write_text', 'write_bytes', 'VideoWriter',
           'save_file', 'tofile', 'to_csv', 'symlink', 'link'}
#: Functions that write by name, with these receivers only (``x.copy()``, ``task.save()`` are no writes).
RECEIVER_WRITERS = {'save': {'np', 'numpy', 'torch', 'export', 'program'}, 'copy': {'shutil'},
                    'copy2': {'shutil'}, 'copyfile': {'shutil'}, 'copytree': {'shutil'}, 'move': {'shutil'},
                    'replace': {'os'}, 'rename': {'os'}, 'dump': {'cfg', 'config', 'mmengine_config'}}
ROUTERS = {'AtomicOutput', 'open_atomic', 'open_fresh'}
WRITE_MODES = set('wax+')


def _name(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ''


def _mode(call: ast.Call, position: int) -> str:
    mode = call.args[position] if len(call.args) > position else next(
        (k.value for k in call.keywords if k.arg == 'mode'), None)
    return mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else ''


def _is_write(call: ast.Call) -> bool:
    func, name = call.func, _name(call.func)
    if name == 'open' and not (isinstance(func, ast.Attribute) and _name(func.value) in ('os', 'Image')):
        return bool(WRITE_MODES & set(_mode(call, 1)))
    if name in ('ZipFile', 'TarFile'):
        return bool(WRITE_MODES & set(_mode(call, 1)))
    if name in WRITERS:
        return True
    receivers = RECEIVER_WRITERS.get(name)
    if receivers is None or not isinstance(func, ast.Attribute):
        return False
    receiver = _name(func.value)
    chained = isinstance(func.value, ast.Call)  # Image.fromarray(x).save(path)
    return receiver in receivers or (name == 'save' and (chained or 'save_all' in {k.arg for k in call.keywords}))


def _writes_a_temporary(call: ast.Call) -> bool:
    return any(_name(arg) == 'tmp' for arg in [*call.args, *(k.value for k in call.keywords)])


def _direct_writes(path: Path) -> Iterator[str]:
    source = path.read_text()
    lines = source.splitlines()

    def visit(node: ast.AST, inside: bool) -> Iterator[str]:
        if isinstance(node, (ast.With, ast.AsyncWith)):
            inside = inside or any(isinstance(item.context_expr, ast.Call) and _name(item.context_expr.func) in ROUTERS
                                   for item in node.items)
        if isinstance(node, ast.Call) and _is_write(node) and not inside and not _writes_a_temporary(node):
            line = lines[node.lineno - 1]
            if '# direct write:' not in line:
                yield f'{path.relative_to(REPO)}:{node.lineno}: {line.strip()}'
        for child in ast.iter_child_nodes(node):
            yield from visit(child, inside)

    yield from visit(ast.parse(source), False)


def _sources() -> List[Path]:
    return sorted(p for folder in ('sapiens2', 'tools', 'projects') for p in (REPO / folder).rglob('*.py')
                  if p != THE_WRITER)


def test_every_write_goes_through_atomic_save():
    direct = [hit for path in _sources() for hit in _direct_writes(path)]
    assert not direct, ('writes outside sapiens2/utils/atomic_save.py (use atomic_write_bytes / atomic_write_text / '
                        'open_atomic / AtomicOutput / open_fresh, or say "# direct write: <why>" on the line):\n'
                        + '\n'.join(direct))


def test_the_scan_finds_direct_writes(tmp_path, monkeypatch):
    """The scan itself catches the forms it is meant to catch, and lets the routed ones pass."""
    sample = tmp_path / 'sample.py'
    sample.write_text(
        "import cv2, json, numpy as np, torch\n"
        "cv2.imwrite('a.png', x)\n"
        "np.save('a.npy', x)\n"
        "torch.save(x, 'a.pth')\n"
        "with open('a.json', 'w') as f:\n    json.dump(x, f)\n"
        "with AtomicOutput('a.npy') as out:\n    np.save(out.tmp, x)\n"
        "with open_atomic('b.json') as f:\n    json.dump(x, f)\n"
        "open('c.txt')\n"
        "y = x.copy()\n"
        "Image.fromarray(x).save('d.png')\n"
        "z = cv2.VideoWriter(out.tmp, 1, 2, 3)\n")
    monkeypatch.setattr(f'{__name__}.REPO', tmp_path)
    hits = [hit.split(':')[1] for hit in _direct_writes(sample)]
    assert hits == ['2', '3', '4', '5', '13']
