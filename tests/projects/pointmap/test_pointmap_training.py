"""The tiny pointmap config trains on SynthHumans and beats an untrained model and the best mean-depth plane."""
import pytest
import torch

CONFIG = 'projects/pointmap/configs/sapiens2_nano_pointmap_synthhumans-128x96.py'


def _plane(sample, depth: float) -> torch.Tensor:
    """A fronto-parallel plane at canonical depth ``depth`` along the exact GT pixel rays (X/Z, Y/Z)."""
    data, mask = sample.gt_dense.data, sample.gt_dense.mask[0]
    return torch.where(mask, data / data[2:].clamp(min=1e-6) * depth, torch.zeros_like(data))


@pytest.mark.slow
def test_tiny_pointmap_training_beats_baselines(dense_training, synthhumans_root, tmp_path):
    import sapiens2_pointmap  # noqa: F401
    trained, untrained, samples = dense_training['runs'](CONFIG, synthhumans_root, tmp_path, 'pointmap/l2_mean')
    depths = torch.cat([s.gt_dense.data[2][s.gt_dense.mask[0]] for s in samples])
    constant = dense_training['evaluate'](dict(type='PointmapMetric'), samples,
                                          lambda s: _plane(s, depths.mean().item()))
    l2, z_mae = trained['pointmap/l2_mean'], trained['pointmap/z_mae']
    print(f'pointmap L2: trained {l2:.4f}, untrained {untrained["pointmap/l2_mean"]:.4f}, '
          f'constant plane {constant["l2_mean"]:.4f}; Z MAE trained {z_mae:.4f}, plane {constant["z_mae"]:.4f}')
    assert l2 < 0.8 * untrained['pointmap/l2_mean']
    # Measured (500 iterations): L2 0.319 vs 0.336 for the plane on the exact GT rays, Z MAE 0.294 vs 0.329. The
    # tiny model learns per-image depth only slowly, so the L2 margin over the plane is small; depth is clearly better.
    assert l2 < constant['l2_mean']
    assert z_mae < 0.93 * constant['z_mae']
