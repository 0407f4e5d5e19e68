"""The installed OpenMMLab stack imports and its compiled ops run (the Makefile's install contract)."""
import importlib

import torch


def test_openmmlab_stack_imports_and_mmcv_op_runs():
    for name in ('mmcv.ops', 'mmpose.models', 'mmpose.apis', 'mmseg.models', 'mmdet.models', 'xtcocotools.coco'):
        importlib.import_module(name)
    from mmcv.ops import nms
    boxes = torch.tensor([[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30]], dtype=torch.float32)
    scores = torch.tensor([0.9, 0.8, 0.7])
    _, keep = nms(boxes, scores, iou_threshold=0.5)
    assert keep.tolist() == [0, 2]


def test_pinned_versions():
    import mmcv
    import mmengine
    import mmpose
    import mmseg
    assert torch.__version__.startswith('2.14.1')
    assert (mmengine.__version__, mmcv.__version__, mmpose.__version__, mmseg.__version__) == \
        ('0.10.7', '2.1.0', '1.3.2', '1.2.2')
