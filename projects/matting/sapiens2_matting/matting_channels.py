"""Channel layout of the matting prediction and target tensors, shared by the head, losses, metric and pictures.

* Prediction (the released model's 4 outputs after the sigmoid): pre-multiplied RGB foreground ``[:3]``, alpha
  ``[3:]``.
* Target (built by ``FormatMattingTarget``): alpha ``[0]``, pre-multiplied RGB foreground ``[1:4]``, trimap ``[4]``
  (0 background, 0.5 unknown, 1 foreground), and for training the RGB background ``[5:8]`` and the RGB image
  ``[8:11]`` the composition loss compares with. Values in [0, 1]; a foreground or background the dataset does not
  have is NaN.

Every helper takes (C, H, W) or (B, C, H, W) tensors and returns views with the channel axis kept.
"""
from typing import NamedTuple, Optional

import torch

PRED_CHANNELS = 4
EVAL_TARGET_CHANNELS = 5
TRAIN_TARGET_CHANNELS = 11
TRIMAP_BACKGROUND, TRIMAP_UNKNOWN, TRIMAP_FOREGROUND = 0.0, 0.5, 1.0


class MattingPrediction(NamedTuple):
    foreground: torch.Tensor
    alpha: torch.Tensor


class MattingTarget(NamedTuple):
    alpha: torch.Tensor
    foreground: torch.Tensor
    trimap: torch.Tensor
    background: Optional[torch.Tensor]
    image: Optional[torch.Tensor]


def _channels(x: torch.Tensor, start: int, length: int) -> torch.Tensor:
    return x.narrow(-3, start, length)


def split_prediction(pred: torch.Tensor) -> MattingPrediction:
    """(foreground (.., 3, H, W), alpha (.., 1, H, W)) of a 4-channel prediction."""
    if pred.shape[-3] != PRED_CHANNELS:
        raise ValueError(f'a matting prediction has {PRED_CHANNELS} channels (foreground RGB, alpha), got '
                         f'{pred.shape[-3]} (shape {tuple(pred.shape)})')
    return MattingPrediction(_channels(pred, 0, 3), _channels(pred, 3, 1))


def split_target(target: torch.Tensor) -> MattingTarget:
    """The parts of a 5-channel (evaluation) or 11-channel (training) matting target."""
    channels = target.shape[-3]
    if channels not in (EVAL_TARGET_CHANNELS, TRAIN_TARGET_CHANNELS):
        raise ValueError(f'a matting target has {EVAL_TARGET_CHANNELS} or {TRAIN_TARGET_CHANNELS} channels, got '
                         f'{channels} (shape {tuple(target.shape)}); build it with FormatMattingTarget')
    full = channels == TRAIN_TARGET_CHANNELS
    return MattingTarget(alpha=_channels(target, 0, 1), foreground=_channels(target, 1, 3),
                         trimap=_channels(target, 4, 1), background=_channels(target, 5, 3) if full else None,
                         image=_channels(target, 8, 3) if full else None)


def unknown_region(trimap: torch.Tensor) -> torch.Tensor:
    """Bool map of the trimap's unknown pixels."""
    return (trimap > 0.25) & (trimap < 0.75)


def alpha_channel(dense: torch.Tensor) -> torch.Tensor:
    """The alpha (.., 1, H, W) of a prediction (4 channels) or a target (5 or 11 channels)."""
    if dense.shape[-3] == PRED_CHANNELS:
        return split_prediction(dense).alpha
    return split_target(dense).alpha
