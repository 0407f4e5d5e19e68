"""A video's stream files never leave an unreadable file at their final name: an MP4 that cannot be read back is
removed (a full disk is named as such), a JSON Lines file whose disk filled keeps its complete lines as .partial."""
import errno
import json
import os
from unittest import mock

import numpy as np
import pytest

from sapiens2.apis.io import stream_files
from sapiens2.apis.io.stream_files import JsonLinesFile, VideoFile


class _FillsUp:
    """A text file whose writes fail with ENOSPC once ``room`` characters were written (a part of the last one)."""

    def __init__(self, file, room: int) -> None:
        self.file, self.room = file, room

    def write(self, text: str) -> None:
        if len(text) > self.room:
            self.file.write(text[:self.room])
            self.file.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(text)
        self.file.write(text)

    def __getattr__(self, name):
        return getattr(self.file, name)


def test_a_full_disk_cuts_json_lines_to_whole_lines_and_renames_them_partial(tmp_path):
    path = tmp_path / 'v_predictions.jsonl'
    lines = JsonLinesFile(str(path))
    lines.file = _FillsUp(lines.file, room=30)
    lines.write(json.dumps({'frame': 0}) + '\n')
    with pytest.raises(OSError, match=rf'No space left on device while writing {path}: it needed more than the '
                       rf'13 bytes written .*its 1 complete lines are kept in {path}\.partial') as err:
        lines.write(json.dumps({'frame': 1, 'keypoints': [1, 2, 3]}) + '\n')
    assert err.value.errno == errno.ENOSPC
    lines.close()
    assert sorted(os.listdir(tmp_path)) == ['v_predictions.jsonl.partial']
    assert (tmp_path / 'v_predictions.jsonl.partial').read_text() == '{"frame": 0}\n'


def test_a_readable_mp4_is_committed_and_an_unreadable_one_removed(tmp_path):
    picture = np.zeros((32, 48, 3), np.uint8)
    video = VideoFile(str(tmp_path / 'good.mp4'), 10, (48, 32))
    video.write(picture)
    video.close()
    assert os.listdir(tmp_path) == ['good.mp4']
    video = VideoFile(str(tmp_path / 'v.mp4'), 10, (48, 32))
    video.write(picture)
    with mock.patch.object(stream_files, '_readable_video', return_value=False), \
            mock.patch.object(stream_files.shutil, 'disk_usage', return_value=mock.Mock(free=0)), \
            pytest.raises(OSError, match=rf'No space left on device while writing {tmp_path}/v\.mp4: it needed more '
                          'than the .* written when the disk filled'):
        video.close()
    assert os.listdir(tmp_path) == ['good.mp4']
