"""The engine's checkpoint I/O imports no model class (the engine never imports models): importing
``sapiens2.engine.checkpoint`` and loading a file with it leaves ``sapiens2.models`` and ``sapiens2.hub`` unimported.
In a subprocess, for a clean ``sys.modules``; the parent packages are stubbed so that their ``__init__`` (which
imports everything to register it) does not run."""
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = '''
import os, sys, tempfile, types
for name, path in (('sapiens2', {root!r}), ('sapiens2.engine', {engine!r})):
    package = types.ModuleType(name)
    package.__path__ = [path]
    sys.modules[name] = package
import torch
from sapiens2.engine import checkpoint
model = torch.nn.Linear(2, 3)
with tempfile.TemporaryDirectory() as folder:
    weights = os.path.join(folder, 'w.safetensors')
    checkpoint.save_weights(model.state_dict(), weights, dict(dataset_meta=dict(classes=['a'])))
    checkpoint.load_model_weights(torch.nn.Linear(2, 3), weights)
    meta = checkpoint.read_model_checkpoint(model, weights)['meta']
    assert meta['dataset_meta']['classes'] == ['a']
print(sorted(m for m in sys.modules if m.startswith('sapiens2.')))
'''


def test_checkpoint_io_imports_no_model_and_no_hub():
    script = SCRIPT.format(root=str(REPO / 'sapiens2'), engine=str(REPO / 'sapiens2' / 'engine'))
    proc = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    imported = eval(proc.stdout.strip().splitlines()[-1])
    assert 'sapiens2.engine.checkpoint' in imported
    assert not [m for m in imported if m.startswith(('sapiens2.models', 'sapiens2.hub'))], imported
