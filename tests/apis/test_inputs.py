"""Input collection: images, folders, videos, arrays and lists."""
import cv2
import numpy as np
import pytest

from sapiens2.apis.inputs import as_bgr_uint8, collect_sources


def write_clip(path, frames=4, size=(32, 48)):
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*'mp4v'), 10, (size[1], size[0]))
    for i in range(frames):
        writer.write(np.full((*size, 3), 40 * i, np.uint8))
    writer.release()
    return str(path)


def test_folder_is_sorted_and_keeps_its_group(tmp_path):
    folder = tmp_path / 'shots'
    folder.mkdir()
    for name in ('b.png', 'a.jpg', 'notes.txt'):
        (folder / name).write_bytes(b'')
    sources = collect_sources(str(folder))
    assert [s.name for s in sources] == ['a', 'b'] and {s.group for s in sources} == {'shots'}


def test_video_array_and_image_mix(tmp_path):
    clip = write_clip(tmp_path / 'clip.mp4')
    image = tmp_path / 'im.png'
    cv2.imwrite(str(image), np.zeros((5, 6, 3), np.uint8))
    sources = collect_sources([clip, np.zeros((4, 4), np.uint8), str(image)])
    assert [(s.kind, s.name, s.group) for s in sources] == [('video', 'clip', 'clip'),
                                                            ('array', 'array_000000', 'arrays'),
                                                            ('image', 'im', 'images')]
    frames = list(sources[0].frames())
    assert len(sources[0]) == len(frames) == 4 and frames[0][1].shape == (32, 48, 3)
    assert sources[0].fps == pytest.approx(10)
    assert list(sources[1].frames())[0][1].shape == (4, 4, 3)  # grey expanded


def test_bad_inputs_fail_clearly(tmp_path):
    with pytest.raises(FileNotFoundError, match='does not exist'):
        collect_sources(str(tmp_path / 'missing.png'))
    (tmp_path / 'x.txt').write_text('')
    with pytest.raises(ValueError, match='unknown file type'):
        collect_sources(str(tmp_path / 'x.txt'))
    (tmp_path / 'empty').mkdir()
    with pytest.raises(ValueError, match='no images'):
        collect_sources(str(tmp_path / 'empty'))
    with pytest.raises(ValueError, match='uint8 BGR'):
        as_bgr_uint8(np.zeros((4, 4, 3), np.float32))
    (tmp_path / 'broken.png').write_bytes(b'not an image')
    with pytest.raises(OSError, match='cannot read image'):
        list(collect_sources(str(tmp_path / 'broken.png'))[0].frames())
