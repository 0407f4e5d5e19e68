"""Which precisions run where (``sapiens2.utils.devices``): bf16 on the CPU only with native bf16, detected at run
time, with the heads included; int8 with the torch backend is one line naming ONNX Runtime."""
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from sapiens2.utils import devices
from sapiens2.utils.devices import DTYPES_BY_BACKEND_DEVICE, check_dtype, cpu_runs_bf16

REPO = Path(__file__).resolve().parents[2]
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')


@pytest.fixture
def cpu_flags(monkeypatch, tmp_path):
    """Pretend a CPU with the given /proc/cpuinfo flags (torch's probes say no)."""
    monkeypatch.setattr(torch.cpu, '_is_avx512_bf16_supported', lambda: False)
    monkeypatch.setattr(torch.cpu, '_is_amx_tile_supported', lambda: False)

    def set_flags(flags: str) -> None:
        (tmp_path / 'cpuinfo').write_text(f'processor\t: 0\nflags\t\t: {flags}\n')
        monkeypatch.setattr(devices, 'CPUINFO', str(tmp_path / 'cpuinfo'))
    return set_flags


def test_bf16_on_a_cpu_without_native_bf16_is_one_line(cpu_flags):
    cpu_flags('fpu sse avx2 avx512f avx512_vnni')
    assert not cpu_runs_bf16()
    with pytest.raises(ValueError) as error:
        check_dtype('bf16', 'cpu')
    message = str(error.value)
    assert '\n' not in message and message.startswith('dtype bf16 on the cpu needs a CPU with AVX512-BF16 or AMX')
    assert 'tools/deploy/export.py CONFIG [CHECKPOINT] --out FOLDER --int8), then run the bundle: --model FOLDER ' \
        '--dtype int8' in message
    check_dtype('fp32', 'cpu')
    check_dtype('bf16', 'cuda')  # the GPU is not the CPU


@pytest.mark.parametrize('flags', ['avx512f avx512_bf16', 'amx_bf16 amx_tile', 'fp asimd bf16'])
def test_bf16_runs_on_a_cpu_with_native_bf16(cpu_flags, flags):
    cpu_flags(flags)
    assert cpu_runs_bf16()
    check_dtype('bf16', 'cpu')


def test_torch_probe_alone_allows_bf16(monkeypatch, tmp_path):
    monkeypatch.setattr(torch.cpu, '_is_amx_tile_supported', lambda: True)
    monkeypatch.setattr(devices, 'CPUINFO', str(tmp_path / 'missing'))
    assert cpu_runs_bf16()


def test_int8_with_torch_names_the_onnxruntime_backend(monkeypatch):
    monkeypatch.setitem(DTYPES_BY_BACKEND_DEVICE, ('onnxruntime', 'cpu'), ('fp32', 'int8'))
    with pytest.raises(ValueError) as error:
        check_dtype('int8', 'cpu')
    message = str(error.value)
    assert '\n' not in message and message.startswith('dtype int8 does not run on the cpu with the torch backend')
    assert 'on the cpu, int8 runs an exported bundle: export the model first (python tools/deploy/export.py ' in message
    assert 'then run the bundle: --model FOLDER --dtype int8 (the onnxruntime backend)' in message
    check_dtype('int8', 'cpu', backend='onnxruntime')
    with pytest.raises(ValueError, match=r'int8 runs on cpu \(onnxruntime\) \(docs'):  # no backend runs it there
        check_dtype('int8', 'cuda')


def test_the_heads_run_in_bf16(monkeypatch):
    """Every convolution and linear layer of the pose head computes in bf16 under the task's autocast (no fp32 cast
    inside the head undoes it)."""
    from sapiens2.apis import build_task, init_model
    monkeypatch.setattr(devices, 'cpu_runs_bf16', lambda: True)
    model = init_model(POSE, device='cpu')
    task = build_task(model, model.cfg, dtype='bf16')
    dtypes = []
    for module in model.head.modules():
        if isinstance(module, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
            module.register_forward_hook(lambda m, args, out: dtypes.append(out.dtype))
    image = np.random.default_rng(0).integers(0, 255, (80, 60, 3), dtype=np.uint8)
    result = task.predict([image])[0]
    assert len(dtypes) >= 3 and set(dtypes) == {torch.bfloat16}
    assert np.isfinite(result['keypoints']).all()
