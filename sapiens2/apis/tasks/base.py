"""The interface every inference task implements (pose, seg, and the projects' dense tasks).

A task wraps one model. It runs images through the config's own test pipeline (without its ground-truth
transforms, :func:`sapiens2.apis.pipeline.inference_pipeline`) and the model's ``test_step``, the path evaluation
takes, so results are mapped back to each original image by the model itself. The task only turns the predicted
data samples into arrays, draws them and writes raw results. Tasks are registered in
``sapiens2.registry.INFERENCE_TASKS``; a project registers its own (e.g. ``NormalInferenceTask``) from its package,
which the config's ``custom_imports`` load, so ``sapiens2`` never imports ``projects``.

A config chooses its task with a top-level ``infer_task = dict(type='SegInferenceTask', ...)``; without one, the
task whose ``head_types`` lists the config's head type (``model.head`` or ``model.decode_head``) is used.
"""
import os.path as osp
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import nn

from sapiens2.models.backbones import Sapiens2
from sapiens2.utils.devices import autocast_dtype, check_dtype
from sapiens2.visualization.panels import Panel, register_panel

from ..io.output_guard import checked
from ..pipeline import inference_pipeline, run_test_step


def _sapiens2_backbone(model: nn.Module, what: str, fix: str) -> Sapiens2:
    """``model.backbone``, or one error line saying ``what`` needs a Sapiens2 backbone and ``fix``."""
    backbone = getattr(model, 'backbone', None)
    if not isinstance(backbone, Sapiens2):
        raise ValueError(f'{what} a Sapiens2 backbone, which this model ({type(model).__name__}) lacks; {fix}')
    return backbone


def int8_backbone(model: nn.Module) -> None:
    """Put ``model``'s Sapiens2 backbone in int8, compiled (:meth:`Sapiens2.quantize_int8`), in place: the model
    computes int8 from then on, whichever task runs it."""
    _sapiens2_backbone(model, 'dtype int8 with the torch backend quantizes', 'run --dtype fp32 or bf16').quantize_int8()


def compile_backbone(model: nn.Module) -> None:
    """Run ``model``'s Sapiens2 backbone compiled with fused q/k/v projections (the fastest bf16 path on AMX CPUs,
    docs/performance.md), in place; an int8 backbone keeps its own q, k and v."""
    backbone = _sapiens2_backbone(model, 'compile needs', 'leave out compile')
    backbone.fuse_qkv = True
    backbone.compile_blocks()


class BaseInferenceTask:
    """Base of the registered inference tasks.

    Args:
        model: The built estimator, in eval mode, on its device.
        cfg: The model's config (mmengine ``Config``); its test pipeline is built into ``self.pipeline``.
        dtype: ``'fp32'``, or ``'bf16'``/``'fp16'`` to run the forward under autocast, where the model's device runs
            it (:data:`sapiens2.utils.devices.DTYPES_BY_BACKEND_DEVICE`); ``'int8'`` with the torch backend puts the
            backbone's linear layers in int8 and compiles its blocks (:func:`int8_backbone`).
    """
    #: CLI task name and output sub-folder.
    name: str = ''
    #: Head types (``model.head.type`` / ``model.decode_head.type``) this task handles when a config has no
    #: ``infer_task``.
    head_types: Sequence[str] = ()
    #: Names of other tasks whose results this task can use (e.g. a seg mask for the dense tasks' background).
    uses: Sequence[str] = ()
    #: Suffixes of the raw files :meth:`save` writes (``<stem><suffix>``): the writer checks these names before a run
    #: writes anything (docs/inference.md). A task with JSON records defines ``header(image_size) -> dict`` and
    #: ``frame_record(record) -> dict`` (as the pose task): the writer writes ``<name>.json`` per image and JSON Lines
    #: per video.
    raw_suffixes: Sequence[str] = ()
    #: Raw files whose number the result decides (e.g. one per person): ``(pattern, example)``, a regular expression
    #: of what follows ``stem`` in their names and a name part it matches; the writer plans them as a family
    #: (:mod:`~sapiens2.apis.io.output_plan`). A file :meth:`save` writes must match a suffix or a pattern.
    raw_patterns: Sequence[Tuple[str, str]] = ()
    #: The task's panel in the composite picture (:mod:`sapiens2.visualization.composite`); a class that sets it
    #: registers it under its ``name`` when it is defined.
    panel: Optional[Panel] = None

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if vars(cls).get('panel') is not None:
            register_panel(cls.name, cls.panel)

    def __init__(self, model: nn.Module, cfg, dtype: str = 'fp32') -> None:
        self.model, self.cfg, self.dtype = model, cfg, dtype
        backend = getattr(model, 'inference_backend', 'torch')
        check_dtype(dtype, self.device.type, backend)
        if dtype == 'int8' and backend == 'torch':
            int8_backbone(model)
        # once (for int8 it reads the CPU's features); an onnxruntime model's precision is its file's
        self._autocast_dtype = autocast_dtype(dtype) if backend == 'torch' else None
        self.pipeline = inference_pipeline(cfg)

    @property
    def device(self) -> torch.device:
        """Where the model's inputs go (its data preprocessor's device; the CPU for the onnxruntime backend)."""
        preprocessor = getattr(self.model, 'data_preprocessor', None)
        return preprocessor.device if preprocessor is not None else next(self.model.parameters()).device

    def autocast(self):
        """Autocast context for the forward (a no-op for fp32)."""
        dtype = self._autocast_dtype
        return torch.autocast(self.device.type, dtype=dtype, enabled=dtype is not None)

    def test_step(self, data_infos: Sequence[dict]) -> list:
        """Run ``data_infos`` (e.g. ``dict(img=image)``) through the pipeline and ``model.test_step`` in one batch;
        return the predicted data samples."""
        with self.autocast():
            return run_test_step(self.model, self.pipeline, data_infos)

    def predict(self, images: List[np.ndarray], **kwargs) -> List[dict]:
        """Run the model on BGR uint8 images; return one result dict per image, in original image coordinates."""
        raise NotImplementedError

    def settled_until(self, stream: str) -> Optional[int]:
        """The last frame of video ``stream`` whose result :meth:`settle` gives as final now (None: every frame
        predicted so far). Tasks that revise a frame's result with later frames (two-sided smoothing) wait here."""
        return None

    def settle(self, stream: str, frame: int, result: dict) -> dict:
        """The final result of ``frame`` of ``stream``, given the one :meth:`predict` returned."""
        return result

    def visualize(self, image: np.ndarray, result: dict, context: Optional[Dict[str, dict]] = None) -> np.ndarray:
        """Draw a result on (or beside) its BGR image. ``context`` holds the other tasks' results on the image."""
        raise NotImplementedError

    def save(self, image: np.ndarray, result: dict, out_dir: str, stem: str,
             context: Optional[Dict[str, dict]] = None) -> List[str]:
        """Write raw per-image results under ``out_dir`` with file names starting with ``stem``; return paths.
        ``image`` is the BGR input (e.g. to colour a point cloud)."""
        return []

    @staticmethod
    def out_path(out_dir: str, stem: str, suffix: str) -> str:
        """``out_dir/<stem><suffix>``, refused when it would replace an input or a file sapiens2 did not write
        (:func:`~sapiens2.apis.io.output_guard.checked`)."""
        return checked(osp.join(out_dir, stem + suffix))
