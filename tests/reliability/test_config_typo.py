"""Config mistakes are reported up front: a typo in a ``type`` (with the key path and close registered names), and
a strategy without the FlexibleRunner that uses it."""
import pytest
from mmengine.config import Config

from sapiens2.config.checks import UnknownTypeError, check_config_types
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


def test_misspelled_top_level_keys_warn_with_the_key_they_resemble():
    import warnings

    from sapiens2.config.checks import ConfigKeyWarning, check_top_level_keys
    with pytest.warns(ConfigKeyWarning) as caught:
        check_top_level_keys(dict(load_form='x.pth', resum=True, train_dataloder=dict(batch_size=2)))
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 3 and "'load_form' is not used by the runner; did you mean 'load_from'?" in messages[0]
    assert "'resum'" in messages[1] and "'resume'" in messages[1] and "'train_dataloader'" in messages[2]
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # a config's own variables, and a value of another type, are not reported
        check_top_level_keys(dict(load_from=None, train_pipeline=[], data_root='d', val_data_root='v',
                                  load_strict=False, trust_checkpoint=True, resum='text', _base_=['x.py']))
        adamw = dict(type='OptimWrapper', optimizer=dict(type='AdamW', lr=1e-3))
        check_top_level_keys(dict(cpu_optim_wrapper=adamw, optim_wrapper=dict(adamw)))  # the variable it was built from
    with pytest.warns(ConfigKeyWarning, match="'cpu_optim_wrapper' is not used by the runner"):
        check_top_level_keys(dict(cpu_optim_wrapper=adamw, optim_wrapper=dict(adamw, clip_grad=None)))


def test_packaged_configs_raise_no_key_or_value_complaint():
    import warnings

    from sapiens2.config.checks import check_config_values, check_top_level_keys
    from sapiens2.config.packaged import config_path
    for name in ('pose/sapiens2_1b_pose_goliath-1024x768.py', 'seg/sapiens2_nano_seg_synthhumans-128x96.py',
                 'pointmap/sapiens2_nano_pointmap_synthhumans-128x96.py'):
        cfg = Config.fromfile(config_path(f'sapiens2::{name}'))
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            check_top_level_keys(cfg)
        check_config_values(cfg)


def test_wrong_typed_values_are_listed_with_what_is_expected():
    from sapiens2.config.checks import ConfigValueError, check_config_values
    cfg = Config.fromfile(str(TOY_CONFIG))
    cfg.optim_wrapper.optimizer.lr = 'fast'
    cfg.optim_wrapper.optimizer.betas = (0.9, '0.999')
    cfg.param_scheduler[0].end = None
    cfg.train_dataloader.batch_size = True
    cfg.default_hooks.checkpoint.interval = '3'
    cfg.resume = 'False'
    with pytest.raises(ConfigValueError) as err:
        check_config_values(cfg)
    message = str(err.value)
    for line in ("optim_wrapper.optimizer.lr = 'fast' (str); expected a number >= 0, e.g. 1e-4",
                 "optim_wrapper.optimizer.betas = (0.9, '0.999') (tuple); expected two numbers",
                 'param_scheduler[0].end = None (NoneType); expected a number',
                 'train_dataloader.batch_size = True (bool); expected an integer >= 1',
                 "default_hooks.checkpoint.interval = '3' (str); expected an integer >= 1 (write it without quotes: 3)",
                 "resume = 'False' (str); expected True or False"):
        assert line in message, line
    assert str(TOY_CONFIG) in message
    check_config_values(Config.fromfile(str(TOY_CONFIG)))


# ------------------------------------------------------------------------------- arguments of registered modules
NANO_POSE = REPO / 'configs/pose/sapiens2_nano_pose_synthhumans-128x96.py'
NANO_SEG = REPO / 'configs/seg/sapiens2_nano_seg_synthhumans-128x96.py'


def argument_lines(tmp_path, base, body: str) -> list:
    from sapiens2.config.argument_checks import ConfigArgumentError
    from sapiens2.engine.launch import load_config
    config = tmp_path / 'typo.py'
    config.write_text(f"_base_ = ['{base}']\n{body}\n")
    with pytest.raises(ConfigArgumentError) as err:
        load_config(str(config))
    return [line.removeprefix(f'{config}: ') for line in str(err.value).splitlines()]


@pytest.mark.parametrize('base, body, line', [
    (NANO_POSE, 'model = dict(backbone=dict(patch_sise=8))',
     "model.backbone.patch_sise: Sapiens2 has no argument 'patch_sise'; did you mean 'patch_size'?"),
    (NANO_SEG, 'model = dict(decode_head=dict(num_clases=3))',
     "model.decode_head.num_clases: Sapiens2SegHead has no argument 'num_clases'; did you mean 'num_classes'?"),
    (NANO_POSE, 'train_cfg = dict(max_iter=10)',
     "train_cfg.max_iter: IterBasedTrainLoop has no argument 'max_iter'; did you mean 'max_iters'?"),
    (NANO_POSE, 'default_hooks = dict(logger=dict(intervall=5))',
     "default_hooks.logger.intervall: LoggerHook has no argument 'intervall'; did you mean 'interval'?"),
    (NANO_POSE, "default_hooks = dict(chekpoint=dict(type='CheckpointHook', interval=1))",
     'default_hooks.chekpoint: not a default hook name (it adds a second CheckpointHook beside '
     "default_hooks.checkpoint); did you mean 'checkpoint'?"),
    (NANO_POSE, "default_hooks = dict(best=dict(type='CheckpointHook', save_best='coco/AP'))",
     'default_hooks.best: not a default hook name (it adds a second CheckpointHook beside default_hooks.checkpoint); '
     'to run both, put it in custom_hooks'),
    (NANO_POSE, 'default_hooks = dict(chekpoint=None)',
     "default_hooks.chekpoint: not a default hook name (it does not configure default_hooks.checkpoint); did you "
     "mean 'checkpoint'?"),
    (NANO_SEG, "train_dataloader = dict(dataset=dict(pipeline=[dict(type='RandomFlip', prob=0.5, swap_seg_label=[])]))",
     "train_dataloader.dataset.pipeline[0].swap_seg_label: RandomFlip has no argument 'swap_seg_label'; did you mean "
     "'swap_seg_labels'?"),
    (NANO_POSE, "optim_wrapper = dict(optimizer=dict(weight_decya=0.1))",
     "optim_wrapper.optimizer.weight_decya: AdamW has no argument 'weight_decya'; did you mean 'weight_decay'?"),
])
def test_misspelt_arguments_are_one_line_with_the_closest_argument(tmp_path, base, body, line):
    assert argument_lines(tmp_path, base, body) == [line]


def test_packaged_configs_take_every_key():
    """One config of each kind (all of them pass too; reading every one takes 17 s)."""
    from sapiens2.config.argument_checks import check_config_arguments
    from sapiens2.config.packaged import config_path
    for name in ('pose/sapiens2_1b_pose_goliath-1024x768.py', 'seg/sapiens2_1b-4k_seg_bodypart29-4096x3072.py',
                 'seg/sapiens2_tiny_seg_synthhumans-256x192.py',
                 'normal/sapiens2_0.4b_normal_render_people-1024x768.py',
                 'pretrain/sapiens2_tiny_pretrain_synthhumans-128x96.py'):
        check_config_arguments(Config.fromfile(config_path(f'sapiens2::{name}')))


def test_kwargs_are_followed_to_the_base_class_they_are_forwarded_to():
    from mmengine.hooks import CheckpointHook
    from mmengine.optim import LinearLR

    from sapiens2.config.argument_checks import accepted_arguments
    from sapiens2.models.estimators.seg_tta_model import Sapiens2SegTTAModel
    assert {'swap_seg_labels', 'module', 'data_preprocessor'} <= accepted_arguments(Sapiens2SegTTAModel)
    assert {'start_factor', 'begin', 'end', 'by_epoch'} <= accepted_arguments(LinearLR)
    assert accepted_arguments(CheckpointHook) is None  # keeps **kwargs for itself (backend arguments): any key

    class KeepsKwargs:
        def __init__(self, a=1, **kwargs):
            self.extra = kwargs

    assert accepted_arguments(KeepsKwargs) is None
