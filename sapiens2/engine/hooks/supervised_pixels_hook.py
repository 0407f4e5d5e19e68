"""Stop a segmentation training whose labels supervise nothing (every pixel ignored), instead of reporting
``loss 0.0000, acc_seg 100.0``."""
from typing import Optional

import torch
from mmengine.dist import all_reduce
from mmengine.hooks import Hook
from mmengine.registry import HOOKS


@HOOKS.register_module()
class SupervisedPixelsHook(Hook):
    """Count the supervised pixels (``gt_sem_seg`` not ``ignore_index``) of the training batches; raise
    ``ValueError`` naming the dataset when a whole epoch of batches (``len(train_dataloader)`` iterations, all
    ranks together) had none. Each label map without a supervised pixel is also named in a warning when it is loaded
    (``CheckSegLabels``).

    Args:
        ignore_index: The label excluded from the loss and the metrics.
    """

    priority = 'NORMAL'

    def __init__(self, ignore_index: int = 255) -> None:
        self.ignore_index = ignore_index
        self._iterations = self._supervised = 0

    def before_train(self, runner) -> None:
        self._iterations = self._supervised = 0

    def after_train_iter(self, runner, batch_idx: int, data_batch: Optional[dict] = None, outputs=None) -> None:
        if self._supervised == 0:
            for sample in (data_batch or {}).get('data_samples') or []:
                if 'gt_sem_seg' in sample:
                    self._supervised += int((sample.gt_sem_seg.data != self.ignore_index).sum())
        self._iterations += 1
        if self._iterations < len(runner.train_dataloader):
            return
        supervised = torch.tensor(float(self._supervised))
        all_reduce(supervised)
        self._iterations = self._supervised = 0
        if supervised.item() == 0:
            dataset = runner.train_dataloader.dataset
            where = ', '.join(f'{key}={getattr(dataset, key)!r}' for key in ('data_root', 'data_prefix')
                              if getattr(dataset, key, None))
            raise ValueError(
                f'Iteration {runner.iter + 1}: a whole epoch of training batches ({len(runner.train_dataloader)} '
                f'iterations) of {type(dataset).__name__}({where}) had no supervised pixel: every label is '
                f'{self.ignore_index} (ignored), so the loss is 0 and acc_seg 100 while nothing is learnt. Check the '
                'label maps and the seg_map_path folder, and source_mapping (ids it does not map become 255).')
