"""Sapiens2 pretraining (masked reconstruction + self-distillation + KoLeo) and dense probing."""
from .datasets import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
from .export import export_backbone  # noqa: F401  (public API)
from .models import *  # noqa: F401,F403
