"""Dense probing (the paper's protocol): a frozen backbone + one fixed lightweight decoder trained with identical
hyper-parameters for every backbone, on segmentation (mIoU), surface normals (mean angular error, degrees) or depth
(absolute relative error of the predicted Z channel of the pointmap after per-image median scaling: the relative
depth of the people, as Sapiens2 pointmaps are compared in a canonical, scale-free space), so that backbones can be
ranked.

Data layout (SynthHumans): ``<root>/<split>/rgb/<name>.png`` (BGR) with ``seg/<name>.png`` (class ids, 255 ignored),
``normal/<name>.npy`` (HxWx3 unit normals, 0 on background) and ``depth/<name>.npy`` (HxW metric Z, 0 on background).
Backbone features are computed once (the backbone is frozen and there is no augmentation) and cached. Two reference
feature maps go through the same decoder: :func:`pixel_features` (the raw pixels, patch by patch) and
:func:`label_features` (the ground truth itself, pooled to the feature grid: the ceiling of the protocol).
"""
import glob
import os.path as osp
from dataclasses import asdict, dataclass

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from mmengine.registry import MODELS
from torch import Tensor, nn

TASKS = dict(seg=dict(metric='mIoU', lower_is_better=False),
             normal=dict(metric='mean_angle_deg', lower_is_better=True),
             depth=dict(metric='abs_rel', lower_is_better=True))
LAYERS = ('all', 'last')
MEAN = (123.675, 116.28, 103.53)
STD = (58.395, 57.12, 57.375)
LOG_DEPTH_RANGE = 20.0  # depth predictions are clamped to exp(±20) x their image's median before the metric


@dataclass
class ProbeSettings:
    """Hyper-parameters shared by every probed backbone.

    ``size`` (H, W) is the backbone input and the evaluation resolution; training targets are subsampled by
    ``label_stride``. ``layers='all'`` concatenates the feature maps of every block (every output of a non-Sapiens2
    backbone, resized to the finest); ``'last'`` uses the last one. The decoder trains ``steps`` AdamW steps on
    batches of ``batch_size`` drawn from the first ``num_train`` training images (None: all), whatever their number,
    so small and large label budgets get the same optimisation.
    """
    size: tuple[int, int] = (128, 96)
    layers: str = 'all'
    hidden: int = 96
    steps: int = 400
    batch_size: int = 16
    lr: float = 2e-3
    weight_decay: float = 0.05
    num_classes: int = 29
    label_stride: int = 4
    num_train: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.layers not in LAYERS:
            raise ValueError(f'ProbeSettings.layers must be one of {LAYERS}, got {self.layers!r}')
        self.size = tuple(self.size)


class ProbeDecoder(nn.Module):
    """Fixed per-channel standardisation (statistics of the training features), 1x1 -> 3x3 convolutions at feature
    resolution, a 1x1 convolution to ``out_channels * upscale**2`` and a pixel shuffle to ``upscale`` x the feature
    resolution; outputs are resized bilinearly to the requested size when it differs."""

    def __init__(self, in_channels: int, out_channels: int, hidden: int = 96, upscale: int = 1) -> None:
        super().__init__()
        self.upscale = upscale
        self.register_buffer('mean', torch.zeros(1, in_channels, 1, 1))
        self.register_buffer('std', torch.ones(1, in_channels, 1, 1))
        self.layers = nn.Sequential(nn.Conv2d(in_channels, hidden, 1), nn.GELU(),
                                    nn.Conv2d(hidden, hidden, 3, padding=1), nn.GELU(),
                                    nn.Conv2d(hidden, out_channels * upscale**2, 1), nn.PixelShuffle(upscale))

    def set_statistics(self, features: Tensor) -> None:
        """Per-channel mean and standard deviation of (N, C, h, w) training features; the variance gets a floor of
        1 % of the mean channel variance, so that a channel that is (nearly) constant on the training images is not
        blown up on others."""
        var = features.var(dim=(0, 2, 3), keepdim=True)
        self.mean.copy_(features.mean(dim=(0, 2, 3), keepdim=True))
        self.std.copy_(torch.sqrt(var + 1e-2 * var.mean() + 1e-12))

    def start_at(self, constant: Tensor) -> None:
        """Starts the decoder as the constant predictor ``constant`` (out_channels, ): zero weights and that bias in
        the output convolution, so that training starts from the floor instead of from random outputs."""
        out_conv = self.layers[-2]
        nn.init.zeros_(out_conv.weight)
        with torch.no_grad():
            out_conv.bias.copy_(constant.to(out_conv.bias).repeat_interleave(self.upscale**2))

    def forward(self, features: Tensor, size: tuple[int, int]) -> Tensor:
        out = self.layers((features - self.mean) / self.std)
        if tuple(out.shape[-2:]) != tuple(size):
            out = F.interpolate(out, size=size, mode='bilinear', align_corners=False)
        return out


# ----------------------------------------------------------------------------------------------------- data
def _read_target(root: str, split: str, task: str, name: str) -> np.ndarray:
    if task == 'seg':
        path = osp.join(root, split, 'seg', f'{name}.png')
        target = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    else:
        path = osp.join(root, split, task, f'{name}.npy')
        target = np.load(path) if osp.isfile(path) else None
    if target is None:
        raise FileNotFoundError(f'dense probe: missing or unreadable {task} target {path}')
    return target


def _image_files(root: str, split: str, limit: int | None) -> list[str]:
    files = sorted(glob.glob(osp.join(root, split, 'rgb', '*.png')))
    if not files:
        raise FileNotFoundError(f'dense probe: no images in {osp.join(root, split, "rgb")}; generate SynthHumans '
                                'with sapiens2.datasets.synthhumans.ensure_synthhumans or pass --data-root.')
    if limit is not None and len(files) < limit:
        raise ValueError(f'dense probe: {limit} {split} images requested but {osp.join(root, split, "rgb")} holds '
                         f'{len(files)}; generate more or lower num_train.')
    return files[:limit]


def load_images(root: str, split: str, size: tuple[int, int], limit: int | None = None) -> Tensor:
    """The first ``limit`` (sorted; None: all) images of a split, (N, 3, H, W) uint8 BGR resized to ``size``."""
    h, w = size
    images = []
    for path in _image_files(root, split, limit):
        img = cv2.imread(path, cv2.IMREAD_COLOR)
        if img is None:
            raise ValueError(f'dense probe: unreadable image {path}')
        images.append(cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA).transpose(2, 0, 1))
    return torch.from_numpy(np.stack(images))


def load_targets(root: str, split: str, task: str, size: tuple[int, int], limit: int | None = None) -> Tensor:
    """Targets of the images of :func:`load_images`, resized (nearest) to ``size``: seg (N, H, W) long,
    normal (N, 3, H, W) float, depth (N, 1, H, W) float; 0 / 255 mark background as in the dataset."""
    h, w = size
    targets = []
    for path in _image_files(root, split, limit):
        name = osp.splitext(osp.basename(path))[0]
        targets.append(cv2.resize(_read_target(root, split, task, name), (w, h), interpolation=cv2.INTER_NEAREST))
    target = torch.from_numpy(np.stack(targets))
    if task == 'seg':
        return target.long()
    if task == 'normal':
        return target.float().permute(0, 3, 1, 2)
    return target.float()[:, None]


def load_split(root: str, split: str, task: str, size: tuple[int, int],
               limit: int | None = None) -> tuple[Tensor, Tensor]:
    """Images and targets of a split (see :func:`load_images` and :func:`load_targets`)."""
    return load_images(root, split, size, limit), load_targets(root, split, task, size, limit)


# ------------------------------------------------------------------------------------------------- features
def _normalise(images: Tensor) -> Tensor:
    mean = torch.tensor(MEAN, device=images.device).view(1, 3, 1, 1)
    std = torch.tensor(STD, device=images.device).view(1, 3, 1, 1)
    return (images.float().flip(1) - mean) / std


def _is_sapiens2(cfg: dict) -> bool:
    return str(cfg.get('type', '')).split('.')[-1] == 'Sapiens2'


def build_frozen_backbone(backbone_cfg: dict, checkpoint: str | None = None, prefix: str | None = 'auto',
                          size: tuple[int, int] = (128, 96), layers: str = 'all') -> nn.Module:
    """Builds a registered backbone, loads ``checkpoint`` strictly (or keeps its random init when None) and freezes
    it. A Sapiens2 backbone is set to ``out_type='featmap'`` at ``size``, with every block as an output when
    ``layers='all'``. ``prefix='auto'`` strips ``backbone.`` when the checkpoint's keys carry it (task or pretraining
    checkpoints); ``'teacher.backbone.'`` selects the teacher of a pretraining checkpoint. Bare-key files (the
    output of ``export_backbone`` or the official pretrain files) load as they are."""
    from sapiens2.engine.checkpoint import load_model_weights, load_weights
    if layers not in LAYERS:
        raise ValueError(f'layers must be one of {LAYERS}, got {layers!r}')
    cfg = dict(backbone_cfg)
    cfg.pop('init_cfg', None)
    sapiens2 = _is_sapiens2(cfg)
    if sapiens2:
        cfg.update(out_type='featmap', img_size=tuple(size), frozen_stages=-1, with_cp=False)
    backbone = MODELS.build(cfg)
    if sapiens2 and layers == 'all':
        backbone.out_indices = list(range(backbone.num_layers))
    if hasattr(backbone, 'init_weights'):
        backbone.init_weights()
    if checkpoint is not None:
        state = load_weights(checkpoint)
        if prefix == 'auto':
            prefix = 'backbone.' if any(k.startswith('backbone.') for k in state) else None
        load_model_weights(backbone, state, strict=True, prefix=prefix)
    backbone.eval()  # some backbones' train() (mmseg ResNet) returns None: no chaining
    backbone.requires_grad_(False)
    return backbone


def _combine(outputs, layers: str) -> Tensor:
    maps = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    bad = [tuple(m.shape) for m in maps if not isinstance(m, Tensor) or m.dim() != 4]
    if bad:
        raise ValueError(f'dense probe needs (B, C, h, w) feature maps from the backbone, got shapes {bad}')
    if layers == 'last':
        return maps[-1]
    size = max((tuple(m.shape[-2:]) for m in maps), key=lambda s: s[0] * s[1])
    return torch.cat([m if tuple(m.shape[-2:]) == size else
                      F.interpolate(m, size=size, mode='bilinear', align_corners=False) for m in maps], dim=1)


@torch.no_grad()
def extract_features(backbone: nn.Module, images: Tensor, layers: str = 'all', batch_size: int = 32) -> Tensor:
    """Frozen features (N, C, h, w) of BGR uint8 images, normalised as in training (official mean/std): every output
    map of the backbone concatenated (``layers='all'``, resized to the finest) or the last one."""
    device = next(backbone.parameters()).device
    feats = []
    for start in range(0, images.shape[0], batch_size):
        out = backbone(_normalise(images[start:start + batch_size].to(device)))
        feats.append(_combine(out, layers).float().cpu())
    return torch.cat(feats)


@torch.no_grad()
def extract_cls_features(backbone: nn.Module, images: Tensor, batch_size: int = 32) -> Tensor:
    """Frozen [CLS] token (N, C) of BGR uint8 images after the last block and its norm: the feature the DINO head
    reads in pretraining. ``backbone`` is a Sapiens2 backbone with a [CLS] token, e.g. from ``build_frozen_backbone``
    (its output settings are restored afterwards)."""
    if getattr(backbone, 'cls_token', None) is None:
        raise ValueError(f'{type(backbone).__name__} has no [CLS] token: use extract_features for pooled features')
    settings = backbone.out_type, backbone.out_indices
    backbone.out_type, backbone.out_indices = 'cls_token', [backbone.num_layers - 1]
    try:
        device = next(backbone.parameters()).device
        return torch.cat([backbone(_normalise(images[i:i + batch_size].to(device)))[0].float().cpu()
                          for i in range(0, images.shape[0], batch_size)])  # (N, C)
    finally:
        backbone.out_type, backbone.out_indices = settings


def pixel_features(images: Tensor, stride: int) -> Tensor:
    """Reference features: the normalised pixels of each ``stride`` x ``stride`` patch stacked as channels
    (N, 3 * stride**2, H / stride, W / stride)."""
    return F.pixel_unshuffle(_normalise(images), stride)


def label_features(root: str, split: str, size: tuple[int, int], stride: int, num_classes: int = 29,
                   limit: int | None = None) -> Tensor:
    """Reference features from the ground truth (the protocol's ceiling at this feature resolution): one-hot part
    labels, normals, log-depth (0 on background) and the person mask, average-pooled by ``stride``."""
    seg = load_targets(root, split, 'seg', size, limit)
    normal = load_targets(root, split, 'normal', size, limit)
    depth = load_targets(root, split, 'depth', size, limit)
    fg = (depth > 0).float()
    log_depth = torch.where(depth > 0, torch.log(depth.clamp(min=1e-3)), torch.zeros_like(depth))
    onehot = F.one_hot(seg.clamp(max=num_classes - 1) * (seg != 255), num_classes).permute(0, 3, 1, 2).float()
    return F.avg_pool2d(torch.cat([onehot, normal, log_depth, fg], dim=1), stride)


# ---------------------------------------------------------------------------------------------- task logic
def _loss(task: str, out: Tensor, target: Tensor) -> Tensor:
    if task == 'seg':
        return F.cross_entropy(out, target, ignore_index=255)
    fg = _foreground(task, target)
    if task == 'normal':
        cos = F.cosine_similarity(out, target, dim=1)
        return (1 - cos)[fg].mean()
    # scale-invariant L1 on log-depth: each image's mean log-ratio over its person pixels is removed
    weight = fg.float()
    ratio = out[:, 0] - torch.log(target[:, 0].clamp(min=1e-3))
    offset = (ratio * weight).sum(dim=(1, 2)) / weight.sum(dim=(1, 2)).clamp(min=1.0)
    return ((ratio - offset[:, None, None]).abs() * weight).sum() / weight.sum().clamp(min=1.0)


def _foreground(task: str, target: Tensor) -> Tensor:
    return target.norm(dim=1) > 0.5 if task == 'normal' else target[:, 0] > 0


def _accumulate(task: str, out: Tensor, target: Tensor, stats: dict, num_classes: int) -> None:
    if task == 'seg':
        pred = out.argmax(1)
        valid = target != 255
        idx = target[valid] * num_classes + pred[valid]
        stats['confusion'] = stats.get('confusion', 0) + torch.bincount(idx, minlength=num_classes**2)
        return
    fg = _foreground(task, target)
    if task == 'normal':
        cos = F.cosine_similarity(out, target, dim=1).clamp(-1, 1)
        errors = torch.rad2deg(torch.acos(cos))[fg]
    else:
        errors = torch.cat([_median_scaled_abs_rel(pred[m], gt[m]) for pred, gt, m in
                            zip(out[:, 0].float(), target[:, 0], fg) if m.any()] or [out.new_zeros(0)])
    stats['sum'] = stats.get('sum', 0.0) + float(errors.sum())
    stats['count'] = stats.get('count', 0) + int(errors.numel())


def _median_scaled_abs_rel(log_pred: Tensor, gt: Tensor) -> Tensor:
    """Per-pixel ``|s * pred - gt| / gt`` for ``pred = exp(log_pred)`` with ``s = median(gt) / median(pred)``
    (medians over the given pixels). ``pred`` is taken relative to its median log value, clamped to a factor
    ``exp(±LOG_DEPTH_RANGE)``, so that a wild prediction gives a large finite error instead of an overflow."""
    relative = (log_pred - log_pred.quantile(0.5)).clamp(-LOG_DEPTH_RANGE, LOG_DEPTH_RANGE).exp()
    scale = gt.quantile(0.5) / relative.quantile(0.5)
    return (scale * relative - gt).abs() / gt.clamp(min=1e-6)


def _finalise(task: str, stats: dict, num_classes: int) -> float:
    if task == 'seg':
        confusion = stats['confusion'].reshape(num_classes, num_classes).double()
        inter = confusion.diag()
        gt, pred = confusion.sum(1), confusion.sum(0)
        present = gt > 0
        return float((inter[present] / (gt + pred - inter)[present]).mean())
    return stats['sum'] / max(stats['count'], 1)


def _out_channels(task: str, num_classes: int) -> int:
    return dict(seg=num_classes, normal=3, depth=1)[task]


def constant_output(task: str, train_targets: Tensor, num_classes: int) -> Tensor:
    """The best constant decoder output (out_channels, ) on the training targets: log class frequencies (whose
    arg-max is the majority class), the mean normal direction, the median log depth (for depth any constant is
    equivalent: median scaling turns it into each image's median depth)."""
    if task == 'seg':
        counts = torch.bincount(train_targets[train_targets != 255], minlength=num_classes).float()
        return torch.log((counts + 1) / (counts.sum() + num_classes))
    if task == 'normal':
        return F.normalize(train_targets.permute(1, 0, 2, 3).flatten(1)[:, _foreground(task, train_targets).flatten()]
                           .mean(1), dim=0)
    return torch.log(train_targets[train_targets > 0]).median().reshape(1)


def constant_baseline(task: str, train_targets: Tensor, val_targets: Tensor, num_classes: int) -> float:
    """Metric of the best constant predictor fitted on the training targets (:func:`constant_output`), the floor a
    probe has to beat, and the probe decoder's starting point."""
    out = constant_output(task, train_targets, num_classes)
    pred = out.view(1, -1, 1, 1).expand(val_targets.shape[0], -1, *val_targets.shape[-2:])
    stats: dict = {}
    _accumulate(task, pred, val_targets, stats, num_classes)
    return _finalise(task, stats, num_classes)


def _downsample_targets(targets: Tensor, stride: int) -> Tensor:
    """Nearest (strided) subsampling of label maps (N, H, W) or (N, C, H, W)."""
    return targets[..., stride // 2::stride, stride // 2::stride].contiguous() if stride > 1 else targets


def train_and_evaluate(task: str, train: tuple[Tensor, Tensor], val: tuple[Tensor, Tensor],
                       settings: ProbeSettings) -> float:
    """Trains a fresh ``ProbeDecoder`` on cached train features/targets (the first ``num_train``; labels subsampled
    by ``label_stride``) for ``steps`` steps and returns the validation metric at full label resolution."""
    count = train[0].shape[0] if settings.num_train is None else settings.num_train
    if count > train[0].shape[0]:
        raise ValueError(f'dense probe: num_train={count} but only {train[0].shape[0]} training samples are given')
    feats = train[0][:count]
    targets = _downsample_targets(train[1][:count], settings.label_stride)
    size = tuple(targets.shape[-2:])
    upscale = max(1, round(size[0] / feats.shape[-2]))
    generator = torch.Generator().manual_seed(settings.seed)
    torch.manual_seed(settings.seed)
    decoder = ProbeDecoder(feats.shape[1], _out_channels(task, settings.num_classes), settings.hidden, upscale)
    decoder.set_statistics(feats)
    decoder.start_at(constant_output(task, train[1][:count], settings.num_classes))
    optimizer = torch.optim.AdamW(decoder.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, settings.steps)
    decoder.train()
    order = torch.empty(0, dtype=torch.long)
    for _ in range(settings.steps):
        if order.numel() < settings.batch_size:
            order = torch.cat([order, torch.randperm(count, generator=generator)])
        idx, order = order[:settings.batch_size], order[settings.batch_size:]
        loss = _loss(task, decoder(feats[idx], size), targets[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
    decoder.eval()
    stats: dict = {}
    size = tuple(val[1].shape[-2:])
    with torch.no_grad():
        for idx in torch.arange(val[0].shape[0]).split(64):
            out = decoder(val[0][idx], size)
            if task == 'normal':
                out = F.normalize(out, dim=1)
            _accumulate(task, out, val[1][idx], stats, settings.num_classes)
    return _finalise(task, stats, settings.num_classes)


def dense_probe(backbone_cfg: dict,
                checkpoint: str | None,
                task: str,
                data_root: str,
                settings: ProbeSettings | None = None,
                prefix: str | None = 'auto',
                device: str = 'cpu') -> dict:
    """Runs the probe and returns ``dict(task, metric, value, lower_is_better, constant_baseline, checkpoint,
    num_train, num_val, settings)``; ``checkpoint=None`` probes the randomly initialised backbone."""
    if task not in TASKS:
        raise ValueError(f'dense probe task must be one of {sorted(TASKS)}, got {task!r}')
    settings = settings or ProbeSettings()
    torch.manual_seed(settings.seed)
    backbone = build_frozen_backbone(backbone_cfg, checkpoint, prefix, settings.size, settings.layers).to(device)
    train_images, train_targets = load_split(data_root, 'train', task, settings.size, settings.num_train)
    val_images, val_targets = load_split(data_root, 'val', task, settings.size)
    train = (extract_features(backbone, train_images, settings.layers), train_targets)
    val = (extract_features(backbone, val_images, settings.layers), val_targets)
    value = train_and_evaluate(task, train, val, settings)
    return dict(task=task, metric=TASKS[task]['metric'], value=value, lower_is_better=TASKS[task]['lower_is_better'],
                constant_baseline=constant_baseline(task, train_targets, val_targets, settings.num_classes),
                checkpoint=checkpoint, num_train=len(train_images), num_val=len(val_images),
                settings=asdict(settings))
