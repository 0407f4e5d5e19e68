"""Layout (metainfo) files are checked where they are read: each mistake is one line naming the file, the field,
the value and, for names, the closest known one and the list of names."""
from pathlib import Path

import pytest

from sapiens2.config.layout_file import LayoutFileError, num_keypoints, read_parts_metainfo

REPO = Path(__file__).resolve().parents[2]
UPPER_BODY10 = REPO / 'configs' / '_base_' / 'datasets' / 'layouts' / 'upper_body10.py'
PARTS = "dataset_info = dict(classes=('bg', 'left_arm', 'right_arm'), palette=[[0, 0, 0], [9, 9, 9], [1, 2, 3]])\n"


def edited(tmp_path: Path, text: str, old: str, new: str) -> str:
    assert old in text, old
    path = tmp_path / 'layout.py'
    path.write_text(text.replace(old, new, 1))
    return str(path)


@pytest.mark.parametrize('old, new, message', [
    ("swap='right_elbow'", "swap='right_elbw'", r"keypoint_info\[4\]\.swap names 'right_elbw', .*did you mean "
                                                r"'right_elbow'\? \(known: nose, neck, left_shoulder"),
    ("link=('left_hip', 'right_hip')", "link=('left_hip', 'chin')", r"skeleton_info\[9\]\.link names 'chin', which "
                                                                     r"is not one of its 10 names; \(known: nose"),
    ("link=('left_hip', 'right_hip')", "link=('left_hip', )", r'skeleton_info\[9\]\.link needs two keypoint names'),
    ('id=0, color=[51, 153, 255])', 'id=0, color=[51, 153])', r'skeleton_info\[0\]\.color = \[51, 153\]; a colour is'),
    ('joint_weights=[1.0, ', 'joint_weights=[', r'9 joint_weights for 10 keypoints'),
    ('sigmas=[0.026, ', 'sigmas=[0.0, ', r'sigmas\[0\] = 0\.0; sigmas are positive numbers'),
    ('0: dict(', '10: dict(', r"keypoint_info\[10\] has id 0; keys and ids are the keypoint indices 0\.\.9"),
])
def test_keypoint_file_mistakes_are_one_line(tmp_path, old, new, message):
    path = edited(tmp_path, UPPER_BODY10.read_text(), old, new)
    with pytest.raises(LayoutFileError, match=message) as err:
        num_keypoints(path)
    assert str(err.value).startswith(f'{path}: ') and '\n' not in str(err.value)


@pytest.mark.parametrize('old, new, message', [
    ("'right_arm')", "'bg')", r"classes names 'bg' twice \(ids 0 and 2\)"),
    ('[1, 2, 3]', '[1, 2, 300]', r'palette\[2\] = \[1, 2, 300\]; a colour is \[R, G, B\], three integers 0-255'),
    ("[1, 2, 3]]", "[1, 2, 3]], class_weight=[1, float('nan'), 1]", r'class_weight\[1\] = nan; class_weight are '
                                                                     r'numbers >= 0'),
])
def test_parts_file_mistakes_are_one_line(tmp_path, old, new, message):
    path = edited(tmp_path, PARTS, old, new)
    with pytest.raises(LayoutFileError, match=message) as err:
        read_parts_metainfo(path)
    assert str(err.value).startswith(f'{path}: ') and '\n' not in str(err.value)


def test_good_files_read():
    assert num_keypoints(str(UPPER_BODY10)) == 10
    import mmpose  # its own files are read as mmpose reads them (some have one-sided swaps it tolerates)
    shipped = Path(mmpose.__file__).parent / '.mim' / 'configs' / '_base_' / 'datasets' / 'deepfashion2.py'
    assert num_keypoints(str(shipped)) == 294


def test_mmpose_reads_of_a_keypoint_file_are_checked(tmp_path):
    """mmpose's own metainfo=dict(from_file=...) (no custom_metainfo) reads the file through MMEngine's
    Config.fromfile, which checks it: one line instead of mmpose's bare KeyError('thorat')."""
    from mmpose.datasets.datasets.utils import parse_pose_metainfo
    path = edited(tmp_path, UPPER_BODY10.read_text(), "link=('nose', 'neck')", "link=('thorat', 'neck')")
    with pytest.raises(LayoutFileError, match=r"skeleton_info\[0\]\.link names 'thorat'.*\(known: nose, neck"):
        parse_pose_metainfo(dict(from_file=path))
