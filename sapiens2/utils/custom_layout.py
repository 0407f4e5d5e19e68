"""Moved to :mod:`sapiens2.config.custom_layout`; the path docs/custom_data.md showed."""
from sapiens2.config.custom_layout import *  # noqa: F401,F403
