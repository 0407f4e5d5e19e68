"""Kept for ``sapiens2/apis/cli.py`` until it imports ``TRUST_CHECKPOINT_HELP`` from ``sapiens2.engine.checkpoint``."""
from sapiens2.engine.checkpoint.policy import TRUST_CHECKPOINT_HELP  # noqa: F401
