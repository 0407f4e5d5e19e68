"""The pictures of the report: training-health curves and MAE reconstructions."""
import glob
import math
import os.path as osp

from . import VARIANTS, _config, model_options
from .cells import read_json
from .pretrainers import seed0_model, val_images


def plot_health(args, out: str) -> None:
    """Training-health curves of every pretraining run (variants by colour, seeds by line style)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    panels = [('mae', 'MAE loss (masked patches)'), ('koleo', 'KoLeo value (unweighted)'),
              ('teacher_entropy', 'teacher entropy (nats)'), ('student_entropy', 'student entropy (nats)'),
              ('teacher_batch_entropy', 'entropy of the batch-mean teacher output'),
              ('used_prototypes', 'used prototypes (distinct arg-max / batch)'), ('center_norm', 'centre norm'),
              ('loss_dino', 'weighted DINO loss'), ('teacher_spread', 'teacher logit spread between images')]
    fig, axes = plt.subplots(3, 3, figsize=(14, 10))
    colours = dict(mae='tab:blue', dino='tab:orange', full='tab:green', full_paper='tab:red', full_long='tab:purple',
                   full_sharp='tab:brown', scratch='black')
    styles = ['-', '--', ':']
    num_prototypes = {_config(model_options(v)).model.dino_head.num_prototypes for v in VARIANTS}
    for path in sorted(glob.glob(osp.join(args.results, 'pretrain', '*.json'))):
        cell = read_json(path)
        for ax, (key, _) in zip(axes.flat, panels):
            points = [(r['iter'], r[key]) for r in cell['log'] if key in r]
            if points and (key != 'loss_dino' or cell['variant'] != 'mae'):
                ax.plot(*zip(*points), styles[cell['seed'] % 3], color=colours[cell['variant']],
                        label=f'{cell["variant"]} s{cell["seed"]}')
    for ax, (key, title) in zip(axes.flat, panels):
        ax.set_title(title, fontsize=10)
        ax.set_xlabel('iteration')
        if 'entropy' in key:
            for k in sorted(num_prototypes):
                ax.axhline(math.log(k), color='grey', lw=0.8, ls='--')
                ax.text(0, math.log(k), f' log {k} (uniform)', va='bottom', fontsize=8, color='grey')
    axes.flat[1].legend(fontsize=7)  # the KoLeo panel has every run
    fig.suptitle('Sapiens2 tiny pretraining on SynthHumans 128x96: training health\n'
                 'mae = MAE only, dino = contrastive + KoLeo only, full = joint objective, full_paper: paper teacher '
                 'temperature,\nfull_long: 3x schedule, full_sharp: teacher temperature 0.01, scratch: the '
                 'from-scratch recipe (the spread panel has the runs logged after it was added)')
    fig.tight_layout()
    fig.savefig(out, dpi=80)
    plt.close(fig)


def plot_reconstruction(args, out: str, num: int = 6) -> None:
    """Held-out images, the masked student input and the MAE reconstructions of the seed-0 MAE-only and full runs."""
    import cv2
    import numpy as np
    import torch

    from sapiens2_pretrain.dense_probe import MEAN, STD
    from sapiens2_pretrain.reconstruction import mae_reconstruction
    images, x = val_images(args, num)
    mean, std = torch.tensor(MEAN).view(1, 3, 1, 1), torch.tensor(STD).view(1, 3, 1, 1)
    rows = [images]
    for variant in ('mae', 'full'):
        model = seed0_model(args, _config(model_options(variant)), variant)
        if model is None:
            continue
        mask, recon = mae_reconstruction(model, x, torch.Generator().manual_seed(0))
        if len(rows) == 1:
            rows.append(torch.where(mask, torch.full_like(x, 0.5 * 255), images))
        rows.append((recon * std + mean).clamp(0, 255))
    grid = torch.cat([torch.cat(list(r), dim=2) for r in rows], dim=1)  # (3, rows * H, num * W), RGB
    picture = grid.permute(1, 2, 0).numpy().astype(np.uint8)[..., ::-1]
    picture = cv2.resize(picture, None, fx=2, fy=2, interpolation=cv2.INTER_NEAREST)
    cv2.imwrite(out, picture, [cv2.IMWRITE_JPEG_QUALITY, 90])
