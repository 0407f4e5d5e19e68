"""int8 ONNX models (``sapiens2.deploy.quantize``): outputs near fp32, a smaller file, and a bundle's int8 entry that
never replaces a file unasked."""
import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip('onnxruntime')
pytest.importorskip('onnxscript')

from sapiens2.apis import init_model  # noqa: E402
from sapiens2.deploy.export import ExportableModel, export_onnx, set_rope_dtype  # noqa: E402
from sapiens2.deploy.quantize import INT8_FILE, MANIFEST, add_int8, quantize_onnx  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')
SIZE = (64, 48)
#: int8 heatmaps of the nano pose model against fp32: relative L2 error (measured 0.9 % with the default quint8
#: weights; 6.6 % with qint8 on an AVX2 CPU without VNNI, whose 16-bit sums saturate).
INT8_REL_L2 = 0.05


@pytest.fixture(scope='module')
def bundle(tmp_path_factory) -> Path:
    """A folder with an fp32 ONNX export of the nano pose model and a bundle manifest naming it."""
    torch.manual_seed(0)
    model = init_model(POSE, device='cpu', cfg_options={'model.backbone.img_size': SIZE})
    module = ExportableModel(model, include_preprocess=False).eval()
    set_rope_dtype(module, torch.float32)
    folder = tmp_path_factory.mktemp('bundle')
    with torch.no_grad():
        export_onnx(module, torch.randn(2, 3, *SIZE), str(folder / 'model.onnx'))
    (folder / MANIFEST).write_text(json.dumps({'schema_version': 1, 'onnx': {'fp32': 'model.onnx'}}))
    return folder


def run(path: Path, x: np.ndarray) -> np.ndarray:
    import onnxruntime
    session = onnxruntime.InferenceSession(str(path), providers=['CPUExecutionProvider'])
    return session.run(None, {session.get_inputs()[0].name: x})[0]


def test_int8_outputs_are_near_fp32_and_the_file_is_smaller(bundle, tmp_path):
    dst = tmp_path / 'int8.onnx'
    quantize_onnx(str(bundle / 'model.onnx'), str(dst))
    x = np.random.default_rng(0).standard_normal((3, 3, *SIZE)).astype(np.float32)
    fp32, int8 = run(bundle / 'model.onnx', x), run(dst, x)
    assert int8.shape == fp32.shape
    error = np.linalg.norm(int8 - fp32) / np.linalg.norm(fp32)
    assert 0 < error < INT8_REL_L2  # quantized (not a copy), and close
    assert dst.stat().st_size < 0.7 * (bundle / 'model.onnx').stat().st_size
    assert sorted(os.listdir(tmp_path)) == ['int8.onnx']  # no temporary left behind
    with pytest.raises(FileExistsError, match='int8.onnx exists; give overwrite=True'):
        quantize_onnx(str(bundle / 'model.onnx'), str(dst))
    with pytest.raises(ValueError, match="weight_type 'int4' is not one of qint8, quint8"):
        quantize_onnx(str(bundle / 'model.onnx'), str(tmp_path / 'other.onnx'), weight_type='int4')


def test_add_int8_records_the_model_and_refuses_to_replace_it(bundle):
    path = add_int8(str(bundle))
    manifest = json.loads((bundle / MANIFEST).read_text())
    assert path == str(bundle / INT8_FILE) and manifest['onnx'] == {'fp32': 'model.onnx', 'int8': INT8_FILE}
    assert manifest['schema_version'] == 1  # the rest of the manifest is kept
    before = (bundle / INT8_FILE).stat().st_mtime_ns
    with pytest.raises(FileExistsError, match=f'{INT8_FILE} exists; give overwrite=True'):
        add_int8(str(bundle))
    assert (bundle / INT8_FILE).stat().st_mtime_ns == before
    add_int8(str(bundle), overwrite=True)
    assert (bundle / INT8_FILE).stat().st_mtime_ns != before


def test_add_int8_needs_a_bundle(tmp_path):
    with pytest.raises(FileNotFoundError, match=f'no {MANIFEST}; export a bundle first'):
        add_int8(str(tmp_path))
