"""Fuzzing the annotation readers with random mutations of valid files (fixed seeds, bounded in count and time):
every outcome is a successful load or one of the errors the catalogue documents for that reader, naming the file."""
import copy
import json
import math
import random
import time

import numpy as np
import pytest

from tests.reliability.bad_input_files import coco_annotation, write_image
from tests.reliability.catalogue import documented_errors

CASES = 120
BUDGET_S = 20.0
JUNK = [None, '', 'x', -1, 0, 1e12, math.nan, [], {}, [1, 2], {'a': 1}, True]


def _paths(node, path=()):
    """Every (container path, key/index) inside a JSON document."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        yield path + (key, )
        yield from _paths(value, path + (key, ))


def _mutate(doc: dict, rng: random.Random) -> tuple[str, str]:
    """One random structural (delete / replace / duplicate) or textual (truncate / flip) mutation.

    Returns the mutated JSON text and a description of the mutation.
    """
    kind = rng.choice(['delete', 'replace', 'replace', 'duplicate', 'truncate', 'flip'])
    if kind in ('truncate', 'flip'):
        text = json.dumps(doc)
        i = rng.randrange(len(text))
        if kind == 'truncate':
            return text[:i], f'truncated at char {i}'
        char = rng.choice('{}[],:"0a-')
        return text[:i] + char + text[i + 1:], f'char {i} {text[i]!r} -> {char!r}'
    doc = copy.deepcopy(doc)
    paths = list(_paths(doc))
    outside_lists = [p for p in paths if not isinstance(p[-1], int) or p[-2] != 'keypoints']
    *parent_path, key = rng.choice(outside_lists if rng.random() < 0.7 else paths)  # not only keypoint values
    parent = doc
    for step in parent_path:
        parent = parent[step]
    where = '.'.join(str(p) for p in (*parent_path, key))
    if kind == 'delete':
        del parent[key]
        return json.dumps(doc), f'deleted {where}'
    if kind == 'replace':
        parent[key] = copy.deepcopy(rng.choice(JUNK))
        return json.dumps(doc), f'{where} -> {parent[key]!r}'
    if isinstance(parent, list):
        parent.append(copy.deepcopy(parent[key]))
    else:
        parent[key] = [parent[key], parent[key]]
    return json.dumps(doc), f'duplicated {where}'


def _outcome(load, path: str, errors: tuple) -> str:
    """'ok', 'error' (one of ``errors``, naming ``path``) or a description of the unclear failure."""
    try:
        load()
    except errors as err:
        return 'error' if path in str(err) else f'{type(err).__name__} without the file name: {err}'
    except Exception as err:  # noqa: BLE001  (anything else is an unclear crash)
        return f'{type(err).__name__}: {err}'
    return 'ok'


def _assert_all_clear(outcomes: list[str], inputs: list[str]) -> None:
    unclear = {o.split(':')[0] + ':' + o.split(':')[1][:80]: text for o, text in zip(outcomes, inputs)
               if o not in ('ok', 'error')}
    assert not unclear, f'{len(unclear)} kinds of unclear failures:\n' + '\n'.join(
        f'- {kind}\n    input: {text[:100]!r}' for kind, text in unclear.items())


@pytest.mark.slow
def test_fuzz_pose_annotation_reader(tmp_path):
    from sapiens2.datasets.pose.keypoints308_dataset import Keypoints308CocoDataset
    write_image(tmp_path / 'rgb/0.png')
    ann_file = tmp_path / 'ann.json'
    rng, valid, outcomes, inputs, start = random.Random(0), coco_annotation(), [], [], time.monotonic()
    while len(outcomes) < CASES and time.monotonic() - start < BUDGET_S:
        text, mutation = _mutate(valid, rng)
        ann_file.write_text(text)
        inputs.append(mutation)
        outcomes.append(_outcome(
            lambda: Keypoints308CocoDataset(data_root=str(tmp_path), ann_file='ann.json', data_prefix=dict(img=''),
                                            serialize_data=False), 'ann.json', documented_errors('pose dataset')))
    assert len(outcomes) >= 20 and 'error' in outcomes
    _assert_all_clear(outcomes, inputs)


def test_fuzz_camera_matrix_reader(tmp_path):
    from sapiens2_pointmap.datasets.load_pointmap_annotations import read_matrix
    path = tmp_path / 'K.txt'
    rng, outcomes, inputs = random.Random(0), [], []
    for _ in range(60):
        text = '\n'.join(' '.join(str(v) for v in row) for row in np.eye(3) * 50)
        i = rng.randrange(len(text))
        text = text[:i] + rng.choice(['', 'x', ' ', '\n', 'nan', '1e999', ',', '-']) + text[i + rng.randint(0, 3):]
        path.write_text(text)
        inputs.append(text)
        outcomes.append(_outcome(lambda: read_matrix(str(path), (3, 3)), str(path), documented_errors('camera files')))
    assert 'error' in outcomes and 'ok' in outcomes
    _assert_all_clear(outcomes, inputs)
