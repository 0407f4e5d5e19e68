"""tools/convert_checkpoint.py --to-transformers / --from-transformers (the file <-> file mode is tested in
tests/engine/test_checkpoint.py)."""
import contextlib
import io
import json
import os
import os.path as osp
import subprocess
import sys
import textwrap

import pytest
import torch

from sapiens2.engine.checkpoint import load_weights, save_weights
from sapiens2.interop.transformers import build_model
from tests.conftest import REPO_ROOT
from tests.scripts import load_script

POSE = 'configs/pose/sapiens2_nano_pose_synthhumans-128x96.py'


TOOL_MAIN = load_script('tools/convert_checkpoint.py', 'convert_checkpoint_tool').main


def run(*args):
    """Run the tool's main in this process; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = TOOL_MAIN(list(args))
        except SystemExit as exit_:
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def test_export_compare_and_import_back(hf, tmp_path):
    model = build_model(POSE, device='cpu')
    model.init_weights()
    official = {('decode_head.' + k[5:] if k.startswith('head.') else k): v for k, v in model.state_dict().items()}
    save_weights(official, str(tmp_path / 'pose.safetensors'))
    out = str(tmp_path / 'hf')
    code, stdout, _ = run(str(tmp_path / 'pose.safetensors'), '--to-transformers', out, '--config', POSE, '--compare')
    assert code == 0
    assert json.load(open(osp.join(out, 'config.json')))['architectures'] == ['Sapiens2ForPoseEstimation']
    line = next(x for x in stdout.splitlines() if x.startswith('max |ours - transformers| heatmaps'))
    assert 'bf16' in line and float(line.split(': ')[1].split()[0]) < 1e-2
    with pytest.raises(FileExistsError, match='--overwrite'):
        run(str(tmp_path / 'pose.safetensors'), '--to-transformers', out, '--config', POSE)
    code, stdout, _ = run(str(tmp_path / 'back.pth'), '--from-transformers', out, '--config', POSE)
    assert code == 0 and "pos_embed_rope_dtype='fp32'" in stdout
    back = load_weights(str(tmp_path / 'back.pth'))
    assert sorted(back) == sorted(official) and all(torch.equal(back[k], official[k]) for k in official)


def test_compare_in_float32_on_fp16_weights_with_rounded_rope_periods(hf, tmp_path):
    """As the shipped models: fp16 weights and bf16-rounded RoPE periods. The folder keeps fp16 unless --dtype says
    otherwise, and --compare with fp32 RoPE measures float32 rounding (the stored periods would give 3e-5, the fp16
    transformers model 1e-3)."""
    model = build_model(POSE, device='cpu')
    model.init_weights()
    for name, param in model.named_parameters():
        if name.endswith('attn.gamma.weight'):
            param.data.uniform_(0.1, 0.5, generator=torch.Generator().manual_seed(0))  # attention matters
    state = {('decode_head.' + k[5:] if k.startswith('head.') else k): v.half() for k, v in model.state_dict().items()}
    fp32_rope = build_model(POSE, backbone_only=True, device='cpu',
                            cfg_options={'model.backbone.pos_embed_rope_dtype': 'fp32'}).rope_embed.periods
    assert not torch.equal(state['backbone.rope_embed.periods'].float(), fp32_rope)  # bf16-rounded, as trained
    save_weights(state, str(tmp_path / 'fp16.safetensors'))
    code, stdout, _ = run(str(tmp_path / 'fp16.safetensors'), '--to-transformers', str(tmp_path / 'kept'),
                          '--config', POSE, '--compare', '--cfg-options', 'model.backbone.pos_embed_rope_dtype=fp32')
    assert code == 0 and '(float16 weights, as in the checkpoint; --dtype fp32 writes float32)' in stdout
    assert json.load(open(tmp_path / 'kept' / 'config.json'))['dtype'] == 'float16'
    line = next(x for x in stdout.splitlines() if x.startswith('max |ours - transformers| heatmaps'))
    assert line.endswith('(both in float32, the folder stores float16; RoPE tables in fp32 in both)')
    assert float(line.split(': ')[1].split()[0]) < 5e-6
    code, stdout, _ = run(str(tmp_path / 'fp16.safetensors'), '--to-transformers', str(tmp_path / 'fp32'),
                          '--config', POSE, '--dtype', 'fp32')
    assert code == 0 and '(float32 weights, --dtype fp32)' in stdout
    assert json.load(open(tmp_path / 'fp32' / 'config.json'))['dtype'] == 'float32'


@pytest.mark.parametrize('args, message', [
    (['a.pth', '--to-transformers', 'out'], 'need --config'),
    (['a.pth', 'b.pth', '--to-transformers', 'out', '--config', POSE], 'give one CKPT'),
    (['a.pth'], 'give SRC and DST'),
    (['a.pth', 'b.pth', '--compare'], '--compare goes with --to-transformers'),
    (['a.pth', 'b.pth', '--dtype', 'fp32'], '--dtype goes with --to-transformers'),
    (['a.pth', '--to-transformers', 'o', '--from-transformers', 'i', '--config', POSE], 'either'),
    (['a.pth', 'b.pth', '--average'], 'two or more SRC checkpoints and a DST'),
    (['a.pth', 'b.pth', 'c.pth', '--average', '--rename', 'a=b'], '--rename applies to file conversions only'),
    (['a.pth', '--average', '--to-transformers', 'o', '--config', POSE], 'convert the result in a second command'),
])
def test_argument_errors(args, message):
    code, _, stderr = run(*args)
    assert code == 2 and message in stderr


def test_average_writes_the_mean_with_the_first_files_meta_and_keeps_an_existing_dst(tmp_path):
    sources = []
    for scale in (1.0, 2.0, 6.0):
        sources.append(str(tmp_path / f'{scale}.safetensors'))
        save_weights({'w': torch.full((2, 2), scale)}, sources[-1], meta={'dataset_meta': {'scale': scale}})
    dst = str(tmp_path / 'mean.pth')
    code, out, _ = run(*sources, dst, '--average')
    assert code == 0 and 'mean of 3 checkpoints (1 tensors)' in out
    assert torch.equal(load_weights(dst)['w'], torch.full((2, 2), 3.0))
    assert torch.load(dst, weights_only=True)['meta'] == {'dataset_meta': {'scale': 1.0}}
    with pytest.raises(FileExistsError, match='already exists'):
        run(*sources[:2], dst, '--average')
    assert load_weights(dst)['w'][0, 0] == 3.0


def test_missing_folder_is_a_clear_error(hf, tmp_path):
    with pytest.raises(FileNotFoundError, match='is not a transformers model folder .no config.json.'):
        run(str(tmp_path / 'x.pth'), '--from-transformers', str(tmp_path / 'nothing'), '--config', POSE)


BLOCKED = textwrap.dedent('''
    import importlib.abc, sys
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split('.')[0] == 'transformers':
                raise ModuleNotFoundError(f'No module named {name!r} (blocked)', name=name)
    sys.meta_path.insert(0, Block())
    import pytest
    sys.exit(pytest.main(['-p', 'no:cacheprovider', '-q', '-rs',
                          'tests/interop/test_transformers.py::test_exported_weights_are_the_official_layout']))
''')


@pytest.mark.slow
@pytest.mark.parametrize('ci', ['', '1'])
def test_interop_tests_fail_under_ci_without_transformers(ci):
    """Without transformers the interop tests skip, except with CI set, where they fail."""
    env = {k: v for k, v in os.environ.items() if k != 'CI'}
    if ci:
        env['CI'] = ci
    result = subprocess.run([sys.executable, '-c', BLOCKED], capture_output=True, text=True, cwd=REPO_ROOT,
                            timeout=600, env=env)
    if ci:
        assert result.returncode != 0 and 'CI is set, so this is a failure' in result.stdout, result.stdout[-2000:]
    else:
        assert result.returncode == 0 and 'transformers is not installed' in result.stdout, result.stdout[-2000:]
