"""Old path of :mod:`sapiens2.apis.io.sources`, which docs/inference.md showed."""
from .io.sources import *  # noqa: F401,F403
