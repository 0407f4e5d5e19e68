"""Exported bundles run with ONNX Runtime through the inferencer and the CLI, as the torch models do.

The bundles are exported once (``bundles`` in tests/deploy/conftest.py). The torch reference runs with fp32 RoPE, the
mode the ONNX graph is exported and parity-checked in (tests/deploy/test_export.py)."""
import importlib.util
import json
import shutil

import cv2
import numpy as np
import pytest
import torch

from sapiens2.apis import Sapiens2Inferencer
from sapiens2.apis.backends.bundle import BundleError, read_bundle
from sapiens2.apis.cli import main as infer_main
from sapiens2.datasets.synthhumans.sequence import render_clip, write_clip
from sapiens2.deploy.export import set_rope_dtype

HAS_ORT = importlib.util.find_spec('onnxruntime') is not None and importlib.util.find_spec('onnxscript') is not None
pytestmark = pytest.mark.skipif(not HAS_ORT, reason='bundles need onnxscript + onnxruntime (requirements/optional.txt)')


def torch_inferencer(task, bundles, **kwargs):
    """The torch inferencer of the bundle's weights, with the fp32 RoPE the ONNX graph computes (and fp32, not the
    default auto: bf16 on bf16 CPUs)."""
    inferencer = Sapiens2Inferencer(*bundles[task][1:], device='cpu', dtype='fp32', **kwargs)
    assert set_rope_dtype(inferencer.tasks[0].model, torch.float32) == 1
    return inferencer


@pytest.fixture(scope='module')
def images():
    rng = np.random.default_rng(0)
    return [(rng.random((90, 70, 3)) * 255).astype(np.uint8), (rng.random((64, 120, 3)) * 255).astype(np.uint8)]


def test_the_manifest_describes_the_bundle(bundles):
    bundle = read_bundle(str(bundles['pose'][0]))
    manifest = bundle.manifest
    assert (manifest['schema_version'], manifest['format'], bundle.task) == (1, 'sapiens2-bundle', 'pose')
    assert bundle.precisions() == ('fp32', ) and bundle.input_size == (256, 192)
    assert manifest['preprocess']['in_graph'] and manifest['preprocess']['bgr_to_rgb']
    assert manifest['outputs']['structure'] == 'tensor' and manifest['outputs']['shapes'] == [['batch', 308, 64, 48]]
    assert manifest['parity'][0]['passed'] and len(bundle.dataset_meta['keypoint_id2name']) == 308
    with pytest.raises(BundleError, match=r'has no int8 ONNX model \(it has: fp32\); re-export it with the int8'):
        bundle.onnx_path('int8')


def test_onnxruntime_pose_matches_torch(bundles, images):
    """Keypoints and scores of two crops per image in one batch (flip test: the session runs on the flipped batch)."""
    boxes = dict(array_000000=[[0, 0, 70, 90], [10, 5, 60, 80]], array_000001=[[20, 0, 100, 64], [0, 0, 120, 64]])
    reference = torch_inferencer('pose', bundles)(images, bboxes=boxes, show_progress=False)
    ort = Sapiens2Inferencer(str(bundles['pose'][0]), device='cpu')
    assert ort.tasks[0].model.inference_backend == 'onnxruntime' and ort.tasks[0].model.backbone is None
    for expected, actual in zip(reference, ort(images, bboxes=boxes, show_progress=False)):
        expected, actual = expected['pose'], actual['pose']
        assert actual['keypoints'].shape == (2, 308, 2)
        np.testing.assert_allclose(actual['keypoint_scores'], expected['keypoint_scores'], atol=1e-4)
        np.testing.assert_allclose(actual['keypoints'], expected['keypoints'], atol=0.05)
        np.testing.assert_array_equal(actual['bboxes'], expected['bboxes'])


def test_onnxruntime_seg_matches_torch(bundles, images):
    reference = torch_inferencer('seg', bundles)(images, show_progress=False)
    inferencer = Sapiens2Inferencer(str(bundles['seg'][0]), device='cpu', backend='onnxruntime',
                                    providers=['CPUExecutionProvider'])
    session = inferencer.tasks[0].model.extract_feat.session.session  # providers and threads as given to ONNX Runtime
    assert session.get_providers() == ['CPUExecutionProvider']
    assert session.get_session_options().intra_op_num_threads == torch.get_num_threads()
    actual = inferencer(images, show_progress=False)
    for image, expected, result in zip(images, reference, actual):
        assert result['seg']['labels'].shape == expected['seg']['labels'].shape == image.shape[:2]
        assert (result['seg']['labels'] == expected['seg']['labels']).mean() >= 0.999


def test_the_cli_runs_a_bundle_without_its_config(bundles, tmp_path):
    """A copy of the bundle elsewhere (the config it was exported from plays no part): JSON and picture."""
    bundle = tmp_path / 'pose-tiny'
    shutil.copytree(bundles['pose'][0], bundle)
    cv2.imwrite(str(tmp_path / 'person.png'), np.full((90, 70, 3), 90, np.uint8))
    assert infer_main([str(tmp_path / 'person.png'), '--model', str(bundle), '--out', str(tmp_path / 'out'),
                       '--quiet', '--device', 'cpu', '--person-finder', 'none']) == 0  # one whole-image box
    written = sorted(p.name for p in (tmp_path / 'out' / 'pose').iterdir())
    assert written == ['person.json', 'person.png']
    result = json.loads((tmp_path / 'out' / 'pose' / written[0]).read_text())
    names = read_bundle(str(bundle)).dataset_meta['keypoint_id2name']
    assert result['keypoint_names'] == [names[str(i)] for i in range(308)] and result['num_keypoints'] == 308
    assert len(result['instances']) == 1


def test_a_video_with_onnxruntime_gets_the_torch_track_ids(bundles, tmp_path):
    """Tracking and smoothing apply unchanged: the same track ids and (smoothed) keypoints as torch."""
    clip = render_clip('crossing', num_frames=4, size=(96, 128), seed=0)
    video = write_clip(clip, str(tmp_path / 'crossing.avi'))
    boxes = {f'crossing_{t:06d}': frame_boxes.tolist() for t, frame_boxes in enumerate(clip.bboxes)}
    reference = torch_inferencer('pose', bundles)(video, bboxes=boxes, show_progress=False)
    results = Sapiens2Inferencer(str(bundles['pose'][0]), device='cpu')(video, bboxes=boxes, show_progress=False)
    assert len(results) == 4
    for expected, actual in zip(reference, results):
        assert len(actual['pose']['track_ids']) == len(clip.bboxes[actual['frame']]) >= 1
        np.testing.assert_array_equal(actual['pose']['track_ids'], expected['pose']['track_ids'])
        np.testing.assert_allclose(actual['pose']['keypoints'], expected['pose']['keypoints'], atol=0.05)
