"""A config text is read as data: what ``Config.dump`` writes reads back as ``Config.fromfile`` reads it, and
anything else is refused, naming the line and what was found, without running it."""
import pytest
from mmengine.config import Config

from sapiens2.config.literals import ConfigNotDataError, config_values


def test_what_config_dump_writes_reads_back_as_fromfile_reads_it(tmp_path):
    values = dict(model=dict(type='Sapiens2', scale=-0.5, size=(256, 192), empty=(), flags=[True, None, False]),
                  pipeline=[dict(type='Resize', keep=-3), dict(type='Pack', keys=('img', 'meta'))],
                  mapping={'not-an-identifier': dict(a=1e-05), 2: 'two'}, classes={'a', 'b'}, quote='it\'s "q"',
                  nested=[[1, (2, 3)], []], big=2**70, neg=-1e308, one=(5, ), listed=[{'x-y': 1}])
    path = str(tmp_path / 'config.py')
    Config(values).dump(path)
    assert config_values(open(path).read(), path) == Config.fromfile(path).to_dict() == values


@pytest.mark.parametrize('text, found', [
    ("_x = __import__('os').system('true')", r"line 1: a call to __import__\('os'\)\.system"),
    ("model = dict()\nimport os", r'line 2: an import \(import os\)'),
    ('def f():\n    pass', 'line 1: a definition of f'),
    ("model = dict(type=open('x').read())", r"line 1: a call to open\('x'\)\.read"),
    ('model = dict(**other)', 'line 1: a call to dict'),
    ('a = 1\nb = a', r'line 2: the name a \(a variable, not a value\)'),
    ('a = 2 ** 3', r'line 1: an expression \(2 \*\* 3\)'),
    ('a, b = 1, 2', r'line 1: an assignment other than `name = value`'),
    ('x = 1\nprint(x)', r'line 2: a call to print'),
    ('model = dict(', 'line 1: not a config'),
])
def test_anything_but_literal_assignments_is_refused_naming_the_line(text, found):
    with pytest.raises(ConfigNotDataError, match=rf'^config\.py, {found}'):
        config_values(text, 'config.py')
