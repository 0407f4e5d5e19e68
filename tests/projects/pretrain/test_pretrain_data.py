"""Image-folder dataset, multi-crop transform, packing and the multi-view data preprocessor."""
import logging

import cv2
import numpy as np
import pytest
import torch
from mmengine.logging import MMLogger
from mmengine.registry import DefaultScope

from sapiens2_pretrain.datasets import ImageFolderDataset, MultiViewCrop, PackMultiViewInputs
from sapiens2_pretrain.models import MultiViewDataPreprocessor


@pytest.fixture
def image_folder(tmp_path):
    rng = np.random.default_rng(0)
    (tmp_path / 'a' / 'b').mkdir(parents=True)
    for path in [tmp_path / 'x.png', tmp_path / 'a' / 'y.JPG', tmp_path / 'a' / 'b' / 'z.bmp']:
        cv2.imwrite(str(path) if path.suffix != '.JPG' else str(path.with_suffix('.jpg')),
                    rng.integers(0, 255, (40, 30, 3), dtype=np.uint8))
    (tmp_path / 'a' / 'y.jpg').rename(tmp_path / 'a' / 'y.JPG')
    (tmp_path / 'a' / 'broken.png').write_bytes(b'not an image at all')
    (tmp_path / 'notes.txt').write_text('ignored: not an image suffix')
    return tmp_path


class _Collector(logging.Handler):

    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_image_folder_recursive_and_skips_unreadable(image_folder):
    logger, collector = MMLogger.get_current_instance(), _Collector()
    logger.addHandler(collector)
    try:
        ds = ImageFolderDataset(data_root=str(image_folder), pipeline=[])
    finally:
        logger.removeHandler(collector)
    log = '\n'.join(collector.messages)
    names = sorted(p['img_path'].split('/')[-1] for p in ds)
    assert names == ['x.png', 'y.JPG', 'z.bmp']
    assert ds.num_skipped >= 1
    assert 'skipped 1 unreadable' in log and 'broken.png' in log


def test_unreadable_file_found_at_load_time_is_skipped_and_counted(image_folder):
    pipeline = [dict(type='LoadImageOrSkip'), dict(type='MultiViewCrop', global_size=(32, 32), num_local=0),
                dict(type='PackMultiViewInputs')]
    with DefaultScope.overwrite_default_scope('sapiens2'):
        ds = ImageFolderDataset(data_root=str(image_folder), verify=False, pipeline=pipeline)
    paths = [ds.get_data_info(i)['img_path'] for i in range(len(ds))]
    broken = next(i for i, p in enumerate(paths) if p.endswith('broken.png'))
    np.random.seed(0)  # MMEngine re-fetches a random index in its place (np.random), which may hit broken.png again
    sample = ds[broken]
    assert sample['inputs']['global_views'].shape == (2, 3, 32, 32)
    assert not sample['data_samples'].img_path.endswith('broken.png')
    assert ds.num_skipped == 1


def test_image_folder_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match='not a folder'):
        ImageFolderDataset(data_root=str(tmp_path / 'missing'))
    with pytest.raises(ValueError, match='no readable image'):
        ImageFolderDataset(data_root=str(tmp_path))


def test_multi_view_crop_shapes_and_diversity():
    torch.manual_seed(0)
    img = np.random.default_rng(1).integers(0, 255, (120, 90, 3), dtype=np.uint8)
    t = MultiViewCrop(global_size=(64, 48), local_size=(32, 32), num_local=3)
    out = PackMultiViewInputs()(t(dict(img=img, img_path='x.png')))
    views, local = out['inputs']['global_views'], out['inputs']['local_views']
    assert views.shape == (2, 3, 64, 48) and views.dtype == torch.uint8
    assert local.shape == (3, 3, 32, 32) and local.dtype == torch.uint8
    assert not torch.equal(views[0], views[1]) and not torch.equal(local[0], local[1])
    assert out['data_samples'].img_path == 'x.png'
    none_local = MultiViewCrop(global_size=(64, 48), num_local=0)(dict(img=img))
    assert none_local['local_views'].shape[0] == 0


def test_multi_view_crop_keeps_bgr_order():
    img = np.zeros((64, 48, 3), dtype=np.uint8)
    img[..., 0] = 200  # blue in BGR
    t = MultiViewCrop(global_size=(32, 32), num_local=0, color_jitter_prob=0.0, grayscale_prob=0.0,
                      global_blur_probs=(0.0, 0.0), solarize_prob=0.0)
    views = t(dict(img=img))['global_views'].float()
    assert (views[:, 0] > 190).all() and (views[:, 1:] < 10).all()
    assert t(dict(img=None)) is None


def test_multi_view_preprocessor_stacks_flips_and_normalises():
    pre = MultiViewDataPreprocessor(mean=(1.0, 2.0, 3.0), std=(2.0, 2.0, 2.0), bgr_to_rgb=True)
    sample = dict(global_views=torch.zeros(2, 3, 4, 4, dtype=torch.uint8),
                  local_views=torch.zeros(1, 3, 2, 2, dtype=torch.uint8))
    sample['global_views'][:, 0] = 7  # B channel
    out = pre(dict(inputs=[sample, sample], data_samples=[None, None]))['inputs']
    assert out['global_views'].shape == (2, 2, 3, 4, 4) and out['local_views'].shape == (2, 1, 3, 2, 2)
    # RGB order after the flip: channel 2 holds the original B; (7 - 3) / 2 = 2
    assert torch.allclose(out['global_views'][:, :, 2], torch.tensor(2.0))
    assert torch.allclose(out['global_views'][:, :, 0], torch.tensor(-0.5))
