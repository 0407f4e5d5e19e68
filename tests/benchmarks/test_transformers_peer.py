"""The key mapping that loads our weights into transformers' Sapiens2 for the benchmarks."""
import os.path as osp
import sys

import pytest
import torch

sys.path.insert(0, osp.join(osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))), 'benchmarks'))
transformers = pytest.importorskip('transformers')
peer = pytest.importorskip('transformers_peer')


def test_backbone_mapping_reproduces_ours_with_fp32_rope():
    assert peer.check_mapping() < 1e-4


def test_normal_head_mapping_reproduces_our_trunk():
    from sapiens2.models import Sapiens2
    from sapiens2.models.heads import DenseTrunkHead

    class Head(DenseTrunkHead):
        def __init__(self):
            super().__init__(64, (32, 16, 16, 8), (8, 8), (3, 3))
            self.conv_normal = torch.nn.Conv2d(8, 3, 1)

        def forward(self, x):
            return self.conv_normal(self.forward_trunk(x))

    backbone = Sapiens2(arch='sapiens2_nano', img_size=(64, 48), out_type='featmap', pos_embed_rope_dtype='fp32')
    backbone.init_weights()
    head = Head()
    head.init_weights()
    peer.HEAD_CONFIGS['normal-test'] = dict(num_labels=3, head=dict(
        use_pixel_shuffle=True, upsample_out_channels=[32, 16, 16, 8], upsample_kernel_sizes=[3] * 4,
        conv_out_channels=[8, 8], conv_kernel_sizes=[3, 3]))
    peer.TASK_CLASSES['normal-test'] = 'Sapiens2ForNormalEstimation'
    try:
        model = peer.build_peer(backbone.eval(), head.eval(), 'normal-test')
    finally:
        del peer.HEAD_CONFIGS['normal-test'], peer.TASK_CLASSES['normal-test']
    x = torch.randn(1, 3, 64, 48)
    with torch.no_grad():
        torch.testing.assert_close(model(pixel_values=x).normals, head(backbone(x)[0]), rtol=1e-4, atol=1e-4)
