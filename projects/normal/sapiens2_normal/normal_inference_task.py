"""Surface-normal inference for ``sapiens2.apis`` / ``tools/infer.py --task normal``."""
from sapiens2.apis import DenseMapInferenceTask, map_panel
from sapiens2.registry import INFERENCE_TASKS
from sapiens2.visualization.dense_maps import normals_to_bgr


@INFERENCE_TASKS.register_module()
class NormalInferenceTask(DenseMapInferenceTask):
    """Surface normals: ``normal`` (H, W, 3) unit vectors; ``<stem>.npy``; [image | normals]; in the composite, the
    normals on black outside the person."""
    name, head_types, uses = 'normal', ('NormalHead', ), ('seg', )
    panel = map_panel('normals', 'normal', normals_to_bgr)
    to_bgr = staticmethod(normals_to_bgr)
