"""The tiny normal config trains on SynthHumans and beats an untrained model and the best constant direction."""
import pytest
import torch.nn.functional as F

CONFIG = 'projects/normal/configs/sapiens2_nano_normal_synthhumans-128x96.py'


@pytest.mark.slow
def test_tiny_normal_training_beats_baselines(dense_training, synthhumans_root, tmp_path):
    import sapiens2_normal  # noqa: F401
    trained, untrained, samples = dense_training['runs'](CONFIG, synthhumans_root, tmp_path, 'normal/mean_angle')
    mean_direction = F.normalize(
        sum(s.gt_dense.data[:, s.gt_dense.mask[0]].sum(1) for s in samples), dim=0)
    constant = dense_training['evaluate'](
        dict(type='NormalMetric'), samples, lambda s: mean_direction.view(3, 1, 1).expand_as(s.gt_dense.data))
    angle = trained['normal/mean_angle']
    print(f'normal mean angle: trained {angle:.2f}, untrained {untrained["normal/mean_angle"]:.2f}, '
          f'constant {constant["mean_angle"]:.2f}')
    assert angle < 0.8 * untrained['normal/mean_angle']
    assert angle < 0.9 * constant['mean_angle']
