"""The person finder: the regions of a foreground map as boxes, and the shipped matting model's people on a real
photo (scikit-image's astronaut.png, NASA, read from the installed package) and on a flat wall."""
import json
import logging
import os.path as osp

import cv2
import numpy as np
import pytest

from sapiens2.apis.person_finder import ForegroundPersonFinder, foreground_boxes


def test_regions_become_boxes_largest_first_scored_by_their_mean_alpha():
    alpha = np.zeros((100, 200), np.float32)
    alpha[10:60, 20:50] = 0.9  # a person
    alpha[20:90, 120:170] = 0.7  # a larger one
    alpha[95:97, 5:7] = 1.0  # a speck below the minimum area
    alpha[70:80, 60:70] = 0.4  # below the threshold
    alpha[0:4, 60:110] = 1.0  # a band along the top edge (12 times wider than high)
    boxes = foreground_boxes(alpha)
    assert boxes.shape == (2, 5)
    np.testing.assert_allclose(boxes[:, :4], [[120, 20, 170, 90], [20, 10, 50, 60]])
    np.testing.assert_allclose(boxes[:, 4], [0.7, 0.9], rtol=1e-6)
    assert foreground_boxes(np.zeros((10, 10))).shape == (0, 5)


@pytest.fixture(scope='module')
def finder():
    return ForegroundPersonFinder(device='cpu')


@pytest.mark.parametrize('size', [(64, 48), (256, 192), (480, 640), (512, 512)])
def test_a_flat_wall_has_nobody(finder, size):
    """The matting model marks bands along the top and bottom of a plain photo: no person."""
    assert finder(np.full((*size, 3), (120, 80, 40), np.uint8)).shape == (0, 5)


def test_the_astronaut_is_found(finder):
    import skimage.data
    photo = cv2.imread(osp.join(osp.dirname(skimage.data.__file__), 'astronaut.png'))
    boxes = finder(photo)
    assert len(boxes) >= 1
    x1, y1, x2, y2, score = boxes[0]  # the largest region: the astronaut (head to the bottom edge, left half)
    assert x1 < 150 and 200 < x2 < 420 and y1 < 60 and y2 > 480 and score > 0.8


def test_a_model_without_a_person_foreground_is_refused():
    with pytest.raises(ValueError, match='a normal model has no person foreground'):
        ForegroundPersonFinder('normal-tiny', device='cpu')(np.zeros((64, 48, 3), np.uint8))


@pytest.fixture(scope='module')
def photos(tmp_path_factory):
    """The astronaut and a flat wall, as files a user would pass."""
    import skimage.data
    folder = tmp_path_factory.mktemp('photos')
    cv2.imwrite(str(folder / 'astronaut.jpg'), cv2.imread(osp.join(osp.dirname(skimage.data.__file__),
                                                                   'astronaut.png')))
    cv2.imwrite(str(folder / 'wall.jpg'), np.full((480, 640, 3), 128, np.uint8))
    return folder


def test_pose_without_boxes_poses_the_people_found_and_says_which_photo_has_nobody(photos, tmp_path):
    """The README's first example: a photo, no --bboxes, no detector."""
    from mmengine.logging import MMLogger

    from sapiens2.apis.cli import main
    out, said = tmp_path / 'out', []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: said.append(record.getMessage())
    MMLogger.get_current_instance().addHandler(handler)
    try:
        assert main([str(photos), '--task', 'pose', '--size', 'tiny', '--out', str(out), '--device', 'cpu',
                     '--quiet']) == 0
    finally:
        MMLogger.get_current_instance().removeHandler(handler)
    astronaut = json.loads((out / 'pose' / 'astronaut.json').read_text())['instances']
    x1, y1, x2, y2 = astronaut[0]['bbox'][0] if np.ndim(astronaut[0]['bbox']) == 2 else astronaut[0]['bbox']
    assert x1 < 150 and 200 < x2 < 420  # the finder's box, not the whole 512x512 image
    assert json.loads((out / 'pose' / 'wall.json').read_text())['instances'] == []
    said = [message for message in said if 'found nobody' in message]
    assert len(said) == 1 and "wall: the person finder (matting-tiny's foreground regions) found nobody" in said[0]
    whole = tmp_path / 'whole'
    assert main([str(photos / 'astronaut.jpg'), '--task', 'pose', '--size', 'tiny', '--out', str(whole), '--device',
                 'cpu', '--quiet', '--person-finder', 'none']) == 0
    box = json.loads((whole / 'pose' / 'astronaut.json').read_text())['instances'][0]['bbox']
    np.testing.assert_allclose(np.ravel(box), [0, 0, 512, 512])


def test_people_of_a_dense_task_without_pose_are_the_people_found(photos, tmp_path):
    from sapiens2.apis.cli import main
    out = tmp_path / 'out'
    assert main([str(photos / 'astronaut.jpg'), '--task', 'seg', '--size', 'tiny', '--people', '--out', str(out),
                 '--device', 'cpu', '--quiet']) == 0
    results = json.loads((out / 'people' / 'coco_results.json').read_text())
    assert results and results[0]['bbox'][0] < 150  # [x, y, w, h] of the astronaut


def test_an_unknown_person_finder_is_one_line_before_any_model(photos, tmp_path, capsys):
    from sapiens2.apis.cli import main
    out = tmp_path / 'out'
    assert main([str(photos / 'astronaut.jpg'), '--task', 'pose', '--size', 'tiny', '--out', str(out),
                 '--person-finder', 'bogus']) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--person-finder bogus: unknown model alias 'bogus'" in err[0]
    assert not out.exists()  # nothing built, nothing written
