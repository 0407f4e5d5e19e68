import torch

from sapiens2.models.losses.masked import MaskedGradientMSELoss, MaskedL1Loss, forward_differences


def _mask(h=2, w=2, valid=None):
    mask = torch.ones(1, 1, h, w, dtype=torch.bool)
    if valid is not None:
        mask = valid.view(1, 1, h, w)
    return mask


def test_l1_sums_channels_and_divides_by_valid_pixels():
    pred = torch.zeros(1, 3, 2, 2)
    target = torch.ones(1, 3, 2, 2)
    target[..., 1, 1] = 100.0  # masked out
    mask = _mask(valid=torch.tensor([True, True, True, False]))
    assert MaskedL1Loss(loss_weight=2.0)(pred, target, mask).item() == 2.0 * 3.0


def test_l1_clamp_empty_mask_and_nan():
    pred, target = torch.zeros(1, 3, 2, 2), torch.full((1, 3, 2, 2), 10.0)
    assert MaskedL1Loss(clamp_max=4.0)(pred, target, _mask()).item() == 4.0
    assert MaskedL1Loss()(pred, target, torch.zeros(1, 1, 2, 2, dtype=torch.bool)).item() == 0.0
    assert MaskedL1Loss()(pred * float('nan'), target, _mask()).item() == 0.0


def test_l1_upsampled_variant_matches_on_constant_maps():
    pred, target = torch.zeros(1, 3, 4, 4), torch.full((1, 3, 4, 4), 0.5)
    loss = MaskedL1Loss(scale_factor=2)(pred, target, torch.ones(1, 1, 4, 4, dtype=torch.bool))
    assert abs(loss.item() - 1.5) < 1e-6


def test_gradient_mse_is_squared_and_reductions_follow_spec():
    pred = torch.zeros(1, 2, 1, 3)
    target = torch.tensor([0.0, 1.0, 3.0]).view(1, 1, 1, 3).repeat(1, 2, 1, 1)  # dx = 1, 2 per channel
    mask = torch.ones(1, 1, 1, 3, dtype=torch.bool)
    # x pairs: 2, per-pair channel sum = 2 * d^2 -> (2 * 1 + 2 * 4) / 2 = 5; no y pairs -> 0
    assert abs(MaskedGradientMSELoss()(pred, target, mask).item() - 5.0) < 1e-6
    mean_loss = MaskedGradientMSELoss(channel_reduction='mean', direction_reduction='mean')(pred, target, mask)
    assert abs(mean_loss.item() - 5.0 / 2 / 2) < 1e-6


def test_gradient_pairs_need_both_pixels_valid():
    x = torch.arange(6.0).view(1, 1, 2, 3)
    mask = torch.tensor([[True, True, False], [True, True, True]]).view(1, 1, 2, 3)
    _, mask_x, _, mask_y = forward_differences(x, mask)
    assert mask_x.sum() == 3 and mask_y.sum() == 2
