"""Where sapiens2 modules are registered, in one place.

MMEngine registries form a tree: the root registries live in ``mmengine.registry``, and mmpose, mmseg and sapiens2
each own a child registry with their scope name. A lookup walks from the config's ``default_scope`` registry up to the
root, so a module registered in the root is found from every scope.

* Modules every task needs (the ``Sapiens2`` backbone, ``Sapiens2LayerDecayOptimWrapperConstructor``,
  ``Sapiens2Runner``, generic hooks) register into the **root** registries (``mmengine.registry``). An mmpose config
  (``default_scope='mmpose'``), an mmseg config (``'mmseg'``) and a sapiens2 config all build them by type name.
* Pose modules register into **mmpose**'s registries and segmentation modules into **mmseg**'s, so they sit beside
  the machinery they extend (``TopdownPoseEstimator``, ``EncoderDecoder``...).
* Dense regression, pretraining and ``projects/`` use the **sapiens2** child registries defined here
  (``default_scope='sapiens2'``). From that scope, mmpose/mmseg modules are named with their scope prefix,
  e.g. ``'mmseg.PhotoMetricDistortion'``.
"""
from mmengine.registry import DATA_SAMPLERS as MMENGINE_DATA_SAMPLERS
from mmengine.registry import DATASETS as MMENGINE_DATASETS
from mmengine.registry import EVALUATOR as MMENGINE_EVALUATOR
from mmengine.registry import HOOKS as MMENGINE_HOOKS
from mmengine.registry import LOOPS as MMENGINE_LOOPS
from mmengine.registry import METRICS as MMENGINE_METRICS
from mmengine.registry import MODEL_WRAPPERS as MMENGINE_MODEL_WRAPPERS
from mmengine.registry import MODELS as MMENGINE_MODELS
from mmengine.registry import OPTIM_WRAPPER_CONSTRUCTORS as MMENGINE_OPTIM_WRAPPER_CONSTRUCTORS
from mmengine.registry import OPTIM_WRAPPERS as MMENGINE_OPTIM_WRAPPERS
from mmengine.registry import OPTIMIZERS as MMENGINE_OPTIMIZERS
from mmengine.registry import PARAM_SCHEDULERS as MMENGINE_PARAM_SCHEDULERS
from mmengine.registry import RUNNERS as MMENGINE_RUNNERS
from mmengine.registry import TRANSFORMS as MMENGINE_TRANSFORMS
from mmengine.registry import VISBACKENDS as MMENGINE_VISBACKENDS
from mmengine.registry import VISUALIZERS as MMENGINE_VISUALIZERS
from mmengine.registry import Registry

_LOCATIONS = ['sapiens2']

MODELS = Registry('model', parent=MMENGINE_MODELS, scope='sapiens2', locations=_LOCATIONS)
DATASETS = Registry('dataset', parent=MMENGINE_DATASETS, scope='sapiens2', locations=_LOCATIONS)
DATA_SAMPLERS = Registry('data sampler', parent=MMENGINE_DATA_SAMPLERS, scope='sapiens2', locations=_LOCATIONS)
TRANSFORMS = Registry('transform', parent=MMENGINE_TRANSFORMS, scope='sapiens2', locations=_LOCATIONS)
METRICS = Registry('metric', parent=MMENGINE_METRICS, scope='sapiens2', locations=_LOCATIONS)
EVALUATOR = Registry('evaluator', parent=MMENGINE_EVALUATOR, scope='sapiens2', locations=_LOCATIONS)
HOOKS = Registry('hook', parent=MMENGINE_HOOKS, scope='sapiens2', locations=_LOCATIONS)
LOOPS = Registry('loop', parent=MMENGINE_LOOPS, scope='sapiens2', locations=_LOCATIONS)
VISUALIZERS = Registry('visualizer', parent=MMENGINE_VISUALIZERS, scope='sapiens2', locations=_LOCATIONS)
VISBACKENDS = Registry('vis_backend', parent=MMENGINE_VISBACKENDS, scope='sapiens2', locations=_LOCATIONS)
OPTIMIZERS = Registry('optimizer', parent=MMENGINE_OPTIMIZERS, scope='sapiens2', locations=_LOCATIONS)
OPTIM_WRAPPERS = Registry('optim_wrapper', parent=MMENGINE_OPTIM_WRAPPERS, scope='sapiens2', locations=_LOCATIONS)
OPTIM_WRAPPER_CONSTRUCTORS = Registry(
    'optimizer wrapper constructor', parent=MMENGINE_OPTIM_WRAPPER_CONSTRUCTORS, scope='sapiens2',
    locations=_LOCATIONS)
PARAM_SCHEDULERS = Registry(
    'parameter scheduler', parent=MMENGINE_PARAM_SCHEDULERS, scope='sapiens2', locations=_LOCATIONS)
MODEL_WRAPPERS = Registry('model_wrapper', parent=MMENGINE_MODEL_WRAPPERS, scope='sapiens2', locations=_LOCATIONS)
RUNNERS = Registry('runner', parent=MMENGINE_RUNNERS, scope='sapiens2', locations=_LOCATIONS)

# Per-task inference (pre/post-processing and drawing), looked up by the head type of a model; projects register
# their own tasks, so sapiens2.apis never imports projects/.
INFERENCE_TASKS = Registry('inference task', scope='sapiens2', locations=['sapiens2.apis.tasks'])

__all__ = [
    'MMENGINE_MODELS', 'MMENGINE_HOOKS', 'MMENGINE_RUNNERS', 'MMENGINE_OPTIM_WRAPPER_CONSTRUCTORS',
    'MMENGINE_MODEL_WRAPPERS', 'MMENGINE_OPTIM_WRAPPERS', 'MODELS', 'DATASETS', 'DATA_SAMPLERS', 'TRANSFORMS',
    'METRICS', 'EVALUATOR', 'HOOKS', 'LOOPS', 'VISUALIZERS', 'VISBACKENDS', 'OPTIMIZERS', 'OPTIM_WRAPPERS',
    'OPTIM_WRAPPER_CONSTRUCTORS', 'PARAM_SCHEDULERS', 'MODEL_WRAPPERS', 'RUNNERS', 'INFERENCE_TASKS'
]
