"""SaveTestMetricsHook writes the test metrics where tools/test.py --out says (pose)."""
import json

import pytest

from sapiens2.engine.hooks import SaveTestMetricsHook


def test_writes_the_metrics_file_and_its_folder(tmp_path):
    path = tmp_path / 'results' / 'metrics.json'
    hook = SaveTestMetricsHook(str(path))
    hook.after_test_epoch(None, None)
    assert not path.exists()
    hook.after_test_epoch(None, {'coco/AP': 0.5, 'PCK': 0.25})
    assert json.loads(path.read_text()) == {'coco/AP': 0.5, 'PCK': 0.25}


def test_unknown_suffix_is_an_error():
    with pytest.raises(ValueError, match='must end with'):
        SaveTestMetricsHook('metrics.txt')


def test_a_metric_that_is_not_a_number_is_written_as_null(tmp_path):
    path = tmp_path / 'metrics.json'
    SaveTestMetricsHook(str(path)).after_test_epoch(None, {'PCK': float('nan'), 'AP': 0.5})
    assert json.loads(path.read_text(), parse_constant=lambda token: pytest.fail(token)) == {'PCK': None, 'AP': 0.5}
