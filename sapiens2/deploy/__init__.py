"""Deployment: torch.export / ONNX export with parity checks."""
from .export import ExportableModel, ExportParityError, Tolerance, check_parity, export_model, set_rope_dtype

__all__ = ['ExportableModel', 'ExportParityError', 'Tolerance', 'check_parity', 'export_model', 'set_rope_dtype']
