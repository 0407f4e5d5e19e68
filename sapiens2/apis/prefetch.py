"""Old path of :mod:`sapiens2.apis.io.prefetch`, which docs/inference.md and docs/performance.md showed."""
from .io.prefetch import *  # noqa: F401,F403
