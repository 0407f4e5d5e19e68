"""sapiens2: Sapiens2 human-centric vision transformers on MMEngine / mmpose / mmsegmentation.

Importing the package applies its adaptations of the OpenMMLab libraries (:mod:`sapiens2.adaptations`) and registers
its core modules; the pose and segmentation modules register at the first lookup in an mmpose or mmseg registry
(:mod:`sapiens2.registration`; :mod:`sapiens2.registry` says which registry holds what), so a config's
``custom_imports=['sapiens2']`` builds every sapiens2 component and a pose run never imports mmseg. The console
scripts (:mod:`sapiens2_entry`) import the package without that step, to answer ``--help`` and mistakes without
importing torch, and register when they build a model. Subpackages load on first use (``sapiens2.models``).
"""
import importlib
import importlib.util
import sys

from .registration import register_all_modules, register_modules
from .version import __version__

if not getattr(sys.modules.get('sapiens2_entry'), 'LIGHT_IMPORT', False):
    register_modules()


def __getattr__(name: str):
    """``sapiens2.<subpackage>`` after a light import (PEP 562)."""
    if name.startswith('_') or importlib.util.find_spec(f'{__name__}.{name}') is None:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    return importlib.import_module(f'{__name__}.{name}')


__all__ = ['__version__', 'register_all_modules', 'register_modules']
