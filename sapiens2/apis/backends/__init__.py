"""The backends that run an inferencer's models: torch for configs and aliases, ONNX Runtime for exported bundles
(reading a bundle, its ONNX Runtime session and task model). Writing bundles (``tools/deploy/export.py``) uses this
package; this package imports nothing of the export side.

The names load on first use (PEP 562): reading a bundle imports no torch.
"""
from sapiens2.utils.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    'BACKENDS': '.model_plan', 'ModelPlan': '.model_plan', 'build_model': '.model_plan',
    'choose_backend': '.model_plan', 'plan_model': '.model_plan',
    'Bundle': '.bundle', 'BundleError': '.bundle', 'is_bundle': '.bundle', 'read_bundle': '.bundle',
    'build_onnxruntime_model': '.onnxruntime_model'
})

__all__ = ['BACKENDS', 'Bundle', 'BundleError', 'ModelPlan', 'build_model', 'build_onnxruntime_model',
           'choose_backend', 'is_bundle', 'plan_model', 'read_bundle']
