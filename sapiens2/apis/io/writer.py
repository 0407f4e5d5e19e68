"""Write an inferencer's outputs: pictures (PNG per image, MP4 per video), raw results and JSON records per input."""
import bisect
import os
import os.path as osp
import re
from collections import defaultdict
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from sapiens2.utils.output_paths import make_folder

from ..ordered_worker import OrderedWorker
from ..tasks.base import BaseInferenceTask
from .display import WindowDisplay
from .output_formats import OUTPUT_FORMATS, FrameOutput, OutputFormat
from .output_guard import OutputGuard
from .output_plan import Family, OutputPlan, plan_owner
from .output_switches import OUTPUT_SWITCHES
from .sources import Source


class ResultWriter:
    """Lay out results under ``out_dir/<task>/`` by each source's name (unique per call, see
    :func:`~sapiens2.apis.io.sources.collect_sources`; ``sub/x`` for a file in a sub-folder of a folder input), one
    set of files per input, so that a later run into the same ``out_dir`` adds its inputs' files beside the earlier
    ones:

    * image (or array) ``x.jpg``: ``<task>/x.png`` (picture), the task's raw files ``<task>/x*`` (e.g. ``x_seg.npy``)
      and, for a task with JSON records (``header`` and ``frame_record``: pose, people), ``<task>/x.json``;
    * video or GIF ``v.mp4``: ``<task>/v.mp4`` (pictures as a video), raw files ``<task>/v/v_000000*`` per frame and
      JSON Lines ``<task>/v_predictions.jsonl`` (the header with ``video``, then one line per frame, flushed as each
      frame is written: an endless stream or a Ctrl-C keeps every frame written so far);
    * a task's index (``index_files``, ``update_index``: the people's ``coco_results.json``) gains this run's images
      when the run ends; the entries of other images stay (``shared_folder``: other processes, the ranks of a
      labelling job, write into ``out_dir`` at once; the indexes are left to the job's merge).

    These are the entries of :data:`~sapiens2.apis.io.output_formats.OUTPUT_FORMATS`, from which the writer plans
    (:meth:`check_outputs`) and writes; ``save_vis`` and ``save_pred`` turn off those of their switch.

    Two results are never written under the same name in one run: :meth:`check_outputs` refuses two outputs of one
    name, and a second claim of a name raises ``ValueError`` before anything is overwritten. No output replaces an
    input, nor (unless ``overwrite``) a file that sapiens2 did not write into ``out_dir``
    (:class:`~sapiens2.apis.io.output_guard.OutputGuard`): :meth:`check_outputs` refuses such a file before anything is
    written.

    With ``write_ahead > 0``, :meth:`add` and :meth:`end_source` only queue their work (at most ``write_ahead`` frames)
    for one background thread, which draws, encodes and writes in call order while the caller runs the model on the
    next frames. An error in that thread is raised by the next call; the frames queued after it are not written.
    """

    def __init__(self, out_dir: str, tasks: Sequence[BaseInferenceTask], save_vis: bool = True,
                 save_pred: bool = True, write_ahead: int = 0, overwrite: bool = False, show: bool = False,
                 shared_folder: bool = False) -> None:
        self.out_dir, self.tasks = out_dir, list(tasks)
        self.switches = dict(save_vis=save_vis, save_pred=save_pred)
        self.formats: Dict[str, List[OutputFormat]] = {  # per task: the formats it writes
            task.name: [fmt for fmt in OUTPUT_FORMATS if self.switches.get(fmt.switch, True) and fmt.applies(task)
                        and not (shared_folder and fmt.shared)]
            for task in self.tasks}
        self.show = WindowDisplay() if show else None
        self.streams: Dict[Tuple[str, str], Any] = {}  # (source name, path) -> a file its frames go to (videos)
        self.records: Dict[str, List[dict]] = defaultdict(list)  # per task with an index: this run's image records
        self.written: List[str] = []
        self._claimed: Dict[str, str] = {}  # output path or file stem -> the frame that claimed it
        self.guard = OutputGuard(out_dir, overwrite=overwrite, shared=shared_folder)
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
        """Plan every output of ``sources`` (:class:`~.output_plan.OutputPlan`): refuse (``ValueError``, before
        anything is written) two outputs that can be one file, and (``FileExistsError``) an output that would replace
        an input or a file sapiens2 did not write; list the outputs in the output folder's manifest. From then on the
        guard refuses a path the plan does not cover."""
        for source in sources:
            if source.path:
                self.guard.add_input(source.path)
        plan = OutputPlan()
        for task in self.tasks:
            task_dir = osp.join(self.out_dir, task.name)
            for source in sources:
                for fmt in self.formats[task.name]:
                    owner = (f'the {task.name} {fmt.name}' if fmt.shared else
                             plan_owner(fmt.name, task.name, source.name, source.path))
                    for path in fmt.paths(task_dir, task, source):
                        plan.claim(path, owner)
                    for family in fmt.families(task_dir, task, source):
                        plan.claim_family(family, owner)
        plan.check()
        planned = plan.paths()
        for path in planned + _existing_files(plan.families()):
            self.guard.check(path)
        self.guard.plan = plan
        self.guard.record(planned)

    def add(self, source: Source, index: int, image: np.ndarray, results: Dict[str, dict]) -> None:
        """Write one frame's results (``results`` maps task names to results; all serve as drawing context)."""
        self._run(self._write_frame, source, index, image, results)

    def after(self, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` once everything queued before is written (e.g. to record an input as done)."""
        self._run(fn, *args)

    def _write_frame(self, source: Source, index: int, image: np.ndarray, results: Dict[str, dict]) -> None:
        for task in self.tasks:
            frame = FrameOutput(task, osp.join(self.out_dir, task.name), source, index, image, results[task.name],
                                results)
            for fmt in self.formats[task.name]:
                self.written += fmt.write(self, frame)
            if self.show is not None:
                self.show(task.name, frame.picture)

    def claim(self, stem: str, frame: str) -> str:
        """Reserve an output path or file stem for ``frame`` and return it; a second claim raises
        (case-insensitive)."""
        key = osp.normcase(osp.abspath(stem)).casefold()
        if key in self._claimed:
            raise ValueError(f'{frame} and {self._claimed[key]} would both write {stem}*; give inputs distinct '
                             'names (collect_sources makes the names of one call unique)')
        self._claimed[key] = frame
        return stem

    def stream(self, source: Source, path: str, open_file: Callable[[str], Any]) -> Tuple[Any, bool]:
        """The file at ``path`` that the frames of video ``source`` go to, and whether it was opened now: claimed,
        checked and opened (``open_file(path)``) at the first frame, closed (``close()``) at the end of the video."""
        key = (source.name, path)
        if key in self.streams:
            return self.streams[key], False
        self.claim(path, source.name)
        os.makedirs(osp.dirname(path), exist_ok=True)
        self.streams[key] = open_file(self.guard.check(path))
        return self.streams[key], True

    def end_source(self, source: Source) -> None:
        """Finish a source's videos."""
        self._run(self._finish_source, source)

    def _finish_source(self, source: Source) -> None:
        for key in [key for key in self.streams if key[0] == source.name]:
            self.streams.pop(key).close()

    def contents(self) -> str:
        """What this writer writes, in words: ``'predictions and pictures'``, ``'predictions'``..."""
        kinds = [switch.contents for switch in reversed(OUTPUT_SWITCHES)  # raw results first
                 if self.switches.get(switch.keyword, True)]
        return ' and '.join(kinds) or 'outputs'

    def stop(self, after_error: bool = False) -> None:
        """Wait for the queued frames, close the videos and list the files written in the manifest (after an
        error: adds nothing to the indexes). A video file that cannot be finished raises, after every other is
        closed; ``after_error`` (the run is already ending with an error, the one reported): it does not."""
        worker, self._worker = self._worker, None
        try:
            if worker is not None:
                worker.close()
        except BaseException:  # the writing thread's error is the one reported
            after_error = True
            raise
        finally:
            errors = []
            for stream in self.streams.values():  # every one, also after one fails (a full disk)
                try:
                    stream.close()
                except OSError as err:
                    errors.append(err)
            self.streams.clear()
            self.guard.record(self.written)
            if self.show is not None:
                self.show.close()
            if errors and not after_error:
                raise errors[0]

    def close(self) -> List[str]:
        """Write the queued frames, close videos, write what waits for the end of the run (the tasks' indexes);
        return every path written."""
        self.stop()
        finished = []
        for task in self.tasks:
            for fmt in self.formats[task.name]:
                if fmt.finish is not None:
                    finished += fmt.finish(self, task)
        self.written += finished
        if finished:
            self.guard.record(self.written)
        self.records.clear()
        return self.written


def _existing_files(families: Iterable[Family]) -> List[str]:
    """The files already there that ``families`` name (an earlier run's frames or crops: checked by the guard before
    they are replaced); each folder is listed once, and each family looks only at the names that start as it does."""
    listed: Dict[str, List[str]] = {}
    found = []
    for family in families:
        folder, start = osp.split(family.stem)
        if folder not in listed:
            listed[folder] = sorted(os.listdir(folder)) if osp.isdir(folder) else []
        names, regex = listed[folder], re.compile(family.pattern, re.IGNORECASE)
        for name in names[bisect.bisect_left(names, start):]:
            if not name.startswith(start):
                break
            if regex.fullmatch(name[len(start):]):
                found.append(osp.join(folder, name))
    return found
