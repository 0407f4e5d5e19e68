"""DINOv2's photometric augmentations of the multi-crop views (MultiViewCrop): the official values by default, and
each augmentation's effect and probability on constructed images."""
import numpy as np
import pytest
import torch
from torchvision.transforms import v2 as T

from sapiens2_pretrain.datasets import MultiViewCrop

SIZE = (16, 16)
OFF = dict(flip_prob=0.0, color_jitter_prob=0.0, grayscale_prob=0.0, global_blur_probs=(0.0, 0.0), local_blur_prob=0.0,
           solarize_prob=0.0)
DRAWS = 400


def _probabilities(compose: T.Compose) -> dict:
    """{augmentation: probability} of one view's transform."""
    found = {}
    for t in compose.transforms:
        if isinstance(t, T.RandomApply):
            found[type(t.transforms[0]).__name__] = t.p
        elif isinstance(t, (T.RandomHorizontalFlip, T.RandomGrayscale, T.RandomSolarize)):
            found[type(t).__name__] = t.p
    return found


def test_defaults_are_dinov2s():
    t = MultiViewCrop()
    colour = dict(RandomHorizontalFlip=0.5, ColorJitter=0.8, RandomGrayscale=0.2)
    assert _probabilities(t.global_transforms[0]) == dict(colour, GaussianBlur=1.0)
    assert _probabilities(t.global_transforms[1]) == dict(colour, GaussianBlur=0.1, RandomSolarize=0.2)
    assert _probabilities(t.local_transform) == dict(colour, GaussianBlur=0.5)
    jitter = next(a.transforms[0] for a in t.local_transform.transforms if isinstance(a, T.RandomApply)
                  and isinstance(a.transforms[0], T.ColorJitter))
    assert (jitter.brightness, jitter.contrast, jitter.saturation, jitter.hue) == ((0.6, 1.4), (0.6, 1.4), (0.8, 1.2),
                                                                                 (-0.1, 0.1))
    solarize = t.global_transforms[1].transforms[-1]
    assert solarize.threshold == 128


def _views(t: MultiViewCrop, img: np.ndarray, draws: int = DRAWS) -> torch.Tensor:
    """(draws, 2 + num_local, 3, H, W) float views of ``img`` (same-size views, so locals stack with globals)."""
    torch.manual_seed(0)
    out = []
    for _ in range(draws):
        r = t(dict(img=img))
        local = [r['local_views']] if len(r['local_views']) else []
        out.append(torch.cat([r['global_views'], *local]).float())
    return torch.stack(out)


def _share(hits: torch.Tensor) -> np.ndarray:
    return hits.float().mean(0).numpy()


def test_solarisation_inverts_bright_pixels_of_the_second_global_view_only():
    img = np.full(SIZE + (3, ), 200, np.uint8)
    views = _views(MultiViewCrop(global_size=SIZE, num_local=0, **dict(OFF, solarize_prob=0.2)), img)
    solarised = (views == 55).flatten(2).all(2)
    assert ((views == 55) | (views == 200)).all()
    share = _share(solarised)
    assert share[0] == 0 and 0.15 < share[1] < 0.25


def test_grayscale_makes_the_channels_equal():
    img = np.zeros(SIZE + (3, ), np.uint8)
    img[..., 2] = 200  # red
    views = _views(MultiViewCrop(global_size=SIZE, local_size=SIZE, num_local=1, **dict(OFF, grayscale_prob=0.2)),
                   img)
    grey = (views[:, :, 0] == views[:, :, 2]).flatten(2).all(2)
    assert ((views[:, :, 2] == 200).flatten(2).all(2) | grey).all()  # a view is either untouched or grey
    assert np.all((_share(grey) > 0.15) & (_share(grey) < 0.25))


def test_colour_jitter_changes_colours_with_its_probability():
    img = np.zeros(SIZE + (3, ), np.uint8)
    img[..., :] = (60, 120, 180)
    views = _views(MultiViewCrop(global_size=SIZE, local_size=SIZE, num_local=1,
                                 **dict(OFF, color_jitter_prob=0.8)), img)
    changed = (views != torch.tensor([60.0, 120.0, 180.0]).view(3, 1, 1)).flatten(2).any(2)
    assert np.all((_share(changed) > 0.72) & (_share(changed) < 0.88))
    jitter = MultiViewCrop(global_size=SIZE, num_local=0, **dict(OFF, color_jitter_prob=1.0,
                                                                color_jitter=dict(brightness=0.4)))
    brightness = _views(jitter, img, 50)[:, 0].mean((1, 2, 3)) / 120.0
    assert 0.6 <= brightness.min() < 0.8 and 1.2 < brightness.max() <= 1.41


@pytest.mark.parametrize('view, prob', [(0, 1.0), (1, 0.1), (2, 0.5)])
def test_blur_probability_per_view(view, prob):
    img = np.zeros(SIZE + (3, ), np.uint8)
    img[::2, ::2] = 255  # a fine dot pattern that blur smooths away
    blur = dict(OFF, global_blur_probs=(1.0, 0.1), local_blur_prob=0.5, blur_sigma=(1.5, 2.0),
                blur_reference_side=SIZE[0])
    t = MultiViewCrop(global_size=SIZE, local_size=SIZE, num_local=1, global_scale=(1.0, 1.0),
                      local_scale=(1.0, 1.0), **blur)
    views = _views(t, img)[:, view]
    blurred = views.flatten(1).std(1) < 0.5 * img.std()
    assert abs(blurred.float().mean().item() - prob) < 0.06


def test_flip_mirrors_half_of_the_views():
    img = np.zeros(SIZE + (3, ), np.uint8)
    img[:, :SIZE[1] // 2] = 255  # bright left half
    views = _views(MultiViewCrop(global_size=SIZE, num_local=0, global_scale=(1.0, 1.0), **dict(OFF, flip_prob=0.5)),
                   img)
    mirrored = views[..., :, :SIZE[1] // 2].mean((2, 3, 4)) < views[..., :, SIZE[1] // 2:].mean((2, 3, 4))
    assert np.all((_share(mirrored) > 0.42) & (_share(mirrored) < 0.58))
