"""Every change sapiens2 makes to the behaviour of MMEngine and the OpenMMLab libraries, in one place.

Each :class:`Adaptation` names the library it changes, the versions it was written and tested for, and why.
:func:`apply_adaptations` (called once by ``import sapiens2``) applies them idempotently. An adaptation whose library
is not installed is skipped; one whose library has another version is skipped with a warning that says what will
not work, because patching code it was not written for could do worse than not patching it.

``python -c "import sapiens2.adaptations as a; print(a.describe())"`` lists them and whether each is applied.
"""
import importlib
import importlib.metadata
import importlib.util
import os.path as osp
import re
import warnings
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple


@dataclass(frozen=True)
class Adaptation:
    """One change to a library's behaviour.

    Args:
        name: Short identifier.
        package: Distribution whose behaviour changes (``'mmengine'``, ``'mmpose'``...).
        versions: Versions it was written for: exact (``'0.10.7'``) or a prefix ending in ``'*'`` (``'0.10.*'``).
        why: What it changes and why (one sentence, shown by :func:`describe`).
        apply: Applies the change; called at most once per process.
    """

    name: str
    package: str
    versions: Tuple[str, ...]
    why: str
    apply: Callable[[], None]


# Distributions whose import name differs from the distribution name.
_MODULES = {'mmsegmentation': 'mmseg'}


def _installed_version(package: str) -> Optional[str]:
    """The version of an installed, importable distribution, else None."""
    from sapiens2.utils.optional import is_installed
    if not is_installed(_MODULES.get(package, package)):
        return None
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _version_matches(version: str, patterns: Tuple[str, ...]) -> bool:
    return any(version.startswith(p[:-1]) if p.endswith('*') else version == p for p in patterns)


# --- MMEngine ------------------------------------------------------------------------------------------------------

def _silence_mmengine_pkg_resources_warning() -> None:
    # MMEngine imports pkg_resources in get_installed_path, and is_installed re-imports it with importlib.reload,
    # so the warning is attributed to mmengine.utils.package_utils or to importlib.
    warnings.filterwarnings('ignore', message=re.escape('pkg_resources is deprecated as an API'),
                            category=UserWarning, module=r'(mmengine\.utils\.package_utils|importlib)$')


def _read_checkpoints_with_sapiens2_loader() -> None:
    from mmengine.runner.checkpoint import CheckpointLoader

    from sapiens2.engine.checkpoint import read_checkpoint_file, resolve_checkpoint_path
    from sapiens2.hub.reference import HF_PREFIX

    @CheckpointLoader.register_scheme(prefixes=('', HF_PREFIX), force=True)
    def load_local_checkpoint(filename: str, map_location=None) -> dict:
        path = resolve_checkpoint_path(filename)
        checkpoint = read_checkpoint_file(path, map_location or 'cpu')
        if path.endswith('.safetensors'):
            checkpoint = {'state_dict': checkpoint}
        return checkpoint


def _write_local_files_atomically() -> None:
    from mmengine.fileio import register_backend

    from sapiens2.engine.atomic_save import AtomicLocalBackend
    register_backend('local', AtomicLocalBackend, force=True, prefixes='')


def _find_editable_packages() -> None:
    import mmengine.config.config as config_module
    upstream = config_module.get_installed_path

    def get_installed_path(package: str) -> str:
        path = upstream(package)
        if osp.isdir(path):
            return path
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            return list(spec.submodule_search_locations)[0]
        return path

    config_module.get_installed_path = get_installed_path


def _resolve_sapiens2_config_bases() -> None:
    from mmengine.config.utils import MODULE2PACKAGE
    MODULE2PACKAGE.setdefault('sapiens2', 'sapiens2')


def _scope_sapiens2_bases_by_their_default_scope() -> None:
    from mmengine.config import Config
    upstream = Config._dict_to_config_dict

    def _dict_to_config_dict(cfg, scope=None, has_scope=True):
        if scope == 'sapiens2' and isinstance(cfg, dict) and isinstance(cfg.get('default_scope'), str):
            scope = cfg['default_scope']
        return upstream(cfg, scope, has_scope)

    Config._dict_to_config_dict = staticmethod(_dict_to_config_dict)


def _log_the_config_at_debug() -> None:
    import logging

    from mmengine.runner import FlexibleRunner, Runner

    class ConfigAtDebug(logging.Filter):

        def filter(self, record: logging.LogRecord) -> bool:
            if record.levelno == logging.INFO and str(record.msg).startswith('Config:\n'):
                record.levelno, record.levelname = logging.DEBUG, 'DEBUG'
            return True

    for runner_cls in (Runner, FlexibleRunner):

        def _log_env(self, *args, _upstream=runner_cls._log_env, **kwargs) -> None:
            demote = ConfigAtDebug()
            self.logger.addFilter(demote)
            try:
                _upstream(self, *args, **kwargs)
            finally:
                self.logger.removeFilter(demote)
            name = osp.basename(self.cfg.filename) if self.cfg.filename else f'{self.timestamp}.py'
            self.logger.info(f'Config: {osp.join(self.work_dir, name)} (log_level="DEBUG" also logs it here)')

        runner_cls._log_env = _log_env


# --- mmpose --------------------------------------------------------------------------------------------------------

def _draw_circles_with_scalar_radius() -> None:
    import numpy as np
    from mmpose.visualization.opencv_backend_visualizer import OpencvBackendVisualizer
    upstream = OpencvBackendVisualizer.draw_circles

    def draw_circles(self, center, radius, *args, **kwargs):
        if self.backend == 'opencv' and isinstance(radius, np.ndarray) and radius.size == 1:
            radius = radius.item()
        return upstream(self, center, radius, *args, **kwargs)

    OpencvBackendVisualizer.draw_circles = draw_circles


# --- mmseg ---------------------------------------------------------------------------------------------------------

def _silence_mmseg_build_loss_notice() -> None:
    warnings.filterwarnings('ignore', message=re.escape('``build_loss`` would be deprecated soon'),
                            category=UserWarning, module=r'mmseg\.models\.builder$')


ADAPTATIONS: List[Adaptation] = [
    # First: later adaptations import MMEngine modules that can import pkg_resources.
    Adaptation(
        'quiet-pkg-resources', 'mmengine', ('0.10.7', ),
        "Hides the `pkg_resources is deprecated` UserWarning that MMEngine's get_installed_path and is_installed "
        'raise on every command (other warnings, and this one from any other module, still show).',
        _silence_mmengine_pkg_resources_warning),
    Adaptation(
        'checkpoint-loader', 'mmengine', ('0.10.7', ),
        "MMEngine's local checkpoint scheme (and an hf:// scheme) reads .safetensors and torch files, Hub "
        'references and model aliases through sapiens2\'s one checkpoint loader (sapiens2.engine.checkpoint), so '
        'load_from, --resume, init_cfg, tools/test.py and mmdet detectors share its rules.',
        _read_checkpoints_with_sapiens2_loader),
    Adaptation(
        'atomic-local-writes', 'mmengine', ('0.10.7', ),
        "MMEngine's local file backend writes through a temporary file and os.replace, so a killed save never "
        'leaves a truncated checkpoint (sapiens2.engine.atomic_save).',
        _write_local_files_atomically),
    Adaptation(
        'editable-config-packages', 'mmengine', ('0.10.7', ),
        "`pkg::path` config bases find packages installed in editable mode (MMEngine looks only beside the "
        "distribution's metadata, where an editable install has no files).",
        _find_editable_packages),
    Adaptation(
        'sapiens2-config-bases', 'mmengine', ('0.10.7', ),
        "A config can name a packaged base as `sapiens2::pose/...py` (MMEngine accepts `pkg::` only for the "
        'OpenMMLab packages it lists).',
        _resolve_sapiens2_config_bases),
    Adaptation(
        'sapiens2-base-scopes', 'mmengine', ('0.10.7', ),
        "A `sapiens2::` config base stamps its modules with the scope the base config itself declares "
        "(default_scope 'mmpose', 'mmseg' or 'sapiens2') instead of 'sapiens2', so packaged pose and seg configs "
        'build from a user config anywhere.',
        _scope_sapiens2_bases_by_their_default_scope),
    Adaptation(
        'config-log-at-debug', 'mmengine', ('0.10.7', ),
        "The Runner logs the resolved config (1,000+ lines for a pose config) at DEBUG instead of INFO and logs the "
        'path of the copy it writes to the work dir instead.',
        _log_the_config_at_debug),
    Adaptation(
        'pose-visualizer-radius', 'mmpose', ('1.3.2', ),
        "mmpose's OpenCV visualizer receives keypoint radii as 1-element arrays and calls int() on them, a TypeError "
        'on numpy >= 2.4; a 1-element radius is passed on as a scalar (PoseLocalVisualizer, PoseVisualizationHook, '
        'MMPoseInferencer).',
        _draw_circles_with_scalar_radius),
    Adaptation(
        'quiet-mmseg-build-loss', 'mmsegmentation', ('1.2.2', ),
        "Hides the `build_loss would be deprecated` UserWarning that mmseg's own BaseDecodeHead triggers on every "
        'segmentation model build (nothing a user can change; other warnings still show).',
        _silence_mmseg_build_loss_notice),
]

_APPLIED: Dict[str, bool] = {}


def apply_adaptations() -> None:
    """Apply every adaptation whose library is installed in a version it was written for (idempotent)."""
    for adaptation in ADAPTATIONS:
        if adaptation.name in _APPLIED:
            continue
        version = _installed_version(adaptation.package)
        if version is None:
            _APPLIED[adaptation.name] = False
            continue
        if not _version_matches(version, adaptation.versions):
            warnings.warn(f'sapiens2 adaptation {adaptation.name!r} was written for {adaptation.package} '
                          f'{", ".join(adaptation.versions)} but {version} is installed; it is not applied, so this '
                          f'does not hold: {adaptation.why} Install a supported version (see docs/install.md).',
                          stacklevel=2)
            _APPLIED[adaptation.name] = False
            continue
        adaptation.apply()
        _APPLIED[adaptation.name] = True


def applied() -> List[str]:
    """Names of the adaptations applied in this process."""
    return [name for name, done in _APPLIED.items() if done]


def describe() -> str:
    """One line per adaptation: applied or not, library and versions, and why."""
    lines = []
    for a in ADAPTATIONS:
        state = 'applied' if _APPLIED.get(a.name) else 'not applied'
        lines.append(f'{a.name} [{state}] {a.package} {", ".join(a.versions)}: {a.why}')
    return '\n'.join(lines)
