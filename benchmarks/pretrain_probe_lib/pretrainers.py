"""The pretrained models and held-out images that the health cells, tables and pictures look at."""
import os.path as osp

from .cells import data_roots, variant_checkpoint


def quiet_mmengine() -> None:
    """Only MMEngine's warnings and errors: no per-iteration lines or per-parameter init reports."""
    import logging

    from mmengine.logging import MMLogger
    MMLogger.get_instance('mmengine').setLevel(logging.WARNING)


def val_images(args, num: int):
    """``num`` held-out labeled-split images: (RGB float 0-255, normalised backbone input), both (num, 3, H, W)."""
    import torch

    from sapiens2_pretrain.dense_probe import MEAN, STD, load_images
    _, labeled = data_roots(args.setting)
    images = load_images(labeled, 'val', tuple(args.setting.probe['size']), num).float().flip(1)
    return images, (images - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)


def load_pretrainer(cfg, checkpoint):
    """The pretrainer of ``cfg`` in eval mode, initialised with seed 0 (``checkpoint`` None) or loaded."""
    import torch
    from mmengine.registry import DefaultScope

    from sapiens2.engine.checkpoint import load_model_weights
    from sapiens2.registry import MODELS
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('sapiens2'):
        model = MODELS.build(cfg.model)
    if checkpoint is None:
        model.init_weights()
    else:
        load_model_weights(model, checkpoint, strict=True)
    return model.eval()


def seed0_model(args, cfg, variant):
    """The pretrainer of ``cfg`` in eval mode: initialised with seed 0 (``variant`` None) or loaded from the variant's
    seed-0 final checkpoint; None when that checkpoint does not exist."""
    checkpoint = None
    if variant is not None:
        checkpoint = variant_checkpoint(args, variant, 0)
        if not osp.isfile(checkpoint):
            return None
    return load_pretrainer(cfg, checkpoint)
