"""mmpose's and mmseg's own APIs (init_model + inference_topdown / inference_model, MMPoseInferencer,
MMSegInferencer) on configs that name their layout with ``custom_metainfo`` (docs/custom_data.md §4): they build the
head the metainfo file names and predict what ``Sapiens2Inferencer`` predicts; a head of another shape is an error."""
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch

from sapiens2.apis import Sapiens2Inferencer, init_model
from sapiens2.engine.checkpoint import CheckpointMismatchError, save_weights

REPO = Path(__file__).resolve().parents[2]
NANO_POSE = REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py'
NANO_SEG = REPO / 'configs' / 'seg' / 'sapiens2_nano_seg_synthhumans-128x96.py'
PARTS5 = ("dataset_info = dict(classes=('background', 'head', 'torso', 'left_arm', 'right_arm'),\n"
          "    palette=[[0, 0, 0], [250, 200, 120], [60, 120, 230], [40, 200, 90], [230, 60, 60]],\n"
          "    flip_pairs=[('left_arm', 'right_arm')], class_weight=[0.5, 1.0, 1.0, 2.0, 2.0])\n")
BOX = [0, 0, 120, 160]  # the whole 120x160 photo: MMPoseInferencer without a detector takes it


@pytest.fixture(scope='module')
def own(tmp_path_factory) -> dict:
    """A 10-keypoint (upper_body10) and a 5-class (a metainfo file next to the config) nano model: configs that set
    only custom_metainfo (and leave the head size to it), random weights saved with their layout, a noise photo."""
    folder = tmp_path_factory.mktemp('upstream_apis')
    (folder / 'parts5.py').write_text(PARTS5)
    pose_cfg, seg_cfg = folder / 'pose10.py', folder / 'seg5.py'
    pose_cfg.write_text(f"_base_ = ['{NANO_POSE}']\nmodel = dict(head=dict(out_channels=None))\n"
                        "custom_metainfo = 'sapiens2::_base_/datasets/layouts/upper_body10.py'\n")
    seg_cfg.write_text(f"_base_ = ['{NANO_SEG}']\nmodel = dict(decode_head=dict(num_classes=None))\n"
                       "custom_metainfo = 'parts5.py'\n")
    torch.manual_seed(0)
    with pytest.warns(UserWarning, match='random weights'):
        pose, seg = init_model(str(pose_cfg), device='cpu'), init_model(str(seg_cfg), device='cpu')
    pose_ckpt, seg_ckpt = str(folder / 'pose10.pth'), str(folder / 'seg5.pth')
    save_weights(pose.state_dict(), pose_ckpt, dict(dataset_meta=pose.dataset_meta))
    save_weights(seg.state_dict(), seg_ckpt, dict(dataset_meta=dict(classes=seg.dataset_meta['classes'],
                                                                     palette=seg.dataset_meta['palette'])))
    image = folder / 'photo.png'
    cv2.imwrite(str(image), np.random.default_rng(0).integers(0, 256, (160, 120, 3), np.uint8))
    return dict(pose_cfg=str(pose_cfg), seg_cfg=str(seg_cfg), pose_ckpt=pose_ckpt, seg_ckpt=seg_ckpt,
                image=str(image), folder=folder)


@pytest.fixture(scope='module')
def sapiens2_pose(own, tmp_path_factory) -> np.ndarray:
    """Sapiens2Inferencer's keypoints for BOX: what each upstream API must give."""
    inferencer = Sapiens2Inferencer(own['pose_cfg'], own['pose_ckpt'], device='cpu', dtype='fp32')
    result = inferencer(own['image'], out_dir=str(tmp_path_factory.mktemp('pose_out')), show_progress=False,
                        bboxes=dict(photo=[BOX]))[0]['pose']
    assert result['keypoints'].shape == (1, 10, 2)
    return result['keypoints'][0]


@pytest.fixture(scope='module')
def sapiens2_seg(own, tmp_path_factory) -> np.ndarray:
    inferencer = Sapiens2Inferencer(own['seg_cfg'], own['seg_ckpt'], device='cpu', dtype='fp32')
    labels = inferencer(own['image'], out_dir=str(tmp_path_factory.mktemp('seg_out')), show_progress=False
                        )[0]['seg']['labels']
    assert labels.shape == (160, 120) and labels.max() < 5
    return labels


def test_mmpose_init_model_and_inference_topdown(own, sapiens2_pose):
    from mmpose.apis import inference_topdown
    from mmpose.apis import init_model as mmpose_init_model
    model = mmpose_init_model(own['pose_cfg'], own['pose_ckpt'], device='cpu')
    assert model.head.conv_pose.out_channels == 10 and len(model.dataset_meta['flip_indices']) == 10
    assert model.dataset_meta['keypoint_id2name'][2] == 'left_shoulder'
    keypoints = inference_topdown(model, own['image'], np.array([BOX]))[0].pred_instances.keypoints[0]
    np.testing.assert_allclose(keypoints, sapiens2_pose, atol=1.0)


def test_mmpose_inferencer(own, sapiens2_pose):
    from mmpose.apis import MMPoseInferencer
    inferencer = MMPoseInferencer(own['pose_cfg'], own['pose_ckpt'], device='cpu', det_model='whole_image')
    assert len(inferencer.inferencer.model.dataset_meta['flip_indices']) == 10
    result = next(inferencer(own['image']))['predictions'][0][0]
    np.testing.assert_allclose(np.array(result['keypoints']), sapiens2_pose, atol=1.0)


def test_mmseg_init_model_and_inference_model(own, sapiens2_seg):
    from mmseg.apis import inference_model
    from mmseg.apis import init_model as mmseg_init_model
    model = mmseg_init_model(own['seg_cfg'], own['seg_ckpt'], device='cpu')
    assert model.decode_head.num_classes == 5 and len(model.dataset_meta['classes']) == 5
    labels = inference_model(model, own['image']).pred_sem_seg.data[0].numpy()
    assert (labels == sapiens2_seg).mean() > 0.99


def test_mmseg_inferencer(own, sapiens2_seg):
    from mmseg.apis import MMSegInferencer
    inferencer = MMSegInferencer(own['seg_cfg'], own['seg_ckpt'], device='cpu')
    labels = inferencer(own['image'])['predictions']
    assert labels.max() < 5 and (labels == sapiens2_seg).mean() > 0.99


@pytest.mark.parametrize('task', ['pose', 'seg'])
def test_inferencers_refuse_a_head_of_another_shape(own, task):
    """The packaged 308-keypoint / 29-class config with the own-layout checkpoint: mmpose and mmseg load it
    non-strictly (a random head, then an AssertionError in flip_heatmaps or labels the model does not have)."""
    from mmpose.apis import MMPoseInferencer
    from mmseg.apis import MMSegInferencer
    if task == 'pose':
        build = lambda: MMPoseInferencer(str(NANO_POSE), own['pose_ckpt'], device='cpu', det_model='whole_image')  # noqa: E731
        shapes = r'head\.conv_pose\.weight \(checkpoint \(10, '
    else:
        build = lambda: MMSegInferencer(str(NANO_SEG), own['seg_ckpt'], device='cpu')  # noqa: E731
        shapes = r'decode_head\.conv_seg\.weight \(checkpoint \(5, 32, 1, 1\) vs model \(29, 32, 1, 1\)\)'
    with pytest.raises(CheckpointMismatchError, match=shapes):
        build()


def test_saved_config_is_self_contained(own, tmp_path, monkeypatch):
    """The copy a run writes to its work dir (Config.dump of the loaded config) names the metainfo file absolutely
    and holds the own layout's flip pairs wherever it names any (no 29-class pairs left); it loads from any folder."""
    import runpy

    from mmseg.apis import init_model as mmseg_init_model

    from sapiens2.config.layout_checks import swapping_nodes
    from sapiens2.engine.launch import load_config
    copy = tmp_path / 'work_dir' / 'seg5.py'
    copy.parent.mkdir()
    load_config(own['seg_cfg']).dump(str(copy))
    monkeypatch.chdir(tmp_path)
    saved = runpy.run_path(str(copy))  # the file as written, without sapiens2 reading it
    assert saved['custom_metainfo'] == str(own['folder'] / 'parts5.py')
    swaps = [node['swap_seg_labels'] for value in saved.values() for _, node in swapping_nodes(value)]
    assert saved['swap_seg_labels'] == [[3, 4]] and len(swaps) >= 3 and all(s == [[3, 4]] for s in swaps), swaps
    model = mmseg_init_model(str(copy), own['seg_ckpt'], device='cpu')
    assert model.decode_head.num_classes == 5
