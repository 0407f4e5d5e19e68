"""Few-label semantic probes: near-perfect on separable features, near chance on random labels."""
import pytest
import torch

from sapiens2_pretrain.semantic_probe import (
    few_label_indices,
    knn_accuracy,
    linear_probe_accuracy,
    semantic_probe,
)


def _clusters(n: int, classes: int, dims: int, seed: int, spread: float = 0.3):
    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(classes, dims, generator=torch.Generator().manual_seed(99)) * 3
    labels = torch.randint(classes, (n, ), generator=g)
    return centres[labels] + spread * torch.randn(n, dims, generator=g), labels


def test_probes_separate_separable_features():
    train_x, train_y = _clusters(120, 4, 32, seed=0)
    val_x, val_y = _clusters(200, 4, 32, seed=1)
    assert knn_accuracy(train_x, train_y, val_x, val_y) == pytest.approx(1.0)
    assert linear_probe_accuracy(train_x, train_y, val_x, val_y) == pytest.approx(1.0)


def test_probes_are_at_chance_on_random_labels():
    g = torch.Generator().manual_seed(0)
    train_x, val_x = torch.randn(256, 32, generator=g), torch.randn(1000, 32, generator=g)
    train_y, val_y = torch.randint(4, (256, ), generator=g), torch.randint(4, (1000, ), generator=g)
    for accuracy in (knn_accuracy(train_x, train_y, val_x, val_y), linear_probe_accuracy(train_x, train_y, val_x,
                                                                                         val_y)):
        assert 0.18 < accuracy < 0.32


def test_few_label_indices_take_per_class_images_deterministically():
    labels = torch.tensor([0] * 10 + [1] * 3 + [2] * 20)
    idx = few_label_indices(labels, 5, seed=0)
    assert torch.bincount(labels[idx]).tolist() == [5, 3, 5]  # a class with fewer images gives all of them
    assert torch.equal(idx, few_label_indices(labels, 5, seed=0))
    assert not torch.equal(idx, few_label_indices(labels, 5, seed=1))


def test_semantic_probe_reports_every_property_budget_and_seed():
    train_x, train_y = _clusters(100, 3, 8, seed=0)
    val_x, val_y = _clusters(50, 3, 8, seed=1)
    out = semantic_probe(train_x, dict(a=train_y), val_x, dict(a=val_y), budgets=(4, 16), seeds=(0, 1))
    assert set(out['a']) == {4, 16} and all(len(out['a'][b]['knn']) == 2 for b in (4, 16))
    assert min(out['a'][16]['linear']) > 0.9
