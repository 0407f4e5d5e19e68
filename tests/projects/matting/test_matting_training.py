"""The tiny matting config trains on SynthHumans and beats an untrained model and the best constant alpha on the
trimap's unknown region."""
import pytest
import torch
from sapiens2_matting.matting_channels import split_target, unknown_region

CONFIG = 'projects/matting/configs/sapiens2_nano_matting_synthhumans-128x96.py'


def with_alpha(sample, alpha):
    target = split_target(sample.gt_dense.data)
    return torch.cat([target.foreground.nan_to_num(0.0), alpha(target.alpha)])


@pytest.mark.slow
@pytest.mark.timeout(2400)  # 500 iterations: about 7 minutes on a shared 2-core machine
def test_tiny_matting_training_beats_baselines(dense_training, synthhumans_root, tmp_path):
    trained, untrained, samples = dense_training['runs'](CONFIG, synthhumans_root, tmp_path, 'matting/sad_unknown',
                                                         timeout=1800)
    unknown = [split_target(s.gt_dense.data) for s in samples]
    mean_alpha = torch.cat([t.alpha[unknown_region(t.trimap)] for t in unknown]).mean().item()
    metric = dict(type='MattingMetric')
    constant = dense_training['evaluate'](metric, samples,
                                          lambda s: with_alpha(s, lambda a: torch.full_like(a, mean_alpha)))
    hard = dense_training['evaluate'](metric, samples, lambda s: with_alpha(s, lambda a: (a > 0.5).float()))
    sad = trained['matting/sad_unknown']
    print(f'matting SAD (unknown region): trained {sad:.3f}, untrained {untrained["matting/sad_unknown"]:.3f}, '
          f'constant {mean_alpha:.3f}: {constant["sad_unknown"]:.3f}, hard mask {hard["sad_unknown"]:.3f}')
    assert sad < 0.8 * untrained['matting/sad_unknown']
    assert sad < 0.9 * constant['sad_unknown']
