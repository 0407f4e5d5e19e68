"""The batched torch UDP + DARK decode gives mmpose's UDPHeatmap coordinates within 0.01 px."""
import numpy as np
import pytest
import torch
from mmpose.codecs import UDPHeatmap
from mmpose.registry import KEYPOINT_CODECS

from sapiens2.codecs import FastUDPHeatmap, udp_dark_decode
from sapiens2.codecs.fast_udp_decode import MAX_DARK_STEP, heatmap_argmax

INPUT_SIZE, HEATMAP_SIZE = (96, 128), (24, 32)  # (w, h)


def gaussians(num: int, keypoints: int, rng, amp=(0.2, 1.0), sigma=(1.0, 4.0), noise=0.0, margin=3.0):
    """(num, K, 32, 24) Gaussian blobs, centres possibly a little outside the map, optional noise."""
    width, height = HEATMAP_SIZE
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    cx = rng.uniform(-margin, width - 1 + margin, (num, keypoints, 1, 1))
    cy = rng.uniform(-margin, height - 1 + margin, (num, keypoints, 1, 1))
    s = rng.uniform(*sigma, (num, keypoints, 1, 1))
    a = rng.uniform(*amp, (num, keypoints, 1, 1))
    maps = a * np.exp(-((xs - cx)**2 + (ys - cy)**2) / (2 * s**2))
    return (maps + rng.normal(0, noise, maps.shape)).astype(np.float32) if noise else maps.astype(np.float32)


def mmpose_decode(heatmaps: np.ndarray):
    codec = UDPHeatmap(input_size=INPUT_SIZE, heatmap_size=HEATMAP_SIZE, sigma=2)
    out = [codec.decode(h) for h in heatmaps]
    return np.concatenate([k for k, _ in out]), np.concatenate([s for _, s in out])


CASES = ['clean', 'noisy', 'faint', 'negative', 'mixed_sign']


@pytest.mark.parametrize('case', CASES)
def test_matches_mmpose(case):
    rng = np.random.default_rng(CASES.index(case))
    heatmaps = {
        'clean': lambda: gaussians(3, 17, rng),
        'noisy': lambda: gaussians(3, 17, rng, noise=0.02),
        'faint': lambda: gaussians(3, 17, rng, amp=(1e-4, 5e-3)),  # values clipped at 1e-3: exact slow path
        'negative': lambda: gaussians(3, 17, rng) - 2.0,  # maxima <= 0: mmpose's wrapped -1 look-ups
        'mixed_sign': lambda: gaussians(3, 17, rng, noise=0.05) - rng.uniform(0, 1.2, (3, 17, 1, 1)),
    }[case]()
    ref_kpts, ref_scores = mmpose_decode(heatmaps)
    kpts, scores = udp_dark_decode(torch.from_numpy(heatmaps), INPUT_SIZE)
    kpts = kpts.numpy()
    # mmpose's DARK step where it stays within MAX_DARK_STEP heatmap pixels of the maximum, else the maximum itself.
    factor = np.array([INPUT_SIZE[0] / (HEATMAP_SIZE[0] - 1), INPUT_SIZE[1] / (HEATMAP_SIZE[1] - 1)], np.float32)
    locs = heatmap_argmax(torch.from_numpy(heatmaps))[0].numpy()
    trusted = (np.abs(ref_kpts / factor - locs) <= MAX_DARK_STEP).all(-1)
    np.testing.assert_array_equal(kpts[~trusted], locs[~trusted] * factor)
    # Where a maximum is <= 0, mmpose's y step divides rounding noise by ~eps (see fast_udp_decode): compare x only.
    valid = ref_scores > 0
    np.testing.assert_allclose(kpts[valid & trusted], ref_kpts[valid & trusted], atol=1e-2, rtol=0)
    np.testing.assert_allclose(kpts[~valid & trusted][:, 0], ref_kpts[~valid & trusted][:, 0], atol=1e-2, rtol=0)
    assert not valid.any() or trusted[valid].mean() > 0.9  # the guard is for the odd nearly flat peak, not the rule
    np.testing.assert_allclose(scores.numpy(), ref_scores, rtol=1e-6)


def test_argmax_takes_the_first_maximum_and_marks_nonpositive():
    maps = torch.zeros(1, 3, 4, 5)
    maps[0, 0, 1, 3] = maps[0, 0, 2, 1] = 1.0  # tie: row-major first is (x=3, y=1)
    maps[0, 1, 3, 4] = 0.5
    maps[0, 2] = -1.0
    locs, vals = heatmap_argmax(maps)
    assert locs[0].tolist() == [[3, 1], [4, 3], [-1, -1]]
    assert vals[0].tolist() == [1.0, 0.5, -1.0]


@pytest.mark.parametrize('dtype', [torch.float16, torch.bfloat16, torch.float64])
def test_argmax_of_other_float_types_matches_float32(dtype):
    """The search on the bits read as integers holds for every float width, signs mixed."""
    rng = np.random.default_rng(7)
    maps = torch.from_numpy(gaussians(2, 9, rng, noise=0.05) - rng.uniform(0, 1.2, (2, 9, 1, 1))).to(dtype)
    maps[0, 0] = -0.0  # all negative zero: no location, maximum 0
    locs, vals = heatmap_argmax(maps)
    ref_locs, ref_vals = heatmap_argmax(maps.float())
    assert torch.equal(locs, ref_locs) and (vals <= 0).any() and (vals > 0).any()
    torch.testing.assert_close(vals.float(), ref_vals, rtol=0, atol=0)


def test_peaks_on_the_border_match_mmpose():
    heatmaps = np.zeros((1, 4, 32, 24), np.float32)
    ys, xs = np.mgrid[0:32, 0:24]
    for k, (x, y) in enumerate([(0, 0), (23, 31), (0, 17), (11, 31)]):
        heatmaps[0, k] = np.exp(-((xs - x - 0.3)**2 + (ys - y + 0.2)**2) / 8.0)
    kpts, _ = udp_dark_decode(torch.from_numpy(heatmaps), INPUT_SIZE)
    np.testing.assert_allclose(kpts.numpy(), mmpose_decode(heatmaps)[0], atol=1e-2)


def test_codec_is_registered_and_batch_decodes_like_decode():
    codec = KEYPOINT_CODECS.build(dict(type='FastUDPHeatmap', input_size=INPUT_SIZE, heatmap_size=HEATMAP_SIZE,
                                       sigma=2))
    assert isinstance(codec, FastUDPHeatmap) and codec.support_batch_decoding
    heatmaps = gaussians(2, 5, np.random.default_rng(3))
    keypoints, scores = codec.batch_decode(torch.from_numpy(heatmaps))
    assert len(keypoints) == 2 and keypoints[0].shape == (1, 5, 2) and scores[0].shape == (1, 5)
    for k, s, h in zip(keypoints, scores, heatmaps):
        ref_k, ref_s = codec.decode(h)
        np.testing.assert_allclose(k, ref_k, atol=1e-2)
        np.testing.assert_allclose(s, ref_s, rtol=1e-6)


def test_bad_shapes_are_rejected():
    with pytest.raises(ValueError, match='N, K, H, W'):
        udp_dark_decode(torch.zeros(3, 32, 24), INPUT_SIZE)


@pytest.mark.parametrize('dtype', [torch.bfloat16, torch.float16, torch.float32])
def test_a_runaway_dark_step_keeps_the_maximum(monkeypatch, dtype):
    """A low, nearly flat peak makes the log-Hessian near singular (a step of 2^18 px seen in bf16 inference, 1300 px
    in fp32 on a photo of noise): a step beyond MAX_DARK_STEP keeps the integer maximum, a smaller one is mmpose's."""
    from sapiens2.codecs import fast_udp_decode
    heatmaps = torch.zeros(1, 2, 16, 12, dtype=dtype)
    heatmaps[0, 0, 5, 4] = heatmaps[0, 1, 9, 7] = 0.5
    refine = fast_udp_decode.refine_dark_udp
    monkeypatch.setattr(fast_udp_decode, 'refine_dark_udp', lambda maps, locs, vals, kernel: refine(
        maps, locs, vals, kernel) + torch.tensor([[[0.0, 0.0], [0.0, 1e5]]]))  # keypoint 1 runs away
    keypoints, _ = udp_dark_decode(heatmaps, (12, 16))
    factor = torch.tensor([12 / 11, 16 / 15])
    assert torch.allclose(keypoints[0, 0], torch.tensor([4.0, 5.0]) * factor, atol=0.5)
    assert torch.equal(keypoints[0, 1], torch.tensor([7.0, 9.0]) * factor)
