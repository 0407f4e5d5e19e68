"""What ``import sapiens2`` does: apply the adaptations and register every module (:func:`register_all_modules`).

The adaptations (:mod:`sapiens2.adaptations`) change MMEngine and the OpenMMLab libraries; the registering modules put
sapiens2's components into the registries (:mod:`sapiens2.registry` says which holds what). The backbone, the dense
heads and the engine need torch and MMEngine alone; data pipelines, pose, segmentation and inference register where
mmcv, mmpose and mmseg are installed. The console scripts import the package without this step
(:mod:`sapiens2_entry`) and call it before they build a model.
"""
import importlib

from sapiens2.utils.optional import is_installed

_registered = False


def _registering_packages() -> list:
    packages = ['engine.dist', 'engine.hooks', 'engine', 'evaluation', 'hub', 'models', 'structures']
    if is_installed('mmcv'):
        packages += ['apis', 'datasets', 'visualization']
    if is_installed('mmpose'):
        packages.append('codecs')
    return packages


def register_all_modules() -> None:
    """Apply the adaptations, then import every module that registers (once per process; later calls do nothing).

    Configs name ``sapiens2`` in ``custom_imports``, and ``import sapiens2`` calls this, so neither needs it; a
    program that imported the package through :mod:`sapiens2_entry` calls it before it builds a model.
    """
    global _registered
    if _registered:
        return
    from sapiens2.adaptations import apply_adaptations
    apply_adaptations()
    for name in _registering_packages():
        package = importlib.import_module(f'sapiens2.{name}')
        for public in getattr(package, '__all__', ()):
            getattr(package, public)  # a lazy export (PEP 562) imports its module here
    _registered = True
