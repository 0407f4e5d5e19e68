"""Matting metrics against hand-computed values on tiny arrays."""
import math

import numpy as np
import pytest
import torch
from mmengine.structures import PixelData
from sapiens2_matting import MattingMetric, connectivity_error, gradient_error, mse, sad
from sapiens2_matting.evaluation.matting_metric import gaussian_gradient_filters, largest_component

from sapiens2.structures import DenseDataSample


def test_sad_and_mse():
    pred, target = np.array([[0.5, 1.0, 0.2]]), np.array([[0.0, 1.0, 0.0]])
    everywhere, first = np.ones((1, 3), bool), np.array([[True, False, False]])
    assert sad(pred, target, everywhere) == pytest.approx(0.7 / 1000)
    assert sad(pred, target, first) == pytest.approx(0.5 / 1000)
    assert mse(pred, target, everywhere) == pytest.approx((0.25 + 0.04) / 3)
    assert mse(pred, target, first) == pytest.approx(0.25)
    assert mse(pred, target, np.zeros((1, 3), bool)) == 0.0


def test_gradient_filters_are_unit_norm_derivatives():
    filter_x, filter_y = gaussian_gradient_filters(1.4)
    assert filter_x.shape == (9, 9)  # half size ceil(1.4 sqrt(-2 ln(sqrt(2 pi) 1.4 / 100))) = 4
    assert (filter_x**2).sum() == pytest.approx(1.0)
    np.testing.assert_allclose(filter_x, -filter_x[:, ::-1])
    np.testing.assert_allclose(filter_y, filter_x.T)


def test_gradient_error_of_offsets_and_ramps():
    size, slope = 12, 0.05
    target = np.zeros((size, size))
    region = np.zeros((size, size), bool)
    region[4:8, 4:8] = True  # at least the filter half size (4) from every border
    assert gradient_error(target + 0.3, target, np.ones_like(region)) == pytest.approx(0.0, abs=1e-12)
    ramp = slope * np.tile(np.arange(size, dtype=np.float64), (size, 1))
    # On a ramp the x filter answers slope * sum_ij g(i) dg(j) j / norm, the y filter 0.
    sigma, half = 1.4, 4
    g = [math.exp(-u * u / (2 * sigma**2)) / (sigma * math.sqrt(2 * math.pi)) for u in range(-half, half + 1)]
    dg = [-u / sigma**2 * g[u + half] for u in range(-half, half + 1)]
    norm = math.sqrt(sum(a * a for a in g) * sum(b * b for b in dg))
    response = slope * sum(g) * sum(b * u for b, u in zip(dg, range(-half, half + 1))) / norm
    assert gradient_error(ramp, target, region) == pytest.approx(16 * response**2 / 1000, rel=1e-9)


def test_connectivity_error_by_hand():
    # Thresholds 0.1..0.5 keep pixels 0-1 connected (levels of pixels 2-3: 0); at 0.6 pixel 1 drops out (level 0.5);
    # pixel 0 never drops out (level 1). pred: d = [0, 0.05, 0, 0] -> phi = 1 everywhere; target: d = [0, 0.5, 0, 0]
    # -> phi = [1, 0.5, 1, 1]. Error 0.5 / 1000.
    pred, target = np.array([[1.0, 0.55, 0.0, 0.0]]), np.array([[1.0, 1.0, 0.0, 0.0]])
    assert connectivity_error(pred, target, np.ones((1, 4), bool)) == pytest.approx(0.5 / 1000)
    assert connectivity_error(pred, target, np.array([[True, False, True, True]])) == pytest.approx(0.0)
    assert connectivity_error(target, target, np.ones((1, 4), bool)) == 0.0


def test_largest_component_uses_4_connectivity():
    binary = np.array([[1, 0, 0], [0, 1, 1], [0, 1, 0]], bool)
    np.testing.assert_array_equal(largest_component(binary), [[0, 0, 0], [0, 1, 1], [0, 1, 0]])
    assert not largest_component(np.zeros((2, 2), bool)).any()


def sample(alpha_p, alpha_g, trimap, fg_p=0.3, fg_g=0.5):
    shape = np.shape(alpha_p)
    pred = torch.cat([torch.full((3, *shape), fg_p), torch.tensor(alpha_p, dtype=torch.float32)[None]])
    fg_g = torch.as_tensor(fg_g, dtype=torch.float32).expand(shape)
    target = torch.cat([torch.tensor(alpha_g, dtype=torch.float32)[None], fg_g[None].expand(3, *shape),
                        torch.tensor(trimap, dtype=torch.float32)[None]])
    s = DenseDataSample()
    s.gt_dense = PixelData(data=target, mask=torch.ones(1, *shape, dtype=torch.bool))
    s.pred_dense = PixelData(data=pred)
    return s.to_dict()


def test_metric_whole_image_unknown_region_and_foreground():
    metric = MattingMetric()
    metric.process({}, [sample([[0.5, 1.0]], [[0.0, 1.0]], [[0.5, 1.0]]),
                        sample([[0.2, 0.2]], [[0.0, 0.0]], [[0.0, 0.0]], fg_g=float('nan'))])
    results = metric.compute_metrics(metric.results)
    assert results['sad'] == pytest.approx((0.5 + 0.4) / 2 / 1000)
    assert results['mse'] == pytest.approx((0.125 + 0.04) / 2)
    assert results['sad_unknown'] == pytest.approx(0.5 / 1000)  # the second image has no unknown pixel
    assert results['mse_unknown'] == pytest.approx(0.25)
    assert results['fg_mse'] == pytest.approx(0.04)  # alpha > 0 on one pixel of the first image only
    assert set(results) == {'sad', 'mse', 'grad', 'conn', 'sad_unknown', 'mse_unknown', 'grad_unknown',
                            'conn_unknown', 'fg_mse'}
    assert MattingMetric.default_prefix == 'matting'
