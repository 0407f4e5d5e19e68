"""``--cfg-options`` parses as MMEngine's DictAction does (importing MMEngine only when the option is given), and
reads values written as in a config."""
import argparse

from sapiens2.config.cli_options import ConfigOptionsAction


def test_config_options_parse_like_mmengine():
    parser = argparse.ArgumentParser()
    parser.add_argument('--cfg-options', nargs='+', action=ConfigOptionsAction)
    args = parser.parse_args(['--cfg-options', 'a=1', 'b=[1,(2,3)]', 'model.c=x', 'd=False'])
    assert args.cfg_options == {'a': 1, 'b': [1, (2, 3)], 'model.c': 'x', 'd': False}
    assert parser.parse_args([]).cfg_options is None


def test_config_options_take_values_written_as_in_a_config():
    """List and dict values with dict(...) (mmengine's DictAction recurses without end on them: a RecursionError in
    mmpose's and mmseg's tools) are read as data; what is not data is one argparse error."""
    parser = argparse.ArgumentParser()
    parser.add_argument('--cfg-options', nargs='+', action=ConfigOptionsAction)
    args = parser.parse_args(['--cfg-options', "test_evaluator=[dict(type='CocoMetric', ann_file='x')]",
                              "model.head={'type': 'H', 'k': (1, 2)}", 'a=1'])
    assert args.cfg_options == {'test_evaluator': [{'type': 'CocoMetric', 'ann_file': 'x'}],
                                'model.head': {'type': 'H', 'k': (1, 2)}, 'a': 1}
    errors = []
    parser.error = lambda message: errors.append(message)
    parser.parse_args(['--cfg-options', "x=[dict(type=__import__('os').getcwd())]"])
    assert len(errors) == 1 and 'x=' in errors[0] and 'a call to __import__' in errors[0]
