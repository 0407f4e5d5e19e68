"""The bad-input catalogue (tests/reliability/catalogue.py): each bad input fails with a clear error (what, which file,
how to fix), warns, or has its documented behaviour; and docs/reliability.md shows exactly these cases."""
import importlib
from pathlib import Path

import pytest

from tests.reliability.bad_input_files import H, W, coco_annotation
from tests.reliability.catalogue import CASES, FAULT_TESTS, REPO, render_tables, run, tables_in_doc


@pytest.mark.parametrize('case', CASES, ids=[c.id for c in CASES])
def test_bad_input(case, tmp_path):
    assert run(case, tmp_path) == 'clear'


def test_case_ids_are_unique_and_every_expectation_is_testable():
    assert len({c.id for c in CASES}) == len(CASES)
    for c in CASES:
        assert c.error is None or c.match, f'{c.id}: an expected error needs a message pattern'
        assert not (c.error and c.warning), c.id


def test_docs_table_is_generated_from_the_catalogue():
    assert tables_in_doc() == render_tables(), (
        'docs/reliability.md is out of date: run `python -m tests.reliability.catalogue --write`')


@pytest.mark.parametrize('node', [test for _, _, test in FAULT_TESTS])
def test_listed_fault_tests_exist(node):
    path, name = node.split('::')
    module = importlib.import_module(path[:-len('.py')].replace('/', '.'))
    assert callable(getattr(module, name, None)), f'{node} is listed in docs/reliability.md but does not exist'
    assert (REPO / path).is_file()


def test_a_case_without_its_outcome_is_not_clear(tmp_path):
    quiet = CASES[0].__class__('probe', 'probe', 'x', 'y', lambda tmp: (lambda: None), error=ValueError, match='x')
    wrong = CASES[0].__class__('probe', 'probe', 'x', 'y', lambda tmp: (lambda: 1 / 0), error=ValueError, match='x')
    assert run(quiet, Path(tmp_path)).startswith('silent') and run(wrong, tmp_path).startswith('unclear')


def test_pose_valid_sample_loads(tmp_path):
    from tests.reliability.catalogue import _pose_dataset
    sample = _pose_dataset(tmp_path, coco_annotation())[0]
    assert sample['img'].shape == (H, W, 3) and sample['keypoints'].shape == (1, 308, 2)


def test_seg_valid_labels_load(tmp_path):
    import numpy as np

    from tests.reliability.catalogue import _seg_dataset
    label = np.zeros((H, W), np.uint8)
    label[:10], label[-5:] = 28, 255
    assert set(np.unique(_seg_dataset(tmp_path, label)[0]['gt_seg_map'])) == {0, 28, 255}
