"""KoLeo, DINO cross-entropy and MAE loss against values computed by hand."""
import math

import pytest
import torch

from sapiens2_pretrain.models import DINOLoss, KoLeoLoss, MAELoss, patchify, unpatchify


def test_koleo_matches_hand_computation():
    feats = torch.tensor([[2.0, 0.0], [0.0, 3.0], [1.0, 1.0]])
    # normalised: a=(1,0), b=(0,1), c=(s,s) with s=1/sqrt(2); every nearest neighbour is at distance |a-c|
    s = 1 / math.sqrt(2)
    dist = math.sqrt((1 - s)**2 + s**2)
    expected = -math.log(dist + 1e-8)
    assert KoLeoLoss()(feats).item() == pytest.approx(expected, rel=1e-6)


def test_koleo_nearest_neighbour_is_not_self_and_pushes_apart():
    close = torch.tensor([[1.0, 0.0], [1.0, 0.01], [0.0, 1.0]])
    far = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    assert KoLeoLoss()(close) > KoLeoLoss()(far)
    with pytest.raises(ValueError, match='at least 2'):
        KoLeoLoss()(torch.ones(1, 4))


def _ce(teacher, center, t_temp, student, s_temp):
    t = [math.exp((x - c) / t_temp) for x, c in zip(teacher, center)]
    p = [x / sum(t) for x in t]
    z = [x / s_temp for x in student]
    log_norm = math.log(sum(math.exp(x) for x in z))
    return -sum(pk * (zk - log_norm) for pk, zk in zip(p, z))


def test_dino_loss_pairs_centring_and_temperatures():
    loss = DINOLoss(out_dim=3, student_temp=0.1, teacher_temp=0.07, warmup_teacher_temp=0.065, warmup_iters=1000)
    center = [0.1, -0.2, 0.05]
    loss.center.copy_(torch.tensor([center]))
    s0, s1, s_loc = [0.3, -0.1, 0.2], [-0.5, 0.4, 0.1], [0.0, 0.2, -0.3]
    t0, t1 = [0.2, 0.1, -0.4], [0.6, -0.3, 0.0]
    it = 500
    t_temp = 0.065 + 0.5 * 0.005
    expected = (_ce(t0, center, t_temp, s1, 0.1) + _ce(t1, center, t_temp, s0, 0.1) +
                _ce(t0, center, t_temp, s_loc, 0.1) + _ce(t1, center, t_temp, s_loc, 0.1)) / 4
    as_t = lambda v: torch.tensor([v])  # noqa: E731
    value = loss([as_t(s0), as_t(s1)], [as_t(s_loc)], [as_t(t0), as_t(t1)], iteration=it)
    assert value.item() == pytest.approx(expected, rel=1e-5)


def test_dino_teacher_temperature_warmup_and_centre_update():
    loss = DINOLoss(out_dim=2, center_momentum=0.9)
    assert loss.teacher_temp(0) == pytest.approx(0.065)
    assert loss.teacher_temp(250) == pytest.approx(0.06625)
    assert loss.teacher_temp(1000) == pytest.approx(0.07)
    assert loss.teacher_temp(10**6) == pytest.approx(0.07)
    loss.center.copy_(torch.tensor([[1.0, -1.0]]))
    loss.update_center(torch.tensor([[2.0, 0.0], [4.0, 2.0]]))
    torch.testing.assert_close(loss.center, torch.tensor([[0.9 * 1.0 + 0.1 * 3.0, 0.9 * -1.0 + 0.1 * 1.0]]))


def test_dino_loss_gradient_flows_to_student_only():
    loss = DINOLoss(out_dim=4)
    student = [torch.randn(2, 4, requires_grad=True) for _ in range(2)]
    teacher = [torch.randn(2, 4, requires_grad=True) for _ in range(2)]
    loss(student, [], teacher, iteration=0).backward()
    assert all(s.grad is not None for s in student)
    assert all(t.grad is None for t in teacher)


def _entropy(p):
    return -sum(x * math.log(x) for x in p if x > 0)


def _softmax(v, t):
    e = [math.exp(x / t) for x in v]
    return [x / sum(e) for x in e]


def test_dino_health_monitors_by_hand():
    loss = DINOLoss(out_dim=3, student_temp=0.1, teacher_temp=0.5, warmup_iters=0)
    loss.center.copy_(torch.tensor([[0.0, 0.5, 0.0]]))
    teacher = [torch.tensor([[1.0, 0.5, 0.0]]), torch.tensor([[0.0, 0.5, 1.0]])]
    student = [torch.tensor([[0.1, 0.2, 0.3]]), torch.tensor([[0.0, 0.0, 0.0]])]
    health = loss.health(student, teacher, iteration=10)
    p0, p1 = _softmax([1.0, 0.0, 0.0], 0.5), _softmax([0.0, 0.0, 1.0], 0.5)  # centred, sharpened
    assert health['teacher_entropy'].item() == pytest.approx((_entropy(p0) + _entropy(p1)) / 2, rel=1e-5)
    mean = [(a + b) / 2 for a, b in zip(p0, p1)]
    assert health['teacher_batch_entropy'].item() == pytest.approx(_entropy(mean), rel=1e-5)
    s0 = _softmax([0.1, 0.2, 0.3], 0.1)
    assert health['student_entropy'].item() == pytest.approx((_entropy(s0) + math.log(3)) / 2, rel=1e-5)
    assert health['used_prototypes'].item() == pytest.approx(2 / 2)  # arg-max 0 and 2: two of min(K=3, N=2)
    assert health['center_norm'].item() == pytest.approx(0.5)
    assert health['teacher_spread'].item() == pytest.approx((0.5 + 0.0 + 0.5) / 3)  # per-logit std over 2 samples
    same = loss.health(student, [teacher[0], teacher[0]], iteration=10)
    assert same['used_prototypes'].item() == pytest.approx(1 / 2)  # one prototype for every sample: collapse
    assert same['teacher_spread'].item() == 0  # the same output for every image: flat targets after centring


def test_unpatchify_inverts_patchify():
    img = torch.randn(2, 3, 8, 12)
    torch.testing.assert_close(unpatchify(patchify(img, 4), 4, (2, 3)), img, rtol=0, atol=0)


def test_patchify_order():
    img = torch.arange(2 * 3 * 4 * 6, dtype=torch.float32).reshape(2, 3, 4, 6)
    patches = patchify(img, 2)
    assert patches.shape == (2, 6, 12)
    # patch 4 is grid row 1, column 1 -> pixels rows 2:4, cols 2:4, flattened (row, col, channel)
    torch.testing.assert_close(patches[1, 4], img[1, :, 2:4, 2:4].permute(1, 2, 0).flatten())


def test_mae_loss_normalised_targets_masked_mean():
    img = torch.tensor([[[[1.0, 2.0, 0.0, 0.0], [3.0, 5.0, 1.0, 9.0]]]])  # (1, 1, 2, 4), patch 2 -> 2 patches
    pred = torch.tensor([[[0.5, -0.5, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]]])
    mask = torch.tensor([[True, False]])
    values = [1.0, 2.0, 3.0, 5.0]
    mean = sum(values) / 4
    var = sum((v - mean)**2 for v in values) / 3  # unbiased, as the reference MAE
    target = [(v - mean) / math.sqrt(var + 1e-6) for v in values]
    expected = sum((p - t)**2 for p, t in zip([0.5, -0.5, 1.0, 0.0], target)) / 4
    assert MAELoss(patch_size=2)(pred, img, mask).item() == pytest.approx(expected, rel=1e-6)
    # both patches masked: mean of the two per-patch errors
    values1 = [0.0, 0.0, 1.0, 9.0]
    mean1 = sum(values1) / 4
    var1 = sum((v - mean1)**2 for v in values1) / 3
    target1 = [(v - mean1) / math.sqrt(var1 + 1e-6) for v in values1]
    err1 = sum((1.0 - t)**2 for t in target1) / 4
    both = MAELoss(patch_size=2)(pred, img, torch.tensor([[True, True]])).item()
    assert both == pytest.approx((expected + err1) / 2, rel=1e-6)


def test_mae_loss_shape_error():
    with pytest.raises(ValueError, match='prediction shape'):
        MAELoss(patch_size=2)(torch.zeros(1, 3, 4), torch.zeros(1, 1, 2, 4), torch.ones(1, 2, dtype=torch.bool))
