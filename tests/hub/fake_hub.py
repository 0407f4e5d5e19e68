"""A Hugging Face Hub cache in a folder, in huggingface_hub's layout, so that tests resolve checkpoints offline.

``models--org--name/blobs/<sha256>`` holds the bytes, ``snapshots/<commit>/<file>`` links to them and
``refs/<branch>`` names the commit, as ``hf_hub_download`` leaves them.
"""
import hashlib
import json
import os
import os.path as osp
from typing import Dict, Mapping, Optional, Sequence, Union

import torch
from safetensors.torch import save

REVISION = '0123456789abcdef0123456789abcdef01234567'
OTHER_REVISION = 'fedcba9876543210fedcba9876543210fedcba98'
FileContent = Union[bytes, dict, Mapping[str, torch.Tensor]]


def _to_bytes(content: FileContent) -> bytes:
    if isinstance(content, bytes):
        return content
    if content and all(isinstance(v, torch.Tensor) for v in content.values()):
        return save({k: v.contiguous() for k, v in content.items()})
    return json.dumps(content).encode()


def add_snapshot(cache_dir: str, repo_id: str, files: Dict[str, FileContent], revision: str = REVISION,
                 refs: Sequence[str] = ('main', )) -> str:
    """Adds ``files`` (name -> bytes, state dict -> .safetensors, dict -> JSON) as snapshot ``revision`` of
    ``repo_id``, pointed to by ``refs``; returns the snapshot folder."""
    repo = osp.join(cache_dir, 'models--' + repo_id.replace('/', '--'))
    snapshot = osp.join(repo, 'snapshots', revision)
    os.makedirs(osp.join(repo, 'blobs'), exist_ok=True)
    for name, content in files.items():
        data = _to_bytes(content)
        blob = osp.join(repo, 'blobs', hashlib.sha256(data).hexdigest())
        with open(blob, 'wb') as f:
            f.write(data)
        link = osp.join(snapshot, name)
        os.makedirs(osp.dirname(link), exist_ok=True)
        os.symlink(osp.relpath(blob, osp.dirname(link)), link)
    for ref in refs:
        os.makedirs(osp.join(repo, 'refs'), exist_ok=True)
        with open(osp.join(repo, 'refs', ref), 'w') as f:
            f.write(revision)
    return snapshot


def sapiens2_config(hidden_size: int = 64, layers: int = 2, heads: int = 2, patch_size: int = 16,
                    image_size: Sequence[int] = (32, 32), architecture: str = 'Sapiens2Model',
                    num_labels: Optional[int] = None) -> dict:
    """A transformers ``Sapiens2Config`` ``config.json`` (the fields sapiens2 compares)."""
    config = dict(model_type='sapiens2', architectures=[architecture], hidden_size=hidden_size,
                  num_hidden_layers=layers, num_attention_heads=heads, patch_size=patch_size, num_register_tokens=8,
                  image_size=list(image_size))
    if num_labels is not None:
        config['id2label'] = {str(i): f'label_{i}' for i in range(num_labels)}
    return config


def offline_env(cache_dir: str, home: str, **extra: str) -> Dict[str, str]:
    """Environment of a subprocess that may only read ``cache_dir``: offline, its own HF_HOME, no checkpoint root."""
    env = dict(os.environ, HF_HUB_CACHE=cache_dir, HF_HOME=home, HF_HUB_OFFLINE='1', HF_HUB_DISABLE_TELEMETRY='1',
               SAPIENS2_CHECKPOINT_ROOT=osp.join(home, 'no-checkpoint-root'))
    env.pop('HF_TOKEN', None)
    env.update(extra)
    return env
