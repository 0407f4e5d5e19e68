"""The main job (``make demo``): every shipped demo model on held-out SynthHumans images, their metrics, and a short
training run that shows training works.

Usage: python tools/misc/demo.py [--models-dir sapiens2/demo_models] [--work-dir work_dirs/demo] [--num-images 6]
       [--data-root DIR] [--train-iters N] [--skip-train] [--readme-picture PATH]

Stages (each prints its measured time):

1. data: the SynthHumans set the demo models were evaluated on (size and seed from their model cards). The full set
   of ``tools/misc/train_demo_models.py`` is used when it is there; otherwise a small one (``SMALL_SET``) is rendered
   once into ``data/synthhumans_demo_small``. Its validation images are the same held-out images (a SynthHumans
   sample depends only on its split, index, size and seed).
2. models: the models listed in ``<models-dir>/results.json`` (``<config name>.safetensors`` + ``.json`` card each).
   A task without a shipped model is skipped with a notice; a listed model whose file is missing is an error that
   names the file and the command that re-trains it (the other tasks still run).
3. inference: all models through ``sapiens2.apis.Sapiens2Inferencer`` (the config's test pipeline) on the first
   ``--num-images`` validation images, on the validation scene with the most people (the generator renders 1-3
   people per scene) and on one real photo (``REAL_PHOTO``); pose runs on the annotated person boxes.
4. pictures: one composite per image ([image | pose skeleton | body parts | normals | depth | albedo | alpha],
   ``sapiens2.visualization.composite``), a contact sheet and a small JPEG of the multi-person scene; its people
   (``people=True``: pose with seg and pointmap) as ``pictures/multi_person_<stem>_people.png`` [instance masks | 3D
   skeletons].
5. video: the pose model on a rendered SynthHumans clip of two people crossing (``VIDEO_CLIP``), tracked and
   smoothed as ``sapiens2-infer`` does for videos: ``pictures/crossing_pose.mp4`` and ``.gif`` (one colour per
   track id) and the JSON Lines predictions with their track ids; with seg and pointmap, its people too
   (``pictures/crossing_people.mp4``).
6. metrics: each task's headline metric from its model card (the full validation split), next to the untrained model
   and the best constant predictor; also written as ``<work-dir>/metrics.md``.
7. training: ``tools/train.py`` trains the nano body-part segmentation config from scratch for a short schedule;
   ``tools/test.py`` evaluates the untrained and the trained checkpoint (mIoU before and after).
"""
import argparse
import json
import logging
import os
import os.path as osp
import re
import resource
import subprocess
import sys
import time
import warnings
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))

#: The tasks of the composite, in panel order (inference task names).
TASKS = ('pose', 'seg', 'normal', 'pointmap', 'albedo', 'matting')
#: The tasks that, with pose, compose into people (masks, 3D keypoints; sapiens2.apis.people), run on the clip too.
PEOPLE_TASKS = ('seg', 'pointmap')
#: The small set rendered when the full one is not there: enough training images for the training stage.
SMALL_SET = dict(root='data/synthhumans_demo_small', num_train=256, num_val=24)
#: The clip of the video stage: (kind, frames, (H, W)); small, so that the stage takes a few seconds.
VIDEO_CLIP = ('crossing', 16, (192, 256))
TRAIN_CONFIG = 'configs/seg/sapiens2_nano_seg_synthhumans-128x96.py'
TRAIN_METRIC = 'mIoU'
METRIC_LINE = re.compile(r'Iter\(test\) \[[^\]]*\]\s+(.*)')
ECHOED_LINE = re.compile(r'Iter\(train\) \[\s*(\d+)/(\d+)\].*?\sloss: ([\d.]+)')
SHIPPED_DIR = osp.join(REPO, 'sapiens2', 'demo_models')
#: The real photo beside the rendered scenes: scikit-image's sample ``astronaut.png`` (Eileen Collins, NASA, public
#: domain; read from the installed package, not carried here), its composite's name and her person box (xyxy).
REAL_PHOTO = ('real_astronaut', 'astronaut.png', [15, 10, 370, 512])


def retrain_command(task: str, models_dir: str) -> str:
    """How to get a demo model back: tools/misc/train_demo_models.py writes anywhere but the shipped folder."""
    if osp.realpath(models_dir) != osp.realpath(SHIPPED_DIR):
        return f'python tools/misc/train_demo_models.py --tasks {task} --out {shown(models_dir)}'
    return (f'git checkout -- {shown(SHIPPED_DIR)}, or python tools/misc/train_demo_models.py --tasks {task} --out '
            f'work_dirs/demo_models and copy its files into {shown(SHIPPED_DIR)}')


def evaluation_command(models_dir: str) -> str:
    """The evaluation-only command that recomputes the cards' metrics."""
    if osp.realpath(models_dir) == osp.realpath(SHIPPED_DIR):
        return 'python tools/misc/train_demo_models.py --shipped --out work_dirs/demo_models_eval'
    return f'python tools/misc/train_demo_models.py --skip-train --out {shown(models_dir)}'


def shown(path: str) -> str:
    """A path relative to the repository when it lies inside it."""
    rel = osp.relpath(path, REPO)
    return path if rel.startswith('..') else rel


def cpu_seconds() -> float:
    """CPU time of this process and its finished children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class StageClock:
    """Prints a heading per stage and its measured wall and CPU time; keeps them for the closing summary."""

    def __init__(self) -> None:
        self.times: List[Tuple[str, float, float]] = []
        self.start, self.start_cpu = time.time(), cpu_seconds()

    @contextmanager
    def stage(self, name: str, what: str) -> Iterator[None]:
        print(f'\n==> [{len(self.times) + 1}] {name}: {what}', flush=True)
        start, start_cpu = time.time(), cpu_seconds()
        yield
        wall, cpu = time.time() - start, cpu_seconds() - start_cpu
        self.times.append((name, wall, cpu))
        print(f'    ({name}: {wall:.1f} s wall, {cpu:.1f} s CPU)', flush=True)

    def summary(self) -> str:
        stages = ', '.join(f'{name} {wall:.0f} s' for name, wall, _ in self.times)
        wall, cpu = time.time() - self.start, cpu_seconds() - self.start_cpu
        return f'{stages}; total {wall:.0f} s wall ({wall / 60:.1f} min), {cpu:.0f} s CPU'


# ----------------------------------------------------------------------------------------------------- models
def load_shipped_models(models_dir: str) -> Tuple[Dict[str, dict], List[str], List[str]]:
    """The shipped models of ``models_dir``: ({task: card with ``checkpoint`` path}, notices for tasks without a
    model, errors for listed models whose files are missing). Raises SystemExit when nothing is shipped there."""
    listing = osp.join(models_dir, 'results.json')
    if not osp.isfile(listing):
        raise SystemExit(f'no demo models in {shown(models_dir)}: {shown(listing)} is missing. They ship with the '
                         f'repository ({shown(SHIPPED_DIR)}); to get them back: '
                         + retrain_command('<tasks>', models_dir).replace('--tasks <tasks> ', ''))
    with open(listing) as f:
        listed = {card['task']: card for card in json.load(f)}
    models, notices, errors = {}, [], []
    for task in TASKS:
        if task not in listed:
            notices.append(f'{task}: no demo model is shipped ({shown(listing)} lists none); its panel stays empty')
            continue
        card = listed[task]
        checkpoint = osp.join(models_dir, f'{card["name"]}.safetensors')
        missing = [p for p in (checkpoint, osp.join(REPO, card['config'])) if not osp.isfile(p)]
        if missing:
            errors.append(f'{task}: {", ".join(shown(p) for p in missing)} missing; to get it back: '
                          + retrain_command(task, models_dir))
            continue
        models[task] = dict(card, checkpoint=checkpoint)
    if not models:
        raise SystemExit('no shipped demo model could be loaded:\n  ' + '\n  '.join(errors + notices))
    return models, notices, errors


def config_mismatch(model: dict, models_dir: str) -> Optional[str]:
    """A notice when the config embedded in the checkpoint differs from the committed config file, else None."""
    from sapiens2.engine.checkpoint import read_checkpoint_file
    embedded = read_checkpoint_file(model['checkpoint'])['meta'].get('config')
    with open(osp.join(REPO, model['config'])) as f:
        committed = f.read()
    if embedded is None or embedded == committed:
        return None
    return (f'{model["task"]}: {shown(model["checkpoint"])} was trained with another version of {model["config"]}; '
            'results may differ from its card; re-train it: ' + retrain_command(model['task'], models_dir))


# ----------------------------------------------------------------------------------------------------- data
def evaluation_set(card: dict) -> dict:
    """The SynthHumans set a card's metrics were measured on: its ``evaluation_data`` when that is not the set it was
    last trained on (a model continued over new seeds is still evaluated on the others' validation images)."""
    return card.get('evaluation_data') or card['data']


def demo_data(models: Dict[str, dict], data_root: Optional[str]) -> Tuple[str, List[str]]:
    """The SynthHumans root to run on (rendered when needed) and notices about it."""
    from sapiens2.datasets.synthhumans import RENDERER_VERSION, ensure_synthhumans
    from sapiens2.datasets.synthhumans.manifest import configuration, read_manifest
    sets = {task: evaluation_set(card) for task, card in models.items()}
    specs = {json.dumps({k: data[k] for k in ('size', 'seed')}, sort_keys=True): task for task, data in sets.items()}
    spec = json.loads(next(iter(specs)))
    notices = []
    if len(specs) > 1:
        notices.append(f'the models were evaluated at different SynthHumans sizes/seeds ({sorted(specs)}); using '
                       f'{spec}')
    versions = {card['data'].get('renderer_version') for card in models.values()}
    if versions != {RENDERER_VERSION}:
        notices.append(f'the models were trained on SynthHumans renderer {sorted(versions, key=str)}, this checkout '
                       f'renders version {RENDERER_VERSION}: the pictures may differ a little from their training '
                       'data')
    if data_root is not None:
        root = osp.join(REPO, data_root)
        if read_manifest(root) is None:
            raise SystemExit(f'--data-root {data_root} is not a SynthHumans set (no manifest.json); render one with '
                             'tools/dataset_converters/make_synthhumans.py or leave --data-root out')
        return root, notices
    def holds(root: str, num_train: int, num_val: int) -> bool:
        manifest = read_manifest(root) if osp.isdir(root) else None
        return manifest is not None and configuration(manifest) == dict(
            renderer_version=RENDERER_VERSION, num_train=num_train, num_val=num_val, size=list(spec['size']),
            seed=spec['seed'])

    data = next(iter(sets.values()))
    full = osp.join(REPO, data.get('root', 'data/synthhumans_demo'))
    if holds(full, data['num_train'], data['num_val']):
        return full, notices
    root = osp.join(REPO, SMALL_SET['root'])
    if not holds(root, SMALL_SET['num_train'], SMALL_SET['num_val']):
        print(f'    rendering {SMALL_SET["num_train"]} training + {SMALL_SET["num_val"]} validation images at '
              f'{spec["size"]} into {shown(root)} (once; about a minute)', flush=True)
    ensure_synthhumans(root, num_train=SMALL_SET['num_train'], num_val=SMALL_SET['num_val'], size=tuple(spec['size']),
                       seed=spec['seed'])
    return root, notices


def held_out_images(data_root: str, num_images: int) -> Tuple[List[Tuple[str, str]], Dict[str, list]]:
    """[(name, image path)] of the first ``num_images`` validation images and the validation scene with the most
    annotated people (named ``multi_person_<stem>``, first), and the person boxes (xyxy) per file stem."""
    with open(osp.join(data_root, 'annotations', 'keypoints308_val.json')) as f:
        coco = json.load(f)
    boxes: Dict[int, list] = {}
    for ann in coco['annotations']:
        if ann['num_keypoints'] > 0:
            x, y, w, h = ann['bbox']
            boxes.setdefault(ann['image_id'], []).append([x, y, x + w, y + h])
    images = sorted(coco['images'], key=lambda im: im['file_name'])
    if not images:
        raise SystemExit(f'{data_root} has no validation images')
    crowd = max(images, key=lambda im: len(boxes.get(im['id'], [])))
    chosen = [crowd] + [im for im in images if im['id'] != crowd['id']][:num_images]
    named, per_stem = [], {}
    for image in chosen:
        stem = osp.splitext(osp.basename(image['file_name']))[0]
        name = f'multi_person_{stem}' if image is crowd else f'val_{stem}'
        named.append((name, osp.join(data_root, image['file_name'])))
        if image['id'] in boxes:
            per_stem[stem] = boxes[image['id']]
    return named, per_stem


def real_photo() -> Optional[Tuple[Tuple[str, str], str, list]]:
    """((name, path), file stem, person box) of :data:`REAL_PHOTO`; None when scikit-image has no such sample."""
    try:
        import skimage
    except ImportError:
        return None
    name, file_name, box = REAL_PHOTO
    path = osp.join(osp.dirname(skimage.__file__), 'data', file_name)
    return ((name, path), osp.splitext(file_name)[0], box) if osp.isfile(path) else None


# ----------------------------------------------------------------------------------------------------- inference
def run_models(models: Dict[str, dict], images: List[Tuple[str, str]], boxes: Dict[str, list]) -> Tuple[list, list]:
    """[(name, BGR image, {task: result})] of every model on every image, through the one inference path (with the
    ``people`` of pose and a dense task, :data:`PEOPLE_TASKS`), and the inference tasks."""
    import cv2

    from sapiens2.apis import Sapiens2Inferencer
    from sapiens2.utils.devices import DtypeNotice
    ordered = [models[task] for task in TASKS if task in models]
    inferencer = Sapiens2Inferencer([osp.join(REPO, m['config']) for m in ordered],
                                    [m['checkpoint'] for m in ordered], device='cpu')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', DtypeNotice)
        results = inferencer([path for _, path in images], bboxes=boxes if 'pose' in models else None,
                             show_progress=False, people=composes_people(models))
    for warning in caught:  # the default precision (--dtype auto), as one line of the stage
        if issubclass(warning.category, DtypeNotice):
            print(f'    precision: {warning.message}', flush=True)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    by_stem = {r['name']: r for r in results}
    frames = []
    for name, path in images:
        result = by_stem[osp.splitext(osp.basename(path))[0]]
        frames.append((name, cv2.imread(path), {task: result[task] for task in (*models, 'people') if task in result}))
    return frames, inferencer.tasks


def composes_people(models: Dict[str, object]) -> bool:
    """Whether the models (by task name) compose into people: pose and one of :data:`PEOPLE_TASKS`."""
    return 'pose' in models and any(task in models for task in PEOPLE_TASKS)


def people_picture(tasks: list, frame: tuple, pictures_dir: str) -> str:
    """``<pictures_dir>/<name>_people.png``: the frame's people [instance masks | 3D skeletons]."""
    from sapiens2.apis.people import PeopleComposer
    from sapiens2.utils.image_write import write_image
    name, image, results = frame
    path = osp.join(pictures_dir, f'{name}_people.png')
    write_image(path, PeopleComposer(tasks).visualize(image, results['people']))
    return path


def small_jpeg(picture, path: str, width: int = 1400, quality: int = 80) -> str:
    import cv2

    from sapiens2.utils.image_write import write_image
    height = int(round(picture.shape[0] * width / picture.shape[1]))
    write_image(path, cv2.resize(picture, (width, height), interpolation=cv2.INTER_AREA),
                [cv2.IMWRITE_JPEG_QUALITY, quality])
    return path


# ----------------------------------------------------------------------------------------------------- video
def video_demo(tasks: list, work_dir: str, pictures_dir: str) -> List[str]:
    """Pose on the rendered clip ``VIDEO_CLIP`` with its ground-truth boxes given per frame in a shuffled order (the
    track ids still follow the people), with seg and pointmap composed into people when there; ``tasks``: the
    inference stage's (built once). Returns the paths of the MP4, the GIF, the JSON Lines predictions and the people's
    MP4 (when there)."""
    import random
    import shutil
    import tempfile

    import cv2
    from PIL import Image

    from sapiens2.apis import Sapiens2Inferencer
    from sapiens2.apis.io.sources import frame_name
    from sapiens2.datasets.synthhumans.sequence import render_clip, write_clip
    from sapiens2.utils.atomic_save import AtomicOutput, atomic_copy
    kind, num_frames, size = VIDEO_CLIP
    clip = render_clip(kind, num_frames, size, seed=0)
    video_dir = tempfile.mkdtemp(prefix='video-', dir=work_dir)  # a fresh folder per run; the products are copied
    source = write_clip(clip, osp.join(video_dir, f'{kind}.avi'))
    shuffle = random.Random(0).shuffle
    boxes = {}
    for t, frame_boxes in enumerate(clip.bboxes.tolist()):
        shuffle(frame_boxes)
        boxes[frame_name(kind, t)] = frame_boxes
    people = composes_people({task.name: task for task in tasks})
    inferencer = Sapiens2Inferencer.from_tasks([task for task in tasks if task.name == 'pose'
                                                or (people and task.name in PEOPLE_TASKS)])
    inferencer(source, out_dir=video_dir, bboxes=boxes, show_progress=False, return_results=False, people=people)
    mp4 = atomic_copy(osp.join(video_dir, 'pose', f'{kind}.mp4'), osp.join(pictures_dir, f'{kind}_pose.mp4'))
    capture, frames = cv2.VideoCapture(mp4), []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append(Image.fromarray(frame[..., ::-1]))
    capture.release()
    gif = osp.join(pictures_dir, f'{kind}_pose.gif')
    with AtomicOutput(gif) as out:
        frames[0].save(out.tmp, save_all=True, append_images=frames[1:], duration=int(round(1000 / clip.fps)),
                       loop=0)
    jsonl = atomic_copy(osp.join(video_dir, 'pose', f'{kind}_predictions.jsonl'),
                        osp.join(work_dir, f'{kind}_pose_predictions.jsonl'))
    products = [mp4, gif, jsonl]
    if people:
        products.append(atomic_copy(osp.join(video_dir, 'people', f'{kind}.mp4'),
                                    osp.join(pictures_dir, f'{kind}_people.mp4')))
    shutil.rmtree(video_dir)
    return products


# ----------------------------------------------------------------------------------------------------- metrics
def metrics_table(models: Dict[str, dict]) -> List[List[str]]:
    """Rows [task, metric, trained, untrained, best constant, target] from the model cards, a header first."""
    rows = [['task', 'metric', 'trained', 'untrained', 'best constant', 'target']]
    for task in TASKS:
        if task not in models:
            continue
        card = models[task]
        name = card['headline']
        values = [card['metrics'][which].get(name) for which in ('trained', 'untrained', 'constant')]
        rows.append([task, name] + ['-' if v is None else f'{v:.4g}' for v in values] + [target_text(card)])
    return rows


def target_text(card: dict) -> str:
    """``>= 60``, or for a target set against a baseline (matting: ``< hard_mask``) the baseline's value too."""
    op, target = card['target']
    if isinstance(target, str):
        value = card['metrics'].get(target, {}).get(card['headline'])
        return f'{op} {target.replace("_", " ")}' + ('' if value is None else f' ({value:.4g})')
    return f'{op} {target:g}'


def text_table(rows: List[List[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return '\n'.join('    ' + '  '.join(cell.ljust(w) for cell, w in zip(row, widths)) for row in rows)


def markdown_table(rows: List[List[str]]) -> str:
    lines = ['| ' + ' | '.join(rows[0]) + ' |', '|' + '---|' * len(rows[0])]
    return '\n'.join(lines + ['| ' + ' | '.join(row) + ' |' for row in rows[1:]]) + '\n'


# ----------------------------------------------------------------------------------------------------- training
def run_logged(step: str, command: List[str], log_path: str, echo_every: int = 0) -> str:
    """Run ``command`` from the repository root with its output in ``log_path`` (training progress echoed every
    ``echo_every`` iterations); return the output. One thread unless ``OMP_NUM_THREADS`` says otherwise: a model
    this small gains little from a second thread, and loses much when the cores are shared."""
    words = [shown(c) if osp.isabs(c) else c for c in command]
    options = words.index('--cfg-options') if '--cfg-options' in words else len(words)
    print(f'    $ {" ".join(words[:options])}' + (' --cfg-options <data root, schedule>' if words[options:] else '') +
          f'  (log: {shown(log_path)})', flush=True)
    lines = []
    env = dict(os.environ)
    env.setdefault('OMP_NUM_THREADS', '1')
    from sapiens2.utils.atomic_save import open_fresh
    with open_fresh(log_path) as log:
        log.write(' '.join(command) + '\n')
        proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=env)
        for line in proc.stdout:
            log.write(line)
            lines.append(line)
            match = ECHOED_LINE.search(line)
            if echo_every and match and int(match.group(1)) % echo_every == 0:
                print(f'      iteration {match.group(1)}/{match.group(2)}: loss {match.group(3)}', flush=True)
    if proc.wait() != 0:
        tail = ''.join(lines[-30:])
        raise SystemExit(f'{step} failed (exit code {proc.returncode}); log {shown(log_path)}:\n{tail}')
    return ''.join(lines)


def parse_test_metrics(output: str) -> Dict[str, str]:
    """{name: value} from MMEngine's last ``Iter(test) [n/n]  name: value  name: value`` log line."""
    lines = METRIC_LINE.findall(output)
    pairs = (item.rsplit(': ', 1) for item in lines[-1].split('  ') if ': ' in item) if lines else ()
    return {name.strip(): value.strip() for name, value in pairs}


def training_options(data_root: str, iters: int) -> List[str]:
    """``--cfg-options`` of the training stage: the demo's data, ``iters`` iterations (warm-up shortened to fit), no
    validation during training (tools/test.py evaluates before and after), one checkpoint at the end."""
    from mmengine.config import Config
    cfg = Config.fromfile(osp.join(REPO, TRAIN_CONFIG))
    warmup = min(cfg.param_scheduler[0]['end'], max(1, iters // 4))
    data = [f'{split}_dataloader.dataset.data_root={data_root}' for split in ('train', 'val', 'test')]
    return data + [f'train_cfg.max_iters={iters}', f'train_cfg.val_interval={iters + 1}',
                   f'param_scheduler.0.end={warmup}', f'param_scheduler.1.begin={warmup}',
                   f'param_scheduler.1.end={iters}', f'default_hooks.checkpoint.interval={iters}']


def untrained_checkpoint(options: List[str], path: str) -> str:
    """The training config's model as it starts training (its ``init_weights``, the config's seed), saved to
    ``path``."""
    import torch
    from mmengine.config import DictAction
    from mmengine.logging import MMLogger

    from sapiens2.apis import init_model
    from sapiens2.engine.checkpoint import save_weights
    parser = argparse.ArgumentParser()
    parser.add_argument('--cfg-options', nargs='+', action=DictAction)
    cfg_options = parser.parse_args(['--cfg-options', *options]).cfg_options
    logger = MMLogger.get_current_instance()
    level = logger.level
    logger.setLevel(logging.ERROR)  # init_weights logs every parameter
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # "no checkpoint given: random weights" is the point here
            model = init_model(osp.join(REPO, TRAIN_CONFIG), device='cpu', cfg_options=cfg_options)
        torch.manual_seed(model.cfg.get('randomness', {}).get('seed') or 0)
        model.init_weights()
    finally:
        logger.setLevel(level)
    save_weights(model.state_dict(), path)
    return path


def before_after_picture(image_path: str, checkpoints: Sequence[str], path: str) -> str:
    """[image | body parts of each checkpoint of the training config] of one image, written to ``path``."""
    import cv2

    from sapiens2.apis import Sapiens2Inferencer
    from sapiens2.utils.devices import DtypeNotice
    from sapiens2.utils.image_write import write_image
    from sapiens2.visualization.composite import task_panel, title_height, titled
    from sapiens2.visualization.dense_maps import side_by_side
    image = cv2.imread(image_path)
    height = title_height(image.shape[0])
    panels = [titled(image, 'image', height)]
    for title, checkpoint in zip(('untrained', 'trained'), checkpoints):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', DtypeNotice)  # said in the inference stage
            result = Sapiens2Inferencer(osp.join(REPO, TRAIN_CONFIG), checkpoint, device='cpu')(image)[0]['seg']
        panels.append(titled(task_panel(image, 'seg', result, None), title, height))
    write_image(path, side_by_side(*panels))
    return path


def train_and_compare(data_root: str, work_dir: str, iters: int) -> Tuple[str, str, str, str]:
    """Train the nano seg config for ``iters`` iterations; return the metric untrained and trained, and the two
    checkpoints."""
    os.makedirs(work_dir, exist_ok=True)
    options = training_options(data_root, iters)
    python = sys.executable
    before_ckpt = untrained_checkpoint(options, osp.join(work_dir, 'untrained.safetensors'))
    before = parse_test_metrics(run_logged(
        'evaluating the untrained model', [python, 'tools/test.py', TRAIN_CONFIG, before_ckpt, '--work-dir',
                                           osp.join(work_dir, 'test_untrained'), '--cfg-options', *options],
        osp.join(work_dir, 'test_untrained.log')))
    print(f'      untrained: {TRAIN_METRIC} {before.get(TRAIN_METRIC, "?")} (tools/test.py)', flush=True)
    start = time.time()
    run_logged('training', [python, 'tools/train.py', TRAIN_CONFIG, '--work-dir', work_dir, '--cfg-options', *options],
               osp.join(work_dir, 'train.log'), echo_every=max(1, iters // 4))
    print(f'      trained {iters} iterations in {time.time() - start:.0f} s', flush=True)
    checkpoint = osp.join(work_dir, f'iter_{iters}.pth')
    after = parse_test_metrics(run_logged(
        'evaluating the trained model', [python, 'tools/test.py', TRAIN_CONFIG, checkpoint, '--work-dir',
                                         osp.join(work_dir, 'test_trained'), '--cfg-options', *options],
        osp.join(work_dir, 'test_trained.log')))
    print(f'      trained: {TRAIN_METRIC} {after.get(TRAIN_METRIC, "?")} (tools/test.py)', flush=True)
    return before.get(TRAIN_METRIC, '?'), after.get(TRAIN_METRIC, '?'), before_ckpt, checkpoint


# ----------------------------------------------------------------------------------------------------- outputs
def demo_outputs(work_dir: str, pictures_dir: str, names: Sequence[str], train: bool) -> List[str]:
    """The files the demo writes into ``work_dir`` (besides the training run's folder)."""
    pictures = [f'{name}.png' for name in names] + ['contact_sheet.jpg', f'{names[0]}_people.png']
    pictures += ['training_before_after.png'] if train else []
    return [osp.join(work_dir, 'metrics.md'), osp.join(work_dir, 'demo.jpg')] + [osp.join(pictures_dir, p)
                                                                                   for p in pictures]


def checked_outputs(work_dir: str, outputs: Sequence[str], overwrite: bool):
    """The work dir's output guard, after it accepted ``outputs`` (an existing file that an earlier demo did not
    write is refused, unless ``overwrite``)."""
    from sapiens2.apis.io.output_guard import OutputGuard
    guard = OutputGuard(work_dir, overwrite=overwrite, option='--work-dir')
    try:
        for path in outputs:
            guard.check(path)
    except FileExistsError as err:
        raise SystemExit(f'demo.py: error: {err}') from None
    return guard


# ----------------------------------------------------------------------------------------------------- main
def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Every shipped demo model on held-out SynthHumans images, their '
                                     'metrics, and a short training run')
    parser.add_argument('--models-dir', default='sapiens2/demo_models', help='shipped models and their cards')
    parser.add_argument('--work-dir', default='work_dirs/demo', help='pictures, tables and the training run')
    parser.add_argument('--data-root', default=None, help='a SynthHumans set to use instead of the automatic one')
    parser.add_argument('--num-images', type=int, default=6, help='held-out images besides the multi-person scene')
    parser.add_argument('--train-iters', type=int, default=600, help='iterations of the training stage')
    parser.add_argument('--skip-train', action='store_true', help='leave out the training stage')
    parser.add_argument('--overwrite', action='store_true',
                        help='replace files in --work-dir that an earlier demo did not write there')
    parser.add_argument('--readme-picture', default=None,
                        help='also write the multi-person composite as a small JPEG here (e.g. docs/images/demo.jpg)')
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    models_dir, work_dir = osp.join(REPO, args.models_dir), osp.join(REPO, args.work_dir)
    clock = StageClock()
    with clock.stage('models', f'shipped demo models in {shown(models_dir)}'):
        models, notices, errors = load_shipped_models(models_dir)
        notices += [n for n in (config_mismatch(m, models_dir) for m in models.values()) if n]
        for task, model in models.items():
            print(f'    {task:9s}{shown(model["checkpoint"])}')
        for notice in notices:
            print(f'    NOTICE {notice}')
        for error in errors:
            print(f'    ERROR  {error}')
    with clock.stage('data', 'SynthHumans held-out images (rendered once, then cached)'):
        data_root, data_notices = demo_data(models, args.data_root)
        images, boxes = held_out_images(data_root, args.num_images)
        print(f'    {shown(data_root)}: {len(images)} validation images (multi-person scene: {images[0][0]}, '
              f'{len(boxes.get(images[0][0].rsplit("_", 1)[-1], []))} people)')
        photo = real_photo()
        if photo:
            images.append(photo[0])
            boxes[photo[1]] = [photo[2]]
            print(f'    and a real photo: {shown(photo[0][1])}')
        else:
            data_notices.append(f'scikit-image\'s {REAL_PHOTO[1]} is not installed: no real photo in the pictures')
        for notice in data_notices:
            print(f'    NOTICE {notice}')
        pictures_dir = osp.join(work_dir, 'pictures')
        outputs = demo_outputs(work_dir, pictures_dir, [name for name, _ in images], not args.skip_train)
        guard = checked_outputs(work_dir, outputs, args.overwrite)
    with clock.stage('inference', f'{len(models)} models on {len(images)} images (sapiens2.apis.Sapiens2Inferencer)'):
        frames, inference_tasks = run_models(models, images, boxes)
    with clock.stage('pictures', 'composites [image | pose | body parts | normals | depth | albedo | alpha]'):
        from sapiens2.visualization.composite import composite_picture, write_composites
        paths = write_composites(frames, pictures_dir)
        crowd = composite_picture(*frames[0][1:])
        small = [small_jpeg(crowd, osp.join(work_dir, 'demo.jpg'))]
        if args.readme_picture:
            small.append(small_jpeg(crowd, osp.join(REPO, args.readme_picture)))
        people = None
        print(f'    {len(paths) - 1} composites, the contact sheet, {", ".join(shown(p) for p in small)}')
        if 'people' in frames[0][2]:
            people = people_picture(inference_tasks, frames[0], pictures_dir)
            print(f'    people of {frames[0][0]} [instance masks | 3D skeletons]: {shown(people)}')
    if 'pose' in models:
        kind, num_frames, size = VIDEO_CLIP
        with clock.stage('video', f'pose on a rendered clip ({kind}, {num_frames} frames {size[0]}x{size[1]}), '
                         'tracked and smoothed' + (', its people' if composes_people(models) else '')):
            video_files = video_demo(inference_tasks, work_dir, pictures_dir)
            print('    ' + ', '.join(shown(p) for p in video_files))
    with clock.stage('metrics', 'validation metrics from the model cards'):
        rows = metrics_table(models)
        print(text_table(rows))
        from sapiens2.utils.atomic_save import atomic_write_text
        atomic_write_text(osp.join(work_dir, 'metrics.md'), markdown_table(rows))
        card = next(iter(models.values()))
        print(f'    ({card["data"]["num_val"]} validation images of SynthHumans at {card["data"]["size"]}; '
              f'recompute them: {evaluation_command(models_dir)})')
    trained = None
    if not args.skip_train:
        with clock.stage('training', f'tools/train.py {TRAIN_CONFIG} from scratch, {args.train_iters} iterations'):
            trained = train_and_compare(data_root, osp.join(work_dir, 'train'), args.train_iters)
            comparison = before_after_picture(images[0][1], trained[2:], osp.join(pictures_dir,
                                                                                   'training_before_after.png'))
            print(f'    body parts before and after training: {shown(comparison)}')
    guard.record(path for path in outputs if osp.exists(path))
    print(f'\n==> Done. Stage times: {clock.summary()}')
    if trained:
        print(f'    training works: body-part {TRAIN_METRIC} {trained[0]} untrained -> {trained[1]} after '
              f'{args.train_iters} iterations ({shown(trained[3])})')
    print(f'    metrics table:  {shown(osp.join(work_dir, "metrics.md"))}')
    print(f'    contact sheet:  {shown(paths[-1])}')
    print(f'    pictures:       {shown(pictures_dir)}/*.png (one per image; {frames[0][0]}.png has several people)')
    if people:
        print(f'    people:         {shown(people)} (one mask and 3D skeleton per person; the clip: '
              f'{shown(osp.join(pictures_dir, VIDEO_CLIP[0] + "_people.mp4"))})')
    if errors:
        print('    missing models (their panels are empty):\n      ' + '\n      '.join(errors))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
