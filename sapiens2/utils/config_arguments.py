"""Moved to :mod:`sapiens2.config.argument_checks`; the path docs/pose.md showed."""
from sapiens2.config.argument_checks import *  # noqa: F401,F403
