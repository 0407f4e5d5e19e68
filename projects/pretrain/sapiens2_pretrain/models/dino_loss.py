"""Self-distillation (DINO) cross-entropy with teacher centring and a teacher-temperature warm-up."""
from typing import Sequence

import torch
import torch.nn.functional as F
from mmengine.dist import all_reduce, get_world_size
from torch import Tensor, nn

from sapiens2.registry import MODELS


@MODELS.register_module()
class DINOLoss(nn.Module):
    """Cross-entropy from centred, sharpened teacher [CLS] distributions to student distributions.

    Pairs: teacher global view ``i`` -> student global view ``j != i`` and teacher global view ``i`` -> every
    student local view; local <-> local pairs are skipped. Each pair's loss
    ``-sum_k softmax((t - c) / T_t)_k * log_softmax(s / T_s)_k`` is averaged over the batch, then over pairs.
    The centre ``c`` is an EMA (``center_momentum``) of the batch mean of the teacher logits, updated by
    :meth:`update_center` after the loss is computed. ``T_t`` rises linearly from ``warmup_teacher_temp`` to
    ``teacher_temp`` over the first ``warmup_iters`` iterations.
    """

    def __init__(self,
                 out_dim: int,
                 student_temp: float = 0.1,
                 teacher_temp: float = 0.07,
                 warmup_teacher_temp: float = 0.065,
                 warmup_iters: int = 1000,
                 center_momentum: float = 0.9) -> None:
        super().__init__()
        self.student_temp = student_temp
        self.teacher_temp_final = teacher_temp
        self.warmup_teacher_temp = warmup_teacher_temp
        self.warmup_iters = warmup_iters
        self.center_momentum = center_momentum
        self.register_buffer('center', torch.zeros(1, out_dim))

    def teacher_temp(self, iteration: int) -> float:
        """Teacher temperature at a (0-based) training iteration."""
        if iteration >= self.warmup_iters:
            return self.teacher_temp_final
        frac = iteration / self.warmup_iters
        return self.warmup_teacher_temp + frac * (self.teacher_temp_final - self.warmup_teacher_temp)

    def teacher_probs(self, teacher_logits: Tensor, iteration: int) -> Tensor:
        """Centred and sharpened teacher distributions (no gradient)."""
        logits = teacher_logits.detach().float() - self.center
        return F.softmax(logits / self.teacher_temp(iteration), dim=-1)

    def forward(self, student_global: Sequence[Tensor], student_local: Sequence[Tensor],
                teacher_global: Sequence[Tensor], iteration: int) -> Tensor:
        """Args: lists of per-view logits (B, K). Returns the mean cross-entropy over the selected pairs."""
        if len(student_global) != len(teacher_global) or len(teacher_global) < 1:
            raise ValueError(f'DINOLoss needs as many student as teacher global views, got '
                             f'{len(student_global)} and {len(teacher_global)}')
        log_student_global = [F.log_softmax(s.float() / self.student_temp, dim=-1) for s in student_global]
        log_student_local = [F.log_softmax(s.float() / self.student_temp, dim=-1) for s in student_local]
        total, pairs = 0.0, 0
        for i, teacher in enumerate(teacher_global):
            probs = self.teacher_probs(teacher, iteration)
            targets = [s for j, s in enumerate(log_student_global) if j != i] + log_student_local
            for log_student in targets:
                total = total + (-(probs * log_student).sum(dim=-1)).mean()
                pairs += 1
        if pairs == 0:
            raise ValueError('DINOLoss has no pairs: give 2 global views or at least one local view')
        return total / pairs

    @torch.no_grad()
    def health(self, student_global: Sequence[Tensor], teacher_global: Sequence[Tensor],
               iteration: int) -> dict[str, Tensor]:
        """Collapse monitors over the global views (no gradient), before the centre update of this step:

        * ``teacher_entropy`` / ``student_entropy``: mean per-sample entropy (nats) of the centred, sharpened
          teacher distribution and of the student distribution; ``log K`` is a uniform (flat) output;
        * ``teacher_batch_entropy``: entropy of the batch-mean teacher distribution; near 0 when every sample
          picks the same prototype;
        * ``used_prototypes``: distinct teacher arg-max prototypes divided by ``min(K, N)`` for the N global
          samples; ``1 / min(K, N)`` means one prototype for everything;
        * ``teacher_spread``: std over the samples of each teacher logit, averaged over the prototypes: how much the
          teacher's output depends on the image. Centring removes the rest, so a spread well below the teacher
          temperature means flat targets, which teach the student nothing but a flat output (uniform collapse);
        * ``center_norm``: L2 norm of the centre.
        """
        teacher = torch.cat([self.teacher_probs(t, iteration) for t in teacher_global])
        student = torch.cat([F.softmax(s.float() / self.student_temp, dim=-1) for s in student_global])

        def entropy(p: Tensor) -> Tensor:
            return -(p * p.clamp(min=1e-12).log()).sum(dim=-1)

        used = teacher.argmax(dim=-1).unique().numel() / min(teacher.shape[0], teacher.shape[1])
        logits = torch.cat([t.float() for t in teacher_global])
        return dict(teacher_entropy=entropy(teacher).mean(), student_entropy=entropy(student).mean(),
                    teacher_batch_entropy=entropy(teacher.mean(dim=0)), used_prototypes=teacher.new_tensor(used),
                    teacher_spread=logits.std(dim=0, unbiased=False).mean(), center_norm=self.center.norm())

    @torch.no_grad()
    def update_center(self, teacher_logits: Tensor) -> None:
        """EMA update of the centre with the (all-reduced) batch mean of teacher logits (N, K)."""
        batch_mean = teacher_logits.detach().float().mean(dim=0, keepdim=True)
        if get_world_size() > 1:
            all_reduce(batch_mean, op='mean')
        self.center.mul_(self.center_momentum).add_(batch_mean, alpha=1 - self.center_momentum)
