"""Writes the test predictions of a per-image task as ``sapiens2-infer`` does (``tools/test.py --out`` for the dense
projects)."""
import os.path as osp
from typing import List, Optional, Sequence

import cv2
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmengine.registry import HOOKS

from sapiens2.utils.output_paths import make_folder

from .io.output_guard import OutputGuard, guarding
from .tasks.dense import DenseInferenceTask


@HOOKS.register_module()
class SavePredictionsHook(Hook):
    """After every test batch, convert each predicted sample with the config's inference task
    (:func:`sapiens2.apis.build_task`) and write its raw files with the task's ``save`` into ``out_dir``, named by
    the image's file stem: the files ``sapiens2-infer`` writes under ``<out>/<task>/`` for the same image (e.g.
    normal ``<stem>.npy``, pointmap ``<stem>_depth.npy``, ``<stem>_valid.png`` and ``<stem>.ply``).

    A file of ``out_dir`` that an earlier run did not write there, or a test image, is never replaced
    (:class:`~sapiens2.apis.io.output_guard.OutputGuard`): such a name is an error. The files written are listed in the
    folder's manifest at the end of the test.

    Args:
        out_dir: Folder for the prediction files (created).
    """

    priority = 'LOW'

    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir
        self.task: Optional[DenseInferenceTask] = None
        self.guard: Optional[OutputGuard] = None
        self.written: List[str] = []

    def before_test(self, runner) -> None:
        from .tasks import build_task
        model = runner.model.module if is_model_wrapper(runner.model) else runner.model
        task = build_task(model, runner.cfg)
        if not isinstance(task, DenseInferenceTask):
            raise TypeError(f'SavePredictionsHook writes per-image predictions; the {task.name!r} task is not one '
                            '(for pose, dump the predictions with DumpResults: tools/test.py --dump)')
        self.task = task
        make_folder(self.out_dir, '--out')
        self.guard = OutputGuard(self.out_dir, overwrite_option=None)

    def after_test_iter(self, runner, batch_idx: int, data_batch: dict = None, outputs: Sequence = None) -> None:
        for sample in outputs or ():
            image = cv2.imread(sample.img_path, cv2.IMREAD_COLOR)
            if image is None:
                raise OSError(f'cannot read {sample.img_path} to save its prediction')
            stem = osp.splitext(osp.basename(sample.img_path))[0]
            self.guard.add_input(sample.img_path)
            with guarding(self.guard):
                self.written += self.task.save(image, self.task.decode(sample), self.out_dir, stem)

    def after_test_epoch(self, runner, metrics: Optional[dict] = None) -> None:
        self.guard.record(self.written)
