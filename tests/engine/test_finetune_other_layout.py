"""Fine-tuning from a checkpoint whose head has another layout (308 keypoints into a 17-keypoint model, 29 classes
into 3) loads every other weight and says so in one line, without ``load_strict = False``; testing, resuming and a
checkpoint of another architecture stay strict."""
import json
from pathlib import Path

import pytest
import torch

from sapiens2.engine.checkpoint import CheckpointMismatchError, adapt_keys, load_model_weights, load_weights

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / 'sapiens2/demo_models'
POSE_DEMO = DEMO / 'sapiens2_tiny_pose_synthhumans-256x192.safetensors'
SEG_DEMO = DEMO / 'sapiens2_tiny_seg_synthhumans-256x192.safetensors'


def coco17_annotations(root: Path) -> str:
    keypoints = [v for i in range(17) for v in (10.0 + i, 20.0 + i, 2)]
    ann = dict(images=[dict(id=1, file_name='a.jpg', width=96, height=128)],
               annotations=[dict(id=1, image_id=1, category_id=1, bbox=[5, 5, 60, 100], area=6000, iscrowd=0,
                                 num_keypoints=17, keypoints=keypoints)],
               categories=[dict(id=1, name='person')])
    (root / 'coco17.json').write_text(json.dumps(ann))
    return str(root / 'coco17.json')


@pytest.fixture(scope='module')
def finetuned(tmp_path_factory):
    """A runner of the tiny pose config on COCO-17 data (head of 17 keypoints) after train() with load_from the
    308-keypoint demo model (no iteration), and its work dir."""
    from sapiens2.engine.launch import build_runner, load_config
    root = tmp_path_factory.mktemp('finetune')
    config = root / 'coco17_tiny.py'
    config.write_text(f"""_base_ = ['{REPO}/configs/pose/sapiens2_tiny_pose_synthhumans-256x192.py']
load_from = '{POSE_DEMO}'
model = dict(head=dict(out_channels=17))
train_dataloader = dict(dataset=dict(type='CocoDataset', data_root='{root}', ann_file='{coco17_annotations(root)}'))
train_cfg = dict(max_iters=0)
val_dataloader = val_cfg = val_evaluator = test_dataloader = test_cfg = test_evaluator = None
default_hooks = dict(checkpoint=dict(interval=1, save_last=False))
""")
    cfg = load_config(str(config))
    cfg.work_dir = str(root / 'work')
    runner = build_runner(cfg)
    runner.train()
    return runner, root / 'work'


def test_load_from_another_keypoint_set_loads_all_but_the_output_layer(finetuned):
    runner, work_dir = finetuned
    checkpoint = adapt_keys(load_weights(str(POSE_DEMO)), runner.model)
    model = runner.model.state_dict()
    backbone = [k for k in model if k.startswith('backbone.')]
    assert backbone and all(torch.equal(model[k], checkpoint[k]) for k in backbone)
    deconv = [k for k in model if k.startswith('head.deconv_layers')]
    assert deconv and all(torch.equal(model[k], checkpoint[k]) for k in deconv)
    assert model['head.conv_pose.weight'].shape[0] == 17
    log = next(work_dir.glob('*/*.log')).read_text()
    notice = [line for line in log.splitlines() if 'whose head has another layout' in line]
    assert len(notice) == 1
    assert f'Fine-tuning from {POSE_DEMO}, whose head has another layout: head.conv_pose* keeps its ' \
           'initialisation (head.conv_pose.bias (308,) -> (17,), head.conv_pose.weight (308, 64, 1, 1) -> ' \
           '(17, 64, 1, 1)); the other 78 tensors (the backbone included) are loaded.' in notice[0]


def test_outside_training_the_other_layout_stays_an_error(finetuned):
    runner, _ = finetuned
    with pytest.raises(CheckpointMismatchError, match=r'head\.conv_pose\.weight \(checkpoint \(308, 64, 1, 1\) vs '
                       r'model \(17, 64, 1, 1\)\)'):
        runner.load_checkpoint(str(POSE_DEMO))  # as tools/test.py loads it


def test_seg_checkpoint_of_29_classes_into_3_and_another_architecture():
    from mmengine.config import Config
    from mmengine.registry import init_default_scope
    from mmseg.registry import MODELS
    init_default_scope('mmseg')
    cfg = Config.fromfile(str(REPO / 'configs/seg/sapiens2_tiny_seg_synthhumans-256x192.py'))
    cfg.model.decode_head.num_classes = 3
    cfg.model.decode_head.loss_decode = [dict(type='Sapiens2SegCrossEntropyLoss')]
    model = MODELS.build(cfg.model)
    missing, unexpected = load_model_weights(model, str(SEG_DEMO), head_layout_may_differ=True)
    assert sorted(missing) == ['decode_head.conv_seg.bias', 'decode_head.conv_seg.weight'] and unexpected == []
    checkpoint = load_weights(str(SEG_DEMO))
    assert torch.equal(model.backbone.state_dict()['patch_embed.projection.weight'],
                       checkpoint['backbone.patch_embed.projection.weight'])
    with pytest.raises(CheckpointMismatchError, match='does not match'):
        load_model_weights(model, str(POSE_DEMO), head_layout_may_differ=True)  # another head: still an error
