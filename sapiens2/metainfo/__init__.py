"""Keypoint and body-part metadata shipped inside the package (data of the official release, as JSON).

Components find it through the package, never through a path relative to the working directory (the official
pose components do that; see docs/differences.md).
"""
import json
from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=None)
def load_metainfo(name: str) -> dict:
    """The parsed ``sapiens2/metainfo/<name>`` (cached: do not mutate), e.g. ``'keypoints308.json'``."""
    path = resources.files(__name__) / name
    if not path.is_file():
        raise FileNotFoundError(f'Packaged metadata {path} is missing; reinstall sapiens2 (pip install -e .).')
    return json.loads(path.read_text())
