"""Dense-probe metrics against hand computations, the reference features, the probe learns when the features hold
the answer, and it builds the backbone of every config and loads exported checkpoints."""
import glob
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from mmengine.config import Config
from mmengine.registry import DefaultScope

from sapiens2.datasets.synthhumans import generate_synthhumans
from sapiens2_pretrain import export_backbone
from sapiens2_pretrain.dense_probe import (
    ProbeDecoder,
    ProbeSettings,
    _accumulate,
    _finalise,
    _normalise,
    build_frozen_backbone,
    constant_baseline,
    constant_output,
    extract_cls_features,
    extract_features,
    label_features,
    load_targets,
    pixel_features,
    train_and_evaluate,
)


def test_seg_miou_by_hand():
    target = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 2]]])
    pred_classes = torch.tensor([[[0, 1, 1, 1], [0, 0, 1, 1]]])
    logits = F.one_hot(pred_classes, 4).permute(0, 3, 1, 2).float()
    stats = {}
    _accumulate('seg', logits, target, stats, num_classes=4)
    # IoU: class 0 = 3/4, class 1 = 3/5, class 2 = 0/1; class 3 absent from the ground truth -> not averaged
    assert _finalise('seg', stats, 4) == pytest.approx((3 / 4 + 3 / 5 + 0) / 3)


def test_normal_angle_and_depth_abs_rel_by_hand():
    target = torch.zeros(1, 3, 1, 3)
    target[0, 2, 0, :2] = 1.0  # two foreground pixels facing +z, one background pixel
    pred = torch.zeros(1, 3, 1, 3)
    pred[0, 2, 0, 0] = 1.0
    pred[0, 0, 0, 1] = 1.0  # 90 degrees off
    pred[0, 0, 0, 2] = 1.0  # background: ignored
    stats = {}
    _accumulate('normal', pred, target, stats, num_classes=0)
    assert _finalise('normal', stats, 0) == pytest.approx(45.0, abs=1e-3)
    depth = torch.tensor([[[[2.0, 4.0, 0.0]]], [[[5.0, 5.0, 10.0]]]])
    log_pred = torch.log(torch.tensor([[[[3.0, 4.0, 7.0]]], [[[1.0, 1.0, 2.0]]]]))
    stats = {}
    _accumulate('depth', log_pred, depth, stats, num_classes=0)
    # image 0: medians 3 (gt) and 3.5 (pred) -> pred * 6/7 = (18/7, 24/7); the background pixel is ignored.
    # image 1: a scaled copy of its ground truth -> no error.
    errors = [(18 / 7 - 2) / 2, (4 - 24 / 7) / 4, 0.0, 0.0, 0.0]
    assert _finalise('depth', stats, 0) == pytest.approx(sum(errors) / 5)


def _blobs(n: int, seed: int) -> torch.Tensor:
    """Label maps (n, 32, 32) with two rectangles of classes 1 and 2 on background 0."""
    g = torch.Generator().manual_seed(seed)
    labels = torch.zeros(n, 32, 32, dtype=torch.long)
    for i in range(n):
        for cls in (1, 2):
            y, x = torch.randint(0, 20, (2, ), generator=g).tolist()
            labels[i, y:y + 12, x:x + 12] = cls
    return labels


@pytest.mark.parametrize('task', ['seg', 'normal', 'depth'])
def test_probe_beats_constant_when_features_hold_the_answer(task, one_thread):
    labels = {split: _blobs(n, seed) for split, n, seed in (('train', 48, 0), ('val', 16, 1))}
    if task == 'seg':
        targets = labels
    elif task == 'normal':
        directions = F.normalize(torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 1.0], [-1.0, 0.5, 1.0]]), dim=1)
        targets = {k: directions[v].permute(0, 3, 1, 2) for k, v in labels.items()}
    else:
        targets = {k: torch.tensor([0.0, 2.0, 5.0])[v][:, None] for k, v in labels.items()}
    feats = {k: F.avg_pool2d(F.one_hot(v, 3).permute(0, 3, 1, 2).float(), 4) for k, v in labels.items()}
    settings = ProbeSettings(size=(32, 32), hidden=32, steps=60, batch_size=16, lr=3e-3, num_classes=3, label_stride=2)
    value = train_and_evaluate(task, (feats['train'], targets['train']), (feats['val'], targets['val']), settings)
    constant = constant_baseline(task, targets['train'], targets['val'], 3)
    assert math.isfinite(value)
    if task == 'seg':
        assert value > constant + 0.3
    else:
        assert value < 0.6 * constant


def _people(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Person-like depth maps (n, 1, 32, 32): two upright boxes on background 0, each at its own distance (3-4.5 m)
    with a 0.2 m bulge across its width, i.e. the few-percent relative depth structure of SynthHumans people; and
    the ceiling features of ``label_features`` (log depth, person mask) average-pooled by 4."""
    g = torch.Generator().manual_seed(seed)
    depth = torch.zeros(n, 1, 32, 32)
    bulge = 0.2 * torch.cos(torch.linspace(-1.5, 1.5, 8))
    for i in range(n):
        for x in (torch.randint(0, 8, (1, ), generator=g).item(), torch.randint(16, 24, (1, ), generator=g).item()):
            y = torch.randint(0, 8, (1, ), generator=g).item()
            depth[i, 0, y:y + 24, x:x + 8] = 3.0 + 1.5 * torch.rand(1, generator=g) - bulge
    log_depth = torch.where(depth > 0, depth.clamp(min=1e-3).log(), torch.zeros_like(depth))
    return depth, F.avg_pool2d(torch.cat([log_depth, (depth > 0).float()], dim=1), 4)


def test_depth_probe_on_ground_truth_features_beats_the_constant(one_thread):
    (train_depth, train_feats), (val_depth, val_feats) = _people(64, 0), _people(16, 1)
    settings = ProbeSettings(size=(32, 32), hidden=32, steps=150, batch_size=16, lr=3e-3, num_classes=0,
                             label_stride=2)
    value = train_and_evaluate('depth', (train_feats, train_depth), (val_feats, val_depth), settings)
    constant = constant_baseline('depth', train_depth, val_depth, 0)
    assert 0.02 < constant < 0.2  # per-image median depth: the people's distances differ by up to 1.5 m
    assert value < 0.5 * constant


@pytest.mark.parametrize('task,channels', [('seg', 3), ('normal', 3), ('depth', 1)])
def test_probe_decoder_starts_as_the_best_constant(task, channels):
    labels = _blobs(4, 0)
    targets = dict(seg=labels, depth=torch.tensor([0.0, 2.0, 5.0])[labels][:, None],
                   normal=F.normalize(torch.tensor([[0.0, 0, 0], [1, 0, 1], [-1, 0.5, 1]]), dim=1)[labels]
                   .permute(0, 3, 1, 2))[task]
    constant = constant_output(task, targets, 3)
    decoder = ProbeDecoder(5, channels, hidden=8, upscale=2)
    decoder.start_at(constant)
    out = decoder(torch.randn(4, 5, 16, 16), (32, 32))
    torch.testing.assert_close(out, constant.view(1, -1, 1, 1).expand(4, -1, 32, 32))
    stats = {}
    _accumulate(task, out, targets, stats, 3)
    assert _finalise(task, stats, 3) == pytest.approx(constant_baseline(task, targets, targets, 3))


def test_depth_metric_stays_finite_on_wild_predictions():
    depth = torch.full((1, 1, 2, 2), 4.0)
    log_pred = torch.tensor([[[[0.0, 0.0], [0.0, 500.0]]]])  # exp(500) overflows float32
    stats = {}
    _accumulate('depth', log_pred, depth, stats, num_classes=0)
    value = _finalise('depth', stats, 0)
    assert math.isfinite(value) and value > 1e6  # the wild pixel counts as a huge, finite error


def test_probe_trains_on_the_first_num_train_samples_only():
    labels = _blobs(8, 0)
    feats = F.avg_pool2d(F.one_hot(labels, 3).permute(0, 3, 1, 2).float(), 4)
    settings = ProbeSettings(size=(32, 32), hidden=8, steps=2, batch_size=4, num_classes=3, num_train=4)
    garbage = feats.clone()
    garbage[4:] = float('nan')  # samples beyond num_train must never be read
    value = train_and_evaluate('seg', (garbage, labels), (feats, labels), settings)
    assert math.isfinite(value)
    with pytest.raises(ValueError, match='num_train=9'):
        train_and_evaluate('seg', (feats, labels), (feats, labels), ProbeSettings(num_train=9, num_classes=3))
    with pytest.raises(ValueError, match='layers'):
        ProbeSettings(layers='middle')


def test_pixel_features_stack_each_patch():
    images = torch.randint(0, 256, (1, 3, 4, 6), dtype=torch.uint8)
    feats = pixel_features(images, 2)
    assert feats.shape == (1, 12, 2, 3)
    rgb = (images.float().flip(1) - torch.tensor([123.675, 116.28, 103.53]).view(1, 3, 1, 1)) / torch.tensor(
        [58.395, 57.12, 57.375]).view(1, 3, 1, 1)
    # channel c * 4 + dy * 2 + dx of cell (1, 2) is pixel (2 + dy, 4 + dx) of channel c
    torch.testing.assert_close(feats[0, 1 * 4 + 1 * 2 + 0, 1, 2], rgb[0, 1, 3, 4])


@pytest.fixture(scope='module')
def small_synthhumans(tmp_path_factory):
    return generate_synthhumans(str(tmp_path_factory.mktemp('probe') / 'synth'), num_train=2, num_val=1,
                                size=(32, 24))


def test_label_features_pool_the_ground_truth(small_synthhumans):
    feats = label_features(small_synthhumans, 'train', (32, 24), stride=8)
    assert feats.shape == (2, 29 + 3 + 1 + 1, 4, 3)
    torch.testing.assert_close(feats[:, :29].sum(1), torch.ones(2, 4, 3))  # pooled one-hot part labels
    depth = load_targets(small_synthhumans, 'train', 'depth', (32, 24))
    torch.testing.assert_close(feats[:, -1], F.avg_pool2d((depth > 0).float(), 8)[:, 0])  # person mask


def _nano_cfg(**kwargs):
    return dict(type='Sapiens2', arch='sapiens2_nano', patch_size=8, **kwargs)


def test_all_layers_concatenate_every_block_and_end_with_the_last(one_thread):
    images = torch.randint(0, 256, (2, 3, 32, 24), dtype=torch.uint8)
    torch.manual_seed(0)
    every = build_frozen_backbone(_nano_cfg(), size=(32, 24), layers='all')
    last = build_frozen_backbone(_nano_cfg(), size=(32, 24), layers='last')
    last.load_state_dict(every.state_dict())
    all_feats = extract_features(every, images, 'all')
    last_feats = extract_features(last, images, 'last')
    assert all_feats.shape == (2, 2 * 64, 4, 3) and last_feats.shape == (2, 64, 4, 3)
    torch.testing.assert_close(all_feats[:, 64:], last_feats)


@pytest.mark.parametrize('source', ['student', 'teacher'])
def test_exported_and_training_checkpoints_load_into_the_probe(tiny_pretrainer, tmp_path, source, one_thread):
    model = tiny_pretrainer()
    with torch.no_grad():
        for p in model.teacher['backbone'].parameters():
            p.add_(0.01 * torch.randn_like(p))  # the teacher differs from the student
    expected = model.backbone if source == 'student' else model.teacher['backbone']
    exported = str(tmp_path / 'backbone.safetensors')
    export_backbone(model.state_dict(), exported, source=source)
    training = str(tmp_path / 'iter_1.pth')
    torch.save(dict(state_dict=model.state_dict(), meta={}), training)
    images = torch.randint(0, 256, (2, 3, 64, 48), dtype=torch.uint8)
    cfg = dict(type='Sapiens2', arch='sapiens2_nano', img_size=(64, 48))
    reference = build_frozen_backbone(cfg, size=(64, 48), layers='last')
    reference.load_state_dict(expected.state_dict())
    want = extract_features(reference, images, 'last')
    prefix = 'auto' if source == 'student' else 'teacher.backbone.'
    for checkpoint, key_prefix in ((exported, 'auto'), (training, prefix)):
        probe = build_frozen_backbone(cfg, checkpoint, key_prefix, size=(64, 48), layers='last')
        torch.testing.assert_close(extract_features(probe, images, 'last'), want)


def test_cls_features_are_what_the_dino_head_reads_and_the_backbone_keeps_its_outputs(tiny_pretrainer, tmp_path,
                                                                                        one_thread):
    model = tiny_pretrainer()
    exported = str(tmp_path / 'teacher.safetensors')
    export_backbone(model.state_dict(), exported, source='teacher')
    images = torch.randint(0, 256, (3, 3, 64, 48), dtype=torch.uint8)
    probe = build_frozen_backbone(dict(type='Sapiens2', arch='sapiens2_nano', img_size=(64, 48)), exported,
                                  size=(64, 48), layers='all')
    dense = extract_features(probe, images, 'all')
    cls = extract_cls_features(probe, images, batch_size=2)
    with torch.no_grad():
        want = model.teacher['backbone'](_normalise(images))[0][:, 0]  # (N, C): the DINO head's input
    torch.testing.assert_close(cls, want)
    assert cls.shape == (3, 64) and not torch.allclose(cls[0], cls[1])
    torch.testing.assert_close(extract_features(probe, images, 'all'), dense)  # out_type and indices restored
    with pytest.raises(ValueError, match='no \\[CLS\\] token'):
        extract_cls_features(build_frozen_backbone(_nano_cfg(with_cls_token=False), size=(32, 24)), images)


def _configs():
    paths = sorted(p for p in glob.glob('configs/*/*.py') + glob.glob('projects/*/configs/*.py') if '_base_' not in p)
    assert len(paths) > 25
    return paths


@pytest.mark.parametrize('path', _configs())
def test_probe_builds_the_backbone_of_every_config(path, one_thread):
    cfg = Config.fromfile(path)
    backbone = dict(cfg.model.backbone)
    backbone['arch'] = 'sapiens2_nano'  # every config's own settings (patch size, 4K tokenizer, ...) at nano size
    with DefaultScope.overwrite_default_scope(cfg.get('default_scope', 'sapiens2')):
        model = build_frozen_backbone(backbone, size=(128, 128))
    feats = extract_features(model, torch.randint(0, 256, (1, 3, 128, 128), dtype=torch.uint8))
    stride = backbone.get('patch_size', 16) * (backbone.get('window_size', 4) if backbone.get('use_tokenizer') else 1)
    assert feats.shape == (1, 2 * 64, 128 // stride, 128 // stride) and torch.isfinite(feats).all()


def test_probe_takes_other_registered_backbones(one_thread):
    import mmseg.models  # noqa: F401  (registers mmseg's backbones)
    with DefaultScope.overwrite_default_scope('sapiens2'):
        model = build_frozen_backbone(dict(type='mmseg.ResNetV1c', depth=18, out_indices=(0, 1, 2, 3)), size=(64, 48))
    feats = extract_features(model, torch.randint(0, 256, (1, 3, 64, 48), dtype=torch.uint8))
    assert feats.shape == (1, 64 + 128 + 256 + 512, 16, 12)  # every stage, resized to the finest (stride 4)
    assert np.isfinite(feats.numpy()).all()
