"""The tiny COCO-17, COCO-WholeBody and own-classes configs train on SynthHumans converted to their layout
(tools/dataset_converters/synthhumans_to_layout.py), from the shipped tiny 308-keypoint / 29-class models, and
evaluate with tools/test.py; the checkpoints carry their layout. A user's COCO-17 config written against the previous
release's tiny 308-keypoint config (tests/data/previous_release_coco17_config.py) trains as it is. The 7-class set
with left/right pairs and an own keypoint set run through the guide's commands (test_custom_data_guide.py)."""
import pytest
import torch

from tests.scripts import load_script
from tests.tools.own_layout_runs import SUBSET, train_and_test

LAYOUTS = {
    # name: (config, converter arguments, load_from)
    'coco17': ('configs/pose/sapiens2_tiny_pose_coco-256x192.py', ['--keypoints', 'coco17'], 'pose-tiny'),
    # a user's config written against the previous release: the 308 recipe's pipeline (PartKeypointWeights) as it is
    'coco17_previous_release': ('tests/data/previous_release_coco17_config.py', ['--keypoints', 'coco17'],
                                'pose-tiny'),
    'coco_wholebody': ('configs/pose/sapiens2_tiny_pose_coco-wholebody-256x192.py', ['--keypoints', 'coco_wholebody'],
                       'pose-tiny'),
    'person_hair': ('configs/seg/sapiens2_tiny_seg_custom-256x192.py',
                    ['--parts', 'sapiens2::_base_/datasets/layouts/person_hair.py', '--class-map', 'person=*'],
                    'seg-tiny'),
}


@pytest.fixture(scope='module', params=sorted(LAYOUTS))
def trained(request, synthhumans_root, tmp_path_factory):
    """Convert 16 SynthHumans images to the layout, train 2 iterations, test: (layout, run of train_and_test)."""
    config, convert_args, load_from = LAYOUTS[request.param]
    root = tmp_path_factory.mktemp(request.param)
    data = root / 'data'
    load_script('tools/dataset_converters/synthhumans_to_layout.py').main(
        ['--src', synthhumans_root, '--out', str(data), *convert_args, *SUBSET])
    if request.param == 'person_hair':
        data_options = [f'custom_data_root={data}']
    else:
        data_options = [f'{loader}.dataset.data_root={data}' for loader in ('train_dataloader', 'val_dataloader',
                                                                             'test_dataloader')]
    return request.param, train_and_test(config, root / 'work', [*data_options, f'load_from={load_from}'])


@pytest.mark.slow
def test_checkpoint_carries_the_layout(trained):
    layout, run = trained
    meta = torch.load(run['checkpoint'], map_location='cpu', weights_only=False)['meta']['dataset_meta']
    if layout == 'person_hair':
        assert tuple(meta['classes']) == ('background', 'person', 'hair') and meta['flip_pairs'] == []
        assert meta['palette'][2] == [120, 40, 200]
    else:
        count = {'coco17': 17, 'coco17_previous_release': 17, 'coco_wholebody': 133}[layout]
        assert meta['num_keypoints'] == count and len(meta['sigmas']) == count
        assert meta['keypoint_id2name'][9] == 'left_wrist' and meta['flip_indices'][9] == 10


@pytest.mark.slow
def test_test_tool_reports_the_layout_metric(trained):
    layout, run = trained
    key = {'coco17': 'coco/AP', 'coco17_previous_release': 'coco/AP', 'coco_wholebody': 'coco-wholebody/AP',
           'person_hair': 'mIoU'}[layout]
    value = run['metrics'][key]
    assert 0 <= value <= (100 if key == 'mIoU' else 1)
