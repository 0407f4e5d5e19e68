"""Canonical pointmap + focal scale estimation with Sapiens2, loaded by ``custom_imports``."""
from .datasets import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
from .evaluation import *  # noqa: F401,F403
from .models import *  # noqa: F401,F403
from .pointmap_inference_task import PointmapInferenceTask  # noqa: F401
