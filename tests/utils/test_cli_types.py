"""``--cfg-options`` parses as MMEngine's DictAction does, importing MMEngine only when the option is given."""
import argparse

from sapiens2.utils.cli_types import ConfigOptionsAction


def test_config_options_parse_like_mmengine():
    parser = argparse.ArgumentParser()
    parser.add_argument('--cfg-options', nargs='+', action=ConfigOptionsAction)
    args = parser.parse_args(['--cfg-options', 'a=1', 'b=[1,(2,3)]', 'model.c=x', 'd=False'])
    assert args.cfg_options == {'a': 1, 'b': [1, (2, 3)], 'model.c': 'x', 'd': False}
    assert parser.parse_args([]).cfg_options is None
