"""The frames of a run's sources, in order, with an end marker per source; images optionally decoded in DataLoader
worker processes, unreadable sources optionally reported and skipped instead of ending the run."""
import sys
from typing import Callable, Iterator, List, Optional, Tuple

import numpy as np

from .sources import Source, read_image

FrameOrEnd = Tuple[Source, Optional[int], Optional[np.ndarray]]
#: Errors of a source that cannot be read (missing, damaged, undecodable): reported, the run goes on.
READ_ERRORS = (OSError, ValueError, EOFError, SyntaxError)


def frames_and_ends(sources: List[Source], failure: Optional[Callable[[Source, str], None]] = None,
                    workers: int = 0) -> Iterator[FrameOrEnd]:
    """``(source, index, image)`` for every frame, then ``(source, None, None)`` at the end of each source.

    ``failure``: a source that cannot be read, or a video whose decodable frames stop before the count its container
    announces, is passed to ``failure(source, reason)`` and the frames go on with the next source (a video keeps the
    frames read before; its end marker comes all the same). Without it the error is raised.
    ``workers``: images are read (:func:`read_image`) by that many DataLoader worker processes, in order, started
    by this call (from the calling thread, not the thread that will draw the frames).
    """
    decoded = _decoded_images(sources, workers) if workers > 0 else None
    return _frames(sources, failure, decoded)


def _frames(sources: List[Source], failure: Optional[Callable[[Source, str], None]],
            decoded: Optional[Iterator[Tuple[Optional[np.ndarray], Optional[str]]]]) -> Iterator[FrameOrEnd]:
    for source in sources:
        if decoded is not None and source.kind == 'image':
            image, error = next(decoded)
            if error is None:
                yield source, 0, image
            elif failure is None:
                raise OSError(error)
            else:
                failure(source, error)
            yield source, None, None
            continue
        frames = 0
        try:
            announced = len(source) if failure is not None and source.kind == 'video' else 0
            for index, image in source.frames():
                frames += 1
                yield source, index, image
            if announced - frames > max(1, announced // 100):  # as DamagedInputWarning, which also says it
                failure(source, f'video ended early: {frames} of the {announced} frames its container announces '
                        'could be decoded')
        except READ_ERRORS as err:
            if failure is None:
                raise
            failure(source, str(err) if not frames else f'{err} (after {frames} frames)')
        yield source, None, None


def _read(source: Source) -> Tuple[Optional[np.ndarray], Optional[str]]:
    try:
        return read_image(source.path), None
    except READ_ERRORS as err:
        return None, str(err) or type(err).__name__


class _ImageFiles:
    """The image sources of a run as a map-style dataset of ``(image, error)`` (decoded in a worker process)."""

    def __init__(self, sources: List[Source]) -> None:
        self.paths = [Source('image', source.name, source.group, path=source.path) for source in sources]

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> Tuple[Optional[np.ndarray], Optional[str]]:
        return _read(self.paths[index])


def _as_is(item):
    return item


def _decoded_images(sources: List[Source], workers: int) -> Iterator[Tuple[Optional[np.ndarray], Optional[str]]]:
    """The images of ``sources`` decoded by ``workers`` processes: forked (started in a second, as the DataLoader
    does by default on Linux), or spawned once CUDA is initialised (a forked child cannot use it) and elsewhere."""
    import torch
    from torch.utils.data import DataLoader
    images = [source for source in sources if source.kind == 'image']
    if not images:
        return iter(())
    context = 'fork' if sys.platform == 'linux' and not torch.cuda.is_initialized() else 'spawn'
    loader = DataLoader(_ImageFiles(images), batch_size=None, num_workers=min(workers, len(images)),
                        collate_fn=_as_is, prefetch_factor=4, multiprocessing_context=context)
    return iter(loader)
