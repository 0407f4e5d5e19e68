"""Shared machinery of the per-pixel tasks: resize to the network input, forward, map back to the image."""
from typing import Dict, List, Optional, Sequence, Tuple

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from sapiens2.structures.letterbox import letterbox, unletterbox
from .base import BaseInferenceTask


def model_input_size(cfg) -> Tuple[int, int]:
    """Network input (H, W) of a config: ``infer_task.input_size``, else the backbone's ``img_size``."""
    size = cfg.get('infer_task', {}).get('input_size') or cfg.model.get('backbone', {}).get('img_size')
    if size is None:
        raise KeyError('cannot tell the network input size: set infer_task = dict(type=..., input_size=(H, W)) '
                       'or model.backbone.img_size in the config')
    size = (size, size) if isinstance(size, int) else tuple(size)
    return int(size[0]), int(size[1])


def preprocess_batch(model: nn.Module, images: Sequence[np.ndarray]) -> Tensor:
    """Stack same-size BGR uint8 images and run the model's data preprocessor (BGR->RGB, mean/std, device)."""
    inputs = [torch.from_numpy(np.ascontiguousarray(image)).permute(2, 0, 1) for image in images]
    return model.data_preprocessor(dict(inputs=inputs), False)['inputs']


class DenseInferenceTask(BaseInferenceTask):
    """A per-pixel task: letterbox (or stretch) every image to the network input, forward, un-letterbox.

    Subclasses implement :meth:`decode` (the raw map at the original size -> named result arrays) and the drawing;
    the head's optional ``postprocess(outputs) -> dict(map=(B, C, H, W), ...)`` splits multi-output heads (the
    extra entries, e.g. a pointmap scale (B, 1), reach :meth:`decode` per sample).

    Args:
        resize: ``'letterbox'`` (keep aspect, centre-pad; the official normal/pointmap/albedo inference) or
            ``'stretch'`` (the official seg inference).
        input_size: Network input (H, W); defaults to the config's (see :func:`model_input_size`).
    """
    #: Interpolation of the map back to the original size.
    upsample_mode = 'bilinear'

    def __init__(self, model: nn.Module, cfg, dtype: str = 'fp32', resize: str = 'letterbox',
                 input_size: Optional[Sequence[int]] = None) -> None:
        super().__init__(model, cfg, dtype)
        if resize not in ('letterbox', 'stretch'):
            raise ValueError(f'resize must be "letterbox" or "stretch", got {resize!r}')
        self.resize = resize
        self.input_size = tuple(input_size) if input_size is not None else model_input_size(cfg)

    def to_input(self, image: np.ndarray) -> Tuple[np.ndarray, Tuple[int, int, int, int]]:
        """Resize one image to the network input; returns it with its letterbox padding (left, right, top, bottom)."""
        if self.resize == 'stretch':
            height, width = self.input_size
            return cv2.resize(image, (width, height), interpolation=cv2.INTER_LINEAR), (0, 0, 0, 0)
        return letterbox(image, self.input_size)

    def forward(self, inputs: Tensor) -> Dict[str, Tensor]:
        """Normalised batch -> ``dict(map=(B, C, H, W), ...)`` (through the head's ``postprocess`` if it has one)."""
        with torch.no_grad(), self.autocast():
            outputs = self.model(inputs, None, mode='tensor')
        head = getattr(self.model, 'decode_head', None) or getattr(self.model, 'head', None)
        if hasattr(head, 'postprocess'):
            return head.postprocess(outputs)
        return dict(map=outputs)

    def predict(self, images: List[np.ndarray], **kwargs) -> List[dict]:
        resized, pads = zip(*(self.to_input(image) for image in images))
        outputs = self.forward(preprocess_batch(self.model, resized))
        results = []
        maps = outputs['map'].float()
        if tuple(maps.shape[-2:]) != self.input_size:  # a head with a coarser output: back to input pixels first
            maps = F.interpolate(maps, size=self.input_size, mode=self.upsample_mode, align_corners=False)
        for i, (image, pad) in enumerate(zip(images, pads)):
            dense = unletterbox(maps[i], pad, image.shape[:2], mode=self.upsample_mode)
            extras = {key: value[i].float() for key, value in outputs.items() if key != 'map'}
            results.append(self.decode(dense, extras))
        return results

    def decode(self, dense: Tensor, extras: Dict[str, Tensor]) -> dict:
        """(C, H, W) prediction at the original image size (+ per-sample extras) -> result dict of numpy arrays."""
        raise NotImplementedError

    @staticmethod
    def foreground(context: Optional[Dict[str, dict]]) -> Optional[np.ndarray]:
        """Foreground mask (H, W) bool from a body-part seg result on the same image, if one was computed."""
        seg = (context or {}).get('seg')
        return None if seg is None else seg['labels'] > 0

