"""The vendored official reference data (``tests/data/official``) is complete, unmodified and within its budget."""
import hashlib

from tests import DATA_DIR, OFFICIAL_DIR, official_data

BUDGET_BYTES = 20 * 1024 * 1024


def _checksums() -> dict[str, str]:
    lines = official_data('SHA256SUMS').read_text().splitlines()
    return {name: digest for digest, name in (line.split(maxsplit=1) for line in lines)}


def test_every_file_matches_its_recorded_checksum():
    for name, digest in _checksums().items():
        assert hashlib.sha256(official_data(name).read_bytes()).hexdigest() == digest, name


def test_every_vendored_file_is_listed():
    present = {p.relative_to(OFFICIAL_DIR).as_posix() for p in OFFICIAL_DIR.rglob('*') if p.is_file()}
    assert present - {'SHA256SUMS'} == set(_checksums())


def test_test_data_stays_within_budget():
    assert sum(p.stat().st_size for p in DATA_DIR.rglob('*') if p.is_file()) < BUDGET_BYTES
