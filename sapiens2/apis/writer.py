"""Write an inferencer's outputs: pictures (PNG per image, MP4 per video), raw results, per-group files."""
import json
import os
import os.path as osp
from collections import defaultdict
from typing import IO, Any, Callable, Dict, List, Optional, Sequence, Tuple

import cv2
import numpy as np

from .display import WindowDisplay
from .inputs import Source
from .ordered_worker import OrderedWorker
from .tasks.base import BaseInferenceTask


class ResultWriter:
    """Lay out results under ``out_dir/<task>/`` by each source's name (unique per call, see
    :func:`~sapiens2.apis.inputs.collect_sources`; ``sub/x`` for a file in a sub-folder of a folder input):

    * image ``x.jpg``: ``<task>/x.png`` (picture) and the task's raw files ``<task>/x*`` (e.g. ``x_seg.npy``);
    * video or GIF ``v.mp4``: ``<task>/v.mp4`` (pictures as a video) and raw files ``<task>/v/v_000000*`` per frame;
    * per group (folder or video), the task's group file, e.g. ``pose/<group>_predictions.json``; for a video or
      stream, of a task that has ``group_header`` and ``frame_record``, JSON Lines ``pose/<video>_predictions.jsonl``
      (the header, then one line per frame, flushed as each frame is written: an endless stream or a Ctrl-C keeps
      every frame written so far).

    Two results are never written under the same name in one run: a second claim of a name raises ``ValueError``
    before anything is overwritten.

    With ``write_ahead > 0``, :meth:`add` and :meth:`end_source` only queue their work (at most ``write_ahead`` frames)
    for one background thread, which draws, encodes and writes in call order while the caller runs the model on the
    next frames. An error in that thread is raised by the next call; the frames queued after it are not written.
    """

    def __init__(self, out_dir: str, tasks: Sequence[BaseInferenceTask], save_vis: bool = True,
                 save_pred: bool = True, write_ahead: int = 0, show: bool = False) -> None:
        self.out_dir, self.tasks = out_dir, list(tasks)
        self.save_vis, self.save_pred = save_vis, save_pred
        self.show = WindowDisplay() if show else None
        self.videos: Dict[Tuple[str, str], cv2.VideoWriter] = {}
        self.lines: Dict[Tuple[str, str], IO[str]] = {}  # JSON Lines file per (task, video)
        self.records: Dict[Tuple[str, str], List[dict]] = defaultdict(list)
        self.written: List[str] = []
        self._claimed: Dict[str, str] = {}  # output path or file stem -> the frame that claimed it
        for task in self.tasks:
            os.makedirs(osp.join(out_dir, task.name), exist_ok=True)
        # Windows are drawn from the calling thread (GUI toolkits want one thread), so --show writes in it too.
        self._worker: Optional[OrderedWorker] = OrderedWorker(write_ahead) if write_ahead > 0 and not show else None

    def _run(self, fn: Callable[..., Any], *args: Any) -> None:
        if self._worker is None:
            fn(*args)
        else:
            self._worker.submit(fn, *args)

    def add(self, source: Source, index: int, image: np.ndarray, results: Dict[str, dict]) -> None:
        """Write one frame's results (``results`` maps task names to results; all serve as drawing context)."""
        self._run(self._write_frame, source, index, image, results)

    def _write_frame(self, source: Source, index: int, image: np.ndarray, results: Dict[str, dict]) -> None:
        frame = source.frame_name(index)
        if source.kind == 'video':
            folder, stem = source.name, f'{osp.basename(source.name)}_{index:06d}'
        else:
            folder, stem = osp.dirname(source.name), osp.basename(source.name)
        for task in self.tasks:
            task_dir = osp.join(self.out_dir, task.name)
            result = results[task.name]
            if self.save_pred and _has_raw_files(task):
                pred_dir = osp.join(task_dir, folder)
                self._claim(osp.join(pred_dir, stem), frame)
                os.makedirs(pred_dir, exist_ok=True)
                self.written += task.save(image, result, pred_dir, stem, results)
            if self.save_vis or self.show:
                picture = task.visualize(image, result, results)
                if self.save_vis:
                    self._add_picture(task, source, frame, picture)
                if self.show:
                    self.show(task.name, picture)
            if self.save_pred and _has_group_file(task):
                height, width = image.shape[:2]
                record = dict(image_name=frame, image_size=[width, height], result=result)
                if source.kind == 'video' and hasattr(task, 'frame_record'):
                    self._add_line(task, source, record)
                else:
                    self.records[(task.name, source.group)].append(record)

    def _add_line(self, task: BaseInferenceTask, source: Source, record: dict) -> None:
        """Append a frame to the video's JSON Lines file (opened with the task's header line) and flush it."""
        key = (task.name, source.name)
        if key not in self.lines:
            path = osp.join(self.out_dir, task.name, source.group + '_predictions.jsonl')
            self._claim(path, source.name)
            os.makedirs(osp.dirname(path), exist_ok=True)
            self.lines[key] = open(path, 'w')
            self.written.append(path)
            self.lines[key].write(json.dumps(task.group_header(source.group, record['image_size'])) + '\n')
        self.lines[key].write(json.dumps(task.frame_record(record)) + '\n')
        self.lines[key].flush()

    def _claim(self, stem: str, frame: str) -> None:
        """Reserve an output path or file stem for ``frame``; a second claim raises (case-insensitive)."""
        key = osp.normcase(osp.abspath(stem)).casefold()
        if key in self._claimed:
            raise ValueError(f'{frame} and {self._claimed[key]} would both write {stem}*; give inputs distinct '
                             'names (collect_sources makes the names of one call unique)')
        self._claimed[key] = frame

    def _add_picture(self, task: BaseInferenceTask, source: Source, frame: str, picture: np.ndarray) -> None:
        task_dir = osp.join(self.out_dir, task.name)
        if source.kind != 'video':
            path = osp.join(task_dir, frame + '.png')
            self._claim(path, frame)
            os.makedirs(osp.dirname(path), exist_ok=True)
            if not cv2.imwrite(path, picture):
                raise OSError(f'cannot write {path}')
            self.written.append(path)
            return
        key = (task.name, source.name)
        if key not in self.videos:
            path = osp.join(task_dir, source.name + '.mp4')
            self._claim(path, source.name)
            os.makedirs(osp.dirname(path), exist_ok=True)
            height, width = picture.shape[:2]
            self.videos[key] = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*'mp4v'), source.fps, (width, height))
            if not self.videos[key].isOpened():
                raise OSError(f'cannot open {path} for writing (OpenCV without an mp4v encoder?)')
            self.written.append(path)
        self.videos[key].write(picture)

    def end_source(self, source: Source) -> None:
        """Finish a source's videos."""
        self._run(self._finish_source, source)

    def _finish_source(self, source: Source) -> None:
        for task in self.tasks:
            writer = self.videos.pop((task.name, source.name), None)
            if writer is not None:
                writer.release()
            lines = self.lines.pop((task.name, source.name), None)
            if lines is not None:
                lines.close()

    def stop(self) -> None:
        """Wait for the queued frames and release the videos (after an error: writes no group files)."""
        worker, self._worker = self._worker, None
        try:
            if worker is not None:
                worker.close()
        finally:
            for writer in self.videos.values():
                writer.release()
            self.videos.clear()
            for lines in self.lines.values():
                lines.close()
            self.lines.clear()
            if self.show is not None:
                self.show.close()

    def close(self) -> List[str]:
        """Write the queued frames, release videos, write group files; return every path written."""
        self.stop()
        by_name = {task.name: task for task in self.tasks}
        for (task_name, group), records in self.records.items():
            path = by_name[task_name].save_group(records, osp.join(self.out_dir, task_name), group)
            if path:
                self.written.append(path)
        self.records.clear()
        return self.written


def _has_raw_files(task: BaseInferenceTask) -> bool:
    return type(task).save is not BaseInferenceTask.save


def _has_group_file(task: BaseInferenceTask) -> bool:
    return type(task).save_group is not BaseInferenceTask.save_group
