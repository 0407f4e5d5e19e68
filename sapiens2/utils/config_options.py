"""Moved to :mod:`sapiens2.config.option_checks`; the path docs/reliability.md showed."""
from sapiens2.config.option_checks import *  # noqa: F401,F403
