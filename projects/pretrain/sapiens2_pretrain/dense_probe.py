"""Dense probing (the paper's protocol): a frozen backbone + one fixed lightweight decoder trained with identical
hyper-parameters for every backbone, on segmentation (mIoU), surface normals (mean angular error, degrees) or depth
(absolute relative error of the predicted Z channel of the pointmap), so that backbones can be ranked.

Data layout (SynthHumans): ``<root>/<split>/rgb/<name>.png`` (BGR) with ``seg/<name>.png`` (class ids, 255 ignored),
``normal/<name>.npy`` (HxWx3 unit normals, 0 on background) and ``depth/<name>.npy`` (HxW metric Z, 0 on background).
Backbone features are computed once (the backbone is frozen and there is no augmentation) and cached.
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
MEAN = (123.675, 116.28, 103.53)
STD = (58.395, 57.12, 57.375)


@dataclass
class ProbeSettings:
    """Hyper-parameters shared by every probed backbone."""
    size: tuple[int, int] = (256, 192)
    hidden: int = 128
    epochs: int = 30
    batch_size: int = 32
    lr: float = 1e-3
    weight_decay: float = 1e-4
    num_classes: int = 29
    train_stride: int = 4
    seed: int = 0


class ProbeDecoder(nn.Module):
    """Parameter-free feature normalisation, 1x1 -> 3x3 -> 1x1 convolutions at feature resolution, bilinear
    upsampling of the output to the label resolution."""

    def __init__(self, in_channels: int, out_channels: int, hidden: int = 128) -> None:
        super().__init__()
        self.norm = nn.BatchNorm2d(in_channels, affine=False)
        self.layers = nn.Sequential(nn.Conv2d(in_channels, hidden, 1), nn.GELU(),
                                    nn.Conv2d(hidden, hidden, 3, padding=1), nn.GELU(),
                                    nn.Conv2d(hidden, out_channels, 1))

    def forward(self, features: Tensor, size: tuple[int, int]) -> Tensor:
        out = self.layers(self.norm(features))
        return F.interpolate(out, size=size, mode='bilinear', align_corners=False)


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


def load_split(root: str, split: str, task: str, size: tuple[int, int]) -> tuple[Tensor, Tensor]:
    """Images (N, 3, H, W) uint8 BGR and targets resized (nearest) to ``size``: seg (N, H, W) long,
    normal (N, 3, H, W) float, depth (N, 1, H, W) float; 0 / 255 mark background as in the dataset."""
    files = sorted(glob.glob(osp.join(root, split, 'rgb', '*.png')))
    if not files:
        raise FileNotFoundError(f'dense probe: no images in {osp.join(root, split, "rgb")}; generate SynthHumans '
                                'with sapiens2.datasets.synthhumans.ensure_synthhumans or pass --data-root.')
    h, w = size
    images, targets = [], []
    for path in files:
        name = osp.splitext(osp.basename(path))[0]
        img = cv2.imread(path, cv2.IMREAD_COLOR)
        if img is None:
            raise ValueError(f'dense probe: unreadable image {path}')
        images.append(cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA).transpose(2, 0, 1))
        target = cv2.resize(_read_target(root, split, task, name), (w, h), interpolation=cv2.INTER_NEAREST)
        targets.append(target)
    images = torch.from_numpy(np.stack(images))
    target = torch.from_numpy(np.stack(targets))
    if task == 'seg':
        return images, target.long()
    if task == 'normal':
        return images, target.float().permute(0, 3, 1, 2)
    return images, target.float()[:, None]


# ------------------------------------------------------------------------------------------------- backbone
def build_frozen_backbone(backbone_cfg: dict, checkpoint: str | None = None, prefix: str | None = 'auto',
                          size: tuple[int, int] = (256, 192)) -> nn.Module:
    """Builds a registered backbone, loads ``checkpoint`` strictly (or keeps its random init when None) and freezes
    it. A Sapiens2 backbone is set to ``out_type='featmap'`` at ``size``. ``prefix='auto'`` strips ``backbone.``
    when the checkpoint's keys carry it (task or pretraining checkpoints); ``'teacher.backbone.'`` selects the
    teacher of a pretraining checkpoint."""
    from sapiens2.engine.checkpoint import load_model_weights, load_weights
    cfg = dict(backbone_cfg)
    cfg.pop('init_cfg', None)
    if cfg.get('type') in ('Sapiens2', 'sapiens2.Sapiens2'):
        cfg.update(out_type='featmap', img_size=tuple(size))
    backbone = MODELS.build(cfg)
    if hasattr(backbone, 'init_weights'):
        backbone.init_weights()
    if checkpoint is not None:
        state = load_weights(checkpoint)
        if prefix == 'auto':
            prefix = 'backbone.' if any(k.startswith('backbone.') for k in state) else None
        load_model_weights(backbone, state, strict=True, prefix=prefix)
    backbone.eval().requires_grad_(False)
    return backbone


@torch.no_grad()
def extract_features(backbone: nn.Module, images: Tensor, batch_size: int = 16) -> Tensor:
    """Frozen features (N, C, h, w) of BGR uint8 images, normalised as in training (official mean/std)."""
    device = next(backbone.parameters()).device
    mean = torch.tensor(MEAN, device=device).view(1, 3, 1, 1)
    std = torch.tensor(STD, device=device).view(1, 3, 1, 1)
    feats = []
    for start in range(0, images.shape[0], batch_size):
        x = (images[start:start + batch_size].to(device).float().flip(1) - mean) / std
        out = backbone(x)
        out = out[-1] if isinstance(out, (tuple, list)) else out
        if out.dim() != 4:
            raise ValueError(f'dense probe needs a (B, C, h, w) feature map from the backbone, got {tuple(out.shape)}')
        feats.append(out.float().cpu())
    return torch.cat(feats)


# ---------------------------------------------------------------------------------------------- task logic
def _loss(task: str, out: Tensor, target: Tensor) -> Tensor:
    if task == 'seg':
        return F.cross_entropy(out, target, ignore_index=255)
    fg = _foreground(task, target)
    if task == 'normal':
        cos = F.cosine_similarity(out, target, dim=1)
        return (1 - cos)[fg].mean()
    return (out[:, 0] - torch.log(target[:, 0].clamp(min=1e-3))).abs()[fg].mean()


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
        errors = ((out[:, 0].exp() - target[:, 0]).abs() / target[:, 0].clamp(min=1e-6))[fg]
    stats['sum'] = stats.get('sum', 0.0) + float(errors.sum())
    stats['count'] = stats.get('count', 0) + int(errors.numel())


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


def constant_baseline(task: str, train_targets: Tensor, val_targets: Tensor, num_classes: int) -> float:
    """Metric of the best constant predictor fitted on the training targets (majority class, mean normal
    direction, median log-depth), the floor a probe has to beat."""
    if task == 'seg':
        valid = train_targets[train_targets != 255]
        out = F.one_hot(torch.bincount(valid, minlength=num_classes).argmax(), num_classes).float()
    elif task == 'normal':
        out = F.normalize(train_targets.permute(1, 0, 2, 3).flatten(1)[:, _foreground(task, train_targets).flatten()]
                          .mean(1), dim=0)
    else:
        out = torch.log(train_targets[train_targets > 0]).median().reshape(1)
    pred = out.view(1, -1, 1, 1).expand(val_targets.shape[0], -1, *val_targets.shape[-2:])
    stats: dict = {}
    _accumulate(task, pred, val_targets, stats, num_classes)
    return _finalise(task, stats, num_classes)


def _downsample_targets(targets: Tensor, stride: int) -> Tensor:
    """Nearest (strided) subsampling of label maps (N, H, W) or (N, C, H, W)."""
    return targets[..., stride // 2::stride, stride // 2::stride].contiguous() if stride > 1 else targets


def train_and_evaluate(task: str, train: tuple[Tensor, Tensor], val: tuple[Tensor, Tensor],
                       settings: ProbeSettings) -> float:
    """Trains a fresh ``ProbeDecoder`` on cached train features/targets (labels subsampled by ``train_stride``)
    and returns the validation metric at full label resolution."""
    feats = train[0]
    targets = _downsample_targets(train[1], settings.train_stride)
    torch.manual_seed(settings.seed)
    decoder = ProbeDecoder(feats.shape[1], _out_channels(task, settings.num_classes), settings.hidden)
    optimizer = torch.optim.AdamW(decoder.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    size = tuple(targets.shape[-2:])
    decoder.train()
    for _ in range(settings.epochs):
        for idx in torch.randperm(feats.shape[0]).split(settings.batch_size):
            loss = _loss(task, decoder(feats[idx], size), targets[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    decoder.eval()
    stats: dict = {}
    size = tuple(val[1].shape[-2:])
    with torch.no_grad():
        for idx in torch.arange(val[0].shape[0]).split(settings.batch_size):
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
    backbone = build_frozen_backbone(backbone_cfg, checkpoint, prefix, settings.size).to(device)
    train_images, train_targets = load_split(data_root, 'train', task, settings.size)
    val_images, val_targets = load_split(data_root, 'val', task, settings.size)
    train = (extract_features(backbone, train_images), train_targets)
    val = (extract_features(backbone, val_images), val_targets)
    value = train_and_evaluate(task, train, val, settings)
    return dict(task=task, metric=TASKS[task]['metric'], value=value, lower_is_better=TASKS[task]['lower_is_better'],
                constant_baseline=constant_baseline(task, train_targets, val_targets, settings.num_classes),
                checkpoint=checkpoint, num_train=len(train_images), num_val=len(val_images),
                settings=asdict(settings))
