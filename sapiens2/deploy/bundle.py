"""Writing the exported bundle: one folder that runs without the original config or checkpoint (its layout and
manifest: :mod:`sapiens2.apis.backends.bundle`, which reads it)."""
import os.path as osp
from typing import TYPE_CHECKING, Dict, Optional, Sequence

from sapiens2.apis.backends.bundle import CONFIG_FILE, FORMAT, INT8_FILE, MANIFEST, MODEL_STEM, SCHEMA_VERSION
from sapiens2.utils import strict_json
from sapiens2.version import __version__

if TYPE_CHECKING:
    from torch import nn

    from .export import Tolerance


def bundle_files(folder: str, formats: Sequence[str], int8: bool = False) -> Dict[str, str]:
    """The paths a bundle of ``formats`` (``onnx``, ``pt2``) in ``folder`` writes, by kind (``int8``: with the int8
    model)."""
    files = dict(manifest=osp.join(folder, MANIFEST), config=osp.join(folder, CONFIG_FILE))
    files.update({fmt: osp.join(folder, f'{MODEL_STEM}.{fmt}') for fmt in formats})
    if int8:
        files['int8'] = osp.join(folder, INT8_FILE)
    return files


def write_bundle(model: 'nn.Module',
                 folder: str,
                 formats: Sequence[str] = ('onnx', ),
                 include_preprocess: bool = True,
                 batch_size: int = 2,
                 tol: Optional['Tolerance'] = None,
                 opset: Optional[int] = None) -> Dict[str, str]:
    """Export ``model`` (from :func:`sapiens2.apis.init_model`: ``cfg`` attached) into the bundle ``folder``
    (which must exist) with parity checks (:func:`~sapiens2.deploy.export.export_model`, ONNX ``opset``: its
    default when None); returns
    :func:`bundle_files`. Files already there are replaced: the caller checks them (``OutputGuard``)."""
    from sapiens2.apis.builder import model_input_size
    from sapiens2.apis.tasks import task_class
    from sapiens2.utils.atomic_save import atomic_write_text

    from .export import DEFAULT_OPSET, export_model
    input_size = model_input_size(model.cfg)
    files = bundle_files(folder, formats)
    paths, meta = export_model(model, input_size, osp.join(folder, MODEL_STEM), formats, include_preprocess,
                               batch_size, tol, opset=opset or DEFAULT_OPSET)
    atomic_write_text(files['config'], model.cfg.pretty_text)
    manifest = dict(schema_version=SCHEMA_VERSION, format=FORMAT, task=task_class(model.cfg).name,
                    onnx=dict(fp32=osp.basename(paths['onnx'])) if 'onnx' in paths else {}, config=CONFIG_FILE,
                    input_size=list(input_size), input=meta['input'],
                    preprocess=dict(meta['preprocess'], in_graph=meta['preprocess_in_graph']),
                    dataset_meta=meta.get('dataset_meta'), outputs=meta['outputs'], parity=meta['parity'],
                    rope_dtype={fmt: meta[f'{fmt}_rope_dtype'] for fmt in formats}, sapiens2_version=__version__)
    if 'onnx' in paths:
        manifest['onnx_opset'] = meta['onnx_opset']
    if 'pt2' in paths:
        manifest['pt2'] = osp.basename(paths['pt2'])
    atomic_write_text(files['manifest'], strict_json.dumps(manifest, indent=2))
    return files
