"""One central adaptation of MMEngine 0.10.7 to this stack, applied when ``sapiens2.engine`` is imported.

MMEngine reads local checkpoints with a bare ``torch.load``: since torch 2.6 that means ``weights_only=True``,
which rejects MMEngine's own training checkpoints (``--resume`` fails), and it cannot read ``.safetensors``.
The local-file scheme of ``CheckpointLoader`` is replaced by :func:`read_checkpoint_file`, so ``load_from``,
``--resume``, ``tools/test.py CONFIG CKPT`` and ``init_cfg`` all accept both formats.
"""
from mmengine.runner.checkpoint import CheckpointLoader

from .checkpoint import read_checkpoint_file


@CheckpointLoader.register_scheme(prefixes='', force=True)
def load_local_checkpoint(filename: str, map_location=None) -> dict:
    """Local checkpoint loader for MMEngine: .safetensors or torch files (see module docstring)."""
    checkpoint = read_checkpoint_file(filename, map_location or 'cpu')
    if filename.endswith('.safetensors'):
        checkpoint = {'state_dict': checkpoint}
    return checkpoint
