"""``RMSNorm``: ``nn.RMSNorm``'s keys and fp32 numerics, and torch's fused kernel for bf16 inputs under autocast (no
"Mismatch dtype between input and weight" fallback); attention casts its input to bf16 once for q, k and v."""
import torch
import torch.nn.functional as F
from torch import nn

from sapiens2.models import Sapiens2
from sapiens2.models.layers import Attention, RMSNorm
from sapiens2.models.layers import attention as attention_module
from sapiens2.models.layers import rmsnorm as rmsnorm_module


def spy_rms_norm(monkeypatch) -> list:
    """Record (input dtype, weight dtype) of every ``F.rms_norm`` our norms call."""
    calls = []

    def rms_norm(x, shape, weight=None, eps=None):
        calls.append((x.dtype, None if weight is None else weight.dtype))
        return F.rms_norm(x, shape, weight, eps)
    monkeypatch.setattr(rmsnorm_module, 'F', type('F', (), dict(rms_norm=staticmethod(rms_norm))))
    return calls


def test_fp32_is_nn_rmsnorm_exactly():
    torch.manual_seed(0)
    ours, theirs = RMSNorm(16, eps=1e-6), nn.RMSNorm(16, eps=1e-6)
    nn.init.uniform_(theirs.weight, 0.5, 1.5)
    ours.load_state_dict(theirs.state_dict())
    assert list(ours.state_dict()) == ['weight']
    x = torch.randn(3, 5, 16)
    assert torch.equal(ours(x), theirs(x))


def test_a_bf16_input_runs_the_fused_kernel_in_bf16(monkeypatch):
    calls = spy_rms_norm(monkeypatch)
    norm = RMSNorm(64, eps=1e-6)
    nn.init.uniform_(norm.weight, 0.5, 1.5)
    x = torch.randn(2, 8, 64) * 3
    out = norm(x.bfloat16())
    assert out.dtype == torch.bfloat16 and calls[-1] == (torch.bfloat16, torch.bfloat16)
    ref = F.rms_norm(x.bfloat16().float(), (64, ), norm.weight, 1e-6)
    assert float((out.float() - ref).norm() / ref.norm()) < 1e-2  # bf16 rounding of the scale and the result


def test_attention_casts_its_input_once_and_bitwise_as_autocast_would(monkeypatch):
    torch.manual_seed(0)
    attn = Attention(64, 4).eval()
    x = torch.randn(2, 10, 64)
    casts = []
    original = attention_module._in_autocast_dtype
    monkeypatch.setattr(attention_module, '_in_autocast_dtype', lambda t: casts.append(t.dtype) or original(t))
    with torch.no_grad(), torch.autocast('cpu', dtype=torch.bfloat16):
        once = attn(x)
        monkeypatch.setattr(attention_module, '_in_autocast_dtype', lambda t: t)  # each projection casts
        per_projection = attn(x)
    assert casts == [torch.float32] and once.dtype == torch.bfloat16 and torch.equal(once, per_projection)
    assert attention_module._in_autocast_dtype(x) is x  # without autocast: untouched


def test_a_bf16_forward_of_the_tiny_backbone_stays_on_bf16_kernels(monkeypatch):
    """Every norm of a bf16 activation (QK-norm) meets a bf16 scale; the fp32 residual stream (the official autocast
    flow: fp32 tokens, LayerScale and sums) is normed in fp32; every projection computes in bf16."""
    calls = spy_rms_norm(monkeypatch)
    torch.manual_seed(0)
    backbone = Sapiens2(arch='sapiens2_tiny', img_size=(64, 48), out_type='featmap').eval()
    backbone.init_weights()
    outputs = []
    for module in backbone.modules():
        if isinstance(module, nn.Linear) or module in {b.attn.q_norm for b in backbone.blocks}:
            module.register_forward_hook(lambda m, args, out: outputs.append(out.dtype))
    x = torch.randn(1, 3, 64, 48)
    with torch.no_grad():
        fp32 = backbone(x)[-1]
        outputs.clear()
        calls.clear()
        with torch.autocast('cpu', dtype=torch.bfloat16):
            bf16 = backbone(x)[-1]
    assert calls and all(weight == dtype for dtype, weight in calls), calls
    assert (torch.bfloat16, torch.bfloat16) in calls and set(outputs) == {torch.bfloat16}
    assert float((bf16.float() - fp32).norm() / fp32.norm()) < 0.05
