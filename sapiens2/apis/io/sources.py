"""Turn what a user passes (image path, folder, video file, GIF, numpy arrays, or a list of these) into frames.

Every frame is an (H, W, 3) BGR uint8 array, as OpenCV (and so the configs' ``LoadImage``) reads a file:

* images (JPEG, PNG, BMP, WebP, TIFF) are decoded with Pillow and turned upright by their EXIF orientation;
  grayscale is repeated to three channels, an alpha channel is dropped (the stored colours are kept, as OpenCV does),
  palette images take their palette colours, 16-bit images keep their top 8 bits (value // 256, as OpenCV reads a
  16-bit PNG); an animated WebP/PNG or a multi-page TIFF gives its first frame;
* videos (MP4, AVI, MOV, MKV, WebM, M4V) are read with OpenCV and animated GIFs with Pillow, frame by frame;
* ``webcam``, ``webcam:N`` and stream URLs (``http(s)://``, ``rtsp://``...) are live video sources, read with OpenCV
  too, dropping the frames that arrive while the model is busy (:mod:`sapiens2.apis.io.live`);
* an image declaring more pixels than twice ``PIL.Image.MAX_IMAGE_PIXELS`` (about 179 million by default) is
  refused before it is decoded (a decompression-bomb guard; raise that Pillow setting for genuine huge images).

Output names (:attr:`Source.name`) are unique within one call: a file's stem, or its path relative to the folder it
came from (without extension); when two inputs would get the same name, the later one gets ``_2`` (``_3``...) and a
warning says so. Files and folders whose name starts with ``.`` are skipped in folders. A name (or group name) of
more than 200 bytes is shortened to its beginning and a hash of the whole name
(:func:`~sapiens2.utils.output_paths.fit_name`), with a warning, so that output file names stay within the file
system's limit of 255 bytes.
"""
import functools
import logging
import os
import os.path as osp
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import cv2
import numpy as np
from PIL import Image, ImageOps, ImageSequence

from sapiens2.utils.output_paths import fit_name

from .live import LatestFrames, is_live_input, live_name, open_capture

IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png', '.bmp', '.webp', '.tif', '.tiff')
VIDEO_EXTENSIONS = ('.mp4', '.avi', '.mov', '.mkv', '.webm', '.m4v', '.gif')
InputType = Union[str, os.PathLike, np.ndarray, 'Source', Sequence[Union[str, os.PathLike, np.ndarray, 'Source']]]
#: Digits of the frame index in a video frame's name (``walk_000012``).
FRAME_INDEX_DIGITS = 6

logger = logging.getLogger(__name__)


def frame_name(name: str, index: Optional[int] = None) -> str:
    """The one naming rule of a frame's results, outputs and ``--bboxes`` entry: an image's (or array's) ``name``;
    ``<name>_<index:06d>`` for frame ``index`` of a video (``walk_000012``)."""
    return name if index is None else f'{name}_{index:0{FRAME_INDEX_DIGITS}d}'


@dataclass
class Source:
    """One image, one video (or GIF) or one array.

    ``name`` is the output name (unique within a call, may contain ``/`` for files found in sub-folders).
    ``group`` names the collection the source belongs to (a folder's name, a video's name, ``'images'`` for image
    files given one by one, ``'arrays'``); outputs are named by ``name`` alone, one set per input, so that a later
    run into the same folder adds to them (:class:`~sapiens2.apis.io.writer.ResultWriter`).
    """
    kind: str  # 'image', 'video' or 'array'
    name: str
    group: str
    path: Optional[str] = None
    array: Optional[np.ndarray] = None
    live: bool = False  # a webcam or stream: a video of unknown length, whose frames are dropped, never queued
    capture: Optional[Any] = field(default=None, repr=False)  # the opened cv2.VideoCapture of a live source

    def __len__(self) -> int:
        """Number of frames (0 for a live source: unknown)."""
        if self.kind != 'video':
            return 1
        if self.live:
            return 0
        if _is_gif(self.path):
            with _open_image(self.path) as image:
                return int(getattr(image, 'n_frames', 1))
        capture = cv2.VideoCapture(self.path)
        count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
        capture.release()
        return max(count, 0)

    @functools.cached_property
    def fps(self) -> float:
        """Frame rate of a video or GIF (30 for a video that does not say, 10 for a GIF without durations)."""
        if self.kind != 'video':
            return 30.0
        if self.live:
            fps = self.capture.get(cv2.CAP_PROP_FPS)
            return fps if fps and 0 < fps < 1000 else 30.0
        if _is_gif(self.path):
            with _open_image(self.path) as image:
                duration = image.info.get('duration') or 0
            return 1000.0 / duration if duration > 0 else 10.0
        capture = cv2.VideoCapture(self.path)
        fps = capture.get(cv2.CAP_PROP_FPS)
        capture.release()
        return fps if fps and fps > 0 else 30.0

    def frame_name(self, index: int) -> str:
        """Name of frame ``index`` of this source (:func:`frame_name`)."""
        return frame_name(self.name, index if self.kind == 'video' else None)

    def frames(self) -> Iterator[Tuple[int, np.ndarray]]:
        """Yield (frame index, BGR uint8 image)."""
        if self.kind == 'array':
            yield 0, as_bgr_uint8(self.array, self.name)
        elif self.kind == 'image':
            yield 0, read_image(self.path)
        elif self.live:
            yield from LatestFrames(self.capture, self.name, self.fps)
        elif _is_gif(self.path):
            yield from _gif_frames(self.path)
        else:
            yield from _video_frames(self.path)


#: The most pixels a photo is read at (4096 x 4096): a larger one is read reduced to this many, keeping its aspect
#: ratio (the models run at 1024 x 768 at most; a 108 MP photo read whole peaked at 14.3 GB in the dense tasks'
#: full-size maps). JPEGs are decoded reduced (at 1/2, 1/4 or 1/8 scale), so the full-size image is never in memory.
MAX_INPUT_PIXELS = 4096 * 4096


class ReducedInputWarning(UserWarning):
    """A photo of more than :data:`MAX_INPUT_PIXELS` pixels, read reduced; its results are at the reduced size."""


def read_image(path: str, max_pixels: int = MAX_INPUT_PIXELS) -> np.ndarray:
    """Read an image file as an upright (H, W, 3) BGR uint8 array (see the module docstring for the conversions),
    reduced to at most ``max_pixels`` pixels (:class:`ReducedInputWarning` says so)."""
    with _open_image(path) as image:
        original, target = image.size, _reduced_size(image.size, max_pixels)
        try:
            if target is not None:
                image.draft('RGB', target)  # JPEG: the decoder reduces by 2, 4 or 8 (others: no effect)
            image.load()
            upright = ImageOps.exif_transpose(image)
            if target is not None:
                upright = _reduced(upright, original, max_pixels, path)
        except Exception as err:  # Pillow raises OSError, SyntaxError, ValueError... for damaged files
            raise OSError(f'cannot read image {path}: {err} (the file is damaged or truncated)') from err
        return _to_bgr(upright, path)


def _reduced_size(size: Tuple[int, int], max_pixels: int) -> Optional[Tuple[int, int]]:
    width, height = size
    if width * height <= max_pixels:
        return None
    scale = (max_pixels / (width * height)) ** 0.5
    return max(1, int(width * scale)), max(1, int(height * scale))


def _reduced(image: Image.Image, original: Tuple[int, int], max_pixels: int, path: str) -> Image.Image:
    target = _reduced_size(image.size, max_pixels)
    if target is not None:
        image = image.resize(target, Image.Resampling.BILINEAR, reducing_gap=2.0)
    warnings.warn(ReducedInputWarning(
        f'image {path} ({original[0]}x{original[1]}) is read at {image.size[0]}x{image.size[1]}, {max_pixels} pixels '
        f'at most (the models run at 1024x768 at most; bounded memory): its results are at that size'), stacklevel=3)
    return image


def _open_image(path: str) -> Image.Image:
    """``Image.open`` (header only) with errors that name the file; refuses decompression bombs."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', Image.DecompressionBombWarning)  # sizes up to the limit are accepted
            return Image.open(path)
    except Image.DecompressionBombError as err:
        raise ValueError(f'cannot read image {path}: {err} Refused as a possible decompression bomb; if the image '
                         'is genuine, raise PIL.Image.MAX_IMAGE_PIXELS.') from err
    except FileNotFoundError as err:
        raise FileNotFoundError(f'input {path} does not exist') from err
    except (OSError, SyntaxError, ValueError) as err:  # UnidentifiedImageError is an OSError
        raise OSError(f'cannot read image {path}: not an image file Pillow can decode ({err})') from err


def _to_bgr(image: Image.Image, path: str) -> np.ndarray:
    if image.mode.startswith('I'):  # 16-bit ('I;16', 'I;16B'...) or 32-bit integer grey: keep the top 8 of 16 bits
        grey = (np.clip(np.asarray(image), 0, 65535).astype(np.uint32) >> 8).astype(np.uint8)
        return np.ascontiguousarray(np.repeat(grey[..., None], 3, axis=2))
    if image.mode == 'F':
        raise ValueError(f'cannot read image {path}: 32-bit float pixels have no standard 8-bit meaning; save it as '
                         'an 8 or 16-bit image')
    if image.mode in ('P', 'PA'):  # through RGBA, so that a transparent palette entry keeps its colour quietly
        image = image.convert('RGBA')
    rgb = np.asarray(image.convert('RGB'))
    return np.ascontiguousarray(rgb[..., ::-1])


def _is_gif(path: Optional[str]) -> bool:
    return path is not None and osp.splitext(path)[1].lower() == '.gif'


def _gif_frames(path: str) -> Iterator[Tuple[int, np.ndarray]]:
    with _open_image(path) as image:
        try:
            for index, frame in enumerate(ImageSequence.Iterator(image)):
                yield index, _to_bgr(frame, path)
        except (OSError, SyntaxError, ValueError, EOFError) as err:
            raise OSError(f'cannot read GIF {path}: {err} (the file is damaged or truncated)') from err


class DamagedInputWarning(UserWarning):
    """An input decoded in part: a video whose decodable frames are fewer than its container announces."""


def _video_frames(path: str) -> Iterator[Tuple[int, np.ndarray]]:
    capture = cv2.VideoCapture(path)
    if not capture.isOpened():
        raise OSError(f'cannot open video {path} (damaged, or a codec OpenCV cannot decode)')
    announced = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
    index = 0
    try:
        while True:
            ok, frame = capture.read()
            if not ok:
                break
            yield index, frame
            index += 1
    finally:
        capture.release()
    if index == 0:
        raise OSError(f'video {path} has no frame OpenCV can decode (damaged, empty, or an unsupported codec)')
    if announced - index > max(1, announced // 100):  # containers that estimate the count from the duration
        warnings.warn(DamagedInputWarning(
            f'video {path}: {index} of the {announced} frames its container announces could be decoded (the file is '
            f'truncated or damaged); the results of those {index} are written'), stacklevel=2)


def as_bgr_uint8(array: np.ndarray, name: str = 'array') -> np.ndarray:
    """Check a user array: (H, W, 3) BGR uint8 (a (H, W) grey image is expanded to 3 channels)."""
    array = np.asarray(array)
    if array.ndim == 2:
        array = np.repeat(array[..., None], 3, axis=-1)
    if array.ndim != 3 or array.shape[2] != 3 or array.dtype != np.uint8:
        raise ValueError(f'{name}: expected an (H, W, 3) uint8 BGR image, got shape {array.shape} and dtype '
                         f'{array.dtype}; convert with cv2.cvtColor / astype(np.uint8) first')
    return array


def _kind_of(path: str) -> Optional[str]:
    ext = osp.splitext(path)[1].lower()
    return 'image' if ext in IMAGE_EXTENSIONS else 'video' if ext in VIDEO_EXTENSIONS else None


def _without_extension(path: str) -> str:
    return osp.splitext(path)[0]


def _output_name(name: str, path: str) -> str:
    """``name`` (``/``-separated) with its last part shortened by :func:`fit_name` when too long, saying so."""
    head, _, last = name.rpartition('/')
    short = fit_name(last)
    if short != last:
        logger.warning('%s: its output name is shortened to %r (file names are limited to 255 bytes)', path, short)
    return f'{head}/{short}' if head else short


def collect_sources(inputs: InputType, recursive: bool = False) -> List[Source]:
    """Expand inputs into sources with unique names, in a stable order (folders sorted by file name).

    Args:
        inputs: Image, video or GIF path, folder, (H, W, 3) BGR uint8 array, or a list of these (sources already
            collected pass through, keeping their group).
        recursive: Also collect the files in sub-folders of a folder; their names keep the path relative to the
            folder (``sub/x``), so outputs mirror the input tree.
    """
    if isinstance(inputs, (str, os.PathLike, np.ndarray, Source)):
        inputs = [inputs]
    collected: List[Tuple[Source, str]] = []  # (source, what its group stands for)
    arrays = 0
    for item in inputs:
        if isinstance(item, Source):
            collected.append((item, 'group:' + item.group))
        elif isinstance(item, np.ndarray):
            collected.append((Source('array', f'array_{arrays:06d}', 'arrays', array=item), 'arrays'))
            arrays += 1
        elif not isinstance(item, (str, os.PathLike)):
            raise TypeError(f'inputs must be paths, (H, W, 3) BGR uint8 arrays or lists of these, got {type(item)}')
        elif osp.isdir(os.fspath(item)):
            path = os.fspath(item)
            origin = 'folder:' + osp.realpath(path)
            collected += [(source, origin) for source in _folder_sources(path, recursive)]
        else:
            collected.append(_file_source(os.fspath(item)))
    _make_names_unique(collected)
    return [source for source, _ in collected]


def _file_source(path: str) -> Tuple[Source, str]:
    if is_live_input(path):
        name = live_name(path)
        return Source('video', name, name, path=path, live=True, capture=open_capture(path)), ''
    if not osp.exists(path):
        raise FileNotFoundError(f'input {path} does not exist')
    name = _output_name(_without_extension(osp.basename(path)), path)
    if _kind_of(path) == 'video':
        return Source('video', name, name, path=path), ''
    if _kind_of(path) == 'image':
        if osp.isfile(path) and not cv2.haveImageReader(path):  # its first bytes, before any model is built
            raise ValueError(f'input {path} is not an image OpenCV can read (empty, damaged, or another kind of file '
                             'with an image name); check the file, or convert it to JPEG or PNG')
        return Source('image', name, 'images', path=path), 'images'
    raise ValueError(f'input {path}: unknown file type; images: {IMAGE_EXTENSIONS}, videos and GIFs: '
                     f'{VIDEO_EXTENSIONS}')


def _folder_sources(folder: str, recursive: bool) -> List[Source]:
    group = _output_name(osp.basename(osp.normpath(folder)), folder) or 'images'
    sources = []
    for relative in _folder_files(folder, recursive):
        path = osp.join(folder, relative)
        kind = _kind_of(path)
        if kind is None:
            continue
        name = _output_name(_without_extension(relative).replace(os.sep, '/'), path)
        if kind == 'image':
            sources.append(Source('image', name, group, path=path))
        elif kind == 'video':
            sources.append(Source('video', name, name, path=path))
    if not sources:
        where = 'or its sub-folders ' if recursive else ''
        hint = '' if recursive else '; --recursive also looks in sub-folders'
        raise ValueError(f'folder {folder} {where}has no images ({IMAGE_EXTENSIONS}) or videos '
                         f'({VIDEO_EXTENSIONS}){hint}')
    return sources


def _folder_files(folder: str, recursive: bool) -> List[str]:
    """Visible files of a folder (relative paths, sorted; sub-folders too when ``recursive``)."""
    if not recursive:
        return sorted(e for e in os.listdir(folder) if not e.startswith('.') and osp.isfile(osp.join(folder, e)))
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith('.')]
        found += [osp.relpath(osp.join(root, f), folder) for f in files if not f.startswith('.')]
    return sorted(found, key=lambda p: p.split(os.sep))


def _make_names_unique(collected: List[Tuple[Source, str]]) -> None:
    """Suffix ``_2``, ``_3``... to a name an earlier source already uses, and to a group name an earlier folder (or
    video, or the loose images) already uses. Names compare case-insensitively, as on macOS and Windows disks."""
    names: Dict[str, str] = {}
    for source, _ in collected:
        name = _unused(source.name, names)
        if name != source.name:
            logger.warning('%s: output name %r is already used by %s; its outputs are named %r', source.path,
                           source.name, names[source.name.casefold()], name)
        names[name.casefold()] = source.path or name
        source.name = name
    group_of: Dict[str, str] = {}  # what a group stands for -> its name
    used: Dict[str, str] = {}  # casefolded group name -> what it stands for
    for source, origin in collected:
        if source.kind == 'video':
            source.group, origin = source.name, 'video:' + source.name
        if origin not in group_of:
            group_of[origin] = _unused(source.group, used)
            used[group_of[origin].casefold()] = origin
        source.group = group_of[origin]


def _unused(name: str, taken: Dict[str, str]) -> str:
    candidate, number = name, 1
    while candidate.casefold() in taken:
        number += 1
        candidate = f'{name}_{number}'
    return candidate
