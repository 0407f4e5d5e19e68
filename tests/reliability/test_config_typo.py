"""Config mistakes are reported up front: a typo in a ``type`` (with the key path and close registered names), and
a strategy without the FlexibleRunner that uses it."""
import pytest
from mmengine.config import Config

from sapiens2.utils.config_check import UnknownTypeError, check_config_types
from tests.engine.dist_launch import REPO, TOY_CONFIG


def test_valid_config_passes():
    check_config_types(Config.fromfile(str(TOY_CONFIG)))


def test_typos_are_listed_with_suggestions():
    cfg = Config.fromfile(str(TOY_CONFIG))
    cfg.optim_wrapper.optimizer.type = 'AdamWW'
    cfg.param_scheduler[0].type = 'LinerLR'
    cfg.runner_type = 'Sapiens2Runer'
    with pytest.raises(UnknownTypeError) as err:
        check_config_types(cfg)
    message = str(err.value)
    assert "optim_wrapper.optimizer.type = 'AdamWW'; did you mean 'AdamW'" in message
    assert "param_scheduler[0].type = 'LinerLR'; did you mean 'LinearLR'" in message
    assert "runner_type = 'Sapiens2Runer'; did you mean 'Sapiens2Runner'" in message
    assert str(TOY_CONFIG) in message and 'custom_imports' in message


def test_scoped_names_and_unrelated_strings_are_accepted():
    check_config_types(dict(a=dict(type='mmengine.LinearLR'), b=[dict(kind='NotAType')], c='AdamWW'))


def test_name_without_neighbours_says_so():
    with pytest.raises(UnknownTypeError, match='no similar registered name'):
        check_config_types(dict(model=dict(type='Qzxwvkjh')))


def test_tools_load_config_checks_types(tmp_path):
    from sapiens2.engine.launch import load_config
    config = tmp_path / 'typo.py'
    config.write_text(f"_base_ = ['{TOY_CONFIG}']\nmodel = dict(type='DistToyModle')\n")
    with pytest.raises(UnknownTypeError, match=r"model.type = 'DistToyModle'; did you mean 'DistToyModel'"):
        load_config(str(config))


def test_strategy_without_flexible_runner_is_reported(tmp_path):
    from sapiens2.engine.launch import load_config
    config = tmp_path / 'fsdp_without_runner.py'
    config.write_text(f"_base_ = ['{TOY_CONFIG}', '{REPO}/configs/_base_/strategies/fsdp.py']\n")
    with pytest.raises(ValueError, match=r"strategy=Sapiens2FSDPStrategy is ignored by runner_type='Sapiens2Runner'"):
        load_config(str(config))
    config.write_text(config.read_text() + "runner_type = 'FlexibleRunner'\n")
    load_config(str(config))
