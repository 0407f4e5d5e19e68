"""int8 ONNX models (``sapiens2.deploy.quantize``): outputs near fp32, a smaller file, and a bundle's int8 entry that
never replaces a file unasked."""
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip('onnxruntime')
pytest.importorskip('onnxscript')

from sapiens2.apis import Sapiens2Inferencer  # noqa: E402
from sapiens2.deploy.quantize import INT8_FILE, MANIFEST, add_int8, quantize_onnx  # noqa: E402

#: int8 heatmaps of the shipped pose-tiny against fp32: relative L2 error bound (quint8 weights; qint8 saturates on
#: an AVX2 CPU without VNNI, whose 16-bit sums overflow: 6.6 % on the nano pose model against 0.9 %).
INT8_REL_L2 = 0.05


@pytest.fixture
def bundle(bundles, tmp_path) -> Path:
    """A copy of the pose-tiny bundle of tests/deploy/conftest.py (exported once per session)."""
    return Path(shutil.copytree(bundles['pose'][0], tmp_path / 'pose'))


def rendered_people(seeds=(3, 4)) -> list:
    """SynthHumans scenes at the model's input size (BGR): people pose-tiny was trained on, whose peaked heatmaps make
    the int8 error meaningful (on noise pixels its near-flat heatmaps are mostly quantization noise)."""
    from sapiens2.datasets.synthhumans.render import render_image
    from sapiens2.datasets.synthhumans.scene import sample_scene
    return [render_image(sample_scene(np.random.default_rng(seed), (256, 192))) for seed in seeds]


def run(path: Path, x: np.ndarray) -> np.ndarray:
    import onnxruntime
    session = onnxruntime.InferenceSession(str(path), providers=['CPUExecutionProvider'])
    return session.run(None, {session.get_inputs()[0].name: x})[0]


def test_int8_outputs_are_near_fp32_and_the_file_is_smaller(bundle, tmp_path):
    dst = tmp_path / 'int8.onnx'
    quantize_onnx(str(bundle / 'model.onnx'), str(dst))
    x = np.stack(rendered_people()).transpose(0, 3, 1, 2).astype(np.float32)  # (2, 3, 256, 192) BGR pixels
    fp32, int8 = run(bundle / 'model.onnx', x), run(dst, x)
    assert int8.shape == fp32.shape
    error = np.linalg.norm(int8 - fp32) / np.linalg.norm(fp32)
    assert 0 < error < INT8_REL_L2  # quantized (not a copy), and close
    assert dst.stat().st_size < 0.7 * (bundle / 'model.onnx').stat().st_size
    assert sorted(os.listdir(tmp_path)) == ['int8.onnx', 'pose']  # no temporary left behind
    with pytest.raises(FileExistsError, match='int8.onnx exists; give overwrite=True'):
        quantize_onnx(str(bundle / 'model.onnx'), str(dst))
    with pytest.raises(ValueError, match="weight_type 'int4' is not one of qint8, quint8"):
        quantize_onnx(str(bundle / 'model.onnx'), str(tmp_path / 'other.onnx'), weight_type='int4')


def test_add_int8_records_the_model_and_refuses_to_replace_it(bundle):
    path = add_int8(str(bundle))
    manifest = json.loads((bundle / MANIFEST).read_text())
    assert path == str(bundle / INT8_FILE) and manifest['onnx'] == {'fp32': 'model.onnx', 'int8': INT8_FILE}
    assert manifest['schema_version'] == 1 and manifest['task'] == 'pose'  # the rest of the manifest is kept
    before = (bundle / INT8_FILE).stat().st_mtime_ns
    with pytest.raises(FileExistsError, match=f'{INT8_FILE} exists; give overwrite=True'):
        add_int8(str(bundle))
    assert (bundle / INT8_FILE).stat().st_mtime_ns == before
    add_int8(str(bundle), overwrite=True)
    assert (bundle / INT8_FILE).stat().st_mtime_ns != before


def test_add_int8_needs_a_bundle(tmp_path):
    with pytest.raises(FileNotFoundError, match=f'no {MANIFEST}; export a bundle first'):
        add_int8(str(tmp_path))


def test_the_inferencer_runs_the_int8_model(bundle):
    """--dtype int8 with the onnxruntime backend: keypoints within a tenth of a pixel of fp32 on pose-tiny."""
    add_int8(str(bundle))
    images = rendered_people(seeds=(3, ))
    boxes = dict(array_000000=[[0, 0, 191, 255]])
    fp32 = Sapiens2Inferencer(str(bundle), device='cpu', dtype='fp32')  # not auto, which runs the int8 model now
    fp32 = fp32(images, bboxes=boxes, show_progress=False)[0]['pose']
    int8 = Sapiens2Inferencer(str(bundle), device='cpu', dtype='int8')
    result = int8(images, bboxes=boxes, show_progress=False)[0]['pose']
    distance = np.linalg.norm(result['keypoints'] - fp32['keypoints'], axis=-1)
    assert 0 < distance.max() and np.median(distance) < 0.5  # another model ran (int8), near fp32
