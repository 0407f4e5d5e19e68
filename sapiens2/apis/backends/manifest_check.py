"""A bundle's manifest checked against what export writes, before anything runs (the graph: :mod:`.graph_check`).

An edited or mismatched manifest runs with wrong results or fails deep in the head's decoding: ``preprocess.in_graph``
turned to false normalises the images twice (keypoints 144 px off, exit 0), an ``outputs`` entry edited gives
``'list' object has no attribute 'flip'``, another task's ``model.onnx`` an ``AssertionError`` in mmpose's
``flip_heatmaps``. :func:`check_manifest` checks every field's type and allowed values (the schema of
what ``tools/deploy/export.py`` writes) and the fields that describe one thing twice (``preprocess.in_graph``
and ``input.layout``). Each problem is one :class:`BundleError` line.
"""
import numbers
from typing import Callable, List, Mapping, Optional, Tuple

from .bundle_error import BundleError

#: ``input.layout`` as export writes it, by ``preprocess.in_graph``.
INPUT_LAYOUTS = {True: 'BGR pixels in [0, 255], NCHW', False: 'normalised RGB, NCHW'}
STRUCTURES = ('tensor', 'tuple', 'list', 'dict')
EXPORT_HINT = 'export the bundle again with tools/deploy/export.py (a manifest is written by export, not by hand)'


def _number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _three_numbers(value) -> bool:
    return isinstance(value, list) and len(value) == 3 and all(map(_number, value))


def _shape(value) -> bool:
    """``['batch', d1, d2...]``: the dynamic batch, then positive sizes."""
    return isinstance(value, list) and len(value) >= 1 and value[0] == 'batch' and all(map(_positive_int, value[1:]))


def _str_map(value) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


#: (key path, check, what export writes there); optional keys are checked when present.
_FIELDS: Tuple[Tuple[str, Callable[[object], bool], str, bool], ...] = (
    ('task', lambda v: isinstance(v, str) and v != '', 'a task name such as "pose"', True),
    ('onnx', lambda v: _str_map(v) and 'fp32' in v or v == {}, 'a map {precision: file}, e.g. {"fp32": "model.onnx"}',
     True),
    ('config', lambda v: isinstance(v, str) and v != '', 'the config file name', True),
    ('input_size', lambda v: isinstance(v, list) and len(v) == 2 and all(map(_positive_int, v)), '[H, W]', True),
    ('input.shape', lambda v: _shape(v) and len(v) == 4 and v[1] == 3, '["batch", 3, H, W]', False),
    ('input.dtype', lambda v: v == 'float32', '"float32"', False),
    ('input.layout', lambda v: v in INPUT_LAYOUTS.values(), ' or '.join(map(repr, INPUT_LAYOUTS.values())), False),
    ('preprocess.mean', _three_numbers, 'three numbers', True),
    ('preprocess.std', lambda v: _three_numbers(v) and all(x > 0 for x in v), 'three numbers > 0', True),
    ('preprocess.bgr_to_rgb', lambda v: isinstance(v, bool), 'true or false', True),
    ('preprocess.in_graph', lambda v: isinstance(v, bool), 'true or false', True),
    ('dataset_meta', lambda v: v is None or isinstance(v, dict), 'an object or null', False),
    ('outputs.structure', lambda v: v in STRUCTURES, ', '.join(STRUCTURES), True),
    ('outputs.names', lambda v: isinstance(v, list) and len(v) >= 1 and all(isinstance(n, str) for n in v),
     'a list of output names', True),
    ('outputs.shapes', lambda v: isinstance(v, list) and len(v) >= 1 and all(map(_shape, v)),
     'a list of ["batch", sizes...]', True),
    ('parity', lambda v: isinstance(v, list) and all(isinstance(r, dict) for r in v), 'a list of reports', False),
    ('rope_dtype', _str_map, 'a map {format: dtype}', False),
    ('onnx_opset', _positive_int, 'an integer', False),
    ('sapiens2_version', lambda v: isinstance(v, str), 'a version string', False),
    ('pt2', lambda v: isinstance(v, str) and v != '', 'the .pt2 file name', False),
)
_MISSING = object()


def _get(manifest: Mapping, path: str):
    node = manifest
    for key in path.split('.'):
        if not isinstance(node, Mapping) or key not in node:
            return _MISSING
        node = node[key]
    return node


def check_manifest(manifest: Mapping, manifest_path: str) -> None:
    """Raise :class:`BundleError` (one line per problem) for a field of another type or value than export writes,
    or two fields that disagree."""
    problems = []
    for path, ok, expected, required in _FIELDS:
        value = _get(manifest, path)
        if value is _MISSING:
            if required:
                problems.append(f'{path} is missing (expected {expected})')
        elif not ok(value):
            problems.append(f'{path} is {value!r}; export writes {expected}')
    problems += _disagreements(manifest)
    if problems:
        raise BundleError(f'{manifest_path}: ' + '; '.join(problems) + f'; {EXPORT_HINT}')


def _disagreements(manifest: Mapping) -> List[str]:
    problems = []
    outputs = manifest.get('outputs') if isinstance(manifest.get('outputs'), Mapping) else {}
    names, shapes = outputs.get('names'), outputs.get('shapes')
    if isinstance(names, list) and isinstance(shapes, list) and len(names) != len(shapes):
        problems.append(f'outputs.names has {len(names)} entries but outputs.shapes {len(shapes)}')
    if outputs.get('structure') == 'tensor' and isinstance(shapes, list) and len(shapes) != 1:
        problems.append(f'outputs.structure is "tensor" but outputs.shapes lists {len(shapes)} outputs')
    in_graph, layout = _get(manifest, 'preprocess.in_graph'), _get(manifest, 'input.layout')
    if isinstance(in_graph, bool) and layout in INPUT_LAYOUTS.values() and layout != INPUT_LAYOUTS[in_graph]:
        problems.append(f'preprocess.in_graph is {str(in_graph).lower()} but input.layout says the graph takes '
                        f'{layout!r} (the preprocessing would be applied {"twice" if not in_graph else "never"})')
    size, shape = _get(manifest, 'input_size'), _get(manifest, 'input.shape')
    if isinstance(size, list) and _shape(shape) and list(shape[2:]) != list(size):
        problems.append(f'input_size is {size} but input.shape is {shape}')
    return problems
