"""Few-label semantic probes of frozen image-level features: cosine k-NN and a linear (logistic regression) probe.

Both have fixed settings and standardise the features with the statistics of the labeled subset only. Labels are
class indices; the labeled subset holds ``per_class`` images of every class (all of a class's images if it has
fewer), drawn with a fixed seed.
"""
import torch
import torch.nn.functional as F
from torch import Tensor

KNN_K = 20
KNN_TEMPERATURE = 0.07  # similarity weighting of the neighbours' votes (DINO's k-NN evaluation)
LINEAR_WEIGHT_DECAY = 1e-2
LINEAR_ITERS = 100


def few_label_indices(labels: Tensor, per_class: int, seed: int) -> Tensor:
    """Indices of ``per_class`` random images of every class of ``labels`` (sorted)."""
    g = torch.Generator().manual_seed(seed)
    picks = []
    for c in labels.unique():
        members = (labels == c).nonzero().flatten()
        picks.append(members[torch.randperm(members.numel(), generator=g)[:per_class]])
    return torch.cat(picks).sort().values


def _standardise(train: Tensor, val: Tensor) -> tuple[Tensor, Tensor]:
    mean, std = train.mean(0), train.std(0, unbiased=False).clamp_min(1e-6)
    return (train - mean) / std, (val - mean) / std


def knn_accuracy(train_x: Tensor, train_y: Tensor, val_x: Tensor, val_y: Tensor, k: int = KNN_K) -> float:
    """Accuracy of a cosine-similarity k-NN classifier whose neighbours vote with weight ``exp(sim / 0.07)``."""
    train_x, val_x = (F.normalize(x, dim=1) for x in _standardise(train_x.double(), val_x.double()))
    sim, idx = (val_x @ train_x.T).topk(min(k, train_x.shape[0]), dim=1)
    votes = torch.zeros(val_x.shape[0], int(train_y.max()) + 1, dtype=sim.dtype)
    votes.scatter_add_(1, train_y[idx], (sim / KNN_TEMPERATURE).exp())
    return (votes.argmax(1) == val_y).double().mean().item()


def linear_probe_accuracy(train_x: Tensor, train_y: Tensor, val_x: Tensor, val_y: Tensor) -> float:
    """Accuracy of multinomial logistic regression (L2 weight ``LINEAR_WEIGHT_DECAY``, L-BFGS from zeros for
    ``LINEAR_ITERS`` iterations: deterministic)."""
    train_x, val_x = _standardise(train_x.double(), val_x.double())
    num_classes = int(max(train_y.max(), val_y.max())) + 1
    weight = torch.zeros(train_x.shape[1], num_classes, dtype=train_x.dtype, requires_grad=True)
    bias = torch.zeros(num_classes, dtype=train_x.dtype, requires_grad=True)
    optimizer = torch.optim.LBFGS([weight, bias], max_iter=LINEAR_ITERS, line_search_fn='strong_wolfe')

    def closure() -> Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(train_x @ weight + bias, train_y) + LINEAR_WEIGHT_DECAY * weight.square().sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    with torch.no_grad():
        return ((val_x @ weight + bias).argmax(1) == val_y).double().mean().item()


def semantic_probe(train_x: Tensor, train_labels: dict[str, Tensor], val_x: Tensor, val_labels: dict[str, Tensor],
                   budgets: tuple = (16, 64), seeds: tuple = (0, 1, 2)) -> dict:
    """``{property: {budget: {'knn': [accuracy per seed], 'linear': [...]}}}`` for image features (N, C)."""
    results = {}
    for name, labels in train_labels.items():
        results[name] = {}
        for budget in budgets:
            cell = dict(knn=[], linear=[])
            for seed in seeds:
                idx = few_label_indices(labels, budget, seed)
                cell['knn'].append(knn_accuracy(train_x[idx], labels[idx], val_x, val_labels[name]))
                cell['linear'].append(linear_probe_accuracy(train_x[idx], labels[idx], val_x, val_labels[name]))
            results[name][budget] = cell
    return results
