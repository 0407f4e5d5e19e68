"""Convert models both ways between sapiens2 and Hugging Face transformers' Sapiens2 classes (transformers >= 5).

A transformers Sapiens2 folder is ``config.json`` (a ``Sapiens2Config``) + ``model.safetensors`` (or shards with
``model.safetensors.index.json``) in the **official key layout**: transformers 5.x ``save_pretrained`` writes the
official names and ``from_pretrained`` renames them on load. So

* **export** (:func:`export_to_transformers`, :func:`model_to_transformers`) writes our weights in the official
  layout, a ``config.json`` describing the architecture (:mod:`sapiens2.interop.transformers_config`; whatever
  transformers cannot express fails with :class:`TransformersConversionError`) and a model card, then loads the
  folder with ``from_pretrained(..., output_loading_info=True)`` and requires zero missing, unexpected and mismatched
  keys;
* **import** (:func:`import_from_transformers`, :func:`load_model_from_transformers`) checks the ``config.json``
  against one of our configs and writes (or loads) a strictly matching checkpoint.

RoPE: transformers computes the RoPE tables in fp32; our default (the official behaviour) is bf16, which changes
outputs by about 1e-3 to 1e-2 (docs/differences.md). An export records our setting in the model card and as
``sapiens2_pos_embed_rope_dtype`` in ``config.json``; :func:`load_model_from_transformers` builds the backbone with
``pos_embed_rope_dtype='fp32'`` unless told otherwise, so it reproduces transformers' outputs. The RoPE ``periods``
buffer is derived from the config (transformers ignores it): an import recomputes it in the config's RoPE dtype.

transformers is imported only when a function that needs it runs.
"""
from .transformers_compare import compare_export, hf_output_names, output_differences, supported_heads
from .transformers_config import TransformersConversionError, describe_model
from .transformers_export import export_to_transformers, model_to_transformers
from .transformers_folder import (
    WEIGHT_DTYPES,
    build_model,
    load_transformers_model,
    read_transformers_config,
    read_transformers_weights,
    require_transformers,
)
from .transformers_import import import_from_transformers, load_model_from_transformers

__all__ = [
    'TransformersConversionError', 'export_to_transformers', 'model_to_transformers', 'import_from_transformers',
    'load_model_from_transformers', 'load_transformers_model', 'read_transformers_weights', 'build_model',
    'output_differences', 'compare_export', 'WEIGHT_DTYPES', 'describe_model', 'hf_output_names',
    'read_transformers_config', 'require_transformers', 'supported_heads'
]
