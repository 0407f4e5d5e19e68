"""Moved to :mod:`sapiens2.config.checks`; the path docs/distributed.md showed."""
from sapiens2.config.checks import *  # noqa: F401,F403
