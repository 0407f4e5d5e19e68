"""The main job (``make demo``): SynthHumans -> train the tiny pose model -> evaluate -> infer on held-out images.

Usage: python tools/misc/demo.py [--iters N] [--work-dir work_dirs/demo] [--num-images 8]

Runs on the CPU in a few minutes: generates a small SynthHumans set (once), trains
configs/pose/sapiens2_nano_pose_synthhumans-128x96.py with tools/train.py, evaluates the checkpoint with
tools/test.py, runs tools/infer.py on held-out validation images (their annotated person boxes, no detector), and
prints the metrics and where the pictures are.
"""
import argparse
import json
import os
import os.path as osp
import re
import shutil
import subprocess
import sys
import time
from typing import Optional

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))

CONFIG = 'configs/pose/sapiens2_nano_pose_synthhumans-128x96.py'
METRIC_LINE = re.compile(r'Iter\(test\) \[[^\]]*\]\s+(.*)')
SHOWN_METRICS = ('coco/AP', 'coco/AP .5', 'coco/AR', 'body/coco/AP', 'PCK')


def run(step: str, command: list) -> str:
    """Run a command from the repository root, echoing its output; return the output."""
    print(f'\n==> {step}\n    {" ".join(command)}', flush=True)
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout:
        print('    ' + line, end='', flush=True)
        lines.append(line)
    if proc.wait() != 0:
        raise SystemExit(f'{step} failed (exit code {proc.returncode}); see the output above')
    return ''.join(lines)


def schedule_options(iters: Optional[int]) -> list:
    """``--cfg-options`` that train for ``iters`` iterations (default: the config's; the warm-up is shortened when it
    would not fit) and skip validation during training (tools/test.py evaluates afterwards)."""
    from mmengine.config import Config
    cfg = Config.fromfile(osp.join(REPO, CONFIG))
    iters = iters or cfg.train_cfg.max_iters
    warmup = min(cfg.param_scheduler[0]['end'], max(1, iters // 4))
    return [f'train_cfg.max_iters={iters}', f'train_cfg.val_interval={iters + 1}', f'param_scheduler.0.end={warmup}',
            f'param_scheduler.1.begin={warmup}', f'param_scheduler.1.end={iters}',
            f'default_hooks.checkpoint.interval={iters}']


def shown(path: str) -> str:
    """A path relative to the repository when it lies inside it."""
    rel = osp.relpath(path, REPO)
    return path if rel.startswith('..') else rel


def parse_metrics(output: str) -> dict:
    """{name: value} from MMEngine's last ``Iter(test) [n/n]  name: value  name: value`` log line."""
    lines = METRIC_LINE.findall(output)
    pairs = (item.rsplit(': ', 1) for item in lines[-1].split('  ') if ': ' in item) if lines else ()
    return {name.strip(): value.strip() for name, value in pairs}


def last_checkpoint(work_dir: str) -> str:
    """The checkpoint MMEngine recorded as the last one in ``work_dir``."""
    record = osp.join(work_dir, 'last_checkpoint')
    if not osp.isfile(record):
        raise SystemExit(f'training wrote no checkpoint record {record}')
    with open(record) as f:
        path = f.read().strip()
    return path if osp.isabs(path) else osp.join(REPO, path)


def held_out_images(data_root: str, out_dir: str, num: int) -> str:
    """Copy the first ``num`` validation images to ``out_dir`` and write their person boxes; return the JSON path."""
    with open(osp.join(data_root, 'annotations', 'keypoints308_val.json')) as f:
        coco = json.load(f)
    os.makedirs(out_dir, exist_ok=True)
    images = sorted(coco['images'], key=lambda im: im['file_name'])[:num]
    boxes = {}
    for image in images:
        stem = osp.splitext(osp.basename(image['file_name']))[0]
        shutil.copy(osp.join(data_root, image['file_name']), osp.join(out_dir, osp.basename(image['file_name'])))
        boxes[stem] = [[a['bbox'][0], a['bbox'][1], a['bbox'][0] + a['bbox'][2], a['bbox'][1] + a['bbox'][3]]
                       for a in coco['annotations'] if a['image_id'] == image['id'] and a['num_keypoints'] > 0]
    path = out_dir.rstrip('/') + '_boxes.json'
    with open(path, 'w') as f:
        json.dump(boxes, f)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description='Train, evaluate and run the tiny pose model on SynthHumans')
    parser.add_argument('--work-dir', default='work_dirs/demo')
    parser.add_argument('--data-root', default='data/synthhumans')
    parser.add_argument('--iters', type=int, default=None, help='training iterations (default: the config\'s)')
    parser.add_argument('--num-images', type=int, default=8, help='held-out images to run inference on')
    args = parser.parse_args()
    start = time.time()
    work_dir = osp.join(REPO, args.work_dir)
    data_root = osp.join(REPO, args.data_root)

    print(f'==> SynthHumans in {data_root}', flush=True)
    from sapiens2.datasets.synthhumans import ensure_synthhumans
    ensure_synthhumans(root=data_root)

    python = sys.executable
    train = [python, 'tools/train.py', CONFIG, '--work-dir', work_dir, '--cfg-options'] + schedule_options(args.iters)
    run('training the tiny pose model (tools/train.py)', train)
    checkpoint = last_checkpoint(work_dir)

    output = run('evaluating on the validation split (tools/test.py)',
                 [python, 'tools/test.py', CONFIG, checkpoint, '--work-dir', osp.join(work_dir, 'test')])
    metrics = parse_metrics(output)

    images_dir = osp.join(work_dir, 'heldout')
    boxes = held_out_images(data_root, images_dir, args.num_images)
    infer_dir = osp.join(work_dir, 'infer')
    run('inference on held-out images (tools/infer.py)',
        [python, 'tools/infer.py', images_dir, '--model', CONFIG, '--weights', checkpoint, '--bboxes', boxes,
         '--out', infer_dir, '--device', 'cpu', '--quiet'])

    print('\n==> Done in {:.1f} min'.format((time.time() - start) / 60))
    listed = [f'{name} {metrics[name]}' for name in SHOWN_METRICS if name in metrics]
    print('    metrics:    ' + (', '.join(listed) if listed else 'see the tools/test.py output above'))
    print(f'    checkpoint: {shown(checkpoint)}')
    print(f'    pictures:   {shown(osp.join(infer_dir, "pose"))}/*.png '
          f'(keypoints JSON: {shown(osp.join(infer_dir, "pose", "heldout_predictions.json"))})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
