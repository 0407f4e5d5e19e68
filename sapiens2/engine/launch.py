"""Library side of ``tools/train.py`` and ``tools/test.py``: config preparation and runner construction."""
import os.path as osp
from typing import Optional, Union

from mmengine.config import Config, DictAction  # noqa: F401  (DictAction re-exported for the tools)
from mmengine.registry import RUNNERS
from mmengine.runner import Runner

from sapiens2.engine.checkpoint import TRUST_CHECKPOINT_HELP  # noqa: F401  (re-exported for the tools)
from sapiens2.utils.config_check import check_config


def load_config(config: Union[str, Config], cfg_options: Optional[dict] = None) -> Config:
    """Reads a config (a file, a packaged ``sapiens2::pose/...`` name, or a ``Config``) and merges ``cfg_options``.

    Unknown ``type`` names (with suggestions) and a strategy without ``FlexibleRunner`` fail here, before any
    module is built.
    """
    if isinstance(config, Config):
        cfg = config
    else:
        from sapiens2.config_files import PREFIX, config_path
        path = config_path(config) if str(config).startswith(PREFIX) else str(config)
        if not osp.isfile(path):
            raise FileNotFoundError(f'Config file {path} does not exist; give a config file or a packaged name '
                                    'such as sapiens2::pose/sapiens2_1b_pose_goliath-1024x768.py '
                                    '(`sapiens2 configs` lists them).')
        try:
            cfg = Config.fromfile(path)
        except SyntaxError as err:
            where = err.filename if osp.isfile(err.filename or '') else f'{path} (or one of its _base_ files)'
            raise SyntaxError(f'config {where} is not valid Python: {err.msg}, line {err.lineno}') from err
    if cfg_options:
        cfg.merge_from_dict(cfg_options)
    check_config(cfg)
    return cfg


def default_work_dir(config_path: str) -> str:
    return osp.join('work_dirs', osp.splitext(osp.basename(config_path))[0])


def prepare_train_config(cfg: Config,
                         config_path: str,
                         work_dir: Optional[str] = None,
                         resume: Optional[str] = None,
                         amp: bool = False,
                         launcher: str = 'none',
                         trust_checkpoint: bool = False) -> Config:
    """Applies the train.py options. ``resume='auto'`` resumes from the latest checkpoint in the work dir;
    ``trust_checkpoint`` sets the config's ``trust_checkpoint`` (see docs/checkpoints.md)."""
    cfg.launcher = launcher
    if trust_checkpoint:
        cfg.trust_checkpoint = True
    cfg.work_dir = work_dir or cfg.get('work_dir') or default_work_dir(config_path)
    if amp:
        wrapper_type = cfg.optim_wrapper.get('type', 'OptimWrapper')
        if wrapper_type not in ('OptimWrapper', 'AmpOptimWrapper', 'Sapiens2AmpOptimWrapper'):
            raise ValueError(f'--amp needs optim_wrapper.type OptimWrapper or AmpOptimWrapper, got {wrapper_type}.')
        cfg.optim_wrapper.type = 'Sapiens2AmpOptimWrapper'  # bf16 autocast on CPU, MMEngine's AMP on GPU
        cfg.optim_wrapper.setdefault('loss_scale', 'dynamic')
    if resume == 'auto':
        cfg.resume, cfg.load_from = True, None
    elif resume is not None:
        cfg.resume, cfg.load_from = True, resume
    return cfg


def prepare_test_config(cfg: Config,
                        config_path: str,
                        checkpoint: str,
                        work_dir: Optional[str] = None,
                        launcher: str = 'none',
                        trust_checkpoint: bool = False) -> Config:
    """Applies the test.py options: load ``checkpoint`` (strictly, unless the config relaxes it)."""
    cfg.launcher = launcher
    if trust_checkpoint:
        cfg.trust_checkpoint = True
    cfg.work_dir = work_dir or cfg.get('work_dir') or default_work_dir(config_path)
    cfg.load_from = checkpoint
    cfg.resume = False
    return cfg


def build_runner(cfg: Config) -> Runner:
    """Builds ``cfg.runner_type`` (default ``Sapiens2Runner``) from the config, after applying its
    ``trust_checkpoint`` / ``allow_non_finite_weights`` keys to the process (docs/checkpoints.md)."""
    import sapiens2.engine  # noqa: F401  (registers Sapiens2Runner and patches MMEngine)
    from sapiens2.engine.checkpoint import apply_config_checkpoint_policy
    from sapiens2.engine.dist import init_distributed
    apply_config_checkpoint_policy(cfg)
    cfg.setdefault('runner_type', 'Sapiens2Runner')
    init_distributed(cfg.get('launcher'), **cfg.get('env_cfg', {}).get('dist_cfg', {}))  # gloo without a GPU
    return RUNNERS.build(cfg)
