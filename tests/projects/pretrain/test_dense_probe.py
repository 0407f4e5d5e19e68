"""Dense-probe metrics against hand computations, and the probe learns when the features hold the answer."""
import math

import pytest
import torch
import torch.nn.functional as F

from sapiens2_pretrain.dense_probe import ProbeSettings, _accumulate, _finalise, constant_baseline, train_and_evaluate


def test_seg_miou_by_hand():
    target = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 2]]])
    pred_classes = torch.tensor([[[0, 1, 1, 1], [0, 0, 1, 1]]])
    logits = F.one_hot(pred_classes, 4).permute(0, 3, 1, 2).float()
    stats = {}
    _accumulate('seg', logits, target, stats, num_classes=4)
    # IoU: class 0 = 3/4, class 1 = 3/5, class 2 = 0/1; class 3 absent from the ground truth -> not averaged
    assert _finalise('seg', stats, 4) == pytest.approx((3 / 4 + 3 / 5 + 0) / 3)


def test_normal_angle_and_depth_abs_rel_by_hand():
    target = torch.zeros(1, 3, 1, 3)
    target[0, 2, 0, :2] = 1.0  # two foreground pixels facing +z, one background pixel
    pred = torch.zeros(1, 3, 1, 3)
    pred[0, 2, 0, 0] = 1.0
    pred[0, 0, 0, 1] = 1.0  # 90 degrees off
    pred[0, 0, 0, 2] = 1.0  # background: ignored
    stats = {}
    _accumulate('normal', pred, target, stats, num_classes=0)
    assert _finalise('normal', stats, 0) == pytest.approx(45.0, abs=1e-3)
    depth = torch.tensor([[[[2.0, 4.0, 0.0]]]])
    log_pred = torch.log(torch.tensor([[[[3.0, 4.0, 7.0]]]]))
    stats = {}
    _accumulate('depth', log_pred, depth, stats, num_classes=0)
    assert _finalise('depth', stats, 0) == pytest.approx((0.5 + 0.0) / 2)


def _blobs(n: int, seed: int) -> torch.Tensor:
    """Label maps (n, 32, 32) with two rectangles of classes 1 and 2 on background 0."""
    g = torch.Generator().manual_seed(seed)
    labels = torch.zeros(n, 32, 32, dtype=torch.long)
    for i in range(n):
        for cls in (1, 2):
            y, x = torch.randint(0, 20, (2, ), generator=g).tolist()
            labels[i, y:y + 12, x:x + 12] = cls
    return labels


@pytest.mark.parametrize('task', ['seg', 'normal', 'depth'])
def test_probe_beats_constant_when_features_hold_the_answer(task, one_thread):
    labels = {split: _blobs(n, seed) for split, n, seed in (('train', 48, 0), ('val', 16, 1))}
    if task == 'seg':
        targets = labels
    elif task == 'normal':
        directions = F.normalize(torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 1.0], [-1.0, 0.5, 1.0]]), dim=1)
        targets = {k: directions[v].permute(0, 3, 1, 2) for k, v in labels.items()}
    else:
        targets = {k: torch.tensor([0.0, 2.0, 5.0])[v][:, None] for k, v in labels.items()}
    feats = {k: F.avg_pool2d(F.one_hot(v, 3).permute(0, 3, 1, 2).float(), 4) for k, v in labels.items()}
    settings = ProbeSettings(size=(32, 32), hidden=32, epochs=20, batch_size=16, lr=3e-3, num_classes=3)
    value = train_and_evaluate(task, (feats['train'], targets['train']), (feats['val'], targets['val']), settings)
    constant = constant_baseline(task, targets['train'], targets['val'], 3)
    assert math.isfinite(value)
    if task == 'seg':
        assert value > constant + 0.3
    else:
        assert value < 0.6 * constant
