"""The exported bundle, read: one folder that runs without the original config or checkpoint (written by
``tools/deploy/export.py``).

Layout (``schema_version`` 1)::

    <folder>/sapiens2_bundle.json   manifest (below)
    <folder>/model.onnx             backbone + head, fp32 (``onnx.fp32``)
    <folder>/config.py              the model's config (mmengine ``Config.dump``): test pipeline, decoding, drawing
    <folder>/model.pt2              optional torch.export program (``pt2``)

Manifest keys: ``schema_version``, ``format`` (``sapiens2-bundle``), ``task`` (the inference task name: pose, seg,
normal...), ``onnx`` (precision -> file in the folder), ``config``, ``input_size`` [H, W], ``preprocess`` (mean, std,
bgr_to_rgb, ``in_graph``), ``dataset_meta`` (the model's layout), ``outputs`` (structure, names, shapes), ``parity``
(the export's parity reports), ``rope_dtype``, ``onnx_opset`` and ``sapiens2_version``. A reader refuses a manifest
it cannot read, a ``schema_version`` it does not know, a listed file that is missing or lies outside the folder, and
a config that is not data (:mod:`~sapiens2.apis.backends.config_data`: a bundle's config is never run), each in one
line (:class:`BundleError`).
"""
import json
import os.path as osp
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Optional, Tuple

from sapiens2.version import __version__

from .bundle_error import BundleError

if TYPE_CHECKING:  # reading a bundle imports no torch (command lines check their arguments first)
    from mmengine.config import Config

MANIFEST = 'sapiens2_bundle.json'
FORMAT = 'sapiens2-bundle'
SCHEMA_VERSION = 1
SUPPORTED_SCHEMA_VERSIONS: Tuple[int, ...] = (1, )
CONFIG_FILE = 'config.py'
MODEL_STEM = 'model'
#: The int8 model (the int8 option of ``tools/deploy/export.py``), ``onnx.int8`` in the manifest.
INT8_FILE = f'{MODEL_STEM}.int8.onnx'
REQUIRED_KEYS = ('task', 'onnx', 'config', 'input_size', 'preprocess', 'outputs')


@dataclass
class Bundle:
    """A read bundle: its folder, manifest and the absolute paths of its files."""
    folder: str
    manifest: dict

    @property
    def task(self) -> str:
        return self.manifest['task']

    @property
    def config_path(self) -> str:
        return osp.join(self.folder, self.manifest['config'])

    def config(self) -> 'Config':
        """The bundle's config, read as data (:func:`~.config_data.load_bundle_config`): never run."""
        from .config_data import load_bundle_config
        return load_bundle_config(self.config_path, self.folder)

    @property
    def input_size(self) -> Tuple[int, int]:
        height, width = self.manifest['input_size']
        return int(height), int(width)

    @property
    def preprocess(self) -> dict:
        return self.manifest['preprocess']

    @property
    def dataset_meta(self) -> Optional[dict]:
        return self.manifest.get('dataset_meta')

    @property
    def outputs(self) -> dict:
        return self.manifest['outputs']

    def precisions(self) -> Tuple[str, ...]:
        """The precisions this bundle has an ONNX model for (``fp32``, ``int8``...)."""
        return tuple(self.manifest['onnx'])

    def onnx_path(self, precision: str = 'fp32') -> str:
        """The ONNX file of ``precision``; a :class:`BundleError` naming how to get it when the bundle has none."""
        if precision not in self.manifest['onnx']:
            has = ', '.join(self.precisions()) or 'none'
            hint = ('re-export it with the int8 option of tools/deploy/export.py' if precision == 'int8' else
                    're-export it with tools/deploy/export.py --formats onnx')
            raise BundleError(f'bundle {self.folder} has no {precision} ONNX model (it has: {has}); {hint}')
        return osp.join(self.folder, self.manifest['onnx'][precision])


def is_bundle(path: str) -> bool:
    """Whether ``path`` is a folder meant as a bundle (any folder: :func:`read_bundle` says what is wrong with it)."""
    return osp.isdir(str(path))


def read_bundle(folder: str) -> Bundle:
    """Read and check a bundle folder; :class:`BundleError` (one line) when it cannot run as written."""
    manifest_path = osp.join(folder, MANIFEST)
    if not osp.isfile(manifest_path):
        raise BundleError(f'{folder} is not a sapiens2 bundle: it has no {MANIFEST} (write one with '
                          'tools/deploy/export.py CONFIG CHECKPOINT --out FOLDER)')
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise BundleError(f'{manifest_path} is not valid JSON ({err}); export the bundle again') from err
    except RecursionError as err:  # Python's JSON reader stops at about 1000 levels
        raise BundleError(f'{manifest_path} nests its values thousands of levels deep: not a manifest export writes; '
                          'export the bundle again') from err
    supported = ', '.join(map(str, SUPPORTED_SCHEMA_VERSIONS))
    if not isinstance(manifest, dict) or manifest.get('format') != FORMAT:
        raise BundleError(f'{manifest_path} is not a {FORMAT} manifest (no "format": "{FORMAT}")')
    version = manifest.get('schema_version')
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        raise BundleError(f'{manifest_path} has schema_version {version!r}; this sapiens2 ({__version__}) reads '
                          f'schema version {supported}: export the bundle again with this version, or install the '
                          f'sapiens2 that wrote it ({manifest.get("sapiens2_version", "unknown")})')
    missing_keys = [key for key in REQUIRED_KEYS if key not in manifest]
    if missing_keys:
        raise BundleError(f'{manifest_path} lacks the keys {missing_keys}; export the bundle again')
    from .manifest_check import check_manifest
    check_manifest(manifest, manifest_path)
    listed = listed_files(manifest)
    for field, name in listed.items():
        _check_inside(folder, field, name, manifest_path)
    missing = [name for name in listed.values() if not osp.isfile(osp.join(folder, name))]
    if missing:
        raise BundleError(f'bundle {folder} lacks {", ".join(missing)}, listed in its {MANIFEST}; copy the whole '
                          'folder, or export it again')
    from .config_data import read_config_data
    read_config_data(osp.join(folder, manifest['config']))  # a config that is not data fails before any model
    return Bundle(osp.abspath(folder), manifest)


def listed_files(manifest: dict) -> Dict[str, str]:
    """The files a (checked) manifest lists, by field: ``config``, ``onnx.<precision>`` and ``pt2``."""
    files = dict(config=manifest['config'], **{f'onnx.{precision}': name for precision, name in
                                                  manifest['onnx'].items()})
    if 'pt2' in manifest:
        files['pt2'] = manifest['pt2']
    return files


def _check_inside(folder: str, field: str, name: str, manifest_path: str) -> None:
    """A :class:`BundleError` for a listed file that lies outside the bundle folder (an absolute path, ``..``, or a
    symbolic link out of it): a bundle reads nothing but its own files."""
    target = osp.realpath(osp.join(folder, name))
    if osp.isabs(name):
        what = 'an absolute path'
    elif target.startswith(osp.realpath(folder) + osp.sep):
        return
    elif osp.islink(osp.join(folder, name)):
        what = f'a symbolic link to {target}'
    else:
        what = f'a path to {target}'
    raise BundleError(f'{manifest_path}: {field} is {name!r}, {what}, outside the bundle folder; bundle files must '
                      'lie inside the bundle folder: copy the whole folder, or export it again')
