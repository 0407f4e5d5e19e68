"""Deployment: export to a bundle folder (ONNX, torch.export) with parity checks, and int8 quantization. Bundles are
read and run by the inference side (:mod:`sapiens2.apis.backends`), which this package uses and never the reverse.

The names load on first use (PEP 562), so ``tools/deploy/export.py --help`` imports no torch.
"""
from sapiens2.utils.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    'Bundle': 'sapiens2.apis.backends.bundle', 'BundleError': 'sapiens2.apis.backends.bundle',
    'read_bundle': 'sapiens2.apis.backends.bundle', 'write_bundle': '.bundle',
    'ExportableModel': '.export', 'ExportParityError': '.export', 'Tolerance': '.export', 'check_parity': '.export',
    'export_model': '.export', 'set_rope_dtype': '.export'
})

__all__ = ['Bundle', 'BundleError', 'ExportableModel', 'ExportParityError', 'Tolerance', 'check_parity', 'export_model',
           'read_bundle', 'set_rope_dtype', 'write_bundle']
