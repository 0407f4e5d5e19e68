"""Turn what a user passes (image path, folder, video file, numpy arrays, or a list of these) into frames."""
import os
import os.path as osp
from dataclasses import dataclass
from typing import Iterator, List, Optional, Sequence, Tuple, Union

import cv2
import numpy as np

IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png', '.bmp', '.webp', '.tif', '.tiff')
VIDEO_EXTENSIONS = ('.mp4', '.avi', '.mov', '.mkv', '.webm', '.m4v')
InputType = Union[str, np.ndarray, Sequence[Union[str, np.ndarray]]]


@dataclass
class Source:
    """One image, one video or one array.

    ``group`` names the collection the source belongs to (a folder's name, a video's stem, or ``'images'``): pose
    predictions are written as one ``<group>_predictions.json`` per group, as the official demo does per folder.
    """
    kind: str  # 'image', 'video' or 'array'
    name: str  # stem used for output files
    group: str
    path: Optional[str] = None
    array: Optional[np.ndarray] = None

    def __len__(self) -> int:
        if self.kind != 'video':
            return 1
        capture = cv2.VideoCapture(self.path)
        count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
        capture.release()
        return max(count, 0)

    @property
    def fps(self) -> float:
        """Frame rate of a video (30 when unknown or not a video)."""
        if self.kind != 'video':
            return 30.0
        capture = cv2.VideoCapture(self.path)
        fps = capture.get(cv2.CAP_PROP_FPS)
        capture.release()
        return fps if fps and fps > 0 else 30.0

    def frames(self) -> Iterator[Tuple[int, np.ndarray]]:
        """Yield (frame index, BGR uint8 image)."""
        if self.kind == 'array':
            yield 0, as_bgr_uint8(self.array, self.name)
        elif self.kind == 'image':
            image = cv2.imread(self.path, cv2.IMREAD_COLOR)
            if image is None:
                raise OSError(f'cannot read image {self.path} (missing, or not an image OpenCV can decode)')
            yield 0, image
        else:
            yield from _video_frames(self.path)


def _video_frames(path: str) -> Iterator[Tuple[int, np.ndarray]]:
    capture = cv2.VideoCapture(path)
    if not capture.isOpened():
        raise OSError(f'cannot open video {path} (missing, or a codec OpenCV cannot decode)')
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


def _stem(path: str) -> str:
    return osp.splitext(osp.basename(path))[0]


def collect_sources(inputs: InputType) -> List[Source]:
    """Expand inputs into sources, in a stable order (folders sorted by file name, not recursive)."""
    if isinstance(inputs, (str, os.PathLike, np.ndarray)):
        inputs = [inputs]
    sources: List[Source] = []
    arrays = 0
    for item in inputs:
        if isinstance(item, np.ndarray):
            sources.append(Source('array', f'array_{arrays:06d}', 'arrays', array=item))
            arrays += 1
            continue
        path = os.fspath(item)
        if osp.isdir(path):
            sources += _folder_sources(path)
        elif not osp.exists(path):
            raise FileNotFoundError(f'input {path} does not exist')
        elif _kind_of(path) == 'video':
            sources.append(Source('video', _stem(path), _stem(path), path=path))
        elif _kind_of(path) == 'image':
            sources.append(Source('image', _stem(path), 'images', path=path))
        else:
            raise ValueError(f'input {path}: unknown file type; images: {IMAGE_EXTENSIONS}, '
                             f'videos: {VIDEO_EXTENSIONS}')
    return sources


def _folder_sources(folder: str) -> List[Source]:
    group = osp.basename(osp.normpath(folder)) or 'images'
    sources = []
    for entry in sorted(os.listdir(folder)):
        path = osp.join(folder, entry)
        kind = _kind_of(path)
        if kind == 'image':
            sources.append(Source('image', _stem(path), group, path=path))
        elif kind == 'video':
            sources.append(Source('video', _stem(path), _stem(path), path=path))
    if not sources:
        raise ValueError(f'folder {folder} has no images ({IMAGE_EXTENSIONS}) or videos ({VIDEO_EXTENSIONS})')
    return sources
