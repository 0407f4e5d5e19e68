"""The jobs (``--job``): rendering the data, one pretraining run, the probes of one backbone; each writes its
cells and is skipped when they exist."""
import dataclasses
import glob
import json
import os
import os.path as osp
import subprocess
import sys
import time

from . import (
    BACKBONES,
    CONFIG,
    FINETUNE,
    FINETUNE_RUNS,
    HEALTH_KEYS,
    LEVERS,
    REFERENCES,
    ROOT,
    SEMANTIC_BUDGETS,
    SEMANTIC_FEATURES,
    TASKS,
    VARIANTS,
    Setting,
    _config,
    model_options,
    variant_iters,
)
from .cells import (
    backbone_file,
    cpu_seconds,
    data_roots,
    finetune_json,
    lever_checkpoint,
    pretrain_json,
    probe_json,
    semantic_json,
    write_json,
)
from .pretrainers import quiet_mmengine


def ensure_data(setting: Setting) -> None:
    """Renders the unlabeled RGB-only set and the labeled probe set, or reuses them."""
    from sapiens2.datasets.synthhumans import ensure_synthhumans
    unlabeled, labeled = data_roots(setting)
    ensure_synthhumans(unlabeled, rgb_only=True, **dict(setting.unlabeled, size=tuple(setting.unlabeled['size'])))
    ensure_synthhumans(labeled, **dict(setting.labeled, size=tuple(setting.labeled['size'])))


def job_data(args) -> None:
    """Renders (or reuses) the unlabeled RGB-only set and the labeled probe set."""
    from sapiens2.datasets.synthhumans import RENDERER_VERSION
    path = osp.join(args.results, 'data.json')
    if osp.isfile(path):
        return
    start, cpu = time.perf_counter(), cpu_seconds()
    s = args.setting
    ensure_data(s)
    write_json(path, dict(unlabeled=dict(s.unlabeled, rgb_only=True), labeled=s.labeled,
                           renderer_version=RENDERER_VERSION, cpu_s=cpu_seconds() - cpu,
                           wall_s=time.perf_counter() - start))


def pretrain_command(args, variant: str, seed: int, work_dir: str | None = None,
                     weights: dict | None = None, extra: tuple = ()) -> list[str]:
    """``tools/train.py`` command of a variant's run (``weights``, ``extra`` options: a lever's changes)."""
    s = args.setting
    unlabeled, _ = data_roots(s)
    weights = weights or VARIANTS[variant]['weights']
    iters = variant_iters(s, variant)
    options = [f'model.loss_weights.{k}={v}' for k, v in weights.items()] + VARIANTS[variant]['options'] + [
        f'randomness.seed={seed}', f'train_cfg.max_iters={iters}',
        f'train_dataloader.dataset.data_root={osp.join(unlabeled, "train", "rgb")}',
        f'param_scheduler.0.end={s.warmup}', f'param_scheduler.1.begin={s.warmup}',
        f'param_scheduler.1.T_max={iters - s.warmup}', f'param_scheduler.1.end={iters}',
        f'model.dino_loss.warmup_iters={s.warmup}', f'default_hooks.checkpoint.interval={iters}',
        'default_hooks.logger.interval=10' if iters >= 50 else 'default_hooks.logger.interval=2',
    ] + s.extra_options + list(extra)
    work_dir = work_dir or osp.join(args.work_dir, f'{variant}-s{seed}')
    return [sys.executable, 'tools/train.py', CONFIG, '--work-dir', work_dir, '--cfg-options', *options]


def _logged_rows(work_dir: str) -> list[dict]:
    """The rows of the last run's ``scalars.json`` under a training work dir."""
    files = sorted(glob.glob(osp.join(work_dir, '*', 'vis_data', 'scalars.json')))
    if not files:
        raise FileNotFoundError(f'no scalars.json under {work_dir}: did the training run fail?')
    with open(files[-1]) as f:
        return [json.loads(line) for line in f]


def scalars(work_dir: str) -> list[dict]:
    return [dict(iter=r['iter'], **{k: r[k] for k in HEALTH_KEYS if k in r}) for r in _logged_rows(work_dir)
            if 'loss' in r]


def job_pretrain(args, variant: str, seed: int) -> None:
    from sapiens2_pretrain.export import export_backbone
    s = args.setting
    work_dir = osp.join(args.work_dir, f'{variant}-s{seed}')
    command = pretrain_command(args, variant, seed)
    os.makedirs(args.work_dir, exist_ok=True)
    start, cpu = time.perf_counter(), cpu_seconds()
    with open(osp.join(args.work_dir, f'{variant}-s{seed}.log'), 'w') as log:
        subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=True)
    checkpoint = osp.join(work_dir, f'iter_{variant_iters(s, variant)}.pth')
    export_backbone(checkpoint, backbone_file(args, variant, seed), source='teacher')
    write_json(pretrain_json(args, variant, seed), dict(
        variant=variant, seed=seed, loss_weights=VARIANTS[variant]['weights'], iters=variant_iters(s, variant),
        config=CONFIG,
        command=' '.join(c.replace(ROOT + os.sep, '') for c in command[1:]),  # repository-relative paths
        cpu_s=cpu_seconds() - cpu, wall_s=time.perf_counter() - start, log=scalars(work_dir)))


def _probe_settings(args, seed: int, budget: int):
    from sapiens2_pretrain.dense_probe import ProbeSettings
    return ProbeSettings(**dict(args.setting.probe, steps=args.setting.steps[budget], num_train=budget, seed=seed))


def _features(args, backbone: str, seed: int, kinds: tuple = ('dense', )) -> dict:
    """{kind: (train, val)} features of the labeled set for one probed backbone, the images loaded and the backbone
    built once: ``dense`` feature maps, ``cls`` [CLS] tokens (the fixed references have ``dense`` only)."""
    from sapiens2_pretrain.dense_probe import (
        extract_cls_features,
        extract_features,
        label_features,
        load_images,
        pixel_features,
    )
    _, labeled = data_roots(args.setting)
    size = tuple(args.setting.probe['size'])
    stride = 8  # the tiny backbone's patch size: every probed feature map is on the same 16x12 grid
    if backbone == 'labels':
        return dict(dense=tuple(label_features(labeled, split, size, stride) for split in ('train', 'val')))
    images = [load_images(labeled, split, size) for split in ('train', 'val')]
    if backbone == 'pixels':
        return dict(dense=tuple(pixel_features(x, stride) for x in images))
    model = _frozen_backbone(args, backbone, seed)
    extract = dict(dense=lambda x: extract_features(model, x, args.setting.probe['layers']),
                   cls=lambda x: extract_cls_features(model, x))
    return {kind: tuple(extract[kind](x) for x in images) for kind in kinds}


def _frozen_backbone(args, backbone: str, seed: int):
    """The frozen probed backbone (every block as an output): random init, a variant's exported teacher, or
    ``lever-<name>`` for the teacher of a lever cell."""
    import torch

    from sapiens2_pretrain.dense_probe import build_frozen_backbone
    cfg = _config(model_options(backbone))
    checkpoint, prefix = (None if backbone == 'random' else backbone_file(args, backbone, seed)), 'auto'
    if backbone.startswith('lever-'):  # the teacher of a lever cell, in its own pretraining checkpoint
        lever = backbone[len('lever-'):]
        checkpoint = lever_checkpoint(args, lever, seed)
        prefix = 'teacher.backbone.'
    if checkpoint is not None and not osp.isfile(checkpoint):
        raise FileNotFoundError(f'{checkpoint} is missing, so {backbone} (seed {seed}) cannot be probed: its '
                                'pretraining ran elsewhere. Move its pretraining cell (under <results>/pretrain, or '
                                '<results>/health for a lever) away to pretrain it again here.')
    torch.manual_seed(seed)
    return build_frozen_backbone(cfg.model.backbone.to_dict(), checkpoint, prefix=prefix,
                                 size=tuple(args.setting.probe['size']), layers=args.setting.probe['layers'])


def job_probe(args, backbone: str, seed: int) -> None:
    from sapiens2_pretrain.dense_probe import TASKS as PROBE_TASKS
    from sapiens2_pretrain.dense_probe import constant_baseline, load_targets, train_and_evaluate
    cells = [(t, b) for t in TASKS for b in args.setting.budgets if not osp.isfile(probe_json(args, backbone, seed,
                                                                                             t, b))]
    semantic = not osp.isfile(semantic_json(args, backbone, seed))
    cls = args.setting.cls_probe and backbone not in REFERENCES and not osp.isfile(
        semantic_json(args, backbone, seed, 'cls'))
    if not cells and not semantic and not cls:
        return
    _, labeled = data_roots(args.setting)
    size = tuple(args.setting.probe['size'])
    cpu = cpu_seconds()
    features = _features(args, backbone, seed, ('dense', 'cls') if cls else ('dense', ))
    train_feats, val_feats = features['dense']
    feature_cpu = (cpu_seconds() - cpu) / (len(cells) + semantic + cls)
    if semantic:
        job_semantic(args, backbone, seed, train_feats, val_feats, feature_cpu)
    if cls:
        job_semantic(args, backbone, seed, *features['cls'], feature_cpu, 'cls')
    for task in TASKS:
        todo = [b for t, b in cells if t == task]
        if not todo:
            continue
        train_targets, val_targets = (load_targets(labeled, split, task, size) for split in ('train', 'val'))
        for budget in todo:
            cpu = cpu_seconds()
            settings = _probe_settings(args, seed, budget)
            value = train_and_evaluate(task, (train_feats, train_targets), (val_feats, val_targets), settings)
            constant = constant_baseline(task, train_targets[:budget], val_targets, settings.num_classes)
            write_json(probe_json(args, backbone, seed, task, budget), dict(
                backbone=backbone, seed=seed, task=task, budget=budget, metric=PROBE_TASKS[task]['metric'],
                value=value, constant_baseline=constant, num_val=int(val_targets.shape[0]),
                settings=dataclasses.asdict(settings), cpu_s=cpu_seconds() - cpu + feature_cpu))


def semantic_labels(setting: Setting, split: str) -> dict:
    """{property: (N, ) class indices} of the labeled set's ``split``, from each image's scene (exact)."""
    import torch

    from sapiens2.datasets.synthhumans import scene_for
    from sapiens2.datasets.synthhumans.properties import PROPERTY_CLASSES, scene_properties
    s = setting.labeled
    count = s['num_train'] if split == 'train' else s['num_val']
    rows = [scene_properties(scene_for(s['seed'], split, i, tuple(s['size']))) for i in range(count)]
    return {name: torch.tensor([r[name] for r in rows]) for name in PROPERTY_CLASSES}


def job_semantic(args, backbone: str, seed: int, train_feats, val_feats, feature_cpu: float,
                 feature: str = 'pooled') -> None:
    """The few-label semantic probes (k-NN and linear, ``SEMANTIC_BUDGETS`` labels per class, subset seeds 0-2) of
    one backbone on (N, C) features, or on (N, C, h, w) maps mean-pooled over the grid."""
    from sapiens2_pretrain.semantic_probe import semantic_probe
    cpu = cpu_seconds()
    train_feats, val_feats = (f.mean((2, 3)) if f.dim() == 4 else f for f in (train_feats, val_feats))
    results = semantic_probe(train_feats, semantic_labels(args.setting, 'train'),
                             val_feats, semantic_labels(args.setting, 'val'), SEMANTIC_BUDGETS)
    write_json(semantic_json(args, backbone, seed, feature), dict(
        backbone=backbone, seed=seed, feature=SEMANTIC_FEATURES[feature], results=results,
        cpu_s=cpu_seconds() - cpu + feature_cpu))


def job_semantic_only(args, backbone: str, seed: int, feature: str = 'pooled') -> None:
    """Only the semantic probes of one backbone (``--job semantic:BACKBONE:SEED``, or ``semantic_cls:...`` on the
    [CLS] token; no dense probe): a probed backbone, or ``lever-<name>`` for the teacher of a lever cell."""
    if osp.isfile(semantic_json(args, backbone, seed, feature)):
        return
    cpu = cpu_seconds()
    kind = 'dense' if feature == 'pooled' else 'cls'
    train_feats, val_feats = _features(args, backbone, seed, (kind, ))[kind]
    job_semantic(args, backbone, seed, train_feats, val_feats, cpu_seconds() - cpu, feature)


def finetune_command(args, run: str, seed: int, work_dir: str) -> list[str]:
    """``tools/train.py`` command of a fine-tuning run (``FINETUNE_RUNS``): the pose recipe (``FINETUNE``) on the
    labeled set from a probed backbone's exported teacher, or from random init, at the same budget."""
    _, labeled = data_roots(args.setting)
    iters = FINETUNE['quick_iters' if args.setting.name == 'quick' else 'iters']
    backbone = FINETUNE_RUNS[run]['backbone']
    init = ['model.backbone.init_cfg=None'] if backbone is None else [
        f'model.backbone.init_cfg.checkpoint={backbone_file(args, backbone, seed)}',
        'model.backbone.init_cfg.prefix=None']
    options = init + [
        f'randomness.seed={seed}', f'train_cfg.max_iters={iters}', f'train_cfg.val_interval={iters}',
        f'param_scheduler.0.end={min(50, iters // 2)}', f'param_scheduler.1.begin={min(50, iters // 2)}',
        f'param_scheduler.1.end={iters}', f'default_hooks.checkpoint.interval={iters}',
        f'train_dataloader.dataset.data_root={labeled}', f'val_dataloader.dataset.data_root={labeled}',
        f'test_dataloader.dataset.data_root={labeled}'] + FINETUNE_RUNS[run]['options']
    return [sys.executable, 'tools/train.py', FINETUNE['config'], '--work-dir', work_dir, '--cfg-options', *options]


def job_finetune(args, run: str, seed: int) -> None:
    """One fine-tuning run (``finetune_command``); writes its validation metrics."""
    if osp.isfile(finetune_json(args, run, seed)):
        return
    work_dir = osp.join(args.work_dir, 'finetune', f'{run}-s{seed}')
    command = finetune_command(args, run, seed, work_dir)
    os.makedirs(osp.dirname(work_dir), exist_ok=True)
    start, cpu = time.perf_counter(), cpu_seconds()
    with open(work_dir + '.log', 'w') as log:
        subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=True)
    metrics = [r for r in _logged_rows(work_dir) if any(k.endswith(FINETUNE['metric']) for k in r)]
    if not metrics:
        raise RuntimeError(f'no validation {FINETUNE["metric"]} in {work_dir}: did the run fail?')
    write_json(finetune_json(args, run, seed), dict(
        run=run, backbone=FINETUNE_RUNS[run]['backbone'], seed=seed, config=FINETUNE['config'], metrics=metrics[-1],
        command=' '.join(c.replace(ROOT + os.sep, '') for c in command[1:]),
        cpu_s=cpu_seconds() - cpu, wall_s=time.perf_counter() - start))


JOB_KINDS = ('data', 'pretrain', 'probe', 'semantic', 'semantic_cls', 'finetune')


def job_error(job: str) -> str | None:
    """What is wrong with a ``--job`` (``data`` or ``KIND:BACKBONE:SEED``), or None."""
    kind, *rest = job.split(':')
    if kind == 'data' and not rest:
        return None
    if kind not in JOB_KINDS or len(rest) != 2 or not rest[1].isdigit():
        return f'--job {job!r}: expected data or KIND:BACKBONE:SEED with KIND one of {", ".join(JOB_KINDS[1:])}'
    backbone = rest[0]
    if kind == 'pretrain':
        choices, levers = list(VARIANTS), False
    elif kind == 'finetune':
        choices, levers = list(FINETUNE_RUNS), False
    else:  # the fixed references (pixels, labels) have no [CLS] token
        choices, levers = [b for b in BACKBONES if not (kind == 'semantic_cls' and b in REFERENCES)], True
    if backbone in choices or (levers and backbone.startswith('lever-') and backbone.removeprefix('lever-') in LEVERS):
        return None
    choices += ['lever-<name>'] if levers else []
    return f'--job {job!r}: {backbone!r} is not a backbone {kind} can take; choose one of {", ".join(choices)}'


def run_job(args, job: str) -> None:
    import torch
    torch.set_num_threads(int(os.environ.get('OMP_NUM_THREADS', '1')))
    quiet_mmengine()
    kind, *rest = job.split(':')
    if kind == 'data':
        job_data(args)
    elif kind == 'pretrain':
        job_pretrain(args, rest[0], int(rest[1]))
    elif kind == 'probe':
        job_probe(args, rest[0], int(rest[1]))
    elif kind == 'finetune':
        job_finetune(args, rest[0], int(rest[1]))
    elif kind in ('semantic', 'semantic_cls'):
        job_semantic_only(args, rest[0], int(rest[1]), 'pooled' if kind == 'semantic' else 'cls')
    else:
        raise ValueError(f'unknown job {job!r}')
