"""configs/pose/sapiens2_tiny_pose_synthhumans-lspet-256x192.py on constructed sources: mmpose's CombinedDataset
draws each source in its configured share and both go through the training pipeline, LSPET's unlabelled points
without loss."""
import numpy as np
from mmengine.config import Config
from mmengine.registry import DefaultScope
from PIL import Image
from scipy.io import savemat

from tests.scripts import REPO, load_script

CONFIG = REPO / 'configs/pose/sapiens2_tiny_pose_synthhumans-lspet-256x192.py'


def lspet_folder(root):
    """Four LSPET-like photos, the last held out; joint 0 (right ankle) unlabelled in the first."""
    (root / 'images').mkdir(parents=True)
    rng = np.random.default_rng(0)
    joints = np.concatenate([rng.uniform(40, 120, (4, 14, 2)), np.ones((4, 14, 1))], axis=2)
    joints[0, 0] = (-5, 0, 0)
    for i in range(4):
        pixels = rng.integers(0, 255, (160, 160, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(root / 'images' / f'im{i + 1:05d}.jpg')
    savemat(root / 'joints.mat', dict(joints=joints.transpose(1, 2, 0)))
    load_script('tools/dataset_converters/lspet_to_coco.py').main(
        ['--lspet', str(root), '--out', str(root / 'annotations'), '--num-val', '1'])
    return root


def test_both_sources_in_their_shares_through_the_pipeline(tmp_path):
    from mmpose.registry import DATASETS

    import sapiens2  # noqa: F401  (registers the datasets and transforms)
    root = lspet_folder(tmp_path / 'lspet')
    cfg = Config.fromfile(str(CONFIG))
    dataset_cfg = cfg.train_dataloader.dataset
    assert dataset_cfg.type == 'CombinedDataset' and dataset_cfg.sample_ratio_factor == [2.0, 0.75]
    for source in dataset_cfg.datasets:  # the same constructed file stands for both sources
        source.update(data_root=str(root), ann_file='annotations/lspet_keypoints308_train.json')
    dataset_cfg.sample_ratio_factor = [2.0, 1.0]
    with DefaultScope.overwrite_default_scope('mmpose'):
        dataset = DATASETS.build(dataset_cfg)
        assert dataset.lens == [6, 3] and len(dataset) == 9
        for index in (0, 8):
            sample = dataset[index]
            weights = sample['data_samples'].gt_instance_labels.keypoint_weights.reshape(-1)
            assert tuple(sample['inputs'].shape) == (3, 256, 192)
            assert sample['data_samples'].gt_fields.heatmaps.shape == (308, 64, 48)
            assert weights[308 - 1] == 0 and 0 < (weights > 0).sum() <= 13  # no face point labelled; <= 13 joints
