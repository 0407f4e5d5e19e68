"""The people's files: the COCO results file that pycocotools' COCOeval reads, and the 3D skeleton PLY read back."""
import json

import numpy as np
import pytest
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from sapiens2.apis.people.coco_results import coco_results, image_id
from sapiens2.apis.people.ply import read_skeleton_ply, write_skeleton_ply
from sapiens2.apis.people.record import person_record
from sapiens2.apis.people.rle import encode_mask


def masks_of_two_people():
    masks = np.zeros((2, 60, 80), bool)
    masks[0, 10:50, 5:25] = True
    masks[1, 15:55, 40:70] = True
    return masks


def test_coco_results_are_read_by_cocoeval_and_score_ap_1_on_the_truth(tmp_path):
    masks = masks_of_two_people()
    boxes = np.array([[5, 10, 24, 49], [40, 15, 69, 54]], np.float32)
    keypoints = np.array([[[15, 20], [15, 45]], [[55, 25], [55, 50]]], np.float32)
    people = dict(bboxes=boxes, bbox_scores=np.array([0.9, 0.8]), keypoints=keypoints,
                  keypoint_scores=np.ones((2, 2)), records=[person_record(m, 1.0) for m in masks])
    results = coco_results([dict(image_name='000000000042', image_size=[80, 60], result=people)])
    assert [r['image_id'] for r in results] == [42, 42] and len(results[0]['keypoints']) == 6
    truth = dict(images=[dict(id=42, width=80, height=60, file_name='000000000042.png')],
                 categories=[dict(id=1, name='person', keypoints=['a', 'b'], skeleton=[[1, 2]])],
                 annotations=[dict(id=n + 1, image_id=42, category_id=1, iscrowd=0, area=int(m.sum()),
                                   bbox=[float(v) for v in (b[0], b[1], b[2] - b[0] + 1, b[3] - b[1] + 1)],
                                   segmentation=encode_mask(m), num_keypoints=2,
                                   keypoints=[float(v) for p in k for v in (*p, 2)])
                              for n, (m, b, k) in enumerate(zip(masks, boxes, keypoints))])
    (tmp_path / 'gt.json').write_text(json.dumps(truth))
    (tmp_path / 'results.json').write_text(json.dumps(results))
    gt = COCO(str(tmp_path / 'gt.json'))
    evaluation = COCOeval(gt, gt.loadRes(str(tmp_path / 'results.json')), 'segm')
    evaluation.evaluate()
    evaluation.accumulate()
    evaluation.summarize()
    assert evaluation.stats[0] > 0.99  # the masks are the truth: AP 1
    assert image_id('photo_a.jpg', 3) == 3


def test_skeleton_ply_reads_back_points_colours_and_the_links_of_seen_keypoints(tmp_path):
    skeletons = np.array([[[0, 0, 2], [0, 1, 2], [np.nan] * 3], [[1, 0, 3], [1, 1, 3], [1, 2, 3]]], np.float32)
    path = write_skeleton_ply(str(tmp_path / 's.ply'), skeletons, [(0, 1), (1, 2)], [(255, 0, 0), (0, 0, 255)])
    ply = read_skeleton_ply(path)
    assert np.allclose(ply['points'], skeletons[~np.isnan(skeletons).any(-1)])
    assert ply['colors'].tolist() == [[255, 0, 0]] * 2 + [[0, 0, 255]] * 3
    assert ply['edges'].tolist() == [[0, 1], [2, 3], [3, 4]]  # the link to the unseen keypoint is left out
    assert open(path).read().startswith('ply\nformat ascii 1.0\n')


def test_the_coco_results_index_gains_each_runs_images_with_distinct_ids(tmp_path):
    from sapiens2.apis.people.coco_results import update_coco_results
    people = dict(bboxes=np.array([[5, 10, 24, 49]], np.float32), bbox_scores=np.array([0.9]), keypoints=None,
                  records=[{}])
    path = str(tmp_path / 'coco_results.json')
    update_coco_results(path, [dict(image_name=name, image_size=[80, 60], result=people) for name in ('a', 'b')])
    update_coco_results(path, [dict(image_name=name, image_size=[80, 60], result=people) for name in ('c', 'a')])
    update_coco_results(path, [dict(image_name='000000000001', image_size=[80, 60], result=people)])
    ids = {entry['image_name']: entry['image_id'] for entry in json.loads(open(path).read())}
    assert ids == {'a': 0, 'b': 3, 'c': 2, '000000000001': 1}  # a numbered file keeps its number; b moves
    assert len(json.loads(open(path).read())) == 4  # a's entry replaced, not repeated
    (tmp_path / 'coco_results.json').write_text('{"not": "a list"}')
    with pytest.raises(ValueError, match='is not a COCO results list with image_name and image_id'):
        update_coco_results(path, [])
