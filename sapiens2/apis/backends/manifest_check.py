"""A bundle's manifest checked against what export writes and against its ONNX graph, before anything runs.

An edited or mismatched manifest runs with wrong results or fails deep in the head's decoding: ``preprocess.in_graph``
turned to false normalises the images twice (keypoints 144 px off, exit 0), an ``outputs`` entry edited gives
``'list' object has no attribute 'flip'``, another task's ``model.onnx`` an ``AssertionError`` in mmpose's
``flip_heatmaps``. :func:`check_manifest` checks every field's type and allowed values (the schema of
what ``tools/deploy/export.py`` writes) and the fields that describe one thing twice (``preprocess.in_graph``
and ``input.layout``); :func:`check_graph` compares the manifest's input and outputs with the ONNX session's, and
the outputs' channels with the head of the bundle's config. Each problem is one :class:`BundleError` line.
"""
import numbers
from typing import TYPE_CHECKING, Callable, List, Mapping, Optional, Tuple

from .bundle_error import BundleError

if TYPE_CHECKING:
    from torch import nn

    from .bundle import Bundle

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


def check_graph(bundle: 'Bundle', inputs: List[Tuple[str, list]], outputs: List[Tuple[str, list]],
                onnx_path: str) -> None:
    """Compare the ONNX graph's inputs and outputs ((name, shape) pairs, a dimension a str when symbolic) with the
    manifest's ``input_size`` and ``outputs``; :class:`BundleError` when they disagree (another model's file, or an
    edited manifest)."""
    problems = []
    height, width = bundle.input_size
    if len(inputs) != 1 or _static(inputs[0][1])[1:] not in ([3, height, width], [None, None, None]):
        problems.append(f'the graph takes {_shown(inputs)} but the manifest gives input_size [{height}, {width}] '
                        '(one input of [batch, 3, H, W])')
    expected = bundle.outputs['shapes']
    if len(outputs) != len(expected):
        problems.append(f'the graph has {len(outputs)} outputs ({_shown(outputs)}) but the manifest lists '
                        f'{len(expected)}')
    else:
        for (name, shape), want in zip(outputs, expected):
            have = _static(shape)
            if len(have) != len(want) or any(h is not None and h != w for h, w in zip(have[1:], want[1:])):
                problems.append(f'output {name} is {_dims(shape)} in the graph but {want} in the manifest')
    if problems:
        raise BundleError(f'bundle {bundle.folder}: {onnx_path} does not match its manifest: ' + '; '.join(problems)
                          + '; the ONNX file belongs to another model or the manifest was edited: '
                          + EXPORT_HINT)


def check_preprocess_in_graph(bundle: 'Bundle', onnx_path: str) -> None:
    """``preprocess.in_graph`` against the graph: export puts the normalisation in the graph as two float32
    constants, the mean and the std (``ExportableModel``); the file holds their bytes exactly when it normalises its
    input itself. (A byte search over the memory-mapped file: the graph is not parsed, whatever its size.)"""
    import mmap

    import numpy as np
    constants = [np.asarray(bundle.preprocess[key], np.float32).tobytes() for key in ('mean', 'std')]
    with open(onnx_path, 'rb') as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        holds = all(data.find(constant) >= 0 for constant in constants)
    in_graph = bundle.preprocess['in_graph']
    if holds != in_graph:
        says = ('normalises its input itself (it holds the mean and std constants)' if holds else
                "holds no normalisation with the manifest's mean and std")
        effect = 'twice' if holds else 'never'
        raise BundleError(f'bundle {bundle.folder}: preprocess.in_graph is {str(in_graph).lower()} but {onnx_path} '
                          f'{says}: the images would be normalised {effect}; {EXPORT_HINT}')


def check_config_outputs(bundle: 'Bundle', model: 'nn.Module') -> None:
    """The manifest's ``outputs`` against those of the bundle's config: its model (built on the ``meta`` device, so
    no weight is allocated and nothing is computed) runs on a meta batch of ``input_size``, giving the structure and
    shapes export records (export's ``output_spec``). A model that cannot run on the meta device
    is not checked here (:func:`check_graph` still compares the graph with the manifest)."""
    import torch
    head = model.head if hasattr(model, 'head') else model.decode_head
    try:
        with torch.device('meta'), torch.no_grad():
            out = head.forward(model.extract_feat(torch.empty(1, 3, *bundle.input_size)))
    except Exception:  # noqa: BLE001  (an operator without a meta kernel: left to check_graph)
        return
    structure = 'dict' if isinstance(out, dict) else type(out).__name__ if isinstance(out, (tuple, list)) else 'tensor'
    values = list(out.values()) if isinstance(out, dict) else list(out) if structure != 'tensor' else [out]
    shapes = [['batch', *value.shape[1:]] for value in values]
    recorded = bundle.outputs
    if structure != recorded['structure'] or shapes != recorded['shapes']:
        raise BundleError(f'bundle {bundle.folder}: its manifest records outputs {recorded["structure"]} '
                          f'{recorded["shapes"]} but the {type(head).__name__} of its config returns {structure} '
                          f'{shapes}; the ONNX file or the config belongs to another model, or the manifest was '
                          f'edited: {EXPORT_HINT}')


def _static(shape) -> List[Optional[int]]:
    return [dim if isinstance(dim, int) else None for dim in shape]


def _dims(shape) -> str:
    return '[' + ', '.join(str(dim) if isinstance(dim, int) else 'batch' for dim in shape) + ']'


def _shown(pairs) -> str:
    return ', '.join(f'{name} {_dims(shape)}' for name, shape in pairs)
