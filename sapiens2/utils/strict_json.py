"""JSON that every parser reads: NaN and infinities written as ``null``.

Python's ``json.dumps`` writes a non-finite float as the bare token ``NaN`` or ``Infinity``, which is not JSON:
JavaScript's ``JSON.parse``, ``jq`` and most other languages' parsers refuse the whole file. A person's 3D keypoint
where the pointmap is invalid, a metric of an empty set, a depth range of no pixel... are such values, so every JSON
file sapiens2 writes goes through :func:`dumps`, which writes them as ``null`` (the "no value" of JSON) and fails,
with ``allow_nan=False``, rather than ever write a bare token.
"""
import json
import math
from typing import Any

import numpy as np


def finite(value: Any) -> Any:
    """``value`` with every non-finite float (Python or numpy, at any depth of dicts, lists, tuples and numpy
    arrays) replaced by ``None``; numpy numbers and arrays become Python numbers and lists."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, np.ndarray):
        return finite(value.tolist())
    if isinstance(value, np.generic):
        return finite(value.item())
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, **kwargs)`` with non-finite floats written as ``null`` (:func:`finite`; only when there
    is one: the common case costs one ``json.dumps``), never as a bare ``NaN``."""
    try:
        return json.dumps(value, allow_nan=False, **kwargs)
    except (ValueError, TypeError):  # a non-finite float, or a numpy value that finite() converts
        return json.dumps(finite(value), allow_nan=False, **kwargs)


def load_file(path: str, remedy: str) -> Any:
    """The JSON value in ``path``, a file this program keeps and reads back (a record, a results list); one that
    cannot be read or parsed is one ``ValueError`` line naming it, the reason and ``remedy`` (what the user does)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as err:
        raise ValueError(f'{path} is not readable JSON ({err}); {remedy}') from err
