"""What C decoders print on stderr about damaged data is caught (and only that): a damaged JPEG is refused, a clean
one passes, another line written meanwhile still reaches stderr."""
import os

import cv2
import numpy as np
import pytest

from sapiens2.utils.decoder_messages import DamagedMediaError, decoder_messages, refuse_damaged_image


def _jpeg(damaged: bool) -> np.ndarray:
    picture = np.zeros((64, 96, 3), np.uint8)
    picture[..., 1] = np.arange(96, dtype=np.uint8)[None] * 2
    data = bytearray(cv2.imencode('.jpg', picture)[1].tobytes())
    if damaged:
        start = data.index(b'\xff\xda') + 100
        for i in range(start, start + 150):
            data[i] = 0xFF if i % 7 == 0 else data[i] ^ 0x5A
    return np.frombuffer(bytes(data), np.uint8)


def test_libjpegs_warning_about_damaged_data_is_caught_and_refused():
    with decoder_messages() as messages:
        assert cv2.imdecode(_jpeg(damaged=True), cv2.IMREAD_COLOR) is not None  # decoded anyway: grey rows
    assert messages and 'Corrupt JPEG data' in messages[0]
    with pytest.raises(DamagedMediaError, match=r"^cannot read image a\.jpg: the compressed data is damaged \(the "
                       r"decoder said: 'Corrupt JPEG data"):
        refuse_damaged_image(messages, 'a.jpg')


def test_a_clean_image_gives_no_message_and_other_lines_reach_stderr(capfd):
    with decoder_messages() as messages:
        cv2.imdecode(_jpeg(damaged=False), cv2.IMREAD_COLOR)
        os.write(2, b'a line of another thread\n')
    assert messages == []
    refuse_damaged_image(messages, 'a.jpg')  # nothing to refuse
    assert 'a line of another thread' in capfd.readouterr().err
