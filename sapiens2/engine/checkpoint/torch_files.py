"""Torch checkpoint files under the trust policy: ``weights_only=True`` with exactly what MMEngine's own training
checkpoints need (:func:`safe_globals`); anything else raises :class:`UnsafeCheckpointError` unless trusted."""
import pickle
import warnings
from typing import Any, Callable, List, Tuple, Union

import numpy as np
import torch

from .errors import UnsafeCheckpointError
from .policy import TRUST_HINT

MapLocation = Union[str, torch.device, Callable, None]


def _numpy_globals() -> List[Union[Callable, Tuple[Callable, str]]]:
    from numpy import dtypes
    from numpy._core import multiarray
    dtype_classes = [getattr(dtypes, name) for name in dir(dtypes) if name.endswith('DType')]
    return [
        multiarray._reconstruct, multiarray.scalar, np.ndarray, np.dtype, *dtype_classes,
        # the module paths numpy 1.x wrote into checkpoints
        (multiarray._reconstruct, 'numpy.core.multiarray._reconstruct'),
        (multiarray.scalar, 'numpy.core.multiarray.scalar'),
    ]


def safe_globals() -> List[Union[Callable, Tuple[Callable, str]]]:
    """What ``weights_only=True`` loading allows beyond torch's defaults: exactly what MMEngine's own training
    checkpoints hold (numpy arrays, dtypes and scalars in ``meta`` and the message hub; the message hub's
    ``HistoryBuffer``, pickled without its statistics methods by a sapiens2 adaptation)."""
    from mmengine.logging import HistoryBuffer
    return [*_numpy_globals(), HistoryBuffer]


def _unsafe_globals(path: str) -> List[str]:
    try:
        return sorted(torch.serialization.get_unsafe_globals_in_checkpoint(path))
    except Exception:  # legacy (non-zip) or unreadable files: the caller reports torch's own error
        return []


def _describe_unsafe(path: str, unsafe: List[str], err: Exception) -> str:
    found = (f'pickle globals {", ".join(unsafe)}' if unsafe else
             f'objects torch\'s weights_only loader refuses (or the file is corrupt; torch: {err})')
    hint = (' (builtins.getattr usually comes from the message hub of a checkpoint saved by MMEngine without '
            'sapiens2, which pickles HistoryBuffer methods)') if 'builtins.getattr' in unsafe else ''
    return (f'{path} is not loaded: it holds {found}{hint}, and unpickling those can run arbitrary code. sapiens2 '
            f'loads torch files with weights_only=True, allowing tensors, containers, numpy values and MMEngine\'s '
            f'HistoryBuffer only. {TRUST_HINT}')


def torch_load(path: str, map_location: MapLocation, trusted: bool) -> Any:
    """``torch.load`` of ``path`` with ``weights_only=True`` and :func:`safe_globals`; a file that needs more raises
    :class:`UnsafeCheckpointError` naming its globals, or, when ``trusted``, loads with ``weights_only=False`` and a
    warning."""
    allowed = [g for g in safe_globals() if g not in torch.serialization.get_safe_globals()]
    try:
        with torch.serialization.safe_globals(allowed):
            return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as err:
        with torch.serialization.safe_globals(allowed):
            unsafe = _unsafe_globals(path)
        if not trusted:
            raise UnsafeCheckpointError(_describe_unsafe(path, unsafe, err)) from None
        warnings.warn(f'Loading {path} with weights_only=False because it is trusted: it holds '
                      f'{", ".join(unsafe) or "objects weights_only refuses"}, and unpickling runs any code the file '
                      f'contains.', stacklevel=3)
    return torch.load(path, map_location=map_location, weights_only=False)
