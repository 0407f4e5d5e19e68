"""sapiens2: Sapiens2 human-centric vision transformers on MMEngine / mmpose / mmsegmentation.

Importing the package registers all of its modules (see ``sapiens2.registry`` for which registry holds what).
"""
from .version import __version__
from . import engine, models, datasets, evaluation, codecs, visualization, apis  # noqa: E402,F401  (registration)

__all__ = ['__version__']
