"""JSON written by sapiens2 is strict: NaN and infinities are null, so JavaScript's JSON.parse and jq read it."""
import json

import numpy as np
import pytest

from sapiens2.utils.strict_json import dumps, finite, load_file


def _strict(text):
    return json.loads(text, parse_constant=lambda token: pytest.fail(f'bare {token} in {text}'))


def test_non_finite_values_at_any_depth_are_null_and_the_rest_is_kept():
    value = dict(a=float('nan'), b=[1.5, float('inf'), (2, -float('inf'))], c=np.float32('nan'),
                 d=np.array([[1.0, np.nan]]), e='NaN', f=np.int64(3), g=None, h=True)
    assert _strict(dumps(value)) == dict(a=None, b=[1.5, None, [2, None]], c=None, d=[[1.0, None]], e='NaN', f=3,
                                         g=None, h=True)


def test_finite_json_is_written_as_json_dumps_writes_it():
    value = dict(x=[1, 2.5, 'y'], z={'w': None})
    assert dumps(value, indent=1) == json.dumps(value, indent=1)
    assert finite(value) == value


def test_what_json_cannot_write_is_still_a_type_error():
    with pytest.raises(TypeError):
        dumps(dict(x=object()))


def test_a_kept_file_reads_back_and_a_cut_one_is_one_line_with_the_remedy(tmp_path):
    path = tmp_path / 'record.json'
    path.write_text(dumps(dict(a=[1, None])))
    assert load_file(str(path), 'remove it') == dict(a=[1, None])
    path.write_text('{"a": [1,')  # cut short
    with pytest.raises(ValueError, match=r'^.*record\.json is not readable JSON \(.*\); remove it$'):
        load_file(str(path), 'remove it')
    with pytest.raises(ValueError, match=r'is not readable JSON \(.*Is a directory.*\); remove it$'):
        load_file(str(tmp_path), 'remove it')
