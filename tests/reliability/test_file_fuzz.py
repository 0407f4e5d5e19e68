"""Fuzzing the file readers of the datasets with random damage to valid files (fixed seeds, bounded in count and
time): every outcome is a correct load, a documented rejection, or one of the errors the catalogue documents for that
reader, naming the file; never a wrong result or another crash."""
import random
import time
from pathlib import Path
from typing import Callable, List

import cv2
import numpy as np

from tests.reliability.bad_input_files import H, W
from tests.reliability.catalogue import _npy_bytes, _pointmap_dataset, _pointmap_folder, _seg_dataset, documented_errors

CASES = 150
BUDGET_S = 15.0


def _damage(data: bytes, rng: random.Random) -> bytes:
    """Truncate, flip bytes, insert junk, or zero a run of bytes."""
    kind, i = rng.choice(['truncate', 'flip', 'flip', 'insert', 'zero']), rng.randrange(len(data))
    if kind == 'truncate':
        return data[:i]
    if kind == 'flip':
        out = bytearray(data)
        for j in rng.sample(range(len(data)), k=min(len(data), rng.randint(1, 4))):
            out[j] ^= 1 << rng.randrange(8)
        return bytes(out)
    if kind == 'insert':
        return data[:i] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))) + data[i:]
    return data[:i] + b'\0' * rng.randint(1, 64) + data[i + 64:]


def _fuzz(make_input: Callable[[random.Random], str], load: Callable[[], object], check: Callable[[object], None],
          errors: tuple, seed: int = 0) -> List[str]:
    """Run ``CASES`` random inputs (within ``BUDGET_S``): each ``load()`` must pass ``check`` or raise one of
    ``errors`` naming the file ``make_input`` returned. Returns the outcomes ('ok' / 'error')."""
    rng, outcomes, unclear, start = random.Random(seed), [], {}, time.monotonic()
    while len(outcomes) < CASES and time.monotonic() - start < BUDGET_S:
        path = make_input(rng)
        try:
            result = load()
        except errors as err:
            if path not in str(err):
                unclear.setdefault(f'{type(err).__name__} without the file name', str(err)[:200])
            outcomes.append('error')
            continue
        except Exception as err:  # noqa: BLE001  (anything else is an unclear crash)
            unclear.setdefault(f'{type(err).__name__}: {str(err)[:80]}', str(err)[:200])
            outcomes.append('unclear')
            continue
        try:
            check(result)
        except AssertionError as err:
            unclear.setdefault(f'wrong result: {err}', path)
        outcomes.append('ok')
    assert len(outcomes) >= 30, f'only {len(outcomes)} cases within {BUDGET_S} s'
    assert not unclear, f'{len(unclear)} kinds of unclear outcomes:\n' + '\n'.join(f'- {k}: {v}' for k, v in
                                                                                unclear.items())
    return outcomes


def test_fuzz_seg_label_maps(tmp_path):
    """Damaged 8-bit label maps, and valid ones in other bit depths, channel counts and sizes."""
    labels = np.random.default_rng(0).integers(0, 29, (H, W)).astype(np.uint8)
    labels[:4] = 255
    dataset = _seg_dataset(tmp_path, labels)
    path = tmp_path / 'ann/0.png'
    valid = path.read_bytes()
    written = {}

    def make(rng: random.Random) -> str:
        kind = rng.choice(['damage'] * 4 + ['uint16', 'channels', 'size'])
        if kind == 'damage':
            path.write_bytes(_damage(valid, rng))
            written['source'] = labels
        else:
            array = labels.astype(np.uint16) * rng.choice([1, 10]) if kind == 'uint16' else \
                np.dstack([labels] * rng.choice([3, 4])) if kind == 'channels' else \
                cv2.resize(labels, (W * 2, H), interpolation=cv2.INTER_NEAREST)
            if kind == 'channels' and rng.random() < 0.5:
                array[..., 1] = (array[..., 1] + 1) % 29
            cv2.imwrite(str(path), array)
            written['source'] = array[..., 0] if array.ndim == 3 else array
        written['decoded'] = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        return str(path)

    def exact(sample: dict) -> None:  # the ids written, or what OpenCV (libpng checks every checksum) decodes
        decoded = written['decoded']
        reference = written['source'] if decoded is None else decoded[..., 0] if decoded.ndim == 3 else decoded
        assert np.array_equal(sample['gt_seg_map'], reference), 'ids differ from the file'

    outcomes = _fuzz(make, lambda: dataset[0], exact, documented_errors('seg dataset'))
    assert 'ok' in outcomes and 'error' in outcomes


def test_fuzz_dense_samples(tmp_path):
    """Damaged depth maps, masks and camera files of a pointmap sample folder (deleted, truncated, junk, NaN,
    object arrays, wrong shapes, zero matrices)."""
    _pointmap_folder(tmp_path, num=1, mask_value=255)
    dataset = _pointmap_dataset(tmp_path)
    files = {name: tmp_path / f'{folder}/0.{ext}' for name, folder, ext in (
        ('depth', 'depth', 'npy'), ('mask', 'mask', 'png'), ('K', 'camera_intrinsics', 'txt'),
        ('E', 'camera_extrinsics', 'txt'))}
    valid = {name: path.read_bytes() for name, path in files.items()}
    arrays = [np.full((H, W), np.nan, np.float32), np.ones((H, W, 2), np.float32), np.ones((H // 2, W), np.float32),
              np.array(['a', 'b']), np.zeros((H, W), np.float32)]

    def make(rng: random.Random) -> str:
        for name, path in files.items():
            path.write_bytes(valid[name])
        name = rng.choice(list(files))
        path = files[name]
        kind = rng.choice(['damage', 'damage', 'delete', 'junk', 'special'])
        if kind == 'damage':
            path.write_bytes(_damage(valid[name], rng))
        elif kind == 'delete':
            path.unlink()
        elif kind == 'junk':
            path.write_bytes(rng.choice([b'', b'nan nan', b'\x89PNG', b'1 2 3', bytes(range(256))]))
        elif name == 'depth':
            path.write_bytes(rng.choice([_npy_bytes(rng.choice(arrays)),
                                         _npy_bytes(np.array([{}], dtype=object), allow_pickle=True)]))
        elif name == 'mask':
            cv2.imwrite(str(path), np.full((H + rng.randint(1, 8), W), 255, np.uint8))
        else:
            size = 3 if name == 'K' else 4
            path.write_text('\n'.join(' '.join(rng.choice(['0', '-1', '1e300', '5']) for _ in range(size))
                                      for _ in range(size)))
        return str(path)

    def plausible(sample) -> None:
        if sample is None:  # a documented rejection (too few valid pixels)
            return
        assert np.isfinite(sample['gt_depth']).all() and (sample['gt_depth'] >= 0).all(), 'non-finite depth kept'
        K = sample['cam_K']
        assert K[0, 0] > 0 and K[1, 1] > 0 and np.isfinite(sample['cam_extrinsics']).all(), 'degenerate camera kept'

    outcomes = _fuzz(make, lambda: dataset.prepare_data(0), plausible, documented_errors('dense data', 'camera files'))
    assert 'ok' in outcomes and 'error' in outcomes


def test_fuzz_images(tmp_path):
    """Damaged PNG and JPEG files through mmcv's LoadImageFromFile, mmpose's LoadImage and the mask reader."""
    from mmcv.transforms import LoadImageFromFile
    from mmpose.datasets.transforms import LoadImage

    from sapiens2.datasets.transforms.dense_loading import read_mask
    image = np.random.default_rng(0).integers(0, 255, (H, W, 3)).astype(np.uint8)
    valid = {ext: cv2.imencode(ext, image)[1].tobytes() for ext in ('.png', '.jpg')}
    readers = [lambda p: LoadImageFromFile()(dict(img_path=p))['img'], lambda p: LoadImage()(dict(img_path=p))['img'],
               lambda p: read_mask(p).astype(np.uint8)]
    current = {}

    def make(rng: random.Random) -> str:
        ext = rng.choice(list(valid))
        path = Path(tmp_path) / f'image{ext}'
        path.write_bytes(_damage(valid[ext], rng))
        current.update(path=str(path), read=rng.choice(readers))
        return str(path)

    def decoded(array) -> None:  # a PNG's chunks carry checksums, so its size is exact; JPEG has none
        assert isinstance(array, np.ndarray) and array.dtype == np.uint8 and array.size, f'decoded to {array!r:.80}'
        assert current['path'].endswith('.jpg') or array.shape[:2] == (H, W), f'PNG decoded to {array.shape}'

    outcomes = _fuzz(make, lambda: current['read'](current['path']), decoded, documented_errors('images'))
    assert 'ok' in outcomes and 'error' in outcomes
