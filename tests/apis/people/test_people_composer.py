"""The composition over the tasks' results: own layouts (17 keypoints, a 3-class seg model whose background is not
class 0), bad combinations in one line, and the API and CLI on the shipped tiny models (one run each)."""
import json
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from sapiens2.apis import Sapiens2Inferencer
from sapiens2.apis.cli import main
from sapiens2.apis.people import PeopleComposer
from sapiens2.apis.people.ply import read_skeleton_ply
from sapiens2.apis.people.rle import decode_mask
from sapiens2.datasets.synthhumans.generate import scene_for
from sapiens2.datasets.synthhumans.render import render_scene

COCO17 = ['nose', 'left_eye', 'right_eye', 'left_ear', 'right_ear', 'left_shoulder', 'right_shoulder', 'left_elbow',
          'right_elbow', 'left_wrist', 'right_wrist', 'left_hip', 'right_hip', 'left_knee', 'right_knee', 'left_ankle',
          'right_ankle']
LINKS17 = [[15, 13], [13, 11], [16, 14], [14, 12], [11, 12], [5, 11], [6, 12], [5, 6], [5, 7], [6, 8], [7, 9],
           [8, 10], [0, 5], [0, 6]]


def fake_task(name: str, **attributes):
    return SimpleNamespace(name=name, **attributes)


def pose17():
    return fake_task('pose', kpt_thr=0.3, keypoint_names=lambda: COCO17,
                     keypoint_style=lambda: dict(links=np.array(LINKS17)))


def seg3():
    """A 3-class seg model whose own classes put the background second."""
    model = SimpleNamespace(dataset_meta=dict(classes=('person', 'background', 'hair')),
                            decode_head=SimpleNamespace(num_classes=3))
    return fake_task('seg', model=model)


def standing_person(height: int = 120, width: int = 80):
    """Results of one frame: a standing person (17 keypoints) in front of a flat wall 3 m away, seen by f = 100."""
    keypoints = np.array([[40, 15], [38, 13], [42, 13], [36, 14], [44, 14], [33, 30], [47, 30], [31, 45], [49, 45],
                          [30, 58], [50, 58], [36, 62], [44, 62], [36, 85], [44, 85], [36, 108], [44, 108]],
                         np.float32)
    labels = np.ones((height, width), np.uint8)  # class 1 = background for this model
    labels[8:115, 28:53] = 0  # person
    labels[8:14, 34:47] = 2  # hair
    rows, cols = np.mgrid[:height, :width]
    depth = np.where(labels != 1, 2.5, 3.0).astype(np.float32)
    pointmap = np.stack([(cols - 39.5) / 100 * depth, (rows - 59.5) / 100 * depth, depth], -1)
    pose = dict(bboxes=np.array([[28, 8, 52, 114]], np.float32), bbox_scores=np.array([0.9], np.float32),
                keypoints=keypoints[None], keypoint_scores=np.ones((1, 17), np.float32))
    return dict(pose=pose, seg=dict(labels=labels),
                pointmap=dict(pointmap=pointmap, depth=depth, valid=np.ones((height, width), bool)))


def test_own_layouts_17_keypoints_and_a_3_class_seg_model_with_its_own_background():
    composer = PeopleComposer([pose17(), seg3(), fake_task('pointmap')])
    results = standing_person()
    people = composer.compose(np.zeros((120, 80, 3), np.uint8), results)
    record = people['records'][0]
    mask = decode_mask(record['mask'])
    assert (mask == (results['seg']['labels'] != 1)).all()  # person and hair, not the model's background class
    assert record['area'] == mask.sum() and record['mask_score'] == 1.0
    assert len(record['keypoints_3d']) == 17 and record['keypoints_3d'][0][2] == pytest.approx(2.5)
    assert record['keypoints_3d'][0][0] == pytest.approx(0.5 * 2.5 / 100, abs=1e-4)  # on the nose's ray
    assert record['depth_range'] == [2.5, 2.5]
    assert record['height_m'] == pytest.approx(106 * 2.5 / 100, rel=0.03)  # top row 8 to bottom row 114, at 2.5 m
    assert people['keypoints_3d'].shape == (1, 17, 3)


def test_bad_combinations_are_one_line():
    with pytest.raises(ValueError, match='needs a dense task that gives masks'):
        PeopleComposer([pose17(), fake_task('normal')])
    with pytest.raises(ValueError, match=r'give person boxes \(--bboxes\) or a person detector \(--det-config'):
        PeopleComposer([seg3()])
    with pytest.raises(ValueError, match='needs seg or matting'):
        PeopleComposer([fake_task('pointmap')], bboxes=dict(a=[[0, 0, 5, 5]]))


def test_dense_tasks_alone_take_the_users_boxes():
    composer = PeopleComposer([seg3()], bboxes=dict(a=[[28, 8, 52, 114, 0.7]]))
    results = standing_person()
    people = composer.compose(np.zeros((120, 80, 3), np.uint8), dict(seg=results['seg']), 'a')
    assert people['bbox_scores'].tolist() == pytest.approx([0.7]) and people['keypoints_3d'] is None
    assert decode_mask(people['records'][0]['mask']).sum() == (results['seg']['labels'] != 1).sum()


def test_dense_tasks_alone_take_a_detectors_boxes_where_the_users_give_none():
    seen = []

    def detector(image):
        seen.append(image.shape)
        return np.array([[28, 8, 52, 114, 0.6]], np.float32)

    composer = PeopleComposer([seg3()], bboxes=dict(a=[[0, 0, 10, 10, 0.9]]), detector=detector)
    results = dict(seg=standing_person()['seg'])
    image = np.zeros((120, 80, 3), np.uint8)
    assert composer.compose(image, results, 'a')['bbox_scores'].tolist() == pytest.approx([0.9]) and not seen
    people = composer.compose(image, results, 'b')  # no user boxes for b: the detector's
    assert seen == [(120, 80, 3)] and people['bbox_scores'].tolist() == pytest.approx([0.6])
    assert decode_mask(people['records'][0]['mask']).sum() == (results['seg']['labels'] != 1).sum()
    assert PeopleComposer([seg3()], detector=detector).detector is detector  # a detector alone is enough


@pytest.fixture(scope='module')
def scene(tmp_path_factory):
    rendering = render_scene(scene_for(0, 'val', 37, (256, 192)))
    boxes = np.concatenate([rendering.bboxes[:, :2], rendering.bboxes[:, :2] + rendering.bboxes[:, 2:]], 1)
    folder = tmp_path_factory.mktemp('people')
    cv2.imwrite(str(folder / 'scene.png'), rendering.image)
    (folder / 'boxes.json').write_text(json.dumps(dict(scene=boxes.tolist())))
    return folder


def test_api_on_the_tiny_models_writes_people_into_the_pose_json_coco_results_ply_and_pictures(scene, tmp_path):
    inferencer = Sapiens2Inferencer(['pose-tiny', 'seg-tiny', 'pointmap-tiny'], device='cpu')
    boxes = json.loads((scene / 'boxes.json').read_text())
    result = inferencer(str(scene / 'scene.png'), out_dir=str(tmp_path), bboxes=boxes, show_progress=False,
                        people=True)[0]
    people = result['people']
    assert people['masks'].shape == (3, 256, 192) and not (people['masks'].sum(0) > 1).any()
    assert people['keypoints_3d'].shape == (3, 308, 3)
    instances = json.loads((tmp_path / 'pose' / 'scene.json').read_text())['instances']
    assert [decode_mask(i['mask']).sum() for i in instances] == people['masks'].sum((1, 2)).tolist()
    assert len(instances[0]['keypoints_3d']) == 308 and 'depth_range' in instances[0]
    coco = json.loads((tmp_path / 'people' / 'coco_results.json').read_text())
    assert len(coco) == 3 and coco[0]['segmentation']['size'] == [256, 192]
    assert len(json.loads((tmp_path / 'people' / 'scene.json').read_text())['instances']) == 3
    ply = read_skeleton_ply(str(tmp_path / 'people' / 'scene_skeleton3d.ply'))
    assert len(ply['points']) == (~np.isnan(people['keypoints_3d']).any(-1)).sum()
    assert (tmp_path / 'people' / 'scene.png').is_file()
    with pytest.raises(ValueError, match='needs a dense task'):
        Sapiens2Inferencer.from_tasks([t for t in inferencer.tasks if t.name == 'pose'])(
            str(scene / 'scene.png'), people=True, show_progress=False)


def test_cli_people_flag_and_its_bad_combination_in_one_line(scene, tmp_path, capsys):
    assert main([str(scene / 'scene.png'), '--task', 'seg', '--size', 'tiny', '--bboxes', str(scene / 'boxes.json'),
                 '--people', '--out', str(tmp_path), '--quiet', '--device', 'cpu']) == 0
    assert len(json.loads((tmp_path / 'people' / 'coco_results.json').read_text())) == 3
    assert main([str(scene / 'scene.png'), '--task', 'pose', '--size', 'tiny', '--people', '--out',
                 str(tmp_path / 'x'), '--quiet', '--device', 'cpu']) == 1
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and 'people needs a dense task' in error[0]


def test_video_people_are_json_lines_with_track_ids_and_3d_keypoints(tmp_path):
    from sapiens2.datasets.synthhumans.sequence import render_clip, write_clip
    clip = render_clip('crossing', num_frames=4, size=(192, 256), seed=0)
    video = write_clip(clip, str(tmp_path / 'crossing.avi'))
    boxes = {f'crossing_{t:06d}': clip.bboxes[t].tolist() for t in range(len(clip.frames))}
    inferencer = Sapiens2Inferencer(['pose-tiny', 'seg-tiny', 'pointmap-tiny'], device='cpu')
    inferencer(video, out_dir=str(tmp_path / 'out'), bboxes=boxes, show_progress=False, save_vis=False, people=True,
               return_results=False)
    lines = (tmp_path / 'out' / 'people' / 'crossing_predictions.jsonl').read_text().splitlines()
    header, frames = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    assert len(header['keypoint_names']) == 308 and len(frames) == 4
    for frame in frames:
        ids = [i['track_id'] for i in frame['instances']]
        assert len(ids) == 2 and len(set(ids)) == 2 and all(isinstance(i, int) for i in ids)
        assert all(len(i['keypoints_3d']) == 308 and 'mask' in i for i in frame['instances'])


def test_a_frame_with_nobody_draws_the_same_picture_size_as_one_with_people():
    composer = PeopleComposer([pose17(), seg3(), fake_task('pointmap')])
    image = np.zeros((120, 80, 3), np.uint8)
    results = standing_person()
    with_person = composer.visualize(image, composer.compose(image, results))
    results['pose'] = dict(bboxes=np.zeros((0, 4), np.float32), bbox_scores=np.zeros(0, np.float32),
                           keypoints=np.zeros((0, 17, 2), np.float32), keypoint_scores=np.zeros((0, 17), np.float32))
    nobody = composer.compose(image, results)
    assert nobody['keypoints_3d'].shape == (0, 17, 3) and nobody['records'] == []
    assert composer.visualize(image, nobody).shape == with_person.shape  # video frames keep one size
    results['pointmap']['valid'][:] = False  # nothing valid: no camera, null keypoints (not an error)
    results['pose'] = standing_person()['pose']
    assert all(p is None for p in composer.compose(image, results)['records'][0]['keypoints_3d'])


def test_the_cli_builds_the_detector_for_people_without_pose(monkeypatch):
    import argparse

    from sapiens2.apis import cli
    from sapiens2.apis.pose_video import topdown as pose_topdown
    monkeypatch.setattr(pose_topdown, 'init_person_detector', lambda config, checkpoint, device: (config, device))
    args = argparse.Namespace(det_config='det.py', det_checkpoint='det.pth', device='cpu', people=True,
                              per_person=False, bbox_thr=0.4, nms_thr=0.5)
    detector = cli.people_detector(args, ['seg'])
    assert detector.func is pose_topdown.detect_persons and detector.args == (('det.py', 'cpu'), )
    assert detector.keywords == dict(score_thr=0.4, nms_thr=0.5)
    assert cli.people_detector(args, ['pose', 'seg']) is None  # pose runs its own detector
    assert cli.people_detector(argparse.Namespace(**dict(vars(args), people=False)), ['seg']) is None
