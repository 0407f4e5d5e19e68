"""The backbone and the dense heads import and run with torch and MMEngine alone (mmcv, mmpose, mmseg, mmdet
blocked), as on a GPU machine without the OpenMMLab task libraries."""
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import importlib.abc, sys
    BLOCKED = ('mmcv', 'mmpose', 'mmseg', 'mmdet')

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split('.')[0] in BLOCKED:
                raise ModuleNotFoundError(f'No module named {name!r} (blocked)', name=name)
            return None

    sys.meta_path.insert(0, Block())
    import torch
    import sapiens2.models
    from sapiens2.models import DenseEstimator, Sapiens2
    from sapiens2.models.heads import DenseTrunkHead
    from sapiens2.registry import MODELS
    backbone = Sapiens2(arch='sapiens2_nano', img_size=(64, 48), patch_size=8, out_type='featmap')
    head = DenseTrunkHead(in_channels=backbone.embed_dims, upsample_channels=(16, ), conv_out_channels=(8, ))
    features = backbone(torch.randn(1, 3, 64, 48))[0]
    out = head.forward_trunk(features)
    assert out.shape == (1, 8, 16, 12), out.shape
    assert MODELS.get('DenseEstimator') is DenseEstimator
    assert not [m for m in sys.modules if m.split('.')[0] in BLOCKED]
    print('torch+mmengine ok')
''')


def test_backbone_and_dense_heads_need_only_torch_and_mmengine():
    proc = subprocess.run([sys.executable, '-c', SCRIPT], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert 'torch+mmengine ok' in proc.stdout
