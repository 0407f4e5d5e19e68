"""What the teacher targets look like: their spread between images next to the temperature, and what they
group the held-out images by."""
import math
import os.path as osp

from . import HEALTH_IMAGES, LEVERS, NAMES, VARIANTS, _config, lever_name, lever_weights, model_options, variant_iters
from .cells import lever_checkpoint, variant_checkpoint
from .jobs import semantic_labels
from .pretrainers import load_pretrainer, quiet_mmengine, seed0_model, val_images


def _teacher_temperature(cfg, variant: str) -> float:
    options = dict(o.split('=', 1) for o in VARIANTS[variant]['options'])
    return float(options.get('model.dino_loss.teacher_temp', cfg.model.dino_loss.teacher_temp))


def teacher_spread(args, num: int = 64) -> str:
    """Markdown table: how much the teacher's [CLS] feature, DINO bottleneck and prototype logits vary between
    ``num`` held-out images, at initialisation and after each seed-0 pretraining run, next to the teacher
    temperature (centring removes the image-independent part, so a logit spread far below the temperature means a
    flat target)."""
    import torch
    quiet_mmengine()
    _, x = val_images(args, num)
    lines = ['| teacher | temperature | [CLS]: varying part / norm | bottleneck: mean distance to the mean | '
             'logit spread | logit spread / temperature | target entropy / log K |', '|---|---|---|---|---|---|---|']
    runs = [('at initialisation (seed 0)', None, 'full')] + [
        (f'{NAMES[v]}, after {variant_iters(args.setting, v)} iterations', v, v if VARIANTS[v]['weights']['dino']
         else 'full') for v in VARIANTS]  # MAE only trains no DINO head: shown at the contrastive runs' temperature
    for name, variant, temp_of in runs:
        cfg = _config(model_options(variant or 'full'))
        model = seed0_model(args, cfg, variant)
        if model is None:
            continue
        with torch.no_grad():
            cls = model.teacher['backbone'](x)[0][:, 0]
            z = torch.nn.functional.normalize(model.teacher['dino_head'].mlp(cls), dim=-1)
            logits = model.teacher['dino_head'](cls)
        temperature = _teacher_temperature(cfg, temp_of)
        varying = ((cls - cls.mean(0)).norm(dim=-1) / cls.norm(dim=-1)).mean().item()
        spread = logits.std(dim=0, unbiased=False).mean().item()
        probs = torch.softmax((logits - logits.mean(0)) / temperature, dim=-1)
        entropy = -(probs * probs.clamp_min(1e-12).log()).sum(-1).mean().item() / math.log(logits.shape[1])
        lines.append(f'| {name} | {temperature:g} | {varying:.3f} | {(z - z.mean(0)).norm(dim=-1).mean().item():.3f} '
                     f'| {spread:.4f} | {spread / temperature:.2f} | {entropy:.3f} |')
    return '\n'.join(lines)


def _terciles(values):
    """Class 0-2 of each value of a 1-D tensor: below, between or above its 1/3 and 2/3 quantiles."""
    import torch
    return torch.bucketize(values, torch.quantile(values, torch.tensor([1 / 3, 2 / 3])))


def target_groups(args, shuffles: int = 20) -> str:
    """Markdown table: what the teacher targets group the held-out images by. For each seed-0 run with a DINO head
    whose checkpoint is here (variants, then lever cells): the normalised mutual information of each image's arg-max
    prototype with each scene property and with two image statistics (terciles of the brightness and of the colour
    cast, mean blue minus mean red), next to its level for a shuffled arg-max (chance)."""
    import torch

    from sapiens2.datasets.synthhumans.properties import PROPERTY_CLASSES
    from sapiens2_pretrain.health import normalized_mutual_information, target_health, teacher_targets
    quiet_mmengine()
    num = min(HEALTH_IMAGES, args.setting.labeled['num_val'])
    images, x = val_images(args, num)
    groups = {name: labels[:num] for name, labels in semantic_labels(args.setting, 'val').items()}
    groups.update(brightness=_terciles(images.mean((1, 2, 3))),
                  colour_cast=_terciles(images[:, 2].mean((1, 2)) - images[:, 0].mean((1, 2))))
    runs = [(NAMES[v], model_options(v), variant_checkpoint(args, v, 0))
            for v in VARIANTS if VARIANTS[v]['weights']['dino']]
    runs += [(f'lever cell: {lever_name(lever)}', model_options(f'lever-{lever}'), lever_checkpoint(args, lever))
             for lever in LEVERS if lever_weights(lever)['dino']]
    lines = ['| teacher (seed 0) | target entropy / log K | distinct arg-max | ' + ' | '.join(
        f'NMI: {name}' for name in groups) + ' | NMI of a shuffled arg-max (chance) |', '|---|' + '---|' * (
        len(groups) + 3)]
    g = torch.Generator().manual_seed(0)
    for name, options, checkpoint in runs:
        if not osp.isfile(checkpoint):
            continue
        probs = teacher_targets(load_pretrainer(_config(options), checkpoint), x)
        top = probs.argmax(1)
        chance = sum(normalized_mutual_information(top[torch.randperm(num, generator=g)], groups[p])
                     for p in PROPERTY_CLASSES for _ in range(shuffles)) / (shuffles * len(PROPERTY_CLASSES))
        lines.append(f'| {name} | {target_health(probs)["entropy"]:.3f} | {len(top.unique())} | ' + ' | '.join(
            f'{normalized_mutual_information(top, labels):.3f}' for labels in groups.values()) + f' | {chance:.3f} |')
    return '\n'.join(lines)
