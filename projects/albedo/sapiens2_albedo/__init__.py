"""Albedo estimation with Sapiens2, loaded by ``custom_imports``."""
from .albedo_inference_task import AlbedoInferenceTask  # noqa: F401
from .datasets import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
from .evaluation import *  # noqa: F401,F403
from .models import *  # noqa: F401,F403
