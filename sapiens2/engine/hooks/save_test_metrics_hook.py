"""Writes the metrics of a test run to a file (``tools/test.py --out`` for pose, as mmpose's tool)."""
import os
import os.path as osp
from typing import Dict, Optional

import mmengine
from mmengine.dist import is_main_process
from mmengine.hooks import Hook
from mmengine.registry import HOOKS

from sapiens2.utils import strict_json
from sapiens2.utils.atomic_save import atomic_write_text

SUFFIXES = ('.json', '.yaml', '.yml', '.pkl', '.pickle')


@HOOKS.register_module()
class SaveTestMetricsHook(Hook):
    """After the test epoch, dump the metrics dict to ``out_file`` (format by suffix: .json, .yaml/.yml, .pkl; JSON
    with a NaN metric as null, :mod:`sapiens2.utils.strict_json`).

    Args:
        out_file: Where to write the metrics; its folder is created. Only the main process writes.
    """

    priority = 'LOWEST'

    def __init__(self, out_file: str) -> None:
        if not out_file.endswith(SUFFIXES):
            raise ValueError(f'the metrics file {out_file!r} must end with one of {SUFFIXES}')
        self.out_file = out_file

    def after_test_epoch(self, runner, metrics: Optional[Dict[str, float]] = None) -> None:
        if metrics is not None and is_main_process():
            os.makedirs(osp.dirname(osp.abspath(self.out_file)), exist_ok=True)
            if self.out_file.endswith('.json'):
                atomic_write_text(self.out_file, strict_json.dumps(dict(metrics)))
            else:
                mmengine.dump(dict(metrics), self.out_file)
