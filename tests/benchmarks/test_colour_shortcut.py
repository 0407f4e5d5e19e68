"""benchmarks/colour_shortcut.py: its measures on constructed cases, and the premise of the rich scene variety on a
small set (the mean colour of a crop finds its image less often in rich scenes than in plain ones)."""
import numpy as np
import pytest

from sapiens2.datasets.synthhumans import render_image, scene_for
from tests.scripts import load_script


@pytest.fixture(scope='module')
def bench():
    return load_script('benchmarks/colour_shortcut.py')


def test_colour_histogram_counts_joint_cells(bench):
    image = np.zeros((2, 2, 3), np.uint8)
    image[0, 0] = (255, 0, 0)  # blue: cell (3, 0, 0)
    hist = bench.colour_histogram(image)
    assert hist.shape == (64, ) and hist.sum() == pytest.approx(1.0)
    assert hist[0] == 0.75 and hist[3 * 16] == 0.25


def test_view_matching_and_correlation(bench):
    rng = np.random.default_rng(0)
    colours = rng.uniform(0, 255, (20, 3))
    assert bench.view_matching_accuracy(colours, colours + 1.0) == 1.0
    assert bench.view_matching_accuracy(colours, colours[::-1]) == 0.0
    pairs = [(np.full((4, 4, 3), c), np.full((4, 4, 3), c) + 3) for c in colours]
    assert bench.view_correlation(pairs, bench.STATISTICS['brightness']) == pytest.approx(1.0)


def test_property_probe_finds_a_colour_coded_property_and_not_a_random_one(bench):
    rng = np.random.default_rng(0)
    labels = np.arange(120) % 3
    hues = np.array([(200, 40, 40), (40, 200, 40), (40, 40, 200)], np.float64)
    images = [np.clip(hues[y] + rng.normal(0, 30, (8, 8, 3)), 0, 255).astype(np.uint8) for y in labels]
    x = np.stack([bench.colour_histogram(im) for im in images])
    random = rng.integers(0, 3, 120)
    result = bench.property_probe(x[:60], dict(coded=labels[:60], random=random[:60]), x[60:],
                                  dict(coded=labels[60:], random=random[60:]))
    assert result['coded'][0] == 1.0 and result['coded'][1] == pytest.approx(1 / 3)
    assert result['random'][0] < 0.6


def test_rich_scenes_take_away_the_mean_colour_of_a_crop_as_an_identity(bench):
    """40 images at 64x48 (seed 0): two random crops of an image are matched by their mean colour for 60 % of the
    plain images and 22 % of the rich ones (seeds 0-3: 38-60 % against 20-25 %; chance 2.5 %)."""
    accuracy = {}
    for variety in ('plain', 'rich'):
        rng = np.random.default_rng(0)
        images = [render_image(scene_for(0, 'val', i, (64, 48), variety)) for i in range(40)]
        pairs = [(bench.random_crop(im, rng), bench.random_crop(im, rng)) for im in images]
        accuracy[variety] = bench.view_matching_accuracy(np.stack([bench.mean_colour(a) for a, _ in pairs]),
                                                         np.stack([bench.mean_colour(b) for _, b in pairs]))
    assert accuracy['plain'] > accuracy['rich'] + 0.1
