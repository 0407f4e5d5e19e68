"""The console scripts ``sapiens2`` and ``sapiens2-infer``, outside the ``sapiens2`` package, so they answer at once.

``import sapiens2`` applies the adaptations and registers the core modules (:func:`sapiens2.register_modules`), which
imports torch and MMEngine: seconds that ``--help``, ``sapiens2 models``, argument errors, missing inputs and unknown
aliases do not need. While this module is imported, ``import sapiens2`` skips that step; a command calls
:func:`sapiens2.register_modules` itself before it builds a model (pose and segmentation modules register when a
config looks them up). Code that imports ``sapiens2`` without
this module (user code, tools, configs' ``custom_imports``) gets every module registered, as before.
"""
from typing import List, Optional

#: Read by ``sapiens2/__init__.py``: the package is imported by a console script, which registers when it needs to.
LIGHT_IMPORT = True


def main(argv: Optional[List[str]] = None) -> int:
    """``sapiens2``: version, packaged configs, model aliases, adaptations, inference, the web demo."""
    from sapiens2.cli import main as sapiens2_main
    return sapiens2_main(argv)


def infer_main(argv: Optional[List[str]] = None) -> int:
    """``sapiens2-infer``: run models on photos, folders, videos."""
    from sapiens2.apis.cli import main as infer
    return infer(argv)
