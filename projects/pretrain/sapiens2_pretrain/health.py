"""Does the self-distillation learn? Three measures of the teacher's targets on held-out images, and their verdict.

A self-distillation target that teaches something is sharp for each image (low entropy), differs between images
(many prototypes win an arg-max) and is not the same for every image (the batch-mean target is spread out). The two
known failures are a flat target (every image gets the uniform distribution) and a collapsed one (every image gets
the same prototype). See docs/pretraining.md ("Health check").
"""
import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn


@dataclass(frozen=True)
class HealthThresholds:
    """Pass marks: ``entropy < max_entropy``, ``usage >= min_usage``, ``batch_entropy > min_batch_entropy``."""
    max_entropy: float = 0.9
    min_usage: float = 0.25
    min_batch_entropy: float = 0.5


def _entropy(probs: Tensor) -> Tensor:
    return -(probs * probs.clamp_min(1e-12).log()).sum(dim=-1)


def target_health(probs: Tensor) -> dict[str, float]:
    """Health of teacher targets ``probs`` (N images, K prototypes; rows sum to 1), each measure >= 0:

    * ``entropy``: mean per-image entropy / log K (1 = flat targets);
    * ``usage``: distinct arg-max prototypes / min(K, N) (1 / min(K, N) = one prototype for every image);
    * ``batch_entropy``: entropy of the mean target / log min(K, N) (0 = every image has the same target; above
      1 when K > N and the targets are broad).
    """
    if probs.ndim != 2 or min(probs.shape) < 2:
        raise ValueError(f'target_health needs targets of shape (N >= 2 images, K >= 2 prototypes), got '
                         f'{tuple(probs.shape)}')
    num, k = probs.shape
    probs = probs.double()
    return dict(entropy=_entropy(probs).mean().item() / math.log(k),
                usage=probs.argmax(dim=-1).unique().numel() / min(k, num),
                batch_entropy=_entropy(probs.mean(dim=0)).item() / math.log(min(k, num)))


def health_verdict(health: dict[str, float], thresholds: HealthThresholds = HealthThresholds()) -> list[dict]:
    """One row per measure: name, value, pass mark, ``passed`` and, for a fail, the failure it shows."""
    t = thresholds
    checks = [
        ('entropy', health['entropy'] < t.max_entropy, f'< {t.max_entropy:g}',
         'flat targets: the teacher output hardly depends on the image, so the student learns nothing'),
        ('usage', health['usage'] >= t.min_usage, f'>= {t.min_usage:g}',
         'few prototypes win: the targets do not tell images apart'),
        ('batch_entropy', health['batch_entropy'] > t.min_batch_entropy, f'> {t.min_batch_entropy:g}',
         'collapse: (nearly) every image gets the same target'),
    ]
    return [dict(name=name, value=health[name], mark=mark, passed=bool(ok), reason='' if ok else reason)
            for name, ok, mark, reason in checks]


def health_passed(health: dict[str, float], thresholds: HealthThresholds = HealthThresholds()) -> bool:
    return all(row['passed'] for row in health_verdict(health, thresholds))


@torch.no_grad()
def teacher_targets(model: nn.Module, images: Tensor, batch_size: int = 64) -> Tensor:
    """The teacher targets a ``Sapiens2Pretrainer`` trains with, for normalised ``images`` (N, 3, H, W): the
    teacher's [CLS] prototype logits, centred by the trained centre and sharpened by the final teacher
    temperature. Returns (N, K) probabilities."""
    logits = torch.cat([model.teacher['dino_head'](model.teacher['backbone'](x)[0][:, 0])
                        for x in images.split(batch_size)])
    loss = model.dino_loss
    return torch.softmax((logits.float() - loss.center) / loss.teacher_temp_final, dim=-1)


def normalized_mutual_information(a: Tensor, b: Tensor) -> float:
    """How much two labelings of the same N images (integer class indices) agree, from 0 (independent) to 1 (the
    same grouping up to renaming): mutual information / sqrt(entropy(a) * entropy(b)); 0 when either is constant.
    Used to ask what the teacher targets group images by (their arg-max prototype against a known property)."""
    _, a = a.flatten().unique(return_inverse=True)
    _, b = b.flatten().unique(return_inverse=True)
    joint = torch.zeros(int(a.max()) + 1, int(b.max()) + 1, dtype=torch.float64)
    joint.index_put_((a, b), torch.ones_like(a, dtype=torch.float64), accumulate=True)
    joint /= a.numel()
    pa, pb = joint.sum(1), joint.sum(0)
    ha, hb = _entropy(pa).item(), _entropy(pb).item()
    if ha <= 0 or hb <= 0:
        return 0.0
    nonzero = joint > 0
    mi = (joint[nonzero] * (joint[nonzero] / (pa[:, None] * pb[None, :])[nonzero]).log()).sum().item()
    return max(mi, 0.0) / math.sqrt(ha * hb)


def format_verdict(rows: list[dict]) -> str:
    """Markdown table of :func:`health_verdict` rows."""
    lines = ['| measure | value | pass mark | verdict |', '|---|---|---|---|']
    lines += [f'| {r["name"]} | {r["value"]:.3f} | {r["mark"]} | {"pass" if r["passed"] else "FAIL: " + r["reason"]} |'
              for r in rows]
    return '\n'.join(lines)
