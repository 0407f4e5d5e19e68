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
