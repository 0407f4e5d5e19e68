"""Write an inferencer's outputs: pictures (PNG per image, MP4 per video), raw results and JSON records per input."""
import json
import os
import os.path as osp
import re
from collections import defaultdict
from typing import IO, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import cv2
import numpy as np

from sapiens2.engine.atomic_save import AtomicOutput, atomic_write_text, open_fresh
from sapiens2.utils.image_write import write_image
from sapiens2.utils.output_paths import make_folder

from .display import WindowDisplay
from .inputs import Source
from .ordered_worker import OrderedWorker
from .output_guard import OutputGuard, guarding
from .tasks.base import BaseInferenceTask

#: The JSON Lines file of a video or stream: ``<task>/<video>_predictions.jsonl``.
JSON_LINES_SUFFIX = '_predictions.jsonl'


class ResultWriter:
    """Lay out results under ``out_dir/<task>/`` by each source's name (unique per call, see
    :func:`~sapiens2.apis.inputs.collect_sources`; ``sub/x`` for a file in a sub-folder of a folder input), one set of
    files per input, so that a later run into the same ``out_dir`` adds its inputs' files beside the earlier ones:

    * image (or array) ``x.jpg``: ``<task>/x.png`` (picture), the task's raw files ``<task>/x*`` (e.g. ``x_seg.npy``)
      and, for a task with JSON records (``header`` and ``frame_record``: pose, people), ``<task>/x.json``;
    * video or GIF ``v.mp4``: ``<task>/v.mp4`` (pictures as a video), raw files ``<task>/v/v_000000*`` per frame and
      JSON Lines ``<task>/v_predictions.jsonl`` (the header with ``video``, then one line per frame, flushed as each
      frame is written: an endless stream or a Ctrl-C keeps every frame written so far);
    * a task's index (``index_files``, ``update_index``: the people's ``coco_results.json``) gains this run's images
      when the run ends; the entries of other images stay.

    Two results are never written under the same name in one run: :meth:`check_outputs` refuses two outputs of one
    name, and a second claim of a name raises ``ValueError`` before anything is overwritten. No output replaces an
    input, nor (unless ``overwrite``) a file that sapiens2 did not write into ``out_dir``
    (:class:`~sapiens2.apis.output_guard.OutputGuard`): :meth:`check_outputs` refuses such a file before anything is
    written.

    With ``write_ahead > 0``, :meth:`add` and :meth:`end_source` only queue their work (at most ``write_ahead`` frames)
    for one background thread, which draws, encodes and writes in call order while the caller runs the model on the
    next frames. An error in that thread is raised by the next call; the frames queued after it are not written.
    """

    def __init__(self, out_dir: str, tasks: Sequence[BaseInferenceTask], save_vis: bool = True,
                 save_pred: bool = True, write_ahead: int = 0, overwrite: bool = False, show: bool = False) -> None:
        self.out_dir, self.tasks = out_dir, list(tasks)
        self.save_vis, self.save_pred = save_vis, save_pred
        self.show = WindowDisplay() if show else None
        self.videos: Dict[Tuple[str, str], Tuple[cv2.VideoWriter, AtomicOutput]] = {}  # committed when released
        self.lines: Dict[Tuple[str, str], IO[str]] = {}  # JSON Lines file per (task, video)
        self.records: Dict[str, List[dict]] = defaultdict(list)  # per task with an index: this run's image records
        self.written: List[str] = []
        self._claimed: Dict[str, str] = {}  # output path or file stem -> the frame that claimed it
        self.guard = OutputGuard(out_dir, overwrite=overwrite)
        for task in self.tasks:
            make_folder(osp.join(out_dir, task.name), '--out')
        # Windows are drawn from the calling thread (GUI toolkits want one thread), so --show writes in it too.
        self._worker: Optional[OrderedWorker] = OrderedWorker(write_ahead) if write_ahead > 0 and not show else None

    def _run(self, fn: Callable[..., Any], *args: Any) -> None:
        if self._worker is None:
            fn(*args)
        else:
            self._worker.submit(fn, *args)

    def check_outputs(self, sources: Sequence[Source]) -> None:
        """Refuse (``FileExistsError``, before anything is written) an output of ``sources`` that would replace one
        of them or a file sapiens2 did not write, and (``ValueError``) two outputs of one path; list the outputs in
        the output folder's manifest."""
        for source in sources:
            if source.path:
                self.guard.add_input(source.path)
        planned = list(self._planned_paths(sources))
        seen: Dict[str, str] = {}
        for path in planned:
            key = osp.normcase(osp.abspath(path)).casefold()
            if key in seen:
                raise ValueError(f'two outputs of this run are named {path} ({seen[key]}); rename the input whose '
                                 'name makes it')
            seen[key] = path
            self.guard.check(path)
        self.guard.record(planned)

    def _planned_paths(self, sources: Sequence[Source]) -> Iterator[str]:
        """The output paths of ``sources`` (of video frames' raw files: those that exist already)."""
        for task in self.tasks:
            task_dir = osp.join(self.out_dir, task.name)
            raw_suffixes = task.raw_suffixes if self.save_pred else ()
            records = self.save_pred and _has_records(task)
            for source in sources:
                if source.kind == 'video':
                    if self.save_vis:
                        yield osp.join(task_dir, source.name + '.mp4')
                    yield from _frame_files(osp.join(task_dir, source.name), osp.basename(source.name), raw_suffixes)
                    if records:
                        yield osp.join(task_dir, source.name + JSON_LINES_SUFFIX)
                else:
                    if self.save_vis:
                        yield osp.join(task_dir, source.name + '.png')
                    yield from (osp.join(task_dir, source.name + suffix) for suffix in raw_suffixes)
                    if records:
                        yield osp.join(task_dir, source.name + '.json')
            if self.save_pred and any(source.kind != 'video' for source in sources):
                yield from (osp.join(task_dir, name) for name in getattr(task, 'index_files', ()))

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
                with guarding(self.guard):
                    self.written += task.save(image, result, pred_dir, stem, results)
            if self.save_vis or self.show:
                picture = task.visualize(image, result, results)
                if self.save_vis:
                    self._add_picture(task, source, frame, picture)
                if self.show:
                    self.show(task.name, picture)
            if self.save_pred and _has_records(task):
                height, width = image.shape[:2]
                record = dict(image_name=frame, image_size=[width, height], result=result)
                if source.kind == 'video':
                    self._add_line(task, source, record)
                else:
                    self._write_record(task, frame, record)

    def _write_record(self, task: BaseInferenceTask, frame: str, record: dict) -> None:
        """``<task>/<name>.json``: the task's header and the image's record; keep the record for the task's index."""
        path = osp.join(self.out_dir, task.name, frame + '.json')
        self._claim(path, frame)
        content = dict(image_name=frame, **task.header(record['image_size']))
        content.update(task.frame_record(record))  # image_name first, then the header, then the image's results
        atomic_write_text(self.guard.check(path), json.dumps(content))
        self.written.append(path)
        if hasattr(task, 'update_index'):
            self.records[task.name].append(record)

    def _add_line(self, task: BaseInferenceTask, source: Source, record: dict) -> None:
        """Append a frame to the video's JSON Lines file (opened with the task's header line) and flush it."""
        key = (task.name, source.name)
        if key not in self.lines:
            path = osp.join(self.out_dir, task.name, source.name + JSON_LINES_SUFFIX)
            self._claim(path, source.name)
            self.lines[key] = open_fresh(self.guard.check(path))
            self.written.append(path)
            header = dict(video=source.name, **task.header(record['image_size']))
            self.lines[key].write(json.dumps(header) + '\n')
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
            write_image(path, picture)
            self.written.append(path)
            return
        key = (task.name, source.name)
        if key not in self.videos:
            path = osp.join(task_dir, source.name + '.mp4')
            self._claim(path, source.name)
            os.makedirs(osp.dirname(path), exist_ok=True)
            height, width = picture.shape[:2]
            out = AtomicOutput(self.guard.check(path))
            video = cv2.VideoWriter(out.tmp, cv2.VideoWriter_fourcc(*'mp4v'), source.fps, (width, height))
            if not video.isOpened():
                out.discard()
                raise OSError(f'cannot open {path} for writing (OpenCV without an mp4v encoder?)')
            self.videos[key] = video, out
            self.written.append(path)
        self.videos[key][0].write(picture)

    def end_source(self, source: Source) -> None:
        """Finish a source's videos."""
        self._run(self._finish_source, source)

    def _finish_source(self, source: Source) -> None:
        for task in self.tasks:
            video = self.videos.pop((task.name, source.name), None)
            if video is not None:
                _release(*video)
            lines = self.lines.pop((task.name, source.name), None)
            if lines is not None:
                lines.close()

    def contents(self) -> str:
        """What this writer writes, in words: ``'predictions and pictures'``, ``'predictions'``..."""
        kinds = [what for what, on in (('predictions', self.save_pred), ('pictures', self.save_vis)) if on]
        return ' and '.join(kinds) or 'outputs'

    def stop(self) -> None:
        """Wait for the queued frames, release the videos and list the files written in the manifest (after an
        error: adds nothing to the indexes)."""
        worker, self._worker = self._worker, None
        try:
            if worker is not None:
                worker.close()
        finally:
            for video in self.videos.values():
                _release(*video)
            self.videos.clear()
            self.guard.record(self.written)
            for lines in self.lines.values():
                lines.close()
            self.lines.clear()
            if self.show is not None:
                self.show.close()

    def close(self) -> List[str]:
        """Write the queued frames, release videos, add this run's images to the tasks' indexes; return every path
        written."""
        self.stop()
        by_name = {task.name: task for task in self.tasks}
        for task_name, records in self.records.items():
            with guarding(self.guard):
                self.written += by_name[task_name].update_index(records, osp.join(self.out_dir, task_name))
        if self.records:
            self.guard.record(self.written)
        self.records.clear()
        return self.written


def _frame_files(folder: str, stem: str, suffixes: Sequence[str]) -> List[str]:
    """The files of ``folder`` named ``<stem>_<6 digits><suffix>`` for one of ``suffixes``."""
    if not suffixes or not osp.isdir(folder):
        return []
    pattern = re.compile(re.escape(stem) + r'_\d{6}(' + '|'.join(map(re.escape, suffixes)) + ')')
    return [osp.join(folder, name) for name in sorted(os.listdir(folder)) if pattern.fullmatch(name)]


def _has_raw_files(task: BaseInferenceTask) -> bool:
    return type(task).save is not BaseInferenceTask.save


def _has_records(task: BaseInferenceTask) -> bool:
    """Whether the task writes JSON records (``header`` and ``frame_record``): one JSON per image, JSON Lines per
    video."""
    return hasattr(task, 'frame_record') and hasattr(task, 'header')


def _release(video: cv2.VideoWriter, out: AtomicOutput) -> None:
    """Finish a video and move it to its name (an interrupted run keeps the frames written so far)."""
    video.release()
    out.commit()
