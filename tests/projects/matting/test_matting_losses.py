"""Matting losses against hand-computed values."""
import pytest
import torch
from sapiens2_matting import (
    MattingAlphaGradientLoss,
    MattingAlphaL1Loss,
    MattingCompositionLoss,
    MattingForegroundL1Loss,
    MattingLaplacianLoss,
)
from sapiens2_matting.models.matting_losses import laplacian_pyramid

NAN = float('nan')


def maps(alpha_p, alpha_g, trimap=None, fg_p=0.0, fg_g=0.0, background=0.0, image=0.0):
    """(pred (1, 4, H, W), target (1, 11, H, W)) from per-pixel lists or scalars broadcast to alpha's shape."""
    alpha_p = torch.tensor(alpha_p, dtype=torch.float32)
    shape = alpha_p.shape

    def plane(value, channels):
        value = torch.as_tensor(value, dtype=torch.float32)
        return value.expand(shape)[None].expand(channels, *shape)

    pred = torch.cat([plane(fg_p, 3), alpha_p[None]])[None]
    trimap = torch.full(shape, 0.5) if trimap is None else torch.tensor(trimap, dtype=torch.float32)
    target = torch.cat([plane(alpha_g, 1), plane(fg_g, 3), trimap[None], plane(background, 3), plane(image, 3)])
    return pred, target[None]


def full_mask(pred):
    return torch.ones(1, 1, *pred.shape[-2:], dtype=torch.bool)


def test_alpha_l1_everywhere_unknown_and_masked():
    pred, target = maps([[0.2, 0.6]], [[0.0, 1.0]], trimap=[[0.5, 1.0]])
    mask = full_mask(pred)
    assert MattingAlphaL1Loss()(pred, target, mask).item() == pytest.approx(0.3)
    assert MattingAlphaL1Loss(loss_weight=2.0, region='unknown')(pred, target, mask).item() == pytest.approx(0.4)
    assert MattingAlphaL1Loss()(pred, target, torch.tensor([[[[True, False]]]])).item() == pytest.approx(0.2)
    empty = torch.zeros_like(mask)
    assert MattingAlphaL1Loss()(pred, target, empty).item() == 0.0
    with pytest.raises(ValueError, match='region'):
        MattingAlphaL1Loss(region='edges')


def test_alpha_gradient_loss_on_both_directions():
    pred, target = maps([[0.0, 1.0], [0.0, 0.0]], 0.0)
    # d_x: rows give 1 and 0 (mean 0.5); d_y: columns give 0 and -1 (mean 0.5).
    assert MattingAlphaGradientLoss()(pred, target, full_mask(pred)).item() == pytest.approx(1.0)
    pred, target = maps([[0.0, 0.5, 1.0]], [[0.0, 0.0, 1.0]])
    assert MattingAlphaGradientLoss(loss_weight=3.0)(pred, target, full_mask(pred)).item() == pytest.approx(1.5)
    pred, target = maps([[0.0, 0.5, 1.0]], [[0.0, 0.0, 1.0]], trimap=[[0.5, 0.5, 1.0]])
    # only the pair of the two unknown pixels is left: |0.5 - 0|
    loss = MattingAlphaGradientLoss(region='unknown')(pred, target, full_mask(pred))
    assert loss.item() == pytest.approx(0.5)


def checkerboard(size=8):
    ys, xs = torch.meshgrid(torch.arange(size), torch.arange(size), indexing='ij')
    return ((ys + xs) % 2 * 2 - 1).float()


def test_laplacian_loss_ignores_offsets_and_sees_the_finest_band():
    # A constant offset has no band-pass content; a checkerboard is killed by the binomial blur, so it stays whole in
    # the finest band (weight 2^0) and nothing reaches the coarser ones.
    offset = torch.full((8, 8), 0.2)
    pred, target = maps((0.5 + offset).tolist(), 0.5)
    assert MattingLaplacianLoss()(pred, target, full_mask(pred)).item() == pytest.approx(0.0, abs=1e-6)
    pred, target = maps((0.7 + 0.25 * checkerboard()).tolist(), 0.5)
    assert MattingLaplacianLoss()(pred, target, full_mask(pred)).item() == pytest.approx(0.25, abs=1e-6)
    assert MattingLaplacianLoss(levels=1, loss_weight=4.0)(pred, target, full_mask(pred)).item() == \
        pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ValueError, match='levels'):
        MattingLaplacianLoss(levels=0)


def test_laplacian_pyramid_reconstructs_its_input():
    x = torch.rand(1, 1, 16, 12)
    bands = laplacian_pyramid(x, 3)
    assert [tuple(b.shape[-2:]) for b in bands] == [(16, 12), (8, 6), (4, 3)]
    assert bands[0].abs().sum() > 0


def test_composition_loss_and_unknown_backgrounds():
    pred, target = maps([[0.5, 0.5]], 0.5, fg_p=0.3, background=[[0.4, NAN]], image=0.6)
    # 0.3 + (1 - 0.5) * 0.4 = 0.5 against 0.6 on the first pixel; the second has no background.
    assert MattingCompositionLoss()(pred, target, full_mask(pred)).item() == pytest.approx(0.1)
    pred, target = maps([[0.5]], 0.5, fg_p=0.3, background=NAN, image=0.6)
    assert MattingCompositionLoss()(pred, target, full_mask(pred)).item() == 0.0
    with pytest.raises(ValueError, match='with_composition'):
        MattingCompositionLoss()(pred, target[:, :5], full_mask(pred))


def test_foreground_l1_only_where_alpha_is_positive_and_known():
    pred, target = maps([[0.5, 0.5, 0.5]], [[1.0, 0.0, 0.4]], fg_p=0.3, fg_g=[[0.5, 0.0, NAN]])
    assert MattingForegroundL1Loss(loss_weight=2.0)(pred, target, full_mask(pred)).item() == pytest.approx(0.4)


def test_losses_have_names_and_gradients():
    pred, target = maps(torch.rand(6, 6).tolist(), torch.rand(6, 6).tolist(), fg_p=0.2, fg_g=0.3, background=0.5,
                        image=0.4)
    pred.requires_grad_(True)
    losses = [MattingAlphaL1Loss(), MattingAlphaGradientLoss(), MattingLaplacianLoss(), MattingCompositionLoss(),
              MattingForegroundL1Loss()]
    assert len({loss.loss_name for loss in losses}) == 5 and all('loss' in loss.loss_name for loss in losses)
    sum(loss(pred, target, full_mask(pred)) for loss in losses).backward()
    assert pred.grad.abs().sum() > 0
