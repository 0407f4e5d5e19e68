"""Round 5 of the bad-input catalogue (issue 59, second half): training data checked whole, damaged media named by
one rule, config loops and foreign configs, data in the wrong form, files that are not what their name says, full
disks and work-dir records. Each case asserts one clear line (or the documented behaviour) and that no user file
changed. The cases register into :data:`tests.reliability.catalogue.CASES` (this module is imported at its end)."""
import errno
import hashlib
import json
import os
from pathlib import Path
from unittest import mock

import cv2
import numpy as np

from tests.reliability.bad_input_files import H, W
from tests.reliability.catalogue import (
    NANO_SEG,
    POSE_NANO,
    REPO,
    CommandError,
    _bundle_cli,
    _command,
    _load_config,
    case,
)


def _files(tmp: Path, skip: str = 'out') -> dict:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(tmp.rglob('*'))
            if p.is_file() and not p.is_symlink() and skip not in p.relative_to(tmp).parts}


def _unchanged(tmp: Path, check=None):
    """A verify step: every file ``tmp`` held (outside ``out``) is there with its content; then ``check(result)``."""
    before = _files(tmp)

    def verify(result):
        after = _files(tmp)
        assert {p: after.get(p) for p in before} == before, "a user's file changed"
        if check is not None:
            check(result)

    return verify


def _one_line_unchanged(tmp: Path):
    return _unchanged(tmp, lambda err: _assert_one_line(err))


def _assert_one_line(err) -> None:
    assert 'Traceback' not in str(err) and len(str(err).splitlines()) == 1, f'not one line: {err}'


def _seg_folder(root: Path, masks, classes=('background', 'person', 'hair'), **options):
    """mmseg's BaseSegDataset over 32x24 images with ``masks`` (arrays, or bytes of the label file)."""
    from mmseg.datasets import BaseSegDataset
    for sub in ('img', 'ann'):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for i, mask in enumerate(masks):
        cv2.imwrite(str(root / 'img' / f'{i:03d}.jpg'), np.zeros((32, 24, 3), np.uint8))
        if isinstance(mask, bytes):
            (root / 'ann' / f'{i:03d}.png').write_bytes(mask)
        else:
            cv2.imwrite(str(root / 'ann' / f'{i:03d}.png'), mask)
    return BaseSegDataset(data_root=str(root), data_prefix=dict(img_path='img', seg_map_path='ann'), img_suffix='.jpg',
                          seg_map_suffix='.png', metainfo=dict(classes=classes), pipeline=[], **options)


def _check(dataset):
    from sapiens2.datasets.data_check import check_dataset
    return lambda: check_dataset(dataset)


# ----------------------------------------------------------------------------------------------- training data
@case('seg-reduce-zero-label-on-background', 'seg dataset', 'reduce_zero_label=True on label maps whose 0 is the '
      "metainfo's class 0 'background' (it trained with every class shifted by one)",
      'the data check refuses it: one line naming the setting, the class and the fix (reduce_zero_label=False)',
      error=ValueError, kind='DataCheckError',
      match=r"^{tmp}: reduce_zero_label=True, but class 0 of the metainfo is 'background': mmseg would ignore every "
      r'pixel of id 0 and train id 1 as class 0.*set reduce_zero_label=False')
def _(tmp):
    masks = [np.zeros((32, 24), np.uint8) + np.arange(24, dtype=np.uint8)[None] % 3 for _ in range(2)]
    return _check(_seg_folder(tmp, masks, reduce_zero_label=True)), _one_line_unchanged(tmp)


@case('seg-late-label-id-out-of-range', 'seg dataset', 'label id 40 in 3-class masks, in a map the data check did not '
      'sample (70 maps; it read 64, and training ended in `IndexError: Target 40 is out of bounds`)',
      'every map is read (ids cached by path, modification time and size): one line naming that map',
      error=ValueError, kind='DataCheckError',
      match=r'^{tmp}/ann/001\.png: label ids \[40\] are neither classes 0\.\.2 nor 255')
def _(tmp):
    masks = [np.zeros((32, 24), np.uint8) for _ in range(70)]
    masks[1][5, 5] = 40  # np.linspace(0, 69, 64).round() skips map 1
    return _check(_seg_folder(tmp, masks)), _one_line_unchanged(tmp)


@case('seg-colour-label-map-data-check', 'seg dataset', 'a label map saved as an RGB colour picture (the data check '
      'reported bad class ids 64, 128...)', 'one line: the map is a colour image of 2 colours; label maps hold one id '
      'per pixel; how to convert it with the palette', error=ValueError,
      match=r'^label map {tmp}/ann/000\.png is a 3-channel colour image \(2 colours\); label maps hold one class id '
      r'per pixel \(a single-channel 8-bit PNG, or a palette PNG whose indices are the ids\)\. Convert it: for each '
      r'class i of the metainfo with colour c in its palette')
def _(tmp):
    colours = np.zeros((32, 24, 3), np.uint8)
    colours[:16] = (128, 64, 0)
    colours[16:] = (0, 128, 192)
    return _check(_seg_folder(tmp, [colours])), _one_line_unchanged(tmp)


# ------------------------------------------------------------------------------------------------ damaged media
def _damaged_jpeg(path: Path) -> Path:
    """A JPEG whose entropy-coded data is damaged in the middle (not truncated): libjpeg decodes grey rows."""
    picture = np.zeros((240, 320, 3), np.uint8)
    picture[:] = np.linspace(0, 255, 320).astype(np.uint8)[None, :, None]
    data = bytearray(cv2.imencode('.jpg', picture, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes())
    start = data.index(b'\xff\xda') + 200
    for i in range(start, start + 200):
        data[i] = 0xFF if i % 7 == 0 else data[i] ^ 0x5A
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(data))
    return path


_DAMAGED = r'the compressed data is damaged \(the decoder said: .Corrupt JPEG data'


@case('image-jpeg-damaged-data-inference', 'images', 'sapiens2-infer on a JPEG whose compressed data is damaged (not '
      'truncated; it decoded to grey rows, rc 0)', 'one line naming the file: its compressed data is damaged, and '
      "libjpeg's words; nothing is written for it", error=CommandError,
      match=r'(?:^exit 1: |\n)sapiens2-infer: error: (DamagedMediaError: )?cannot read image {tmp}/in/a\.jpg: ' +
      _DAMAGED)
def _(tmp):
    from sapiens2.apis.cli import main
    _damaged_jpeg(tmp / 'in/a.jpg')
    trigger = _command(main, [str(tmp / 'in'), '--model', str(NANO_SEG), '--out', str(tmp / 'out'), '--quiet',
                              '--device', 'cpu'])
    return trigger, _unchanged(tmp, _one_error_line)


def _one_error_line(err) -> None:
    """The command's notices (random weights, dtype), then one error line."""
    lines = [line for line in str(err).splitlines() if ': warning: ' not in line and ': notice: ' not in line]
    assert 'Traceback' not in str(err) and len(lines) == 1, f'not one error line: {err}'


@case('image-jpeg-damaged-data-training', 'images', "a JPEG whose compressed data is damaged, read by mmcv's "
      'LoadImageFromFile (training and tools/test.py)', 'the same rule as inference: an error naming the file, its '
      'data damaged', error=OSError, kind='DamagedMediaError',
      match=r'^cannot read image {tmp}/a\.jpg: ' + _DAMAGED)
def _(tmp):
    from mmcv.transforms import LoadImageFromFile
    _damaged_jpeg(tmp / 'a.jpg')
    return lambda: LoadImageFromFile()(dict(img_path=str(tmp / 'a.jpg'))), _one_line_unchanged(tmp)


def _mjpeg_with_a_damaged_frame(path: Path, frames: int = 8, damaged: int = 4) -> Path:
    """An MJPEG AVI whose frame ``damaged`` has damaged compressed data."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*'MJPG'), 10, (64, 48))
    for i in range(frames):
        frame = np.zeros((48, 64, 3), np.uint8)
        frame[..., 0], frame[..., 2] = 20 * i, np.arange(64, dtype=np.uint8)[None] * 3
        writer.write(frame)
    writer.release()
    data = bytearray(path.read_bytes())
    starts = [i for i in range(len(data) - 1) if data[i] == 0xFF and data[i + 1] == 0xDA]
    assert len(starts) == frames, f'{len(starts)} scans in the MJPEG file'
    for i in range(starts[damaged] + 30, starts[damaged] + 90):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    return path


@case('video-mjpeg-damaged-frame', 'images', 'an MJPEG video whose frame 4 is damaged (it was predicted on, with '
      "only FFmpeg's own stderr)", 'the frame is skipped (no results for it; the others keep their index) and one '
      "warning names the video, the frame and FFmpeg's words", warning=UserWarning, kind='DamagedInputWarning',
      match=r'^video {tmp}/v\.avi: 1 of its 8 frames is damaged \(frame 4; the decoder said: .\[mjpeg @ .*it was '
      r'skipped, so that frame has no results')
def _(tmp):
    from sapiens2.apis.io.sources import collect_sources
    _mjpeg_with_a_damaged_frame(tmp / 'v.avi')

    def frames():
        return [index for index, _ in collect_sources(str(tmp / 'v.avi'))[0].frames()]

    def skipped(indices):
        assert indices == [0, 1, 2, 3, 5, 6, 7], indices

    return frames, _unchanged(tmp, skipped)


def _float_tiff(path: Path, channels: int = 1) -> Path:
    """A 32x24 TIFF of float32 values, its top quarter NaN (192 values per channel)."""
    values = np.random.default_rng(0).random((32, 24, channels)).astype(np.float32)
    values[:8] = np.nan
    path.write_bytes(cv2.imencode('.tiff', values[..., 0] if channels == 1 else values)[1].tobytes())
    return path


_FLOAT_TIFF = (r'it is a TIFF of 32-bit float values \({n} of its {size} values are NaN\), not an 8-bit picture: '
               r'float samples have no standard colour \(and NaN no value at all\), so it is not read\. Save it as an '
               r'8-bit')


@case('image-float-tiff-nan-inference', 'images', 'sapiens2-infer on a float32 TIFF holding NaN (3 channels: '
      '"not an image file Pillow can decode"; 1 channel: no word of NaN)', 'one line: a TIFF of float values, how '
      'many are NaN, that it is not read, and how to save it', error=ValueError,
      match=r'^cannot read image {tmp}/a\.tif: ' + _FLOAT_TIFF.format(n=576, size=2304))
def _(tmp):
    from sapiens2.apis.io.sources import collect_sources
    _float_tiff(tmp / 'a.tif', channels=3)
    return lambda: list(collect_sources(str(tmp / 'a.tif'))[0].frames()), _one_line_unchanged(tmp)


@case('image-float-tiff-nan-training', 'images', "a float32 TIFF holding NaN read by mmcv's LoadImageFromFile (it was "
      'called empty, truncated or damaged)', 'the same line as inference: float values, how many NaN, not read',
      error=ValueError, match=r'^cannot read image {tmp}/a\.tif: ' + _FLOAT_TIFF.format(n=192, size=768))
def _(tmp):
    from mmcv.transforms import LoadImageFromFile
    _float_tiff(tmp / 'a.tif')
    return lambda: LoadImageFromFile()(dict(img_path=str(tmp / 'a.tif'))), _one_line_unchanged(tmp)


# ------------------------------------------------------------------------------------------------------ configs
@case('config-base-loop', 'config', 'two configs naming each other as _base_ (RecursionError)',
      'one line naming the loop of files', error=ValueError, kind='BaseLoopError',
      match=r'^config {tmp}/a\.py: its _base_ files form a loop \({tmp}/a\.py -> {tmp}/b\.py -> {tmp}/a\.py\); a '
      r'config cannot inherit from itself')
def _(tmp):
    (tmp / 'a.py').write_text("_base_ = ['b.py']\nx = 1\n")
    (tmp / 'b.py').write_text("_base_ = './a.py'\ny = 2\n")
    return _load_config(str(tmp / 'a.py')), _one_line_unchanged(tmp)


@case('layout-concat-dataset', 'layout', 'a ConcatDataset of two folders in an own-layout (custom_metainfo) config '
      "(it failed on a metainfo key that custom_metainfo wrote into the wrapper, not the user)",
      'each dataset of the ConcatDataset gets the layout (and custom_data_root); it builds with the layout\'s classes')
def _(tmp):
    from mmengine.registry import DATASETS, init_default_scope
    parts = ', '.join(f"dict(type='BaseSegDataset', data_prefix=dict(img_path='{name}/img', seg_map_path='{name}/ann'),"
                      " pipeline=[], lazy_init=True)" for name in ('a', 'b'))
    config = tmp / 'config.py'
    config.write_text(f"_base_ = ['{REPO / 'configs/seg/sapiens2_tiny_seg_custom-256x192.py'}']\n"
                      f"custom_data_root = '{tmp}/data'\n"
                      "train_dataloader = dict(dataset=dict(_delete_=True, type='ConcatDataset', lazy_init=True, "
                      f"datasets=[{parts}]))\n")

    def build():
        cfg = _load_config(str(config))()
        init_default_scope('mmseg')
        return DATASETS.build(cfg.train_dataloader.dataset)

    def verify(dataset):
        classes = [part.metainfo['classes'] for part in dataset.datasets]
        assert classes == [('background', 'person', 'hair')] * 2, classes
        assert [part.data_root for part in dataset.datasets] == [f'{tmp}/data'] * 2

    return build, _unchanged(tmp, verify)


def _infer_with_model(tmp: Path, config_text: str):
    """``sapiens2-infer`` on one small image with ``--model`` a config file of ``config_text``."""
    from sapiens2.apis.cli import main
    cv2.imwrite(str(tmp / 'a.png'), np.full((H, W, 3), 128, np.uint8))
    (tmp / 'model.py').write_text(config_text)
    run = _command(main, [str(tmp / 'a.png'), '--model', str(tmp / 'model.py'), '--out', str(tmp / 'out'), '--quiet',
                          '--device', 'cpu'])
    return run, _unchanged(tmp, _one_error_line)


@case('config-mmdet-as-model', 'config', 'sapiens2-infer --model an mmdet detection config (its nms and RoIAlign were '
      'reported as unknown type names: typos)', 'one line: an mmdet detection config, not a sapiens2 model config; a '
      'detector goes with --det-config', error=CommandError,
      match=r'(?:^exit 1: |\n)sapiens2-infer: error: ForeignModelError: {tmp}/model\.py is an mmdet detection '
      r'config \(model FasterRCNN\), not a sapiens2 model config.* --det-config {tmp}/model\.py')
def _(tmp):
    return _infer_with_model(tmp, "_base_ = 'mmdet::faster_rcnn/faster-rcnn_r50_fpn_1x_coco.py'\n")


@case('config-bottom-up-pose-as-model', 'config', "sapiens2-infer --model a bottom-up mmpose config (DEKR: 'no "
      "inference task handles head type DEKRHead: add infer_task...')", 'one line: a bottom-up mmpose config; sapiens2 '
      "runs top-down pose; mmpose's MMPoseInferencer runs it", error=CommandError,
      match=r'(?:^exit 1: |\n)sapiens2-infer: error: {tmp}/model\.py is a bottom-up mmpose config '
      r"\(BottomupPoseEstimator, head DEKRHead\): sapiens2 runs top-down pose models .*mmpose's MMPoseInferencer")
def _(tmp):
    return _infer_with_model(
        tmp, "_base_ = 'mmpose::body_2d_keypoint/dekr/coco/dekr_hrnet-w32_8xb10-140e_coco-512x512.py'\n")


@case('train-empty-folders', 'training', "tools/train.py on an own-layout config whose train folders are empty "
      "(`need at least one array to concatenate`)", 'one line naming the folder it looked in and the suffix',
      error=ValueError, kind='DataCheckError',
      match=r'^BaseSegDataset: {tmp}/data/images/train holds no \*\.jpg images, so the dataset is empty; check the '
      r'data folder')
def _(tmp):
    from mmengine.registry import DATASETS, init_default_scope
    for sub in ('images/train', 'annotations/train'):
        (tmp / 'data' / sub).mkdir(parents=True)
    config = tmp / 'config.py'
    config.write_text(f"_base_ = ['{REPO / 'configs/seg/sapiens2_tiny_seg_custom-256x192.py'}']\n"
                      f"custom_data_root = '{tmp}/data/'\n")

    def build():
        cfg = _load_config(str(config))()
        init_default_scope('mmseg')
        return DATASETS.build(cfg.train_dataloader.dataset)  # as the Runner builds the train loop

    return build, _one_line_unchanged(tmp)


@case('transformers-import-other-task-folder', 'checkpoint conversion', 'tools/convert_checkpoint.py '
      "--from-transformers a seg folder whose config.json names no architectures, with a pose config (it said the "
      'folder holds a Sapiens2Model)', "one line: the folder holds a seg model (told by its weights' predictor), the "
      'config builds a pose model', error=ValueError, kind='TransformersConversionError',
      match=r'^{tmp}/hf holds a seg model \(Sapiens2ForSemanticSegmentation\) but the config builds a pose model')
def _(tmp):
    from sapiens2.interop.transformers import build_model, import_from_transformers, model_to_transformers
    model_to_transformers(build_model(str(NANO_SEG), device='cpu'), str(tmp / 'hf'))
    config = json.loads((tmp / 'hf/config.json').read_text())
    config.pop('architectures')
    (tmp / 'hf/config.json').write_text(json.dumps(config))
    return lambda: import_from_transformers(str(tmp / 'hf'), str(POSE_NANO), str(tmp / 'x.pth')), \
        _unchanged(tmp, lambda err: (_assert_one_line(err), _assert_absent(tmp / 'x.pth')))


def _assert_absent(path: Path) -> None:
    assert not path.exists(), f'{path} was written'


# --------------------------------------------------------------------------------------------------- pose data
@case('pose-ragged-keypoint-list', 'pose dataset', "an annotation with 29 keypoint values in a 10-keypoint set "
      "(mmpose's CocoDataset on an own layout: a reshape error, no file named)",
      'one line naming the file, the annotation, its image and the layout', error=ValueError, kind='AnnotationError',
      match=r'^{tmp}/ann\.json: annotation 7 \(image 1\) field "keypoints" has 29 values, not 3 \(x, y, v\) per '
      r'keypoint \(upper_body10: 10 keypoints, 30 values\)')
def _(tmp):
    from mmpose.datasets import CocoDataset

    from tests.datasets.own_layout_data import UPPER_BODY10, coco_pose_dataset
    coco_pose_dataset(tmp)  # writes a.jpg and ann.json
    ann = json.loads((tmp / 'ann.json').read_text())
    ann['annotations'][0]['keypoints'] = ann['annotations'][0]['keypoints'][:29]
    (tmp / 'ann.json').write_text(json.dumps(ann))
    return (lambda: CocoDataset(data_root=str(tmp), ann_file='ann.json', data_prefix=dict(img=''),
                                metainfo=dict(from_file=UPPER_BODY10), pipeline=[])), _one_line_unchanged(tmp)


# ------------------------------------------------------------------------------------------------------- files
@case('input-symlink-loop', 'inference inputs', 'an input that is a symbolic link loop (it was said not to exist)',
      'one line: the input is a symbolic link loop', error=FileNotFoundError,
      match=r'^input {tmp}/a\.png is a symbolic link loop \({tmp}/a\.png -> {tmp}/b\.png leads back to itself\)')
def _(tmp):
    from sapiens2.apis.io.sources import collect_sources
    os.symlink(tmp / 'b.png', tmp / 'a.png')
    os.symlink(tmp / 'a.png', tmp / 'b.png')
    return lambda: collect_sources(str(tmp / 'a.png')), _one_line_unchanged(tmp)


@case('input-folder-symlink-loop', 'inference inputs', 'a folder holding a symbolic link loop among its images (it '
      'was skipped silently)', 'the link is skipped with a warning naming it; the images are read', warning=None)
def _(tmp):
    import logging

    from sapiens2.apis.io.sources import collect_sources
    (tmp / 'in').mkdir()
    cv2.imwrite(str(tmp / 'in/a.png'), np.zeros((H, W, 3), np.uint8))
    os.symlink(tmp / 'in/loop.png', tmp / 'in/loop.png')
    records = []
    handler = logging.Handler()
    handler.emit = records.append

    def collect():
        logger = logging.getLogger('sapiens2.apis.io.sources')
        logger.addHandler(handler)
        try:
            return collect_sources(str(tmp / 'in'))
        finally:
            logger.removeHandler(handler)

    def verify(sources):
        assert [s.name for s in sources] == ['a'], [s.name for s in sources]
        said = [r.getMessage() for r in records]
        assert any(f'{tmp}/in/loop.png is a symbolic link loop' in m and m.endswith('skipped') for m in said), said

    return collect, _unchanged(tmp, verify)


@case('bboxes-key-of-a-shortened-name', 'inference inputs', 'an image named with 250 characters and --bboxes keyed '
      'by its file name (its output name is shortened, and the key matched nothing)',
      "the key matches the image by its whole name; its output files carry the shortened name")
def _(tmp):
    from sapiens2.apis.bbox_files import match_bboxes
    from sapiens2.apis.io.sources import collect_sources
    (tmp / 'in').mkdir()
    name = 'walk' + 'x' * 246
    cv2.imwrite(str(tmp / f'in/{name}.png'), np.zeros((H, W, 3), np.uint8))
    entries = {f'{name}.png': [[1, 1, 20, 30]]}

    def match():
        sources = collect_sources(str(tmp / 'in'))
        return sources, match_bboxes(entries, sources)

    def verify(result):
        sources, matched = result
        assert len(sources[0].name) < 250 and matched == {sources[0].name: [[1, 1, 20, 30]]}, matched

    return match, _unchanged(tmp, verify)


@case('checkpoint-pth-named-safetensors', 'checkpoints', 'a .pth renamed .safetensors (it was called truncated or '
      'corrupt)', 'one line: a torch pickle file, not .safetensors; it is not unpickled; rename it to .pth and '
      'convert it', error=ValueError,
      match=r'^{tmp}/model\.safetensors is a torch pickle file \(a zip archive of torch\.save\), not a \.safetensors '
      r'file, despite its name; it is not loaded .*mv {tmp}/model\.safetensors {tmp}/model\.pth.*'
      r'tools/convert_checkpoint\.py {tmp}/model\.pth {tmp}/model\.safetensors')
def _(tmp):
    import torch

    from sapiens2.engine import read_checkpoint_file
    from tests.reliability.catalogue import _RunsCode
    marker = tmp / 'marker'
    torch.save(dict(state_dict=dict(w=torch.zeros(2)), payload=_RunsCode(str(marker))), tmp / 'model.safetensors')

    def not_run(err):
        _assert_one_line(err)
        assert not marker.exists(), 'the pickle ran'

    return lambda: read_checkpoint_file(str(tmp / 'model.safetensors')), _unchanged(tmp, not_run)


# --------------------------------------------------------------------------------------------------- disk full
def _no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@case('infer-video-disk-full', 'inference outputs', 'the disk fills up during a video run (pose: its MP4 lacked its '
      'index, `moov atom not found`, and its JSON Lines file was cut mid-line, both at their final names)',
      'one line naming the file and the space written and free; no unreadable MP4 is left, the JSON Lines file is cut '
      'to its complete lines and renamed .partial', error=CommandError,
      match=r'(?:^exit 1: |\n)sapiens2-infer: error: \[Errno 28\] No space left on device while writing '
      r'{tmp}/out/pose/v_predictions\.jsonl: it needed more than the '
      r'[\d.]+ \w+ written when the disk filled and {tmp}/out/pose has .* free\. Nothing was replaced: {tmp}/out/pose/'
      r'v_predictions\.jsonl was not finished; its 3 complete lines are kept in {tmp}/out/pose/'
      r'v_predictions\.jsonl\.partial')
def _(tmp):
    from sapiens2.apis.cli import main
    from sapiens2.apis.io import stream_files
    writer = cv2.VideoWriter(str(tmp / 'v.avi'), cv2.VideoWriter_fourcc(*'MJPG'), 10, (W, H))
    for i in range(4):
        writer.write(np.full((H, W, 3), 40 * i, np.uint8))
    writer.release()
    run = _command(main, [str(tmp / 'v.avi'), '--model', str(POSE_NANO), '--out', str(tmp / 'out'), '--quiet',
                          '--device', 'cpu'])
    upstream = stream_files.open_fresh

    class FillsUp:  # a JSON Lines file on a disk that fills up in its fourth line
        def __init__(self, path):
            self.file, self.lines = upstream(path), 0

        def write(self, text):
            if self.lines == 3:
                self.file.write(text[:len(text) // 2])
                self.file.flush()
                _no_space()
            self.lines += text.count('\n')
            self.file.write(text)

        def __getattr__(self, name):
            return getattr(self.file, name)

    def full_disk():
        free = mock.Mock(free=0)
        with mock.patch.object(stream_files, 'open_fresh', FillsUp), \
                mock.patch.object(stream_files.shutil, 'disk_usage', return_value=free), \
                mock.patch.object(stream_files, '_readable_video', return_value=False):  # what ENOSPC does to it
            return run()

    def verify(err):
        _one_error_line(err)
        left = sorted(p.name for p in (tmp / 'out/pose').iterdir())
        assert left == ['v_predictions.jsonl.partial'], left
        kept = (tmp / 'out/pose/v_predictions.jsonl.partial').read_text().splitlines()
        assert len(kept) == 3 and all(json.loads(line) for line in kept), kept

    return full_disk, _unchanged(tmp, verify)


@case('export-disk-full', 'export', 'the disk fills up while tools/deploy/export.py writes model.onnx (it left an '
      'empty bundle folder and named no file or size)', 'one line naming the file, the bytes written and the space '
      'free; the bundle folder this run made is removed', error=OSError,
      match=r'^\[Errno 28\] No space left on device while writing {tmp}/seg/model\.onnx: it needed more than the '
      r'2\.0 KiB written when the disk filled and {tmp}/seg has .* free\. Nothing was replaced: no model\.onnx was '
      r'written')
def _(tmp):
    import sys

    from tests.scripts import load_script
    tool = load_script('tools/deploy/export.py', 'export_tool')

    class Program:  # the ONNX program, whose save fills the disk after 2 KiB
        def save(self, path):
            Path(path).write_bytes(b'\0' * 2048)
            _no_space()

    def export():
        with mock.patch.object(sys, 'argv', ['export.py', str(NANO_SEG), '--out', str(tmp / 'seg'), '--formats',
                                             'onnx']), mock.patch('torch.onnx.export', return_value=Program()):
            return tool.main()

    def verify(err):
        _assert_one_line(err)
        assert not (tmp / 'seg').exists(), f'left: {sorted(os.listdir(tmp / "seg"))}'

    return export, _unchanged(tmp, verify)


# ------------------------------------------------------------------------------------------- work dirs, bundles
@case('train-record-path-is-a-folder', 'training', "the work dir's checkpoint record (.sapiens2_checkpoints.json) is "
      'a folder (training failed only after the first checkpoint was saved)', 'one line before the first iteration: '
      'the record path is a folder; nothing written', error=FileExistsError,
      match=r'^--work-dir {tmp}/work: {tmp}/work/\.sapiens2_checkpoints\.json is a folder, where training keeps its '
      r'record of the checkpoints it wrote')
def _(tmp):
    from sapiens2.engine.launch import build_runner, load_config, prepare_train_config
    from tests.engine.dist_launch import TOY_CONFIG
    (tmp / 'work/.sapiens2_checkpoints.json').mkdir(parents=True)
    cfg = load_config(str(TOY_CONFIG), {'train_cfg.max_iters': 2, 'experiment_name': f'catalogue_{tmp.name}'})
    train = lambda: build_runner(prepare_train_config(cfg, str(TOY_CONFIG), str(tmp / 'work')),  # noqa: E731
                                 lock_work_dir=True).train()  # as tools/train.py builds it

    def nothing_saved(err):
        _assert_one_line(err)
        assert not list((tmp / 'work').glob('iter_*.pth')), 'a checkpoint was saved'

    return train, _unchanged(tmp, nothing_saved)


@case('bundle-manifest-deeply-nested', 'bundles', 'a sapiens2_bundle.json whose outputs.names nests 5,000 lists deep '
      '(RecursionError)', 'one line naming the manifest and the field', error=CommandError,
      match=r'^exit 1: sapiens2-infer: error: BundleError: {tmp}/b/sapiens2_bundle\.json: outputs nests more than 8 '
      r'levels of lists and objects')
def _(tmp):
    trigger = _bundle_cli(tmp)
    manifest = tmp / 'b/sapiens2_bundle.json'
    deep = '[' * 900 + ']' * 900  # within the JSON reader's reach, beyond repr's
    manifest.write_text(manifest.read_text().replace('"names": ["output_0"]', f'"names": {deep}'))
    return trigger, _one_line_unchanged(tmp)


@case('bundle-skeleton-link-out-of-range', 'bundles', "a manifest whose dataset_meta.skeleton_links holds index 999 "
      'of 308 keypoints (an IndexError when drawing)', 'one line at load naming the field, the link and the range',
      error=CommandError,
      match=r'^exit 1: sapiens2-infer: error: BundleError: {tmp}/b/sapiens2_bundle\.json: dataset_meta\.skeleton_links '
      r'holds \[0, 999\]; each link is a pair of keypoint indices 0\.\.307')
def _(tmp):
    meta = dict(num_keypoints=308, skeleton_links=[[0, 1], [0, 999]])
    return _bundle_cli(tmp, dataset_meta=meta), _one_line_unchanged(tmp)

