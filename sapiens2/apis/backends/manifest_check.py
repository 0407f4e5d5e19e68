"""A bundle's manifest checked against what export writes, before anything runs (the graph: :mod:`.graph_check`).

An edited or mismatched manifest runs with wrong results or fails deep in the head's decoding: ``preprocess.in_graph``
turned to false normalises the images twice (keypoints 144 px off, exit 0), an ``outputs`` entry edited gives
``'list' object has no attribute 'flip'``, another task's ``model.onnx`` an ``AssertionError`` in mmpose's
``flip_heatmaps``. :func:`check_manifest` checks every field's type and allowed values (the schema of
what ``tools/deploy/export.py`` writes) and the fields that describe one thing twice (``preprocess.in_graph``
and ``input.layout``). Each problem is one :class:`BundleError` line.
"""
import numbers
from typing import Callable, List, Mapping, Tuple

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
    deep = [key for key, value in manifest.items() if nesting_depth(value) > MAX_DEPTH]
    if deep:
        raise BundleError(f'{manifest_path}: {deep[0]} nests more than {MAX_DEPTH} levels of lists and objects, more '
                          f'than any field export writes; {EXPORT_HINT}')
    problems = []
    for path, ok, expected, required in _FIELDS:
        value = _get(manifest, path)
        if value is _MISSING:
            if required:
                problems.append(f'{path} is missing (expected {expected})')
        elif not ok(value):
            problems.append(f'{path} is {_shown_value(value)}; export writes {expected}')
    problems += _disagreements(manifest)
    problems += _keypoint_indices(manifest.get('dataset_meta'))
    if problems:
        raise BundleError(f'{manifest_path}: ' + '; '.join(problems) + f'; {EXPORT_HINT}')


#: How deep export's manifest nests its values (``dataset_meta`` lists of pairs of numbers); a deeper value is no
#: manifest export wrote, and shown as such instead of in full (a repr of thousands of levels is a RecursionError).
MAX_DEPTH = 8


def nesting_depth(value, limit: int = MAX_DEPTH + 1) -> int:
    """How many levels of lists and objects ``value`` nests (a number: 0, ``[1, 2]``: 1), counted iteratively and
    up to ``limit``."""
    depth, level = 0, [value]
    while depth < limit and any(isinstance(item, (list, dict)) for item in level):
        depth += 1
        level = [child for item in level if isinstance(item, (list, dict))
                 for child in (item.values() if isinstance(item, dict) else item)]
    return depth


def _shown_value(value) -> str:
    """``value`` for an error line: its repr, cut to 80 characters; a deeply nested value by its depth."""
    depth = nesting_depth(value)
    if depth > MAX_DEPTH:
        return f'a {type(value).__name__} nested more than {MAX_DEPTH} levels deep'
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + '...'


def _keypoint_indices(meta) -> List[str]:
    """Problems of ``dataset_meta``'s keypoint indices: a skeleton link or flip index past the keypoints would be
    an ``IndexError`` when a picture is drawn, or a wrong flip."""
    if not isinstance(meta, Mapping):
        return []
    names = meta.get('keypoint_id2name')
    count = meta.get('num_keypoints', len(names) if isinstance(names, Mapping) else None)
    if not _positive_int(count):
        return []
    problems = []
    links = meta.get('skeleton_links')
    if links is not None:
        bad = [link for link in links if not (isinstance(link, list) and len(link) == 2 and
                                              all(isinstance(i, int) and 0 <= i < count for i in link))] \
            if isinstance(links, list) else [links]
        if bad:
            problems.append(f'dataset_meta.skeleton_links holds {_shown_value(bad[0])}; each link is a pair of '
                            f'keypoint indices 0..{count - 1} (num_keypoints {count})')
    flips = meta.get('flip_indices')
    if flips is not None and not (isinstance(flips, list) and len(flips) == count and
                                  all(isinstance(i, int) and 0 <= i < count for i in flips)):
        problems.append(f'dataset_meta.flip_indices is {_shown_value(flips)}; export writes {count} keypoint indices '
                        f'0..{count - 1}')
    return problems


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
