"""Export of the pretrained student or teacher backbone as a bare-key checkpoint (official pretrain layout)."""
from collections import OrderedDict
from typing import Mapping, Optional

from torch import Tensor

from sapiens2.engine.checkpoint import extract_state_dict, read_checkpoint_file, save_weights, serialisable_meta

BACKBONE_PREFIXES = dict(student='backbone.', teacher='teacher.backbone.')


def backbone_state_dict(state_dict: Mapping[str, Tensor], source: str = 'student') -> 'OrderedDict[str, Tensor]':
    """The ``source`` ('student' or 'teacher') backbone weights of a ``Sapiens2Pretrainer`` state dict, with bare
    keys (``cls_token``, ``blocks.0.attn.wq.weight``, ..., ``rope_embed.periods``, ``ln1.weight``)."""
    if source not in BACKBONE_PREFIXES:
        raise ValueError(f'source must be one of {sorted(BACKBONE_PREFIXES)}, got {source!r}')
    prefix = BACKBONE_PREFIXES[source]
    bare = OrderedDict((k[len(prefix):], v) for k, v in state_dict.items() if k.startswith(prefix))
    if not bare:
        raise KeyError(f'No key starts with {prefix!r}: this is not a Sapiens2Pretrainer checkpoint '
                       f'(first keys: {list(state_dict)[:5]}).')
    return bare


def export_backbone(checkpoint: str | Mapping[str, Tensor], out_file: str, source: str = 'student',
                    trust_checkpoint: Optional[bool] = None) -> 'OrderedDict[str, Tensor]':
    """Writes the ``source`` backbone of a pretraining checkpoint (MMEngine .pth, .safetensors or a state dict)
    to ``out_file`` (.safetensors, or a torch file for other suffixes) with the checkpoint's ``meta`` (what JSON can
    carry) and returns the exported state dict."""
    loaded = read_checkpoint_file(checkpoint, 'cpu', trust_checkpoint) if isinstance(checkpoint, str) else checkpoint
    meta = loaded.get('meta') if isinstance(loaded.get('meta'), Mapping) else {}
    bare = backbone_state_dict(extract_state_dict(loaded, str(checkpoint) if isinstance(checkpoint, str)
                                                  else 'the given checkpoint'), source)
    save_weights(bare, out_file, serialisable_meta(meta))
    return bare
