"""The repository's tests as a regular package, so ``tests.*`` resolves here and not to the unrelated top-level
``tests`` package that the mmsegmentation 1.2.2 wheel installs into site-packages.

Test data lives in ``tests/data`` (see its README); reach it through :func:`official_data`, never by a path that
leaves the repository.
"""
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / 'data'
OFFICIAL_DIR = DATA_DIR / 'official'


def official_data(*parts: str) -> Path:
    """The vendored official reference file ``tests/data/official/<parts...>``; a missing file is an error."""
    path = OFFICIAL_DIR.joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(f'{path} is missing: the official reference data is part of the repository '
                                f'(tests/data/official, listed in its SHA256SUMS); restore it from git')
    return path
