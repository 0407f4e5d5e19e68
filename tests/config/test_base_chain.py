"""A config's _base_ loop is found without running the configs, and named in one line instead of RecursionError."""
import pytest

from sapiens2.config.base_chain import BaseLoopError, base_loop, refuse_base_loop
from sapiens2.engine.launch import load_config


def test_a_loop_is_found_and_a_chain_without_one_is_not(tmp_path):
    (tmp_path / 'a.py').write_text("_base_ = ['b.py']\n")
    (tmp_path / 'b.py').write_text("_base_ = ['c.py', 'pkg::x.py']\n")
    (tmp_path / 'c.py').write_text("x = 1\n")
    assert base_loop(str(tmp_path / 'a.py')) is None
    (tmp_path / 'c.py').write_text("_base_ = './b.py'\n")
    assert base_loop(str(tmp_path / 'a.py')) == [str(tmp_path / n) for n in ('b.py', 'c.py', 'b.py')]


def test_a_config_that_is_its_own_base_is_one_line(tmp_path):
    (tmp_path / 'a.py').write_text("_base_ = 'a.py'\n")
    with pytest.raises(BaseLoopError, match=r'its _base_ files form a loop \(.*a\.py -> .*a\.py\)'):
        refuse_base_loop(str(tmp_path / 'a.py'))
    with pytest.raises(BaseLoopError):
        load_config(str(tmp_path / 'a.py'))
