"""The composite picture's panel of each task, registered by the task itself (the inference task classes of
``sapiens2.apis.tasks`` and of the projects set :attr:`BaseInferenceTask.panel`), so that the composite draws a new
task without the library naming it."""
from dataclasses import dataclass
from typing import Callable, Dict, Mapping, Optional

import numpy as np


@dataclass(frozen=True)
class PanelOptions:
    """What a panel is drawn with besides the result: the task model's ``dataset_meta`` (pose and seg colours), the
    keypoint score threshold and the part-label overlay's opacity."""
    meta: Optional[Mapping] = None
    kpt_thr: float = 0.3
    seg_opacity: float = 0.5


#: ``(BGR image, task result, person mask (H, W) bool or None, options) -> BGR picture of the image's size``.
PanelDrawer = Callable[[np.ndarray, dict, Optional[np.ndarray], PanelOptions], np.ndarray]


@dataclass(frozen=True)
class Panel:
    """How the composite draws one task's results.

    Attributes:
        title: The panel's title (``normals``).
        draw: The drawing (:data:`PanelDrawer`).
        person_mask: ``result -> (H, W) bool``, for a task whose result outlines the person (body parts, alpha): the
            mask the other dense panels are cut out with.
    """
    title: str
    draw: PanelDrawer
    person_mask: Optional[Callable[[dict], np.ndarray]] = None


#: The registered panels, by task name.
TASK_PANELS: Dict[str, Panel] = {}


def register_panel(task: str, panel: Panel) -> None:
    """Draw ``task``'s results with ``panel`` (a later registration replaces an earlier one)."""
    if not task:
        raise ValueError(f'a panel ({panel.title!r}) needs the name of the task it draws')
    TASK_PANELS[task] = panel


def task_panel_of(task: str) -> Panel:
    """The registered panel of ``task``; a KeyError names the registered ones."""
    if task not in TASK_PANELS:
        raise KeyError(f'no composite panel for task {task!r}; registered: {sorted(TASK_PANELS)} (an inference task '
                       'class registers its panel when its module is imported; a project\'s, by its config\'s '
                       'custom_imports)')
    return TASK_PANELS[task]
