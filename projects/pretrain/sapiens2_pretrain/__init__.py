"""Sapiens2 pretraining (masked reconstruction + self-distillation + KoLeo) and dense probing."""
from .datasets import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
from .export import export_backbone  # noqa: F401
from .models import *  # noqa: F401,F403
