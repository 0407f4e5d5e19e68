"""A tiny deterministic regression model, dataset and metric for the distributed/reliability engine tests.

Registered in MMEngine's root registries under ``DistToy*`` names; only test configs import this module.
"""
import json
import math
import os
import signal

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmengine.dist import get_rank
from mmengine.evaluator import BaseMetric
from mmengine.hooks import Hook
from mmengine.model import BaseModel
from mmengine.registry import DATASETS, HOOKS, METRICS, MODELS
from torch.utils.data import Dataset

from sapiens2.engine.optimizers.layer_decay_constructor import clean_param_name


class DistToyBlock(nn.Module):
    """Residual MLP block (the FSDP wrap / activation-checkpointing unit in the FSDP tests)."""

    def __init__(self, dim: int):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.tanh(self.fc(x))


class DistToyBackbone(nn.Module):
    """Two blocks, with ``num_layers`` and ``blocks.<i>.`` names as layer-decay expects from a backbone."""

    def __init__(self, dim: int, num_layers: int = 2):
        super().__init__()
        self.num_layers = num_layers
        self.patch_embed = nn.Linear(dim, dim)
        self.blocks = nn.ModuleList(DistToyBlock(dim) for _ in range(num_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(x)
        for block in self.blocks:
            x = block(x)
        return x


@MODELS.register_module()
class DistToyModel(BaseModel):
    """Regresses a scalar from a ``dim``-vector (weights initialised from ``seed``); ``mode='loss'`` gives the MSE."""

    def __init__(self, dim: int = 8, seed: int = 0, data_preprocessor=None, init_cfg=None):
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        with torch.random.fork_rng():  # same initial weights whichever runner builds the model, and when
            torch.manual_seed(seed)
            self.backbone = DistToyBackbone(dim)
            self.head = nn.Linear(dim, 1)

    def forward(self, inputs, targets=None, index=None, mode: str = 'tensor'):
        pred = self.head(self.backbone(inputs)).squeeze(-1)
        if mode == 'loss':
            return dict(loss_mse=F.mse_loss(pred, targets))
        if mode == 'predict':
            return [dict(index=int(i), sq_err=float((p - t)**2)) for i, p, t in zip(index, pred, targets)]
        return pred


@DATASETS.register_module()
class DistToyDataset(Dataset):
    """``num_samples`` fixed (x, y = tanh(w.x)) pairs from ``seed``; targets at ``nan_indices`` are NaN."""

    def __init__(self, num_samples: int = 64, dim: int = 8, seed: int = 0, nan_indices=()):
        gen = torch.Generator().manual_seed(seed)
        self.inputs = torch.randn(num_samples, dim, generator=gen)
        self.targets = torch.tanh(self.inputs @ torch.randn(dim, generator=gen))
        self.targets[list(nan_indices)] = math.nan
        self.metainfo = dict(dataset_name='dist_toy')

    def __len__(self) -> int:
        return len(self.inputs)

    def __getitem__(self, i: int) -> dict:
        return dict(inputs=self.inputs[i], targets=self.targets[i], index=i)


@METRICS.register_module()
class DistToyMetric(BaseMetric):
    """Mean squared error and the sample indices seen; rank 0 writes them to ``out_file`` when given."""

    def __init__(self, out_file: str | None = None, **kwargs):
        super().__init__(**kwargs)
        self.out_file = out_file

    def process(self, data_batch, data_samples) -> None:
        self.results.extend(data_samples)

    def compute_metrics(self, results: list) -> dict:
        indices = [r['index'] for r in results]
        mse = sum(r['sq_err'] for r in results) / len(results)
        if self.out_file:
            with open(self.out_file, 'w') as f:
                json.dump(dict(indices=indices, mse=mse), f)
        return dict(mse=mse, count=len(indices))


@HOOKS.register_module()
class DistToyKillHook(Hook):
    """SIGKILLs its own process inside the save of the ``during_save_iter`` checkpoint: after the data is written,
    before the atomic commit (the first ``os.fsync`` of that save)."""

    def __init__(self, during_save_iter: int):
        self.during_save_iter = during_save_iter

    def before_save_checkpoint(self, runner, checkpoint) -> None:
        if runner.iter + 1 == self.during_save_iter:
            os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)


@HOOKS.register_module()
class DistToyParamGroupsHook(Hook):
    """Writes the optimizer's parameter groups (clean names, initial lr, weight decay) to ``out_dir/rank<r>.json``."""

    def __init__(self, out_dir: str):
        self.out_dir = out_dir

    def before_train(self, runner) -> None:
        names = {id(p): clean_param_name(n) for n, p in runner.model.named_parameters()}
        groups = [  # MMEngine's OptimWrapper appends a group with a dummy tensor to track the base lr: skipped
            dict(names=sorted(names[id(p)] for p in g['params']), lr=g.get('initial_lr', g['lr']),
                 weight_decay=g['weight_decay']) for g in runner.optim_wrapper.param_groups
            if all(id(p) in names for p in g['params'])
        ]
        os.makedirs(self.out_dir, exist_ok=True)
        with open(os.path.join(self.out_dir, f'rank{get_rank()}.json'), 'w') as f:
            json.dump(sorted(groups, key=lambda g: g['names']), f)


@HOOKS.register_module()
class DistToyFreezeHook(Hook):
    """Rank ``rank`` writes its pid to ``pid_file`` and stops itself (SIGSTOP) before iteration ``at_iter``: a frozen
    rank, as a stopped, swapped-out or deadlocked process. Whoever runs it must SIGCONT or SIGKILL that pid."""

    def __init__(self, pid_file: str, rank: int = 1, at_iter: int = 2):
        self.pid_file, self.rank, self.at_iter = pid_file, rank, at_iter

    def before_train_iter(self, runner, batch_idx: int, data_batch=None) -> None:
        if get_rank() == self.rank and runner.iter + 1 == self.at_iter:
            with open(self.pid_file, 'w') as f:
                f.write(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGSTOP)
