"""mmpose's and mmseg's own APIs take sapiens2 model aliases (init_model, MMPoseInferencer, MMSegInferencer), and
MMPoseInferencer poses the boxes it is given (mmpose 1.3.2 resets them to [] and poses the whole image): the
adaptations ``mmpose-init-model-aliases``, ``mmseg-init-model-aliases``, ``inferencer-aliases`` and
``pose-inferencer-bboxes``; their log notices about machinery a user cannot act on are hidden. The packaged tiny
models, nothing downloaded."""
import cv2
import numpy as np
import pytest

import sapiens2  # noqa: F401  (the adaptations)
from sapiens2.apis import Sapiens2Inferencer

BOXES = [[20, 10, 70, 150], [80, 30, 118, 140]]  # two people in a 120x160 photo


@pytest.fixture(scope='module')
def photo(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp('aliases') / 'photo.png'
    cv2.imwrite(str(path), np.random.default_rng(0).integers(0, 256, (160, 120, 3), np.uint8))
    return str(path)


@pytest.fixture(scope='module')
def sapiens2_pose(photo) -> np.ndarray:
    """Sapiens2Inferencer's keypoints of pose-tiny for BOXES: what mmpose's APIs must give."""
    result = Sapiens2Inferencer('pose-tiny', device='cpu', dtype='fp32')(photo, show_progress=False,
                                                                         bboxes=dict(photo=BOXES))[0]['pose']
    assert result['keypoints'].shape == (2, 308, 2)
    return result['keypoints']


def test_mmpose_init_model_takes_an_alias(photo, sapiens2_pose):
    from mmpose.apis import inference_topdown, init_model
    model = init_model('pose-tiny', device='cpu')
    assert len(model.dataset_meta['flip_indices']) == 308
    samples = inference_topdown(model, photo, np.array(BOXES))
    keypoints = np.concatenate([sample.pred_instances.keypoints for sample in samples])
    np.testing.assert_allclose(keypoints, sapiens2_pose, atol=1.0)


def test_mmpose_inferencer_takes_an_alias_and_poses_the_given_boxes(photo, sapiens2_pose, capfd):
    from mmpose.apis import MMPoseInferencer
    inferencer = MMPoseInferencer(pose2d='pose-tiny', device='cpu')
    instances = next(inferencer(photo, bboxes=[BOXES]))['predictions'][0]
    logged = capfd.readouterr()
    assert 'Failed to search registry' not in logged.out + logged.err  # its collate function's lookup
    assert [instance['bbox'][0] for instance in instances] == [pytest.approx(box) for box in BOXES]
    keypoints = np.array([instance['keypoints'] for instance in instances])
    np.testing.assert_allclose(keypoints, sapiens2_pose, atol=1.0)


def test_mmseg_init_model_and_inferencer_take_an_alias(photo, tmp_path, capfd):
    from mmseg.apis import MMSegInferencer, inference_model, init_model
    wide = str(tmp_path / 'wide.png')  # photos of two sizes in one batch: mmseg logs their shapes, sapiens2 hides it
    cv2.imwrite(wide, np.zeros((100, 180, 3), np.uint8))
    expected = Sapiens2Inferencer('seg-tiny', device='cpu', dtype='fp32', batch_size=2)(
        [photo, wide], show_progress=False)[0]['seg']
    model = init_model('seg-tiny', device='cpu')
    labels = inference_model(model, photo).pred_sem_seg.data[0].numpy()
    assert (labels == expected['labels']).mean() > 0.99
    labels = MMSegInferencer('seg-tiny', device='cpu')(photo)['predictions']
    assert (labels == expected['labels']).mean() > 0.99
    logged = capfd.readouterr()
    assert 'Image shapes are different' not in logged.out + logged.err
    assert 'Failed to search registry' not in logged.out + logged.err


def test_an_explicit_checkpoint_wins_over_the_alias_checkpoint(tmp_path):
    from mmpose.apis import init_model
    with pytest.raises(FileNotFoundError, match='missing.pth'):
        init_model('pose-tiny', str(tmp_path / 'missing.pth'), device='cpu')
