"""The tiny albedo config trains on SynthHumans and beats an untrained model and the best constant colour."""
import pytest
import torch

CONFIG = 'projects/albedo/configs/sapiens2_nano_albedo_synthhumans-128x96.py'


@pytest.mark.slow
def test_tiny_albedo_training_beats_baselines(dense_training, synthhumans_root, tmp_path):
    import sapiens2_albedo  # noqa: F401
    trained, untrained, samples = dense_training['runs'](CONFIG, synthhumans_root, tmp_path, 'albedo/mae')
    mean_colour = torch.cat([s.gt_dense.data[:, s.gt_dense.mask[0]] for s in samples], dim=1).mean(1)
    constant = dense_training['evaluate'](dict(type='AlbedoMetric'), samples,
                                          lambda s: mean_colour.view(3, 1, 1).expand_as(s.gt_dense.data))
    mae = trained['albedo/mae']
    print(f'albedo MAE: trained {mae:.4f}, untrained {untrained["albedo/mae"]:.4f}, '
          f'constant colour {constant["mae"]:.4f}')
    assert mae < 0.8 * untrained['albedo/mae']
    assert mae < 0.9 * constant['mae']
