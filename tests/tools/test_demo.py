"""tools/misc/demo.py: shipped-model discovery (missing files are named with the re-train command), the held-out and
multi-person images, the metrics table, and the whole demo on stand-in models."""
import json
import subprocess
import sys
from pathlib import Path

import cv2
import pytest

from tests.scripts import load_script

REPO = Path(__file__).resolve().parents[2]
POSE_CONFIG = 'configs/pose/sapiens2_tiny_pose_synthhumans-256x192.py'
SEG_CONFIG = 'configs/seg/sapiens2_tiny_seg_synthhumans-256x192.py'


demo = load_script('tools/misc/demo.py', 'demo_tool')


def card(task: str, config: str, headline: str = 'mIoU', target=('>=', 60.0)) -> dict:
    name = Path(config).stem
    return dict(name=name, task=task, config=config, headline=headline, target=list(target),
                metrics=dict(trained={headline: 70.0}, untrained={headline: 0.5}, constant={headline: 3.0}),
                data=dict(num_train=2000, num_val=200, size=[384, 288], seed=0, renderer_version=5))


def write_models(models_dir: Path, cards, present) -> None:
    models_dir.mkdir(parents=True, exist_ok=True)
    (models_dir / 'results.json').write_text(json.dumps(cards))
    for c in cards:
        if c['task'] in present:
            (models_dir / f'{c["name"]}.safetensors').write_bytes(b'')


def test_missing_shipped_model_is_an_error_naming_the_file_and_command_and_unshipped_tasks_get_notices(tmp_path):
    models_dir = tmp_path / 'models'
    write_models(models_dir, [card('pose', POSE_CONFIG, 'body/PCK', ('>=', 0.85)), card('seg', SEG_CONFIG)],
                 present={'pose'})
    models, notices, errors = demo.load_shipped_models(str(models_dir))
    assert list(models) == ['pose'] and models['pose']['checkpoint'].endswith('pose_synthhumans-256x192.safetensors')
    assert len(errors) == 1 and 'sapiens2_tiny_seg_synthhumans-256x192.safetensors' in errors[0]
    assert f'python tools/misc/train_demo_models.py --tasks seg --out {models_dir}' in errors[0]
    assert sorted(n.split(':')[0] for n in notices) == ['albedo', 'matting', 'normal', 'pointmap']


def test_no_models_at_all_stops_with_the_command_that_trains_them(tmp_path):
    with pytest.raises(SystemExit, match='results.json is missing.*train_demo_models.py --out'):
        demo.load_shipped_models(str(tmp_path))
    write_models(tmp_path, [card('seg', SEG_CONFIG)], present=())
    with pytest.raises(SystemExit, match='no shipped demo model could be loaded'):
        demo.load_shipped_models(str(tmp_path))


def test_the_pictures_use_the_set_the_cards_were_evaluated_on_not_their_training_seeds(tmp_path):
    """A model continued on other seeds and evaluated on the shared validation set is no reason for a notice."""
    root = tmp_path / 'set'
    root.mkdir()
    (root / 'manifest.json').write_text('{}')
    pose = dict(card('pose', POSE_CONFIG, 'body/PCK', ('>=', 0.85)), evaluation_data=dict(size=[384, 288], seed=0))
    pose['data'] = dict(pose['data'], seed=4)
    models = dict(pose=pose, seg=card('seg', SEG_CONFIG))
    assert demo.demo_data(models, str(root)) == (str(root), [])
    del pose['evaluation_data']
    _, notices = demo.demo_data(models, str(root))
    assert len(notices) == 1 and 'different SynthHumans sizes/seeds' in notices[0]


def test_held_out_images_put_the_most_crowded_scene_first_with_its_boxes(tmp_path):
    images = [dict(id=i, file_name=f'val/rgb/{i:06d}.png') for i in range(4)]
    people = {0: 1, 1: 2, 2: 3, 3: 1}
    anns = [dict(image_id=i, num_keypoints=5, bbox=[10 * k, 0, 5, 8]) for i, n in people.items() for k in range(n)]
    anns.append(dict(image_id=0, num_keypoints=0, bbox=[0, 0, 1, 1]))  # not annotated: no box
    (tmp_path / 'annotations').mkdir()
    (tmp_path / 'annotations' / 'keypoints308_val.json').write_text(json.dumps(dict(images=images, annotations=anns)))
    named, boxes = demo.held_out_images(str(tmp_path), 2)
    assert [name for name, _ in named] == ['multi_person_000002', 'val_000000', 'val_000001']
    assert named[0][1] == str(tmp_path / 'val/rgb/000002.png')
    assert boxes['000002'] == [[0, 0, 5, 8], [10, 0, 15, 8], [20, 0, 25, 8]]
    assert boxes['000000'] == [[0, 0, 5, 8]] and sorted(boxes) == ['000000', '000001', '000002']


def test_metrics_table_lists_the_headline_metric_beside_the_baselines():
    rows = demo.metrics_table({'seg': card('seg', SEG_CONFIG)})
    assert rows == [['task', 'metric', 'trained', 'untrained', 'best constant', 'target'],
                    ['seg', 'mIoU', '70', '0.5', '3', '>= 60']]
    assert demo.markdown_table(rows).splitlines()[2] == '| seg | mIoU | 70 | 0.5 | 3 | >= 60 |'
    matting = card('matting', 'projects/matting/configs/sapiens2_tiny_matting_synthhumans-256x192.py', 'matting/sad',
                   ('<', 'hard_mask'))
    matting['metrics']['hard_mask'] = {'matting/sad': 12.345}
    assert demo.metrics_table({'matting': matting})[1][-1] == '< hard mask (12.35)'


def test_the_shipped_folder_is_restored_by_git_or_retrained_elsewhere(tmp_path):
    assert demo.retrain_command('seg', demo.SHIPPED_DIR) == (
        'git checkout -- sapiens2/demo_models, or python tools/misc/train_demo_models.py --tasks seg --out '
        'work_dirs/demo_models and copy its files into sapiens2/demo_models')
    assert demo.evaluation_command(demo.SHIPPED_DIR).endswith('--shipped --out work_dirs/demo_models_eval')
    command = demo.evaluation_command(str(tmp_path))
    assert command == f'python tools/misc/train_demo_models.py --skip-train --out {tmp_path}'


def test_test_metrics_are_parsed_from_the_last_test_line():
    output = ('x - Iter(test) [1/2]  mIoU: 1.0000\n'
              '12/01 12:31:23 - mmengine - INFO - Iter(test) [2/2]    aAcc: 2.2600  mIoU: 0.2800  mAcc: 4.1200\n')
    assert demo.parse_test_metrics(output) == dict(aAcc='2.2600', mIoU='0.2800', mAcc='4.1200')


def save_stand_in(config: str, out_dir: Path, task: str) -> dict:
    """An untrained model in the shipped format (fp16 .safetensors with its config) and its card."""
    from sapiens2.apis import init_model
    from sapiens2.engine.checkpoint import save_weights
    model = init_model(str(REPO / config), device='cpu')
    state_dict = {k: v.half() if v.is_floating_point() else v for k, v in model.state_dict().items()}
    c = card(task, config)
    save_weights(state_dict, str(out_dir / f'{c["name"]}.safetensors'), meta=dict(config=(REPO / config).read_text()))
    return c


@pytest.mark.slow
def test_demo_draws_every_shipped_task_and_trains(synthhumans_root, tmp_path):
    models_dir, work_dir = tmp_path / 'models', tmp_path / 'demo'
    models_dir.mkdir()
    cards = [save_stand_in(POSE_CONFIG, models_dir, 'pose'), save_stand_in(SEG_CONFIG, models_dir, 'seg')]
    (models_dir / 'results.json').write_text(json.dumps(cards))
    proc = subprocess.run([sys.executable, 'tools/misc/demo.py', '--models-dir', str(models_dir), '--work-dir',
                           str(work_dir), '--data-root', synthhumans_root, '--num-images', '1', '--train-iters', '4'],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    pictures = sorted((work_dir / 'pictures').glob('*.png'))
    assert [p.name.split('_0')[0] for p in pictures] == ['multi_person', 'multi_person', 'real_astronaut.png',
                                                         'training_before_after.png', 'val']
    height, width = cv2.imread(str(pictures[0])).shape[:2]
    assert width == 7 * 192 and height > 256  # 256x192 images, seven titled panels
    assert pictures[1].name.endswith('_people.png') and f'people:         {pictures[1]}' in proc.stdout
    assert cv2.imread(str(pictures[1])).shape == (256, 192, 3)  # pose and seg: the instance masks (no 3D view)
    assert (work_dir / 'pictures' / 'crossing_people.mp4').is_file()
    assert (work_dir / 'pictures' / 'contact_sheet.jpg').is_file() and (work_dir / 'demo.jpg').is_file()
    assert '| seg | mIoU | 70 | 0.5 | 3 | >= 60 |' in (work_dir / 'metrics.md').read_text()
    assert 'NOTICE normal: no demo model is shipped' in proc.stdout
    assert 'training works: body-part mIoU' in proc.stdout and 'Stage times:' in proc.stdout
    # The default precision is one line of the inference stage, not a Python warning with its source line.
    assert 'DtypeNotice' not in proc.stderr and proc.stdout.count('    precision: dtype auto -> ') <= 1
    assert (work_dir / 'train' / 'iter_4.pth').is_file()
    assert cv2.imread(str(pictures[3])).shape[1] == 3 * 192  # [image | untrained | trained]
    assert 'and a real photo: ' in proc.stdout and 'astronaut.png' in proc.stdout  # scikit-image's sample


def test_a_checkpoint_trained_with_another_config_gets_a_notice(tmp_path):
    import torch

    from sapiens2.engine.checkpoint import save_weights
    model = dict(card('seg', SEG_CONFIG), checkpoint=str(tmp_path / 'seg.safetensors'))
    save_weights({'w': torch.zeros(1)}, model['checkpoint'], meta=dict(config=(REPO / SEG_CONFIG).read_text()))
    assert demo.config_mismatch(model, str(tmp_path)) is None
    save_weights({'w': torch.zeros(1)}, model['checkpoint'], meta=dict(config='max_iters = 1\n'))
    notice = demo.config_mismatch(model, str(tmp_path))
    assert 'another version of configs/seg/' in notice and '--tasks seg' in notice
