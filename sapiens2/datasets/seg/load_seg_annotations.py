"""mmseg's ``LoadAnnotations`` with label maps read exactly, or refused with an error that names the file."""
import io
from typing import Optional, Tuple

import mmcv
import numpy as np
from mmengine import fileio
from mmseg.datasets.transforms import LoadAnnotations
from mmseg.registry import TRANSFORMS
from PIL import Image

from sapiens2.datasets.image_files import refuse_decompression_bomb

PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'


def decode_label_map(data: bytes, path: str, backend: str = 'pillow',
                     image_shape: Optional[Tuple[int, int]] = None) -> np.ndarray:
    """The (H, W) uint8 class ids of a label-map file's bytes; ``ValueError``/``OSError`` naming ``path`` instead of
    a wrong or unclear result.

    Refused: undecodable bytes, and PNGs whose checksums do not match (Pillow, mmseg's decoder, would return
    damaged ids); ids outside 0..255 (a 16-bit map with id 261 would otherwise load as 5); several
    channels that differ (an RGB colour-coded map; a grey map stored as RGB/RGBA with identical colour channels is
    read as its first channel); a size other than ``image_shape`` (H, W) of its image.
    """
    refuse_decompression_bomb(data, path)
    if data.startswith(PNG_SIGNATURE):  # Pillow decodes PNGs without checking their checksums: damaged ids
        try:
            with Image.open(io.BytesIO(data)) as png:
                png.verify()
        except Exception as err:  # noqa: BLE001  (SyntaxError, OSError, struct.error... for damaged chunks)
            raise OSError(f'cannot read label map {path}: the file is truncated or damaged ({err}); re-export '
                          'it.') from err
    try:
        labels = mmcv.imfrombytes(data, flag='unchanged', backend=backend)
    except Exception as err:  # noqa: BLE001  (Pillow and OpenCV raise many types for damaged files)
        raise OSError(f'cannot read label map {path}: {err} (the file is truncated or damaged); re-export it.') from err
    if labels is None or labels.size == 0:
        raise OSError(f'cannot read label map {path}: the file is empty, truncated or not an image; re-export it.')
    if labels.ndim == 3:
        labels = _single_channel(labels, path)
    if labels.dtype.kind not in 'biu':
        raise ValueError(f'label map {path} holds {labels.dtype} values; label maps hold integer class ids (save an '
                         '8-bit PNG).')
    low, high = int(labels.min()), int(labels.max())
    if low < 0 or high > 255:
        raise ValueError(f'label map {path} holds ids {low}..{high} ({labels.dtype}); mmseg reads label maps as 8-bit '
                         f'(id 261 would become 5). The 29 body-part classes are 0..28 and 255 (ignore): remap the '
                         'ids and save an 8-bit PNG.')
    if image_shape is not None and labels.shape != tuple(image_shape):
        raise ValueError(f'label map {path} is {labels.shape[0]}x{labels.shape[1]} but its image is '
                         f'{image_shape[0]}x{image_shape[1]} (H x W); a label map must have the size of its image.')
    return labels.astype(np.uint8)


def _single_channel(labels: np.ndarray, path: str) -> np.ndarray:
    if labels.shape[2] == 1:
        return labels[..., 0]
    colour = labels[..., :3] if labels.shape[2] == 4 else labels
    if (colour == colour[..., :1]).all():
        return colour[..., 0]
    colours = len(np.unique(colour.reshape(-1, colour.shape[-1]), axis=0))
    raise ValueError(f'label map {path} is a {labels.shape[2]}-channel colour image ({colours} colours); label maps '
                     'hold one class id per pixel (a single-channel 8-bit PNG, or a palette PNG whose indices are the '
                     'ids). Convert it: for each class i of the metainfo with colour c in its palette, '
                     'ids[(rgb == c).all(-1)] = i (255 where no class colour), and save ids as an 8-bit grey PNG.')


@TRANSFORMS.register_module()
class LoadSegAnnotations(LoadAnnotations):
    """``LoadAnnotations`` (mmseg) whose label maps go through :func:`decode_label_map`; the map is compared with
    the size of its image when ``LoadImageFromFile`` ran before (``ori_shape``).

    ``reduce_zero_label`` and the dataset's ``label_map`` apply as in mmseg. :class:`BodyPart29Dataset` uses it in
    place of every plain ``LoadAnnotations`` of its pipeline.
    """

    def _load_seg_map(self, results: dict) -> None:
        path = results['seg_map_path']
        data = fileio.get(path, backend_args=self.backend_args)
        labels = decode_label_map(data, path, self.imdecode_backend, results.get('ori_shape'))
        if self.reduce_zero_label is None:
            self.reduce_zero_label = results['reduce_zero_label']
        if self.reduce_zero_label != results['reduce_zero_label']:
            raise ValueError(f'LoadSegAnnotations: reduce_zero_label={self.reduce_zero_label} but the dataset sets '
                             f"{results['reduce_zero_label']}; set it on the dataset only.")
        if self.reduce_zero_label:  # 0 becomes ignore (255), every other id moves down by one
            labels = np.where((labels == 0) | (labels == 255), 255, labels.astype(np.int16) - 1).astype(np.uint8)
        if results.get('label_map') is not None:
            source = labels.copy()
            for old_id, new_id in results['label_map'].items():
                labels[source == old_id] = new_id
        results['gt_seg_map'] = labels
        results['seg_fields'].append('gt_seg_map')

    @classmethod
    def replacing(cls, upstream: LoadAnnotations) -> 'LoadSegAnnotations':
        """The equivalent of an mmseg ``LoadAnnotations`` instance."""
        loader = cls(backend_args=upstream.backend_args, imdecode_backend=upstream.imdecode_backend)
        loader.reduce_zero_label = upstream.reduce_zero_label
        return loader
