"""Image decoding for the datasets: Pillow's decompression-bomb limit before decoding, errors that name the file."""
import cv2
import numpy as np
import pytest
from PIL import Image

from sapiens2.datasets.image_files import decode_image, read_image_file, refuse_decompression_bomb
from tests.reliability.catalogue import png_declaring


def test_bombs_are_refused_by_pillows_limit(monkeypatch):
    small = cv2.imencode('.png', np.zeros((40, 30), np.uint8))[1].tobytes()
    refuse_decompression_bomb(small)
    refuse_decompression_bomb(b'not an image header')  # formats Pillow does not parse are left to the decoder
    with pytest.raises(ValueError, match=r'^Image size \(900000000 pixels\) exceeds limit.*MAX_IMAGE_PIXELS\.$'):
        refuse_decompression_bomb(png_declaring(30000, 30000))
    monkeypatch.setattr(Image, 'MAX_IMAGE_PIXELS', 500)  # 1200 pixels: more than twice the limit
    with pytest.raises(ValueError, match=r'^cannot read image a/b\.png: .*decompression bomb'):
        refuse_decompression_bomb(small, 'a/b.png')


def test_decode_and_read_name_the_file(tmp_path):
    image = np.arange(12, dtype=np.uint8).reshape(3, 4)
    path = tmp_path / 'm.png'
    cv2.imwrite(str(path), image)
    assert np.array_equal(read_image_file(str(path), cv2.IMREAD_UNCHANGED), image)
    with pytest.raises(OSError, match=r'^cannot read image x\.png: the file is empty'):
        decode_image(b'', 'x.png')
    with pytest.raises(OSError, match=r'cannot read image x\.png: .*truncated'):
        decode_image(path.read_bytes()[:30], 'x.png')
    with pytest.raises(FileNotFoundError, match=rf'^mask image {tmp_path}/none\.png does not exist$'):
        read_image_file(str(tmp_path / 'none.png'), what='mask image')
