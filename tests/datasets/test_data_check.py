"""The data check before training: mmpose's CocoDataset and mmseg's BaseSegDataset on an own layout (10 keypoints,
5 classes) whose data does not match it stop with one line naming the file, the entry and the value."""
import cv2
import numpy as np
import pytest

from sapiens2.datasets.data_check import DataCheckError, check_dataset
from tests.datasets.own_layout_data import coco_pose_dataset, seg_dataset


def test_matching_pose_data_passes_and_says_what_it_checked(tmp_path):
    summary = check_dataset(coco_pose_dataset(tmp_path))
    assert '1 keypoint annotations match the 10-keypoint layout' in summary


def test_more_keypoints_than_the_layout_names_the_file_annotation_and_counts(tmp_path):
    with pytest.raises(DataCheckError) as err:
        check_dataset(coco_pose_dataset(tmp_path, num_keypoints=11))
    message = str(err.value)
    assert len(message.splitlines()) == 1
    assert 'ann.json: annotation 7' in message and 'a.jpg' in message
    assert 'has 11 keypoints' in message and '(upper_body10) has 10' in message and '30 values' in message


def test_a_negative_visibility_is_named(tmp_path):
    with pytest.raises(DataCheckError, match=r'annotation 7 .* visibility of -5; visibilities are 0'):
        check_dataset(coco_pose_dataset(tmp_path, visibility=-5))


def test_label_ids_within_the_classes_or_ignored_pass(tmp_path):
    masks = [np.full((32, 24), 4, np.uint8), np.full((32, 24), 255, np.uint8)]
    assert '2 image/label-map pairs, every label map read' in check_dataset(seg_dataset(tmp_path, masks))


def test_a_label_id_beyond_the_classes_names_the_mask(tmp_path):
    mask = np.zeros((32, 24), np.uint8)
    mask[3, 3] = 7
    with pytest.raises(DataCheckError) as err:
        check_dataset(seg_dataset(tmp_path, [np.zeros((32, 24), np.uint8), mask]))
    message = str(err.value)
    assert len(message.splitlines()) == 1
    assert '1.png: label ids [7] are neither classes 0..4 nor 255' in message and 'has 5 classes' in message


def test_reduce_zero_label_is_applied_before_the_ids_are_checked(tmp_path):
    mask = np.full((32, 24), 5, np.uint8)  # 5 -> 4 with reduce_zero_label: a class
    mask[0, 0] = 0  # -> 255: ignored
    classes = ('head', 'torso', 'left_arm', 'right_arm', 'legs')  # ids 1..5 in the maps, 0 unlabelled
    check_dataset(seg_dataset(tmp_path, [mask], classes=classes, reduce_zero_label=True))
    mask[1, 1] = 6  # -> 5: beyond the classes
    with pytest.raises(DataCheckError, match=r'label ids \[5\] after label_map/reduce_zero_label'):
        check_dataset(seg_dataset(tmp_path, [mask], classes=classes, reduce_zero_label=True))


def test_reduce_zero_label_on_maps_whose_class_0_is_background_is_refused(tmp_path):
    with pytest.raises(DataCheckError, match=r"reduce_zero_label=True, but class 0 of the metainfo is 'background'.*"
                       r'set reduce_zero_label=False'):
        check_dataset(seg_dataset(tmp_path, [np.zeros((32, 24), np.uint8)], reduce_zero_label=True))


def test_every_mask_is_read_and_their_ids_are_cached(tmp_path, monkeypatch):
    monkeypatch.setenv('SAPIENS2_CACHE_DIR', str(tmp_path / 'cache'))
    masks = [np.zeros((32, 24), np.uint8)] * 5
    dataset = seg_dataset(tmp_path, masks)
    assert '5 image/label-map pairs, every label map read' in check_dataset(dataset)
    from sapiens2.datasets.seg import load_seg_annotations
    decoded = []
    original = load_seg_annotations.decode_label_map
    monkeypatch.setattr(load_seg_annotations, 'decode_label_map', lambda *a: decoded.append(a[1]) or original(*a))
    check_dataset(dataset)
    assert decoded == []  # unchanged maps: their ids come from the cache
    cv2.imwrite(str(tmp_path / 'ann' / '3.png'), np.full((32, 24), 9, np.uint8))  # a later map, changed
    with pytest.raises(DataCheckError, match=r'3\.png: label ids \[9\] are neither classes 0\.\.4'):
        check_dataset(dataset)
    assert [p.rsplit('/', 1)[1] for p in decoded] == ['3.png']


def test_max_masks_reads_evenly_spaced_masks_and_says_how_many(tmp_path):
    masks = [np.zeros((32, 24), np.uint8)] * 5
    masks[2] = np.full((32, 24), 9, np.uint8)
    dataset = seg_dataset(tmp_path, masks)
    with pytest.raises(DataCheckError, match='2.png'):  # evenly spaced: 0, 2, 4 are read
        check_dataset(dataset, max_masks=3)
    assert '5 image/label-map pairs, 2 of 5 label maps read (max_masks)' in check_dataset(dataset, max_masks=2)


def test_an_image_without_its_mask_and_a_mask_of_another_size(tmp_path):
    for name in ('missing', 'size'):
        (tmp_path / name).mkdir()
    with pytest.raises(DataCheckError, match=r'seg_map_path .*1\.png does not exist \(its pair: .*1\.jpg\)'):
        check_dataset(seg_dataset(tmp_path / 'missing', [np.zeros((32, 24), np.uint8), None]))
    with pytest.raises(DataCheckError, match=r'0\.png: the label map is 24x32 but its image .*0\.jpg is 30x32'):
        check_dataset(seg_dataset(tmp_path / 'size', [np.zeros((32, 24), np.uint8)], image_size=(30, 32)))


def test_wrappers_are_looked_through(tmp_path):
    from mmengine.dataset import RepeatDataset
    with pytest.raises(DataCheckError, match='has 11 keypoints'):
        check_dataset(RepeatDataset(coco_pose_dataset(tmp_path, num_keypoints=11), times=3))


def test_a_transform_written_for_another_layout_is_named_with_its_fix(tmp_path):
    """PartKeypointWeights with the 308 layout's parts on a 10-keypoint layout no keypoint format has: one line
    before the first iteration, naming the transform and the line that drops it."""
    from mmpose.registry import TRANSFORMS

    from sapiens2.datasets.pose import keypoints308_partitions
    weigh = TRANSFORMS.build(dict(type='PartKeypointWeights', partitions=keypoints308_partitions(),
                                  weights=dict(face=0.1)))
    with pytest.raises(DataCheckError) as err:
        check_dataset(coco_pose_dataset(tmp_path, pipeline=[weigh]))
    message = str(err.value)
    assert len(message.splitlines()) == 1
    assert "PartKeypointWeights: part 'face' has keypoint index 307, but the sample has 10 keypoints" in message
    assert "step['type'] != 'PartKeypointWeights'" in message
