"""Moved to :mod:`sapiens2.config.literals`; the path docs/checkpoints.md showed."""
from sapiens2.config.literals import *  # noqa: F401,F403
