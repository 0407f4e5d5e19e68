"""Deployment: export to a bundle folder (ONNX, torch.export) with parity checks, and the ONNX Runtime backend that
runs bundles (:mod:`sapiens2.deploy.onnxruntime_model`)."""
from .bundle import Bundle, BundleError, read_bundle, write_bundle
from .export import ExportableModel, ExportParityError, Tolerance, check_parity, export_model, set_rope_dtype

__all__ = ['Bundle', 'BundleError', 'ExportableModel', 'ExportParityError', 'Tolerance', 'check_parity', 'export_model',
           'read_bundle', 'set_rope_dtype', 'write_bundle']
