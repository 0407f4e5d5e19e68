"""tools/dataset_converters/merge_teacher_keypoints.py: human labels win, the teacher fills the points they lack, and
a teacher that disagrees with them adds nothing."""
import json

import numpy as np
import pytest

from tests.scripts import load_script


@pytest.fixture(scope='module')
def tool():
    return load_script('tools/dataset_converters/merge_teacher_keypoints.py')


def coco(people, boxes=None):
    """A COCO dict with one person per image (``people``: (K, 3) arrays), images 100 x 100."""
    images = [dict(id=i + 1, file_name=f'images/im{i + 1}.jpg', width=100, height=100) for i in range(len(people))]
    annotations = [dict(id=i + 1, image_id=i + 1, bbox=(boxes or [[20, 20, 40, 40]] * len(people))[i],
                        keypoints=np.asarray(p, float).reshape(-1).tolist()) for i, p in enumerate(people)]
    return dict(images=images, annotations=annotations, categories=[dict(id=1, name='person')])


def test_labels_win_the_teacher_fills_the_rest(tool, tmp_path):
    labels = np.zeros((5, 3))
    labels[:3] = [(30, 30, 2), (50, 30, 2), (40, 50, 2)]
    near = labels.copy()
    near[:3, :2] += 2  # the teacher, 2 px off on the labelled points
    near[3] = (40, 90, 2)  # ... and a point the labels lack, below the box
    far = near.copy()
    far[:3, :2] += 30  # another person
    teacher = coco([near, far, near])
    teacher['annotations'].pop()  # no teacher person on the third photo
    label_file, teacher_file = tmp_path / 'labels.json', tmp_path / 'teacher.json'
    label_file.write_text(json.dumps(coco([labels] * 3)))
    teacher_file.write_text(json.dumps(teacher))
    out = tmp_path / 'merged.json'
    tool.main(['--labels', str(label_file), '--teacher', str(teacher_file), '--out', str(out)])
    first, second, third = (np.asarray(a['keypoints']).reshape(5, 3) for a in json.loads(out.read_text())[
        'annotations'])
    assert np.array_equal(first[:3], labels[:3]) and first[3].tolist() == [40, 90, 2] and first[4, 2] == 0
    assert np.array_equal(second, labels) and np.array_equal(third, labels)
    merged = json.loads(out.read_text())['annotations'][0]
    x, y, w, h = merged['bbox']
    assert (x, y, w) == (20, 20, 40) and 90 < y + h <= 100 and merged['num_keypoints'] == 4
    assert tool.run_cli(tool.main, ['--labels', str(label_file), '--teacher', str(teacher_file), '--out',
                                    str(out)]) == 1  # not replaced
