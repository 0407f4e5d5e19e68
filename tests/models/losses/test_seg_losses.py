"""Segmentation losses on hand-made cases with known answers."""
import math

import pytest
import torch
import torch.nn.functional as F
from mmseg.registry import MODELS

import sapiens2.models.losses.seg_cross_entropy_loss  # noqa: F401  (registers the losses)
import sapiens2.models.losses.seg_dice_loss  # noqa: F401
from sapiens2.models.losses.seg_cross_entropy_loss import Sapiens2SegCrossEntropyLoss
from sapiens2.models.losses.seg_dice_loss import Sapiens2DiceLoss

LN2 = math.log(2.0)
SMOOTH = 1e-3


def labels(*rows):
    return torch.tensor([rows])  # (1, H, W)


class TestCrossEntropy:

    def test_weighted_mean_and_official_pixel_mean(self):
        logits = torch.zeros(1, 2, 1, 4)  # CE = ln 2 everywhere
        target = labels([0, 1, 255, 1])
        weighted = Sapiens2SegCrossEntropyLoss(class_weight=[0.1, 10.0])
        official = Sapiens2SegCrossEntropyLoss(class_weight=[0.1, 10.0], average='all_pixels')
        assert weighted(logits, target).item() == pytest.approx(LN2)
        assert official(logits, target).item() == pytest.approx((0.1 + 10 + 10) * LN2 / 4)

    def test_weighted_equals_torch_mean(self):
        torch.manual_seed(0)
        logits = torch.randn(2, 5, 6, 7)
        target = torch.randint(0, 5, (2, 6, 7))
        target[0, 0] = 255
        weight = [0.1, 1.0, 2.0, 3.0, 10.0]
        expected = F.cross_entropy(logits, target, weight=torch.tensor(weight), ignore_index=255)
        assert Sapiens2SegCrossEntropyLoss(class_weight=weight)(logits, target).item() == pytest.approx(
            expected.item(), rel=1e-6)

    def test_official_mean_is_weighted_mean_times_mean_pixel_weight(self):
        torch.manual_seed(1)
        logits = torch.randn(2, 4, 5, 5)
        target = torch.randint(0, 4, (2, 5, 5))
        target[1, :2] = 255
        weight = torch.tensor([0.1, 3.0, 1.0, 10.0])
        mean_pixel_weight = (weight[target.clamp(max=3)] * (target != 255)).mean()
        weighted = Sapiens2SegCrossEntropyLoss(class_weight=weight.tolist())(logits, target)
        official = Sapiens2SegCrossEntropyLoss(class_weight=weight.tolist(), average='all_pixels')(logits, target)
        assert official.item() == pytest.approx((weighted * mean_pixel_weight).item(), rel=1e-5)

    def test_all_ignored_is_zero_and_loss_weight_scales(self):
        logits = torch.randn(1, 3, 2, 2)
        assert Sapiens2SegCrossEntropyLoss()(logits, torch.full((1, 2, 2), 255)).item() == 0.0
        target = torch.randint(0, 3, (1, 2, 2))
        single = Sapiens2SegCrossEntropyLoss()(logits, target)
        assert Sapiens2SegCrossEntropyLoss(loss_weight=2.5)(logits, target).item() == pytest.approx(
            2.5 * single.item())

    def test_bad_arguments(self):
        with pytest.raises(ValueError, match='average'):
            Sapiens2SegCrossEntropyLoss(average='mean')
        with pytest.raises(ValueError, match='one weight per class'):
            Sapiens2SegCrossEntropyLoss(class_weight=[1.0, 2.0])(torch.zeros(1, 3, 1, 1), torch.zeros(1, 1, 1).long())
        with pytest.raises(ValueError, match="start with 'loss_'"):
            Sapiens2SegCrossEntropyLoss(loss_name='ce')

    def test_registered_in_mmseg(self):
        loss = MODELS.build(dict(type='Sapiens2SegCrossEntropyLoss', loss_name='loss_x'))
        assert loss.loss_name == 'loss_x'


class TestDice:

    def test_uniform_prediction_single_class(self):
        logits = torch.zeros(1, 2, 1, 2)  # p = 0.5 for both classes at both pixels
        loss = Sapiens2DiceLoss()(logits, labels([1, 0]))
        # class 1 only: sum(p g) = 0.5, sum(p^2) = 0.5, sum(g^2) = 1
        assert loss.item() == pytest.approx(1 - (2 * 0.5 + SMOOTH) / (1.5 + SMOOTH))

    def test_ignored_pixels_are_masked_out(self):
        logits = torch.zeros(1, 2, 1, 3)
        assert Sapiens2DiceLoss()(logits, labels([1, 0, 255])).item() == pytest.approx(
            Sapiens2DiceLoss()(logits[..., :2], labels([1, 0])).item())

    def test_average_over_present_classes_and_batch_with_zeros(self):
        logits = torch.full((2, 3, 1, 2), -20.0)
        logits[0, 1, 0, 0] = logits[0, 0, 0, 1] = 20.0  # sample 0: perfect on class 1, misses class 2
        logits[1, 0] = 20.0
        target = torch.tensor([[[1, 2]], [[0, 0]]])  # sample 1 has only background -> loss 0
        loss = Sapiens2DiceLoss()(logits, target)
        dice_class2 = SMOOTH / (1 + SMOOTH)  # p ~ 0 at the class-2 pixel
        expected_sample0 = 1 - (1.0 + dice_class2) / 2
        assert loss.item() == pytest.approx(expected_sample0 / 2, abs=1e-6)

    def test_perfect_prediction_is_zero_and_background_can_count(self):
        target = labels([0, 1, 2, 2])
        logits = F.one_hot(target, 3).permute(0, 3, 1, 2).float() * 50
        assert Sapiens2DiceLoss()(logits, target).item() == pytest.approx(0.0, abs=1e-6)
        wrong = torch.zeros_like(logits)
        with_bg = Sapiens2DiceLoss(exclude_background=False)(wrong, target)
        without_bg = Sapiens2DiceLoss()(wrong, target)
        assert with_bg.item() != pytest.approx(without_bg.item())

    def test_gradient_flows_and_rejects_pixel_weights(self):
        logits = torch.randn(2, 4, 3, 3, requires_grad=True)
        Sapiens2DiceLoss()(logits, torch.randint(0, 4, (2, 3, 3))).backward()
        assert logits.grad.abs().sum() > 0
        with pytest.raises(ValueError, match='per-pixel weights'):
            Sapiens2DiceLoss()(logits, torch.zeros(2, 3, 3).long(), weight=torch.ones(2, 3, 3))
