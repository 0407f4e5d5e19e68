"""``Sapiens2Inferencer``: run one or several task models on images, folders, videos or arrays."""
import contextlib
import os
import warnings
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
from tqdm import tqdm

from sapiens2.engine.checkpoint import trusted_checkpoints
from sapiens2.utils.devices import AUTO, DtypeNotice, auto_dtype_line

from .backends import build_model, plan_model
from .bbox_files import BoxesInput, load_bboxes, match_bboxes
from .io.frames import frames_and_ends
from .io.output_guard import next_array_number, writing_into
from .io.prefetch import prefetched
from .io.sources import InputType, Source, collect_sources
from .io.writer import ResultWriter
from .notices import Notices
from .pending_frames import PendingFrames
from .people import PeopleComposer
from .tasks import BaseInferenceTask, build_task, compile_backbone

Frame = Tuple[Source, int, np.ndarray]
# Frames read ahead while the model runs, in batches.
PREFETCH_BATCHES = 2
WRITE_AHEAD_BATCHES = 2  # batches of results that may wait for the writer thread


class Sapiens2Inferencer:
    """Task-agnostic inference on user images.

    Args:
        model: A config path or alias (``'pose-1b'``; see :mod:`sapiens2.hub.model_zoo`), or an exported bundle
            folder (``tools/deploy/export.py --out FOLDER``, run with ONNX Runtime), or a list of them to run
            several tasks on the same inputs in one call.
        weights: Checkpoint path(s) (.safetensors or .pth, official task checkpoints accepted), one per model;
            ``None`` uses the alias' checkpoint (or random weights for a config, for testing only).
        device: ``'cpu'``, ``'cuda'``, ``'cuda:1'``...; default CUDA when available.
        dtype: ``'auto'`` (default): the fastest precision the device computes natively
            (:func:`~sapiens2.utils.devices.auto_dtype`: bf16 on bf16 CPUs and GPUs, int8 on CPU classes where it
            was measured to pay and for an int8 bundle, else fp32), said in one warning line (``DtypeNotice``) when
            the first call has checked its inputs and outputs, and recorded in the pose and people JSON; ``'fp32'``
            for the official numerics, ``'bf16'``/``'fp16'`` (autocast) or ``'int8'`` (onnxruntime; torch: int8
            linear layers, eager on AVX2, compiled with VNNI) where the device and backend run it
            (``sapiens2.utils.devices``).
        batch_size: Images per forward (pose: person crops per forward).
        task_options: Per task name, arguments overriding the config's ``infer_task`` (e.g.
            ``{'pose': dict(kpt_thr=0.5)}``).
        trust_checkpoint: Load torch checkpoints (models and person detector) that hold more than weights; this
            runs their code (docs/checkpoints.md).
        backend: ``'torch'`` or ``'onnxruntime'``; default: onnxruntime for bundle folders, torch otherwise.
        providers: ONNX Runtime execution providers (names or ``(name, options)``), passed to ONNX Runtime as they
            are; default from ``device`` (:func:`sapiens2.apis.backends.onnxruntime_session.default_providers`).
        compile: Run the torch models' backbones compiled, with fused q/k/v projections: compiled at the first call
            (seconds to a minute), then faster (docs/performance.md); for folders and videos rather than one photo.

    Example:
        >>> inferencer = Sapiens2Inferencer(['seg-1b', 'normal-1b'])
        >>> results = inferencer('photos/', out_dir='outputs/')
    """

    def __init__(self,
                 model: Union[str, Sequence[str]],
                 weights: Union[None, str, Sequence[Optional[str]]] = None,
                 device: Optional[str] = None,
                 dtype: str = AUTO,
                 batch_size: int = 4,
                 task_options: Optional[Dict[str, dict]] = None,
                 trust_checkpoint: bool = False,
                 backend: Optional[str] = None,
                 providers: Optional[Sequence] = None,
                 compile: bool = False) -> None:
        models = [model] if isinstance(model, str) else list(model)
        weights = [weights] * len(models) if weights is None or isinstance(weights, str) else list(weights)
        if len(weights) != len(models):
            raise ValueError(f'{len(models)} models but {len(weights)} weights; give one checkpoint per model')
        # a device, dtype or bundle that cannot run fails before any model is built
        plans = [plan_model(name, ckpt, device, dtype, backend, compile) for name, ckpt in zip(models, weights)]
        tasks = []
        with trusted_checkpoints() if trust_checkpoint else contextlib.nullcontext():
            for plan in plans:
                net = build_model(plan, providers)
                if compile:
                    compile_backbone(net)
                tasks.append(build_task(net, net.cfg, plan.dtype, task_options))
        self._setup(tasks, batch_size)
        if dtype == AUTO:  # said by the first call, once its inputs and outputs are checked (no line before an error)
            self._dtype_notice = auto_dtype_line([(plan.model, plan.dtype, plan.why) for plan in plans])

    @classmethod
    def from_tasks(cls, tasks: Sequence[BaseInferenceTask], batch_size: int = 4) -> 'Sapiens2Inferencer':
        """An inferencer over already built tasks (e.g. models built in code)."""
        inferencer = cls.__new__(cls)
        inferencer._setup(list(tasks), batch_size)
        return inferencer

    def _setup(self, tasks: List[BaseInferenceTask], batch_size: int) -> None:
        names = [task.name for task in tasks]
        if len(set(names)) != len(names):
            raise ValueError(f'each task can run once per inferencer, got {names}')
        if batch_size < 1:
            raise ValueError(f'batch_size must be >= 1, got {batch_size}')
        # Tasks whose results others use (e.g. seg masks for dense backgrounds) run first.
        used = {name for task in tasks for name in task.uses}
        self.tasks = sorted(tasks, key=lambda task: task.name not in used)
        self.batch_size = batch_size
        self._dtype_notice: Optional[str] = None

    def __call__(self,
                 inputs: InputType,
                 out_dir: Optional[str] = None,
                 save_vis: bool = True,
                 save_pred: bool = True,
                 bboxes: Optional[BoxesInput] = None,
                 show_progress: bool = True,
                 return_results: bool = True,
                 recursive: bool = False,
                 overwrite: bool = False,
                 show: bool = False,
                 people: bool = False,
                 per_person: bool = False,
                 person_detector: Optional[Callable[[np.ndarray], np.ndarray]] = None,
                 item_done: Optional[Callable[[Source], None]] = None,
                 item_failed: Optional[Callable[[Source, str], None]] = None,
                 shared_folder: bool = False,
                 workers: int = 0) -> List[dict]:
        """Run every task on every frame of ``inputs``.

        Args:
            inputs: Image path, folder, video file, ``webcam``/``webcam:N`` or a stream URL (live: frames that arrive
                while the model is busy are dropped), (H, W, 3) BGR uint8 array, or a list of these.
            out_dir: Where to write pictures and raw results (see :class:`ResultWriter`); nothing is written if None.
                One run at a time writes into a folder: a second one (another process or thread) waits for the first,
                saying so in one line. Arrays are named on from the ``array_<n>`` an earlier call wrote there.
            save_vis, save_pred: Write pictures / raw results.
            bboxes: Person boxes for the pose task: ``{image name: [[x1, y1, x2, y2(, score)], ...]}`` (name: file
                stem, ``array_000000`` or ``<video>_000012``), a COCO annotation file or COCO detection results (those
                scoring below the pose task's ``bbox_thr`` left out), as a JSON file path or its content
                (:mod:`sapiens2.apis.bbox_files`); entries of images not in ``inputs`` are left out (one line says
                how many were used). Images without boxes use the detector or the whole image.
            show_progress: Progress bar over frames (when there is more than one).
            return_results: Collect and return the results (disable for long videos).
            recursive: Also read the sub-folders of folder inputs (outputs keep the relative paths).
            overwrite: Replace files in ``out_dir`` that sapiens2 did not write there. Without it such a file is
                refused before anything is written (``FileExistsError``); an output never replaces an input.
            show: Also show the pictures in an OpenCV window per task as they are drawn (needs ``out_dir``).
            people: Compose the tasks into one record per person (``people`` result, ``people/`` outputs, person
                fields in the pose JSON; :mod:`sapiens2.apis.people`): pose (or ``bboxes``) with seg, matting or
                pointmap.
            person_detector: Person boxes (N, 4 or 5: xyxy(, score)) of an image, for ``people`` without pose, on
                the frames ``bboxes`` gives none for (e.g. ``functools.partial(detect_persons, init_person_detector(
                config, checkpoint))`` from :mod:`sapiens2.apis.pose_video.topdown`).
            per_person: Also crop each dense map that ran to each person's box, no data outside its mask (implies
                ``people``; ``people['per_person']``, files ``people/<stem>_person<k>_<task>.png``/``.npy``).
            item_done: Called with each source once all its outputs are written (in the writer's order; for a video
                after its last frame), e.g. to record it as finished (:mod:`sapiens2.apis.labelling`).
            item_failed: Given, a source that cannot be read (unreadable, damaged, vanished, a video that ends
                early) is reported here with the reason, in one line, and the run goes on with the next one; without
                it such a source ends the run with its error.
            shared_folder: Other processes (the ranks of a labelling job, :mod:`sapiens2.apis.labelling`) write into
                ``out_dir`` at the same time: the tasks' indexes (``people/coco_results.json``) are left to the job's
                merge, and the output folder's manifest keeps what the others listed.
            workers: Decode images in this many DataLoader worker processes (0: a thread of this process), so that
                the model does not wait for JPEG decoding.
        Returns:
            One dict per frame: ``name``, ``source``, ``frame`` and one result dict per task name (and ``people``).
        Raises:
            InferenceInterrupted: On Ctrl-C (a ``KeyboardInterrupt``), after writing the outputs of the frames
                already predicted, group files included.
        """
        if show and not out_dir:
            raise ValueError('show=True needs an out_dir (pass save_vis=False, save_pred=False to write nothing)')
        if out_dir is not None and not str(out_dir).strip():
            raise ValueError(f'out_dir={out_dir!r} is not a folder name; give a folder, or out_dir=None to write '
                             'nothing')
        if out_dir and not (save_vis or save_pred or show):
            raise ValueError(f'save_vis=False with save_pred=False writes nothing to {out_dir}; keep one of them, or '
                             'pass out_dir=None (the results are returned)')
        job = dict(item_done=item_done, item_failed=item_failed, shared_folder=shared_folder, workers=workers)
        if not out_dir:
            return self._run(collect_sources(inputs, recursive), None, save_vis, save_pred, bboxes, show_progress,
                             return_results, overwrite, show, people, per_person, person_detector, **job)
        # One run at a time into one folder (a second one waits, saying so); a labelling job's ranks share theirs by
        # design, each writing only its own items' files.
        with contextlib.nullcontext() if shared_folder else writing_into(str(out_dir)):
            sources = collect_sources(inputs, recursive, first_array=next_array_number(str(out_dir)))
            return self._run(sources, str(out_dir), save_vis, save_pred, bboxes, show_progress, return_results,
                             overwrite, show, people, per_person, person_detector, **job)

    def _run(self, sources: List[Source], out_dir: Optional[str], save_vis: bool, save_pred: bool,
             bboxes: Optional[BoxesInput], show_progress: bool, return_results: bool, overwrite: bool, show: bool,
             people: bool, per_person: bool, person_detector: Optional[Callable[[np.ndarray], np.ndarray]],
             item_done: Optional[Callable[[Source], None]], item_failed: Optional[Callable[[Source, str], None]],
             shared_folder: bool, workers: int) -> List[dict]:
        """:meth:`__call__` on collected ``sources`` (holding ``out_dir``'s lock unless ``shared_folder``)."""
        for task in self.tasks:
            if hasattr(task, 'notices'):
                task.notices = Notices()  # warnings are shown once per call, not once per frame
        people = people or per_person
        if bboxes:
            if not people and not any(getattr(task, 'accepts_bboxes', False) for task in self.tasks):
                raise ValueError(f'person boxes were given but no task uses them (tasks: '
                                 f'{[task.name for task in self.tasks]}); boxes are for pose')
            origin = os.fspath(bboxes) if isinstance(bboxes, (str, os.PathLike)) else 'bboxes'
            thresholds = [task.bbox_thr for task in self.tasks if hasattr(task, 'bbox_thr')]
            loaded = load_bboxes(bboxes, *thresholds[:1])
            bboxes = match_bboxes(loaded, sources, origin) if loaded else None
        composer = PeopleComposer(self.tasks, bboxes, per_person, person_detector) if people else None
        # Pictures and raw results of a batch are encoded and written while the model runs on the next one.
        outputs = self.tasks + ([composer] if composer else [])  # the people's outputs are written as a task's
        writer = (ResultWriter(out_dir, outputs, save_vis, save_pred, WRITE_AHEAD_BATCHES * self.batch_size,
                               overwrite, show, shared_folder) if out_dir else None)
        try:
            if writer is not None:
                writer.check_outputs(sources)
        except BaseException:
            writer.stop(after_error=True)
            raise
        if self._dtype_notice is not None:
            warnings.warn(self._dtype_notice, DtypeNotice)
            self._dtype_notice = None
        live = any(source.live for source in sources)
        total = None if live else sum(len(source) for source in sources)
        collected: List[dict] = []
        pending = PendingFrames(self.tasks)  # video frames wait until their results are final (two-sided smoothing)
        failed = set()  # names of the sources reported to item_failed

        def finished(source: Source) -> None:
            if item_done is not None and source.name not in failed:
                writer.after(item_done, source) if writer is not None else item_done(source)

        def emit(items) -> None:
            for source, index, image, results in items:
                if composer is not None:
                    results = composer.add(source, index, image, results)
                if writer is not None:
                    writer.add(source, index, image, results)
                if return_results:
                    collected.append(dict(name=source.frame_name(index), source=source.path or source.name,
                                          frame=index, **results))
                if source.kind != 'video':
                    finished(source)

        def end_source(source: Source) -> None:
            emit(pending.flush(source))
            self._end_source(writer, source)
            if composer is not None:
                composer.end_stream(source.name)
            finished(source)

        def failure(source: Source, reason: str) -> None:
            failed.add(source.name)
            item_failed(source, reason)

        done = 0
        try:
            with tqdm(total=total, disable=not show_progress or (not live and total <= 1), unit='frame') as bar:
                for batch in self._batches(sources, end_source, failure if item_failed else None, workers):
                    for (source, index, image), results in zip(batch, self._predict(batch, bboxes)):
                        emit(pending.add(source, index, image, results))
                        done += 1
                    bar.update(len(batch))
            emit(pending.flush())
        except KeyboardInterrupt:
            if writer is None:
                raise
            emit(pending.flush())
            writer.close()
            count = f'{done} of {total}' if total is not None else f'{done}'  # a live stream has no end
            raise InferenceInterrupted(f'interrupted after {count} {_unit(sources)}; their '
                                       f'{writer.contents()} are written to {out_dir}') from None
        except BaseException:
            if writer is not None:
                writer.stop(after_error=True)
            raise
        if writer is not None:
            writer.close()
        return collected

    def _end_source(self, writer: Optional[ResultWriter], source: Source) -> None:
        if writer is not None:
            writer.end_source(source)
        for task in self.tasks:
            if hasattr(task, 'end_stream'):
                task.end_stream(source.name)

    def _batches(self, sources: List[Source], end_source: Optional[Callable[[Source], None]],
                 failure: Optional[Callable[[Source, str], None]] = None,
                 workers: int = 0) -> Iterator[List[Frame]]:
        """Batches of frames; the next frames are read and decoded in a background thread (images: in ``workers``
        DataLoader processes) while the caller runs the model on the current batch (:func:`prefetched`,
        ``PREFETCH_BATCHES`` batches ahead). ``end_source`` is called after the last frame of each video. A source
        that cannot be read goes to ``failure`` when given (else its error ends the run). Live sources are neither
        read ahead nor batched: each frame is the newest one when the model is free."""
        batch: List[Frame] = []
        frames = frames_and_ends(sources, failure, workers)
        if not any(source.live for source in sources):
            frames = prefetched(frames, PREFETCH_BATCHES * self.batch_size)
        for source, index, image in frames:
            if index is not None:
                batch.append((source, index, image))
                if len(batch) == self.batch_size or source.live:
                    yield batch
                    batch = []
            elif source.kind == 'video':
                if batch:
                    yield batch
                    batch = []
                if end_source is not None:
                    end_source(source)
        if batch:
            yield batch

    def _predict(self, batch: List[Frame], bboxes: Optional[dict]) -> List[Dict[str, dict]]:
        images = [image for _, _, image in batch]
        per_frame: List[Dict[str, dict]] = [{} for _ in batch]
        for task in self.tasks:
            kwargs = {}
            if getattr(task, 'accepts_bboxes', False):
                names = [source.frame_name(index) for source, index, _ in batch]
                kwargs.update(bboxes=[(bboxes or {}).get(name) for name in names], names=names,
                              streams=[(source.name, index, source.fps, source.live) if source.kind == 'video'
                                       else None for source, index, _ in batch])
            for frame_results, result in zip(per_frame, task.predict(images, **kwargs)):
                frame_results[task.name] = result
        return per_frame


class InferenceInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run that writes outputs; the message says how many frames were done and where they are."""


def _unit(sources: List[Source]) -> str:
    return 'images' if all(source.kind != 'video' for source in sources) else 'frames'
