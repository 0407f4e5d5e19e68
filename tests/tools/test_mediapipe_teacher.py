"""tools/dataset_converters/mediapipe_teacher.py without mediapipe (a training-time tool in its own venv): the
mapping table of its 33 body, 468 face and 21 hand points to the 308 names, and its landmarks turned into 308 points
on constructed Holistic results."""
import json
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from sapiens2.metainfo import load_metainfo
from tests.scripts import REPO, load_script

METAINFO = load_metainfo('keypoints308.json')
NAMES = METAINFO['keypoint_names']


@pytest.fixture(scope='module')
def tool():
    return load_script('tools/dataset_converters/mediapipe_teacher.py')


def test_every_name_is_a_308_keypoint_taken_once(tool):
    assert 'mediapipe' not in sys.modules  # imported only when it runs
    columns = tool.load_table()
    used = [column for part in columns.values() for _, column in part]
    assert len(used) == len(set(used)) and all(0 <= c < len(NAMES) for c in used)
    table = json.loads((REPO / 'tools/dataset_converters/mediapipe_keypoints308.json').read_text())
    names = list(table['pose'].values()) + list(table['face'].values())
    names += [f'{side}_{name}' for side in ('left', 'right') for name in table['hand'].values()]
    assert all(name in NAMES for name in names) and len(names) == len(used)
    assert all(0 <= int(i) < 33 for i in table['pose']) and all(0 <= int(i) < 478 for i in table['face'])
    # the hands (21 points, the order COCO-WholeBody's hands use) agree with the official COCO-WholeBody mapping
    official = METAINFO['coco_wholebody_to_goliath_mapping']
    for (source, column), (source_r, column_r) in zip(columns['left_hand'], columns['right_hand']):
        assert official[str(91 + source)] == column and official[str(112 + source_r)] == column_r
    pose = dict(columns['pose'])
    assert NAMES[pose[11]] == 'left_shoulder' and NAMES[pose[30]] == 'right_heel'


@pytest.mark.parametrize('change, message', [({'0': 'no_such_point'}, 'not a 308 keypoint'),
                                             ({'0': 'left_eye'}, 'taken twice')])
def test_a_wrong_table_is_refused(tool, tmp_path, change, message):
    table = json.loads((REPO / 'tools/dataset_converters/mediapipe_keypoints308.json').read_text())
    table['pose'].update(change)
    path = tmp_path / 'table.json'
    path.write_text(json.dumps(table))
    with pytest.raises(ValueError, match=message):
        tool.load_table(str(path))


def landmarks(points):
    return SimpleNamespace(landmark=[SimpleNamespace(x=x, y=y, visibility=v) for x, y, v in points])


def test_confident_points_in_pixels(tool):
    columns = tool.load_table()
    pose = np.full((33, 3), (0.5, 0.25, 0.9))
    pose[13] = (0.6, 0.5, 0.2)  # left elbow: not confident
    pose[27] = (1.2, 0.5, 0.9)  # left ankle: off the image
    face = np.full((478, 3), (0.4, 0.1, 0.0))  # the face mesh has no per-point score
    hand = np.full((21, 3), (0.3, 0.7, 0.0))
    result = SimpleNamespace(pose_landmarks=landmarks(pose), face_landmarks=landmarks(face),
                             left_hand_landmarks=landmarks(hand), right_hand_landmarks=None)
    points = tool.keypoints308(result, 200, 100, columns)
    labelled = {NAMES[i] for i in np.flatnonzero(points[:, 2] > 0)}
    assert points[NAMES.index('nose')].tolist() == [100, 25, 2]
    assert 'left_elbow' not in labelled and 'left_ankle' not in labelled and 'right_knee' in labelled
    assert np.allclose(points[NAMES.index('tip_of_chin')], (80, 10, 2))
    assert np.allclose(points[NAMES.index('left_thumb4')], (60, 70, 2)) and 'right_thumb4' not in labelled
    assert 'left_thumb_third_joint' not in labelled and 'neck' not in labelled
    # the face is left out when the pose is not sure of the nose, the left hand when not sure of the left wrist
    pose[0, 2] = pose[15, 2] = 0.1
    result.pose_landmarks = landmarks(pose)
    labelled = {NAMES[i] for i in np.flatnonzero(tool.keypoints308(result, 200, 100, columns)[:, 2] > 0)}
    assert not labelled & {'tip_of_chin', 'left_thumb4', 'nose', 'left_wrist'} and 'right_wrist' in labelled
    assert tool.keypoints308(SimpleNamespace(pose_landmarks=None), 200, 100, columns) is None


def test_records_to_a_coco_file_and_a_cut_line_is_redone(tool, tmp_path):
    keypoints = np.zeros((308, 3))
    keypoints[[0, 5]] = [(10, 20, 2), (30, 60, 2)]
    lines = [tool.record('a.jpg', 100, 80, keypoints), tool.record('b.jpg', 50, 50, None)]
    path = tmp_path / 'teacher.jsonl'
    path.write_text(''.join(json.dumps(line) + '\n' for line in lines) + '{"name": "c.j')
    assert tool.read_records(str(path)) == lines
    coco = tool.coco_file(lines, 'images/', NAMES)
    assert [image['file_name'] for image in coco['images']] == ['images/a.jpg', 'images/b.jpg']
    (ann, ) = coco['annotations']
    assert ann['image_id'] == 1 and ann['num_keypoints'] == 2 and ann['bbox'] == [8.0, 16.0, 24.0, 48.0]
