"""The repository stands on its own: no code, script or config file names an absolute filesystem path or a relative
path that climbs above the repository root, and no tracked file points at the external reference folder that the
project was built from (its data is vendored under ``tests/data/official``).

What counts as a path:
* Python files are tokenized. String literals and comments are searched for absolute paths; string literals (and
  runs of them joined by ``,`` or ``/``, as in ``osp.join(..., '..', 'x')`` or ``Path(...) / 'x'``) are resolved
  from the file's own folder, or from the folder that ``dirname``/``.parent``/``parents[k]`` of ``__file__`` on the
  same logical line names, and must stay inside the repository.
* Shell and config files (``.sh``, ``.json``, ``.yaml``, ``.yml``, ``.toml``, ``.cfg``, ``.ini``) are searched line
  by line, comments included; ``..`` chains resolve from the file's folder.
``~/...`` (the user's cache) and URLs are not filesystem paths of the repository and are not reported.
"""
import fnmatch
import io
import os
import re
import subprocess
import tokenize
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SCANNED_DIRS = ('tests', 'sapiens2', 'projects', 'tools', 'configs', 'benchmarks')
LINE_SUFFIXES = ('.sh', '.json', '.yaml', '.yml', '.toml', '.cfg', '.ini')
# Absolute paths that name the operating system, not data: the null and full devices, process/kernel files and the
# interpreters of shebang lines.
ALLOWED_ABSOLUTE = ('/dev/null', '/dev/full', '/dev/stdout', '/dev/stderr', '/proc', '/usr/bin/env', '/bin/bash',
                    '/bin/sh')
# This file: its detector examples are offenders on purpose.
NOT_SCANNED = ('tests/test_repository_paths.py', )

# A '/' that starts a path: not after a name, a closing bracket, a variable or a URL scheme (``a/b``, ``$(x)/y``,
# ``https://``), nor right after a closing quote (``"$DIR"/x``, ``'none'/None``).
ABSOLUTE_PATH = re.compile(r'(?<![\w.~$}\])>:/\\*+-])(?<![\w})]["\'])/[A-Za-z_][\w.+-]*(?:/[\w.+-]*)*')
# The maintainers' reference folder beside the checkout; its name is assembled so that no tracked file spells it.
SIBLING = 'sha' 'red'
EXTERNAL_REFERENCE = re.compile(rf'(?:^|[^\w-])(?:\.\./)+{SIBLING}\b|\b{SIBLING}/reference\b')
DOTDOT_CHAIN = re.compile(r'(?<![\w.])\.\.(?:/\.\.)*(?![\w.])')
STRING_PREFIX = re.compile(r'^[rRbBuUfF]*')
# Python >= 3.12 splits f-strings into parts; their literal text comes as FSTRING_MIDDLE.
TEXT_TOKENS = {tokenize.STRING, tokenize.COMMENT, getattr(tokenize, 'FSTRING_MIDDLE', tokenize.STRING)}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    reason: str
    text: str

    def __str__(self) -> str:
        return f'{self.path}:{self.line}: {self.reason}: {self.text.strip()!r}'


def _gitignore_patterns(root: Path) -> list[str]:
    path = root / '.gitignore'
    lines = path.read_text().splitlines() if path.is_file() else []
    return [line.strip().rstrip('/') for line in lines if line.strip() and not line.startswith('#')]


def _ignored(rel_path: str, patterns: list[str]) -> bool:
    """Whether the root ``.gitignore`` ignores ``rel_path`` (the subset of its syntax this repository uses: names,
    anchored paths and ``*`` wildcards; no negation)."""
    name = rel_path.rsplit('/', 1)[-1]
    return name == '.git' or any(
        fnmatch.fnmatch(rel_path, pattern.lstrip('/')) if '/' in pattern else fnmatch.fnmatch(name, pattern)
        for pattern in patterns)


def repository_files(root: Path, folders: tuple[str, ...] = SCANNED_DIRS) -> list[str]:
    """Tracked and untracked-but-not-ignored files under ``folders`` (POSIX paths relative to ``root``), from git,
    or from the ``.gitignore`` rules when ``root`` is not a git checkout (a file copy, as ``.ci/run`` makes)."""
    git = subprocess.run(['git', '-C', str(root), 'rev-parse', '--show-toplevel'], capture_output=True, text=True)
    if git.returncode == 0 and Path(git.stdout.strip()).resolve() == root.resolve():
        out = subprocess.run(['git', '-C', str(root), 'ls-files', '-co', '--exclude-standard', '--', *folders],
                             capture_output=True, text=True, check=True).stdout
        return sorted(p for p in out.splitlines() if (root / p).is_file())
    patterns, files = _gitignore_patterns(root), []
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(root / folder):
            rel_dir = Path(dirpath).relative_to(root).as_posix()
            prefix = '' if rel_dir == '.' else rel_dir + '/'
            dirnames[:] = [d for d in dirnames if not _ignored(prefix + d, patterns)]
            files += [prefix + f for f in filenames if not _ignored(prefix + f, patterns)]
    return sorted(files)


def _absolute_paths(text: str) -> list[str]:
    return [p for p in ABSOLUTE_PATH.findall(text)
            if not any(p == allowed or p.startswith(allowed + '/') for allowed in ALLOWED_ABSOLUTE)]


def _climbs_out(rel_path: str, levels_up: int, relative: str) -> bool:
    """Whether ``relative``, resolved ``levels_up`` folders above the folder of ``rel_path``, leaves the root."""
    parts = list(PurePosixPath(rel_path).parent.parts)
    if levels_up > len(parts):
        return True
    parts = parts[:len(parts) - levels_up]
    for part in relative.split('/'):
        if part == '..':
            if not parts:
                return True
            parts.pop()
        elif part not in ('', '.'):
            parts.append(part)
    return False


def _text_findings(rel_path: str, line: int, text: str) -> list[Finding]:
    found = [Finding(rel_path, line, f'absolute path {p}', text) for p in _absolute_paths(text)]
    if EXTERNAL_REFERENCE.search(text):
        found.append(Finding(rel_path, line, 'names the external reference folder', text))
    return found


def _string_value(token: str) -> str:
    body = STRING_PREFIX.sub('', token)
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    return body[len(quote):len(body) - len(quote)]


def _file_levels_up(line_tokens: list[tokenize.TokenInfo]) -> int:
    """Folders above the file's own folder that ``dirname``/``.parent``/``parents[k]`` of ``__file__`` name."""
    names = [t.string for t in line_tokens if t.type == tokenize.NAME]
    levels = max(names.count('dirname') - 1, 0) + max(names.count('parent') - 1, 0)
    for i, tok in enumerate(line_tokens[:-2]):
        if tok.string == 'parents' and line_tokens[i + 1].string == '[' and line_tokens[i + 2].type == tokenize.NUMBER:
            levels += int(line_tokens[i + 2].string)
    return levels


def _uses_own_file(line_tokens: list[tokenize.TokenInfo]) -> bool:
    return any(t.string == '__file__' and (i == 0 or line_tokens[i - 1].string != '.')
               for i, t in enumerate(line_tokens))


def _string_runs(line_tokens: list[tokenize.TokenInfo]) -> list[tuple[int, list[str]]]:
    """Runs of string literals separated only by ``,`` or ``/`` (path components joined by a call or by ``/``)."""
    tokens = [t for t in line_tokens if t.type not in (tokenize.NL, tokenize.COMMENT)]
    runs, i = [], 0
    while i < len(tokens):
        if tokens[i].type != tokenize.STRING:
            i += 1
            continue
        start, parts = tokens[i].start[0], [_string_value(tokens[i].string)]
        while (i + 2 < len(tokens) and tokens[i + 1].string in (',', '/')
               and tokens[i + 2].type == tokenize.STRING):
            parts.append(_string_value(tokens[i + 2].string))
            i += 2
        runs.append((start, parts))
        i += 1
    return runs


def _python_findings(rel_path: str, source: str) -> list[Finding]:
    found = []
    lines = source.splitlines()
    logical: list[tokenize.TokenInfo] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in TEXT_TOKENS:
            text = _string_value(tok.string) if tok.type == tokenize.STRING else tok.string
            found += _text_findings(rel_path, tok.start[0], text)
        if tok.type not in (tokenize.NEWLINE, tokenize.ENDMARKER):
            logical.append(tok)
            continue
        if logical:
            own_file = _uses_own_file(logical)
            levels = _file_levels_up(logical) if own_file else 0
            runs = _string_runs(logical)
            for start, parts in runs:
                joined = '/'.join(parts)
                if EXTERNAL_REFERENCE.search(joined) and not any(EXTERNAL_REFERENCE.search(p) for p in parts):
                    found.append(Finding(rel_path, start, 'names the external reference folder', joined))
                if not joined.startswith('/') and '..' in joined.split('/') and _climbs_out(rel_path, levels, joined):
                    found.append(Finding(rel_path, start, f'{joined} leaves the repository', lines[start - 1]))
            if own_file and not runs and _climbs_out(rel_path, levels, ''):
                row = logical[0].start[0]
                found.append(Finding(rel_path, row, 'a folder above the repository', lines[row - 1]))
        logical = []
    return found


def _line_findings(rel_path: str, source: str) -> list[Finding]:
    found = []
    for number, text in enumerate(source.splitlines(), 1):
        found += _text_findings(rel_path, number, text)
        for chain in DOTDOT_CHAIN.findall(text):
            if _climbs_out(rel_path, 0, chain):
                found.append(Finding(rel_path, number, f'{chain} leaves the repository', text))
    return found


def path_findings(rel_path: str, source: str) -> list[Finding]:
    """Every absolute path, climbing relative path or external-reference mention in one file's source."""
    if rel_path.endswith('.py'):
        return _python_findings(rel_path, source)
    if rel_path.endswith(LINE_SUFFIXES):
        return _line_findings(rel_path, source)
    return []


def repository_findings(root: Path) -> list[Finding]:
    found = []
    for rel_path in repository_files(root):
        if rel_path not in NOT_SCANNED and rel_path.endswith(('.py', ) + LINE_SUFFIXES):
            found += path_findings(rel_path, (root / rel_path).read_text(encoding='utf-8'))
    return found


def test_no_file_names_a_path_outside_the_repository():
    found = repository_findings(REPO_ROOT)
    assert not found, 'paths outside the repository (use paths relative to the file, e.g. tests.official_data):\n' + \
        '\n'.join(map(str, found))


def test_no_tracked_text_file_mentions_the_external_reference_folder():
    found = []
    for rel_path in repository_files(REPO_ROOT, ('.', )):
        data = (REPO_ROOT / rel_path).read_bytes()
        if rel_path in NOT_SCANNED or b'\0' in data:
            continue
        for number, text in enumerate(data.decode('utf-8', errors='replace').splitlines(), 1):
            if EXTERNAL_REFERENCE.search(text):
                found.append(Finding(rel_path, number, 'names the external reference folder', text))
    assert not found, 'the reference data lives in tests/data/official:\n' + '\n'.join(map(str, found))


def test_file_listing_without_git_follows_the_gitignore(tmp_path):
    (tmp_path / '.gitignore').write_text('# build outputs\n__pycache__/\n*.egg-info/\n*.pyc\ndata/synth*/\n/.whl/\n')
    for rel_path in ['tests/a.py', 'tests/__pycache__/a.cpython-311.pyc', 'tests/b.pyc', 'tests/data/synth.json',
                     'data/synthhumans/train.json', 'x.egg-info/PKG-INFO', '.whl/mmcv.whl', 'tools/.whl/keep.sh',
                     'README.md']:
        (tmp_path / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel_path).write_text('x')
    assert repository_files(tmp_path, ('.', )) == ['.gitignore', 'README.md', 'tests/a.py', 'tests/data/synth.json',
                                                   'tools/.whl/keep.sh']
    assert repository_files(tmp_path) == ['tests/a.py', 'tests/data/synth.json', 'tools/.whl/keep.sh']


@pytest.mark.parametrize('rel_path, source, reason', [
    ('tests/pose/test_x.py', "FULL = Path('/srv/<S>/reference/state_dicts/tasks/x.json')\n", 'absolute path'),
    ('tests/pose/test_x.py', "FULL = Path('/srv/<S>/reference/state_dicts/tasks/x.json')\n", 'external reference'),
    ('tests/models/backbones/test_x.py',
     "REFERENCE = osp.join(osp.dirname(__file__), '..', '..', '..', '..', '<S>', 'reference')\n",
     'external reference'),
    ('tests/models/backbones/test_x.py', "REFERENCE = osp.join(osp.dirname(__file__), '..', '..', '..', '..', 'x')\n",
     'leaves the repository'),
    ('tests/x/test_x.py', "ROOT = Path(__file__).resolve().parents[3]\n", 'above the repository'),
    ('tests/x/test_x.py', "DATA = Path(__file__).resolve().parents[2] / '..' / 'data'\n", 'leaves the repository'),
    ('tests/test_x.py', "ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))\n",
     'above the repository'),
    ('tests/engine/configs/x.py', "_base_ = ['../../../../configs/_base_/default_runtime.py']\n",
     'leaves the repository'),
    ('tests/test_x.py', "out = tmp / 'x' if tmp else '/tmp/sapiens2/out'\n", 'absolute path /tmp'),
    ('tests/test_x.py', "def f(root='/home/user/data'):\n    pass\n", 'absolute path /home'),
    ('tests/test_x.py', "path = f'/scratch/{user}/ckpt.pth'\n", 'absolute path /scratch'),
    ('tests/test_x.py', "x = 1  # read from ../<S>/INSTALL-NOTES.md\n", 'external reference'),
    ('tests/test_x.py', "NOTES = 'see <S>/reference/README.md'\n", 'external reference'),
    ('tools/misc/x.sh', '# Creates .venv (see ../<S>/INSTALL-NOTES.md).\n', 'external reference'),
    ('tools/misc/x.sh', 'cd "$(dirname "$0")/../../.."\n', 'leaves the repository'),
    ('tools/x.sh', 'DATA=/mnt/data/humans\n', 'absolute path /mnt'),
    ('tools/x.sh', 'cd "/srv/main"\n', 'absolute path /srv'),
    ('configs/x.yaml', 'data_root: /datasets/coco\n', 'absolute path /datasets'),
])
def test_detector_reports(rel_path, source, reason):
    source = source.replace('<S>', SIBLING)
    assert any(reason in f.reason for f in path_findings(rel_path, source)), source


@pytest.mark.parametrize('rel_path, source', [
    ('tests/engine/configs/dist_toy.py', "_base_ = ['../../../configs/_base_/default_runtime.py']\n"),
    ('tests/data/toy_config.py', "_base_ = ['../../configs/_base_/default_runtime.py']\n"),
    ('tests/x/test_x.py', "ROOT = Path(__file__).resolve().parents[2]\nCFG = ROOT / 'configs' / 'a.py'\n"),
    ('tests/conftest.py', "REPO_ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))\n"),
    ('tools/dataset_converters/x.py', "OUT = osp.join(osp.dirname(__file__), '..', '..', 'configs', '_base_')\n"),
    ('tests/test_x.py', "script = '#!/usr/bin/env bash\\nprintf x > /dev/null'\n"),
    ('tests/test_x.py', "root = osp.expanduser('~/.cache/sapiens2/checkpoints')\n"),
    ('tests/test_x.py', "URL = 'https://download.openmmlab.com/mmpose/v1/a.pth'\n"),
    ('tests/test_x.py', "ratio = h / 2  # h/2 kv heads, 1/sqrt(d); ``backbone.*`` / ``decode_head.*``\n"),
    ('tests/test_x.py', "path = f'{root}/images/{name}'\nglob = '**/*.py'\n"),
    ('tests/test_x.py', "NAMES = ['raw', 'featmap', 'cls_token']  # shared by every test\n"),
    ('tools/x.sh', 'ROOT=$(cd "$(dirname "$0")/.." && pwd)\nls "$WHEEL_DIR"/mmcv-*.whl >/dev/null 2>&1\n'),
    ('tools/misc/x.sh', '#!/usr/bin/env bash\ncd "$(dirname "$0")/../.."\necho ...\n'),
])
def test_detector_accepts(rel_path, source):
    assert not path_findings(rel_path, source), [str(f) for f in path_findings(rel_path, source)]
