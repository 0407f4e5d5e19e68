"""File readers and checks shared by the dense loading transforms of the projects."""
from typing import Optional

import cv2
import numpy as np

from sapiens2.datasets.image_files import read_image_file

NPY_MAGIC = b'\x93NUMPY'


def read_mask(path: str) -> np.ndarray:
    """Channel 0 of a mask image, as bool (non-zero = valid)."""
    mask = read_image_file(path, cv2.IMREAD_UNCHANGED, what='mask image')
    return (mask[..., 0] if mask.ndim == 3 else mask) > 0


def read_array(path: str, what: str = 'array') -> np.ndarray:
    """A numeric array from a ``.npy`` file, with errors that name the file (``what`` says what it holds).

    Never unpickles (``allow_pickle=False``): an object array is refused, as are truncated or non-.npy files and
    non-numeric dtypes.
    """
    try:
        f = open(path, 'rb')
    except FileNotFoundError as err:
        raise FileNotFoundError(f'{what} {path} does not exist') from err
    with f:
        if f.read(len(NPY_MAGIC)) != NPY_MAGIC:
            raise ValueError(f'{what} {path} is not a .npy file (no NumPy header); save it with numpy.save.')
        f.seek(0)
        try:
            array = np.load(f, allow_pickle=False)
        except ValueError as err:
            if 'allow_pickle' in str(err):
                raise ValueError(f'{what} {path} holds Python objects (a pickled object array), which are not '
                                 'loaded because unpickling can run code; save a numeric array instead, e.g. '
                                 'numpy.save(path, array.astype(numpy.float32)).') from err
            raise _unreadable(path, what, '.npy', err) from err
        except Exception as err:  # noqa: BLE001  (a damaged header: EOFError, OSError, tokenize.TokenError...)
            raise _unreadable(path, what, '.npy', err) from err
    return _numeric(array, path, what)


def read_npz_array(path: str, key: str, what: str = 'array') -> np.ndarray:
    """Array ``key`` of a ``.npz`` file (never unpickled), with errors that name the file."""
    try:
        data = np.load(path, allow_pickle=False)
    except FileNotFoundError as err:
        raise FileNotFoundError(f'{what} {path} does not exist') from err
    except Exception as err:  # noqa: BLE001  (not an archive NumPy reads)
        raise _unreadable(path, what, '.npz', err) from err
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ValueError(f'{what} {path} is a single .npy array, not a .npz archive; save it with '
                         f'numpy.savez(path, {key}=array).')
    with data:
        if key not in data.files:
            raise ValueError(f'{what} {path} has no array {key!r} (arrays: {data.files}); save it with '
                             f'numpy.savez(path, {key}=array).')
        try:
            array = data[key]
        except Exception as err:  # noqa: BLE001  (a damaged member: zipfile.BadZipFile, ValueError, EOFError...)
            raise _unreadable(path, what, '.npz', err) from err
    return _numeric(array, path, what)


def _unreadable(path: str, what: str, kind: str, err: Exception) -> ValueError:
    return ValueError(f'{what} {path} is not a readable {kind} file of numbers ({err}); it is truncated, corrupt or '
                      'holds Python objects: write it again.')


def _numeric(array: np.ndarray, path: str, what: str) -> np.ndarray:
    if array.dtype.kind not in 'biuf':
        raise ValueError(f'{what} {path} holds {array.dtype} values; expected numbers (e.g. float32).')
    return array


def check_same_size(results: dict, key: str, path: str, array: Optional[np.ndarray] = None) -> None:
    """Raise a ValueError naming both files if ``results[key]`` (or ``array``, read from ``path``) and
    ``results['img']`` differ in size."""
    img_hw, map_hw = results['img'].shape[:2], (results[key] if array is None else array).shape[:2]
    if img_hw != map_hw:
        raise ValueError(f'{key} {path!r} is {map_hw[0]}x{map_hw[1]} but image {results["img_path"]!r} is '
                         f'{img_hw[0]}x{img_hw[1]}; files matched by name must have the same size.')
