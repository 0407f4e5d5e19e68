"""A model trained on its own layout (COCO-17 keypoints, three own seg classes) infers, draws, exports and converts in
that layout: the layout comes from the checkpoint's ``meta.dataset_meta``, as training saves it."""
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch
from mmpose.datasets.datasets.utils import parse_pose_metainfo

from sapiens2.apis import Sapiens2Inferencer, init_model
from sapiens2.apis.cli import main
from sapiens2.engine.checkpoint import save_weights
from sapiens2.structures.layout import class_palette

REPO = Path(__file__).resolve().parents[2]
POSE = REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py'
SEG = REPO / 'configs' / 'seg' / 'sapiens2_nano_seg_synthhumans-128x96.py'
CLASSES = ('background', 'person', 'hair')
PALETTE = [[10, 20, 30], [200, 0, 100], [0, 250, 50]]
LINK_RGB = (7, 77, 177)


def coco_metainfo() -> dict:
    """mmpose's COCO-17 metainfo (shipped inside mmpose), parsed as its datasets do, with distinct point colours and
    one link colour that neither the COCO nor the 308 layout uses, so that pictures show whose colours they use."""
    meta = parse_pose_metainfo(dict(from_file='configs/_base_/datasets/coco.py'))
    meta['keypoint_colors'] = np.array([(250, 5 + 10 * i, 3) for i in range(17)], np.uint8)
    meta['skeleton_link_colors'] = np.tile(np.array(LINK_RGB, np.uint8), (len(meta['skeleton_links']), 1))
    return meta


@pytest.fixture(scope='module')
def own(tmp_path_factory) -> dict:
    """Configs and checkpoints of a 17-keypoint pose model (.safetensors) and a 3-class seg model (.pth)."""
    folder = tmp_path_factory.mktemp('own_layout')
    pose_cfg, seg_cfg = folder / 'pose17.py', folder / 'seg3.py'
    pose_cfg.write_text(f"_base_ = ['{POSE}']\nmodel = dict(head=dict(out_channels=17))\n")
    seg_cfg.write_text(f"_base_ = ['{SEG}']\nmodel = dict(decode_head=dict(num_classes=3))\n")
    torch.manual_seed(0)
    with pytest.warns(UserWarning, match='random weights'):
        pose, seg = init_model(str(pose_cfg), device='cpu'), init_model(str(seg_cfg), device='cpu')
    meta = coco_metainfo()
    pose_ckpt, seg_ckpt = str(folder / 'pose17.safetensors'), str(folder / 'seg3.pth')
    save_weights(pose.state_dict(), pose_ckpt, dict(dataset_meta=meta))
    save_weights(seg.state_dict(), seg_ckpt, dict(dataset_meta=dict(classes=CLASSES, palette=PALETTE)))
    image = folder / 'black.png'
    cv2.imwrite(str(image), np.zeros((160, 120, 3), np.uint8))
    return dict(pose_cfg=str(pose_cfg), seg_cfg=str(seg_cfg), pose_ckpt=pose_ckpt, seg_ckpt=seg_ckpt, meta=meta,
                image=str(image))


def test_pose_pictures_and_json_use_the_checkpoint_layout(own, tmp_path):
    inferencer = Sapiens2Inferencer(own['pose_cfg'], own['pose_ckpt'], device='cpu',
                                    task_options=dict(pose=dict(kpt_thr=-1e9, radius=3, thickness=2)))
    model = inferencer.tasks[0].model
    assert len(model.dataset_meta['flip_indices']) == 17  # the checkpoint's layout, not the config's 308
    # A box well inside the picture: even a keypoint at its padded edge (1.25x) lies in the image.
    result = inferencer(own['image'], out_dir=str(tmp_path), show_progress=False,
                        bboxes=dict(black=[[30, 40, 90, 120]]))[0]['pose']
    assert result['keypoints'].shape == (1, 17, 2)
    content = json.loads((tmp_path / 'pose' / 'black.json').read_text())
    assert content['num_keypoints'] == 17
    assert content['keypoint_names'] == [own['meta']['keypoint_id2name'][i] for i in range(17)]
    assert content['keypoint_names'][:3] == ['nose', 'left_eye', 'right_eye']
    picture = cv2.imread(str(tmp_path / 'pose' / 'black.png'))
    last = np.round(result['keypoints'][0, -1]).astype(int)  # drawn last, so nothing covers its centre
    assert (0 <= last).all() and (last < picture.shape[1::-1]).all(), last
    assert picture[last[1], last[0]].tolist() == own['meta']['keypoint_colors'][-1][::-1].tolist()  # BGR
    point_colours = {tuple(int(v) for v in c[::-1]) for c in own['meta']['keypoint_colors']}
    exact = {tuple(p) for p in picture.reshape(-1, 3).tolist()}
    assert exact & point_colours
    drawn_links = [(a, b) for a, b in own['meta']['skeleton_links']
                   if np.abs(result['keypoints'][0, a] - result['keypoints'][0, b]).max() > 8]
    if drawn_links:  # a link longer than the points' radius shows its own colour between them
        assert LINK_RGB[::-1] in exact


def test_cli_draws_a_17_keypoint_model_and_refuses_a_308_format_in_one_line(own, tmp_path, capsys):
    out = tmp_path / 'out'
    args = [own['image'], '--model', own['pose_cfg'], '--weights', own['pose_ckpt'], '--out', str(out), '--device',
            'cpu', '--quiet', '--kpt-thr=0']
    assert main(args) == 0
    assert (out / 'pose' / 'black.png').is_file()
    assert len(json.loads((out / 'pose' / 'black.json').read_text())['keypoint_names']) == 17
    capsys.readouterr()
    assert main(args + ['--keypoint-format', 'coco17']) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith('sapiens2-infer: error: keypoint format')
    assert '308 keypoints' in err[0] and 'predicts 17 keypoints' in err[0] and 'drop --keypoint-format' in err[0]


def test_seg_picture_uses_the_checkpoint_palette(own, tmp_path):
    inferencer = Sapiens2Inferencer(own['seg_cfg'], own['seg_ckpt'], device='cpu')
    assert list(inferencer.tasks[0].model.dataset_meta['classes']) == list(CLASSES)
    labels = inferencer(own['image'], out_dir=str(tmp_path), show_progress=False)[0]['seg']['labels']
    overlay = cv2.imread(str(tmp_path / 'seg' / 'black.png'))[:, 120:]  # [image | overlay] of a black image
    expected = np.round(np.array(PALETTE, np.float64)[labels][..., ::-1] * 0.5)
    np.testing.assert_array_equal(overlay, expected)
    seg29_only = {tuple(np.round(c[::-1] * 0.5).astype(int)) for c in class_palette(None, 29)[3:].astype(float)}
    assert not seg29_only & {tuple(p) for p in overlay.reshape(-1, 3).tolist()}


def test_export_metadata_carries_the_layout(own):
    """The exported metadata only (no format: tests/deploy exports, checks parity and runs bundles)."""
    from sapiens2.deploy.export import build_for_export, export_metadata
    model, size = build_for_export(own['pose_cfg'], own['pose_ckpt'])
    layout = json.loads(json.dumps(export_metadata(model, size)))['dataset_meta']
    assert layout['keypoint_id2name']['0'] == 'nose' and layout['num_keypoints'] == 17
    assert layout['skeleton_links'] == [list(link) for link in own['meta']['skeleton_links']]
    assert layout['keypoint_colors'] == own['meta']['keypoint_colors'].tolist()
    assert len(layout['sigmas']) == 17 and len(layout['flip_indices']) == 17


def test_transformers_conversion_names_the_labels(own, tmp_path, hf):
    from sapiens2.interop.transformers import export_to_transformers
    seg = json.loads(Path(export_to_transformers(own['seg_cfg'], own['seg_ckpt'], str(tmp_path / 'seg'))
                          ).joinpath('config.json').read_text())
    assert seg['id2label'] == {'0': 'background', '1': 'person', '2': 'hair'}
    pose = json.loads(Path(export_to_transformers(own['pose_cfg'], own['pose_ckpt'], str(tmp_path / 'pose'))
                           ).joinpath('config.json').read_text())
    assert list(pose['id2label'].values()) == [own['meta']['keypoint_id2name'][i] for i in range(17)]
    assert [1, 2] in pose['flip_pairs'] and [15, 16] in pose['flip_pairs'] and len(pose['flip_pairs']) == 8
