"""Plumbing of ``benchmarks/pretrain_probe.py --health / --levers``: arguments, lever options, the lever table."""
import inspect
import os.path as osp
import sys

import pytest

sys.path.insert(0, osp.join(osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))), 'benchmarks'))
probe = pytest.importorskip('pretrain_probe')


def test_health_arguments(tmp_path):
    args = probe.parse_args(['--health', '--lever', 'prototypes_64', '--results', str(tmp_path)])
    assert args.health and args.lever == 'prototypes_64' and args.health_results == osp.join(str(tmp_path), 'health')
    assert probe.parse_args([]).lever == 'full'
    with pytest.raises(SystemExit):
        probe.parse_args(['--health', '--lever', 'no_such_lever'])


def _lookup(cfg, key: str):
    node = cfg
    for part in key.split('.'):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def test_every_lever_changes_an_existing_config_key_or_argument():
    """A lever's key is in the config with a value of the same type, or is an argument of the module built there."""
    from sapiens2.registry import HOOKS, MODELS
    cfg = probe._config()
    assert set(probe.LEVER_ORDER) == set(probe.LEVERS)
    for lever in probe.LEVERS:
        for key, value in probe._options_dict(probe.lever_options(lever)).items():
            parent_key, name = key.rsplit('.', 1)
            parent = _lookup(cfg, parent_key)
            if name in parent:
                assert type(parent[name]) is type(value), (lever, key)
                continue
            module = (MODELS.get(parent['type']) or HOOKS.get(parent['type']))
            assert name in inspect.signature(module).parameters, (lever, key)
    assert probe._options_dict(probe.lever_options('layerscale_0.1')) == {
        'model.backbone.layer_scale_init_value': 0.1}


def test_lever_table_marks_fails_and_cells_not_run():
    verdict = [dict(name='entropy', passed=False), dict(name='usage', passed=True),
               dict(name='batch_entropy', passed=True)]
    cell = dict(lever='prototypes_64', health=dict(entropy=0.95, usage=0.3, batch_entropy=0.8), verdict=verdict,
                cpu_s=600.0)
    rows = {line.split(' | ')[0]: line for line in probe.health_table([cell]).splitlines()}
    assert rows['| 64 prototypes'].endswith('| 0.950 ✗ | 0.300 | 0.800 | fail (entropy) | 10.0 |')
    assert 'not run (time)' in rows['| LayerScale init 0.1']


def test_the_combined_lever_joins_the_options_and_names_its_levers(monkeypatch):
    monkeypatch.setattr(probe, 'COMBINED', ['layerscale_1', 'teacher_temp_0.02'])
    assert probe._options_dict(probe.lever_options('combined')) == {
        'model.backbone.layer_scale_init_value': 1.0, 'model.dino_loss.warmup_teacher_temp': 0.02,
        'model.dino_loss.teacher_temp': 0.02}
    assert probe.lever_weights('combined') == probe.VARIANTS['full']['weights']
    assert probe.lever_name('combined') == 'combined: LayerScale init 1 + teacher temperature 0.02'
    monkeypatch.setattr(probe, 'COMBINED', ['koleo_only', 'layerscale_1'])
    assert probe.lever_weights('combined') == dict(mae=0.0, dino=0.0, koleo=0.04)
