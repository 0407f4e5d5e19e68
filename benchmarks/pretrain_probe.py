"""Does Sapiens2 pretraining give better dense features than random init, and the joint objective than MAE alone?

    OMP_NUM_THREADS=1 python benchmarks/pretrain_probe.py --workers 2            # the full benchmark (docs table)
    OMP_NUM_THREADS=1 python benchmarks/pretrain_probe.py --diagnostics          # + ablations and diagnostics
    OMP_NUM_THREADS=1 python benchmarks/pretrain_probe.py --quick --workers 2    # smoke run, a few CPU-minutes
    python benchmarks/pretrain_probe.py --report                                 # table/plots from cached cells
    OMP_NUM_THREADS=1 python benchmarks/pretrain_probe.py --health [--lever NAME] # does the self-distillation learn?
    OMP_NUM_THREADS=1 python benchmarks/pretrain_probe.py --levers               # the lever sweep (cached cells)

On SynthHumans at 128x96, the tiny backbone (patch 8) is pretrained for a fixed number of iterations with each
objective (``VARIANTS``: loss weights of ``Sapiens2Pretrainer`` with the official LayerScale init and prototypes and
DINO's teacher temperature 0.04, and ``scratch``: the full objective with the config's from-scratch defaults; the
ablation ``dino`` and the diagnostics ``full_paper`` (the paper's teacher temperatures), ``full_long`` (a 3x longer
schedule) and ``full_sharp`` (a teacher temperature of 0.01) run with ``--diagnostics``; everything else identical)
on unlabeled RGB-only images, by ``tools/train.py`` with
``projects/pretrain/configs/sapiens2_tiny_pretrain_synthhumans-128x96.py``.
The frozen teacher backbones, a random init and two references (raw pixels, ground-truth features) are then probed
with one fixed decoder and fixed settings (``ProbeSettings`` below) on body-part segmentation (mIoU), normals (mean
angle) and depth (AbsRel) with small labeled sets. Seeds are fixed in advance: seed ``s`` is the pretraining seed
(init, masks, augmentation, data order) of the probed backbone, the random-init seed and the probe decoder's seed.

Beside the dense probes, every probed backbone gets few-label semantic probes (k-NN and logistic regression on the
mean-pooled features, 16 and 64 labels per class) of the scene properties SynthHumans knows exactly
(``sapiens2.datasets.synthhumans.properties``); ``--job semantic_cls:BACKBONE:SEED`` probes its [CLS] token, the
feature that the self-distillation trains.

``--health`` pretrains the tiny model from scratch (the ``full`` variant, or one lever of ``LEVERS``) at the
benchmark's size and measures its teacher targets on the 256 held-out images of the labeled set
(``sapiens2_pretrain.health``: entropy, prototype usage, collapse), with a verdict. ``--levers`` runs every lever
as such a cell (one JSON each under ``<results>/health``, resumed like the other cells) and writes the lever table.

Every cell (one pretraining run; one probe of one backbone, seed, task and label budget) writes its own JSON under
``--results`` and is skipped when that file exists, so an interrupted run resumes. Heavy files (training work dirs,
checkpoints) go under ``--work-dir``. ``--report`` (also run at the end) prints the table, writes it into
``docs/pretraining.md`` between the ``pretrain_probe`` markers and draws the training-health and MAE-reconstruction
pictures.
"""
import argparse
import dataclasses
import glob
import json
import math
import os
import os.path as osp
import resource
import subprocess
import sys
import time
from dataclasses import dataclass, field

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
CONFIG = 'projects/pretrain/configs/sapiens2_tiny_pretrain_synthhumans-128x96.py'
# The tiny config's defaults are the from-scratch recipe that passes the health check (``SCRATCH``: the lever
# ``combined_prototypes_64`` below). The paper's variants pin the official values (``OFFICIAL``) and a teacher
# temperature: DINO's default 0.04 for the contrastive variants (at this scale the paper's 0.065 -> 0.07 keeps the
# teacher uniform, see docs/pretraining.md) and the paper's for ``full_paper``.
OFFICIAL = ['model.backbone.layer_scale_init_value=0.0001', 'model.dino_head.num_prototypes=1024']
DINO_TEACHER_TEMP = ['model.dino_loss.warmup_teacher_temp=0.04', 'model.dino_loss.teacher_temp=0.04']
PAPER_TEACHER_TEMP = ['model.dino_loss.warmup_teacher_temp=0.065', 'model.dino_loss.teacher_temp=0.07']
SCRATCH = ['model.backbone.layer_scale_init_value=1.0', 'model.dino_loss.warmup_teacher_temp=0.02',
           'model.dino_loss.teacher_temp=0.02', 'model.dino_head.num_prototypes=64']
FULL_WEIGHTS = dict(mae=1.0, dino=0.4, koleo=0.04)
VARIANTS = {
    'full': dict(weights=FULL_WEIGHTS, options=OFFICIAL + DINO_TEACHER_TEMP),
    'mae': dict(weights=dict(mae=1.0, dino=0.0, koleo=0.0), options=OFFICIAL + PAPER_TEACHER_TEMP),
    'dino': dict(weights=dict(mae=0.0, dino=0.4, koleo=0.04), options=OFFICIAL + DINO_TEACHER_TEMP),
    'full_paper': dict(weights=FULL_WEIGHTS, options=OFFICIAL + PAPER_TEACHER_TEMP),
    # The full objective with the from-scratch recipe (the tiny config's defaults), probed like the others.
    'scratch': dict(weights=FULL_WEIGHTS, options=SCRATCH),
    # Diagnostics of the flat self-distillation targets (seed 0): is the schedule too short (3x the iterations, same
    # warm-up)? Is the teacher temperature too high for the small spread of the teacher logits between images?
    'full_long': dict(weights=FULL_WEIGHTS, options=OFFICIAL + DINO_TEACHER_TEMP, schedule=3),
    'full_sharp': dict(weights=FULL_WEIGHTS, options=OFFICIAL + [
        'model.dino_loss.warmup_teacher_temp=0.01', 'model.dino_loss.teacher_temp=0.01']),
}
# Levers of the self-distillation's health (``--levers``, seed 0, the health check's size): each changes one thing
# of the ``full`` variant; ``combined`` joins the levers listed in ``COMBINED`` (those that helped).
LEVERS = {
    'full': dict(name='full objective (LayerScale 1e-4, 1024 prototypes, momentum 0.992, 2+2 views, batch 32)',
                 options=[]),  # the ``full`` variant: OFFICIAL + DINO_TEACHER_TEMP
    'layerscale_0.1': dict(name='LayerScale init 0.1', options=['model.backbone.layer_scale_init_value=0.1']),
    'prototypes_256': dict(name='256 prototypes', options=['model.dino_head.num_prototypes=256']),
    'prototypes_64': dict(name='64 prototypes', options=['model.dino_head.num_prototypes=64']),
    'layerscale_1': dict(name='LayerScale init 1', options=['model.backbone.layer_scale_init_value=1.0']),
    'layerscale_1e-2': dict(name='LayerScale init 1e-2', options=['model.backbone.layer_scale_init_value=0.01']),
    'momentum_cosine': dict(name='teacher momentum 0.99 -> 1 (cosine)',
                            options=['custom_hooks.0.momentum=0.99', 'custom_hooks.0.final_momentum=1.0']),
    'koleo_only': dict(name='KoLeo only (weights 0 / 0 / 0.04)', options=[],
                       weights=dict(mae=0.0, dino=0.0, koleo=0.04)),
    'local_6': dict(name='2 global + 6 local views', options=['train_dataloader.dataset.pipeline.1.num_local=6']),
    'batch_64': dict(name='batch 64', options=['train_dataloader.batch_size=64']),
    # Aimed at the measured cause (the teacher's logit spread between images stays below its temperature 0.04):
    # half the temperature, between the flat 0.04 and the collapsing 0.01 (the ``full_sharp`` diagnostic).
    'teacher_temp_0.02': dict(name='teacher temperature 0.02', options=['model.dino_loss.warmup_teacher_temp=0.02',
                                                                        'model.dino_loss.teacher_temp=0.02']),
}
LEVER_ORDER = ('layerscale_0.1', 'prototypes_256', 'full', 'prototypes_64', 'layerscale_1', 'momentum_cosine',
               'layerscale_1e-2', 'koleo_only', 'local_6', 'batch_64', 'teacher_temp_0.02',
               'combined_prototypes_64', 'scratch_colour')  # likeliest first
# No lever passed; LayerScale 1 moved the held-out entropy most (0.965 of log K, logit spread 0.020 at the end),
# so the combination halves the teacher temperature on top of it (spread / temperature about 1 instead of 0.5).
COMBINED: list[str] = ['layerscale_1', 'teacher_temp_0.02']
# The combination made the targets informative (entropy 0.650 of log K) but few prototypes won (usage 0.14), while
# 64 prototypes alone were used widely (0.91): the combination with 64 prototypes.
LEVERS['combined_prototypes_64'] = dict(
    name='LayerScale init 1 + teacher temperature 0.02 + 64 prototypes',
    options=[o for name in (*COMBINED, 'prototypes_64') for o in LEVERS[name]['options']])
# The passing recipe's targets group the images by their colour cast, not by the scene (docs/pretraining.md,
# "What do the targets group?"): the same recipe with SimCLR's strong colour distortion (jitter 0.8 / 0.8 / 0.8 /
# 0.2 instead of DINO's 0.4 / 0.4 / 0.2 / 0.1).
LEVERS['scratch_colour'] = dict(
    name='LayerScale init 1 + teacher temperature 0.02 + 64 prototypes + strong colour jitter',
    options=LEVERS['combined_prototypes_64']['options'] + [
        f'train_dataloader.dataset.pipeline.1.color_jitter.{k}={v}'
        for k, v in dict(brightness=0.8, contrast=0.8, saturation=0.8, hue=0.2).items()])
HEALTH_IMAGES = 256  # held-out images (the labeled set's validation split) the health is measured on
LEVER_MARKS = '<!-- pretrain_levers table start -->', '<!-- pretrain_levers table end -->'
# Ablations and diagnostics, run with --diagnostics only (outside the benchmark's time budget)
DIAGNOSTICS = ('dino', 'full_paper', 'full_long', 'full_sharp')
BACKBONES = ('random', 'mae', 'dino', 'full', 'full_paper', 'scratch', 'full_long', 'full_sharp', 'pixels', 'labels')
NAMES = dict(random='random init', mae='MAE only', dino='contrastive + KoLeo only',
             full='full (MAE + CLS + KoLeo)', full_paper='full, paper teacher temperature',
             scratch='full, from-scratch recipe',
             full_long='full, 3x schedule', full_sharp='full, teacher temperature 0.01',
             pixels='raw pixels (reference)', labels='ground-truth features (ceiling)',
             constant='best constant (floor)')
TASKS = ('seg', 'normal', 'depth')
TASK_HEAD = dict(seg='seg mIoU (%) ↑', normal='normal angle (°) ↓', depth='depth AbsRel ↓')
MARK_START, MARK_END = '<!-- pretrain_probe table start -->', '<!-- pretrain_probe table end -->'
SEMANTIC_MARKS = '<!-- pretrain_semantic table start -->', '<!-- pretrain_semantic table end -->'
SPREAD_MARKS = '<!-- teacher_spread table start -->', '<!-- teacher_spread table end -->'
GROUP_MARKS = '<!-- target_groups table start -->', '<!-- target_groups table end -->'
HEALTH_KEYS = ('loss', 'loss_mae', 'loss_dino', 'loss_koleo', 'mae', 'koleo', 'teacher_entropy', 'student_entropy',
               'teacher_batch_entropy', 'used_prototypes', 'teacher_spread', 'center_norm', 'lr', 'grad_norm')


@dataclass
class Setting:
    """Everything fixed in advance for one benchmark setting."""
    name: str
    unlabeled: dict
    labeled: dict
    iters: int
    warmup: int
    seeds: tuple
    budgets: tuple
    steps: dict
    probe: dict
    reference_seeds: tuple = (0, )
    variant_seeds: dict = field(default_factory=dict)
    extra_options: list = field(default_factory=list)


# Probe settings, fixed before any pretrained backbone was probed (chosen on random-init and ground-truth features):
# the decoder trains 300 steps with 64 labeled images (75 epochs) and 1200 with 512 (37.5 epochs).
PROBE = dict(size=(128, 96), layers='all', hidden=96, batch_size=16, lr=2e-3, weight_decay=0.05, label_stride=4)
SETTINGS = {
    'full': Setting('full', unlabeled=dict(num_train=4000, num_val=16, size=(128, 96), seed=1),
                    labeled=dict(num_train=512, num_val=256, size=(128, 96), seed=0),
                    iters=300, warmup=30, seeds=(0, 1, 2), budgets=(64, 512), steps={64: 300, 512: 1200},
                    probe=PROBE, variant_seeds=dict(full_paper=(0, ), full_long=(0, ), full_sharp=(0, ))),
    'quick': Setting('quick', unlabeled=dict(num_train=128, num_val=4, size=(128, 96), seed=1),
                     labeled=dict(num_train=32, num_val=16, size=(128, 96), seed=0),
                     iters=8, warmup=2, seeds=(0, ), budgets=(8, 32), steps={8: 20, 32: 40}, probe=PROBE,
                     extra_options=['train_dataloader.batch_size=8']),
}
SEMANTIC_BUDGETS = (16, 64)  # labels per class of the semantic probes
SEMANTIC_FEATURES = dict(pooled='mean-pooled features of all blocks',  # the default; run with every probe
                         cls='[CLS] token after the last block')  # the DINO head's input: --job semantic_cls:...
# (variant, reference) pairs of the verdicts: each recipe of the full objective against random init and MAE only,
# and the from-scratch recipe against the official values
COMPARISONS = tuple((v, other) for v in ('full', 'full_paper', 'scratch') for other in ('random', 'mae')) + (
    ('scratch', 'full'), )
REFERENCES = ('pixels', 'labels')  # fixed features: probed with the first seed only (``reference_seeds``)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='smoke setting (tiny data, few iterations, one seed)')
    parser.add_argument('--workers', type=int, default=2, help='cells run in parallel, one thread each (default 2)')
    parser.add_argument('--results', default=None, help='cell JSON folder (default benchmarks/results/pretrain_probe/'
                        '<setting>)')
    parser.add_argument('--work-dir', default=None, help='training work dirs and checkpoints (default '
                        'work_dirs/pretrain_probe/<setting>)')
    parser.add_argument('--docs', default=None, help='markdown file whose table to update (default '
                        'docs/pretraining.md for the full setting, none for --quick)')
    parser.add_argument('--diagnostics', action='store_true',
                        help=f'also run the ablations and diagnostics {DIAGNOSTICS}')
    parser.add_argument('--report', action='store_true', help='only build the table and pictures from the cells')
    parser.add_argument('--health', action='store_true', help='health check: pretrain from scratch with --lever '
                        'and say whether the self-distillation learns (teacher targets on held-out images)')
    parser.add_argument('--levers', action='store_true', help='the lever sweep: one health cell per lever (cached)')
    parser.add_argument('--lever', default='full', choices=sorted(LEVERS) + ['combined'],
                        help='recipe of --health: the full objective or one lever of it (default full)')
    parser.add_argument('--job', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.job and (why := job_error(args.job)):
        parser.error(why)
    args.setting = SETTINGS['quick' if args.quick else 'full']
    name = args.setting.name
    args.results = args.results or osp.join(ROOT, 'benchmarks', 'results', 'pretrain_probe', name)
    args.work_dir = args.work_dir or osp.join(ROOT, 'work_dirs', 'pretrain_probe', name)
    args.health_results = osp.join(args.results, 'health')
    if args.lever == 'combined' and not COMBINED:
        parser.error('--lever combined: no lever is listed in COMBINED yet')
    if args.docs is None and not args.quick:
        args.docs = osp.join(ROOT, 'docs', 'pretraining.md')
    return args


# ------------------------------------------------------------------------------------------------- paths
def data_roots(setting: Setting) -> tuple[str, str]:
    suffix = '' if setting.name == 'full' else f'_{setting.name}'
    return (osp.join(ROOT, 'data', f'synthhumans_unlabeled{suffix}'),
            osp.join(ROOT, 'data', f'synthhumans_probe{suffix}'))


def pretrain_json(args, variant: str, seed: int) -> str:
    return osp.join(args.results, 'pretrain', f'{variant}-s{seed}.json')


def probe_json(args, backbone: str, seed: int, task: str, budget: int) -> str:
    return osp.join(args.results, 'probe', f'{backbone}-s{seed}-{task}-{budget}.json')


def backbone_file(args, variant: str, seed: int) -> str:
    return osp.join(args.work_dir, f'{variant}-s{seed}', 'teacher_backbone.safetensors')


def _write_json(path: str, data: dict) -> None:
    os.makedirs(osp.dirname(path), exist_ok=True)
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def _read_json(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def _config(options: list[str] = ()):
    """The pretraining config with the ``key=value`` ``options`` merged (``import sapiens2`` first: it resolves the
    ``sapiens2::`` base configs)."""
    from mmengine.config import Config

    import sapiens2  # noqa: F401
    cfg = Config.fromfile(osp.join(ROOT, CONFIG))
    cfg.merge_from_dict(_options_dict(list(options)))
    return cfg


def model_options(backbone: str) -> list[str]:
    """The ``model.*`` options a backbone is built with: its variant's, a lever cell's (``lever-<name>``, on top of
    the ``full`` variant) or, for random init, the official values."""
    if backbone.startswith('lever-'):
        options = VARIANTS['full']['options'] + lever_options(backbone[len('lever-'):])
    else:
        options = VARIANTS[backbone]['options'] if backbone in VARIANTS else OFFICIAL
    return [o for o in options if o.startswith('model.')]


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# -------------------------------------------------------------------------------------------------- jobs
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
    start, cpu = time.perf_counter(), _cpu_seconds()
    s = args.setting
    ensure_data(s)
    _write_json(path, dict(unlabeled=dict(s.unlabeled, rgb_only=True), labeled=s.labeled,
                           renderer_version=RENDERER_VERSION, cpu_s=_cpu_seconds() - cpu,
                           wall_s=time.perf_counter() - start))


def variant_iters(setting: Setting, variant: str) -> int:
    """Pretraining iterations of a variant: the setting's, times the variant's ``schedule`` factor."""
    return setting.iters * VARIANTS[variant].get('schedule', 1)


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


def _scalars(work_dir: str) -> list[dict]:
    files = sorted(glob.glob(osp.join(work_dir, '*', 'vis_data', 'scalars.json')))
    if not files:
        raise FileNotFoundError(f'no scalars.json under {work_dir}: did the training run fail?')
    with open(files[-1]) as f:
        rows = [json.loads(line) for line in f]
    return [dict(iter=r['iter'], **{k: r[k] for k in HEALTH_KEYS if k in r}) for r in rows if 'loss' in r]


def job_pretrain(args, variant: str, seed: int) -> None:
    from sapiens2_pretrain.export import export_backbone
    s = args.setting
    work_dir = osp.join(args.work_dir, f'{variant}-s{seed}')
    command = pretrain_command(args, variant, seed)
    os.makedirs(args.work_dir, exist_ok=True)
    start, cpu = time.perf_counter(), _cpu_seconds()
    with open(osp.join(args.work_dir, f'{variant}-s{seed}.log'), 'w') as log:
        subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=True)
    checkpoint = osp.join(work_dir, f'iter_{variant_iters(s, variant)}.pth')
    export_backbone(checkpoint, backbone_file(args, variant, seed), source='teacher')
    _write_json(pretrain_json(args, variant, seed), dict(
        variant=variant, seed=seed, loss_weights=VARIANTS[variant]['weights'], iters=variant_iters(s, variant),
        config=CONFIG,
        command=' '.join(c.replace(ROOT + os.sep, '') for c in command[1:]),  # repository-relative paths
        cpu_s=_cpu_seconds() - cpu, wall_s=time.perf_counter() - start, log=_scalars(work_dir)))


def _probe_settings(args, seed: int, budget: int):
    from sapiens2_pretrain.dense_probe import ProbeSettings
    return ProbeSettings(**dict(args.setting.probe, steps=args.setting.steps[budget], num_train=budget, seed=seed))


def _features(args, backbone: str, seed: int):
    """(train, val) features of the labeled set for one probed backbone."""
    from sapiens2_pretrain.dense_probe import extract_features, label_features, load_images, pixel_features
    _, labeled = data_roots(args.setting)
    size = tuple(args.setting.probe['size'])
    stride = 8  # the tiny backbone's patch size: every probed feature map is on the same 16x12 grid
    if backbone == 'labels':
        return tuple(label_features(labeled, split, size, stride) for split in ('train', 'val'))
    images = [load_images(labeled, split, size) for split in ('train', 'val')]
    if backbone == 'pixels':
        return tuple(pixel_features(x, stride) for x in images)
    model = _frozen_backbone(args, backbone, seed)
    return tuple(extract_features(model, x, args.setting.probe['layers']) for x in images)


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
    if not cells and not semantic:
        return
    _, labeled = data_roots(args.setting)
    size = tuple(args.setting.probe['size'])
    cpu = _cpu_seconds()
    train_feats, val_feats = _features(args, backbone, seed)
    feature_cpu = (_cpu_seconds() - cpu) / (len(cells) + semantic)
    if semantic:
        job_semantic(args, backbone, seed, train_feats, val_feats, feature_cpu)
    for task in TASKS:
        todo = [b for t, b in cells if t == task]
        if not todo:
            continue
        train_targets, val_targets = (load_targets(labeled, split, task, size) for split in ('train', 'val'))
        for budget in todo:
            cpu = _cpu_seconds()
            settings = _probe_settings(args, seed, budget)
            value = train_and_evaluate(task, (train_feats, train_targets), (val_feats, val_targets), settings)
            constant = constant_baseline(task, train_targets[:budget], val_targets, settings.num_classes)
            _write_json(probe_json(args, backbone, seed, task, budget), dict(
                backbone=backbone, seed=seed, task=task, budget=budget, metric=PROBE_TASKS[task]['metric'],
                value=value, constant_baseline=constant, num_val=int(val_targets.shape[0]),
                settings=dataclasses.asdict(settings), cpu_s=_cpu_seconds() - cpu + feature_cpu))


def semantic_json(args, backbone: str, seed: int, feature: str = 'pooled') -> str:
    """The semantic cell of one backbone on one feature (``SEMANTIC_FEATURES``)."""
    suffix = '' if feature == 'pooled' else f'-{feature}'
    return osp.join(args.results, 'probe', f'{backbone}-s{seed}-semantic{suffix}.json')


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
    cpu = _cpu_seconds()
    train_feats, val_feats = (f.mean((2, 3)) if f.dim() == 4 else f for f in (train_feats, val_feats))
    results = semantic_probe(train_feats, semantic_labels(args.setting, 'train'),
                             val_feats, semantic_labels(args.setting, 'val'), SEMANTIC_BUDGETS)
    _write_json(semantic_json(args, backbone, seed, feature), dict(
        backbone=backbone, seed=seed, feature=SEMANTIC_FEATURES[feature], results=results,
        cpu_s=_cpu_seconds() - cpu + feature_cpu))


def job_semantic_only(args, backbone: str, seed: int, feature: str = 'pooled') -> None:
    """Only the semantic probes of one backbone (``--job semantic:BACKBONE:SEED``, or ``semantic_cls:...`` on the
    [CLS] token; no dense probe): a probed backbone, or ``lever-<name>`` for the teacher of a lever cell."""
    from sapiens2_pretrain.dense_probe import extract_cls_features, load_images
    if osp.isfile(semantic_json(args, backbone, seed, feature)):
        return
    cpu = _cpu_seconds()
    if feature == 'pooled':
        train_feats, val_feats = _features(args, backbone, seed)
    else:
        _, labeled = data_roots(args.setting)
        model = _frozen_backbone(args, backbone, seed)
        train_feats, val_feats = (extract_cls_features(model, load_images(labeled, split, tuple(
            args.setting.probe['size']))) for split in ('train', 'val'))
    job_semantic(args, backbone, seed, train_feats, val_feats, _cpu_seconds() - cpu, feature)


# ------------------------------------------------------------------------------------- health and levers
def health_json(args, lever: str, seed: int = 0) -> str:
    return osp.join(args.health_results, f'{lever}-s{seed}.json')


def lever_work_dir(args, lever: str, seed: int = 0) -> str:
    return osp.join(args.work_dir, 'health', f'{lever}-s{seed}')


def lever_checkpoint(args, lever: str, seed: int = 0) -> str:
    """The final pretraining checkpoint of a lever cell (its teacher is ``lever-<name>``'s probed backbone)."""
    return osp.join(lever_work_dir(args, lever, seed), f'iter_{args.setting.iters}.pth')


def variant_checkpoint(args, variant: str, seed: int) -> str:
    """The final pretraining checkpoint of a variant's run."""
    return osp.join(args.work_dir, f'{variant}-s{seed}', f'iter_{variant_iters(args.setting, variant)}.pth')


def lever_weights(lever: str) -> dict:
    """The loss weights of a lever (of the first lever of ``COMBINED`` that sets them, for ``combined``)."""
    names = COMBINED if lever == 'combined' else [lever]
    return next((LEVERS[name]['weights'] for name in names if 'weights' in LEVERS[name]), VARIANTS['full']['weights'])


def lever_options(lever: str) -> list[str]:
    """The ``--cfg-options`` of a lever on top of the full objective; ``combined`` joins those of ``COMBINED``."""
    if lever == 'combined':
        return [o for name in COMBINED for o in LEVERS[name]['options']]
    return LEVERS[lever]['options']


def _options_dict(options: list[str]) -> dict:
    """``key=value`` config options as ``tools/train.py --cfg-options`` parses them."""
    from mmengine.config import DictAction
    return {k: DictAction._parse_iterable(v) for k, v in (o.split('=', 1) for o in options)}


def job_health(args, lever: str, seed: int = 0) -> dict:
    """One health cell: pretrain the tiny model from scratch with the full objective changed by ``lever``, then
    measure the teacher targets on the held-out images (``health.target_health``); cached as JSON."""
    from sapiens2_pretrain.health import health_verdict, target_health, teacher_targets
    path = health_json(args, lever, seed)
    if osp.isfile(path):
        return _read_json(path)
    ensure_data(args.setting)
    work_dir = lever_work_dir(args, lever, seed)
    command = pretrain_command(args, 'full', seed, work_dir=work_dir, weights=lever_weights(lever),
                               extra=tuple(lever_options(lever)))
    start, cpu = time.perf_counter(), _cpu_seconds()
    os.makedirs(work_dir, exist_ok=True)
    with open(work_dir + '.log', 'w') as log:
        subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=True)
    train_cpu = _cpu_seconds() - cpu
    cfg = _config(model_options(f'lever-{lever}'))
    model = _load_pretrainer(cfg, lever_checkpoint(args, lever, seed))
    _, x = _val_images(args, min(HEALTH_IMAGES, args.setting.labeled['num_val']))
    health = target_health(teacher_targets(model, x))
    cell = dict(lever=lever, seed=seed, options=lever_options(lever), weights=lever_weights(lever),
                iters=args.setting.iters, num_images=int(x.shape[0]), health=health,
                verdict=health_verdict(health), train_cpu_s=train_cpu, cpu_s=_cpu_seconds() - cpu,
                wall_s=time.perf_counter() - start, command=' '.join(c.replace(ROOT + os.sep, '') for c in command[1:]),
                log=_scalars(work_dir))
    _write_json(path, cell)
    return cell


def lever_name(lever: str) -> str:
    """A lever's name in the tables; ``combined`` lists the levers of ``COMBINED``."""
    if lever == 'combined':
        return 'combined: ' + ' + '.join(LEVERS[name]['name'] for name in COMBINED) if COMBINED else 'combined'
    return LEVERS[lever]['name']


def health_table(cells: list[dict]) -> str:
    """Markdown table: one row per cell with its three measures (✗ marks a fail), verdict and CPU time."""
    lines = ['| recipe | target entropy / log K (< 0.9) | prototypes used (≥ 0.25) | batch-mean entropy (> 0.5) | '
             'verdict | CPU-min |', '|---|---|---|---|---|---|']
    for name in list(LEVERS) + ['combined']:
        cell = next((c for c in cells if c['lever'] == name), None)
        title = lever_name(name)
        if cell is None:
            why = 'no lever passed to combine' if name == 'combined' and not COMBINED else 'time'
            lines.append(f'| {title} | not run ({why}) | | | | |')
            continue
        trained = bool(lever_weights(name)['dino'])  # without a DINO loss the head is never trained: no verdict
        marks = {r['name']: ('' if r['passed'] or not trained else ' ✗') for r in cell['verdict']}
        h = cell['health']
        failed = [r['name'] for r in cell['verdict'] if not r['passed']]
        verdict = ('pass' if not failed else 'fail (' + ', '.join(failed) + ')') if trained else \
            'none: no DINO loss, the head is untrained'
        lines.append(f'| {title} | {h["entropy"]:.3f}{marks["entropy"]} | '
                     f'{h["usage"]:.3f}{marks["usage"]} | {h["batch_entropy"]:.3f}{marks["batch_entropy"]} | '
                     f'{verdict} | {cell["cpu_s"] / 60:.1f} |')
    return '\n'.join(lines)


def run_health(args) -> None:
    from sapiens2_pretrain.health import format_verdict
    cell = job_health(args, args.lever)
    print(f'health check of {args.lever!r} ({cell["iters"]} iterations from scratch, {cell["num_images"]} held-out '
          f'images, {cell["cpu_s"] / 60:.1f} CPU-minutes):')
    print(format_verdict(cell['verdict']))
    failed = [r for r in cell['verdict'] if not r['passed']]
    if not lever_weights(args.lever)['dino']:
        print('verdict: none (no DINO loss: the head is untrained, so its targets say nothing)')
        return
    print('verdict: ' + ('PASS: the self-distillation learns' if not failed else
                         'FAIL: ' + '; '.join(f'{r["name"]}: {r["reason"]}' for r in failed)))


def run_levers(args) -> None:
    """Every lever cell in order (cached, resumes), then the table (into the docs for the full setting)."""
    names = list(LEVER_ORDER) + (['combined'] if COMBINED else [])
    for name in names:
        if not osp.isfile(health_json(args, name)):
            print(f'[{time.strftime("%H:%M:%S")}] lever {name}', flush=True)
        job_health(args, name)
    report_levers(args)


def report_levers(args) -> None:
    cells = [_read_json(p) for p in sorted(glob.glob(osp.join(args.health_results, '*.json')))]
    text = health_table(cells)
    print(text)
    if args.docs:
        update_docs(args.docs, text, LEVER_MARKS)


def _quiet_mmengine() -> None:
    """Only MMEngine's warnings and errors: no per-iteration lines or per-parameter init reports."""
    import logging

    from mmengine.logging import MMLogger
    MMLogger.get_instance('mmengine').setLevel(logging.WARNING)


JOB_KINDS = ('data', 'pretrain', 'probe', 'semantic', 'semantic_cls')


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
    else:  # the fixed references (pixels, labels) have no [CLS] token
        choices, levers = [b for b in BACKBONES if not (kind == 'semantic_cls' and b in REFERENCES)], True
    if backbone in choices or (levers and backbone.startswith('lever-') and backbone.removeprefix('lever-') in LEVERS):
        return None
    choices += ['lever-<name>'] if levers else []
    return f'--job {job!r}: {backbone!r} is not a backbone {kind} can take; choose one of {", ".join(choices)}'


def run_job(args, job: str) -> None:
    import torch
    torch.set_num_threads(int(os.environ.get('OMP_NUM_THREADS', '1')))
    _quiet_mmengine()
    kind, *rest = job.split(':')
    if kind == 'data':
        job_data(args)
    elif kind == 'pretrain':
        job_pretrain(args, rest[0], int(rest[1]))
    elif kind == 'probe':
        job_probe(args, rest[0], int(rest[1]))
    elif kind in ('semantic', 'semantic_cls'):
        job_semantic_only(args, rest[0], int(rest[1]), 'pooled' if kind == 'semantic' else 'cls')
    else:
        raise ValueError(f'unknown job {job!r}')


# --------------------------------------------------------------------------------------------- scheduler
def _jobs(args) -> list[tuple[str, list[str], bool]]:
    """(job, dependencies, done) in priority order, so that a partial run is already a table: seed by seed (seed 0
    of random init, the references and every variant first), then the variants probed with fewer seeds
    (``variant_seeds``). Within a seed the probes of fixed features come first, then each variant's pretraining
    followed by its probe; the scheduler starts the first job whose dependencies are done, so one worker pretrains
    while the other probes."""
    s = args.setting
    planned = [v for v in VARIANTS if args.diagnostics or v not in DIAGNOSTICS]
    core = [v for v in planned if v not in s.variant_seeds]
    groups = [(seed, core, ['random'] + (list(REFERENCES) if seed in s.reference_seeds else [])) for seed in s.seeds]
    groups += [(seed, [v], []) for v, seeds in s.variant_seeds.items() if v in planned for seed in seeds]
    jobs = [('data', [], osp.isfile(osp.join(args.results, 'data.json')))]

    def probe(backbone: str, seed: int) -> tuple[str, list[str], bool]:
        deps = ['data'] + ([f'pretrain:{backbone}:{seed}'] if backbone in VARIANTS else [])
        done = all(osp.isfile(probe_json(args, backbone, seed, t, b)) for t in TASKS for b in s.budgets) and \
            osp.isfile(semantic_json(args, backbone, seed))
        return f'probe:{backbone}:{seed}', deps, done

    for seed, variants, fixed in groups:
        jobs += [probe(backbone, seed) for backbone in fixed]
        for variant in variants:
            jobs.append((f'pretrain:{variant}:{seed}', ['data'], osp.isfile(pretrain_json(args, variant, seed))))
            jobs.append(probe(variant, seed))
    return jobs


def check_data(args) -> None:
    """Refuses to add cells to a results folder whose data were rendered by another SynthHumans renderer version
    (cells of two renderings would be mixed in one table)."""
    from sapiens2.datasets.synthhumans import RENDERER_VERSION
    from sapiens2.datasets.synthhumans.manifest import read_manifest
    if not osp.isfile(osp.join(args.results, 'data.json')):
        return
    for root in data_roots(args.setting):
        manifest = read_manifest(root)
        found = None if manifest is None else manifest.get('renderer_version')
        if found != RENDERER_VERSION:
            raise RuntimeError(
                f'the cells in {args.results} were computed on {root}, which is '
                f'{"missing" if manifest is None else f"rendered by SynthHumans renderer version {found}"}, but this '
                f'code renders version {RENDERER_VERSION}: move {args.results} away (or pass --results to a new '
                'folder) to recompute every cell on freshly rendered data.')


def schedule(args) -> None:
    check_data(args)
    jobs = _jobs(args)
    done = {name for name, _, finished in jobs if finished}
    pending = [(name, deps) for name, deps, finished in jobs if not finished]
    running: dict[int, tuple[str, subprocess.Popen]] = {}
    base = [sys.executable, osp.abspath(__file__), '--results', args.results, '--work-dir', args.work_dir]
    base += ['--quick'] if args.setting.name == 'quick' else []
    threads = '1' if args.workers > 1 else '2'
    os.makedirs(args.work_dir, exist_ok=True)
    start = time.perf_counter()
    while pending or running:
        ready = [(n, d) for n, d in pending if all(x in done for x in d)]
        while ready and len(running) < args.workers:
            name, deps = ready.pop(0)
            pending.remove((name, deps))
            env = dict(os.environ, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
            log = open(osp.join(args.work_dir, name.replace(':', '-') + '.job.log'), 'w')
            proc = subprocess.Popen(base + ['--job', name], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
            running[proc.pid] = (name, proc)
            print(f'[{time.perf_counter() - start:7.0f} s] start {name}', flush=True)
        if not running:
            raise RuntimeError(f'jobs {[n for n, _ in pending]} wait for jobs that did not finish')
        pid, status = os.wait()
        if pid not in running:
            continue
        name, _ = running.pop(pid)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f'job {name} failed; see {osp.join(args.work_dir, name.replace(":", "-"))}.job.log')
        done.add(name)
        print(f'[{time.perf_counter() - start:7.0f} s] done  {name}', flush=True)


# ------------------------------------------------------------------------------------------------ report
def _stats(values: list[float]) -> tuple[float, float]:
    import numpy as np
    arr = np.asarray(values, dtype=float)
    return float(arr.mean()), float(arr.std(ddof=1)) if len(arr) > 1 else 0.0


def probed_backbones(args) -> list[str]:
    """The benchmark's backbones, then the teachers of the lever cells that have dense probes (``--job
    probe:lever-<name>:0``, outside the plan)."""
    return list(BACKBONES) + [f'lever-{name}' for name in LEVERS if any(
        osp.isfile(probe_json(args, f'lever-{name}', 0, t, b)) for t in TASKS for b in args.setting.budgets)]


def _cost_kind(backbone: str) -> str:
    """Which line of the CPU-time sum a backbone's probes go to: the plan's or the diagnostics'."""
    return 'probe' if backbone in BACKBONES and backbone not in DIAGNOSTICS else 'diagnostics'


def display_name(backbone: str) -> str:
    return NAMES.get(backbone) or f'lever cell: {lever_name(backbone[len("lever-"):])} (teacher)'


def collect(args) -> dict:
    """{(backbone, task, budget): [values over seeds]}, constants and CPU seconds from the cell files."""
    s = args.setting
    values, constants, cpu = {}, {}, dict(data=0.0, pretrain=0.0, probe=0.0, diagnostics=0.0)
    if osp.isfile(osp.join(args.results, 'data.json')):
        cpu['data'] = _read_json(osp.join(args.results, 'data.json'))['cpu_s']
    for path in glob.glob(osp.join(args.results, 'pretrain', '*.json')):
        cell = _read_json(path)
        cpu['diagnostics' if cell['variant'] in DIAGNOSTICS else 'pretrain'] += cell['cpu_s']
    for backbone in probed_backbones(args):
        for task in TASKS:
            for budget in s.budgets:
                cells = [probe_json(args, backbone, seed, task, budget) for seed in s.seeds]
                cells = [_read_json(p) for p in cells if osp.isfile(p)]
                if cells:
                    values[backbone, task, budget] = [c['value'] for c in cells]
                    constants[task, budget] = cells[0]['constant_baseline']
                    cpu[_cost_kind(backbone)] += sum(c['cpu_s'] for c in cells)
        for seed in planned_seeds(s, backbone):  # the semantic probes of the backbone
            if osp.isfile(semantic_json(args, backbone, seed)):
                cpu[_cost_kind(backbone)] += _read_json(
                    semantic_json(args, backbone, seed))['cpu_s']
    return dict(values=values, constants=constants, cpu=cpu)


def collect_semantic(args, feature: str = 'pooled') -> dict:
    """{(backbone, property, budget, method): [accuracy per backbone seed, averaged over the label subsets]} on one
    feature, with the property ``mean`` (the mean over the properties) added."""
    import numpy as np
    values = {}
    levers = [f'lever-{name}' for name in LEVERS if osp.isfile(semantic_json(args, f'lever-{name}', 0, feature))]
    for backbone in list(BACKBONES) + levers:
        for seed in args.setting.seeds:
            path = semantic_json(args, backbone, seed, feature)
            if not osp.isfile(path):
                continue
            results = _read_json(path)['results']
            for budget in SEMANTIC_BUDGETS:
                for method in ('knn', 'linear'):
                    per = {name: float(np.mean(cells[str(budget)][method])) for name, cells in results.items()}
                    for name, value in dict(per, mean=float(np.mean(list(per.values())))).items():
                        values.setdefault((backbone, name, budget, method), []).append(value)
    return values


def semantic_table(args) -> str:
    """Markdown tables of the semantic probes, one per feature that has cells: k-NN / linear accuracy (%) per
    property and labels per class, and the comparisons (``COMPARISONS``) on the mean over the properties."""
    from sapiens2.datasets.synthhumans.properties import PROPERTY_CLASSES
    chance = ', '.join(f'{n} {100 / len(c):.0f} %' for n, c in PROPERTY_CLASSES.items())
    lines = ['k-NN / linear-probe accuracy (%) with 16 and 64 labels per class; mean ± std over the backbone seeds '
             f'run (each the mean of 3 label subsets). Chance: {chance}.']
    for feature, description in SEMANTIC_FEATURES.items():
        values = collect_semantic(args, feature)
        if values:
            lines += ['', f'**On the {description}**', '', _semantic_rows(values, list(PROPERTY_CLASSES) + ['mean'])]
    return '\n'.join(lines)


def _semantic_rows(values: dict, names: list[str]) -> str:
    """The accuracy table of one feature and, under it, the table of the comparisons."""
    head = ' | '.join(f'{n} @{b}' for b in SEMANTIC_BUDGETS for n in names)
    lines = [f'| backbone | {head} |', '|---|' + '---|' * (len(names) * len(SEMANTIC_BUDGETS))]
    for backbone in list(BACKBONES) + [f'lever-{name}' for name in LEVERS]:
        if (backbone, 'mean', SEMANTIC_BUDGETS[0], 'knn') not in values:
            continue
        cells = []
        for budget in SEMANTIC_BUDGETS:
            for name in names:
                parts = []
                for method in ('knn', 'linear'):
                    mean, std = _stats(values[backbone, name, budget, method])
                    parts.append(f'{100 * mean:.1f}' + (f' ± {100 * std:.1f}' if std else ''))
                cells.append(' / '.join(parts))
        lines.append(f'| {display_name(backbone)} | ' + ' | '.join(cells) + ' |')
    columns = [(budget, method) for budget in SEMANTIC_BUDGETS for method in ('knn', 'linear')]
    lines += ['', 'Differences of the mean over the properties (points; in brackets in seed std, ✓ beyond 3 std):', '',
              '| comparison | ' + ' | '.join(f'{method} @{budget}' for budget, method in columns) + ' |',
              '|---|' + '---|' * len(columns)]
    for first, other in COMPARISONS:
        cells = [_semantic_difference(values.get((first, 'mean', budget, method)),
                                      values.get((other, 'mean', budget, method))) for budget, method in columns]
        if any(cells):
            lines.append(f'| {NAMES[first]} vs {NAMES[other]} | ' + ' | '.join(c or '–' for c in cells) + ' |')
    return '\n'.join(lines)


def _seed_difference(first: list[float], other: list[float]) -> tuple[float, float]:
    """Mean of ``first`` minus mean of ``other``, and the seed std to judge it by: the larger of the two (0 unless
    both have at least two seeds)."""
    (mf, sf), (mr, sr) = _stats(first), _stats(other)
    return mf - mr, (max(sf, sr) if min(len(first), len(other)) > 1 else 0.0)


def _semantic_difference(first: list | None, other: list | None) -> str:
    """``first`` minus ``other`` in points, with its size in seed std (empty when one side is missing)."""
    if not first or not other:
        return ''
    diff, sigma = _seed_difference(first, other)
    size = f'{diff / sigma:.1f}' if sigma else 'one seed'
    return f'{100 * diff:+.1f} ({size}){" ✓" if sigma and diff > 3 * sigma else ""}'


def _fmt(task: str, value: float) -> str:
    return f'{100 * value:.1f}' if task == 'seg' else (f'{value:.2f}' if task == 'normal' else f'{value:.4f}')


def _better(task: str, a: float, b: float) -> float:
    """How much better ``a`` is than ``b`` (positive = better) in the task's direction."""
    return a - b if task == 'seg' else b - a


def verdicts(args, results: dict) -> list[dict]:
    """Full objective vs random init and vs MAE only, per task and budget: difference and its size in seed std
    (the larger of the two standard deviations; none unless both sides have at least two seeds)."""
    rows = []
    for full_name, other in COMPARISONS:
        for task in TASKS:
            for budget in args.setting.budgets:
                full = results['values'].get((full_name, task, budget))
                ref = results['values'].get((other, task, budget))
                if not full or not ref:
                    continue
                # a std needs two seeds of each: otherwise the difference is reported without a verdict
                diff, sigma = _seed_difference(full, ref)
                diff = _better(task, diff, 0.0)
                rows.append(dict(full=full_name, other=other, task=task, budget=budget, diff=diff, sigma=sigma,
                                 beyond_3_std=bool(sigma > 0 and diff > 3 * sigma), better=diff > 0))
    return rows


def planned_seeds(s: Setting, backbone: str) -> tuple:
    """The seeds a backbone is probed with in a setting (a lever cell's teacher: seed 0)."""
    if backbone in REFERENCES:
        return s.reference_seeds
    if backbone.startswith('lever-'):
        return (0, )
    return s.variant_seeds.get(backbone, s.seeds)


def table(args, results: dict) -> str:
    s = args.setting
    head = '| backbone | ' + ' | '.join(f'{TASK_HEAD[t]} @{b}' for t in TASKS for b in s.budgets) + ' |'
    lines = ['Mean ± seed std over the seeds run; "(k/n seeds)" marks a cell with fewer seeds than planned, '
             '"not run" one that has no result yet.', '', head, '|---|' + '---|' * (len(TASKS) * len(s.budgets))]
    for backbone in probed_backbones(args):
        planned = len(planned_seeds(s, backbone))
        cells = []
        for task in TASKS:
            for budget in s.budgets:
                vals = results['values'].get((backbone, task, budget))
                if not vals:
                    cells.append('not run')
                    continue
                mean, std = _stats(vals)
                spread = f' ± {100 * std:.1f}' if task == 'seg' else f' ± {_fmt(task, std)}'
                count = f' ({len(vals)}/{planned} seeds)' if len(vals) < planned else ''
                cells.append(f'{_fmt(task, mean)}{spread if len(vals) > 1 else ""}{count}')
        lines.append(f'| {display_name(backbone)} | ' + ' | '.join(cells) + ' |')
    constants = [_fmt(t, results['constants'][t, b]) if (t, b) in results['constants'] else '–' for t in TASKS
                 for b in s.budgets]
    lines.append(f'| {NAMES["constant"]} | ' + ' | '.join(constants) + ' |')
    lines += ['', 'Differences of the means (positive = the first is better; seg in mIoU points), in units of the '
              'larger seed std of the two in brackets ("–" unless both have two seeds or more); ✓ = more than 3 '
              'std.', '',
              '| comparison | ' + ' | '.join(f'{t} @{b}' for t in TASKS for b in s.budgets) + ' |',
              '|---|' + '---|' * (len(TASKS) * len(s.budgets))]
    rows = {}
    for v in verdicts(args, results):
        scale = 100 if v['task'] == 'seg' else 1
        digits = 1 if v['task'] == 'seg' else (2 if v['task'] == 'normal' else 4)
        ratio = f'{v["diff"] / v["sigma"]:.1f}' if v['sigma'] > 0 else '–'
        rows.setdefault((v['full'], v['other']), {})[v['task'], v['budget']] = (
            f'{scale * v["diff"]:+.{digits}f} ({ratio}){" ✓" if v["beyond_3_std"] else ""}')
    for (full, other), cells in rows.items():
        lines.append(f'| {NAMES[full]} vs {NAMES[other]} | ' + ' | '.join(cells.get((t, b), '–') for t in TASKS
                                                                            for b in s.budgets) + ' |')
    cpu = results['cpu']
    total = cpu['data'] + cpu['pretrain'] + cpu['probe']
    extra = f' The diagnostics (`--diagnostics`) took {cpu["diagnostics"] / 60:.0f} CPU-minutes more.' if cpu[
        'diagnostics'] else ''
    lines += ['', f'CPU time: {total / 60:.0f} CPU-minutes in all (data {cpu["data"] / 60:.1f}, pretraining '
              f'{cpu["pretrain"] / 60:.0f}, probes {cpu["probe"] / 60:.0f}), i.e. about {total / 120:.0f} minutes '
              f'on 2 quiet cores.{extra}']
    return '\n'.join(lines)


def update_docs(path: str, text: str, marks: tuple[str, str] = (MARK_START, MARK_END)) -> None:
    """Replace the text between the two ``marks`` in the markdown file ``path``."""
    start, end = marks
    with open(path) as f:
        doc = f.read()
    if start not in doc or end not in doc:
        raise ValueError(f'{path} lacks the markers {start} / {end} around the table to replace')
    head, rest = doc.split(start, 1)
    _, tail = rest.split(end, 1)
    with open(path, 'w') as f:
        f.write(f'{head}{start}\n{text}\n{end}{tail}')


def plot_health(args, out: str) -> None:
    """Training-health curves of every pretraining run (variants by colour, seeds by line style)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    panels = [('mae', 'MAE loss (masked patches)'), ('koleo', 'KoLeo value (unweighted)'),
              ('teacher_entropy', 'teacher entropy (nats)'), ('student_entropy', 'student entropy (nats)'),
              ('teacher_batch_entropy', 'entropy of the batch-mean teacher output'),
              ('used_prototypes', 'used prototypes (distinct arg-max / batch)'), ('center_norm', 'centre norm'),
              ('loss_dino', 'weighted DINO loss'), ('teacher_spread', 'teacher logit spread between images')]
    fig, axes = plt.subplots(3, 3, figsize=(14, 10))
    colours = dict(mae='tab:blue', dino='tab:orange', full='tab:green', full_paper='tab:red', full_long='tab:purple',
                   full_sharp='tab:brown', scratch='black')
    styles = ['-', '--', ':']
    num_prototypes = {_config(model_options(v)).model.dino_head.num_prototypes for v in VARIANTS}
    for path in sorted(glob.glob(osp.join(args.results, 'pretrain', '*.json'))):
        cell = _read_json(path)
        for ax, (key, _) in zip(axes.flat, panels):
            points = [(r['iter'], r[key]) for r in cell['log'] if key in r]
            if points and (key != 'loss_dino' or cell['variant'] != 'mae'):
                ax.plot(*zip(*points), styles[cell['seed'] % 3], color=colours[cell['variant']],
                        label=f'{cell["variant"]} s{cell["seed"]}')
    for ax, (key, title) in zip(axes.flat, panels):
        ax.set_title(title, fontsize=10)
        ax.set_xlabel('iteration')
        if 'entropy' in key:
            for k in sorted(num_prototypes):
                ax.axhline(math.log(k), color='grey', lw=0.8, ls='--')
                ax.text(0, math.log(k), f' log {k} (uniform)', va='bottom', fontsize=8, color='grey')
    axes.flat[1].legend(fontsize=7)  # the KoLeo panel has every run
    fig.suptitle('Sapiens2 tiny pretraining on SynthHumans 128x96: training health\n'
                 'mae = MAE only, dino = contrastive + KoLeo only, full = joint objective, full_paper: paper teacher '
                 'temperature,\nfull_long: 3x schedule, full_sharp: teacher temperature 0.01, scratch: the '
                 'from-scratch recipe (the spread panel has the runs logged after it was added)')
    fig.tight_layout()
    fig.savefig(out, dpi=80)
    plt.close(fig)


def _val_images(args, num: int):
    """``num`` held-out labeled-split images: (RGB float 0-255, normalised backbone input), both (num, 3, H, W)."""
    import torch

    from sapiens2_pretrain.dense_probe import MEAN, STD, load_images
    _, labeled = data_roots(args.setting)
    images = load_images(labeled, 'val', tuple(args.setting.probe['size']), num).float().flip(1)
    return images, (images - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)


def _seed0_model(args, cfg, variant):
    """The pretrainer of ``cfg`` in eval mode: initialised with seed 0 (``variant`` None) or loaded from the variant's
    seed-0 final checkpoint; None when that checkpoint does not exist."""
    checkpoint = None
    if variant is not None:
        checkpoint = variant_checkpoint(args, variant, 0)
        if not osp.isfile(checkpoint):
            return None
    return _load_pretrainer(cfg, checkpoint)


def _load_pretrainer(cfg, checkpoint):
    """The pretrainer of ``cfg`` in eval mode, initialised with seed 0 (``checkpoint`` None) or loaded."""
    import torch
    from mmengine.registry import DefaultScope

    from sapiens2.engine.checkpoint import load_model_weights
    from sapiens2.registry import MODELS
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('sapiens2'):
        model = MODELS.build(cfg.model)
    if checkpoint is None:
        model.init_weights()
    else:
        load_model_weights(model, checkpoint, strict=True)
    return model.eval()


def plot_reconstruction(args, out: str, num: int = 6) -> None:
    """Held-out images, the masked student input and the MAE reconstructions of the seed-0 MAE-only and full runs."""
    import cv2
    import numpy as np
    import torch

    from sapiens2_pretrain.dense_probe import MEAN, STD
    from sapiens2_pretrain.reconstruction import mae_reconstruction
    images, x = _val_images(args, num)
    mean, std = torch.tensor(MEAN).view(1, 3, 1, 1), torch.tensor(STD).view(1, 3, 1, 1)
    rows = [images]
    for variant in ('mae', 'full'):
        model = _seed0_model(args, _config(model_options(variant)), variant)
        if model is None:
            continue
        mask, recon = mae_reconstruction(model, x, torch.Generator().manual_seed(0))
        if len(rows) == 1:
            rows.append(torch.where(mask, torch.full_like(x, 0.5 * 255), images))
        rows.append((recon * std + mean).clamp(0, 255))
    grid = torch.cat([torch.cat(list(r), dim=2) for r in rows], dim=1)  # (3, rows * H, num * W), RGB
    picture = grid.permute(1, 2, 0).numpy().astype(np.uint8)[..., ::-1]
    picture = cv2.resize(picture, None, fx=2, fy=2, interpolation=cv2.INTER_NEAREST)
    cv2.imwrite(out, picture, [cv2.IMWRITE_JPEG_QUALITY, 90])


def _teacher_temperature(cfg, variant: str) -> float:
    options = dict(o.split('=', 1) for o in VARIANTS[variant]['options'])
    return float(options.get('model.dino_loss.teacher_temp', cfg.model.dino_loss.teacher_temp))


def teacher_spread(args, num: int = 64) -> str:
    """Markdown table: how much the teacher's [CLS] feature, DINO bottleneck and prototype logits vary between
    ``num`` held-out images, at initialisation and after each seed-0 pretraining run, next to the teacher
    temperature (centring removes the image-independent part, so a logit spread far below the temperature means a
    flat target)."""
    import torch
    _quiet_mmengine()
    _, x = _val_images(args, num)
    lines = ['| teacher | temperature | [CLS]: varying part / norm | bottleneck: mean distance to the mean | '
             'logit spread | logit spread / temperature | target entropy / log K |', '|---|---|---|---|---|---|---|']
    runs = [('at initialisation (seed 0)', None, 'full')] + [
        (f'{NAMES[v]}, after {variant_iters(args.setting, v)} iterations', v, v if VARIANTS[v]['weights']['dino']
         else 'full') for v in VARIANTS]  # MAE only trains no DINO head: shown at the contrastive runs' temperature
    for name, variant, temp_of in runs:
        cfg = _config(model_options(variant or 'full'))
        model = _seed0_model(args, cfg, variant)
        if model is None:
            continue
        with torch.no_grad():
            cls = model.teacher['backbone'](x)[0][:, 0]
            z = torch.nn.functional.normalize(model.teacher['dino_head'].mlp(cls), dim=-1)
            logits = model.teacher['dino_head'](cls)
        temperature = _teacher_temperature(cfg, temp_of)
        varying = ((cls - cls.mean(0)).norm(dim=-1) / cls.norm(dim=-1)).mean().item()
        spread = logits.std(dim=0, unbiased=False).mean().item()
        probs = torch.softmax((logits - logits.mean(0)) / temperature, dim=-1)
        entropy = -(probs * probs.clamp_min(1e-12).log()).sum(-1).mean().item() / math.log(logits.shape[1])
        lines.append(f'| {name} | {temperature:g} | {varying:.3f} | {(z - z.mean(0)).norm(dim=-1).mean().item():.3f} '
                     f'| {spread:.4f} | {spread / temperature:.2f} | {entropy:.3f} |')
    return '\n'.join(lines)


def _terciles(values):
    """Class 0-2 of each value of a 1-D tensor: below, between or above its 1/3 and 2/3 quantiles."""
    import torch
    return torch.bucketize(values, torch.quantile(values, torch.tensor([1 / 3, 2 / 3])))


def target_groups(args, shuffles: int = 20) -> str:
    """Markdown table: what the teacher targets group the held-out images by. For each seed-0 run with a DINO head
    whose checkpoint is here (variants, then lever cells): the normalised mutual information of each image's arg-max
    prototype with each scene property and with two image statistics (terciles of the brightness and of the colour
    cast, mean blue minus mean red), next to its level for a shuffled arg-max (chance)."""
    import torch

    from sapiens2.datasets.synthhumans.properties import PROPERTY_CLASSES
    from sapiens2_pretrain.health import normalized_mutual_information, target_health, teacher_targets
    _quiet_mmengine()
    num = min(HEALTH_IMAGES, args.setting.labeled['num_val'])
    images, x = _val_images(args, num)
    groups = {name: labels[:num] for name, labels in semantic_labels(args.setting, 'val').items()}
    groups.update(brightness=_terciles(images.mean((1, 2, 3))),
                  colour_cast=_terciles(images[:, 2].mean((1, 2)) - images[:, 0].mean((1, 2))))
    runs = [(NAMES[v], model_options(v), variant_checkpoint(args, v, 0))
            for v in VARIANTS if VARIANTS[v]['weights']['dino']]
    runs += [(f'lever cell: {lever_name(lever)}', model_options(f'lever-{lever}'), lever_checkpoint(args, lever))
             for lever in LEVERS if lever_weights(lever)['dino']]
    lines = ['| teacher (seed 0) | target entropy / log K | distinct arg-max | ' + ' | '.join(
        f'NMI: {name}' for name in groups) + ' | NMI of a shuffled arg-max (chance) |', '|---|' + '---|' * (
        len(groups) + 3)]
    g = torch.Generator().manual_seed(0)
    for name, options, checkpoint in runs:
        if not osp.isfile(checkpoint):
            continue
        probs = teacher_targets(_load_pretrainer(_config(options), checkpoint), x)
        top = probs.argmax(1)
        chance = sum(normalized_mutual_information(top[torch.randperm(num, generator=g)], groups[p])
                     for p in PROPERTY_CLASSES for _ in range(shuffles)) / (shuffles * len(PROPERTY_CLASSES))
        lines.append(f'| {name} | {target_health(probs)["entropy"]:.3f} | {len(top.unique())} | ' + ' | '.join(
            f'{normalized_mutual_information(top, labels):.3f}' for labels in groups.values()) + f' | {chance:.3f} |')
    return '\n'.join(lines)


def report(args) -> str:
    results = collect(args)
    text = table(args, results)
    print(text)
    semantic = semantic_table(args)
    print(semantic)
    if args.docs:
        update_docs(args.docs, text)
        update_docs(args.docs, semantic, SEMANTIC_MARKS)
        update_docs(args.docs, teacher_spread(args), SPREAD_MARKS)
        update_docs(args.docs, target_groups(args), GROUP_MARKS)
        images = osp.join(osp.dirname(args.docs), 'images')
        os.makedirs(images, exist_ok=True)
        plot_health(args, osp.join(images, 'pretraining_health.png'))
        plot_reconstruction(args, osp.join(images, 'pretraining_mae_reconstruction.jpg'))
    return text


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.job:
        run_job(args, args.job)
        return
    if args.health or args.levers:
        import torch
        torch.set_num_threads(int(os.environ.get('OMP_NUM_THREADS', '1')))
        _quiet_mmengine()
        run_levers(args) if args.levers else run_health(args)
        return
    if not args.report:
        schedule(args)
    report(args)


if __name__ == '__main__':
    try:
        main()
    except FileNotFoundError as e:  # a cell whose checkpoint is not on this machine: one line says what to do
        sys.exit(f'pretrain_probe.py: error: {e}')
