"""LoadSegAnnotations reads valid label maps exactly as mmseg's LoadAnnotations does, and refuses, naming the file,
the ones mmseg would read wrongly."""
import io

import cv2
import numpy as np
import pytest
from mmseg.datasets.transforms import LoadAnnotations
from PIL import Image

from sapiens2.datasets.seg import LoadSegAnnotations, decode_label_map


def _results(path, reduce_zero_label=False, label_map=None, **extra) -> dict:
    return dict(seg_map_path=str(path), reduce_zero_label=reduce_zero_label, label_map=label_map, seg_fields=[],
                **extra)


@pytest.mark.parametrize('reduce_zero_label, label_map', [(False, None), (True, None), (False, {3: 7, 7: 3}),
                                                          (True, {0: 5})])
def test_valid_label_maps_load_as_with_mmseg(tmp_path, reduce_zero_label, label_map):
    labels = np.random.default_rng(0).integers(0, 29, (16, 12)).astype(np.uint8)
    labels[:2] = 255
    cv2.imwrite(str(tmp_path / 'a.png'), labels)
    ours = LoadSegAnnotations()(_results(tmp_path / 'a.png', reduce_zero_label, label_map))
    theirs = LoadAnnotations()(_results(tmp_path / 'a.png', reduce_zero_label, label_map))
    assert np.array_equal(ours['gt_seg_map'], theirs['gt_seg_map']) and ours['seg_fields'] == ['gt_seg_map']


def test_palette_and_16bit_maps_with_small_ids_keep_their_ids(tmp_path):
    labels = np.arange(12, dtype=np.uint8).reshape(3, 4)
    palette = Image.fromarray(labels, mode='P')
    palette.putpalette([v for i in range(256) for v in (i, 255 - i, 7)])
    buffer = io.BytesIO()
    palette.save(buffer, format='PNG')
    assert np.array_equal(decode_label_map(buffer.getvalue(), 'p.png'), labels)  # palette indices, not colours
    assert np.array_equal(decode_label_map(cv2.imencode('.png', labels.astype(np.uint16))[1].tobytes(), 'w.png'),
                          labels)


def test_refused_maps_name_the_file():
    grey = np.zeros((8, 6), np.uint8)
    rgba = np.dstack([grey, grey, grey, np.full_like(grey, 255)])
    assert decode_label_map(cv2.imencode('.png', rgba)[1].tobytes(), 'a.png').shape == (8, 6)
    with pytest.raises(ValueError, match=r'label map a\.png is 8x6 but its image is 16x12'):
        decode_label_map(cv2.imencode('.png', grey)[1].tobytes(), 'a.png', image_shape=(16, 12))
    damaged = bytearray(cv2.imencode('.png', grey + 3)[1].tobytes())
    damaged[-20] ^= 0xFF  # inside the image data: its checksum no longer matches
    with pytest.raises(OSError, match=r'cannot read label map a\.png: the file is truncated or damaged'):
        decode_label_map(bytes(damaged), 'a.png')


def test_reduce_zero_label_must_agree_with_the_dataset(tmp_path):
    cv2.imwrite(str(tmp_path / 'a.png'), np.zeros((4, 4), np.uint8))
    loader = LoadSegAnnotations()
    loader(_results(tmp_path / 'a.png', reduce_zero_label=True))
    with pytest.raises(ValueError, match='reduce_zero_label=True but the dataset sets False'):
        loader(_results(tmp_path / 'a.png', reduce_zero_label=False))
