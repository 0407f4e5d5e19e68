"""Check the datasets of a run against their layouts before the weights load and the first iteration."""
from typing import Optional

from mmengine.hooks import Hook
from mmengine.registry import HOOKS
from mmengine.runner import BaseLoop


@HOOKS.register_module()
class DataCheckHook(Hook):
    """Run :func:`sapiens2.datasets.data_check.check_dataset` on the dataset of every loop the run built (train,
    val, test) at ``before_run``: keypoint counts, visibilities, image/label-map pairs and the label ids of every
    map (read once, cached), so that data made for another layout stops with one line naming the file.

    Args:
        max_masks: Label maps read per segmentation dataset, evenly spaced (None: every one, their ids cached).
    """

    priority = 'VERY_HIGH'

    def __init__(self, max_masks: Optional[int] = None) -> None:
        self.max_masks = max_masks

    def before_run(self, runner) -> None:
        from sapiens2.datasets.data_check import check_dataset  # the datasets need mmcv; the engine does not
        for name in ('_train_loop', '_val_loop', '_test_loop'):
            loop = getattr(runner, name, None)
            if isinstance(loop, BaseLoop):
                summary = check_dataset(loop.dataloader.dataset, self.max_masks)
                if summary:
                    runner.logger.info(f'data check ({name.strip("_").replace("_loop", "")}): {summary}')
