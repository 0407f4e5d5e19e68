"""Every change sapiens2 makes to the behaviour of MMEngine and the OpenMMLab libraries, in one place.

Each :class:`Adaptation` names the library it changes, the versions it was written and tested for, and why.
:func:`apply_adaptations` (called once by ``import sapiens2``) applies them idempotently. An adaptation whose library
is not installed is skipped; one whose library has another version is skipped with a warning that says what will
not work, because patching code it was not written for could do worse than not patching it.

``python -c "import sapiens2.adaptations as a; print(a.describe())"`` lists them and whether each is applied.
"""
import importlib
import importlib.abc
import importlib.metadata
import importlib.util
import logging
import os.path as osp
import re
import sys
import warnings
from dataclasses import dataclass
from types import ModuleType
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


# --- applying a change when a module is first imported ---------------------------------------------------------

class _PatchingLoader(importlib.abc.Loader):
    """Runs a module's own loader, then the patches waiting for that module."""

    def __init__(self, loader: importlib.abc.Loader, patches: List[Callable[[ModuleType], None]]) -> None:
        self._loader = loader
        self._patches = patches

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        for patch in self._patches:
            patch(module)

    def __getattr__(self, name: str):
        return getattr(self._loader, name)


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Finder that attaches waiting patches to the loader of the modules they are for, then steps aside."""

    def __init__(self) -> None:
        self.pending: Dict[str, List[Callable[[ModuleType], None]]] = {}

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.pending:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, 'find_spec'):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _PatchingLoader(spec.loader, self.pending.pop(fullname))
                return spec
        return None


_ON_IMPORT = _PatchOnImport()


def _patch_module(name: str, patch: Callable[[ModuleType], None]) -> None:
    """Apply ``patch`` to module ``name`` now if it is imported, else right after its first import (so that
    ``import sapiens2`` never imports a library only to patch it)."""
    if name in sys.modules:
        patch(sys.modules[name])
        return
    _ON_IMPORT.pending.setdefault(name, []).append(patch)
    if _ON_IMPORT not in sys.meta_path:
        sys.meta_path.insert(0, _ON_IMPORT)


# --- MMEngine ------------------------------------------------------------------------------------------------------

def _silence_mmengine_pkg_resources_warning() -> None:
    # MMEngine imports pkg_resources in get_installed_path, and is_installed re-imports it with importlib.reload,
    # so the warning is attributed to mmengine.utils.package_utils or to importlib.
    warnings.filterwarnings('ignore', message=re.escape('pkg_resources is deprecated as an API'),
                            category=UserWarning, module=r'(mmengine\.utils\.package_utils|importlib)$')


#: Beginnings of MMEngine log messages about its own machinery, which a user cannot act on: CheckpointHook and
#: LoggerHook build the deprecated FileClient; mmseg's IoUMetric and mmpose's PCK metrics have no default prefix; a
#: process that builds pose and seg models switches the default scope between mmpose and mmseg.
QUIET_MMENGINE_MESSAGES = ('"FileClient" will be deprecated in future', '"HardDiskBackend" is the alias of',
                           'The prefix is not set in metric class', 'The current default scope ')


#: mmseg's EncoderDecoder.inference logs this for every batch of photos of different sizes, though each photo's
#: prediction is restored to its own size (by mmseg's postprocess_result and by sapiens2's seg task).
QUIET_MMSEG_MESSAGES = ('Image shapes are different in the batch', )
#: MMPoseInferencer and MMSegInferencer look their collate function up in MMEngine's function registry under their
#: scope, which has no mmpose or mmseg child, and log this before they take MMEngine's (the right one).
QUIET_INFERENCER_MESSAGES = tuple(f'Failed to search registry with scope "{scope}" in the "function" registry tree'
                                  for scope in ('mmpose', 'mmseg'))
#: The beginnings of the log messages the MMEngine loggers drop (the adaptations of each library add theirs).
_QUIET_MESSAGES: List[str] = []


def _silence_mmengine_machinery_messages() -> None:
    import logging

    from mmengine.logging import MMLogger

    _QUIET_MESSAGES.extend(QUIET_MMENGINE_MESSAGES)

    class QuietMachinery(logging.Filter):

        def filter(self, record: logging.LogRecord) -> bool:
            return not str(record.msg).startswith(tuple(_QUIET_MESSAGES))

    quiet = QuietMachinery()
    upstream = MMLogger.__init__

    def __init__(self, *args, **kwargs) -> None:
        upstream(self, *args, **kwargs)
        self.addFilter(quiet)

    MMLogger.__init__ = __init__
    for logger in MMLogger._instance_dict.values():  # the loggers made before (the default 'mmengine' one)
        logger.addFilter(quiet)


def _read_checkpoints_with_sapiens2_loader() -> None:
    from mmengine.runner.checkpoint import CheckpointLoader

    from sapiens2.engine.checkpoint import read_checkpoint_file

    @CheckpointLoader.register_scheme(prefixes='', force=True)
    def load_from_local(filename: str, map_location=None) -> dict:
        return read_checkpoint_file(filename, map_location or 'cpu')


def _read_downloads_with_sapiens2_loader() -> None:
    import mmengine.runner.checkpoint as checkpoint_module

    from sapiens2.engine.checkpoint import download_checkpoint, read_checkpoint_file

    def load_url(url: str, model_dir: Optional[str] = None, map_location=None, progress: bool = True,
                 check_hash: bool = False, file_name: Optional[str] = None) -> dict:
        return read_checkpoint_file(download_checkpoint(url, model_dir, progress, check_hash, file_name),
                                    map_location or 'cpu')

    checkpoint_module.load_url = load_url


def _pickle_history_buffers_without_methods() -> None:
    from mmengine.logging import HistoryBuffer

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != 'statistics_methods'}

    HistoryBuffer.__getstate__ = __getstate__


def _flexible_runner_loads_strictly() -> None:
    from mmengine.runner import FlexibleRunner
    upstream = FlexibleRunner.load_checkpoint

    def load_checkpoint(self, filename: str, map_location='cpu', strict: Optional[bool] = None,
                        revise_keys: list = [(r'^module.', '')]):
        if strict is None:
            strict = bool(self.cfg.get('load_strict', True))
        return upstream(self, filename, map_location=map_location, strict=strict, revise_keys=revise_keys)

    FlexibleRunner.load_checkpoint = load_checkpoint


def _read_configs_in_checkpoints_as_data() -> None:
    from mmengine.config import Config
    upstream = Config.fromstring

    def fromstring(cfg_str: str, file_format: str) -> Config:
        from sapiens2.config.literals import ConfigNotDataError, config_values
        from sapiens2.engine.checkpoint import UnsafeCheckpointError, checkpoint_trusted
        if file_format != '.py' or checkpoint_trusted():
            return upstream(cfg_str, file_format)
        try:
            return Config(config_values(cfg_str, 'the config a checkpoint carries (meta.config or meta.cfg)'))
        except ConfigNotDataError as err:
            raise UnsafeCheckpointError(f'{err}: MMEngine would run it (resuming, or mmengine.infer), and a config '
                                        'saved by training is data only; start from the weights with load_from '
                                        '(which reads no config), or, if you made the file or trust where it comes '
                                        'from, pass --trust-checkpoint (trust_checkpoint=True), which runs it'
                                        ) from None

    Config.fromstring = staticmethod(fromstring)


def _resume_from_a_valid_record() -> None:
    import mmengine.runner
    import mmengine.runner._flexible_runner
    import mmengine.runner.checkpoint
    import mmengine.runner.runner

    from sapiens2.engine.checkpoint import find_resume_checkpoint
    for module in (mmengine.runner, mmengine.runner.checkpoint, mmengine.runner.runner,
                   mmengine.runner._flexible_runner):
        module.find_latest_checkpoint = find_resume_checkpoint


def _count_steps_without_building_the_training_loop() -> None:
    from mmengine.runner import BaseLoop, FlexibleRunner, Runner

    def step(name: str) -> property:
        def read(self) -> int:  # upstream reads self.train_loop, which builds the loop and its dataset
            loop = self._train_loop
            return getattr(loop, name) if isinstance(loop, BaseLoop) else 0
        return property(read, doc=f'int: Current {name} (0 before training).')

    for runner in (Runner, FlexibleRunner):
        runner.epoch, runner.iter = step('epoch'), step('iter')


#: Called with a registry's scope before MMEngine searches that registry; :mod:`sapiens2.registration` adds the
#: function that registers the modules the scope needs.
REGISTRY_LOOKUP_HOOKS: List[Callable[[str], None]] = []


def _register_sapiens2_modules_on_lookup() -> None:
    from mmengine.registry import Registry
    upstream = Registry.import_from_location

    def import_from_location(self) -> None:
        for hook in REGISTRY_LOOKUP_HOOKS:
            hook(self.scope)
        upstream(self)

    Registry.import_from_location = import_from_location


# --- mmpose, mmseg, mmdet --------------------------------------------------------------------------------------------

def _loads_strictly(model) -> bool:
    """Whether ``model`` holds a module whose class says ``sapiens2_loads_strictly`` (the Sapiens2 backbone does):
    an attribute, so that the adaptations need not import the models."""
    return any(getattr(type(module), 'sapiens2_loads_strictly', False) for module in model.modules())


def _load_sapiens2_models_strictly(module_name: str) -> Callable[[], None]:
    """Replaces ``load_checkpoint`` in an OpenMMLab ``apis.inference`` module (``init_model``/``init_detector``)."""

    def patch(module: ModuleType) -> None:
        from sapiens2.engine.checkpoint import strict_load_checkpoint_for_sapiens2
        module.load_checkpoint = strict_load_checkpoint_for_sapiens2(module.load_checkpoint, _loads_strictly)

    return lambda: _patch_module(module_name, patch)


def _write_local_files_atomically() -> None:
    from mmengine.fileio import register_backend

    from sapiens2.engine.work_dir_backend import AtomicLocalBackend
    register_backend('local', AtomicLocalBackend, force=True, prefixes='')


def _write_the_last_checkpoint_record_atomically() -> None:
    import mmengine.hooks.checkpoint_hook as checkpoint_hook

    from sapiens2.engine.work_dir_backend import open_writing_atomically
    checkpoint_hook.open = open_writing_atomically  # its only open(): the write of work_dir/last_checkpoint


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


def _apply_custom_layouts_on_read() -> None:
    from mmengine.config import Config
    upstream = Config.fromfile

    def fromfile(filename, *args, **kwargs):
        from sapiens2.apis.backends import bundle, config_data  # layer: all APIs read a bundle's config as data
        folder = osp.dirname(osp.abspath(str(filename)))
        if osp.isfile(osp.join(folder, bundle.MANIFEST)):  # a bundle's config: read as data, never run
            return config_data.load_bundle_config(str(filename), folder)
        try:
            cfg = upstream(filename, *args, **kwargs)
        except RecursionError:  # MMEngine follows _base_ files without noticing a loop
            from sapiens2.config.base_chain import refuse_base_loop
            refuse_base_loop(str(filename))
            raise
        if isinstance(cfg, Config):
            from sapiens2.config.custom_layout import apply_custom_layout
            from sapiens2.config.layout_file import check_keypoint_file
            check_keypoint_file(str(filename), cfg.get('dataset_info'))
            apply_custom_layout(cfg)
        return cfg

    Config.fromfile = staticmethod(fromfile)


def _name_empty_datasets() -> None:
    from mmengine.dataset import BaseDataset
    upstream = BaseDataset._serialize_data

    def _serialize_data(self):
        if len(self.data_list) == 0:
            from sapiens2.datasets.data_check import DataCheckError, empty_dataset_message
            raise DataCheckError(empty_dataset_message(self))
        return upstream(self)

    BaseDataset._serialize_data = _serialize_data


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


def _explain_rejected_samples() -> None:
    from mmengine.dataset import BaseDataset

    from sapiens2.engine.rejected_samples import NoValidSampleError, describe_rejection
    upstream = BaseDataset.__getitem__
    messages = ('Cannot find valid image after', 'Test time pipline should not get `None`')

    def __getitem__(self, idx: int) -> dict:
        try:
            return upstream(self, idx)
        except Exception as err:
            if type(err) is not Exception or not str(err).startswith(messages):
                raise
            raise NoValidSampleError(describe_rejection(self, idx)) from err

    BaseDataset.__getitem__ = __getitem__


def _load_sapiens2_inferencer_weights_strictly(module_name: str) -> Callable[[], None]:
    """Replaces ``_load_checkpoint_to_model`` in an inferencer module (MMEngine's, mmpose's, mmseg's)."""

    def patch(module: ModuleType) -> None:
        from sapiens2.engine.checkpoint import strict_load_checkpoint_dict_for_sapiens2
        module._load_checkpoint_to_model = strict_load_checkpoint_dict_for_sapiens2(module._load_checkpoint_to_model,
                                                                                   _loads_strictly)

    return lambda: _patch_module(module_name, patch)


# --- mmcv ----------------------------------------------------------------------------------------------------------

def _name_the_file_in_image_loading_errors() -> None:

    def refuse_bombs(io_module: ModuleType) -> None:
        upstream = io_module.imfrombytes

        def imfrombytes(content: bytes, *args, **kwargs):
            import cv2

            from sapiens2.datasets.image_files import refuse_decompression_bomb  # not while mmcv is being imported
            from sapiens2.utils.decoder_messages import decoder_messages, float_image_problem, refuse_damaged_image
            if not content:
                raise OSError('the file is empty (0 bytes); re-export or re-download it')
            refuse_decompression_bomb(content)
            try:
                with decoder_messages() as messages:
                    image = upstream(content, *args, **kwargs)
            except cv2.error as err:  # an assertion of OpenCV's decoder, in OpenCV's words
                raise OSError('the file is truncated, damaged or not an image OpenCV can decode') from err
            if image is None:  # not decoded: LoadImageFromFile names the file; a float TIFF is said as such
                problem = float_image_problem(content)
                if problem:
                    raise ValueError(problem)
                return image
            refuse_damaged_image(messages)  # decoded in spite of damage (grey rows): LoadImageFromFile names the file
            return image

        io_module.imfrombytes = imfrombytes
        for name in ('mmcv.image', 'mmcv'):  # re-exports bound before the patch (after it, they bind the patch)
            if getattr(sys.modules.get(name), 'imfrombytes', None) is upstream:
                sys.modules[name].imfrombytes = imfrombytes

    def name_the_file(loading: ModuleType) -> None:
        upstream = loading.LoadImageFromFile.transform

        def transform(self, results: dict):
            try:
                return upstream(self, results)
            except FileNotFoundError as err:
                raise FileNotFoundError(f"image {results['img_path']} does not exist") from err
            except Exception as err:
                from sapiens2.utils.decoder_messages import DamagedMediaError
                detail = ('the file is empty, truncated, damaged or not an image the decoder can read'
                          if isinstance(err, AssertionError) else str(err))
                error_type = ValueError if isinstance(err, ValueError) else \
                    DamagedMediaError if isinstance(err, DamagedMediaError) else OSError
                raise error_type(f"cannot read image {results['img_path']}: {detail}") from err

        loading.LoadImageFromFile.transform = transform

    _patch_module('mmcv.image.io', refuse_bombs)
    _patch_module('mmcv.transforms.loading', name_the_file)


# --- mmpose --------------------------------------------------------------------------------------------------------

def _name_the_annotation_of_a_ragged_keypoint_list() -> None:

    def patch(module: ModuleType) -> None:
        upstream = module.BaseCocoStyleDataset.parse_data_info

        def parse_data_info(self, raw_data_info: dict):
            ann = raw_data_info.get('raw_ann_info') or {}
            values = ann.get('keypoints')
            if isinstance(values, list) and len(values) % 3:
                from sapiens2.datasets.pose.annotation_schema import AnnotationError
                num = self.metainfo.get('num_keypoints')
                layout = f" ({self.metainfo.get('dataset_name', 'the layout')}: {num} keypoints, {3 * num} values)" \
                    if num else ''
                raise AnnotationError(
                    f"{self.ann_file}: annotation {ann.get('id', '?')} (image {ann.get('image_id', '?')}) field "
                    f'"keypoints" has {len(values)} values, not 3 (x, y, v) per keypoint{layout}; fix that '
                    'annotation, or re-export the file.')
            return upstream(self, raw_data_info)

        module.BaseCocoStyleDataset.parse_data_info = parse_data_info

    _patch_module('mmpose.datasets.datasets.base.base_coco_style_dataset', patch)


def _load_pose_images_with_named_errors() -> None:

    def patch(loading: ModuleType) -> None:
        from mmcv.transforms import LoadImageFromFile
        upstream = loading.LoadImage.transform

        def transform(self, results: dict):
            if 'img' not in results:  # as upstream, without re-wrapping the error as "check the file exists"
                return LoadImageFromFile.transform(self, results)
            return upstream(self, results)

        loading.LoadImage.transform = transform

    _patch_module('mmpose.datasets.transforms.loading', patch)


def _draw_circles_with_scalar_radius() -> None:

    def patch(module: ModuleType) -> None:
        import numpy as np
        upstream = module.OpencvBackendVisualizer.draw_circles

        def draw_circles(self, center, radius, *args, **kwargs):
            if self.backend == 'opencv' and isinstance(radius, np.ndarray) and radius.size == 1:
                radius = radius.item()
            return upstream(self, center, radius, *args, **kwargs)

        module.OpencvBackendVisualizer.draw_circles = draw_circles

    _patch_module('mmpose.visualization.opencv_backend_visualizer', patch)


def _accept_aliases_in_init_model(module_name: str) -> Callable[[], None]:
    """Wraps ``init_model`` of an ``apis.inference`` module (mmpose's, mmseg's) and its package's re-export."""

    def patch(module: ModuleType) -> None:
        upstream = module.init_model

        def init_model(config, checkpoint=None, *args, **kwargs):
            from sapiens2.config.model_names import resolve_model_name
            return upstream(*resolve_model_name(config, checkpoint), *args, **kwargs)

        init_model.__doc__ = upstream.__doc__
        module.init_model = init_model
        package = sys.modules.get(module_name.rsplit('.', 1)[0])
        if getattr(package, 'init_model', None) is upstream:  # re-exported before the patch
            package.init_model = init_model

    return lambda: _patch_module(module_name, patch)


def _accept_aliases_in_inferencers() -> None:
    def patch(module: ModuleType) -> None:
        upstream = module.BaseInferencer._load_model_from_metafile

        def _load_model_from_metafile(self, model: str):
            from sapiens2.config.model_names import resolve_model_name
            config, checkpoint = resolve_model_name(model)
            if config is model:
                return upstream(self, model)
            from mmengine.config import Config
            return Config.fromfile(config), checkpoint

        module.BaseInferencer._load_model_from_metafile = _load_model_from_metafile

    _patch_module('mmengine.infer.infer', patch)


def _honour_bboxes_in_pose_inferencer() -> None:

    def patch(module: ModuleType) -> None:
        import numpy as np
        upstream = module.Pose2DInferencer.preprocess_single

        def preprocess_single(self, input, index: int, bbox_thr: float = 0.3, nms_thr: float = 0.3, bboxes=()):
            boxes = np.asarray(bboxes if bboxes is not None else (), dtype=np.float32)
            if self.cfg.data_mode != 'topdown' or boxes.size == 0 or not _loads_strictly(self.model):
                return upstream(self, input, index, bbox_thr=bbox_thr, nms_thr=nms_thr, bboxes=bboxes)
            if boxes.ndim != 2 or boxes.shape[1] not in (4, 5):
                raise ValueError(f'bboxes of an image are [[x1, y1, x2, y2(, score)], ...], got shape {boxes.shape}')
            data_info = dict(img_path=input) if isinstance(input, str) else \
                dict(img=input, img_path=f'{index}.jpg'.rjust(10, '0'))  # as upstream
            data_info.update(self.model.dataset_meta)
            return [self.pipeline(dict(data_info, bbox=box[None, :4],
                                       bbox_score=box[4:5] if len(box) == 5 else np.ones(1, np.float32)))
                    for box in boxes]

        module.Pose2DInferencer.preprocess_single = preprocess_single

    _patch_module('mmpose.apis.inferencers.pose2d_inferencer', patch)


# --- mmseg ---------------------------------------------------------------------------------------------------------

def _write_seg_label_maps_safely() -> None:
    def patch(module: ModuleType) -> None:
        from PIL import Image

        from sapiens2.utils.atomic_save import AtomicOutput

        class LabelMap:
            """``Image.fromarray(mask)`` whose ``save(path)`` writes atomically and never through a link."""

            def __init__(self, array) -> None:
                self.image = Image.fromarray(array)

            def save(self, path: str) -> None:
                with AtomicOutput(path) as out:
                    self.image.save(out.tmp)

        module.Image = type('Image', (), dict(fromarray=staticmethod(LabelMap)))

    _patch_module('mmseg.evaluation.metrics.iou_metric', patch)


def _silence_mmseg_build_loss_notice() -> None:
    warnings.filterwarnings('ignore', message=re.escape('``build_loss`` would be deprecated soon'),
                            category=UserWarning, module=r'mmseg\.models\.builder$')


def _silence_inferencer_collate_scope_notice() -> None:
    _QUIET_MESSAGES.extend(QUIET_INFERENCER_MESSAGES)


def _silence_mmseg_batch_shapes_notice() -> None:
    _QUIET_MESSAGES.extend(QUIET_MMSEG_MESSAGES)


def _silence_mmseg_draw_false_notice() -> None:
    warnings.filterwarnings('ignore', message=re.escape('The draw is False, it means that the hook for visualization'),
                            category=UserWarning, module=r'mmseg\.engine\.hooks\.visualization_hook$')


# --- torch -----------------------------------------------------------------------------------------------------------

class _DropNoCudaRuntimeNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith('No CUDA runtime is found')


def _silence_torch_no_cuda_runtime_notice() -> None:
    logging.getLogger('torch.utils.cpp_extension').addFilter(_DropNoCudaRuntimeNotice())


ADAPTATIONS: List[Adaptation] = [
    # First: later adaptations import MMEngine modules that can import pkg_resources.
    Adaptation(
        'quiet-pkg-resources', 'mmengine', ('0.10.7', ),
        "Hides the `pkg_resources is deprecated` UserWarning that MMEngine's get_installed_path and is_installed "
        'raise on every command (other warnings, and this one from any other module, still show).',
        _silence_mmengine_pkg_resources_warning),
    Adaptation(
        'quiet-mmengine-machinery', 'mmengine', ('0.10.7', ),
        'Hides the MMEngine log warnings about its own machinery that every run prints and no user can act on: the '
        'FileClient and HardDiskBackend deprecations (CheckpointHook, LoggerHook), "The prefix is not set in metric '
        'class" (mmseg IoUMetric, mmpose PCK) and "The current default scope ... is not" (pose and seg models in one '
        'process).',
        _silence_mmengine_machinery_messages),
    Adaptation(
        'checkpoint-loader', 'mmengine', ('0.10.7', ),
        "MMEngine's local checkpoint scheme reads .safetensors and torch files, Hub references and model "
        'aliases through sapiens2\'s one checkpoint loader (sapiens2.engine.checkpoint: weights_only=True unless '
        'trusted, safetensors meta, registered URI schemes), so load_from, --resume, init_cfg and tools/test.py '
        'share its rules.',
        _read_checkpoints_with_sapiens2_loader),
    Adaptation(
        'checkpoint-downloads', 'mmengine', ('0.10.7', ),
        "Checkpoints MMEngine downloads (http(s)://, open-mmlab://, torchvision://) are read by sapiens2's loader "
        "instead of torch.hub's weights_only=False load.",
        _read_downloads_with_sapiens2_loader),
    Adaptation(
        'history-buffer-pickle', 'mmengine', ('0.10.7', ),
        "HistoryBuffer pickles without its statistics methods (class-level functions, restored by __setstate__), so "
        'training checkpoints hold no builtins.getattr and --resume loads them with weights_only=True.',
        _pickle_history_buffers_without_methods),
    Adaptation(
        'flexible-runner-strict-load', 'mmengine', ('0.10.7', ),
        "FlexibleRunner's load_from is strict unless the config sets load_strict = False (MMEngine hard-codes "
        'strict=False, which silently leaves random weights; the sapiens2 strategies check the keys).',
        _flexible_runner_loads_strictly),
    Adaptation(
        'checkpoint-config-as-data', 'mmengine', ('0.10.7', ),
        "Config.fromstring reads a .py text as data (the literal assignments Config.dump writes, "
        "sapiens2.config.literals) unless checkpoints are trusted: MMEngine calls it only on the config a "
        "checkpoint carries (Runner and FlexibleRunner resume: meta.config; mmengine.infer: meta.cfg), which it "
        'would otherwise run.',
        _read_configs_in_checkpoints_as_data),
    Adaptation(
        'resume-record', 'mmengine', ('0.10.7', ),
        'An empty last_checkpoint record, one naming a missing file, or one naming a truncated checkpoint resumes '
        'from the newest complete iter_/epoch_ checkpoint of the work dir (saying so) or fails naming the record '
        '(MMEngine tries to load "" or the truncated file).',
        _resume_from_a_valid_record),
    Adaptation(
        'steps-without-training', 'mmengine', ('0.10.7', ),
        'Runner.iter and Runner.epoch are 0 before training instead of building the training loop and its dataset '
        "(mmseg's SegVisualizationHook reads runner.iter for each picture, so tools/test.py --show-dir stopped "
        'half-way where the training data was missing).',
        _count_steps_without_building_the_training_loop),
    Adaptation(
        'register-on-lookup', 'mmengine', ('0.10.7', ),
        "Before MMEngine searches a registry (Registry.get, and the lazy import of a registry's locations), sapiens2 "
        "registers the modules that registry's scope needs (sapiens2.registration: pose modules for mmpose's "
        "registries, segmentation modules for mmseg's), so `import sapiens2` imports neither mmpose nor mmseg until "
        'a config needs them.',
        _register_sapiens2_modules_on_lookup),
    Adaptation(
        'atomic-local-writes', 'mmengine', ('0.10.7', ),
        "MMEngine's local file backend writes through a temporary file and os.replace, so a killed save never "
        'leaves a truncated checkpoint (sapiens2.utils.atomic_save).',
        _write_local_files_atomically),
    Adaptation(
        'atomic-last-checkpoint', 'mmengine', ('0.10.7', ),
        "CheckpointHook writes the work dir's last_checkpoint record through a temporary file and os.replace, as the "
        "checkpoints, instead of open(path, 'w'), which leaves an empty record when the process dies in between.",
        _write_the_last_checkpoint_record_atomically),
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
        'custom-layout-on-read', 'mmengine', ('0.10.7', ),
        "Config.fromfile writes a config's custom_metainfo layout into its model and datasets "
        '(sapiens2.config.custom_layout), so every API that reads the config (mmpose/mmseg init_model, their '
        'Inferencers, their tools) builds the head, flips and metainfo the file names, and a saved copy names them; '
        "a keypoint metainfo file it reads (mmpose's from_file included) is checked (sapiens2.config.layout_file); "
        "a config beside a bundle's sapiens2_bundle.json is read as data, never run "
        "(sapiens2.apis.backends.config_data), whichever API reads it; configs whose _base_ files form a loop "
        "are one line naming it (sapiens2.config.base_chain), not RecursionError.",
        _apply_custom_layouts_on_read),
    Adaptation(
        'empty-dataset-error', 'mmengine', ('0.10.7', ),
        "A dataset whose folders or annotation file give no sample (empty train folders) is one line naming where it "
        "looked (sapiens2.datasets.data_check), instead of numpy's `need at least one array to concatenate` when "
        'BaseDataset serializes its empty list.',
        _name_empty_datasets),
    Adaptation(
        'inferencer-strict-load', 'mmengine', ('0.10.7', ),
        "MMEngine's BaseInferencer loads weights into models with a Sapiens2 backbone strictly (it passes "
        'strict=False, which keeps a randomly initialised head of another shape without a word).',
        _load_sapiens2_inferencer_weights_strictly('mmengine.infer.infer')),
    Adaptation(
        'config-log-at-debug', 'mmengine', ('0.10.7', ),
        "The Runner logs the resolved config (1,000+ lines for a pose config) at DEBUG instead of INFO and logs the "
        'path of the copy it writes to the work dir instead.',
        _log_the_config_at_debug),
    Adaptation(
        'rejected-samples-error', 'mmengine', ('0.10.7', ),
        "When a dataset's pipeline rejects every sample drawn (or one in test mode), BaseDataset raises "
        "NoValidSampleError naming the dataset, a rejected sample's files and the transform that rejected it, instead "
        "of `Cannot find valid image after 1000!` (sapiens2.engine.rejected_samples).",
        _explain_rejected_samples),
    Adaptation(
        'image-loading-errors', 'mmcv', ('2.1.0', ),
        "mmcv's imfrombytes refuses images whose header declares more pixels than Pillow's decompression-bomb limit "
        "(before decoding) and an empty file (OpenCV's `!buf.empty()` assertion), and LoadImageFromFile errors name "
        "the file (mmcv asserts 'failed to load image' or passes the decoder's error on) "
        "(sapiens2.datasets.image_files); an image whose compressed data libjpeg reports damaged (it decodes to grey "
        "rows, with a line on stderr only) is refused (sapiens2.utils.decoder_messages).",
        _name_the_file_in_image_loading_errors),
    Adaptation(
        'pose-image-errors', 'mmpose', ('1.3.2', ),
        "mmpose's LoadImage passes mmcv's image-loading error on as it is, instead of wrapping every error in "
        '"... occurs when loading ... Please check whether the file exists".',
        _load_pose_images_with_named_errors),
    Adaptation(
        'pose-ragged-keypoints', 'mmpose', ('1.3.2', ),
        "mmpose's COCO-style datasets reshape an annotation's keypoints to (x, y, v) triples; a list whose length is "
        'not a multiple of 3 (29 values in a 10-keypoint set) is one line naming the file, the annotation and the '
        'layout instead of a reshape error.',
        _name_the_annotation_of_a_ragged_keypoint_list),
    Adaptation(
        'pose-visualizer-radius', 'mmpose', ('1.3.2', ),
        "mmpose's OpenCV visualizer receives keypoint radii as 1-element arrays and calls int() on them, a TypeError "
        'on numpy >= 2.4; a 1-element radius is passed on as a scalar (PoseLocalVisualizer, PoseVisualizationHook, '
        'MMPoseInferencer).',
        _draw_circles_with_scalar_radius),
    Adaptation(
        'seg-label-maps-safe-writes', 'mmsegmentation', ('1.2.2', ),
        "mmseg's IoUMetric writes the label maps of tools/test.py --out (output_dir) through a temporary file and "
        'os.replace, never through a symbolic link (sapiens2.utils.atomic_save), instead of PIL\'s save to the '
        'path.',
        _write_seg_label_maps_safely),
    Adaptation(
        'quiet-torch-no-cuda-runtime', 'torch', ('2.14.*', ),
        "Hides torch's `No CUDA runtime is found, using CUDA_HOME=...` log line, which a CUDA build of torch prints "
        'on a machine without a GPU when torch.compile first builds CPU kernels (--dtype int8, compile=True); '
        'nothing is wrong and nothing needs CUDA there.',
        _silence_torch_no_cuda_runtime_notice),
    Adaptation(
        'quiet-mmseg-build-loss', 'mmsegmentation', ('1.2.2', ),
        "Hides the `build_loss would be deprecated` UserWarning that mmseg's own BaseDecodeHead triggers on every "
        'segmentation model build (nothing a user can change; other warnings still show).',
        _silence_mmseg_build_loss_notice),
    Adaptation(
        'quiet-inferencer-collate-scope', 'mmengine', ('0.10.7', ),
        "Hides `Failed to search registry with scope \"mmpose\" (or \"mmseg\") in the \"function\" registry tree`, "
        "which MMPoseInferencer and MMSegInferencer log when they look up their collate function (MMEngine's function "
        'registry has no mmpose or mmseg child; the fallback, MMEngine\'s pseudo_collate, is the right one); the '
        'same message for any other registry or scope still shows.',
        _silence_inferencer_collate_scope_notice),
    Adaptation(
        'quiet-mmseg-batch-shapes', 'mmsegmentation', ('1.2.2', ),
        "Hides mmseg's `Image shapes are different in the batch` log warning, which its EncoderDecoder prints for "
        "every batch of photos of different sizes although each prediction is restored to its photo's size "
        '(needs quiet-mmengine-machinery, whose logger filter drops it).',
        _silence_mmseg_batch_shapes_notice),
    Adaptation(
        'quiet-mmseg-draw-false', 'mmsegmentation', ('1.2.2', ),
        "Hides the `The draw is False` UserWarning of mmseg's SegVisualizationHook, which the seg configs build "
        'with draw=False unless pictures are asked for (--show-dir sets draw=True).',
        _silence_mmseg_draw_false_notice),
    Adaptation(
        'mmpose-init-model-strict', 'mmpose', ('1.3.2', ),
        "mmpose.apis.init_model loads checkpoints into models with a Sapiens2 backbone strictly through sapiens2's "
        'loader (decode_head. -> head. for official pose checkpoints) instead of printing "do not match exactly".',
        _load_sapiens2_models_strictly('mmpose.apis.inference')),
    Adaptation(
        'mmseg-init-model-strict', 'mmsegmentation', ('1.2.2', ),
        "mmseg.apis.init_model loads checkpoints into models with a Sapiens2 backbone strictly through sapiens2's "
        'loader instead of printing "do not match exactly".',
        _load_sapiens2_models_strictly('mmseg.apis.inference')),
    Adaptation(
        'mmpose-inferencer-strict', 'mmpose', ('1.3.2', ),
        "MMPoseInferencer loads weights into models with a Sapiens2 backbone strictly (mmpose passes strict=False: a "
        '308-keypoint head kept random for a 10-keypoint checkpoint, then an AssertionError in flip_heatmaps).',
        _load_sapiens2_inferencer_weights_strictly('mmpose.apis.inferencers.base_mmpose_inferencer')),
    Adaptation(
        'mmseg-inferencer-strict', 'mmsegmentation', ('1.2.2', ),
        "MMSegInferencer loads weights into models with a Sapiens2 backbone strictly (mmseg passes strict=False: a "
        '29-class head kept random for a 5-class checkpoint, predicting labels the model does not have).',
        _load_sapiens2_inferencer_weights_strictly('mmseg.apis.mmseg_inferencer')),
    Adaptation(
        'mmpose-init-model-aliases', 'mmpose', ('1.3.2', ),
        "mmpose.apis.init_model takes a sapiens2 model alias (init_model('pose-tiny')): its packaged config and, "
        'unless a checkpoint is given, its checkpoint, as sapiens2-infer and Sapiens2Inferencer take it (mmpose: '
        '"Config file pose-tiny does not exist").',
        _accept_aliases_in_init_model('mmpose.apis.inference')),
    Adaptation(
        'mmseg-init-model-aliases', 'mmsegmentation', ('1.2.2', ),
        "mmseg.apis.init_model takes a sapiens2 model alias (init_model('seg-tiny')), as mmpose's does.",
        _accept_aliases_in_init_model('mmseg.apis.inference')),
    Adaptation(
        'inferencer-aliases', 'mmengine', ('0.10.7', ),
        "MMEngine's BaseInferencer (so MMPoseInferencer(pose2d='pose-tiny'), MMSegInferencer('seg-tiny')) reads a "
        "sapiens2 model alias as its packaged config and checkpoint before looking it up in the library's "
        'metafiles.',
        _accept_aliases_in_inferencers),
    Adaptation(
        'pose-inferencer-bboxes', 'mmpose', ('1.3.2', ),
        "MMPoseInferencer(...)(image, bboxes=...) poses the given person boxes for models with a Sapiens2 backbone "
        '(mmpose 1.3.2 resets them to [] in Pose2DInferencer.preprocess_single and poses the whole image or the '
        "detector's boxes); other models are left to mmpose.",
        _honour_bboxes_in_pose_inferencer),
    Adaptation(
        'mmdet-init-detector-strict', 'mmdet', ('3.3.0', ),
        "mmdet.apis.init_detector loads checkpoints into models with a Sapiens2 backbone strictly through sapiens2's "
        'loader (other detectors load as upstream, through the same safe file reader).',
        _load_sapiens2_models_strictly('mmdet.apis.inference')),
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
