"""The 308-keypoint metadata, read from the JSON shipped inside the package.

Every component finds the metadata through the package (``sapiens2/metainfo/keypoints308.json``), never through a
path relative to the working directory.
"""
from typing import Dict, List

from sapiens2.metainfo import load_metainfo

NUM_KEYPOINTS = 308
PART_NAMES = ('body', 'foot', 'face', 'left_hand', 'right_hand')


def load_keypoints308_json() -> dict:
    """Return the raw content of ``sapiens2/metainfo/keypoints308.json`` (cached; do not mutate)."""
    data = load_metainfo('keypoints308.json')
    if data.get('num_keypoints') != NUM_KEYPOINTS or len(data.get('keypoint_info', [])) != NUM_KEYPOINTS:
        raise ValueError(f'keypoints308.json: expected {NUM_KEYPOINTS} keypoints in "keypoint_info"; the packaged '
                         'metadata is damaged, reinstall sapiens2.')
    return data


def keypoints308_metainfo() -> dict:
    """Return the 308-keypoint metadata as an mmpose ``dataset_info`` dict.

    The result has ``dataset_name``, ``keypoint_info`` ({id: name, id, color, type, swap}), ``skeleton_info``
    ({id: link (name pair), id, color}), ``joint_weights`` and ``sigmas``, the format mmpose's
    ``parse_pose_metainfo`` expects (and the one ``configs/_base_/datasets/keypoints308.py`` holds).
    """
    data = load_keypoints308_json()
    keypoint_info = {
        kpt['id']: dict(name=kpt['name'], id=kpt['id'], color=list(kpt['color']), type=kpt['type'],
                        swap=kpt['swap']) for kpt in data['keypoint_info']
    }
    skeleton_info = {
        link['id']: dict(link=tuple(link['link_names']), id=link['id'], color=list(link['color']))
        for link in data['skeleton_links']
    }
    return dict(dataset_name=data['dataset_name'], keypoint_info=keypoint_info, skeleton_info=skeleton_info,
                joint_weights=list(data['joint_weights']), sigmas=list(data['sigmas']))


def keypoints308_partitions(parts=PART_NAMES) -> Dict[str, List[int]]:
    """Return {part: keypoint indices} for ``KeypointPartitionMetric`` (body 17, foot 6, face 238, hands 20 each)."""
    part_ids = load_keypoints308_json()['part_keypoint_ids']
    unknown = set(parts) - set(part_ids)
    if unknown:
        raise KeyError(f'Unknown keypoint parts {sorted(unknown)}; known: {sorted(part_ids)}.')
    return {name: list(part_ids[name]) for name in parts}


def coco_wholebody_to_keypoints308() -> Dict[int, int]:
    """Return {COCO-WholeBody index (0..132): 308-layout index} for the 53 keypoints the two layouts share."""
    mapping = load_keypoints308_json()['coco_wholebody_to_goliath_mapping']
    return {int(src): int(dst) for src, dst in mapping.items()}
