"""Re-train the small demo models from scratch on SynthHumans, evaluate them and write their model cards.

Usage: python tools/misc/train_demo_models.py [--tasks pose seg normal pointmap albedo matting] [--threads N] [--jobs N]
       [--out work_dirs/demo_models] [--data-root data/synthhumans_demo] [--skip-train | --shipped | --average DIR...]
       [--mixed]
       [--photo-ratio 0.5 [--photo-folder DIR]] [--patterned-clothes] [--posture-ratio 0.4]

1. Renders the SynthHumans set the demo configs read (``DATA``; reused when it is already there).
2. Trains each task's ``sapiens2_tiny_*_synthhumans-*`` config with ``tools/train.py`` (wall and CPU time measured;
   ``--jobs`` tasks at a time).
3. Writes the last checkpoint as fp16 ``<out>/<config name>.safetensors``; its metadata (``meta``) holds the config
   file's text (``config``), the resolved config (``config_resolved``), the dataset meta and the model card.
4. Evaluates the fp16 checkpoint, the untrained model (the config's init, its seed) and the baselines (``BASELINES``:
   the best constant predictor fitted on training images; for matting also the ground-truth hard mask) on the
   validation split, each in its own process.
5. Writes a model card per checkpoint (``<name>.json`` + ``<name>.md``) and ``<out>/results.{json,md}`` (every task
   with a card in ``--out``).

``--skip-train`` re-evaluates checkpoints already in ``--out``; ``--shipped`` re-evaluates the checkpoints shipped in
``sapiens2/demo_models`` (cards and table into ``--out``; with ``--num-train``/``--num-val`` on a smaller set).
``--bf16`` also evaluates the checkpoint in bf16 (torch autocast, as ``sapiens2-infer --dtype bf16`` runs it; mode
``trained_bf16`` in the card, its headline's change from fp32 printed); ``--int8`` with the backbone's linear layers
in int8 as ``--dtype int8`` runs them on this CPU and the rest in bf16 where the CPU computes it natively, else fp32
(mode ``trained_int8``, :mod:`sapiens2.models.layers.int8_linear`). ``--average DIR
DIR...`` replaces step 2 with the mean of the checkpoints in those folders (a model soup; its card holds each one's
chain). ``--mixed`` trains the mixed-data configs instead (``MIXED_CONFIGS``: SynthHumans with real photos, from the
shipped models); the card names their real data. A rerun after a kill resumes each training from its last checkpoint.
Each step is one child process (``--evaluate`` is the internal entry point of step 4).
"""
import argparse
import json
import os
import os.path as osp
import platform
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
# The SynthHumans set of the demo configs: 2000 training and 200 validation images at 384x288, seed 0, all over
# rendered rooms (--photo-ratio puts a share of them over real photos, docs/synthhumans.md).
DATA = dict(num_train=2000, num_val=200, size=(384, 288), seed=0, photo_ratio=0.0, patterned_clothes=False,
            posture_ratio=0.0)
DEFAULT_DATA_ROOT = 'data/synthhumans_demo'
SHIPPED_DIR = osp.join(REPO, 'sapiens2', 'demo_models')  # where the checkpoints ship (package data)
CONSTANT_FIT_SAMPLES = 64  # training images the dense constant predictors are fitted on
BF16_MODE = 'trained_bf16'  # the checkpoint evaluated under bf16 autocast (--bf16)
INT8_MODE = 'trained_int8'  # ... with the backbone's linear layers in int8 as --dtype int8 runs them (--int8)
PRECISION_MODES = dict(bf16=BF16_MODE, int8=INT8_MODE)  # flag -> mode: the checkpoint in a faster precision
# --init shipped: iterations of training that continue from the shipped checkpoint (peak lr, warm-up), sized so that
# --jobs 2 --threads 1 takes about 45 min of training on 2 cores (pose on one core, the other five on the other).
CONTINUE_ITERS = dict(pose=2400, seg=1500, normal=400, pointmap=400, albedo=400, matting=600)
CONTINUE_LR, CONTINUE_WARMUP = 1e-3, 20
# --mixed: the configs that continue a task's shipped model on SynthHumans mixed with real photos (docs/demo_models.md);
# each sets its sources, shares, schedule and start (load_from), and names its real data in ``real_data``.
MIXED_CONFIGS = dict(pose='configs/pose/sapiens2_tiny_pose_synthhumans-lspet-256x192.py',
                     seg='configs/seg/sapiens2_tiny_seg_synthhumans_ccp_lspet-256x192.py',
                     matting='projects/matting/configs/sapiens2_tiny_matting_synthhumans_ccp_lspet-256x192.py')


def pose_options(root: str) -> Dict[str, str]:
    return {f'{split}_dataloader.dataset.data_root': root for split in ('train', 'val', 'test')}


def seg_options(root: str) -> Dict[str, str]:
    return {f'{split}_dataloader.dataset.data_root': root for split in ('train', 'val', 'test')}


def dense_options(root: str) -> Dict[str, str]:
    return {
        'train_dataloader.dataset.data_root': osp.join(root, 'train'),
        'val_dataloader.dataset.data_root': osp.join(root, 'val'),
        'test_dataloader.dataset.data_root': osp.join(root, 'val'),
    }


@dataclass(frozen=True)
class DemoTask:
    """A demo model: its config, how to point it at another data root, and the metrics its card reports."""
    config: str
    data_options: Callable[[str], Dict[str, str]]
    headline: str  # the metric the issue sets a target for
    target: Tuple[str, object]  # ('>=' or '<=', value), or ('<', baseline mode): below that baseline's value
    reported: Sequence[str] = field(default_factory=tuple)
    imports: Sequence[str] = field(default_factory=tuple)  # project packages that register the task's modules
    baselines: Sequence[str] = ('constant', )  # the baseline modes evaluated beside the model (``BASELINES``)

    def modes(self) -> Tuple[str, ...]:
        return ('trained', 'untrained', *self.baselines)


TASKS: Dict[str, DemoTask] = {
    'pose': DemoTask(
        'configs/pose/sapiens2_tiny_pose_synthhumans-256x192.py', pose_options, 'body/PCK', ('>=', 0.85),
        ('PCK', 'body/PCK', 'foot/PCK', 'face/PCK', 'left_hand/PCK', 'right_hand/PCK', 'coco/AP', 'coco/AP .5',
         'body/coco/AP', 'foot/coco/AP', 'face/coco/AP', 'left_hand/coco/AP', 'right_hand/coco/AP')),
    'seg': DemoTask('configs/seg/sapiens2_tiny_seg_synthhumans-256x192.py', seg_options, 'mIoU', ('>=', 60.0),
                    ('mIoU', 'mAcc', 'aAcc')),
    'normal': DemoTask(
        'projects/normal/configs/sapiens2_tiny_normal_synthhumans-256x192.py', dense_options, 'normal/mean_angle',
        ('<=', 20.0), ('normal/mean_angle', 'normal/median_angle', 'normal/within_11.25_deg',
                       'normal/within_30_deg'), ('sapiens2_normal', )),
    'pointmap': DemoTask(
        'projects/pointmap/configs/sapiens2_tiny_pointmap_synthhumans-256x192.py', dense_options,
        'pointmap/abs_rel', ('<=', 0.08), ('pointmap/abs_rel', 'pointmap/delta_1', 'pointmap/l2_mean',
                                           'pointmap/z_mae', 'pointmap/normal_mean_angle'), ('sapiens2_pointmap', )),
    'albedo': DemoTask(
        'projects/albedo/configs/sapiens2_tiny_albedo_synthhumans-256x192.py', dense_options, 'albedo/mae',
        ('<=', 0.06), ('albedo/mae', 'albedo/rmse', 'albedo/psnr', 'albedo/ssim'), ('sapiens2_albedo', )),
    # The matting target is relative: below the SAD of the ground-truth hard mask (``BASELINES``).
    'matting': DemoTask(
        'projects/matting/configs/sapiens2_tiny_matting_synthhumans-256x192.py', dense_options, 'matting/sad',
        ('<', 'hard_mask'), ('matting/sad', 'matting/mse', 'matting/grad', 'matting/conn', 'matting/sad_unknown',
                             'matting/mse_unknown', 'matting/fg_mse'), ('sapiens2_matting', ),
        ('constant', 'hard_mask')),
}


def continue_options(name: str, checkpoint: str) -> Dict[str, str]:
    """--cfg-options that start from ``checkpoint`` and shorten the config's schedule (warm-up, then linear decay)."""
    iters = CONTINUE_ITERS[name]
    return {'load_from': checkpoint, 'train_cfg.max_iters': str(iters), 'train_cfg.val_interval': str(iters),
            'default_hooks.checkpoint.interval': str(iters), 'optim_wrapper.optimizer.lr': str(CONTINUE_LR),
            'param_scheduler.0.end': str(CONTINUE_WARMUP), 'param_scheduler.1.begin': str(CONTINUE_WARMUP),
            'param_scheduler.1.end': str(iters)}


def file_sha256(path: str) -> str:
    import hashlib
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def config_name(task: DemoTask) -> str:
    return osp.splitext(osp.basename(task.config))[0]


def shown(path: str) -> str:
    """A path relative to the repository when it lies inside it."""
    rel = osp.relpath(path, REPO)
    return path if rel.startswith('..') else rel


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def die_with_parent() -> None:
    """In a child before it runs (Linux): SIGTERM when the thread that started it ends, so that a killed run leaves
    no training behind that a rerun (which resumes in the same work dir) would race."""
    if sys.platform.startswith('linux'):
        import ctypes
        import signal
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def run_child(command: List[str], log_path: str, env: dict) -> Tuple[float, float]:
    """Run ``command`` from the repository root with its output in ``log_path`` (ended with this process, see
    :func:`die_with_parent`); return (wall s, CPU s)."""
    from sapiens2.utils.atomic_save import open_fresh
    wall, cpu = time.time(), children_cpu_s()
    with open_fresh(log_path) as log:
        code = subprocess.call(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=env,
                               preexec_fn=die_with_parent)
    if code != 0:
        with open(log_path) as log:
            tail = log.read()[-3000:]
        raise SystemExit(f'{" ".join(command)} failed (exit code {code}); log {shown(log_path)}:\n{tail}')
    return time.time() - wall, children_cpu_s() - cpu


def option_args(options: Dict[str, str]) -> List[str]:
    return ['--cfg-options', *(f'{key}={value}' for key, value in options.items())] if options else []


# ----------------------------------------------------------------------------------------------- constants
def box_normalised_median(annotations: List[dict]) -> np.ndarray:
    """Per-keypoint median position in box-normalised coordinates over the visible keypoints of COCO annotations,
    (K, 2); 0.5 for a keypoint never visible."""
    positions = []
    for ann in annotations:
        x, y, w, h = ann['bbox']
        kpts = np.asarray(ann['keypoints'], dtype=np.float64).reshape(-1, 3)
        rel = (kpts[:, :2] - [x, y]) / [max(w, 1e-6), max(h, 1e-6)]
        rel[kpts[:, 2] <= 0] = np.nan
        positions.append(rel)
    stacked = np.stack(positions)
    seen = ~np.isnan(stacked).all(axis=0)
    median = np.full(stacked.shape[1:], 0.5)
    median[seen] = np.nanmedian(stacked[:, seen[:, 0]], axis=0).reshape(-1)
    return median


def fit_pose_constant(cfg) -> np.ndarray:
    dataset = cfg.train_dataloader.dataset
    with open(osp.join(dataset.data_root, dataset.ann_file)) as f:
        return box_normalised_median(json.load(f)['annotations'])


def predict_pose_constant(constant: np.ndarray) -> Callable:
    def predict(sample) -> None:
        x1, y1, x2, y2 = np.asarray(sample.gt_instances.bboxes, dtype=np.float64)[0]
        keypoints = np.array([x1, y1]) + constant * np.array([x2 - x1, y2 - y1])
        sample.pred_instances.keypoints = keypoints[None].astype(np.float32)
        sample.pred_instances.keypoint_scores = np.ones((1, len(constant)), dtype=np.float32)
    return predict


def training_samples(cfg, num: int) -> List:
    """The first ``num`` training samples through the validation pipeline (ground truth at the original size)."""
    from mmengine.registry import DATASETS, DefaultScope
    dataset_cfg = cfg.val_dataloader.dataset.copy()
    train = cfg.train_dataloader.dataset
    dataset_cfg.update(data_root=train.data_root, test_mode=True)
    if 'data_prefix' in train:
        dataset_cfg.data_prefix = train.data_prefix
    with DefaultScope.overwrite_default_scope(cfg.default_scope):
        dataset = DATASETS.build(dataset_cfg)
        return [dataset[i]['data_samples'] for i in range(min(num, len(dataset)))]


def pixelwise_mode(labels: np.ndarray, num_classes: int) -> np.ndarray:
    """The most frequent label at each pixel of (N, H, W) label maps, (H, W)."""
    counts = np.stack([(labels == c).sum(0) for c in range(num_classes)])
    return counts.argmax(0).astype(np.int64)


def fit_seg_constant(cfg) -> np.ndarray:
    """The most frequent training label at each pixel (the labels are all at the rendered size), (H, W)."""
    samples = training_samples(cfg, CONSTANT_FIT_SAMPLES)
    return pixelwise_mode(np.stack([s.gt_sem_seg.data[0].numpy() for s in samples]), int(cfg.num_classes))


def predict_seg_constant(constant: np.ndarray) -> Callable:
    import torch
    from mmengine.structures import PixelData

    def predict(sample) -> None:
        shape = sample.gt_sem_seg.data.shape[-2:]
        if tuple(shape) != constant.shape:
            raise ValueError(f'validation labels are {tuple(shape)}, the constant was fitted at {constant.shape}')
        sample.pred_sem_seg = PixelData(data=torch.from_numpy(constant)[None])
    return predict


def masked_values(samples: List) -> np.ndarray:
    """(N, C) ground-truth values under the masks of dense samples."""
    values = [s.gt_dense.data[:, s.gt_dense.mask[0].bool()].T.double().numpy() for s in samples]
    return np.concatenate(values)


def spherical_median(normals: np.ndarray, iterations: int = 50) -> np.ndarray:
    """The unit direction with the least mean angle to (N, 3) directions (Weiszfeld iterations on the sphere)."""
    normals = normals / np.linalg.norm(normals, axis=1, keepdims=True).clip(min=1e-12)
    direction = normals.mean(0)
    for _ in range(iterations):
        direction /= np.linalg.norm(direction)
        angles = np.arccos(np.clip(normals @ direction, -1.0, 1.0)).clip(min=1e-3)
        direction = (normals / angles[:, None]).sum(0)
    return direction / np.linalg.norm(direction)


def abs_rel_optimal_depth(depths: np.ndarray) -> float:
    """The depth d minimising sum |d - z| / z over positive depths z: their 1/z-weighted median."""
    depths = np.sort(np.asarray(depths, dtype=np.float64).ravel())
    weights = np.cumsum(1.0 / depths)
    return float(depths[np.searchsorted(weights, weights[-1] / 2)])


def fit_normal_constant(cfg) -> np.ndarray:
    return spherical_median(masked_values(training_samples(cfg, CONSTANT_FIT_SAMPLES))[::7])


def fit_depth_constant(cfg) -> float:
    return abs_rel_optimal_depth(masked_values(training_samples(cfg, CONSTANT_FIT_SAMPLES))[:, 2])


def fit_albedo_constant(cfg) -> np.ndarray:
    """The colour with the least training MAE: the per-channel median albedo, (3, )."""
    return np.median(masked_values(training_samples(cfg, CONSTANT_FIT_SAMPLES)), axis=0)


def predict_dense_constant(make: Callable) -> Callable:
    from mmengine.structures import PixelData

    def predict(sample) -> None:
        sample.pred_dense = PixelData(data=make(sample))
    return predict


def constant_map(value: np.ndarray) -> Callable:
    import torch

    def make(sample):
        shape = sample.gt_dense.data.shape[-2:]
        return torch.from_numpy(np.asarray(value, dtype=np.float32)).view(-1, 1, 1).expand(-1, *shape).clone()
    return make


def depth_plane(depth: float) -> Callable:
    """A fronto-parallel plane at canonical depth ``depth`` along the ground-truth pixel rays (only depth is
    constant: AbsRel reads Z alone)."""
    import torch

    def make(sample):
        data = sample.gt_dense.data.float()
        rays = data / data[2:].clamp(min=1e-6)
        return torch.where(sample.gt_dense.mask.bool(), rays * depth, torch.zeros_like(data))
    return make


def fit_alpha_constant(cfg) -> np.ndarray:
    """The alpha with the least training SAD at each pixel: the per-pixel median training alpha, (H, W)."""
    return np.median(np.stack([s.gt_dense.data[0].numpy() for s in training_samples(cfg, CONSTANT_FIT_SAMPLES)]),
                     axis=0)


def fit_nothing(cfg) -> None:
    """The hard-mask baseline fits nothing: it reads each sample's ground truth."""
    return None


def predict_alpha(alpha_of: Callable) -> Callable:
    """A matting predictor from ``alpha_of(sample) -> (H, W)`` alpha, with the foreground unknown (NaN, so
    ``matting/fg_mse`` is not scored)."""
    import torch
    from mmengine.structures import PixelData

    def predict(sample) -> None:
        alpha = torch.as_tensor(alpha_of(sample), dtype=torch.float32)[None]
        foreground = torch.full((3, *alpha.shape[-2:]), float('nan'))
        sample.pred_dense = PixelData(data=torch.cat([foreground, alpha]))
    return predict


def predict_alpha_constant(constant: np.ndarray) -> Callable:
    def alpha_of(sample) -> np.ndarray:
        if tuple(sample.gt_dense.data.shape[-2:]) != constant.shape:
            raise ValueError(f'validation alphas are {tuple(sample.gt_dense.data.shape[-2:])}, the constant was '
                             f'fitted at {constant.shape}')
        return constant
    return predict_alpha(alpha_of)


def predict_hard_mask(_) -> Callable:
    """The matting baseline: the ground-truth alpha thresholded at 0.5 (a perfect binary segmentation)."""
    return predict_alpha(lambda sample: (sample.gt_dense.data[0] >= 0.5).float())


# name: (fit on the training split -> a value, value -> per-sample predictor, description for the card)
CONSTANTS = {
    'pose': (fit_pose_constant, predict_pose_constant,
             'each keypoint at its median box-normalised position over the visible training keypoints'),
    'seg': (fit_seg_constant, predict_seg_constant, 'the most frequent training label at each pixel'),
    'normal': (fit_normal_constant, lambda v: predict_dense_constant(constant_map(v)),
               'one direction everywhere: the spherical median of the training normals'),
    'pointmap': (fit_depth_constant, lambda v: predict_dense_constant(depth_plane(v)),
                 'one canonical depth everywhere (the 1/z-weighted median of the training depths) along the '
                 'ground-truth pixel rays'),
    'albedo': (fit_albedo_constant, lambda v: predict_dense_constant(constant_map(v)),
               'one colour everywhere: the per-channel median training albedo'),
    'matting': (fit_alpha_constant, predict_alpha_constant,
                'the most likely alpha at each pixel: the per-pixel median training alpha (no foreground)'),
}
# Baselines by evaluation mode: 'constant' for every task, 'hard_mask' (an oracle binary mask) for matting.
BASELINES = dict(
    constant=CONSTANTS,
    hard_mask=dict(matting=(fit_nothing, predict_hard_mask,
                            'the ground-truth alpha thresholded at 0.5: a perfect hard mask (no foreground)')))


# ----------------------------------------------------------------------------------------------- evaluation
def evaluate(task_name: str, mode: str, checkpoint: Optional[str], data_root: Optional[str], work_dir: str) -> dict:
    """Validation metrics of ``mode``: 'trained', 'untrained' or a baseline (``BASELINES``), in a child process."""
    from mmengine.registry import DefaultScope

    from sapiens2.engine.launch import build_runner, load_config, prepare_test_config
    from sapiens2.utils.devices import autocast_dtype
    task = TASKS[task_name]
    for module in task.imports:
        __import__(module)
    cfg = load_config(osp.join(REPO, task.config), task.data_options(data_root) if data_root else None)
    trained = mode in ('trained', *PRECISION_MODES.values())
    cfg = prepare_test_config(cfg, task.config, checkpoint, work_dir) if trained else cfg
    cfg.work_dir = work_dir
    # MMEngine's test loop autocasts to bf16 on the CPU (not an outer autocast); int8 runs the rest as --dtype int8
    # does: in bf16 where the CPU computes it natively, else in fp32
    if mode == BF16_MODE or (mode == INT8_MODE and autocast_dtype('int8') is not None):
        cfg.test_cfg = dict(cfg.get('test_cfg') or dict(type='TestLoop'), fp16=True)
    cfg.default_hooks.pop('checkpoint', None)
    cfg.default_hooks.pop('visualization', None)
    extra = {}
    with DefaultScope.overwrite_default_scope(cfg.default_scope):
        runner = build_runner(cfg)
        if not trained:
            runner.model.init_weights()
        if mode == INT8_MODE:  # quantized after the checkpoint is loaded (test() then skips loading it)
            runner.load_or_resume()
            runner.model.backbone.quantize_int8(compile=False)
        if mode in BASELINES:
            fit, predictor, description = BASELINES[mode][task_name]
            value = fit(cfg)
            predict = predictor(value)
            test_step = runner.model.test_step

            def constant_test_step(data):
                samples = test_step(data)
                for sample in samples:
                    predict(sample)
                return samples

            runner.model.test_step = constant_test_step
            extra = dict(description=description,
                         value=None if value is None else np.asarray(value).tolist() if np.asarray(value).size <= 8
                         else 'per keypoint/pixel')
        metrics = {k: float(v) for k, v in runner.test().items()}
    if mode in BASELINES:  # a baseline without some output (matting's have no foreground) is not scored on it
        metrics = {k: v for k, v in metrics.items() if np.isfinite(v)}
    return dict(metrics=metrics, **extra)


# ----------------------------------------------------------------------------------------------- model files
def model_summary(cfg) -> dict:
    backbone = cfg.model.backbone
    from sapiens2.models.backbones.sapiens2 import resolve_arch
    return dict(backbone=dict(arch=backbone.arch, **resolve_arch(backbone.arch)), input_size_hw=list(backbone.img_size),
                patch_size=backbone.patch_size)


def write_checkpoint(task_name: str, work_dir: str, path: str, card: dict) -> dict:
    """The last training checkpoint of ``work_dir`` as fp16 .safetensors with the config and card in its meta."""
    import torch
    from mmengine.config import Config

    from sapiens2.engine.checkpoint import read_checkpoint_file, save_weights, serialisable_meta
    with open(osp.join(work_dir, 'last_checkpoint')) as f:
        last = f.read().strip()
    checkpoint = read_checkpoint_file(last if osp.isabs(last) else osp.join(REPO, last))
    state_dict = {k: v.half() if v.is_floating_point() else v for k, v in checkpoint['state_dict'].items()}
    task = TASKS[task_name]
    with open(osp.join(REPO, task.config)) as f:
        config_text = f.read()
    dataset_meta = serialisable_meta({'dataset_meta': checkpoint.get('meta', {}).get('dataset_meta')})
    meta = dict(config=config_text, config_path=task.config,
                config_resolved=Config.fromfile(osp.join(REPO, task.config)).pretty_text, model_card=card,
                **{k: v for k, v in dataset_meta.items() if v is not None})
    save_weights(state_dict, path, meta=meta)
    return dict(parameters=int(sum(v.numel() for v in state_dict.values() if torch.is_tensor(v))),
                file_bytes=osp.getsize(path), source_checkpoint=shown(last))


def average_into(work_dir: str, stems: List[str]) -> List[dict]:
    """Writes the mean of the checkpoints ``<stem>.safetensors`` into ``work_dir`` as its last checkpoint (what
    :func:`write_checkpoint` reads); returns them as the card's ``init['average_of']``, each with its card's chain."""
    from sapiens2.engine.checkpoint import average_checkpoints, save_checkpoint
    from sapiens2.utils.atomic_save import atomic_write_text
    paths = [f'{stem}.safetensors' for stem in stems]
    averaged = average_checkpoints(paths)
    path = osp.join(work_dir, 'averaged.safetensors')
    save_checkpoint(averaged['state_dict'], {k: v for k, v in averaged['meta'].items() if k == 'dataset_meta'}, path)
    atomic_write_text(osp.join(work_dir, 'last_checkpoint'), path)
    parents = []
    for stem, source in zip(stems, paths):
        with open(f'{stem}.json') as f:
            card = json.load(f)
        parents.append(dict(checkpoint=shown(source), sha256=file_sha256(source),
                            its_card={key: card.get(key) for key in CHAIN_KEYS}))
    return parents


def restamp_card(path: str, card: dict) -> None:
    """Rewrites the card in the metadata of the checkpoint ``path`` (same weights, same other metadata)."""
    from sapiens2.engine.checkpoint import read_checkpoint_file, save_weights
    checkpoint = read_checkpoint_file(path)
    save_weights(checkpoint['state_dict'], path, meta=dict(checkpoint['meta'], model_card=card))


def card_markdown(card: dict) -> str:
    lines = [f'# {card["name"]}', '', f'Task: {card["task"]}. Config: `{card["config"]}`. '
             f'Backbone: {card["model"]["backbone"]}, input {card["model"]["input_size_hw"]} (H, W), '
             f'{card["checkpoint"]["parameters"]:,} parameters, fp16 file of '
             f'{card["checkpoint"]["file_bytes"] / 1e6:.2f} MB.', '',
             f'{"Data of the last training of checkpoint 1 below" if averaged(card) else "Data"}: SynthHumans '
             f'(renderer {card["data"]["renderer_version"]}), {card["data"]["num_train"]} '
             f'training and {card["data"]["num_val"]} validation images at {card["data"]["size"]} (H, W), seed '
             f'{card["data"]["seed"]}{data_text(card["data"])}; training samples: '
             f'{card["data"]["train_samples"]}.', *real_data_text(card["data"]), '', training_text(card), '',
             *init_markdown(card['init']), '',
             *(f'Baseline {mode}: {card["baselines"][mode]["description"]}.' for mode in card['baselines']), '',
             *evaluation_text(card), *metrics_table(card)]
    lines += ['', f'Target: {card["headline"]} {target_text(card)}: '
              f'{"reached" if card["target_reached"] else "not reached"}.', '']
    return '\n'.join(lines)


def real_data_text(data: dict) -> List[str]:
    """The real photos a mixed-data training added (``--mixed``: the config's ``real_data``), for the card."""
    return ['', f'Real photos mixed in: {data["real_data"]}.'] if data.get('real_data') else []


def last_checkpoint(work_dir: str) -> Optional[str]:
    """The checkpoint a training in ``work_dir`` would resume from (None for a new one)."""
    path = osp.join(work_dir, 'last_checkpoint')
    if not osp.isfile(path):
        return None
    with open(path) as f:
        return f.read().strip() or None


def averaged(card: dict) -> bool:
    """Whether the card's checkpoint is the mean of others (``--average``) rather than trained."""
    return bool(card['training'].get('averaged'))


def training_text(card: dict) -> str:
    training = card['training']
    if averaged(card):
        return (f'Made without training of its own: `{card["command"]}` averaged {training["averaged"]} checkpoints '
                f'in {training["wall_s"]:.0f} s on {training["machine"]}.')
    resumed = (f' (resumed from `{training["resumed_from"]}`: the times are of this run alone)'
               if training.get('resumed_from') else '')
    return (f'Training: `{card["command"]}` (seed {card["seed"]}, {training["iterations"]} iterations, '
            f'batch {training["batch_size"]}), {training["wall_s"]:.0f} s wall, {training["cpu_s"]:.0f} s CPU, '
            f'{training["threads"]} thread(s), load average {training["load_average"]} on {training["machine"]}'
            f'{resumed}.')


def same_set(a: dict, b: dict) -> bool:
    """Whether two cards' data records describe the same rendered set (the keys of ``DATA``)."""
    return all(a.get(key) == b.get(key) for key in [*DATA, 'root'] if key != 'size')  # size: a tuple or a list


def evaluation_text(card: dict) -> List[str]:
    """The set the metrics below come from, where it is not the training set (``--shipped``, ``--skip-train``)."""
    data = card.get('evaluation_data')
    if not data:
        return []
    return [f'Evaluated on the {data["num_val"]} validation images of `{data["root"]}` (seed {data["seed"]}'
            f'{data_text(data)}).', '']


CHAIN_KEYS = ('command', 'data', 'training', 'init')  # what a card keeps of the card of each checkpoint it starts from
CHAIN_HEADER = ['| checkpoint (sha256) | iterations | CPU s | data |', '|---|---|---|---|']


def chain_rows(node: dict) -> Tuple[List[Tuple[str, str]], object]:
    """The checkpoint ``node`` names and those its training continued from, newest first, as (sha256, table row)
    each; and where the chain starts (e.g. 'random')."""
    rows = []
    while isinstance(node, dict) and 'checkpoint' in node:
        made = node.get('its_card') or {}
        training = made.get('training') or {}
        data = made.get('data') or {}
        text = data_text(data).lstrip(', ') or 'rendered rooms'
        if (data.get('num_train'), data.get('seed')) not in ((None, None), (DATA['num_train'], DATA['seed'])):
            text = f'{data["num_train"]} images, seed {data["seed"]}; {text}'  # another set than the demo one
        if training.get('averaged'):
            text = f'the mean of {training["averaged"]} checkpoints (its card)'
        cpu = f'{training["cpu_s"]:.0f}' if training.get('cpu_s') else '?'
        rows.append((node['sha256'], f'| `{node["checkpoint"]}` ({node["sha256"][:12]}) | '
                     f'{training.get("iterations", "?")} | {cpu} | {text} |'))
        node = made.get('init')
    if isinstance(node, dict):  # the checkpoint of the last row is a mean (--average); its card lists the chains
        node = f'the mean of {len(node.get("average_of", []))} checkpoints (their chains are in the last row\'s card)'
    return rows, node


def trainings(init) -> Dict[str, Optional[float]]:
    """sha256 -> CPU s (None: not measured) of every checkpoint ``init`` goes back to, through means too."""
    found = {}
    for node in init.get('average_of', [init]) if isinstance(init, dict) else []:
        if 'checkpoint' in node:
            made = node.get('its_card') or {}
            found[node['sha256']] = (made.get('training') or {}).get('cpu_s') or None
            found.update(trainings(made.get('init')))
        else:
            found.update(trainings(node))
    return found


def init_markdown(init) -> List[str]:
    """The card's ``init`` as Markdown: random, the chain of checkpoints it continues from (a table, newest first,
    each with the training that made it), or the checkpoints it averages (a chain each), and the CPU time of all
    the trainings before it (each counted once)."""
    if not isinstance(init, dict):
        return [f'Init: {init}.']
    chains = [chain_rows(parent) for parent in init.get('average_of', [init])]
    counted = trainings(init)
    hours = ('at least ' if None in counted.values() else '') + \
        f'{sum(cpu or 0.0 for cpu in counted.values()) / 3600:.1f} CPU hours'
    if 'average_of' in init:
        return [f'Init: the mean of the weights of the {len(chains)} checkpoints below (a uniform model soup, summed '
                f'in fp32); the trainings that made them took {hours}, starting from {chains[0][1]}.',
                *average_tables(chains)]
    rows = [row for _, row in chains[0][0]]
    chain = 'that training' if len(rows) == 1 else f'these {len(rows)} trainings, each from the next row,'
    return [f'Init: continued (peak lr {init["lr"]:g}, {init["warmup_iters"]} warm-up iterations) from the first '
            f'checkpoint below; {chain} took {hours} before this one, starting from {chains[0][1]}.',
            '', *CHAIN_HEADER, *rows]


def average_tables(chains: List[Tuple[list, object]]) -> List[str]:
    """A chain table per averaged checkpoint; where a chain reaches a row already listed, it refers to that table."""
    lines, listed_in = [], {}  # sha256 -> the checkpoint whose table lists it
    for number, (rows, _) in enumerate(chains, 1):
        cut = next((i for i, (sha, _) in enumerate(rows) if sha in listed_in), len(rows))
        lines += ['', f'Checkpoint {number} and the trainings it continues, newest first:', '', *CHAIN_HEADER,
                  *(row for _, row in rows[:cut])]
        if cut < len(rows):
            lines += ['', f'... then the rows of checkpoint {listed_in[rows[cut][0]]} from {rows[cut][0][:12]} on.']
        listed_in.update({sha: number for sha, _ in rows[:cut]})
    return lines


def data_text(data: dict) -> str:
    """How much of the set is over real photos, whether the clothes are patterned and how many people sit, crouch or
    bend (docs/synthhumans.md), for the card; nothing for plain rooms, clothes and standing people."""
    ratio = data.get('photo_ratio', 0.0)
    people = ', patterned clothes' if data.get('patterned_clothes') else ''
    if data.get('posture_ratio'):
        people += f', {data["posture_ratio"]:.0%} of the people sitting, crouching or bending'
    if not ratio:
        return people
    photos = data.get('photo_folder') or 'the package photos'
    return f', {ratio:.0%} of the images over real photos ({photos})' + people


def metrics_table(card: dict) -> List[str]:
    """Markdown rows: every reported metric of the trained model (also in bf16 / int8 with ``--bf16`` /
    ``--int8``), the untrained one and the baselines."""
    faster = {name: mode for name, mode in PRECISION_MODES.items() if mode in card['metrics']}
    modes = ('trained', *faster.values(), 'untrained', *card['baselines'])
    runs = ''.join(f'trained, run in {name} | ' for name in faster)
    lines = ['| metric | trained (fp16) | ' + runs + 'untrained | ' +
             ' | '.join(m.replace('_', ' ') for m in card['baselines']) + ' |', '|---|' + '---|' * (len(modes))]
    for name in card['reported']:
        row = [card['metrics'][which].get(name) for which in modes]
        lines.append(f'| {name} | ' + ' | '.join('-' if v is None else f'{v:.4g}' for v in row) + ' |')
    return lines


def target_text(card: dict) -> str:
    op, value = card['target']
    if value in BASELINES:
        return f'{op} {value.replace("_", " ")} ({card["metrics"][value][card["headline"]]:.4g})'
    return f'{op} {value}'


def training_times(card: dict) -> str:
    training = card['training']
    return 'none (averaged)' if averaged(card) else f'{training["wall_s"]:.0f} s / {training["cpu_s"]:.0f} s'


def results_markdown(cards: List[dict]) -> str:
    lines = ['| task | metric | trained | untrained | constant | target | reached | train wall / CPU | command |',
             '|---|---|---|---|---|---|---|---|---|']
    for card in cards:
        values = [card['metrics'][w].get(card['headline']) for w in ('trained', 'untrained', 'constant')]
        lines.append(f'| {card["task"]} | {card["headline"]} | ' + ' | '.join(f'{v:.4g}' for v in values) +
                     f' | {target_text(card)} | {"yes" if card["target_reached"] else "no"} | '
                     f'{training_times(card)} | `{card["command"]}` |')
    for card in cards:
        lines += ['', f'### {card["task"]} (`{card["config"]}`)', '', *metrics_table(card)]
    return '\n'.join(lines) + '\n'


# ----------------------------------------------------------------------------------------------- main
def train_samples(task_name: str, data_root: str, data: dict) -> str:
    if task_name == 'pose':
        with open(osp.join(data_root, 'annotations', 'keypoints308_train.json')) as f:
            return f'{len(json.load(f)["annotations"])} person crops of {data["num_train"]} images'
    return f'{data["num_train"]} images'


def process_task(name: str, args, env: dict, data_root: str, data_s: float, data: dict) -> dict:
    from mmengine.config import Config

    from sapiens2.datasets.synthhumans import RENDERER_VERSION
    task = TASKS[name]
    cfg = Config.fromfile(osp.join(REPO, task.config))
    stem = config_name(task)
    work_dir = osp.join(args.out, 'train', stem)
    # --mixed configs name their own sources; --data-root is then the SynthHumans set they are evaluated on
    options = task.data_options(shown(data_root)) if args.data_root != DEFAULT_DATA_ROOT and not args.mixed else {}
    shipped_start = osp.join(args.start_dir, f'{stem}.safetensors')
    if args.init == 'shipped':
        with open(osp.join(args.start_dir, f'{stem}.json')) as f:
            start_card = json.load(f)
        options.update(continue_options(name, shown(shipped_start)))
    train_config = MIXED_CONFIGS[name] if args.mixed else task.config
    # --resume: a rerun after a kill goes on from the last checkpoint (one at the end: nothing left to train)
    train_cmd = ['tools/train.py', train_config, '--work-dir', shown(work_dir), '--resume', *option_args(options)]
    source = SHIPPED_DIR if args.shipped else args.out
    checkpoint = osp.join(source, f'{stem}.safetensors')
    card_path = osp.join(args.out, f'{stem}.json')
    os.makedirs(work_dir, exist_ok=True)
    if args.skip_train or args.shipped:
        with open(osp.join(source, f'{stem}.json')) as f:
            card = json.load(f)
    elif args.average:
        print(f'==> {name}: averaging the checkpoints of {", ".join(map(shown, args.average))}', flush=True)
        load, began, cpu_began = os.getloadavg()[0], time.time(), time.process_time()
        parents = average_into(work_dir, [osp.join(folder, stem) for folder in args.average])
        card = dict(
            name=stem, task=name, config=task.config, model=model_summary(cfg), seed=cfg.randomness.seed,
            command='python ' + ' '.join([shown(sys.argv[0]), *sys.argv[1:]]), data=parents[0]['its_card']['data'],
            training=dict(iterations=0, averaged=len(parents), wall_s=round(time.time() - began, 1),
                          cpu_s=round(time.process_time() - cpu_began, 1),
                          load_average=f'{load:.1f} -> {os.getloadavg()[0]:.1f}',
                          machine=f'{platform.machine()}, {os.cpu_count()} cores', torch=_torch_version()),
            init=dict(average_of=parents))
        card['checkpoint'] = write_checkpoint(name, work_dir, checkpoint, card)
    else:
        print(f'==> {name}: training {train_config}', flush=True)
        load, resumed = os.getloadavg()[0], last_checkpoint(work_dir)
        wall, cpu = run_child([sys.executable, *train_cmd], osp.join(work_dir, 'train.log'), env)
        print(f'    {name}: trained in {wall:.0f} s wall, {cpu:.0f} s CPU', flush=True)
        card = dict(
            name=stem, task=name, config=task.config, model=model_summary(cfg), seed=cfg.randomness.seed,
            command=(f'OMP_NUM_THREADS={env["OMP_NUM_THREADS"]} ' if 'OMP_NUM_THREADS' in env else '') +
            'python ' + ' '.join(train_cmd),
            data=dict(data, size=list(data['size']), root=shown(data_root), renderer_version=RENDERER_VERSION,
                      train_samples=train_samples(name, data_root, data), render_s=round(data_s, 1),
                      **({'real_data': Config.fromfile(osp.join(REPO, train_config)).real_data} if args.mixed
                         else {})),
            training=dict(iterations=CONTINUE_ITERS[name] if args.init == 'shipped' else
                          Config.fromfile(osp.join(REPO, train_config)).train_cfg.max_iters,
                          batch_size=cfg.train_dataloader.batch_size,
                          wall_s=round(wall, 1), cpu_s=round(cpu, 1),
                          threads=env.get('OMP_NUM_THREADS', f'default ({os.cpu_count()} cores)'),
                          load_average=f'{load:.1f} -> {os.getloadavg()[0]:.1f}',
                          machine=f'{platform.machine()}, {os.cpu_count()} cores', torch=_torch_version(),
                          **({'resumed_from': shown(resumed)} if resumed else {})))
        card['checkpoint'] = write_checkpoint(name, work_dir, checkpoint, card)
    if args.skip_train or args.shipped or args.average:
        evaluation = dict(data, size=list(data['size']), root=shown(data_root))
        if args.shipped or not same_set(evaluation, card['data']):  # its training record, evaluated on this data
            card['evaluation_data'] = evaluation
        else:
            card.pop('evaluation_data', None)
    elif args.mixed:
        mixed = Config.fromfile(osp.join(REPO, train_config))
        start = osp.join(REPO, mixed.load_from)
        with open(osp.splitext(start)[0] + '.json') as f:
            start_card = json.load(f)
        card['init'] = dict(checkpoint=shown(start), sha256=file_sha256(start), lr=mixed.optim_wrapper.optimizer.lr,
                            warmup_iters=mixed.param_scheduler[0].end,
                            its_card={key: start_card.get(key) for key in CHAIN_KEYS})
    else:
        card['init'] = ('random (from scratch); see docs/pretraining.md' if args.init == 'scratch' else
                        dict(checkpoint=shown(shipped_start), sha256=file_sha256(shipped_start), lr=CONTINUE_LR,
                             warmup_iters=CONTINUE_WARMUP,
                             its_card={key: start_card.get(key) for key in CHAIN_KEYS}))
    card['metrics'], card['baselines'] = {}, {}
    faster = tuple(mode for name, mode in PRECISION_MODES.items() if getattr(args, name))
    for mode in task.modes() + faster:
        print(f'==> {name}: evaluating the {mode} model', flush=True)
        result_path = osp.join(work_dir, f'eval_{mode}.json')
        command = [sys.executable, osp.abspath(__file__), '--evaluate', name, mode, '--result', result_path,
                   '--checkpoint', checkpoint, '--data-root', data_root, '--out', args.out]
        wall, cpu = run_child(command, osp.join(work_dir, f'eval_{mode}.log'), env)
        with open(result_path) as f:
            result = json.load(f)
        card['metrics'][mode] = result['metrics']
        if mode in BASELINES:
            card.setdefault('baselines', {})[mode] = dict(description=result['description'], value=result['value'])
        card.setdefault('evaluation_s', {})[mode] = dict(wall_s=round(wall, 1), cpu_s=round(cpu, 1))
    card.update(headline=task.headline, target=list(task.target), reported=list(task.reported))
    trained = card['metrics']['trained'][task.headline]
    card['target_reached'] = target_reached(task, card['metrics'])
    from sapiens2.utils import strict_json
    from sapiens2.utils.atomic_save import atomic_write_text
    atomic_write_text(card_path, strict_json.dumps(card, indent=1))
    if not (args.skip_train or args.shipped):  # the card in the checkpoint gets the metrics too (and its new size)
        card['checkpoint'] = write_checkpoint(name, work_dir, checkpoint, card)
        atomic_write_text(card_path, strict_json.dumps(card, indent=1))
    elif args.skip_train:  # re-evaluated: the checkpoint in --out carries the new card
        restamp_card(checkpoint, card)
    atomic_write_text(osp.join(args.out, f'{stem}.md'), card_markdown(card))
    untrained, constant = (card['metrics'][mode][task.headline] for mode in ('untrained', 'constant'))
    print(f'    {name}: {task.headline}: trained {trained:.4g}, untrained {untrained:.4g}, constant {constant:.4g} '
          f'(target {" ".join(map(str, task.target))})', flush=True)
    for precision, mode in PRECISION_MODES.items():
        if mode in faster:
            value = card['metrics'][mode][task.headline]
            print(f'    {name}: {task.headline}: {precision} {value:.4g} vs fp32 {trained:.4g} '
                  f'({relative_change(value, trained):+.2%} relative)', flush=True)
    return card


def relative_change(value: float, reference: float) -> float:
    """(value - reference) / |reference| (0 when both are 0)."""
    return 0.0 if value == reference else (value - reference) / abs(reference) if reference else float('inf')


def target_reached(task: DemoTask, metrics: Dict[str, Dict[str, float]]) -> bool:
    """Whether the trained model's headline metric meets the task's target (``metrics``: by mode)."""
    op, value = task.target
    trained = metrics['trained'][task.headline]
    if value in BASELINES:
        value = metrics[value][task.headline]
    return bool(trained >= value if op == '>=' else trained <= value if op == '<=' else trained < value)


def _torch_version() -> str:
    import torch
    return torch.__version__


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Re-train the small SynthHumans demo models from scratch')
    parser.add_argument('--tasks', nargs='+', choices=sorted(TASKS), default=list(TASKS))
    parser.add_argument('--out', default='work_dirs/demo_models', help='checkpoints, model cards and training runs')
    parser.add_argument('--data-root', default=DEFAULT_DATA_ROOT, help='where the SynthHumans set is rendered')
    parser.add_argument('--threads', type=int, default=None, help='OMP_NUM_THREADS of the children (default: unset)')
    parser.add_argument('--jobs', type=int, default=1,
                        help='tasks trained and evaluated at the same time (e.g. --jobs 2 --threads 1 on 2 cores)')
    parser.add_argument('--init', choices=('scratch', 'shipped'), default='scratch',
                        help='train from scratch on the config\'s schedule, or continue from the shipped checkpoint '
                        f'for a shorter one ({CONTINUE_ITERS} iterations)')
    parser.add_argument('--start-dir', default=SHIPPED_DIR,
                        help='--init shipped: the folder of the checkpoints and cards to continue from (default: the '
                        'shipped ones; e.g. the --out of an earlier run)')
    parser.add_argument('--mixed', action='store_true',
                        help='train the mixed-data configs (SynthHumans with real photos, MIXED_CONFIGS), which '
                        'continue the shipped models; pose, seg and matting')
    parser.add_argument('--skip-train', action='store_true', help='re-evaluate the checkpoints already in --out')
    parser.add_argument('--average', nargs='+', metavar='DIR',
                        help='instead of training, average the checkpoints of these folders (two or more, each with '
                        'its card: the shipped folder or the --out of earlier runs) and evaluate the mean')
    parser.add_argument('--shipped', action='store_true',
                        help=f'evaluation only: re-compute the cards and the results table of the shipped checkpoints '
                             f'({shown(SHIPPED_DIR)}) into --out')
    parser.add_argument('--bf16', action='store_true',
                        help='also evaluate the checkpoint in bf16 (torch autocast; needs a CPU with native bf16 to '
                        'be fast), as mode trained_bf16 in the card')
    parser.add_argument('--int8', action='store_true',
                        help='also evaluate the checkpoint with the backbone\'s linear layers in int8 as --dtype int8 '
                        'runs them on this CPU, as mode trained_int8 in the card')
    parser.add_argument('--num-train', type=int, default=DATA['num_train'], help='training images to render')
    parser.add_argument('--num-val', type=int, default=DATA['num_val'], help='validation images to render')
    parser.add_argument('--seed', type=int, default=DATA['seed'],
                        help='seed of the rendered set: another seed gives other people, poses and scenes')
    parser.add_argument('--photo-ratio', type=float, default=DATA['photo_ratio'],
                        help='share of the images over real photos (make_synthhumans.py --photo-ratio)')
    parser.add_argument('--photo-folder', default=None, help='scene photos of your own (no people) for --photo-ratio')
    parser.add_argument('--patterned-clothes', action='store_true',
                        help='prints and folds on the garments (make_synthhumans.py --patterned-clothes)')
    parser.add_argument('--posture-ratio', type=float, default=DATA['posture_ratio'],
                        help='share of the people who sit, crouch or bend (make_synthhumans.py --posture-ratio)')
    parser.add_argument('--evaluate', nargs=2, metavar=('TASK', 'MODE'), help=argparse.SUPPRESS)
    parser.add_argument('--checkpoint', help=argparse.SUPPRESS)
    parser.add_argument('--result', help=argparse.SUPPRESS)
    return parser.parse_args()


def check_source_folders(args: argparse.Namespace) -> None:
    """One line before any work unless every folder the run starts from (``--average``, or ``--start-dir`` with
    ``--init shipped``) holds a checkpoint and a card of every task, and ``--mixed`` goes with what it trains."""
    if args.mixed and (set(args.tasks) - set(MIXED_CONFIGS) or args.init != 'scratch' or args.average):
        raise SystemExit(f'--mixed trains {", ".join(MIXED_CONFIGS)} from their shipped models (their configs set '
                         'the start): choose --tasks among them, without --init or --average')
    if args.average:
        if args.skip_train or args.shipped:
            raise SystemExit('--average makes a new checkpoint; it does not go with --skip-train or --shipped')
        if len(args.average) < 2:
            raise SystemExit(f'--average needs two or more folders, got {shown(args.average[0])}')
        flag, folders = '--average', args.average
    elif args.init == 'shipped' and not (args.skip_train or args.shipped):
        flag, folders = '--start-dir', [args.start_dir]
    else:
        return
    for folder in folders:
        for name in args.tasks:
            for suffix in ('.safetensors', '.json'):
                path = osp.join(folder, config_name(TASKS[name]) + suffix)
                if not osp.isfile(path):
                    raise SystemExit(f'{flag} {shown(folder)}: {shown(path)} is missing; give folders that hold '
                                     'the checkpoint and card of every --tasks task (the shipped folder or the --out '
                                     'of an earlier run)')


def main() -> int:
    args = parse_args()
    args.out = osp.join(REPO, args.out)
    data_root = osp.join(REPO, args.data_root)
    from sapiens2.utils import strict_json
    from sapiens2.utils.atomic_save import atomic_write_text
    if args.evaluate:
        task, mode = args.evaluate
        result = evaluate(task, mode, args.checkpoint, data_root, osp.join(args.out, 'eval', task, mode))
        atomic_write_text(args.result, strict_json.dumps(result, indent=1))
        return 0
    check_source_folders(args)
    if osp.realpath(args.out) == osp.realpath(SHIPPED_DIR):
        raise SystemExit(f'--out {shown(args.out)} is the shipped folder: write to another folder and copy the files '
                         'there by hand')
    env = dict(os.environ)
    if args.threads:
        env['OMP_NUM_THREADS'] = str(args.threads)
    start = time.time()
    data = dict(DATA, num_train=args.num_train, num_val=args.num_val, seed=args.seed,
                photo_ratio=args.photo_ratio, patterned_clothes=args.patterned_clothes,
                posture_ratio=args.posture_ratio)
    if args.photo_folder:
        data['photo_folder'] = args.photo_folder
    print(f'==> SynthHumans in {shown(data_root)} ({data})', flush=True)
    from sapiens2.datasets.synthhumans import ensure_synthhumans
    ensure_synthhumans(root=data_root, **data)
    data_s = time.time() - start
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:  # each task's steps are child processes
        for future in [pool.submit(process_task, name, args, env, data_root, data_s, data) for name in args.tasks]:
            future.result()
    # The table covers every task with a card in --out, so runs of a few --tasks each add up.
    cards = []
    for name in TASKS:
        card_path = osp.join(args.out, f'{config_name(TASKS[name])}.json')
        if osp.isfile(card_path):
            with open(card_path) as f:
                cards.append(json.load(f))
    table = results_markdown(cards)
    atomic_write_text(osp.join(args.out, 'results.md'), table)
    atomic_write_text(osp.join(args.out, 'results.json'), strict_json.dumps(cards, indent=1))
    print(f'\n==> Done in {(time.time() - start) / 60:.1f} min (data {data_s:.0f} s)\n{table}')
    print(f'    checkpoints and model cards: {shown(args.out)}/')
    return 0


if __name__ == '__main__':
    sys.exit(main())
