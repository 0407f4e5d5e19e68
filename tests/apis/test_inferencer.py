"""Sapiens2Inferencer on the tiny pose and seg configs: shapes, files, several tasks, videos, checkpoints."""
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch

from sapiens2.apis import Sapiens2Inferencer, build_task, init_model
from sapiens2.engine.checkpoint import save_weights

REPO = Path(__file__).resolve().parents[2]
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')
SEG = str(REPO / 'configs' / 'seg' / 'sapiens2_nano_seg_synthhumans-128x96.py')


WHOLE_IMAGE = dict(pose=dict(person_finder=None))  # an image without boxes is one box (noise has no people to find)


@pytest.fixture(scope='module')
def inferencer():
    torch.manual_seed(0)
    return Sapiens2Inferencer([POSE, SEG], device='cpu', batch_size=2, task_options=WHOLE_IMAGE)


def images(n=3, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 255, (60 + 10 * i, 50 + 20 * i, 3), dtype=np.uint8) for i in range(n)]


def test_results_have_the_original_size(inferencer):
    assert [t.name for t in inferencer.tasks] == ['pose', 'seg']
    frames = images()
    results = inferencer(frames, show_progress=False)
    assert [r['name'] for r in results] == ['array_000000', 'array_000001', 'array_000002']
    for frame, result in zip(frames, results):
        assert result['seg']['labels'].shape == frame.shape[:2] and result['seg']['labels'].dtype == np.uint8
        assert result['seg']['labels'].max() < 29
        pose = result['pose']
        assert pose['keypoints'].shape == (1, 308, 2) and pose['keypoint_scores'].shape == (1, 308)
        np.testing.assert_allclose(pose['bboxes'][0], [0, 0, frame.shape[1], frame.shape[0]])  # whole image


def test_user_boxes_and_files_written(inferencer, tmp_path):
    folder = tmp_path / 'photos'
    folder.mkdir()
    for i, frame in enumerate(images(2)):
        cv2.imwrite(str(folder / f'p{i}.png'), frame)
    boxes = {'p0': [[5, 5, 30, 50, 0.9], [20, 10, 45, 55, 0.8]]}
    results = inferencer(str(folder), out_dir=str(tmp_path / 'out'), bboxes=boxes, show_progress=False)
    assert results[0]['pose']['keypoints'].shape == (2, 308, 2)
    np.testing.assert_allclose(results[0]['pose']['bbox_scores'], [0.9, 0.8])
    assert results[1]['pose']['keypoints'].shape == (1, 308, 2)
    out = tmp_path / 'out'
    for name in ('pose/p0.png', 'pose/p1.png', 'seg/p0.png', 'seg/p0_seg.npy', 'pose/p0.json', 'pose/p1.json'):
        assert (out / name).is_file(), name
    assert cv2.imread(str(out / 'seg' / 'p1.png')).shape == (70, 140, 3)  # image | overlay
    np.testing.assert_array_equal(np.load(out / 'seg' / 'p1_seg.npy'), results[1]['seg']['labels'])
    content = json.loads((out / 'pose' / 'p0.json').read_text())
    assert set(content) == {'image_name', 'image_size', 'num_keypoints', 'kpt_thr_used', 'dtype', 'instances',
                            'keypoint_names'}
    assert len(content['keypoint_names']) == 308 and content['keypoint_names'][0] == 'nose'
    assert content['num_keypoints'] == 308 and content['image_name'] == 'p0' and content['image_size'] == [50, 60]
    instance = content['instances'][1]
    assert instance['bbox'] == [20, 10, 45, 55] and len(instance['keypoints']) == 308
    np.testing.assert_allclose(instance['keypoints'], results[0]['pose']['keypoints'][1], atol=0.01)



def test_a_failed_write_in_the_writer_thread_is_raised_by_the_call(inferencer, tmp_path, monkeypatch):
    seg = next(task for task in inferencer.tasks if task.name == 'seg')
    drawn = []

    def fail_on_second(image, result, results):
        drawn.append(image.shape)
        if len(drawn) == 2:
            raise OSError('disk full while drawing the second frame')
        return image

    monkeypatch.setattr(seg, 'visualize', fail_on_second)
    with pytest.raises(OSError, match='disk full'):
        inferencer(images(5), out_dir=str(tmp_path / 'out'), show_progress=False)
    assert len(drawn) == 2  # the frames after the failed one were not drawn
    assert sorted(p.name for p in (tmp_path / 'out' / 'seg').glob('*.png')) == ['array_000000.png']

def test_video_in_video_out(inferencer, tmp_path):
    clip = str(tmp_path / 'clip.mp4')
    writer = cv2.VideoWriter(clip, cv2.VideoWriter_fourcc(*'mp4v'), 5, (48, 64))
    for frame in images(5, seed=3):
        writer.write(cv2.resize(frame, (48, 64)))
    writer.release()
    results = inferencer(clip, out_dir=str(tmp_path / 'out'), show_progress=False, return_results=True)
    assert [r['frame'] for r in results] == [0, 1, 2, 3, 4] and results[4]['name'] == 'clip_000004'
    for task in ('seg', 'pose'):
        capture = cv2.VideoCapture(str(tmp_path / 'out' / task / 'clip.mp4'))
        assert int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) == 5
        capture.release()
    assert (tmp_path / 'out' / 'seg' / 'clip' / 'clip_000004_seg.npy').is_file()
    # Videos: JSON Lines, a header then one line per frame.
    header, *frames = map(json.loads, (tmp_path / 'out' / 'pose' / 'clip_predictions.jsonl').read_text().splitlines())
    assert header['video'] == 'clip' and len(frames) == 5


def test_checkpoint_loads_strictly_and_changes_the_output(tmp_path):
    torch.manual_seed(1)
    model = init_model(SEG, device='cpu')
    state = {k: v + 0.5 if k.endswith('conv_seg.bias') else v for k, v in model.state_dict().items()}
    state['decode_head.conv_seg.bias'][3] += 100.0  # class 3 wins everywhere
    path = str(tmp_path / 'seg.safetensors')
    save_weights(state, path)
    result = Sapiens2Inferencer(SEG, path, device='cpu')(images(1), show_progress=False)[0]
    assert (result['seg']['labels'] == 3).all()


def test_task_selection_and_options():
    model = init_model(POSE, device='cpu')
    task = build_task(model, model.cfg, task_options=dict(pose=dict(kpt_thr=0.7)))
    assert task.name == 'pose' and task.kpt_thr == 0.7
    assert type(model.head.decoder).__name__ == 'FastUDPHeatmap'  # named by the config, not swapped in
    cfg = model.cfg.copy()
    cfg.infer_task = dict(type='NoSuchTask')
    with pytest.raises(KeyError, match='not registered'):
        build_task(model, cfg)
    cfg = model.cfg.copy()
    cfg.model.head.type = 'UnknownHead'
    with pytest.raises(KeyError, match='no inference task handles head type'):
        build_task(model, cfg)
    with pytest.raises(ValueError, match='one checkpoint per model'):
        Sapiens2Inferencer([POSE, SEG], ['a.pth'])


def test_tasks_whose_results_others_use_run_first():
    from sapiens2.apis.tasks.base import BaseInferenceTask

    class Fake(BaseInferenceTask):
        def __init__(self, name, uses=()):
            self.name, self.uses = name, uses

    order = Sapiens2Inferencer.from_tasks([Fake('normal', ('seg', )), Fake('pose'), Fake('seg')]).tasks
    assert [t.name for t in order] == ['seg', 'normal', 'pose']
    with pytest.raises(ValueError, match='once'):
        Sapiens2Inferencer.from_tasks([Fake('seg'), Fake('seg')])


def test_bf16_runs_the_forward_under_autocast(monkeypatch):
    from sapiens2.apis import SegInferenceTask
    monkeypatch.setattr('sapiens2.utils.devices.cpu_runs_bf16', lambda: True)  # a CPU with AVX512-BF16 or AMX
    model = init_model(SEG, device='cpu')
    task = SegInferenceTask(model, model.cfg, dtype='bf16')
    dtypes = []
    model.decode_head.conv_seg.register_forward_hook(lambda m, args, out: dtypes.append(out.dtype))
    result = task.predict(images(1))[0]
    assert dtypes == [torch.bfloat16] and result['labels'].shape == (60, 50)


@pytest.mark.parametrize('name, count', [('coco17', 17), ('coco_wholebody', 133), ('openpose', 137)])
def test_pose_keypoint_format_option(name, count, tmp_path):
    from sapiens2.structures.keypoint_formats import keypoint_format
    model = init_model(POSE, device='cpu')
    plain = build_task(model, model.cfg, task_options=WHOLE_IMAGE)
    task = build_task(model, model.cfg, task_options=dict(pose=dict(keypoint_format=name, person_finder=None)))
    image = images(1)[0]
    result, original = task.predict([image])[0], plain.predict([image])[0]
    assert result['keypoints'].shape == (1, count, 2) and result['keypoint_scores'].shape == (1, count)
    expected, expected_scores = keypoint_format(name).convert(original['keypoints'], original['keypoint_scores'])
    np.testing.assert_allclose(result['keypoints'], expected, atol=1e-4)
    np.testing.assert_allclose(result['keypoint_scores'], expected_scores, atol=1e-6)
    assert task.visualize(image, result).shape == image.shape
    record = dict(image_name='a.png', image_size=[image.shape[1], image.shape[0]], result=result)
    content = dict(task.header(record['image_size']), **task.frame_record(record))
    assert content['keypoint_format'] == name and content['num_keypoints'] == count
    assert len(content['keypoint_names']) == count and len(content['instances'][0]['keypoints']) == count


def test_a_checkpoint_that_runs_code_needs_trust(tmp_path):
    from sapiens2.apis.cli import parse_args
    from sapiens2.engine.checkpoint import UnsafeCheckpointError
    from tests.engine.test_checkpoint import CreatesMarker
    marker, path = tmp_path / 'code_ran', tmp_path / 'evil.pth'
    torch.save({'state_dict': init_model(SEG, device='cpu').state_dict(), 'x': CreatesMarker(str(marker))}, path)
    with pytest.raises(UnsafeCheckpointError, match='evil.pth is not loaded'):
        Sapiens2Inferencer(SEG, str(path), device='cpu')
    assert not marker.exists()
    with pytest.warns(UserWarning, match='runs any code'):
        Sapiens2Inferencer(SEG, str(path), device='cpu', trust_checkpoint=True)
    assert marker.exists()
    assert parse_args(['x.jpg', '--out', 'o', '--task', 'seg', '--trust-checkpoint']).trust_checkpoint


def test_bboxes_that_match_no_input_are_an_error(inferencer, tmp_path):
    frames = images(2)
    with pytest.raises(ValueError, match=r"none of its 1 entries names an input of this run \(\['photo'\]"):
        inferencer(frames, bboxes={'photo': [[0, 0, 20, 20]]}, show_progress=False)
    seg_only = Sapiens2Inferencer.from_tasks([t for t in inferencer.tasks if t.name == 'seg'])
    with pytest.raises(ValueError, match='no task uses them'):
        seg_only(frames, bboxes={'array_000000': [[0, 0, 20, 20]]}, show_progress=False)


def test_a_coco_annotation_file_covering_more_images_gives_the_pose_boxes(inferencer, tmp_path):
    cv2.imwrite(str(tmp_path / '000000000785.png'), images(1)[0])
    coco = dict(images=[dict(id=785, file_name='000000000785.jpg'), dict(id=1, file_name='other.jpg')],
                categories=[dict(id=1, name='person')],
                annotations=[dict(id=1, image_id=785, category_id=1, iscrowd=0, bbox=[5, 6, 20, 30]),
                             dict(id=2, image_id=1, category_id=1, iscrowd=0, bbox=[0, 0, 9, 9])])
    (tmp_path / 'instances.json').write_text(json.dumps(coco))
    for boxes in (str(tmp_path / 'instances.json'), coco):  # the path, or the loaded content
        pose = inferencer(str(tmp_path / '000000000785.png'), bboxes=boxes, show_progress=False)[0]['pose']
        np.testing.assert_allclose(pose['bboxes'], [[5, 6, 25, 36]])


@pytest.mark.parametrize('box,message', [
    ([10, 10, 10, 40], 'empty or inverted'),
    ([30, 10, 20, 40], 'empty or inverted'),
    ([10, float('nan'), 20, 40], 'non-finite'),
    ([100, 100, 120, 140], 'outside the 50x60'),
    ([1, 2, 3], r'has bbox \[1, 2, 3\]; person boxes are'),
])
def test_invalid_boxes_name_the_input(inferencer, box, message):
    with pytest.raises(ValueError, match=message) as err:
        inferencer(images(1), bboxes={'array_000000': [box]}, show_progress=False)
    assert 'array_000000' in str(err.value)


def test_pose_crops_of_several_images_share_forwards():
    """Images with one or two person boxes each: their crops go through the model batch_size at a time whichever
    image they are of, with the results of one image at a time."""
    torch.manual_seed(0)
    model = init_model(POSE, device='cpu')
    task = build_task(model, model.cfg, task_options=dict(pose=dict(batch_size=4)))
    frames = images(3)
    boxes = [[[0, 0, 40, 50]], [[5, 5, 60, 60], [10, 0, 40, 40]], [[0, 10, 80, 70]]]
    forwards = []
    model.register_forward_hook(lambda module, args, kwargs, output: forwards.append(len(kwargs['inputs'])),
                                with_kwargs=True)
    together = task.predict(frames, bboxes=boxes)
    assert forwards == [4]  # the 4 crops of 3 images in one forward
    alone = [task.predict([frame], bboxes=[box])[0] for frame, box in zip(frames, boxes)]
    for a, b in zip(together, alone):
        np.testing.assert_allclose(a['keypoints'], b['keypoints'], atol=1e-3)
        np.testing.assert_allclose(a['bboxes'], b['bboxes'])
    assert [len(result['bboxes']) for result in together] == [1, 2, 1]
