"""prepare_test_config: the tools/test.py options of each task as config changes, with the upstream meaning."""
from pathlib import Path

import pytest
from mmengine.config import Config

from sapiens2.engine.launch import load_config, prepare_test_config, test_style

REPO = Path(__file__).resolve().parents[2]
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')
SEG = str(REPO / 'configs' / 'seg' / 'sapiens2_nano_seg_synthhumans-128x96.py')
NORMAL = str(REPO / 'projects' / 'normal' / 'configs' / 'sapiens2_nano_normal_synthhumans-128x96.py')

test_style.__test__ = False  # imported function, not a test


def prepared(config: str, **options):
    return prepare_test_config(load_config(config), config, 'model.pth', work_dir='work', **options)


def test_styles_follow_the_default_scope():
    assert [test_style(load_config(c)) for c in (POSE, SEG, NORMAL)] == ['pose', 'seg', 'dense']


def test_pose_options_are_mmposes():
    cfg = prepared(POSE, out='m/metrics.json', dump='p.pkl', show_dir='pics', interval=3)
    assert cfg.load_from == 'model.pth' and cfg.work_dir == 'work'
    assert dict(type='SaveTestMetricsHook', out_file='m/metrics.json') in cfg.custom_hooks
    assert cfg.test_evaluator[-1] == dict(type='DumpResults', out_file_path='p.pkl')
    assert [e['type'] for e in cfg.test_evaluator[:-1]] == ['CocoMetric', 'KeypointPartitionMetric', 'PCKAccuracy']
    hook = cfg.default_hooks.visualization
    assert hook.enable and hook.interval == 3 and not hook.show
    assert Path(hook.out_dir).is_absolute() and Path(hook.out_dir).name == 'pics'
    with pytest.raises(ValueError, match='.pkl'):
        prepared(POSE, dump='p.json')


def test_seg_options_are_mmsegs():
    cfg = prepared(SEG, out='labels', show_dir='pics', tta=True)
    assert cfg.test_evaluator.output_dir == 'labels'
    assert cfg.default_hooks.visualization.draw and cfg.default_hooks.visualization.interval == 1
    assert cfg.visualizer.save_dir == 'pics'
    assert cfg.model.type == 'Sapiens2SegTTAModel' and cfg.model.module.type == 'EncoderDecoder'
    assert cfg.test_dataloader.dataset.pipeline[1].type == 'TestTimeAug'


def test_dense_options_are_seg_style():
    cfg = prepared(NORMAL, out='preds', show_dir='pics')
    assert dict(type='SavePredictionsHook', out_dir='preds') in cfg.custom_hooks
    assert cfg.default_hooks.visualization.draw and cfg.visualizer.save_dir == 'pics'
    assert 'output_dir' not in cfg.test_evaluator


@pytest.mark.parametrize('config,option', [(POSE, dict(tta=True)), (SEG, dict(dump='p.pkl')),
                                           (NORMAL, dict(tta=True)), (NORMAL, dict(show=True))])
def test_options_a_task_does_not_have_are_an_error(config, option):
    with pytest.raises(ValueError, match=f'--{next(iter(option))} is not an option'):
        prepared(config, **option)


def test_tta_and_show_dir_need_their_config_entries():
    cfg = Config({k: v for k, v in load_config(SEG).to_dict().items() if k != 'tta_model'})
    with pytest.raises(ValueError, match='tta_model and tta_pipeline'):
        prepare_test_config(cfg, SEG, 'model.pth', tta=True)
    cfg = load_config(NORMAL)
    cfg.default_hooks.pop('visualization')
    with pytest.raises(ValueError, match='default_hooks.visualization'):
        prepare_test_config(cfg, NORMAL, 'model.pth', show_dir='pics')
