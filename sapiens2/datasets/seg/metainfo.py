"""Moved to :mod:`sapiens2.metainfo.seg29`; the path docs/modules.md showed."""
from sapiens2.metainfo.seg29 import *  # noqa: F401,F403
