"""Library side of ``tools/train.py`` and ``tools/test.py``: config preparation and runner construction."""
import os
import os.path as osp
from typing import Optional, Union

from mmengine.config import Config
from mmengine.registry import RUNNERS
from mmengine.runner import Runner

from sapiens2.config.checks import check_config
from sapiens2.config.custom_layout import apply_custom_layout
from sapiens2.config.option_checks import check_cfg_options
from sapiens2.engine.work_dir import check_work_dir, claim_work_dir


def load_config(config: Union[str, Config], cfg_options: Optional[dict] = None, check_data_layout: bool = True
                ) -> Config:
    """Reads a config (a file, a packaged ``sapiens2::pose/...`` name, or a ``Config``) and merges ``cfg_options``.
    The config of an exported bundle (a file beside a ``sapiens2_bundle.json``) is read as data, never run
    (:mod:`sapiens2.apis.backends.config_data`).

    Unknown ``type`` names (with suggestions) and a strategy without ``FlexibleRunner`` fail here, before any
    module is built. A ``custom_metainfo`` layout is written into the datasets and the model here
    (:func:`~sapiens2.config.custom_layout.apply_custom_layout`). ``check_data_layout=False`` (inference, which
    reads no dataset) skips the checks of the head and metrics against the datasets' layout.
    """
    if isinstance(config, Config):
        cfg = config
    else:
        from sapiens2.config.packaged import PREFIX, config_path
        path = config_path(config) if str(config).startswith(PREFIX) else str(config)
        if not osp.isfile(path):
            raise FileNotFoundError(f'Config file {path} does not exist; give a config file or a packaged name '
                                    'such as sapiens2::pose/sapiens2_1b_pose_goliath-1024x768.py '
                                    '(`sapiens2 configs` lists them).')
        _check_config_suffix(path)
        try:
            cfg = Config.fromfile(path)
        except SyntaxError as err:
            where = err.filename if osp.isfile(err.filename or '') else f'{path} (or one of its _base_ files)'
            raise SyntaxError(f'config {where} is not valid Python: {err.msg}, line {err.lineno}') from err
        except ImportError as err:
            raise _custom_import_error(path, err) from err
    if cfg_options:
        check_cfg_options(cfg, cfg_options)
        cfg.merge_from_dict(cfg_options)
    apply_custom_layout(cfg)
    check_config(cfg, check_data_layout)
    return cfg


#: The file types MMEngine reads as configs.
CONFIG_SUFFIXES = ('.py', '.json', '.yml', '.yaml')


def _check_config_suffix(path: str) -> None:
    """One line for a file that is no config (MMEngine: 'Only py/yml/yaml/json type are supported now!'), naming
    the config training wrote next to a checkpoint."""
    if osp.splitext(path)[1].lower() in CONFIG_SUFFIXES:
        return
    if osp.splitext(path)[1].lower() not in ('.pth', '.pt', '.ckpt', '.safetensors', '.bin'):
        raise ValueError(f'{path} is not a config file: configs are {", ".join(CONFIG_SUFFIXES)} files')
    try:
        configs = sorted(name for name in os.listdir(osp.dirname(osp.abspath(path))) if name.endswith('.py'))
    except OSError:
        configs = []
    config = osp.join(osp.dirname(path), configs[0]) if len(configs) == 1 else 'CONFIG.py'
    raise ValueError(f'{path} is a checkpoint, not a config: give the model\'s config ({config}'
                     f'{", the one training wrote next to it" if len(configs) == 1 else ""}) and pass {path} as its '
                     f'checkpoint, e.g. sapiens2-infer IMAGES --model {config} --weights {path}, or tools/test.py '
                     f'{config} {path}')


def _custom_import_error(path: str, err: ImportError) -> ImportError:
    """MMEngine's error for a ``custom_imports`` module that does not import lists ``sys.path`` but not the
    module: name it, and the module that is missing (it or one it imports)."""
    chain, cause = [], err
    while isinstance(cause, ImportError) and cause not in chain:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    deepest = next((e for e in reversed(chain) if e.name), None)
    if deepest is None or len(chain) == 1:
        return err
    return ImportError(f'config {path}: custom_imports cannot be imported: no module named {deepest.name!r} (it, or '
                       'a module it imports, is not installed or not on the path); install it, add its folder to '
                       'PYTHONPATH, or fix the name in custom_imports.imports')


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
    for key, value in (cfg.get('train_cfg') or {}).items():
        if key in ('max_iters', 'max_epochs') and value == 0:
            raise ValueError(f'train_cfg.{key} = 0 in {config_path}: the run would train nothing; give a number >= 1 '
                             '(tools/test.py evaluates a checkpoint without training)')
    cfg.work_dir = work_dir or cfg.get('work_dir') or default_work_dir(config_path)
    check_work_dir(cfg.work_dir)
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


def test_style(cfg: Config) -> str:
    """Which upstream ``tools/test.py`` a config's options follow: ``'pose'`` (mmpose scope), ``'seg'`` (mmseg
    scope) or ``'dense'`` (the sapiens2 dense projects, seg style)."""
    return {'mmpose': 'pose', 'mmseg': 'seg'}.get(cfg.get('default_scope'), 'dense')


def prepare_test_config(cfg: Config,
                        config_path: str,
                        checkpoint: str,
                        work_dir: Optional[str] = None,
                        launcher: str = 'none',
                        trust_checkpoint: bool = False,
                        out: Optional[str] = None,
                        dump: Optional[str] = None,
                        show_dir: Optional[str] = None,
                        show: bool = False,
                        wait_time: Optional[float] = None,
                        interval: Optional[int] = None,
                        tta: bool = False) -> Config:
    """Applies the test.py options: load ``checkpoint`` (strictly, unless the config relaxes it), and the output
    options with the meaning of the task's upstream tool, as config changes:

    * pose (mmpose's ``tools/test.py``): ``out`` = metrics file (``SaveTestMetricsHook``), ``dump`` = predictions
      pickle (mmengine's ``DumpResults`` added to ``test_evaluator``), ``show_dir`` / ``show`` / ``wait_time`` /
      ``interval`` = ``PoseVisualizationHook`` settings (enabled, pictures written to ``show_dir``);
    * seg (mmseg's): ``out`` = folder of ``<image stem>.png`` label maps (``test_evaluator.output_dir``),
      ``show_dir`` / ``show`` / ``wait_time`` = ``SegVisualizationHook`` drawing with ``visualizer.save_dir``,
      ``tta`` = ``tta_model`` around the model and ``tta_pipeline`` as the test pipeline;
    * dense projects (seg style): ``out`` = folder of the files ``sapiens2-infer`` writes (``SavePredictionsHook``),
      ``show_dir`` = the visualization hook's pictures under ``visualizer.save_dir``.

    With ``show``/``show_dir``, pictures are drawn for every ``interval``-th batch (default 1: mmpose's default;
    mmseg keeps the config's interval, 50, which draws nothing on small test sets).

    ``trust_checkpoint`` sets the config's ``trust_checkpoint`` (see docs/checkpoints.md). Raises ValueError for an
    option the config's task does not have.
    """
    cfg.launcher = launcher
    if trust_checkpoint:
        cfg.trust_checkpoint = True
    cfg.work_dir = work_dir or cfg.get('work_dir') or default_work_dir(config_path)
    check_work_dir(cfg.work_dir)
    cfg.load_from = checkpoint
    cfg.resume = False
    style = test_style(cfg)
    given = dict(dump=dump is not None, interval=interval is not None, tta=tta, show=show)
    allowed = dict(pose=('dump', 'interval', 'show'), seg=('tta', 'interval', 'show'), dense=('interval', ))[style]
    for option in (name for name, value in given.items() if value and name not in allowed):
        raise ValueError(f'--{option} is not an option of {style} configs (they have '
                         f'{", ".join("--" + name for name in ("out", "show-dir") + allowed)})')
    if show or show_dir:
        _enable_visualization(cfg, style, show_dir, show, wait_time, interval)
    if style == 'pose':
        if out is not None:
            cfg.custom_hooks = list(cfg.get('custom_hooks', [])) + [dict(type='SaveTestMetricsHook', out_file=out)]
        if dump is not None:
            if not dump.endswith(('.pkl', '.pickle')):
                raise ValueError(f'--dump {dump}: the predictions file must end with .pkl or .pickle')
            evaluators = cfg.test_evaluator if isinstance(cfg.test_evaluator, (list, tuple)) else [cfg.test_evaluator]
            cfg.test_evaluator = [*evaluators, dict(type='DumpResults', out_file_path=dump)]
        return cfg
    if tta:
        if 'tta_model' not in cfg or 'tta_pipeline' not in cfg:
            raise ValueError(f'--tta needs tta_model and tta_pipeline in the config {config_path}')
        cfg.test_dataloader.dataset.pipeline = cfg.tta_pipeline
        cfg.tta_model.module = cfg.model
        cfg.model = cfg.tta_model
    if out is not None and style == 'seg':
        evaluators = cfg.test_evaluator if isinstance(cfg.test_evaluator, (list, tuple)) else [cfg.test_evaluator]
        for evaluator in evaluators:
            evaluator['output_dir'] = out
    elif out is not None:
        cfg.custom_hooks = list(cfg.get('custom_hooks', [])) + [dict(type='SavePredictionsHook', out_dir=out)]
    return cfg


def _enable_visualization(cfg: Config, style: str, show_dir: Optional[str], show: bool, wait_time: Optional[float],
                          interval: Optional[int]) -> None:
    hook = cfg.get('default_hooks', {}).get('visualization')
    if hook is None:
        raise ValueError('--show/--show-dir need default_hooks.visualization in the config (e.g. '
                         'PoseVisualizationHook, SegVisualizationHook, NormalVisualizationHook)')
    if style == 'pose':  # mmpose's merge_args
        hook.update(enable=True, show=show, out_dir=osp.abspath(show_dir) if show_dir else None,
                    interval=interval or 1)
    else:  # mmseg's trigger_visualization_hook, drawing every batch unless --interval says otherwise
        hook.update(draw=True, interval=interval or 1)
        if show:
            hook['show'] = True
        if show_dir:
            cfg.visualizer['save_dir'] = show_dir
    if show and wait_time is not None:
        hook['wait_time'] = wait_time


def build_runner(cfg: Config, lock_work_dir: bool = False) -> Runner:
    """Builds ``cfg.runner_type`` (default ``Sapiens2Runner``) from the config, after applying its
    ``trust_checkpoint`` / ``allow_non_finite_weights`` keys to the process (docs/checkpoints.md). With
    ``lock_work_dir`` (training), rank 0 first takes the work dir's lock, so that a second live run there fails,
    and its checkpoint record, so that a file of a checkpoint name that training did not write stops the run
    (:func:`sapiens2.engine.work_dir.claim_work_dir`; the path itself was checked by :func:`prepare_train_config`).

    This is the one place where a config's checkpoint policy is applied, whatever its ``runner_type``."""
    import sapiens2.engine  # noqa: F401  (registers Sapiens2Runner and patches MMEngine)
    from sapiens2.engine.checkpoint import apply_config_checkpoint_policy
    from sapiens2.engine.dist import init_distributed
    apply_config_checkpoint_policy(cfg)
    cfg.setdefault('runner_type', 'Sapiens2Runner')
    init_distributed(cfg.get('launcher'), **cfg.get('env_cfg', {}).get('dist_cfg', {}))  # gloo without a GPU
    if lock_work_dir:
        claim_work_dir(cfg.work_dir, resume=bool(cfg.get('resume')))
    return RUNNERS.build(cfg)
