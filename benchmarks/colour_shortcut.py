"""How much does colour alone tell about a SynthHumans image? The colour shortcut of self-distillation, measured.

    OMP_NUM_THREADS=1 python benchmarks/colour_shortcut.py --num 200 --size 128 96

For each scene variety (``plain``: one colour per wall and floor; ``rich``: see docs/synthhumans.md) it renders
``--num`` training and ``--num`` validation images (in memory) and computes per-image colour histograms (a joint
4x4x4 BGR histogram of the pixels). Two measures:

* **property probe**: the linear probe of the semantic benchmark (``sapiens2_pretrain.semantic_probe``: logistic
  regression on standardised features) fitted on the training histograms to predict each scene property, accuracy
  on the validation images against chance (the share of the validation set's most frequent class);
* **view matching**: two views of every validation image, either random crops (each 25-60 % of the image's area,
  anywhere) or the two global views of the pretraining pipeline (``MultiViewCrop``: crops, flips, colour jitter,
  grayscale, blur, solarisation); the share of first views whose nearest second view (L1 distance of the mean colour,
  or of the histogram) is of their own image (chance 1 / num). This is what self-distillation can exploit: two views
  of one image matched by their colours;
* **crop-to-crop correlation** of single statistics (mean brightness, colour cast: mean blue minus mean red) between
  the two random crops of each image: near 1 when the statistic alone tells images apart.
"""
import argparse
import time

import numpy as np
import torch

BINS = 4  # per channel: 4 x 4 x 4 = 64 histogram cells


def colour_histogram(image: np.ndarray, bins: int = BINS) -> np.ndarray:
    """Joint BGR histogram of a uint8 image (H, W, 3), normalised to sum 1: (bins**3,) float64."""
    cells = (image.reshape(-1, 3).astype(np.int64) * bins) // 256
    index = (cells[:, 0] * bins + cells[:, 1]) * bins + cells[:, 2]
    return np.bincount(index, minlength=bins**3) / float(len(index))


def random_crop(image: np.ndarray, rng: np.random.Generator, area: tuple = (0.25, 0.6)) -> np.ndarray:
    """A crop of ``area`` (fraction range) of the image, of its aspect ratio, anywhere in it."""
    height, width = image.shape[:2]
    side = np.sqrt(rng.uniform(*area))
    h, w = max(1, int(round(height * side))), max(1, int(round(width * side)))
    y, x = int(rng.integers(height - h + 1)), int(rng.integers(width - w + 1))
    return image[y:y + h, x:x + w]


def view_matching_accuracy(first: np.ndarray, second: np.ndarray) -> float:
    """Share of rows of ``first`` (N, D) whose L1-nearest row of ``second`` (N, D) has the same index."""
    distance = np.abs(first[:, None, :] - second[None, :, :]).sum(-1)
    return float((distance.argmin(1) == np.arange(len(first))).mean())


def property_probe(train_x: np.ndarray, train_y: dict, val_x: np.ndarray, val_y: dict) -> dict:
    """``{property: (accuracy, chance)}`` of the semantic benchmark's linear probe on the features ``*_x`` (N, D);
    chance is the share of the most frequent validation class."""
    from sapiens2_pretrain.semantic_probe import linear_probe_accuracy
    results = {}
    for name, labels in train_y.items():
        accuracy = linear_probe_accuracy(torch.from_numpy(train_x), torch.from_numpy(labels),
                                         torch.from_numpy(val_x), torch.from_numpy(val_y[name]))
        chance = np.bincount(val_y[name]).max() / len(val_y[name])
        results[name] = (accuracy, float(chance))
    return results


def render_set(split: str, num: int, size: tuple, seed: int, variety: str):
    """Images (list of BGR uint8) and scene properties ({name: (num,) int64}) of ``num`` samples of ``split``."""
    from sapiens2.datasets.synthhumans import render_image, scene_for
    from sapiens2.datasets.synthhumans.properties import PROPERTY_CLASSES, scene_properties
    scenes = [scene_for(seed, split, i, size, variety) for i in range(num)]
    rows = [scene_properties(scene) for scene in scenes]
    labels = {name: np.array([row[name] for row in rows], np.int64) for name in PROPERTY_CLASSES}
    return [render_image(scene) for scene in scenes], labels


def mean_colour(image: np.ndarray) -> np.ndarray:
    """The mean BGR colour of a uint8 image (H, W, 3): (3,) float64, the colour cast."""
    return image.reshape(-1, 3).mean(0)


def pipeline_views(image: np.ndarray, seed: int) -> tuple:
    """The two global views (BGR uint8, H x W x 3) that the tiny pretraining config's ``MultiViewCrop`` makes of
    ``image``: random resized crops with flips, colour jitter, grayscale, blur and solarisation."""
    from sapiens2_pretrain.datasets import MultiViewCrop
    torch.manual_seed(seed)
    views = MultiViewCrop(global_size=image.shape[:2], num_local=0)(dict(img=image))['global_views']
    return tuple(v.permute(1, 2, 0).numpy() for v in views)


FEATURES = dict(mean_colour=mean_colour, histogram=colour_histogram)
# Single statistics of an image: the two the pretraining targets were found to group by (docs/pretraining.md).
STATISTICS = dict(brightness=lambda image: image.mean(),
                  colour_cast=lambda image: image[..., 0].mean() - image[..., 2].mean())


def view_correlation(pairs: list, statistic) -> float:
    """Pearson correlation over the images between ``statistic`` of their first and of their second view: near 1
    when the statistic tells images apart whatever part of them a view shows."""
    first = np.array([statistic(a) for a, _ in pairs], np.float64)
    second = np.array([statistic(b) for _, b in pairs], np.float64)
    return float(np.corrcoef(first, second)[0, 1])


def measure(num: int, size: tuple, seed: int, variety: str) -> dict:
    """Property probes on the histograms of whole images; view matching by each of ``FEATURES`` for random crops
    and for the pretraining pipeline's augmented views."""
    train_images, train_y = render_set('train', num, size, seed, variety)
    val_images, val_y = render_set('val', num, size, seed, variety)
    train_x = np.stack([colour_histogram(im) for im in train_images])
    val_x = np.stack([colour_histogram(im) for im in val_images])
    rng = np.random.default_rng(seed)
    pairs = dict(crops=[(random_crop(im, rng), random_crop(im, rng)) for im in val_images],
                 views=[pipeline_views(im, seed * 100003 + i) for i, im in enumerate(val_images)])
    matching = {f'{feature} / {kind}': view_matching_accuracy(np.stack([fn(a) for a, _ in pair]),
                                                              np.stack([fn(b) for _, b in pair]))
                for kind, pair in pairs.items() for feature, fn in FEATURES.items()}
    correlation = {name: view_correlation(pairs['crops'], fn) for name, fn in STATISTICS.items()}
    return dict(properties=property_probe(train_x, train_y, val_x, val_y), matching=matching,
                correlation=correlation)


def table(results: dict, num: int) -> str:
    """Two markdown tables: the property probe; view matching and the crop-to-crop correlation of statistics."""
    names = list(next(iter(results.values()))['properties'])
    lines = ['| scene variety | ' + ' | '.join(names) + ' |', '|---|' + '---|' * len(names)]
    for variety, result in results.items():
        cells = [f'{100 * acc:.1f} (chance {100 * chance:.1f})' for acc, chance in result['properties'].values()]
        lines.append(f'| {variety} | ' + ' | '.join(cells) + ' |')
    kinds = list(next(iter(results.values()))['matching'])
    statistics = list(next(iter(results.values()))['correlation'])
    lines += ['', '| scene variety | ' + ' | '.join(f'matched by {k} (%)' for k in kinds) + ' | '
              + ' | '.join(f'crop-to-crop r of {s}' for s in statistics) + ' |',
              '|---|' + '---|' * (len(kinds) + len(statistics))]
    for variety, result in results.items():
        cells = [f'{100 * v:.1f}' for v in result['matching'].values()]
        cells += [f'{v:.2f}' for v in result['correlation'].values()]
        lines.append(f'| {variety} | ' + ' | '.join(cells) + ' |')
    lines.append(f'\nView matching: chance {100 / num:.1f} %.')
    return '\n'.join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--num', type=int, default=200, help='training and validation images per variety')
    parser.add_argument('--size', type=int, nargs=2, default=(128, 96), metavar=('H', 'W'))
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--varieties', nargs='+', default=['plain', 'rich'])
    args = parser.parse_args(argv)
    results, start = {}, time.process_time()
    for variety in args.varieties:
        results[variety] = measure(args.num, tuple(args.size), args.seed, variety)
    print('Accuracy (%) of a linear probe on colour histograms, and of matching two views of an image by colour:\n')
    print(table(results, args.num))
    print(f'\nCPU time {time.process_time() - start:.0f} s')


if __name__ == '__main__':
    main()
