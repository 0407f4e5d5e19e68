"""Interoperability with other Sapiens2 implementations.

``sapiens2.interop.transformers`` converts models both ways between sapiens2 (MMEngine/mmpose/mmseg) and Hugging Face
transformers' ``Sapiens2*`` classes; it imports transformers only when a conversion runs.
"""
