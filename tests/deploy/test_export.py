"""Export of a tiny model to torch.export and ONNX, with the built-in parity check."""
import importlib.util
import json
from pathlib import Path

import pytest
import torch

from sapiens2.apis import init_model
from sapiens2.apis.backends.bundle import read_bundle
from sapiens2.deploy.export import (
    ExportableModel,
    ExportParityError,
    Tolerance,
    check_parity,
    export_model,
    export_onnx,
    rope_dtype,
    run_onnx,
    set_rope_dtype,
)
from tests.scripts import load_script

REPO = Path(__file__).resolve().parents[2]
SEG = str(REPO / 'configs' / 'seg' / 'sapiens2_nano_seg_synthhumans-128x96.py')
HAS_ORT = importlib.util.find_spec('onnxruntime') is not None and importlib.util.find_spec('onnxscript') is not None


@pytest.fixture(scope='module')
def model():
    torch.manual_seed(0)
    return init_model(SEG, device='cpu', cfg_options={'model.backbone.img_size': (64, 48)})


def test_preprocessing_in_the_graph_matches_the_data_preprocessor(model):
    pixels = torch.rand(1, 3, 64, 48) * 255
    wrapped = ExportableModel(model, include_preprocess=True)
    normalised = model.data_preprocessor(dict(inputs=[pixels[0].to(torch.uint8)]), False)['inputs']
    with torch.no_grad():
        expected = model(normalised, mode='tensor')
        actual = wrapped(pixels.to(torch.uint8).float())[0]
    torch.testing.assert_close(actual, expected)


def test_pt2_export_matches_eager_and_records_its_rope_mode(model, tmp_path):
    paths, meta = export_model(model, (64, 48), str(tmp_path / 'seg'), formats=['pt2'])
    assert meta['pt2_rope_dtype'] == 'torch.bfloat16'
    assert len(meta['dataset_meta']['classes']) == 29 == len(meta['dataset_meta']['palette'])  # the model's layout
    assert meta['parity'][0]['passed'] and max(meta['parity'][0]['max_abs_diff']) <= 1e-5
    program = torch.export.load(paths['pt2'])
    pixels = torch.rand(3, 3, 64, 48) * 255  # another batch size: the batch dimension is dynamic
    with torch.no_grad():
        expected = ExportableModel(model)(pixels)[0]
    torch.testing.assert_close(program.module()(pixels)[0], expected)
    assert expected.shape[:2] == (3, 29)


def test_parity_check_fails_loudly():
    ref = (torch.zeros(2, 3), )
    with pytest.raises(ExportParityError, match='differ'):
        check_parity('x', ref, [torch.full((2, 3), 1e-2)], Tolerance(1e-4, 1e-4))
    with pytest.raises(ExportParityError, match='shape'):
        check_parity('x', ref, [torch.zeros(3, 2)], Tolerance())


def test_fp32_rope_keeps_the_periods_and_changes_outputs_slightly(model):
    import copy
    fp32 = copy.deepcopy(model)
    assert set_rope_dtype(fp32, torch.float32) == 1 and rope_dtype(fp32) == torch.float32
    torch.testing.assert_close(fp32.backbone.rope_embed.periods, model.backbone.rope_embed.periods.float())
    x = torch.randn(1, 3, 64, 48)
    with torch.no_grad():
        diff = (fp32(x, mode='tensor') - model(x, mode='tensor')).abs().max().item()
    assert 0 < diff < 1.0


@pytest.mark.skipif(not HAS_ORT, reason='onnx export needs onnxscript + onnxruntime (requirements/optional.txt)')
def test_onnx_export_matches_fp32_rope_eager(bundles):
    """The seg bundle's export (the session fixture of tests/deploy/conftest.py) passed its parity check."""
    (report, ) = read_bundle(str(bundles['seg'][0])).manifest['parity']
    assert report['backend'] == 'onnxruntime (fp32 RoPE)' and report['passed']
    assert max(report['max_abs_diff']) <= min(report['bound']) and 'max_abs_diff_vs_bf16_rope_eager' in report['notes']


@pytest.mark.skipif(not HAS_ORT, reason='onnx export needs onnxscript + onnxruntime (requirements/optional.txt)')
def test_the_default_opset_fuses_attention_and_18_decomposes_it(bundles, model, tmp_path):
    """Opset 23 (the bundles'): one ``Attention`` and one ``RMSNormalization`` node per use; opset 18: the same
    function from primitive ops, for runtimes without opset 23."""
    import onnx

    from sapiens2.models.layers.attention import Attention

    folder = bundles['seg'][0]
    manifest = read_bundle(str(folder)).manifest
    nodes = [n.op_type for n in onnx.load(str(folder / manifest['onnx']['fp32'])).graph.node]
    blocks = sum(isinstance(m, Attention) for m in model.modules())
    assert manifest['onnx_opset'] == 23 and nodes.count('Attention') == blocks > 0 and 'RMSNormalization' in nodes

    torch.manual_seed(0)
    attention = Attention(32, 4).eval()
    x = torch.randn(2, 24, 32)
    paths = {opset: export_onnx(attention, x, str(tmp_path / f'attention{opset}.onnx'), opset=opset)
             for opset in (18, 23)}
    ops = {opset: {n.op_type for n in onnx.load(path).graph.node} for opset, path in paths.items()}
    assert 'Attention' in ops[23] and not {'Attention', 'RMSNormalization'} & ops[18] and 'Softmax' in ops[18]
    with torch.no_grad():
        expected = attention(x)
    for path in paths.values():
        torch.testing.assert_close(run_onnx(path, x)[0], expected, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match='ONNX opset 17 is not supported; choose from 18, 23'):
        export_onnx(attention, x, str(tmp_path / 'attention17.onnx'), opset=17)


def load_export_tool():
    return load_script('tools/deploy/export.py', 'export_tool')


def test_export_tool_prints_a_failed_parity_verdict(monkeypatch, tmp_path, capsys):
    tool = load_export_tool()

    def failing_export(*args, **kwargs):
        raise ExportParityError('torch.export outputs differ from eager: max abs diff [0.5] > bound [1e-05]')
    # the tool imports them when it runs (its --help imports no torch)
    monkeypatch.setattr('sapiens2.deploy.export.build_for_export',
                        lambda config, checkpoint, trust=None: (None, (64, 48)))
    monkeypatch.setattr('sapiens2.deploy.bundle.write_bundle', failing_export)
    monkeypatch.setattr('sys.argv', ['export.py', SEG, '--out', str(tmp_path / 'seg'), '--formats', 'pt2'])
    assert tool.main() == 1
    assert capsys.readouterr().out.strip() == ('parity: FAILED, torch.export outputs differ from eager: max abs diff '
                                               '[0.5] > bound [1e-05]')


@pytest.mark.slow
def test_export_tool_prints_the_parity_verdict(tmp_path):
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS='1')
    proc = subprocess.run([sys.executable, str(REPO / 'tools' / 'deploy' / 'export.py'), SEG, '--out',
                           str(tmp_path / 'seg'), '--formats', 'pt2'], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    verdict = [line for line in proc.stdout.splitlines() if line.startswith('parity ')]
    assert len(verdict) == 1 and verdict[0].startswith('parity torch.export: passed, max |exported - eager| ')
    manifest = json.loads((tmp_path / 'seg' / 'sapiens2_bundle.json').read_text())
    assert manifest['pt2'] == 'model.pt2' and manifest['onnx'] == {} and (tmp_path / 'seg' / 'model.pt2').is_file()


def test_two_exports_into_one_folder_at_once_leave_one_models_bundle(monkeypatch, tmp_path):
    """The second export waits for the first (the folder's run lock), saying so, so the bundle's manifest and model
    file come from one model; without the lock, the slow first export's manifest was written after the second's
    model file (a mixed bundle, exit 0 for both)."""
    import threading
    import time
    import warnings

    from sapiens2.apis.io.output_guard import OutputFolderBusyNotice
    tool = load_export_tool()
    names = iter(['slow', 'fast'])
    started = threading.Event()

    def write_bundle(model, folder, formats, **kwargs):
        (tmp_path / 'out' / 'model.pt2').write_text(model)
        started.set()
        time.sleep(0.6 if model == 'slow' else 0.05)
        (tmp_path / 'out' / 'sapiens2_bundle.json').write_text(json.dumps(dict(model=model, parity=[])))
        return dict(manifest=str(tmp_path / 'out' / 'sapiens2_bundle.json'))

    monkeypatch.setattr('sapiens2.deploy.export.build_for_export',
                        lambda config, checkpoint, trust=None: (next(names), (64, 48)))
    monkeypatch.setattr('sapiens2.deploy.bundle.write_bundle', write_bundle)
    monkeypatch.setattr('sys.argv', ['export.py', SEG, '--out', str(tmp_path / 'out'), '--formats', 'pt2'])
    codes = []
    threads = [threading.Thread(target=lambda: codes.append(tool.main())) for _ in range(2)]
    with warnings.catch_warnings(record=True) as caught:  # the warnings of both threads
        warnings.simplefilter('always')
        threads[0].start()
        started.wait(30)
        threads[1].start()
        for thread in threads:
            thread.join(30)
    said = [str(w.message) for w in caught if w.category is OutputFolderBusyNotice]
    manifest = json.loads((tmp_path / 'out' / 'sapiens2_bundle.json').read_text())
    assert codes == [0, 0] and manifest['model'] == (tmp_path / 'out' / 'model.pt2').read_text() == 'fast'
    assert len(said) == 1 and 'is being written by another sapiens2 run (pid' in said[0]
