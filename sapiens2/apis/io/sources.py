"""Turn what a user passes (image path, folder, video file, GIF, numpy arrays, or a list of these) into frames.

Every frame is an (H, W, 3) BGR uint8 array, as OpenCV (and so the configs' ``LoadImage``) reads a file:

* images (JPEG, PNG, BMP, WebP, TIFF) are decoded with Pillow and turned upright by their EXIF orientation;
  grayscale is repeated to three channels, an alpha channel is dropped (the stored colours are kept, as OpenCV does),
  palette images take their palette colours, 16-bit images keep their top 8 bits (value // 256, as OpenCV reads a
  16-bit PNG); an animated WebP/PNG or a multi-page TIFF gives its first frame;
* videos (MP4, AVI, MOV, MKV, WebM, M4V) are read with OpenCV and animated GIFs with Pillow, frame by frame;
* ``webcam``, ``webcam:N`` and stream URLs (``http(s)://``, ``rtsp://``...) are live video sources, read with OpenCV
  too, dropping the frames that arrive while the model is busy (:mod:`sapiens2.apis.io.live`);
* damaged data, by one rule (:mod:`sapiens2.utils.decoder_messages`): an image whose compressed data the decoder
  reports damaged (a JPEG that would decode to grey rows) is an error naming it, as a truncated one is; a video frame
  the decoder reports damaged is skipped (no results for it) and the frames are named in one warning;
* an image declaring more pixels than twice ``PIL.Image.MAX_IMAGE_PIXELS`` (about 179 million by default) is
  refused before it is decoded (a decompression-bomb guard; raise that Pillow setting for genuine huge images).

Output names (:attr:`Source.name`) are unique within one call: a file's stem, or its path relative to the folder it
came from (without extension); when two inputs would get the same name, the later one gets ``_2`` (``_3``...) and a
warning says so. Files and folders whose name starts with ``.`` are skipped in folders, and so are symbolic links
that lead nowhere (a loop, a missing target), with a warning naming them. A name (or group name) of
more than 200 bytes is shortened to its beginning and a hash of the whole name
(:func:`~sapiens2.utils.output_paths.fit_name`), with a warning, so that output file names stay within the file
system's limit of 255 bytes; ``--bboxes`` entries still match it by its whole name (:attr:`Source.long_name`).
"""
import errno
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

from sapiens2.utils.decoder_messages import decoder_messages, float_image_problem, refuse_damaged_image
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
    long_name: Optional[str] = None  # the name before it was shortened to fit the file system (--bboxes keys by it)

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
        if image.format == 'JPEG':
            _refuse_damaged_jpeg(path)
        return _to_bgr(upright, path)


def _refuse_damaged_jpeg(path: str) -> None:
    """Pillow decodes a JPEG whose compressed data is damaged to grey rows without a word (it silences libjpeg's
    warnings): decode it again with OpenCV at 1/8 scale, grey (every compressed bit is still read, little else is
    done), and refuse it when libjpeg reports damage."""
    with open(path, 'rb') as f:
        data = np.frombuffer(f.read(), np.uint8)
    with decoder_messages() as messages:
        cv2.imdecode(data, cv2.IMREAD_REDUCED_GRAYSCALE_8)
    refuse_damaged_image(messages, path)


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
        with open(path, 'rb') as f:
            problem = float_image_problem(f.read())
        if problem:
            raise ValueError(f'cannot read image {path}: {problem}') from err
        raise OSError(f'cannot read image {path}: not an image file Pillow can decode ({err})') from err


def _to_bgr(image: Image.Image, path: str) -> np.ndarray:
    if image.mode.startswith('I'):  # 16-bit ('I;16', 'I;16B'...) or 32-bit integer grey: keep the top 8 of 16 bits
        grey = (np.clip(np.asarray(image), 0, 65535).astype(np.uint32) >> 8).astype(np.uint8)
        return np.ascontiguousarray(np.repeat(grey[..., None], 3, axis=2))
    if image.mode == 'F':
        with open(path, 'rb') as f:
            problem = float_image_problem(f.read())
        raise ValueError(f'cannot read image {path}: ' + (problem or '32-bit float pixels have no standard 8-bit '
                                                                     'meaning; save it as an 8 or 16-bit image'))
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
    """An input decoded in part: a video whose decodable frames are fewer than its container announces, or some of
    whose frames the decoder reported damaged (those are skipped)."""


def _video_frames(path: str) -> Iterator[Tuple[int, np.ndarray]]:
    """The frames of a video file; a frame whose decoder reports damage (:mod:`sapiens2.utils.decoder_messages`) is
    skipped (no results are written for it: they would be predictions on grey or smeared pixels) and named in one
    :class:`DamagedInputWarning` at the end; the other frames keep their index in the video."""
    capture = cv2.VideoCapture(path)
    if not capture.isOpened():
        raise OSError(f'cannot open video {path} (damaged, or a codec OpenCV cannot decode)')
    announced = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
    index, damaged, first_message = 0, [], ''
    try:
        while True:
            with decoder_messages() as messages:
                ok, frame = capture.read()
            if not ok:
                break
            if messages:
                damaged.append(index)
                first_message = first_message or messages[0]
            else:
                yield index, frame
            index += 1
    finally:
        capture.release()
    if index == 0:
        raise OSError(f'video {path} has no frame OpenCV can decode (damaged, empty, or an unsupported codec)')
    if damaged:
        shown = ', '.join(map(str, damaged[:20])) + (' ...' if len(damaged) > 20 else '')
        verb, frames, skipped = ('is', 'frame', 'it was skipped, so that frame has') if len(damaged) == 1 else \
            ('are', 'frames', 'they were skipped, so those frames have')
        warnings.warn(DamagedInputWarning(
            f'video {path}: {len(damaged)} of its {index} frames {verb} damaged ({frames} {shown}; the decoder said: '
            f'{first_message!r}); {skipped} no results'), stacklevel=2)
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


def collect_sources(inputs: InputType, recursive: bool = False, first_array: int = 0,
                    check_images: bool = True) -> List[Source]:
    """Expand inputs into sources with unique names, in a stable order (folders sorted by file name).

    Args:
        inputs: Image, video or GIF path, folder, (H, W, 3) BGR uint8 array, or a list of these (sources already
            collected pass through, keeping their group).
        recursive: Also collect the files in sub-folders of a folder; their names keep the path relative to the
            folder (``sub/x``), so outputs mirror the input tree.
        first_array: The number of the first array's name (``array_<first_array:06d>``), the next ones counting on
            (an output folder's next free one: :func:`~sapiens2.apis.io.output_guard.next_array_number`).
        check_images: Refuse an image path given by itself that OpenCV cannot read (its first bytes), before any
            model is built. A labelling job turns it off: there a bad item goes to its failures and the job goes on.
    """
    if isinstance(inputs, (str, os.PathLike, np.ndarray, Source)):
        inputs = [inputs]
    collected: List[Tuple[Source, str]] = []  # (source, what its group stands for)
    arrays = first_array
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
            collected.append(_file_source(os.fspath(item), check_images))
    _make_names_unique(collected)
    return [source for source, _ in collected]


def _file_source(path: str, check_image: bool = True) -> Tuple[Source, str]:
    if is_live_input(path):
        name = live_name(path)
        return Source('video', name, name, path=path, live=True, capture=open_capture(path)), ''
    if not osp.exists(path):
        raise FileNotFoundError(f'input {path} {_unresolvable_link(path) or "does not exist"}')
    full = _without_extension(osp.basename(path))
    name = _output_name(full, path)
    long_name = full if name != full else None
    if _kind_of(path) == 'video':
        return Source('video', name, name, path=path, long_name=long_name), ''
    if _kind_of(path) == 'image':
        if check_image and osp.isfile(path) and not cv2.haveImageReader(path):  # its first bytes, before any model
            raise ValueError(f'input {path} is not an image OpenCV can read (empty, damaged, or another kind of file '
                             'with an image name); check the file, or convert it to JPEG or PNG')
        return Source('image', name, 'images', path=path, long_name=long_name), 'images'
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
        full = _without_extension(relative).replace(os.sep, '/')
        name = _output_name(full, path)
        long_name = full if name != full else None
        if kind == 'image':
            sources.append(Source('image', name, group, path=path, long_name=long_name))
        elif kind == 'video':
            sources.append(Source('video', name, name, path=path, long_name=long_name))
    if not sources:
        where = 'or its sub-folders ' if recursive else ''
        hint = '' if recursive else '; --recursive also looks in sub-folders'
        raise ValueError(f'folder {folder} {where}has no images ({IMAGE_EXTENSIONS}) or videos '
                         f'({VIDEO_EXTENSIONS}){hint}')
    return sources


def _folder_files(folder: str, recursive: bool) -> List[str]:
    """Visible files of a folder (relative paths, sorted; sub-folders too when ``recursive``). A symbolic link that
    leads nowhere (a loop, a missing target) is skipped with a warning naming it."""
    if recursive:
        found = []
        for root, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if not d.startswith('.')]
            found += [osp.relpath(osp.join(root, f), folder) for f in files if not f.startswith('.')]
    else:
        found = [e for e in os.listdir(folder) if not e.startswith('.') and not osp.isdir(osp.join(folder, e))]
    files = []
    for relative in sorted(found, key=lambda p: p.split(os.sep)):
        broken = _unresolvable_link(osp.join(folder, relative))
        if broken:
            logger.warning('%s %s: skipped', osp.join(folder, relative), broken)
        elif osp.isfile(osp.join(folder, relative)):
            files.append(relative)
    return files


def _unresolvable_link(path: str) -> Optional[str]:
    """What is wrong with ``path`` when it is a symbolic link that leads to no file: a loop, or a missing target;
    None otherwise."""
    if not osp.islink(path):
        return None
    try:
        os.stat(path)
    except OSError as err:
        if err.errno == errno.ELOOP:
            return f'is a symbolic link loop ({path} -> {os.readlink(path)} leads back to itself)'
        return f'is a symbolic link to {os.readlink(path)}, which does not exist'
    return None


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
