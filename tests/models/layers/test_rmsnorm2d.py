import torch

from sapiens2.models.layers.rmsnorm2d import RMSNorm2d


def test_rmsnorm2d_normalises_channels_per_pixel_with_norm_weight_key():
    norm = RMSNorm2d(4)
    assert list(norm.state_dict()) == ['norm.weight']
    with torch.no_grad():
        norm.norm.weight.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    x = torch.randn(2, 4, 3, 5)
    rms = x.pow(2).mean(1, keepdim=True).add(1e-6).sqrt()
    expected = x / rms * norm.norm.weight.view(1, 4, 1, 1)
    torch.testing.assert_close(norm(x), expected, rtol=1e-5, atol=1e-5)
