"""Deployment: export to a bundle folder (ONNX, torch.export) with parity checks, and the ONNX Runtime backend that
runs bundles (:mod:`sapiens2.deploy.onnxruntime_model`).

The names load on first use (PEP 562), so ``tools/deploy/export.py --help`` imports no torch.
"""
from sapiens2.utils.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    'Bundle': '.bundle', 'BundleError': '.bundle', 'read_bundle': '.bundle', 'write_bundle': '.bundle',
    'ExportableModel': '.export', 'ExportParityError': '.export', 'Tolerance': '.export', 'check_parity': '.export',
    'export_model': '.export', 'set_rope_dtype': '.export'
})

__all__ = ['Bundle', 'BundleError', 'ExportableModel', 'ExportParityError', 'Tolerance', 'check_parity', 'export_model',
           'read_bundle', 'set_rope_dtype', 'write_bundle']
