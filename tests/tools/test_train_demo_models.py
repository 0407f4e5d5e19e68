"""tools/misc/train_demo_models.py: the demo configs fit the size budget, the constant baselines are optimal, and a
written checkpoint carries its config and loads strictly."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from mmengine.registry import DefaultScope

from tests.scripts import load_script

REPO = Path(__file__).resolve().parents[2]
# All demo checkpoints together must stay within ~25 MB as fp16.
TOTAL_FP16_BYTES = 25e6
TASK_FP16_BYTES = 4.2e6


tool = load_script('tools/misc/train_demo_models.py')


def build_model(task_name: str, device: str = 'meta'):
    from mmengine.registry import MODELS

    from sapiens2.engine.launch import load_config
    task = tool.TASKS[task_name]
    for module in task.imports:
        __import__(module)
    cfg = load_config(str(REPO / task.config))
    with DefaultScope.overwrite_default_scope(cfg.default_scope), torch.device(device):
        return cfg, MODELS.build(cfg.model)


def test_demo_configs_fit_the_size_budget():
    total = 0
    for name, task in tool.TASKS.items():
        cfg, model = build_model(name)
        fp16_bytes = 2 * sum(p.numel() for p in model.state_dict().values())
        assert fp16_bytes <= TASK_FP16_BYTES, f'{name}: {fp16_bytes / 1e6:.2f} MB'
        assert Path(task.config).stem == f'sapiens2_tiny_{name}_synthhumans-{"x".join(map(str, cfg.image_size))}'
        assert cfg.randomness.seed == 0 and cfg.model.backbone.init_cfg is None
        total += fp16_bytes
    assert total <= TOTAL_FP16_BYTES


def test_demo_configs_read_the_demo_data_root():
    from sapiens2.engine.launch import load_config
    for task in tool.TASKS.values():
        cfg = load_config(str(REPO / task.config))
        roots = [cfg[f'{split}_dataloader'].dataset.data_root.rstrip('/') for split in ('train', 'val', 'test')]
        expected = task.data_options(tool.DEFAULT_DATA_ROOT)
        assert roots == [expected[f'{split}_dataloader.dataset.data_root'].rstrip('/')
                         for split in ('train', 'val', 'test')]


def test_abs_rel_optimal_depth_minimises_abs_rel():
    depths = np.random.default_rng(0).uniform(1.0, 6.0, 501)
    best = tool.abs_rel_optimal_depth(depths)
    grid = np.linspace(1.0, 6.0, 2001)
    costs = [np.mean(np.abs(d - depths) / depths) for d in grid]
    assert np.mean(np.abs(best - depths) / depths) <= min(costs) + 1e-9
    assert best < np.median(depths)  # the 1/z weights pull it towards the near depths


def test_spherical_median_beats_the_mean_direction():
    rng = np.random.default_rng(0)
    normals = np.concatenate([np.tile([0.0, 0.0, -1.0], (60, 1)), rng.normal(size=(40, 3))])
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)

    def mean_angle(d):
        return np.degrees(np.arccos(np.clip(normals @ d, -1, 1))).mean()

    mean = normals.mean(0) / np.linalg.norm(normals.mean(0))
    median = tool.spherical_median(normals)
    assert np.linalg.norm(median) == pytest.approx(1.0)
    assert mean_angle(median) < mean_angle(mean)


def test_box_normalised_median_and_pixelwise_mode():
    annotations = [dict(bbox=[10, 20, 100, 200], keypoints=[60, 120, 2, 0, 0, 0]),
                   dict(bbox=[0, 0, 50, 50], keypoints=[25, 25, 1, 5, 5, 0])]
    median = tool.box_normalised_median(annotations)
    assert median.tolist() == [[0.5, 0.5], [0.5, 0.5]]  # the second keypoint is never visible
    labels = np.array([[[0, 1]], [[2, 1]], [[2, 0]]])
    assert tool.pixelwise_mode(labels, 3).tolist() == [[2, 1]]


def test_written_checkpoint_embeds_the_config_and_loads_strictly(tmp_path):
    from sapiens2.engine.checkpoint import load_model_weights, read_checkpoint_file
    cfg, model = build_model('seg', device='cpu')
    work_dir = tmp_path / 'train'
    work_dir.mkdir()
    torch.save({'state_dict': model.state_dict(), 'meta': {'dataset_meta': {'classes': ['a', 'b']}}},
               work_dir / 'iter_1.pth')
    (work_dir / 'last_checkpoint').write_text(str(work_dir / 'iter_1.pth'))
    path = tmp_path / 'seg.safetensors'
    info = tool.write_checkpoint('seg', str(work_dir), str(path), card=dict(name='seg'))
    checkpoint = read_checkpoint_file(str(path))
    assert checkpoint['meta']['config'] == (REPO / tool.TASKS['seg'].config).read_text()
    assert checkpoint['meta']['model_card'] == dict(name='seg')
    assert checkpoint['meta']['dataset_meta'] == {'classes': ['a', 'b']}
    assert all(v.dtype == torch.float16 for v in checkpoint['state_dict'].values() if v.is_floating_point())
    assert info['parameters'] == sum(v.numel() for v in model.state_dict().values())
    load_model_weights(model, str(path), strict=True)
    json.dumps(info)


def test_photo_ratio_and_clothes_reach_the_data_and_the_card(monkeypatch):
    monkeypatch.setattr('sys.argv', ['train_demo_models.py', '--photo-ratio', '0.5', '--patterned-clothes', '--tasks',
                                     'seg'])
    args = tool.parse_args()
    assert args.photo_ratio == 0.5 and tool.DATA['photo_ratio'] == 0.0  # rooms only unless asked
    assert args.patterned_clothes and not tool.DATA['patterned_clothes']
    assert tool.data_text(dict(tool.DATA)) == ''
    assert tool.data_text(dict(tool.DATA, photo_ratio=0.5)) == ', 50% of the images over real photos (the package ' \
        'photos)'
    assert 'photos/mine' in tool.data_text(dict(tool.DATA, photo_ratio=1.0, photo_folder='photos/mine'))
    assert tool.data_text(dict(tool.DATA, patterned_clothes=True)) == ', patterned clothes'
    monkeypatch.setattr('sys.argv', ['train_demo_models.py', '--posture-ratio', '0.4'])
    assert tool.parse_args().posture_ratio == 0.4 and tool.DATA['posture_ratio'] == 0.0
    assert tool.data_text(dict(tool.DATA, posture_ratio=0.4)) == ', 40% of the people sitting, crouching or bending'
    monkeypatch.setattr('sys.argv', ['train_demo_models.py', '--seed', '2', '--num-train', '4000'])
    args = tool.parse_args()
    assert (args.seed, args.num_train) == (2, 4000) and tool.DATA['seed'] == 0


def test_the_card_shows_the_chain_of_checkpoints_it_continues():
    assert tool.init_markdown('random (from scratch)') == ['Init: random (from scratch).']
    first = dict(command='c1', data=dict(tool.DATA), training=dict(iterations=2400, cpu_s=3600.0), init='random')
    second = dict(command='c2', data=dict(tool.DATA, photo_ratio=0.5), training=dict(iterations=1200, cpu_s=1800.0),
                  init=dict(checkpoint='r1.safetensors', sha256='a' * 64, lr=1e-3, warmup_iters=20, its_card=first))
    init = dict(checkpoint='r2.safetensors', sha256='b' * 64, lr=1e-3, warmup_iters=20, its_card=second)
    lines = tool.init_markdown(init)
    assert 'these 2 trainings' in lines[0] and '1.5 CPU hours' in lines[0] and lines[0].endswith('from random.')
    assert lines[4:] == ['| `r2.safetensors` (bbbbbbbbbbbb) | 1200 | 1800 | 50% of the images over real photos (the '
                         'package photos) |', '| `r1.safetensors` (aaaaaaaaaaaa) | 2400 | 3600 | rendered rooms |']
    # another rendered set is named by its size and seed; a training without a CPU time shows '?'
    other = dict(second, data=dict(tool.DATA, num_train=4000, seed=2, posture_ratio=0.6),
                 training=dict(iterations=2400))
    lines = tool.init_markdown(dict(init, its_card=other))
    assert 'took at least 1.0 CPU hours' in lines[0]
    row = lines[4]
    assert row == '| `r2.safetensors` (bbbbbbbbbbbb) | 2400 | ? | 4000 images, seed 2; 60% of the people sitting, ' \
        'crouching or bending |'


def test_a_bf16_or_int8_evaluation_gets_its_column_and_relative_change():
    card = dict(reported=['mIoU'], baselines={'constant': {}},
                metrics=dict(trained={'mIoU': 20.0}, trained_bf16={'mIoU': 19.9}, untrained={'mIoU': 0.3},
                             constant={'mIoU': 3.6}))
    header, _, row = tool.metrics_table(card)
    assert header == '| metric | trained (fp16) | trained, run in bf16 | untrained | constant |'
    assert row == '| mIoU | 20 | 19.9 | 0.3 | 3.6 |'
    assert tool.relative_change(19.9, 20.0) == pytest.approx(-0.005)
    del card['metrics']['trained_bf16']
    assert tool.metrics_table(card)[0] == '| metric | trained (fp16) | untrained | constant |'
    card['metrics']['trained_int8'] = {'mIoU': 19.8}
    assert tool.metrics_table(card)[0] == '| metric | trained (fp16) | trained, run in int8 | untrained | constant |'
    assert tool.metrics_table(card)[2] == '| mIoU | 20 | 19.8 | 0.3 | 3.6 |'


@pytest.mark.parametrize('name', sorted(tool.CONTINUE_ITERS))
def test_init_shipped_continues_from_the_shipped_file_on_a_short_schedule(name):
    """--init shipped: the options load the shipped checkpoint and fit warm-up and decay into the shorter run."""
    from sapiens2.engine.launch import load_config
    cfg = load_config(str(REPO / tool.TASKS[name].config))
    checkpoint = f'sapiens2/demo_models/{tool.config_name(tool.TASKS[name])}.safetensors'
    from mmengine.config import DictAction  # how tools/train.py parses --cfg-options
    cfg.merge_from_dict({key: DictAction._parse_iterable(value)
                         for key, value in tool.continue_options(name, checkpoint).items()})
    iters = tool.CONTINUE_ITERS[name]
    assert cfg.load_from == checkpoint and (REPO / checkpoint).is_file()
    assert cfg.train_cfg.max_iters == iters == cfg.default_hooks.checkpoint.interval == cfg.param_scheduler[1].end
    assert [cfg.param_scheduler[0].end, cfg.param_scheduler[1].begin] == [tool.CONTINUE_WARMUP] * 2
    assert cfg.optim_wrapper.optimizer.lr == tool.CONTINUE_LR


def test_a_card_evaluated_on_another_set_says_which():
    trained_on = dict(tool.DATA, num_train=4000, seed=3, posture_ratio=0.6, size=[384, 288], root='data/p6')
    assert tool.same_set(trained_on, dict(trained_on, size=(384, 288)))
    evaluated_on = dict(tool.DATA, photo_ratio=0.5, posture_ratio=0.4, size=[384, 288], root='data/postures')
    assert not tool.same_set(evaluated_on, trained_on)
    assert tool.evaluation_text(dict(data=trained_on)) == []
    assert tool.evaluation_text(dict(data=trained_on, evaluation_data=evaluated_on))[0] == (
        'Evaluated on the 200 validation images of `data/postures` (seed 0, 50% of the images over real photos (the '
        'package photos), 40% of the people sitting, crouching or bending).')


def test_restamping_a_card_keeps_the_weights_and_the_other_metadata(tmp_path):
    from sapiens2.engine.checkpoint import read_checkpoint_file, save_weights
    path = str(tmp_path / 'pose.safetensors')
    weights = {'w': torch.arange(6, dtype=torch.float16).reshape(2, 3)}
    save_weights(weights, path, meta=dict(config='x = 1', model_card=dict(metrics=dict(old=1.0))))
    tool.restamp_card(path, dict(metrics=dict(new=2.0)))
    checkpoint = read_checkpoint_file(path)
    assert checkpoint['meta'] == dict(config='x = 1', model_card=dict(metrics=dict(new=2.0)))
    assert torch.equal(checkpoint['state_dict']['w'], weights['w'])


def test_the_card_of_an_average_lists_shared_trainings_once():
    root = dict(command='c0', data=dict(tool.DATA), training=dict(iterations=2400, cpu_s=3600.0), init='random')
    shared = dict(checkpoint='r0.safetensors', sha256='0' * 64, lr=1e-3, warmup_iters=20, its_card=root)
    parents = [dict(checkpoint=f'r{n}.safetensors', sha256=str(n) * 64,
                    its_card=dict(command=f'c{n}', data=dict(tool.DATA), training=dict(iterations=1200, cpu_s=1800.0),
                                  init=shared)) for n in (1, 2)]
    lines = tool.init_markdown(dict(average_of=parents))
    assert lines[0].startswith('Init: the mean of the weights of the 2 checkpoints below')
    assert '2.0 CPU hours, starting from random.' in lines[0]  # 3600 s once + 2 x 1800 s
    text = '\n'.join(lines)
    assert text.count('| `r0.safetensors` (000000000000) |') == 1
    assert lines[-1] == '... then the rows of checkpoint 1 from 000000000000 on.'
    card = dict(command='python tools/misc/train_demo_models.py --average a b', init=dict(average_of=parents),
                training=dict(iterations=0, averaged=2, wall_s=1.2, cpu_s=1.0, machine='x86_64, 2 cores'))
    assert tool.averaged(card) and tool.training_text(card).startswith('Made without training of its own: `python')


def test_average_into_writes_the_mean_as_the_work_dirs_last_checkpoint(tmp_path):
    from sapiens2.engine.checkpoint import load_weights, read_checkpoint_file, save_weights
    stems = []
    for n, value in ((1, 1.0), (2, 3.0)):
        (tmp_path / f'f{n}').mkdir()
        stems.append(str(tmp_path / f'f{n}' / 'pose'))
        save_weights({'w': torch.full((2,), value, dtype=torch.float16)}, stems[-1] + '.safetensors',
                     meta=dict(dataset_meta={'n': n}, model_card={'old': 1}))
        Path(stems[-1] + '.json').write_text(json.dumps(dict(command=f'c{n}', data={}, training={}, init='random',
                                                              metrics={'x': 1})))
    work_dir = tmp_path / 'work'
    work_dir.mkdir()
    parents = tool.average_into(str(work_dir), stems)
    last = (work_dir / 'last_checkpoint').read_text()
    assert torch.equal(load_weights(last)['w'], torch.full((2,), 2.0, dtype=torch.float16))
    assert read_checkpoint_file(last)['meta'] == {'dataset_meta': {'n': 1}}  # not the first file's card
    assert [p['its_card'] for p in parents] == [dict(command=f'c{n}', data={}, training={}, init='random')
                                                for n in (1, 2)]
    assert parents[1]['sha256'] == tool.file_sha256(stems[1] + '.safetensors')


@pytest.mark.parametrize('argv, message', [
    (['--average', 'sapiens2/demo_models'], 'needs two or more folders'),
    (['--average', 'sapiens2/demo_models', 'sapiens2/demo_models', '--skip-train'], 'does not go with --skip-train'),
    (['--tasks', 'seg', '--average', 'sapiens2/demo_models', 'nowhere'],
     'nowhere/sapiens2_tiny_seg_synthhumans-256x192.safetensors is missing'),
    (['--tasks', 'pose', '--init', 'shipped', '--start-dir', 'nowhere'],
     '--start-dir nowhere: nowhere/sapiens2_tiny_pose_synthhumans-256x192.safetensors is missing'),
    (['--mixed'], '--mixed trains pose, seg, matting from their shipped models'),
    (['--mixed', '--tasks', 'pose', '--init', 'shipped'], 'without --init or --average'),
])
def test_source_folders_are_checked_before_any_work(monkeypatch, argv, message):
    monkeypatch.setattr('sys.argv', ['train_demo_models.py', *argv])
    with pytest.raises(SystemExit, match=message):
        tool.check_source_folders(tool.parse_args())


def test_a_model_continued_from_a_mean_counts_the_trainings_of_both_chains():
    def made(n: int, init, cpu_s=1800.0) -> dict:
        return dict(checkpoint=f'r{n}.safetensors', sha256=str(n) * 64,
                    its_card=dict(command=f'c{n}', data=dict(tool.DATA), training=dict(iterations=2400, cpu_s=cpu_s),
                                  init=init))
    mean = dict(checkpoint='mean.safetensors', sha256='m' * 64,
                its_card=dict(command='--average', data=dict(tool.DATA),
                              training=dict(iterations=0, averaged=2, cpu_s=0.5),
                              init=dict(average_of=[made(1, 'random'), made(2, 'random', cpu_s=None)])))
    init = dict(made(3, dict(mean, lr=1e-3, warmup_iters=20)), lr=1e-3, warmup_iters=20)
    lines = tool.init_markdown(init)
    assert 'took at least 1.0 CPU hours' in lines[0]  # 1800 + 1800 + 0.5 s; r2 unmeasured
    assert lines[0].endswith("starting from the mean of 2 checkpoints (their chains are in the last row's card).")
    assert lines[-1] == '| `mean.safetensors` (mmmmmmmmmmmm) | 0 | 0 | the mean of 2 checkpoints (its card) |'


@pytest.mark.parametrize('name', sorted(tool.MIXED_CONFIGS))
def test_a_mixed_config_continues_the_shipped_model_of_its_task(name):
    """--mixed: the config starts from the task's shipped checkpoint, names its real data for the card, decays to 0 at
    its last iteration, and its model is the task's (the shipped file, read with the task's config, loads strictly)."""
    from sapiens2.engine.launch import load_config
    task = tool.TASKS[name]
    for module in task.imports:
        __import__(module)
    mixed, shipped = (load_config(str(REPO / path)) for path in (tool.MIXED_CONFIGS[name], task.config))
    assert mixed.load_from == f'sapiens2/demo_models/{tool.config_name(task)}.safetensors'
    assert (REPO / mixed.load_from).is_file() and 'CVPR' in mixed.real_data
    assert mixed.param_scheduler[-1].end == mixed.train_cfg.max_iters
    assert mixed.model == shipped.model


def test_the_card_of_a_mixed_training_names_its_real_photos_and_a_resumed_run(tmp_path):
    assert tool.real_data_text(dict(tool.DATA)) == []
    assert tool.real_data_text(dict(tool.DATA, real_data='LSPET')) == ['', 'Real photos mixed in: LSPET.']
    training = dict(iterations=3000, batch_size=8, wall_s=5.0, cpu_s=4.0, threads='1', load_average='1 -> 1',
                    machine='x86_64, 2 cores')
    card = dict(command='c', seed=0, training=training)
    assert 'resumed' not in tool.training_text(card)
    training['resumed_from'] = 'w/iter_3000.pth'
    assert tool.training_text(card).endswith('(resumed from `w/iter_3000.pth`: the times are of this run alone).')
    assert tool.last_checkpoint(str(tmp_path)) is None
    (tmp_path / 'last_checkpoint').write_text('w/iter_3000.pth')
    assert tool.last_checkpoint(str(tmp_path)) == 'w/iter_3000.pth'


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='PR_SET_PDEATHSIG and /proc are Linux\'s')
def test_a_killed_run_leaves_no_child_behind(tmp_path):
    """kill -9 of the tool ends its training child too: a rerun resumes in the same work dir, which a child left
    running would write into at the same time."""
    pid_file = tmp_path / 'child.pid'
    child = f'import os, time; open({str(pid_file)!r}, "w").write(str(os.getpid())); time.sleep(60)'
    parent = subprocess.Popen([sys.executable, '-c', (
        'import sys; sys.path.insert(0, {repo!r}); from tests.scripts import load_script; '
        'tool = load_script("tools/misc/train_demo_models.py"); '
        'tool.run_child([sys.executable, "-c", {child!r}], {log!r}, dict())').format(
            repo=str(REPO), child=child, log=str(tmp_path / 'child.log'))], cwd=REPO)
    deadline = time.time() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.time() < deadline and parent.poll() is None, 'the child did not start'
        time.sleep(0.1)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    child_pid = int(pid_file.read_text())
    while time.time() < deadline:
        try:
            with open(f'/proc/{child_pid}/stat') as f:
                if f.read().rsplit(')', 1)[1].split()[0] in 'ZX':  # ended, not yet reaped by its new parent
                    return
        except FileNotFoundError:
            return
        time.sleep(0.1)
    os.kill(child_pid, signal.SIGKILL)
    raise AssertionError('the child kept running after its parent was killed')
