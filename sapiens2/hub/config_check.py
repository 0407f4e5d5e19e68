"""Checks a model against the ``config.json`` of the Hub snapshot its checkpoint comes from.

transformers-format Sapiens2 repositories describe the model in ``config.json`` (transformers' ``Sapiens2Config``:
``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``, ``patch_size``, ``num_register_tokens``,
``image_size``, and ``id2label``/``num_labels`` for the pose keypoints and segmentation classes). A checkpoint
loaded from such a snapshot must fit the model built from our config; a mismatch fails here with both values,
before any weight is read. Image size and labels are checked only when a task model (backbone + head) loads it,
since a pretrained backbone is fine-tuned at any resolution; an ``image_size`` of 224 (transformers' default, which
its RoPE model does not use) says nothing about the checkpoint and is not compared.
"""
import json
import os.path as osp
from typing import List, Optional, Tuple

from torch import nn

from .download import snapshot_folder

TRANSFORMERS_DEFAULT_IMAGE_SIZE = (224, 224)
# transformers' task classes whose num_labels is the head's number of outputs (keypoints, classes).
_LABELED_ARCHITECTURES = {'Sapiens2ForPoseEstimation': 'out_channels', 'Sapiens2ForSemanticSegmentation': 'num_classes'}


class HubConfigMismatchError(ValueError):
    """The model does not fit the ``config.json`` of the Hub repository its checkpoint comes from."""


def hub_config_file(checkpoint_file: str) -> Optional[str]:
    """The ``config.json`` of the Hub cache snapshot holding ``checkpoint_file``, or None."""
    snapshot = snapshot_folder(checkpoint_file)
    path = osp.join(snapshot, 'config.json') if snapshot else None
    return path if path and osp.isfile(path) else None


def _backbone(model: nn.Module) -> Optional[nn.Module]:
    from sapiens2.models.backbones.sapiens2 import Sapiens2
    return next((m for m in model.modules() if isinstance(m, Sapiens2)), None)


def _hw(value) -> Tuple[int, int]:
    return (int(value), int(value)) if isinstance(value, (int, float)) else (int(value[0]), int(value[1]))


def _num_labels(config: dict) -> Optional[int]:
    if isinstance(config.get('id2label'), dict):
        return len(config['id2label'])
    return config.get('num_labels')


def compare_with_hub_config(model: nn.Module, config: dict, compare_labels: bool = True) -> List[str]:
    """The fields of a transformers Sapiens2 ``config`` that ``model`` does not match (empty when it fits); the
    number of labels only with ``compare_labels`` (not when fine-tuning to another layout)."""
    backbone = _backbone(model)
    if backbone is None or config.get('model_type') != 'sapiens2':
        return []
    pairs = (('hidden_size', 'embed_dims'), ('num_hidden_layers', 'num_layers'), ('num_attention_heads', 'num_heads'),
             ('num_register_tokens', 'n_storage_tokens'))
    problems = [f'{key}={config[key]} but the backbone has {attr}={getattr(backbone, attr)}' for key, attr in pairs
                if key in config and config[key] != getattr(backbone, attr)]
    if 'patch_size' in config and _hw(config['patch_size']) != _hw(backbone.patch_size):
        problems.append(f'patch_size={config["patch_size"]} but the backbone has patch_size={backbone.patch_size}')
    head = getattr(model, 'head', None) or getattr(model, 'decode_head', None)
    if head is None:
        return problems
    ours, theirs = trunk_widths(head), hub_trunk_widths(config)
    if ours is not None and theirs is not None and ours != theirs:
        problems.append(f'head widths {theirs} (head_config) but the head has {ours}')
    image_size = _hw(config['image_size']) if 'image_size' in config else TRANSFORMERS_DEFAULT_IMAGE_SIZE
    if image_size != TRANSFORMERS_DEFAULT_IMAGE_SIZE and image_size != tuple(backbone.img_size):
        problems.append(f'image_size={list(image_size)} but the backbone has img_size={list(backbone.img_size)}')
    attribute = next((_LABELED_ARCHITECTURES[a] for a in config.get('architectures') or []
                      if a in _LABELED_ARCHITECTURES), None)
    labels, ours = _num_labels(config), getattr(head, attribute, None) if attribute else None
    if compare_labels and labels is not None and ours is not None and labels != ours:
        problems.append(f'{labels} labels (id2label/num_labels) but the head has {attribute}={ours}')
    return problems


def read_hub_config(checkpoint_file: str) -> Tuple[Optional[str], Optional[dict]]:
    """(path, content) of the ``config.json`` beside a Hub checkpoint, or (None, None) for other files."""
    config_file = hub_config_file(checkpoint_file)
    if config_file is None:
        return None, None
    try:
        with open(config_file) as f:
            return config_file, json.load(f)
    except (OSError, json.JSONDecodeError) as err:
        raise HubConfigMismatchError(f'{config_file} (config of the Hub checkpoint {checkpoint_file}) is not '
                                     f'readable JSON ({err}); download it again (delete it from the cache)') from err


# Our dense-trunk constructor arguments -> the transformers ``head_config`` fields holding them.
TRUNK_WIDTH_FIELDS = dict(upsample_channels='upsample_out_channels', conv_out_channels='conv_out_channels',
                          conv_kernel_sizes='conv_kernel_sizes')


def _trunk_widths(head_config: dict) -> dict:
    return {ours: [int(v) for v in head_config[theirs]] for ours, theirs in TRUNK_WIDTH_FIELDS.items()}


def trunk_widths(head: nn.Module) -> Optional[dict]:
    """The channel widths of a PixelShuffle dense-trunk head as its constructor arguments, or None for others."""
    from sapiens2.models.heads import DenseTrunkHead
    return head.trunk_widths() if isinstance(head, DenseTrunkHead) else None


def hub_trunk_widths(config: dict) -> Optional[dict]:
    """The dense-trunk widths a transformers ``head_config`` gives (same keys as :func:`trunk_widths`), or None."""
    head_config = config.get('head_config') if config.get('model_type') == 'sapiens2' else None
    if not isinstance(head_config, dict) or not head_config.get('use_pixel_shuffle'):
        return None
    if any(field not in head_config for field in TRUNK_WIDTH_FIELDS.values()):
        return None
    return _trunk_widths(head_config)


def hub_head_widths(model: nn.Module, checkpoint_file: str) -> Tuple[Optional[str], dict]:
    """(config.json path, widths) when the Hub config of ``checkpoint_file`` gives dense-trunk widths other than
    the head of ``model`` has (the widths to build the head with); (None, {}) otherwise."""
    config_file, config = read_hub_config(checkpoint_file)
    head = getattr(model, 'head', None) or getattr(model, 'decode_head', None)
    if config is None or head is None:
        return None, {}
    ours, theirs = trunk_widths(head), hub_trunk_widths(config)
    return (config_file, theirs) if ours is not None and theirs is not None and ours != theirs else (None, {})


def check_model_fits_hub_config(model: nn.Module, checkpoint_file: str, compare_labels: bool = True) -> None:
    """Raises :class:`HubConfigMismatchError` when ``checkpoint_file`` lies in a Hub snapshot whose
    ``config.json`` does not fit ``model`` (labels included unless ``compare_labels`` is False); does nothing for
    other files."""
    config_file, config = read_hub_config(checkpoint_file)
    if config is None:
        return
    problems = compare_with_hub_config(model, config, compare_labels)
    if problems:
        raise HubConfigMismatchError(
            f'The checkpoint {checkpoint_file} does not fit {type(model).__name__}: its repository config '
            f'{config_file} says ' + '; '.join(problems) + '. Use the model config that matches this checkpoint '
            '(docs/model_zoo.md lists them) or the checkpoint that matches your config. To load these weights '
            'into this config anyway (e.g. at another input size), copy the file out of the Hub cache and pass '
            'its path.')
