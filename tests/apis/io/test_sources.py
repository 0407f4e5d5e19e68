"""Input collection and decoding: image formats and modes, EXIF, GIFs, videos, folders, unique names, bad files."""
import logging
import struct
import warnings
import zlib

import cv2
import numpy as np
import pytest
from PIL import Image

from sapiens2.apis.io.sources import Source, as_bgr_uint8, collect_sources, frame_name, read_image


def write_clip(path, frames=4, size=(32, 48)):
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*'mp4v'), 10, (size[1], size[0]))
    for i in range(frames):
        writer.write(np.full((*size, 3), 40 * i, np.uint8))
    writer.release()
    return str(path)


def smooth_bgr(height=24, width=40, seed=0):
    rng = np.random.default_rng(seed)
    return cv2.GaussianBlur(rng.integers(0, 256, (height, width, 3), dtype=np.uint8), (5, 5), 1.5)


def test_folder_is_sorted_and_keeps_its_group(tmp_path):
    folder = tmp_path / 'shots'
    folder.mkdir()
    for name in ('b.png', 'a.jpg', 'notes.txt', '.hidden.png', '._a.jpg'):
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
    assert sources[0].frame_name(3) == 'clip_000003' and sources[2].frame_name(0) == 'im'
    assert list(sources[1].frames())[0][1].shape == (4, 4, 3)  # grey expanded


@pytest.mark.parametrize('suffix, options', [('.png', {}), ('.bmp', {}), ('.tif', {}), ('.tiff', {}),
                                             ('.webp', dict(lossless=True)), ('.jpg', dict(quality=90))])
def test_8bit_formats_decode_as_opencv_does(tmp_path, suffix, options):
    path = str(tmp_path / f'x{suffix}')
    Image.fromarray(smooth_bgr()[..., ::-1]).save(path, **options)
    image = read_image(path)
    assert image.dtype == np.uint8 and image.shape == (24, 40, 3) and image.flags['C_CONTIGUOUS']
    np.testing.assert_array_equal(image, cv2.imread(path))  # what the configs' LoadImage sees in evaluation
    if suffix != '.jpg':
        np.testing.assert_array_equal(image, smooth_bgr())


def test_grey_rgba_palette_and_16bit_become_8bit_bgr(tmp_path):
    bgr = smooth_bgr()
    grey = bgr[..., 1]
    Image.fromarray(grey).save(tmp_path / 'grey.png')
    np.testing.assert_array_equal(read_image(str(tmp_path / 'grey.png')), np.dstack([grey] * 3))

    rgba = np.dstack([bgr[..., ::-1], np.linspace(0, 255, 40, dtype=np.uint8)[None].repeat(24, 0)])
    Image.fromarray(rgba, 'RGBA').save(tmp_path / 'rgba.png')
    np.testing.assert_array_equal(read_image(str(tmp_path / 'rgba.png')), bgr)  # alpha dropped, colours kept

    Image.fromarray(np.dstack([grey, rgba[..., 3]]), 'LA').save(tmp_path / 'la.png')
    np.testing.assert_array_equal(read_image(str(tmp_path / 'la.png')), np.dstack([grey] * 3))

    palette = Image.fromarray(bgr[..., ::-1]).quantize(16)
    palette.save(tmp_path / 'p.png', transparency=0)
    expected = np.asarray(palette.convert('RGB'))[..., ::-1]
    np.testing.assert_array_equal(read_image(str(tmp_path / 'p.png')), expected)

    grey16 = (np.arange(24 * 40, dtype=np.uint16).reshape(24, 40) * 68).astype(np.uint16)
    colour16 = np.dstack([grey16, grey16 // 2, grey16 // 3])
    for name, data in (('g16.png', grey16), ('g16.tif', grey16), ('c16.png', colour16)):
        cv2.imwrite(str(tmp_path / name), data)
        expected = (data >> 8).astype(np.uint8)
        expected = np.dstack([expected] * 3) if expected.ndim == 2 else expected
        np.testing.assert_array_equal(read_image(str(tmp_path / name)), expected, err_msg=name)


@pytest.mark.parametrize('suffix', ['.jpg', '.png', '.webp', '.tif'])
def test_exif_orientation_is_applied(tmp_path, suffix):
    image = np.zeros((20, 40, 3), np.uint8)
    image[:4, :4] = 255  # white corner top-left of the stored pixels
    exif = Image.Exif()
    exif[0x0112] = 6  # stored pixels must be rotated 90 degrees clockwise to display
    path = str(tmp_path / f'rotated{suffix}')
    Image.fromarray(image).save(path, exif=exif.tobytes(), **(dict(quality=95) if suffix == '.jpg' else {}))
    upright = read_image(path)
    assert upright.shape == (40, 20, 3)
    assert upright[:4, -4:].min() > 200 and upright[-4:, :4].max() < 50  # the corner moved to the top right


def test_gif_frames_and_frame_rate(tmp_path):
    colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
    frames = [Image.new('RGB', (16, 12), colour) for colour in colours]
    path = tmp_path / 'wave.gif'
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=40, loop=0)
    (source, ) = collect_sources(str(path))
    assert (source.kind, source.name, source.group) == ('video', 'wave', 'wave')
    decoded = list(source.frames())
    assert len(source) == len(decoded) == 3 and source.fps == pytest.approx(25)
    for (index, frame), rgb in zip(decoded, colours):
        assert frame.shape == (12, 16, 3)
        np.testing.assert_array_equal(frame[0, 0], rgb[::-1])


def test_same_stems_get_distinct_names(tmp_path, caplog):
    for folder in ('x', 'y'):
        (tmp_path / folder).mkdir()
        cv2.imwrite(str(tmp_path / folder / 'a.png'), np.zeros((4, 4, 3), np.uint8))
    cv2.imwrite(str(tmp_path / 'x' / 'a.jpg'), np.zeros((4, 4, 3), np.uint8))
    cv2.imwrite(str(tmp_path / 'x' / 'A_2.png'), np.zeros((4, 4, 3), np.uint8))
    with caplog.at_level(logging.WARNING, logger='sapiens2.apis.io.sources'):
        sources = collect_sources([str(tmp_path / 'x'), str(tmp_path / 'y'), str(tmp_path / 'y' / 'a.png')])
    names = [(s.path[len(str(tmp_path)) + 1:], s.name, s.group) for s in sources]
    assert names == [('x/A_2.png', 'A_2', 'x'), ('x/a.jpg', 'a', 'x'), ('x/a.png', 'a_3', 'x'),
                     ('y/a.png', 'a_4', 'y'), ('y/a.png', 'a_5', 'images')]
    assert "output name 'a' is already used by" in caplog.text and "named 'a_3'" in caplog.text


def test_groups_of_different_folders_with_the_same_name_stay_apart(tmp_path):
    for parent in ('p', 'q'):
        (tmp_path / parent / 'shots').mkdir(parents=True)
        cv2.imwrite(str(tmp_path / parent / 'shots' / f'{parent}.png'), np.zeros((4, 4, 3), np.uint8))
    sources = collect_sources([str(tmp_path / 'p' / 'shots'), str(tmp_path / 'q' / 'shots')])
    assert [(s.name, s.group) for s in sources] == [('p', 'shots'), ('q', 'shots_2')]
    assert [(s.name, s.group) for s in collect_sources(sources)] == [('p', 'shots'), ('q', 'shots_2')]


def test_recursive_folders_keep_relative_paths(tmp_path):
    for relative in ('top.png', 'b/deep/x.jpg', 'a/x.png', '.cache/skip.png', 'b/notes.txt'):
        path = tmp_path / 'in' / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(path), np.zeros((4, 4, 3), np.uint8)) if path.suffix != '.txt' else path.write_text('')
    assert [s.name for s in collect_sources(str(tmp_path / 'in'))] == ['top']
    sources = collect_sources(str(tmp_path / 'in'), recursive=True)
    assert [(s.name, s.group) for s in sources] == [('a/x', 'in'), ('b/deep/x', 'in'), ('top', 'in')]


def test_bad_inputs_fail_clearly(tmp_path):
    with pytest.raises(FileNotFoundError, match='does not exist'):
        collect_sources(str(tmp_path / 'missing.png'))
    (tmp_path / 'x.txt').write_text('')
    with pytest.raises(ValueError, match='unknown file type'):
        collect_sources(str(tmp_path / 'x.txt'))
    (tmp_path / 'empty').mkdir()
    with pytest.raises(ValueError, match='no images.*--recursive'):
        collect_sources(str(tmp_path / 'empty'))
    with pytest.raises(TypeError, match='inputs must be paths'):
        collect_sources([3])
    with pytest.raises(ValueError, match='uint8 BGR'):
        as_bgr_uint8(np.zeros((4, 4, 3), np.float32))
    (tmp_path / 'broken.png').write_bytes(b'not an image')
    with pytest.raises(ValueError, match=r'broken\.png is not an image OpenCV can read'):  # before any decoding
        collect_sources(str(tmp_path / 'broken.png'))


def test_truncated_files_name_the_file(tmp_path):
    full = tmp_path / 'full.jpg'
    Image.fromarray(smooth_bgr(200, 300)).save(full, quality=95)
    (tmp_path / 'cut.jpg').write_bytes(full.read_bytes()[:2000])
    with pytest.raises(OSError, match=r'cannot read image .*cut\.jpg.*truncated'):
        read_image(str(tmp_path / 'cut.jpg'))
    (tmp_path / 'bad.mp4').write_bytes(b'\x00' * 100)
    with pytest.raises(OSError, match=r'bad\.mp4'):
        list(Source('video', 'bad', 'bad', path=str(tmp_path / 'bad.mp4')).frames())
    (tmp_path / 'bad.gif').write_bytes(b'GIF89a' + b'\x00' * 10)
    with pytest.raises(OSError, match=r'bad\.gif'):
        list(collect_sources(str(tmp_path / 'bad.gif'))[0].frames())


def png_header_only(width: int, height: int) -> bytes:
    """A PNG that declares its size and has no pixel data (enough for a reader that checks the size first)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
    ihdr = struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0)
    return b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', ihdr) + chunk(b'IEND', b'')


def test_decompression_bombs_are_refused_before_decoding(tmp_path, monkeypatch):
    bomb = tmp_path / 'bomb.png'
    bomb.write_bytes(png_header_only(100_000, 100_000))  # 10^10 pixels, 30 GB decoded
    with pytest.raises(ValueError, match=r'bomb\.png.*decompression bomb.*MAX_IMAGE_PIXELS'):
        read_image(str(bomb))
    small = tmp_path / 'small.png'
    cv2.imwrite(str(small), np.zeros((40, 40, 3), np.uint8))
    monkeypatch.setattr(Image, 'MAX_IMAGE_PIXELS', 500)  # the limit is Pillow's: twice this
    with pytest.raises(ValueError, match='small.png'):
        read_image(str(small))
    monkeypatch.setattr(Image, 'MAX_IMAGE_PIXELS', 1000)  # 1600 pixels: over 1x (Pillow warns) but under 2x
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert read_image(str(small)).shape == (40, 40, 3)


def test_one_rule_names_frames_of_images_and_videos():
    assert frame_name('photo') == 'photo' and frame_name('walk', 12) == 'walk_000012'
    video, image = Source('video', 'sub/walk', 'sub/walk'), Source('image', 'sub/photo', 'sub')
    assert video.frame_name(3) == frame_name('sub/walk', 3) == 'sub/walk_000003'
    assert image.frame_name(0) == frame_name('sub/photo') == 'sub/photo'
