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

The package: this front holds the settings (variants, levers, backbones, probe settings) every part reads; ``cells``
where each cell's files live, ``jobs`` the cells themselves (data, pretraining, probes), ``health`` the lever cells,
``scheduler`` the order and parallel runs of the jobs, ``reports``, ``teacher`` and ``figures`` the tables and
pictures, ``cli`` the command line (``benchmarks/pretrain_probe.py``).
"""
import importlib
import os.path as osp
from dataclasses import dataclass, field

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
LAUNCHER = osp.join(ROOT, 'benchmarks', 'pretrain_probe.py')
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
FINETUNE_MARKS = '<!-- pretrain_finetune table start -->', '<!-- pretrain_finetune table end -->'
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
    variants: tuple = ()  # the variants pretrained (empty: every variant but the diagnostics)
    cls_probe: bool = False  # the semantic probes of the [CLS] token too, in every probe job
    finetune: tuple = ()  # fine-tuning runs (``FINETUNE_RUNS``) on the labeled set's pose, every seed


# Probe settings, fixed before any pretrained backbone was probed (chosen on random-init and ground-truth features):
# the decoder trains 300 steps with 64 labeled images (75 epochs) and 1200 with 512 (37.5 epochs).
PROBE = dict(size=(128, 96), layers='all', hidden=96, batch_size=16, lr=2e-3, weight_decay=0.05, label_stride=4)
SETTINGS = {
    'full': Setting('full', unlabeled=dict(num_train=4000, num_val=16, size=(128, 96), seed=1),
                    labeled=dict(num_train=512, num_val=256, size=(128, 96), seed=0),
                    iters=300, warmup=30, seeds=(0, 1, 2), budgets=(64, 512), steps={64: 300, 512: 1200},
                    probe=PROBE, variant_seeds=dict(full_paper=(0, ), full_long=(0, ), full_sharp=(0, ))),
    # Issue 42's round: the same protocol on SynthHumans' rich scene variety (no colour shortcut), the official
    # objective's variants left out (their targets are flat), the [CLS] probes and the fine-tuning in every seed.
    'rich': Setting('rich', unlabeled=dict(num_train=4000, num_val=16, size=(128, 96), seed=1, scene_variety='rich'),
                    labeled=dict(num_train=512, num_val=256, size=(128, 96), seed=0, scene_variety='rich'),
                    iters=300, warmup=30, seeds=(0, 1, 2), budgets=(64, 512), steps={64: 300, 512: 1200},
                    probe=PROBE, variants=('mae', 'scratch'), cls_probe=True,
                    finetune=('random', 'scratch', 'scratch_decay', 'random_decay')),
    'quick': Setting('quick', unlabeled=dict(num_train=128, num_val=4, size=(128, 96), seed=1),
                     labeled=dict(num_train=32, num_val=16, size=(128, 96), seed=0),
                     iters=8, warmup=2, seeds=(0, ), budgets=(8, 32), steps={8: 20, 32: 40}, probe=PROBE,
                     extra_options=['train_dataloader.batch_size=8'], variants=('scratch', ), cls_probe=True,
                     finetune=('random', 'scratch')),
}
# Fine-tuning (``finetune`` of a setting): the tiny pose recipe with the pretraining's backbone on the labeled set, at
# the same budget (``iters``) from random init and from a probed backbone's exported teacher; the paper fine-tunes with
# layer-wise lr decay, the tiny recipe (made for random init) without it.
FINETUNE = dict(config='projects/pretrain/configs/finetune/sapiens2_tiny_pose_synthhumans-128x96_pretrained.py',
                metric='PCK', iters=600, quick_iters=4)
FINETUNE_RUNS = {
    'random': dict(backbone=None, options=[], name='random init (from scratch)'),
    'scratch': dict(backbone='scratch', options=[], name='pretrained: full, from-scratch recipe'),
    'scratch_decay': dict(backbone='scratch', options=['optim_wrapper.paramwise_cfg.layer_decay_rate=0.75'],
                          name='pretrained: full, from-scratch recipe, layer-wise lr decay 0.75'),
    # the control of the row above: does the layer decay alone (lower lr in the early blocks) make the difference?
    'random_decay': dict(backbone=None, options=['optim_wrapper.paramwise_cfg.layer_decay_rate=0.75'],
                         name='random init, layer-wise lr decay 0.75'),
}
SEMANTIC_BUDGETS = (16, 64)  # labels per class of the semantic probes
SEMANTIC_FEATURES = dict(pooled='mean-pooled features of all blocks',  # the default; run with every probe
                         cls='[CLS] token after the last block')  # the DINO head's input: --job semantic_cls:...
# (variant, reference) pairs of the verdicts: each recipe of the full objective against random init and MAE only,
# and the from-scratch recipe against the official values
COMPARISONS = tuple((v, other) for v in ('full', 'full_paper', 'scratch') for other in ('random', 'mae')) + (
    ('scratch', 'full'), )
REFERENCES = ('pixels', 'labels')  # fixed features: probed with the first seed only (``reference_seeds``)


def variant_iters(setting: Setting, variant: str) -> int:
    """Pretraining iterations of a variant: the setting's, times the variant's ``schedule`` factor."""
    return setting.iters * VARIANTS[variant].get('schedule', 1)


def lever_weights(lever: str) -> dict:
    """The loss weights of a lever (of the first lever of ``COMBINED`` that sets them, for ``combined``)."""
    names = COMBINED if lever == 'combined' else [lever]
    return next((LEVERS[name]['weights'] for name in names if 'weights' in LEVERS[name]), VARIANTS['full']['weights'])


def lever_options(lever: str) -> list[str]:
    """The ``--cfg-options`` of a lever on top of the full objective; ``combined`` joins those of ``COMBINED``."""
    if lever == 'combined':
        return [o for name in COMBINED for o in LEVERS[name]['options']]
    return LEVERS[lever]['options']


def lever_name(lever: str) -> str:
    """A lever's name in the tables; ``combined`` lists the levers of ``COMBINED``."""
    if lever == 'combined':
        return 'combined: ' + ' + '.join(LEVERS[name]['name'] for name in COMBINED) if COMBINED else 'combined'
    return LEVERS[lever]['name']


def _options_dict(options: list[str]) -> dict:
    """``key=value`` config options as ``tools/train.py --cfg-options`` parses them."""
    from mmengine.config import DictAction
    return {k: DictAction._parse_iterable(v) for k, v in (o.split('=', 1) for o in options)}


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


#: What the package's front also answers, from the module that defines it (loaded on first use, for the tests).
_ELSEWHERE = dict(parse_args='cli', job_error='jobs', health_table='health', _semantic_difference='reports',
                  _terciles='teacher')


def __getattr__(name: str):
    if name not in _ELSEWHERE:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    return getattr(importlib.import_module(f'.{_ELSEWHERE[name]}', __name__), name)
