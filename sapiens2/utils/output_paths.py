"""Output paths that fail clearly: folders that a file blocks, and file names too long for the file system."""
import hashlib
import os
import os.path as osp

#: Bytes a generated name may take before the suffixes the writers add to it (``_000012_predictions.json``...):
#: file names are limited to 255 bytes (NAME_MAX on Linux and macOS, 255 characters on Windows).
MAX_NAME_BYTES = 200
HASH_CHARS = 10


def fit_name(name: str) -> str:
    """``name`` when it takes at most :data:`MAX_NAME_BYTES` bytes (UTF-8), else its readable beginning, ``_`` and
    a short hash of the whole name: deterministic, and distinct for names that differ anywhere."""
    encoded = name.encode('utf-8', 'surrogateescape')
    if len(encoded) <= MAX_NAME_BYTES:
        return name
    prefix = name
    while len(prefix.encode('utf-8', 'surrogateescape')) > MAX_NAME_BYTES - HASH_CHARS - 1:
        prefix = prefix[:-1]
    return f'{prefix}_{hashlib.sha256(encoded).hexdigest()[:HASH_CHARS]}'


def make_folder(path: str, option: str) -> None:
    """``os.makedirs(path, exist_ok=True)``; when a file is in the way, one line naming it and ``option`` (the
    argument that chose the path, e.g. ``--out``) instead of ``[Errno 17] File exists``."""
    try:
        os.makedirs(path, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as err:
        raise NotADirectoryError(f'{option}: {_file_on_the_way(path)} is a file, not a folder; choose another '
                                 f'{option} or move that file') from err


def _file_on_the_way(path: str) -> str:
    """The first existing non-folder on ``path``, from its beginning, or ``path`` itself."""
    parts = osp.normpath(path).split(os.sep)
    for depth in range(1, len(parts) + 1):
        candidate = os.sep.join(parts[:depth]) or os.sep
        if osp.lexists(candidate) and not osp.isdir(candidate):
            return candidate
    return path
