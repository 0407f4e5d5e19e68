import pytest
import torch
from torch import nn

from sapiens2.models import Sapiens2
from sapiens2.models.backbones import sapiens2 as sapiens2_module
from sapiens2.models.layers.int8_linear import Int8Linear, TokenScaledInt8Linear, quantize_linears, quantize_rows
from sapiens2.utils.devices import torch_has_fbgemm

FBGEMM = pytest.mark.skipif(not torch_has_fbgemm(), reason='this torch has no fbgemm engine (x86-64 builds have it)')


def relative_l2(out: torch.Tensor, ref: torch.Tensor) -> float:
    return float((out.float() - ref.float()).norm() / ref.float().norm())


def test_rows_are_scaled_to_the_int8_range_and_back_within_half_a_step():
    x = torch.randn(5, 33) * torch.tensor([[0.01], [1.0], [100.0], [3.0], [0.5]])  # rows of very different sizes
    values, scale = quantize_rows(x)
    assert values.dtype == torch.int8 and scale.shape == (5, 1)
    assert values.abs().amax(dim=1).tolist() == [127] * 5  # each row uses the whole range
    assert torch.all((values.float() * scale - x).abs() <= scale / 2 + 1e-6)


@pytest.mark.parametrize('bias', [True, False])
@pytest.mark.parametrize('shape', [(1, 5, 3), (2, 7, 40, 24)])
def test_an_int8_linear_is_close_to_its_float_layer_and_keeps_the_input_dtype(bias, shape):
    torch.manual_seed(0)
    linear = nn.Linear(shape[-2], shape[-1], bias=bias)
    x = torch.randn(*shape[:-2], 9, shape[-2])
    int8 = Int8Linear(linear)
    with torch.no_grad():
        ref, out = linear(x), int8(x)
        assert out.shape == ref.shape and out.dtype == torch.float32
        assert relative_l2(out, ref) < 0.02
        assert int8(x.bfloat16()).dtype == torch.bfloat16
    assert int8.weight_t.dtype == torch.int8 and (int8.bias is None) == (not bias)


def test_quantize_linears_replaces_every_linear_of_the_blocks_and_the_features_stay_close():
    torch.manual_seed(0)
    backbone = Sapiens2(arch='sapiens2_tiny', img_size=(64, 48), out_type='featmap').eval()
    backbone.init_weights()
    x = torch.randn(1, 3, 64, 48)
    with torch.no_grad():
        ref = backbone(x)[-1]
        linears = sum(isinstance(m, nn.Linear) for m in backbone.blocks.modules())
        assert quantize_linears(backbone.blocks) == linears == 6 * len(backbone.blocks)  # q, k, v, proj, w12, w3
        assert not any(isinstance(m, nn.Linear) for m in backbone.blocks.modules())
        out = backbone(x)[-1]
    assert 0 < relative_l2(out, ref) < 0.03


def test_a_backbone_in_int8_compiles_its_blocks_unless_asked_not_to():
    backbone = Sapiens2(arch='sapiens2_tiny', img_size=(64, 48), fuse_qkv=True).eval()
    backbone.quantize_int8(compile=False, kernel='int_mm')
    assert not backbone.fuse_qkv and backbone.block_runner is None
    assert sum(isinstance(m, Int8Linear) for m in backbone.blocks.modules()) == 6 * len(backbone.blocks)
    backbone.quantize_int8(kernel='int_mm')  # again: nothing left to quantize, and now compiled
    assert backbone.block_runner is not None


@FBGEMM
@pytest.mark.parametrize('shape', [(1, 5, 3), (2, 7, 40, 24)])
def test_the_fbgemm_kernel_is_close_to_the_float_layer_on_tokens_of_any_size(shape):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(shape[-2], shape[-1]))
    x = torch.randn(*shape[:-2], 9, shape[-2])
    x[..., 0, :] *= 1000  # one token far larger than the others: a scale per call would flatten them
    with torch.no_grad():
        ref = model(x)
        assert quantize_linears(model, 'fbgemm') == 1 and isinstance(model[0], TokenScaledInt8Linear)
        out = model(x)
        assert model(x.bfloat16()).dtype == torch.bfloat16
    assert out.shape == ref.shape and out.dtype == torch.float32
    small = (slice(None), ) * (len(shape) - 2) + (slice(1, None), )
    assert 0 < relative_l2(out[small], ref[small]) < 0.03  # 7-bit tokens, 8-bit weights per output channel


@FBGEMM
def test_a_backbone_in_int8_takes_the_kernel_of_its_cpu(monkeypatch):
    """fbgemm (AVX2 without VNNI) runs eager and stays close to fp32; int_mm (VNNI, AMX) compiles."""
    torch.manual_seed(0)
    backbone = Sapiens2(arch='sapiens2_tiny', img_size=(64, 48), out_type='featmap').eval()
    backbone.init_weights()
    x = torch.randn(1, 3, 64, 48)
    with torch.no_grad():
        ref = backbone(x)[-1]
        monkeypatch.setattr(sapiens2_module, 'int8_kernel', lambda: 'fbgemm')
        backbone.quantize_int8()
        assert sum(isinstance(m, TokenScaledInt8Linear) for m in backbone.blocks.modules()) == 6 * len(backbone.blocks)
        assert backbone.block_runner is None
        out = backbone(x)[-1]
    assert 0 < relative_l2(out, ref) < 0.05
    other = Sapiens2(arch='sapiens2_nano', img_size=(64, 48)).eval()
    monkeypatch.setattr(sapiens2_module, 'int8_kernel', lambda: 'int_mm')
    monkeypatch.setattr(Sapiens2, 'compile_blocks', lambda self: setattr(self, 'compiled', True))
    other.quantize_int8()
    assert other.compiled and any(isinstance(m, Int8Linear) for m in other.blocks.modules())


def test_an_unknown_kernel_is_one_line():
    with pytest.raises(ValueError, match="int8 kernel 'vnni' is not one of int_mm, fbgemm"):
        quantize_linears(nn.Sequential(nn.Linear(3, 3)), 'vnni')
