"""The 308-keypoint metadata: packaged JSON -> mmpose dataset_info -> generated base config, all consistent."""
from pathlib import Path

import numpy as np
from mmengine.config import Config
from mmpose.datasets.datasets.utils import parse_pose_metainfo

from sapiens2.datasets.pose import (
    coco_wholebody_to_keypoints308,
    keypoints308_metainfo,
    keypoints308_partitions,
    load_keypoints308_json,
)
from sapiens2.metainfo import load_metainfo
from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = ROOT / 'configs' / '_base_' / 'datasets'


def test_parsed_metainfo_matches_json():
    raw = load_keypoints308_json()
    meta = parse_pose_metainfo(keypoints308_metainfo())
    assert meta['num_keypoints'] == 308 and meta['dataset_name'] == raw['dataset_name']
    assert meta['flip_indices'] == raw['flip_indices']
    assert sorted(map(tuple, meta['flip_pairs'])) == sorted(map(tuple, raw['flip_pairs']))  # both orders, 292
    assert meta['upper_body_ids'] == raw['upper_body_ids'] and meta['lower_body_ids'] == raw['lower_body_ids']
    assert [list(link) for link in meta['skeleton_links']] == [link['link'] for link in raw['skeleton_links']]
    np.testing.assert_allclose(meta['sigmas'], raw['sigmas'])
    np.testing.assert_array_equal(meta['keypoint_colors'], [k['color'] for k in raw['keypoint_info']])
    # mmpose's Goliath ordering quirk: index 9 is left_hip, not a wrist.
    assert meta['keypoint_id2name'][9] == 'left_hip'


def test_partitions_cover_all_but_extra_keypoints_once():
    parts = keypoints308_partitions()
    assert {k: len(v) for k, v in parts.items()} == dict(body=17, foot=6, face=238, left_hand=20, right_hand=20)
    ids = [i for v in parts.values() for i in v] + load_keypoints308_json()['part_keypoint_ids']['extra']
    assert sorted(ids) == list(range(308))


def test_coco_wholebody_mapping():
    mapping = coco_wholebody_to_keypoints308()
    assert len(mapping) == 53 and mapping[11] == 9  # COCO left_hip -> 308 left_hip
    names = load_keypoints308_json()['keypoint_names']
    assert names[mapping[0]] == 'nose' and len(set(mapping.values())) == 53


def test_generated_config_is_current_and_equivalent():
    gen = load_script('tools/dataset_converters/gen_keypoints308_info.py')
    for name, text in gen.render().items():
        assert (CONFIG_DIR / name).read_text() == text, 'stale: run tools/dataset_converters/gen_keypoints308_info.py'
    cfg = Config.fromfile(str(CONFIG_DIR / 'keypoints308.py'))
    from_cfg = parse_pose_metainfo(cfg.dataset_info.to_dict())
    from_pkg = parse_pose_metainfo(keypoints308_metainfo())
    for key in ('flip_indices', 'flip_pairs', 'skeleton_links', 'upper_body_ids', 'lower_body_ids'):
        assert list(map(list, np.atleast_2d(from_cfg[key]))) == list(map(list, np.atleast_2d(from_pkg[key])))
    np.testing.assert_allclose(from_cfg['sigmas'], from_pkg['sigmas'])
    parts = Config.fromfile(str(CONFIG_DIR / 'keypoints308_partitions.py')).keypoint_partitions
    assert parts.to_dict() == keypoints308_partitions()


def test_json_found_through_package_not_cwd(tmp_path, monkeypatch):
    load_metainfo.cache_clear()
    monkeypatch.chdir(tmp_path)
    assert load_keypoints308_json()['num_keypoints'] == 308
