"""The demo models shipped in sapiens2/demo_models: each embeds its committed config, loads strictly into it, beats
the untrained model and the best constant on a few fresh SynthHumans validation images, resolves as ``<task>-tiny``
offline, and the evaluation-only command re-computes the results table from the shipped files."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from mmengine.registry import DefaultScope

from tests.scripts import load_script

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / 'sapiens2' / 'demo_models'
MAX_TOTAL_BYTES = 25e6


tool = load_script('tools/misc/train_demo_models.py')
TASK_NAMES = sorted(tool.TASKS)  # every task ships a demo model


def shipped_file(name: str, suffix: str) -> Path:
    return SHIPPED / f'{tool.config_name(tool.TASKS[name])}{suffix}'


@pytest.fixture(scope='module')
def few_images(tmp_path_factory) -> str:
    """A fresh SynthHumans set at the demo size (another seed than the training set): 16 training images for the
    constants, 8 validation images."""
    from sapiens2.datasets.synthhumans import ensure_synthhumans
    root = tmp_path_factory.mktemp('synthhumans') / 'few'
    return ensure_synthhumans(str(root), num_train=16, num_val=8, size=tool.DATA['size'], seed=1)


def test_every_task_ships_a_checkpoint_and_cards_within_the_size_budget():
    sizes = [shipped_file(name, '.safetensors').stat().st_size for name in TASK_NAMES]
    assert sum(sizes) <= MAX_TOTAL_BYTES
    results = json.loads((SHIPPED / 'results.json').read_text())
    assert sorted(card['task'] for card in results) == TASK_NAMES
    table = (SHIPPED / 'results.md').read_text()
    for card in results:
        assert shipped_file(card['task'], '.md').read_text().startswith(f'# {card["name"]}\n')
        assert f'| {card["task"]} | {card["headline"]} |' in table
        assert card == json.loads(shipped_file(card['task'], '.json').read_text())
        assert set(card['metrics']) == set(tool.TASKS[card['task']].modes())


@pytest.mark.parametrize('name', TASK_NAMES)
def test_each_shipped_markdown_card_is_its_json_card_rendered(name):
    """The .md beside each checkpoint is what the tool writes from the .json (an averaged pose card included)."""
    card = json.loads(shipped_file(name, '.json').read_text())
    assert shipped_file(name, '.md').read_text() == tool.card_markdown(card)


@pytest.mark.parametrize('name', TASK_NAMES)
def test_shipped_checkpoint_embeds_its_committed_config_and_loads_strictly(name):
    from mmengine.registry import MODELS

    from sapiens2.engine.checkpoint import load_model_weights, read_checkpoint_file
    from sapiens2.engine.launch import load_config
    task = tool.TASKS[name]
    path = shipped_file(name, '.safetensors')
    checkpoint = read_checkpoint_file(str(path))
    assert checkpoint['meta']['config'] == (REPO / task.config).read_text()
    assert checkpoint['meta']['config_path'] == task.config
    card = json.loads(shipped_file(name, '.json').read_text())
    assert checkpoint['meta']['model_card']['metrics'] == card['metrics']
    assert all(v.dtype == torch.float16 for v in checkpoint['state_dict'].values() if v.is_floating_point())
    for module in task.imports:
        __import__(module)
    cfg = load_config(str(REPO / task.config))
    with DefaultScope.overwrite_default_scope(cfg.default_scope):
        model = MODELS.build(cfg.model)
    load_model_weights(model, str(path), strict=True)
    assert all(torch.isfinite(p).all() for p in model.state_dict().values() if p.is_floating_point())


def better(task, trained: float, other: float) -> bool:
    return trained > other if task.target[0] == '>=' else trained < other


# The metric compared on the few images: the headline one, except for pose, whose body PCK is 0.13 above the constant
# on the validation split (0.42 vs 0.29; docs/demo_models.md), too close to decide on 8 images: PCK over all 308
# keypoints (0.72 vs 0.38).
COMPARED = dict(pose='PCK')


@pytest.mark.slow
@pytest.mark.parametrize('name', TASK_NAMES)
def test_shipped_model_beats_the_untrained_model_and_the_constant(name, few_images, tmp_path):
    task = tool.TASKS[name]
    checkpoint = str(shipped_file(name, '.safetensors'))
    metric = COMPARED.get(name, task.headline)
    headline = {mode: tool.evaluate(name, mode, checkpoint, few_images, str(tmp_path / mode))['metrics'][metric]
                for mode in ('trained', 'untrained', 'constant')}
    assert better(task, headline['trained'], headline['untrained']), headline
    assert better(task, headline['trained'], headline['constant']), headline


@pytest.mark.slow
def test_evaluation_only_command_recomputes_the_table_from_the_shipped_files(few_images, tmp_path):
    out = tmp_path / 'out'
    subprocess.run([sys.executable, 'tools/misc/train_demo_models.py', '--shipped', '--tasks', 'albedo', 'seg',
                    '--jobs', '2', '--data-root', few_images, '--num-train', '16', '--num-val', '8', '--out', str(out)],
                   cwd=REPO, check=True, capture_output=True)
    cards = json.loads((out / 'results.json').read_text())
    shipped = json.loads(shipped_file('seg', '.json').read_text())
    assert [card['task'] for card in cards] == ['seg', 'albedo']  # both tasks of the two jobs, in table order
    card = cards[0]
    assert card['training'] == shipped['training'] and card['evaluation_data']['num_val'] == 8
    assert card['metrics']['trained']['mIoU'] > card['metrics']['constant']['mIoU']
    assert card['metrics'] != shipped['metrics']  # re-computed on the 8 images, not copied
    assert (out / 'results.md').read_text().splitlines()[2].startswith('| seg | mIoU | ')
    assert not (out / f'{card["name"]}.safetensors').exists()  # the shipped files stay where they are


def test_evaluation_only_command_never_writes_into_the_shipped_folder():
    result = subprocess.run([sys.executable, 'tools/misc/train_demo_models.py', '--shipped', '--out',
                             str(SHIPPED)], cwd=REPO, capture_output=True, text=True)
    assert result.returncode != 0 and 'is the shipped folder' in result.stderr


@pytest.mark.parametrize('name', TASK_NAMES)
def test_tiny_alias_resolves_to_the_shipped_file_offline(name, monkeypatch):
    from sapiens2.config.packaged import config_path
    from sapiens2.hub.model_zoo import resolve_model
    from sapiens2.hub.resolve import resolve_alias
    monkeypatch.setenv('HF_HUB_OFFLINE', '1')
    config, weights = resolve_model(f'{name}-tiny')
    assert Path(config).read_text() == (REPO / tool.TASKS[name].config).read_text()
    assert Path(config_path(f'sapiens2::{name}/{Path(tool.TASKS[name].config).name}')) == Path(config)
    assert Path(resolve_alias(weights)) == shipped_file(name, '.safetensors')


def test_sapiens2_models_lists_the_tiny_aliases(capsys):
    from sapiens2.cli import main
    assert main(['models']) == 0
    lines = {line.split('\t')[0]: line for line in capsys.readouterr().out.splitlines()}
    for name in TASK_NAMES:
        assert str(shipped_file(name, '.safetensors')) in lines[f'{name}-tiny']
    assert sorted(alias for alias in lines if alias.endswith('-tiny')) == [f'{name}-tiny' for name in TASK_NAMES]


@pytest.mark.slow
def test_sapiens2_infer_runs_a_tiny_alias_offline(few_images, tmp_path, monkeypatch):
    from sapiens2.apis.cli import main
    monkeypatch.setenv('HF_HUB_OFFLINE', '1')
    image = Path(few_images) / 'val' / 'rgb' / '000000.png'
    assert main([str(image), '--model', 'pose-tiny', 'seg-tiny', '--out', str(tmp_path), '--device', 'cpu',
                 '--quiet']) == 0
    assert (tmp_path / 'pose' / '000000.png').is_file() and (tmp_path / 'seg' / '000000.png').is_file()
