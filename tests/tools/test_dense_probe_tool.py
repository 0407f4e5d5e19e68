"""tools/dense_probe.py probes a config's backbone from an exported checkpoint and writes the result."""
import json
import math
import sys
from pathlib import Path

import pytest

from sapiens2.datasets.synthhumans import generate_synthhumans
from sapiens2_pretrain import export_backbone
from tests.projects.pretrain.conftest import build_tiny_pretrainer
from tests.scripts import load_script

REPO = Path(__file__).resolve().parents[2]
CONFIG = 'projects/pretrain/configs/sapiens2_nano_pretrain_synthhumans-128x96.py'


def _tool():
    return load_script('tools/dense_probe.py', 'dense_probe_tool')


@pytest.mark.parametrize('task', ['seg', 'depth'])
def test_cli_probes_an_exported_backbone(tmp_path, monkeypatch, capsys, task):
    root = generate_synthhumans(str(tmp_path / 'synth'), num_train=2, num_val=1, size=(32, 32))
    exported = str(tmp_path / 'nano.safetensors')
    export_backbone(build_tiny_pretrainer().state_dict(), exported, source='teacher')
    out = tmp_path / 'probe.json'
    monkeypatch.setattr(sys, 'argv', ['dense_probe.py', str(REPO / CONFIG), '--checkpoint', exported, '--task', task,
                                      '--data-root', root, '--size', '32', '32', '--steps', '2', '--num-train', '2',
                                      '--layers', 'last', '--out', str(out)])
    monkeypatch.chdir(REPO)
    _tool().main()
    result = json.loads(out.read_text())
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == result
    assert result['task'] == task and result['checkpoint'] == exported and result['num_train'] == 2
    assert result['settings']['steps'] == 2 and result['settings']['layers'] == 'last'
    assert math.isfinite(result['value']) and math.isfinite(result['constant_baseline'])
