"""Plumbing of ``benchmarks/pretrain_probe.py --setting rich``: its plan of jobs, the fine-tuning command and table."""
import json
import os.path as osp
import sys

import pytest

sys.path.insert(0, osp.join(osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))), 'benchmarks'))
probe = pytest.importorskip('pretrain_probe_lib')


def _args(tmp_path, *extra):
    return probe.parse_args(['--setting', 'rich', '--results', str(tmp_path / 'cells'),
                             '--work-dir', str(tmp_path / 'work'), *extra])


def test_the_rich_setting_renders_rich_scenes_and_plans_mae_the_recipe_random_and_their_fine_tuning(tmp_path):
    from pretrain_probe_lib.scheduler import _jobs
    args = _args(tmp_path)
    assert args.setting.unlabeled['scene_variety'] == args.setting.labeled['scene_variety'] == 'rich'
    jobs = {name: deps for name, deps, done in _jobs(args)}
    for seed in (0, 1, 2):
        for variant in ('mae', 'scratch'):
            assert jobs[f'pretrain:{variant}:{seed}'] == ['data']
            assert jobs[f'probe:{variant}:{seed}'] == ['data', f'pretrain:{variant}:{seed}']
        assert jobs[f'finetune:scratch:{seed}'] == jobs[f'finetune:scratch_decay:{seed}'] == [
            f'pretrain:scratch:{seed}']
        assert jobs[f'finetune:random:{seed}'] == jobs[f'finetune:random_decay:{seed}'] == ['data']
    assert not any(name.startswith(('pretrain:full', 'pretrain:dino', 'finetune:mae')) for name in jobs)
    assert [name for name in jobs if name.startswith('probe:labels')] == ['probe:labels:0']
    assert probe.parse_args([]).setting.name == 'full'
    with pytest.raises(SystemExit):
        probe.parse_args(['--setting', 'quick'])


def test_a_probe_job_of_the_rich_setting_is_done_only_with_its_cls_cell(tmp_path):
    from pretrain_probe_lib.cells import probe_json, semantic_json, write_json
    from pretrain_probe_lib.scheduler import _jobs
    args = _args(tmp_path)
    for task in probe.TASKS:
        for budget in args.setting.budgets:
            write_json(probe_json(args, 'random', 0, task, budget), {})
    write_json(semantic_json(args, 'random', 0), {})
    write_json(semantic_json(args, 'pixels', 0), {})
    for task in probe.TASKS:
        for budget in args.setting.budgets:
            write_json(probe_json(args, 'pixels', 0, task, budget), {})
    done = {name: finished for name, _, finished in _jobs(args)}
    assert not done['probe:random:0'] and done['probe:pixels:0']  # pixels have no [CLS] token
    write_json(semantic_json(args, 'random', 0, 'cls'), {})
    assert {name: finished for name, _, finished in _jobs(args)}['probe:random:0']


def test_fine_tuning_starts_from_the_teacher_or_from_scratch_with_the_same_budget(tmp_path):
    from mmengine.config import Config
    from pretrain_probe_lib.cells import backbone_file, data_roots
    from pretrain_probe_lib.jobs import finetune_command

    import sapiens2  # noqa: F401  (resolves the config's sapiens2:: base)
    args = _args(tmp_path)
    configs = {}
    for run in ('random', 'scratch', 'scratch_decay', 'random_decay'):
        command = finetune_command(args, run, 1, str(tmp_path / run))
        options = probe._options_dict(command[command.index('--cfg-options') + 1:])
        cfg = Config.fromfile(osp.join(probe.ROOT, probe.FINETUNE['config']))
        cfg.merge_from_dict(options)
        configs[run] = cfg
    scratch, random, decay = configs['scratch'], configs['random'], configs['scratch_decay']
    assert random.model.backbone.init_cfg is None
    assert scratch.model.backbone.init_cfg.checkpoint == backbone_file(args, 'scratch', 1)
    assert scratch.model.backbone.init_cfg.prefix is None and decay.model == scratch.model
    assert random.optim_wrapper == scratch.optim_wrapper and scratch.optim_wrapper.paramwise_cfg.layer_decay_rate == 1
    assert decay.optim_wrapper.paramwise_cfg.layer_decay_rate == 0.75
    assert configs['random_decay'].optim_wrapper == decay.optim_wrapper
    assert configs['random_decay'].model.backbone.init_cfg is None
    for cfg in configs.values():
        assert cfg.train_cfg.max_iters == cfg.param_scheduler[1].end == probe.FINETUNE['iters']
        assert cfg.randomness.seed == 1
        assert cfg.train_dataloader.dataset.data_root == cfg.val_dataloader.dataset.data_root == data_roots(
            args.setting)[1]
    assert {k: v for k, v in scratch.model.backbone.items() if k != 'init_cfg'} == {
        k: v for k, v in random.model.backbone.items() if k != 'init_cfg'}


def test_the_fine_tuning_table_gives_means_seed_std_and_the_difference(tmp_path):
    from pretrain_probe_lib.cells import finetune_json, write_json
    from pretrain_probe_lib.reports import finetune_table
    args = _args(tmp_path)
    for seed, (scratch, random) in enumerate([(0.50, 0.40), (0.52, 0.41), (0.54, 0.42)]):
        for backbone, pck in (('scratch', scratch), ('random', random)):
            write_json(finetune_json(args, backbone, seed), dict(
                metrics={'PCK': pck, 'coco/AP': pck / 2}, cpu_s=60.0))
    rows = {line.split(' | ')[0]: line for line in finetune_table(args).splitlines()}
    assert rows['| random init (from scratch)'] == '| random init (from scratch) | 41.0 ± 1.0 |'
    assert rows['| pretrained: full, from-scratch recipe'].endswith('| 52.0 ± 2.0 |')
    assert rows['| pretrained: full, from-scratch recipe vs random init (from scratch) (points, in seed std)'].endswith(
        '| +11.0 (5.5) ✓ |')
    decay = 'pretrained: full, from-scratch recipe, layer-wise lr decay 0.75'
    assert f'| {decay} vs random init, layer-wise lr decay 0.75 (points, in seed std)' in rows  # its own control
    assert f'| {decay} vs random init (from scratch) (points, in seed std)' in rows
    assert not any(k.startswith('| pretrained: full, from-scratch recipe vs random init, layer') for k in rows)
    assert rows['| pretrained: full, from-scratch recipe, layer-wise lr decay 0.75'].endswith('| not run |')
    assert 'CPU time 6 CPU-minutes' in finetune_table(args)
    with open(finetune_json(args, 'random', 2)) as f:
        assert json.load(f)['cpu_s'] == 60.0


def test_the_rich_tables_go_between_their_own_markers(tmp_path):
    from pretrain_probe_lib.reports import setting_marks
    assert setting_marks(_args(tmp_path), (probe.MARK_START, probe.MARK_END)) == (
        '<!-- pretrain_probe rich table start -->', '<!-- pretrain_probe rich table end -->')
    assert setting_marks(probe.parse_args([]), probe.GROUP_MARKS) == probe.GROUP_MARKS
