"""What the writer writes for each task, one entry per output format: the switch that turns it off, the paths it
will write (checked before a run writes anything) and the function that writes a frame's files. The writer plans and
writes from :data:`OUTPUT_FORMATS` alone, so a new output format is one entry (a project may append its own)."""
import functools
import os
import os.path as osp
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Protocol, Tuple

import numpy as np

from sapiens2.utils import strict_json
from sapiens2.utils.atomic_save import atomic_write_text
from sapiens2.utils.image_write import write_image

from ..tasks.base import BaseInferenceTask
from .output_guard import OutputGuard, guarding
from .output_plan import Family
from .output_switches import OUTPUT_SWITCHES
from .sources import FRAME_INDEX_DIGITS, Source
from .stream_files import JsonLinesFile, VideoFile


class OutputSink(Protocol):
    """What an output format writes through: the run's :class:`~.writer.ResultWriter`, seen from here (the formats
    are the writer's table, so they name only what they use of it)."""
    out_dir: str
    guard: OutputGuard
    records: Dict[str, List[dict]]  # per task with an index: this run's image records

    def claim(self, stem: str, frame: str) -> str:
        """The planned path of ``stem`` for ``frame`` (refused when the run's plan did not foresee it)."""

    def stream(self, source: Source, path: str, open_file: Callable[[str], Any]) -> Tuple[Any, bool]:
        """The open file of a video's stream output, and whether this call opened it."""

#: The JSON Lines file of a video or stream: ``<task>/<video>_predictions.jsonl``.
JSON_LINES_SUFFIX = '_predictions.jsonl'


@dataclass
class FrameOutput:
    """One task's result on one frame, which the output formats write."""
    task: BaseInferenceTask
    task_dir: str  # ``out_dir/<task>``
    source: Source
    index: int
    image: np.ndarray
    result: dict
    results: Dict[str, dict]  # every task's result on the frame: the drawing context

    @property
    def name(self) -> str:
        """The frame's name (:func:`~sapiens2.apis.io.sources.frame_name`)."""
        return self.source.frame_name(self.index)

    @functools.cached_property
    def picture(self) -> np.ndarray:
        """The task's drawing, made once for the picture files and the ``--show`` window."""
        return self.task.visualize(self.image, self.result, self.results)

    @property
    def record(self) -> dict:
        """What a task with JSON records writes of the frame (``frame_record(record)``)."""
        height, width = self.image.shape[:2]
        return dict(image_name=self.name, image_size=[width, height], result=self.result)


@dataclass(frozen=True)
class OutputFormat:
    """Files that tasks write per input.

    Args:
        name: What the files are.
        switch: The keyword of :data:`~.output_switches.OUTPUT_SWITCHES` that turns them off.
        paths: ``paths(task_dir, task, source)``: the paths it writes for ``source``, planned and checked before the
            run writes anything (:class:`~.output_plan.OutputPlan`).
        write: ``write(writer, frame)``: writes the files of a :class:`FrameOutput`; returns the paths it created.
        applies: Whether a task has such files.
        shared: One set of paths for all the inputs of a run (an index), planned once.
        finish: ``finish(writer, task)``: at the end of a run, writes what waited for it; returns the paths.
        families: ``families(task_dir, task, source)``: the :class:`~.output_plan.Family` of paths it writes for
            ``source`` whose number the frames decide (a video's frame files, per-person crops), planned with the
            paths.
    """
    name: str
    switch: str
    paths: Callable[[str, BaseInferenceTask, Source], Iterable[str]]
    write: Callable[[OutputSink, FrameOutput], List[str]]
    applies: Callable[[BaseInferenceTask], bool] = lambda task: True
    shared: bool = False
    finish: Optional[Callable[[OutputSink, BaseInferenceTask], List[str]]] = None
    families: Callable[[str, BaseInferenceTask, Source], Iterable[Family]] = lambda task_dir, task, source: ()

    def __post_init__(self) -> None:
        switches = [switch.keyword for switch in OUTPUT_SWITCHES]
        if self.switch not in switches:
            raise ValueError(f'output format {self.name!r}: unknown switch {self.switch!r} (switches: {switches})')


# ----------------------------------------------------------------------------------------- raw files
def _has_raw_files(task: BaseInferenceTask) -> bool:
    """Whether the task writes raw files (its own :meth:`~BaseInferenceTask.save`)."""
    return type(task).save is not BaseInferenceTask.save


def _raw_paths(task_dir: str, task: BaseInferenceTask, source: Source) -> List[str]:
    if source.kind == 'video':
        return []  # per frame: _raw_families
    return [osp.join(task_dir, source.name + suffix) for suffix in task.raw_suffixes]


def _raw_families(task_dir: str, task: BaseInferenceTask, source: Source) -> List[Family]:
    """An image's files of the task's ``raw_patterns`` (``(pattern, example)`` of what follows the image's name,
    e.g. per-person crops); a video's frame files ``<task>/<video>/<video>_<frame><suffix or pattern>``."""
    patterns = list(getattr(task, 'raw_patterns', ()))
    if source.kind != 'video':
        return [Family(osp.join(task_dir, source.name), pattern, example) for pattern, example in patterns]
    rests = [(re.escape(suffix), suffix) for suffix in task.raw_suffixes] + patterns
    if not rests:
        return []
    stem = osp.join(task_dir, source.name, osp.basename(source.name)) + '_'
    pattern = rf'\d{{{FRAME_INDEX_DIGITS},}}(' + '|'.join(rest for rest, _ in rests) + ')'
    return [Family(stem, pattern, '0' * FRAME_INDEX_DIGITS + rests[0][1])]


def _write_raw(writer: OutputSink, frame: FrameOutput) -> List[str]:
    """The task's files ``<stem>*`` (``save``), beside the picture for an image, in ``<task>/<video>/`` for a video."""
    source = frame.source
    folder = osp.join(frame.task_dir, source.name if source.kind == 'video' else osp.dirname(source.name))
    stem = osp.basename(frame.name)
    writer.claim(osp.join(folder, stem), frame.name)
    os.makedirs(folder, exist_ok=True)
    with guarding(writer.guard):
        return frame.task.save(frame.image, frame.result, folder, stem, frame.results)


# ----------------------------------------------------------------------------------------- pictures
def _picture_paths(task_dir: str, task: BaseInferenceTask, source: Source) -> List[str]:
    return [osp.join(task_dir, source.name + ('.mp4' if source.kind == 'video' else '.png'))]


def _write_picture(writer: OutputSink, frame: FrameOutput) -> List[str]:
    """``<task>/<name>.png``; a video's frames go into ``<task>/<video>.mp4``."""
    if frame.source.kind == 'video':
        path = osp.join(frame.task_dir, frame.source.name + '.mp4')
        video, opened = writer.stream(frame.source, path, functools.partial(
            VideoFile, fps=frame.source.fps, size=frame.picture.shape[1::-1]))
        video.write(frame.picture)
        return [path] if opened else []
    path = writer.claim(osp.join(frame.task_dir, frame.name + '.png'), frame.name)
    os.makedirs(osp.dirname(path), exist_ok=True)
    write_image(path, frame.picture)
    return [path]


# ----------------------------------------------------------------------------------------- JSON records and index
def _has_records(task: BaseInferenceTask) -> bool:
    """Whether the task writes JSON records (``header`` and ``frame_record``): one JSON per image, JSON Lines per
    video."""
    return hasattr(task, 'frame_record') and hasattr(task, 'header')


def _record_paths(task_dir: str, task: BaseInferenceTask, source: Source) -> List[str]:
    return [osp.join(task_dir, source.name + (JSON_LINES_SUFFIX if source.kind == 'video' else '.json'))]


def _write_record(writer: OutputSink, frame: FrameOutput) -> List[str]:
    """``<task>/<name>.json`` (the task's header and the image's record); a video's frames are lines of
    ``<task>/<video>_predictions.jsonl``, opened with the header line and flushed at each frame."""
    task, record = frame.task, frame.record
    if frame.source.kind == 'video':
        path = osp.join(frame.task_dir, frame.source.name + JSON_LINES_SUFFIX)
        lines, opened = writer.stream(frame.source, path, JsonLinesFile)
        if opened:
            lines.write(strict_json.dumps(dict(video=frame.source.name, **task.header(record['image_size']))) + '\n')
        lines.write(strict_json.dumps(task.frame_record(record)) + '\n')
        return [path] if opened else []
    path = writer.claim(osp.join(frame.task_dir, frame.name + '.json'), frame.name)
    content = dict(image_name=frame.name, **task.header(record['image_size']))
    content.update(task.frame_record(record))  # image_name first, then the header, then the image's results
    atomic_write_text(writer.guard.check(path), strict_json.dumps(content))
    return [path]


def _has_index(task: BaseInferenceTask) -> bool:
    return _has_records(task) and hasattr(task, 'update_index')


def _index_paths(task_dir: str, task: BaseInferenceTask, source: Source) -> List[str]:
    return [] if source.kind == 'video' else [osp.join(task_dir, name) for name in getattr(task, 'index_files', ())]


def _keep_record(writer: OutputSink, frame: FrameOutput) -> List[str]:
    if frame.source.kind != 'video':
        writer.records[frame.task.name].append(frame.record)
    return []


def _write_index(writer: OutputSink, task: BaseInferenceTask) -> List[str]:
    """The task's index (``index_files``, ``update_index``) gains this run's images; other images' entries stay."""
    records = writer.records.pop(task.name, [])
    if not records:
        return []
    with guarding(writer.guard):
        return task.update_index(records, osp.join(writer.out_dir, task.name))


#: In the order the writer plans (checks: the first refused path is named) and writes them.
OUTPUT_FORMATS: List[OutputFormat] = [
    OutputFormat('pictures', 'save_vis', _picture_paths, _write_picture),
    OutputFormat('raw files', 'save_pred', _raw_paths, _write_raw, applies=_has_raw_files, families=_raw_families),
    OutputFormat('JSON records', 'save_pred', _record_paths, _write_record, applies=_has_records),
    OutputFormat('index', 'save_pred', _index_paths, _keep_record, applies=_has_index, shared=True,
                 finish=_write_index),
]
