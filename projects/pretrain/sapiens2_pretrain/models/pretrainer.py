"""Sapiens2 pretraining model: sparse masked reconstruction + self-distilled contrastive learning + KoLeo."""
import copy

import torch
from mmengine.logging import MessageHub
from mmengine.model import BaseModel
from torch import Tensor, nn

from sapiens2.registry import MODELS

DEFAULT_LOSS_WEIGHTS = dict(mae=1.0, dino=0.4, koleo=0.04)


def _views_first(views: Tensor) -> Tensor:
    """(B, V, 3, H, W) -> (V * B, 3, H, W), view-major so that ``.chunk(V)`` splits views."""
    return views.transpose(0, 1).flatten(0, 1)


@MODELS.register_module()
class Sapiens2Pretrainer(BaseModel):
    """Student (backbone + MAE decoder + DINO head) and EMA teacher (backbone + DINO head).

    Per image the inputs hold V global and N local views (see ``MultiViewDataPreprocessor``):

    * the student encodes each global view sparsely (only the visible patches, at their true RoPE positions, via the
      backbone's ``keep_indices``) and each local view densely;
    * the MAE decoder reconstructs the per-patch normalised pixels of the global views; MSE over masked patches;
    * the teacher encodes the full global views without gradient; its centred, sharpened [CLS] prototype
      distributions supervise the student's global (other view) and local [CLS] distributions;
    * KoLeo spreads the student's global [CLS] features, per view.

    ``loss = mae * L_mae + dino * L_dino + koleo * L_koleo`` with ``loss_weights`` (paper: 1.0 / 0.4 / 0.04); a
    weight of 0 skips its term (ablations: MAE only, contrastive + KoLeo only).
    The teacher is updated by :meth:`update_teacher`, called by ``TeacherEMAHook`` after each optimizer step.
    ``mae_decoder`` and ``dino_head`` configs get ``in_channels`` (and the decoder ``patch_size`` and
    ``num_prefix_tokens``) from the backbone; ``dino_loss`` gets ``out_dim`` from the head.
    """

    def __init__(self,
                 backbone: dict,
                 mae_decoder: dict,
                 dino_head: dict,
                 mask_generator: dict = dict(type='MixedMaskGenerator'),
                 mae_loss: dict = dict(type='MAELoss'),
                 dino_loss: dict = dict(type='DINOLoss'),
                 koleo_loss: dict = dict(type='KoLeoLoss'),
                 loss_weights: dict | None = None,
                 data_preprocessor: dict | None = None,
                 init_cfg: dict | None = None) -> None:
        if isinstance(data_preprocessor, dict):
            data_preprocessor = MODELS.build(data_preprocessor)
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        self.backbone = MODELS.build(backbone)
        if getattr(self.backbone, 'out_type', 'raw') != 'raw' or not getattr(self.backbone, 'with_cls_token', True):
            raise ValueError("Sapiens2Pretrainer needs a backbone with out_type='raw' and with_cls_token=True.")
        channels = self.backbone.embed_dims
        patch_size = self.backbone.patch_size
        self.mae_decoder = MODELS.build(dict(dict(in_channels=channels, patch_size=patch_size,
                                                  num_prefix_tokens=self.backbone.num_extra_tokens), **mae_decoder))
        self.dino_head = MODELS.build(dict(dict(in_channels=channels), **dino_head))
        self.mask_generator = MODELS.build(mask_generator)
        self.mae_loss = MODELS.build(dict(dict(patch_size=patch_size), **mae_loss))
        self.dino_loss = MODELS.build(dict(dict(out_dim=self.dino_head.prototypes.out_features), **dino_loss))
        self.koleo_loss = MODELS.build(koleo_loss)
        weights = dict(DEFAULT_LOSS_WEIGHTS, **(loss_weights or {}))
        unknown = set(weights) - set(DEFAULT_LOSS_WEIGHTS)
        if unknown:
            raise ValueError(f'Unknown loss_weights keys {sorted(unknown)}; valid: {sorted(DEFAULT_LOSS_WEIGHTS)}')
        if any(v < 0 for v in weights.values()) or not any(weights.values()):
            raise ValueError(f'loss_weights must be >= 0 and not all 0, got {weights}')
        self.loss_weights = weights
        self.teacher = nn.ModuleDict(dict(backbone=copy.deepcopy(self.backbone),
                                          dino_head=copy.deepcopy(self.dino_head)))
        self.teacher.requires_grad_(False)

    # ------------------------------------------------------------------------------------------------- teacher
    def _student_teacher_pairs(self) -> list[tuple[nn.Module, nn.Module]]:
        return [(self.backbone, self.teacher['backbone']), (self.dino_head, self.teacher['dino_head'])]

    def init_weights(self) -> None:
        """Initialises the student, then makes the teacher an exact copy of it."""
        super().init_weights()
        for student, teacher in self._student_teacher_pairs():
            teacher.load_state_dict(student.state_dict())

    @torch.no_grad()
    def update_teacher(self, momentum: float) -> None:
        """``teacher <- momentum * teacher + (1 - momentum) * student`` for every parameter; buffers copied."""
        for student, teacher in self._student_teacher_pairs():
            t_params = list(teacher.parameters())
            s_params = [p.detach() for p in student.parameters()]
            torch._foreach_mul_(t_params, momentum)
            torch._foreach_add_(t_params, s_params, alpha=1.0 - momentum)
            for t_buf, s_buf in zip(teacher.buffers(), student.buffers()):
                t_buf.copy_(s_buf)

    # ------------------------------------------------------------------------------------------------- forward
    def forward(self, inputs: dict, data_samples: list | None = None, mode: str = 'tensor'):
        if mode == 'loss':
            return self.loss(inputs)
        if mode == 'tensor':
            return self.backbone(_views_first(inputs['global_views']))
        raise ValueError(f'Sapiens2Pretrainer supports mode "loss" or "tensor", got "{mode}"; use '
                         'tools/dense_probe.py to evaluate a pretrained backbone.')

    def loss(self, inputs: dict) -> dict[str, Tensor]:
        """The weighted losses (``loss_*``) and, for the log, training-health values without gradient: ``mae``,
        ``koleo`` (unweighted) and the :meth:`DINOLoss.health` monitors. A term whose weight is 0 is not computed
        (its ``loss_*`` is 0): MAE-only training runs no teacher, contrastive-only training no decoder."""
        global_views = inputs['global_views']
        num_global = global_views.shape[1]
        images = _views_first(global_views)
        grid = (images.shape[2] // self.backbone.patch_size, images.shape[3] // self.backbone.patch_size)
        mask, keep_indices = self.mask_generator(images.shape[0], grid)
        mask, keep_indices = mask.to(images.device), keep_indices.to(images.device)
        w = self.loss_weights
        zero = images.new_zeros(())
        out = dict(loss_mae=zero, loss_dino=zero, loss_koleo=zero)

        tokens = self.backbone(images, keep_indices=keep_indices)[0]
        if w['mae']:
            loss_mae = self.mae_loss(self.mae_decoder(tokens, keep_indices, grid), images, mask)
            out.update(loss_mae=w['mae'] * loss_mae, mae=loss_mae.detach())
        student_cls = tokens[:, 0]
        with torch.set_grad_enabled(torch.is_grad_enabled() and bool(w['koleo'])):
            loss_koleo = torch.stack([self.koleo_loss(c) for c in student_cls.chunk(num_global)]).mean()
        out.update(loss_koleo=w['koleo'] * loss_koleo, koleo=loss_koleo.detach())
        if w['dino']:
            student_global = self.dino_head(student_cls).chunk(num_global)
            student_local = self._local_logits(inputs['local_views'])
            with torch.no_grad():
                teacher_logits = self.teacher['dino_head'](self.teacher['backbone'](images)[0][:, 0])
            iteration = self._iteration()
            teacher_global = teacher_logits.chunk(num_global)
            loss_dino = self.dino_loss(student_global, student_local, teacher_global, iteration)
            out.update(self.dino_loss.health(student_global, teacher_global, iteration))
            self.dino_loss.update_center(teacher_logits)
            out['loss_dino'] = w['dino'] * loss_dino
        return out

    def _local_logits(self, local_views: Tensor) -> tuple[Tensor, ...]:
        num_local = local_views.shape[1]
        if num_local == 0:
            return ()
        cls = self.backbone(_views_first(local_views))[0][:, 0]
        return self.dino_head(cls).chunk(num_local)

    @staticmethod
    def _iteration() -> int:
        """Current training iteration from MMEngine's message hub (0 outside a runner)."""
        return int(MessageHub.get_current_instance().get_info('iter', 0))
