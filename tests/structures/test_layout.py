"""A model's layout read from its dataset_meta, with the 308/29 layouts only for a model that carries none."""
import json

import numpy as np
import pytest

from sapiens2.metainfo import load_metainfo
from sapiens2.structures.layout import (
    class_names,
    class_palette,
    flip_pairs,
    is_keypoints308,
    jsonable,
    keypoint_names,
    keypoint_style,
)

THREE = dict(keypoint_id2name={0: 'a', 1: 'b', 2: 'c'}, keypoint_colors=np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]]),
             skeleton_links=[(0, 1), (1, 2)], skeleton_link_colors=np.array([[9, 9, 9], [8, 8, 8]]),
             flip_pairs=[(1, 2), (2, 1)])


def test_keypoints_come_from_the_metainfo_also_after_a_json_round_trip():
    round_trip = json.loads(json.dumps(jsonable(THREE)))  # int keys become strings, arrays lists
    for meta in (THREE, round_trip):
        assert keypoint_names(meta, 3) == ['a', 'b', 'c'] and flip_pairs(meta, 3) == [[1, 2]]
        style = keypoint_style(meta, 3)
        assert style['point_colors'].tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
        assert style['links'].tolist() == [[0, 1], [1, 2]] and style['link_colors'].tolist() == [[9] * 3, [8] * 3]
    assert not is_keypoints308(THREE, 3)
    with pytest.raises(ValueError, match='describes 3 keypoints but the model predicts 308'):
        keypoint_style(THREE, 308)


def test_without_metainfo_the_308_layout_only_for_308_keypoints():
    meta308 = load_metainfo('keypoints308.json')
    assert keypoint_names(None, 308) == meta308['keypoint_names'] and is_keypoints308({}, 308)
    assert keypoint_style(None, 308)['links'].shape == (len(meta308['skeleton_links']), 2)
    assert len(flip_pairs(None, 308)) == len(meta308['flip_pairs']) // 2
    assert keypoint_names(None, 17) is None and flip_pairs(None, 17) is None
    plain = keypoint_style(None, 17)
    assert plain['point_colors'].shape == (17, 3) and plain['links'].shape == (0, 2)


def test_classes_and_palette_from_the_metainfo_else_29_else_a_fixed_palette():
    meta = dict(classes=('bg', 'person', 'hair'), palette=[[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    assert class_names(meta, 3) == ['bg', 'person', 'hair'] and class_palette(meta, 3).tolist() == meta['palette']
    seg29 = load_metainfo('seg29.json')
    assert class_names(None, 29) == seg29['class_names']
    assert class_palette(None, 29).tolist() == seg29['palette_rgb'] == class_palette(None).tolist()
    assert class_names(None, 3) is None
    own = class_palette(None, 3)
    assert own.shape == (3, 3) and own.tolist() == class_palette({}, 3).tolist()  # fixed
    assert own.tolist() != seg29['palette_rgb'][:3]
    with pytest.raises(ValueError, match='describes 3 classes but the model predicts 4'):
        class_names(meta, 4)


def test_keypoint_sigmas_come_from_the_metainfo_or_a_uniform_default():
    from sapiens2.structures.layout import keypoint_sigmas
    assert keypoint_sigmas(dict(sigmas=[0.1, 0.2]), 2).tolist() == [0.1, 0.2]
    assert keypoint_sigmas({}, 3).tolist() == [0.05] * 3
    assert np.all(keypoint_sigmas(dict(sigmas=[0.1]), 2) == 0.05)  # another layout's sigmas are not used
