"""Pretraining model: heads, decoder, student/teacher mechanics, sparse encoding, EMA hook."""
from types import SimpleNamespace

import pytest
import torch

from sapiens2_pretrain.engine import TeacherEMAHook
from sapiens2_pretrain.models import DINOHead, MAEDecoder
from sapiens2_pretrain.models.mae_decoder import sincos_pos_embed_2d
from sapiens2_pretrain.reconstruction import mae_reconstruction

HEALTH = {'teacher_entropy', 'student_entropy', 'teacher_batch_entropy', 'used_prototypes', 'teacher_spread',
          'center_norm'}


def test_dino_head_is_weight_normalised_and_bounded():
    head = DINOHead(in_channels=8, num_prototypes=5, hidden_dim=16, bottleneck_dim=4)
    head.init_weights()
    x = torch.randn(3, 8)
    out = head(x)
    assert out.shape == (3, 5) and out.abs().max() <= 1.0 + 1e-6
    with torch.no_grad():
        head.prototypes.weight.mul_(torch.tensor([[3.0], [0.5], [2.0], [7.0], [1.0]]))
    torch.testing.assert_close(head(x), out)  # gain fixed to 1: row scales do not matter


def test_mae_decoder_places_visible_tokens_and_mask_tokens():
    dec = MAEDecoder(in_channels=8, embed_dims=8, num_layers=0, num_heads=2, patch_size=2, num_prefix_tokens=1)
    dec.init_weights()
    grid = (2, 3)
    keep = torch.tensor([[1, 4]])
    tokens = torch.randn(1, 3, 8)
    out = dec(tokens, keep, grid)
    assert out.shape == (1, 6, 12)
    pos = sincos_pos_embed_2d(8, grid)
    expect_visible = dec.pred(dec.norm(dec.embed(tokens[0, 1]) + pos[1]))
    expect_masked = dec.pred(dec.norm(dec.mask_token[0, 0] + pos[0]))
    torch.testing.assert_close(out[0, 1], expect_visible)
    torch.testing.assert_close(out[0, 0], expect_masked)


def test_teacher_starts_as_frozen_copy_of_student(tiny_pretrainer):
    model = tiny_pretrainer()
    student = model.backbone.state_dict()
    for key, value in model.teacher['backbone'].state_dict().items():
        torch.testing.assert_close(value, student[key], rtol=0, atol=0)
    assert not any(p.requires_grad for p in model.teacher.parameters())


def _total(losses: dict) -> torch.Tensor:
    return sum(v for k, v in losses.items() if k.startswith('loss_'))


def test_loss_backward_reaches_student_not_teacher(tiny_pretrainer, tiny_inputs):
    model = tiny_pretrainer()
    losses = model(tiny_inputs(), mode='loss')
    assert set(losses) == {'loss_mae', 'loss_dino', 'loss_koleo', 'mae', 'koleo', *HEALTH}
    assert all(torch.isfinite(v) for v in losses.values())
    assert not any(v.requires_grad for k, v in losses.items() if not k.startswith('loss_'))
    _total(losses).backward()
    assert model.backbone.patch_embed.projection.weight.grad.abs().sum() > 0
    assert model.mae_decoder.mask_token.grad.abs().sum() > 0
    assert model.dino_head.prototypes.weight.grad.abs().sum() > 0
    assert all(p.grad is None for p in model.teacher.parameters())


def test_loss_weights_and_centre_update(tiny_pretrainer, tiny_inputs):
    model = tiny_pretrainer(loss_weights=dict(mae=2.0, koleo=0.0))
    before = model.dino_loss.center.clone()
    torch.manual_seed(0)
    weighted = model(tiny_inputs(), mode='loss')
    assert weighted['loss_koleo'] == 0
    assert not torch.equal(model.dino_loss.center, before)
    with pytest.raises(ValueError, match='Unknown loss_weights'):
        tiny_pretrainer(loss_weights=dict(contrastive=1.0))
    for bad in (dict(mae=0.0, dino=0.0, koleo=0.0), dict(mae=-1.0)):
        with pytest.raises(ValueError, match='>= 0 and not all 0'):
            tiny_pretrainer(loss_weights=bad)


def _forbid(module):
    def fail(*args, **kwargs):
        raise AssertionError(f'{type(module).__name__} must not run')
    module.forward = fail


def test_mae_only_runs_no_teacher_and_no_dino_head(tiny_pretrainer, tiny_inputs):
    model = tiny_pretrainer(loss_weights=dict(dino=0.0, koleo=0.0))
    _forbid(model.teacher['backbone'])
    _forbid(model.dino_head)
    losses = model(tiny_inputs(), mode='loss')
    assert losses['loss_dino'] == 0 and losses['loss_koleo'] == 0 and losses['loss_mae'] > 0
    assert torch.isfinite(losses['koleo']) and not HEALTH & set(losses)  # KoLeo still logged, no DINO monitors
    _total(losses).backward()
    assert model.backbone.cls_token.grad is not None and model.dino_head.prototypes.weight.grad is None


def test_contrastive_only_runs_no_decoder(tiny_pretrainer, tiny_inputs):
    model = tiny_pretrainer(loss_weights=dict(mae=0.0))
    _forbid(model.mae_decoder)
    losses = model(tiny_inputs(), mode='loss')
    assert losses['loss_mae'] == 0 and 'mae' not in losses and HEALTH <= set(losses)
    _total(losses).backward()
    assert model.mae_decoder.mask_token.grad is None and model.dino_head.prototypes.weight.grad is not None


def test_mae_reconstruction_keeps_visible_patches(tiny_pretrainer):
    model = tiny_pretrainer()
    images = torch.randn(2, 3, 64, 48)
    mask, recon = mae_reconstruction(model, images, torch.Generator().manual_seed(0))
    assert mask.shape == recon.shape == images.shape
    # 12 patches of 16x16 per view, round(0.75 * 12) = 9 masked
    assert mask[:, 0].float().mean().item() == pytest.approx(9 / 12)
    torch.testing.assert_close(recon[~mask], images[~mask])
    assert not torch.allclose(recon[mask], images[mask])


def test_sparse_student_equals_dense_encoder_when_nothing_masked(tiny_pretrainer):
    model = tiny_pretrainer(mask_generator=dict(type='MixedMaskGenerator', mask_ratio=0.0))
    images = torch.randn(3, 3, 64, 48)
    mask, keep = model.mask_generator(3, (4, 3))
    assert not mask.any()
    sparse = model.backbone(images, keep_indices=keep)[0]
    dense = model.backbone(images)[0]
    torch.testing.assert_close(sparse, dense, rtol=1e-5, atol=1e-5)


def test_sparse_student_encodes_only_visible_tokens(tiny_pretrainer):
    model = tiny_pretrainer()
    images = torch.randn(2, 3, 64, 48)
    mask, keep = model.mask_generator(2, (4, 3))
    tokens = model.backbone(images, keep_indices=keep)[0]
    assert tokens.shape == (2, model.backbone.num_extra_tokens + 3, model.backbone.embed_dims)


def test_ema_update_is_exact(tiny_pretrainer):
    model = tiny_pretrainer()
    with torch.no_grad():
        for p in model.backbone.parameters():
            p.add_(torch.randn_like(p))
    teacher_before = [p.clone() for p in model.teacher.parameters()]
    student = [p.detach().clone() for p in list(model.backbone.parameters()) + list(model.dino_head.parameters())]
    model.update_teacher(0.992)
    for t_new, t_old, s in zip(model.teacher.parameters(), teacher_before, student):
        torch.testing.assert_close(t_new, 0.992 * t_old + 0.008 * s, rtol=0, atol=1e-7)


def test_teacher_ema_hook_runs_after_optimizer_steps_only(tiny_pretrainer):
    model = tiny_pretrainer()
    calls = []
    model.update_teacher = calls.append
    runner = SimpleNamespace(model=model, optim_wrapper=SimpleNamespace(should_update=lambda: True))
    hook = TeacherEMAHook(momentum=0.992)
    hook.before_train(runner)
    hook.after_train_iter(runner, 0)
    runner.optim_wrapper.should_update = lambda: False  # gradient accumulation: no step, no teacher update
    hook.after_train_iter(runner, 1)
    assert calls == [0.992]
    with pytest.raises(TypeError, match='update_teacher'):
        hook.before_train(SimpleNamespace(model=torch.nn.Linear(1, 1)))


def test_bf16_autocast_gives_finite_fp32_losses(tiny_pretrainer, tiny_inputs):
    model = tiny_pretrainer()
    with torch.autocast('cpu', dtype=torch.bfloat16):
        losses = model(tiny_inputs(), mode='loss')
    assert all(v.dtype == torch.float32 and torch.isfinite(v) for v in losses.values())
    _total(losses).backward()
    assert torch.isfinite(model.backbone.patch_embed.projection.weight.grad).all()


def test_teacher_ema_hook_cosine_momentum_schedule(tiny_pretrainer):
    hook = TeacherEMAHook(momentum=0.99, final_momentum=1.0)
    assert [hook.momentum_at(i, 101) for i in (0, 50, 100, 200)] == pytest.approx([0.99, 0.995, 1.0, 1.0])
    assert TeacherEMAHook(momentum=0.992).momentum_at(50, 101) == 0.992
    calls = []
    model = tiny_pretrainer()
    model.update_teacher = calls.append
    runner = SimpleNamespace(model=model, optim_wrapper=SimpleNamespace(should_update=lambda: True), iter=100,
                             max_iters=101)
    hook.after_train_iter(runner, 0)
    assert calls == [pytest.approx(1.0)]
    with pytest.raises(ValueError, match='final_momentum'):
        TeacherEMAHook(final_momentum=1.5)
