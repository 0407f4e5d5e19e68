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


def test_normal_head_peer_reproduces_our_head():
    from sapiens2.models import Sapiens2
    from sapiens2_normal import NormalHead

    backbone = Sapiens2(arch='sapiens2_nano', img_size=(64, 48), out_type='featmap', pos_embed_rope_dtype='fp32')
    backbone.init_weights()
    head = NormalHead(in_channels=backbone.embed_dims, upsample_channels=(32, 16, 16, 8), conv_out_channels=(8, 8),
                      conv_kernel_sizes=(3, 3))
    head.init_weights()
    model = peer.build_peer(backbone.eval(), head.eval())
    x = torch.randn(1, 3, 64, 48)
    with torch.no_grad():
        torch.testing.assert_close(model(pixel_values=x).normals, head(backbone(x)[0]), rtol=1e-4, atol=1e-4)
