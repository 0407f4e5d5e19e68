"""Which precisions run where (``sapiens2.utils.devices``): bf16 on the CPU only with native bf16, detected at run
time, with the heads included; int8 with either backend on the CPU."""
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from sapiens2.utils import devices
from sapiens2.utils.devices import check_dtype, cpu_runs_bf16

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
    assert 'run --dtype fp32, or int8: --dtype int8 on a CPU with AVX2 or VNNI, else export the model first' in message
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


@pytest.mark.parametrize('flags', ['avx2 avx512f avx512_vnni', 'avx2 avx_vnni', 'amx_tile amx_int8'])
def test_int8_with_torch_runs_on_a_cpu_with_int8_dot_products(cpu_flags, flags):
    cpu_flags(flags)
    check_dtype('int8', 'cpu')


@pytest.mark.parametrize('flags, kernel', [('avx2 avx512f avx512_vnni', 'int_mm'), ('avx2 avx_vnni', 'int_mm'),
                                           ('fpu sse avx2 fma', 'fbgemm'), ('fp asimd bf16', None)])
def test_the_int8_kernel_follows_the_cpu(cpu_flags, flags, kernel):
    cpu_flags(flags)
    assert devices.int8_kernel() == kernel


def test_int8_with_torch_on_avx2_runs_only_with_torchs_fbgemm_engine(cpu_flags, monkeypatch):
    cpu_flags('fpu sse avx2 fma')
    check_dtype('int8', 'cpu')  # fbgemm's AVX2 kernels
    monkeypatch.setattr(devices, 'torch_has_fbgemm', lambda: False)
    with pytest.raises(ValueError, match='needs a CPU with AVX2 \\(and a torch with the fbgemm engine\\)'):
        check_dtype('int8', 'cpu')


def test_int8_with_torch_on_a_cpu_without_avx2_or_int8_dot_products_names_onnxruntime(cpu_flags):
    cpu_flags('fpu sse sse4_2')
    with pytest.raises(ValueError) as error:
        check_dtype('int8', 'cpu')
    message = str(error.value)
    assert '\n' not in message and message.startswith('dtype int8 with the torch backend needs a CPU with AVX2')
    assert 'export the model first (python tools/deploy/export.py CONFIG [CHECKPOINT] --out FOLDER --int8), then ' \
        'run the bundle: --model FOLDER --dtype int8 (the onnxruntime backend)' in message
    check_dtype('int8', 'cpu', backend='onnxruntime')


def test_int8_names_where_it_runs_on_a_gpu(cpu_flags):
    cpu_flags('avx512f avx512_vnni')
    check_dtype('int8', 'cpu', backend='onnxruntime')
    with pytest.raises(ValueError) as error:
        check_dtype('int8', 'cuda')
    message = str(error.value)
    assert '\n' not in message and message.startswith('dtype int8 does not run on the cuda with the torch backend')
    assert 'int8 runs on cpu (torch), cpu (onnxruntime) (docs' in message


@pytest.mark.parametrize('native_bf16, autocast', [(True, torch.bfloat16), (False, None)])
def test_int8_quantizes_the_backbone_and_runs_the_rest_in_bf16_where_native(monkeypatch, native_bf16, autocast):
    """The task's model gets int8 linear layers in its backbone's blocks and compiled blocks; what is not int8 runs
    under bf16 autocast on a CPU with native bf16, else in fp32; the keypoints stay close to fp32's."""
    from sapiens2.apis import build_task, init_model
    from sapiens2.hub.model_zoo import resolve_model
    from sapiens2.models.layers.int8_linear import Int8Linear
    monkeypatch.setattr(devices, 'cpu_runs_bf16', lambda: native_bf16)
    monkeypatch.setattr(devices, 'cpu_flags', lambda: ('avx2', 'avx512_vnni'))
    assert devices.autocast_dtype('int8') == autocast
    image = np.random.default_rng(0).integers(0, 255, (120, 90, 3), dtype=np.uint8)
    model = init_model(*resolve_model('pose-tiny'), device='cpu')
    reference = build_task(model, model.cfg, dtype='fp32').predict([image])[0]
    task = build_task(model, model.cfg, dtype='int8')
    blocks = model.backbone.blocks
    assert not any(isinstance(m, nn.Linear) for m in blocks.modules())
    assert sum(isinstance(m, Int8Linear) for m in blocks.modules()) == 6 * len(blocks)
    assert model.backbone.block_runner is not None and not model.backbone.fuse_qkv
    monkeypatch.setattr(model.backbone, 'block_runner', None)  # eager here: compiling takes a test's time
    result = task.predict([image])[0]
    distance = np.linalg.norm(result['keypoints'] - reference['keypoints'], axis=-1)
    assert 0 < distance.max() and np.median(distance) < 0.5  # int8 ran, near fp32 (pixels)


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


# ------------------------------------------------------------------------------------------------ dtype auto
@pytest.mark.parametrize('flags, expected, feature', [
    ('fpu avx2 avx512f avx512_vnni avx512_bf16', 'bf16', 'avx512_bf16'),
    ('avx512f amx_tile amx_bf16', 'bf16', 'amx_bf16'),
    ('fpu sse avx2 avx512f avx512_vnni', 'fp32', None),
])
def test_auto_on_the_cpu_follows_native_bf16(cpu_flags, flags, expected, feature):
    cpu_flags(flags)
    dtype, why = devices.resolve_dtype('auto', 'cpu')
    assert dtype == expected
    assert (feature in why) if feature else 'no native bf16' in why


GOOD = devices.Int8Measurement(0.3, 1.5, 'somewhere')


@pytest.mark.parametrize('flags, measured, expected', [
    ('fpu avx2 fma', {'avx2': GOOD}, 'int8'),
    ('fpu avx2 fma', {}, 'fp32'),  # not measured on this class
    ('fpu avx2 fma', {'avx2': GOOD._replace(metric_change=1.2)}, 'fp32'),  # beyond the accuracy bound
    ('fpu avx2 fma', {'avx2': GOOD._replace(speedup=0.97)}, 'fp32'),  # slower than fp32
    ('avx2 avx512f avx512_vnni', {'avx2': GOOD}, 'fp32'),  # another class (compiled per-token int8)
    ('avx2 avx512f avx512_vnni avx512_bf16', {'avx2': GOOD, 'avx512_bf16': GOOD}, 'bf16'),  # native bf16 first
    ('fp asimd', {'avx2': GOOD}, 'fp32'),
])
def test_auto_picks_int8_by_the_cpu_class_and_what_int8_measured_there(cpu_flags, monkeypatch, flags, measured,
                                                                       expected):
    cpu_flags(flags)
    monkeypatch.setattr(devices, 'INT8_MEASURED', measured)
    dtype, why = devices.resolve_dtype('auto', 'cpu')
    assert dtype == expected, why
    if expected == 'int8':
        assert why.startswith('the CPU has no native bf16') and '0.30 %' in why and '1.50x' in why
    elif expected == 'fp32' and measured.get('avx2') not in (None, GOOD):
        assert 'not within 1 % and faster' in why


def test_the_shipped_measurements_hold_where_auto_uses_them():
    """The figures ``auto`` reads are the ones docs/performance.md states, and within the bound it applies."""
    for kind, measured in devices.INT8_MEASURED.items():
        assert measured.metric_change <= devices.AUTO_METRIC_CHANGE and measured.speedup > 1, kind


def test_auto_trusts_torchs_probe(monkeypatch, tmp_path):
    monkeypatch.setattr(torch.cpu, '_is_amx_tile_supported', lambda: False)
    monkeypatch.setattr(torch.cpu, '_is_avx512_bf16_supported', lambda: True)
    monkeypatch.setattr(devices, 'CPUINFO', str(tmp_path / 'missing'))
    assert devices.resolve_dtype('auto', 'cpu') == ('bf16', 'the CPU computes bf16 natively: avx512_bf16')


@pytest.mark.parametrize('capability, expected', [((9, 0), 'bf16'), ((8, 0), 'bf16'), ((7, 5), 'fp32')])
def test_auto_on_a_gpu_follows_its_compute_capability(monkeypatch, capability, expected):
    asked = []
    monkeypatch.setattr(torch.cuda, 'get_device_capability', lambda index=None: asked.append(index) or capability)
    monkeypatch.setattr(torch.cuda, 'get_device_name', lambda index=None: 'Some GPU')
    dtype, why = devices.resolve_dtype('auto', 'cuda:1')
    assert dtype == expected and why.startswith('Some GPU') and asked == [1]


@pytest.mark.parametrize('device, precisions, expected', [
    ('cpu', ('fp32', 'int8'), 'int8'), ('cpu', ('fp32', ), 'fp32'), ('cuda', ('fp32', 'int8'), 'fp32')])
def test_auto_with_a_bundle_follows_its_precisions(device, precisions, expected):
    dtype, why = devices.resolve_dtype('auto', device, 'onnxruntime', precisions)
    assert dtype == expected
    if device == 'cpu' and expected == 'fp32':
        assert '--int8' in why


def test_an_explicit_dtype_is_checked_not_replaced(cpu_flags):
    cpu_flags('avx512f avx512_bf16')
    assert devices.resolve_dtype('fp32', 'cpu') == ('fp32', '')
    with pytest.raises(ValueError, match='dtype fp16 does not run on the cpu'):
        devices.resolve_dtype('fp16', 'cpu')
    with pytest.raises(ValueError, match="backend 'tensorrt' is not known"):
        devices.resolve_dtype('auto', 'cpu', 'tensorrt')


def test_the_auto_line_groups_models_by_choice():
    assert devices.auto_dtype_line([('a', 'bf16', 'why')]) == 'dtype auto -> bf16 (why)'
    line = devices.auto_dtype_line([('a', 'bf16', 'x'), ('b', 'int8', 'y'), ('c', 'bf16', 'x')])
    assert line == 'dtype auto -> bf16 for a, c (x); int8 for b (y)'


def test_cpu_summary_names_the_model_and_the_speed_flags(monkeypatch, tmp_path):
    (tmp_path / 'cpuinfo').write_text('processor\t: 0\nmodel name\t: AMD EPYC 9B14\nflags\t\t: fpu avx2 avx512f '
                                      'avx512_bf16 sse4_2\n')
    monkeypatch.setattr(devices, 'CPUINFO', str(tmp_path / 'cpuinfo'))
    assert devices.cpu_summary() == 'AMD EPYC 9B14; flags: avx2 avx512f avx512_bf16'


TINY_MODELS = {
    'pose': 'configs/pose/sapiens2_tiny_pose_synthhumans-256x192.py',
    'seg': 'configs/seg/sapiens2_tiny_seg_synthhumans-256x192.py',
    'normal': 'projects/normal/configs/sapiens2_tiny_normal_synthhumans-256x192.py',
}
#: Relative L2 error of the shipped tiny models' outputs (pose heatmaps, seg logits, normals) in bf16 against fp32 on
#: this test's input (measured about 0.011, 0.007 and 0.005 on an AMD EPYC with AVX512-BF16).
BF16_HEATMAP_TOLERANCE = 0.03
#: Share of seg pixels with the same label in bf16 and fp32 (measured 0.988).
BF16_SEG_LABELS_SAME = 0.97


@pytest.mark.skipif(not cpu_runs_bf16(), reason='the CPU computes bf16 natively only with AVX512-BF16 or AMX')
@pytest.mark.parametrize('task', sorted(TINY_MODELS))
def test_bf16_stays_close_to_fp32_on_the_tiny_models(task):
    from sapiens2.apis import init_model
    weights = REPO / 'sapiens2' / 'demo_models' / f'sapiens2_tiny_{task}_synthhumans-256x192.safetensors'
    model = init_model(str(REPO / TINY_MODELS[task]), str(weights), device='cpu')
    image = torch.from_numpy(np.random.default_rng(0).normal(0, 1, (1, 3, 256, 192)).astype(np.float32))
    with torch.no_grad():
        fp32 = model(image, None, mode='tensor')
        with torch.autocast('cpu', dtype=torch.bfloat16):
            bf16 = model(image, None, mode='tensor')
    fp32, bf16 = (out[0] if isinstance(out, (tuple, list)) else out for out in (fp32, bf16))
    error = float((bf16.float() - fp32).norm() / fp32.norm())
    assert error < BF16_HEATMAP_TOLERANCE, error
    if task == 'seg':
        assert float((bf16.float().argmax(1) == fp32.argmax(1)).float().mean()) > BF16_SEG_LABELS_SAME


#: Relative L2 error of the shipped pose-tiny's heatmaps against fp32 on rendered people, per CPU precision of the
#: torch backend: the tolerance each is stated to compute fp32's function within (docs/inference.md, lower precision
#: on the CPU). ONNX Runtime's fp32 and int8 are checked against the same function in tests/deploy (test_export.py,
#: test_quantize.py: int8 < 0.05).
PRECISION_REL_L2 = {'bf16': 0.03, 'int8 int_mm': 0.05, 'int8 fbgemm': 0.05}


@pytest.fixture(scope='module')
def pose_tiny_on_people():
    """The shipped pose-tiny, its fp32 heatmaps and its normalised input: two rendered SynthHumans scenes, whose
    peaked heatmaps make the error meaningful (on noise its near-flat heatmaps are mostly rounding noise)."""
    from mmengine.model import ImgDataPreprocessor

    from sapiens2.apis import init_model
    from sapiens2.datasets.synthhumans.render import render_image
    from sapiens2.datasets.synthhumans.scene import sample_scene
    from sapiens2.hub.model_zoo import resolve_model
    model = init_model(*resolve_model('pose-tiny'), device='cpu')
    images = [render_image(sample_scene(np.random.default_rng(seed), (256, 192))) for seed in (3, 4)]
    inputs = [torch.from_numpy(image).permute(2, 0, 1).contiguous() for image in images]
    x = ImgDataPreprocessor.forward(model.data_preprocessor, dict(inputs=inputs), False)['inputs']  # normalised
    with torch.no_grad():
        fp32 = model(x, None, mode='tensor')
    return model, x, fp32


@pytest.mark.parametrize('precision', sorted(PRECISION_REL_L2))
def test_every_cpu_precision_computes_the_fp32_function_within_its_tolerance(pose_tiny_on_people, precision):
    import copy
    model, x, fp32 = pose_tiny_on_people
    model = copy.deepcopy(model)
    if precision.startswith('int8'):
        kernel = precision.split()[1]
        if kernel == 'fbgemm' and not devices.torch_has_fbgemm():
            pytest.skip('this torch has no fbgemm engine')
        model.backbone.quantize_int8(compile=False, kernel=kernel)
    with torch.no_grad(), torch.autocast('cpu', dtype=torch.bfloat16, enabled=precision == 'bf16'):
        out = model(x, None, mode='tensor')
    error = float((out.float() - fp32).norm() / fp32.norm())
    assert 0 < error < PRECISION_REL_L2[precision], error  # another precision ran, and computed fp32's function
