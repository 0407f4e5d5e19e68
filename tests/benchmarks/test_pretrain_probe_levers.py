"""Plumbing of ``benchmarks/pretrain_probe.py --health / --levers``: arguments, lever options, the lever table."""
import inspect
import os.path as osp
import sys

import pytest

sys.path.insert(0, osp.join(osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))), 'benchmarks'))
probe = pytest.importorskip('pretrain_probe_lib')


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
    """A lever's key is in the config with a value of the same type, or its first missing part is an argument of the
    module built at that point of the config."""
    from sapiens2.registry import HOOKS, MODELS, TRANSFORMS
    cfg = probe._config()
    assert set(probe.LEVER_ORDER) == set(probe.LEVERS)
    for lever in probe.LEVERS:
        for key, value in probe._options_dict(probe.lever_options(lever)).items():
            parent_key, name = key.rsplit('.', 1)
            while True:  # the deepest part of the key that the config has
                try:
                    parent = _lookup(cfg, parent_key)
                    break
                except KeyError:
                    parent_key, name = parent_key.rsplit('.', 1)
            if name in parent:
                assert type(parent[name]) is type(value), (lever, key)
                continue
            module = MODELS.get(parent['type']) or HOOKS.get(parent['type']) or TRANSFORMS.get(parent['type'])
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


def test_the_tiny_config_defaults_are_the_passing_recipe_and_the_paper_variants_pin_the_official_values():
    cfg = probe._config()
    for key, value in probe._options_dict(probe.SCRATCH).items():
        assert _lookup(cfg, key) == value, key
    assert probe._options_dict(probe.SCRATCH) == probe._options_dict(probe.lever_options('combined_prototypes_64'))
    for backbone in ('random', 'full', 'mae', 'dino', 'full_paper', 'lever-prototypes_256'):
        built = probe._config(probe.model_options(backbone)).model
        assert built.backbone.layer_scale_init_value == 1e-4, backbone
    assert probe._config(probe.model_options('lever-prototypes_256')).model.dino_head.num_prototypes == 256
    assert probe._config(probe.model_options('full')).model.dino_head.num_prototypes == 1024
    paper = probe._config(probe.model_options('full_paper')).model.dino_loss
    assert (paper.warmup_teacher_temp, paper.teacher_temp) == (0.065, 0.07)
    assert probe._config(probe.model_options('full')).model.dino_loss.teacher_temp == 0.04


def test_semantic_difference_gives_points_seed_std_and_the_mark_only_beyond_three_std():
    assert probe._semantic_difference([0.40, 0.42, 0.44], [0.30, 0.31, 0.32]) == '+11.0 (5.5) ✓'
    assert probe._semantic_difference([0.30, 0.32], [0.31, 0.33]) == '-1.0 (-0.7)'
    assert probe._semantic_difference([0.40], [0.30, 0.31]) == '+9.5 (one seed)'
    assert probe._semantic_difference(None, [0.3]) == ''


def test_terciles_split_values_into_three_equal_groups_in_order():
    import torch
    values = torch.tensor([5.0, 0.0, 8.0, 3.0, 1.0, 7.0])
    assert probe._terciles(values).tolist() == [1, 0, 2, 1, 0, 2]


def test_the_colour_lever_is_the_passing_recipe_with_simclr_colour_jitter():
    crop = probe._config(probe.lever_options('scratch_colour')).train_dataloader.dataset.pipeline[1]
    assert crop.color_jitter == dict(brightness=0.8, contrast=0.8, saturation=0.8, hue=0.2)
    options = probe._options_dict(probe.lever_options('scratch_colour'))
    assert probe._options_dict(probe.SCRATCH).items() <= options.items()


def test_lever_table_gives_no_verdict_without_a_dino_loss():
    verdict = [dict(name=n, passed=True) for n in ('entropy', 'usage', 'batch_entropy')]
    cell = dict(lever='koleo_only', health=dict(entropy=0.7, usage=0.7, batch_entropy=1.2), verdict=verdict,
                cpu_s=420.0)
    rows = {line.split(' | ')[0]: line for line in probe.health_table([cell]).splitlines()}
    assert rows['| KoLeo only (weights 0 / 0 / 0.04)'].endswith('| none: no DINO loss, the head is untrained | 7.0 |')


@pytest.mark.parametrize('job', ['data', 'pretrain:scratch:0', 'probe:lever-koleo_only:0', 'semantic:pixels:1',
                                 'semantic_cls:random:2', 'finetune:random:0', 'finetune:scratch:1'])
def test_jobs_that_name_a_known_backbone_are_accepted(job):
    assert probe.job_error(job) is None


@pytest.mark.parametrize('job, says', [('semantic_cls:mae', 'KIND:BACKBONE:SEED'), ('bogus:x:0', 'KIND one of'),
                                       ('semantic_cls:pixels:0', "'pixels' is not a backbone"),
                                       ('pretrain:random:0', 'choose one of full'),
                                       ('probe:lever-nosuch:0', "'lever-nosuch'")])
def test_a_bad_job_is_one_line_that_names_the_choices(job, says, capsys):
    with pytest.raises(SystemExit):
        probe.parse_args(['--job', job])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert says in err and 'Traceback' not in err
