"""``benchmarks/gemm_rates.py``'s int8 peers compute the product they are timed for: ``torch._int_mm`` and oneDNN's
``qlinear``, rescaled, give the float product (no timing is asserted)."""
import pytest
import torch

from sapiens2.utils.devices import INT8_DOT_FLAGS, cpu_flags
from tests.scripts import load_script

gemm_rates = load_script('benchmarks/gemm_rates.py')


@pytest.mark.skipif(not set(cpu_flags()) & set(INT8_DOT_FLAGS), reason='no int8 dot products (VNNI/AMX) on this CPU')
def test_int8_peers_compute_the_product():
    torch.manual_seed(0)
    x, weight = torch.randn(64, 96).bfloat16(), torch.randn(48, 96)
    runs = gemm_rates.int8_peers(x, weight)
    values, scale = runs['int8: quantizing the input']()
    assert values.dtype == torch.int8 and values.shape == (64, 96) and scale.shape == (64, 1)
    _, weight_scale = gemm_rates.quantize_rows(weight)
    exact = x.float() @ weight.t()

    def rel_error(out: torch.Tensor) -> float:
        return float((out - exact).norm() / exact.norm())

    assert rel_error(runs['torch int8 (_int_mm)']().float() * scale * weight_scale.t()) < 0.02
    assert rel_error(runs['torch int8 (oneDNN qlinear)']().float() * scale) < 0.02  # weight scales applied inside
