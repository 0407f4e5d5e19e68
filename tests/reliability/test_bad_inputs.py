"""Catalogue of bad inputs: each one fails with a clear error (what, which file, how to fix) or is masked out of the
supervision, never producing corrupted outputs. Inputs are written small into ``tmp_path``.

A config typo is covered by test_config_typo.py, non-finite losses by test_non_finite_loss.py.
"""
import json

import cv2
import numpy as np
import pytest
import torch
from mmengine.registry import init_default_scope

from sapiens2.engine import CheckpointMismatchError, load_model_weights, read_checkpoint_file, save_weights
from sapiens2.models import Sapiens2
from tests.reliability.bad_input_files import H, W, coco_annotation, write_image


# ---------------------------------------------------------------------------------------------- checkpoints / model
def _nano() -> Sapiens2:
    return Sapiens2(arch='sapiens2_nano', img_size=(H, W))


def test_checkpoint_of_another_arch_is_rejected_and_leaves_the_model_untouched(tmp_path):
    path = tmp_path / 'tiny.safetensors'
    save_weights(Sapiens2(arch='sapiens2_tiny', img_size=(H, W)).state_dict(), str(path))
    model = _nano()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(CheckpointMismatchError, match=str(path)):
        load_model_weights(model, str(path))
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_checkpoint_of_another_task_is_rejected(tmp_path):
    pose = torch.nn.Module()
    pose.backbone, pose.head = _nano(), torch.nn.Module()
    pose.head.final_layer = torch.nn.Conv2d(64, 308, 1)
    seg_state = {f'backbone.{k}': v for k, v in _nano().state_dict().items()}
    seg_state['decode_head.conv_seg.weight'] = torch.zeros(29, 64, 1, 1)
    path = tmp_path / 'seg.safetensors'
    save_weights(seg_state, str(path))
    with pytest.raises(CheckpointMismatchError, match=r'(?s)missing \(2\): head.final_layer.*conv_seg.weight'):
        load_model_weights(pose, str(path))


def test_truncated_safetensors_is_reported_as_corrupt(tmp_path):
    path = tmp_path / 'nano.safetensors'
    save_weights(_nano().state_dict(), str(path))
    path.write_bytes(path.read_bytes()[:-1000])
    with pytest.raises(ValueError, match=f'{path}.*truncated or corrupt'):
        read_checkpoint_file(str(path))


def test_image_size_not_a_multiple_of_the_patch_size():
    with pytest.raises(ValueError, match=r'multiples of patch_size = 16.*e\.g\. to \(112, 96\)'):
        Sapiens2(arch='sapiens2_nano', img_size=(100, 96))
    with pytest.raises(ValueError, match='must be multiples of patch_size'):
        _nano()(torch.zeros(1, 3, H + 8, W))


# -------------------------------------------------------------------------------------------------- pose dataset
def _pose_dataset(root, ann, image: bool = True):
    from mmpose.datasets.transforms import LoadImage

    from sapiens2.datasets.pose.keypoints308_dataset import Keypoints308CocoDataset
    if image:
        write_image(root / 'rgb/0.png')
    ann_file = root / 'ann.json'
    ann_file.write_text(ann if isinstance(ann, str) else json.dumps(ann))
    return Keypoints308CocoDataset(data_root=str(root), ann_file='ann.json', data_prefix=dict(img=''),
                                   pipeline=[LoadImage()], serialize_data=False)


def test_pose_valid_sample_loads(tmp_path):
    sample = _pose_dataset(tmp_path, coco_annotation())[0]
    assert sample['img'].shape == (H, W, 3) and sample['keypoints'].shape == (1, 308, 2)


def test_pose_missing_image_names_the_file(tmp_path):
    dataset = _pose_dataset(tmp_path, coco_annotation(), image=False)
    with pytest.raises(FileNotFoundError, match='rgb/0.png'):
        dataset[0]


def test_pose_truncated_image_names_the_file(tmp_path):
    dataset = _pose_dataset(tmp_path, coco_annotation())
    png = tmp_path / 'rgb/0.png'
    png.write_bytes(png.read_bytes()[:40])
    with pytest.raises(Exception, match='rgb/0.png') as err:
        dataset[0]
    assert not isinstance(err.value, (TypeError, AttributeError, IndexError))


def test_pose_malformed_json_names_the_file(tmp_path):
    with pytest.raises(ValueError, match='ann.json'):
        _pose_dataset(tmp_path, json.dumps(coco_annotation())[:-30])


def test_pose_wrong_schema_names_record_and_fix(tmp_path):
    ann = coco_annotation()
    del ann['images'][0]['file_name']
    with pytest.raises(ValueError, match=r"ann.json: image 1 lacks \['file_name'\]; every image needs"):
        _pose_dataset(tmp_path, ann)


def test_pose_wrong_keypoint_count(tmp_path):
    with pytest.raises(ValueError, match=r'ann.json: annotation 1 field "keypoints" has 399 values; expected 308'):
        _pose_dataset(tmp_path, coco_annotation(num_keypoints=133))


def test_pose_bbox_outside_the_image(tmp_path):
    with pytest.raises(ValueError, match=r'ann.json: annotation 1.*bbox.*outside the image'):
        _pose_dataset(tmp_path, coco_annotation(bbox=(W + 10, H + 10, 20, 20)))


# --------------------------------------------------------------------------------------------------- seg dataset
def _seg_sample(root, label: np.ndarray) -> dict:
    from sapiens2.datasets.seg.bodypart29_dataset import BodyPart29Dataset
    init_default_scope('mmseg')
    write_image(root / 'img/0.png')
    (root / 'ann').mkdir()
    cv2.imwrite(str(root / 'ann/0.png'), label)
    dataset = BodyPart29Dataset(data_root=str(root), data_prefix=dict(img_path='img', seg_map_path='ann'),
                                img_suffix='.png', seg_map_suffix='.png',
                                pipeline=[dict(type='LoadImageFromFile'), dict(type='LoadAnnotations')])
    return dataset[0]


def test_seg_valid_labels_load(tmp_path):
    label = np.zeros((H, W), np.uint8)
    label[:10] = 28
    label[-5:] = 255  # ignore
    assert set(np.unique(_seg_sample(tmp_path, label)['gt_seg_map'])) == {0, 28, 255}


def test_seg_label_ids_out_of_range_name_the_file(tmp_path):
    label = np.zeros((H, W), np.uint8)
    label[:10] = 40
    with pytest.raises(ValueError, match=r'ann/0.png.*40'):
        _seg_sample(tmp_path, label)


# -------------------------------------------------------------------------------------- dense (pointmap) samples
def _pointmap_results(root, depth: np.ndarray, mask_value: int = 255, intrinsics: str | None = None) -> dict:
    root.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(root / 'mask.png'), np.full((H, W), mask_value, np.uint8))
    np.save(root / 'depth.npy', depth.astype(np.float32))
    (root / 'K.txt').write_text(intrinsics or '50 0 24\n0 50 32\n0 0 1\n')
    (root / 'E.txt').write_text('1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1\n')
    return dict(img=np.zeros((H, W, 3), np.uint8), img_path=str(root / 'img.png'), mask_path=str(root / 'mask.png'),
                depth_path=str(root / 'depth.npy'), intrinsics_path=str(root / 'K.txt'),
                extrinsics_path=str(root / 'E.txt'))


def _load_pointmap(results: dict):
    from sapiens2_pointmap.datasets.load_pointmap_annotations import LoadPointmapAnnotations
    return LoadPointmapAnnotations(min_valid_pixels=10)(results)


def test_depth_with_nan_and_negative_values_is_masked_out(tmp_path):
    depth = np.full((H, W), 2.0)
    depth[:8] = np.nan
    depth[8:16] = -1.0
    out = _load_pointmap(_pointmap_results(tmp_path, depth))
    assert np.isfinite(out['gt_depth']).all() and (out['gt_depth'] >= 0).all()
    assert not out['gt_mask'][:16].any() and out['gt_mask'][16:].all()


def test_empty_mask_rejects_the_sample(tmp_path):
    assert _load_pointmap(_pointmap_results(tmp_path, np.full((H, W), 2.0), mask_value=0)) is None


def test_malformed_intrinsics_name_the_file(tmp_path):
    with pytest.raises(ValueError, match='K.txt'):
        _load_pointmap(_pointmap_results(tmp_path, np.full((H, W), 2.0), intrinsics='50 0 24\n0 fifty 32\n'))


def test_intrinsics_of_the_wrong_shape_name_the_file(tmp_path):
    with pytest.raises(ValueError, match=r'K.txt.*must hold a 3x3 matrix, got 6 values'):
        _load_pointmap(_pointmap_results(tmp_path, np.full((H, W), 2.0), intrinsics='50 0 24\n0 50 32\n'))
