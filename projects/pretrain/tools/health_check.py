"""Does the self-distillation of a pretraining run learn? The health of its teacher targets on held-out images.

Usage: python projects/pretrain/tools/health_check.py CONFIG CHECKPOINT IMAGE_FOLDER [--num-images 256]
Run it on a checkpoint of a short run of your recipe (a few hundred iterations) and images that training did not
see. It prints the three measures of ``sapiens2_pretrain.health`` and the verdict (docs/pretraining.md, "Health
check"); the exit status is 0 for a pass, 1 for a fail.
"""
import argparse
import sys

import cv2
import numpy as np
import torch
from mmengine.config import Config, DictAction
from mmengine.registry import DefaultScope

import sapiens2  # noqa: F401  (resolves the sapiens2:: base configs)
from sapiens2.engine.checkpoint import TRUST_CHECKPOINT_HELP, load_model_weights
from sapiens2.registry import MODELS
from sapiens2_pretrain.datasets.image_folder import find_images
from sapiens2_pretrain.health import format_verdict, health_verdict, target_health, teacher_targets


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog='health_check.py', description=__doc__.splitlines()[0])
    parser.add_argument('config', help='the pretraining config of the run')
    parser.add_argument('checkpoint', help='a checkpoint of the run (MMEngine .pth or .safetensors)')
    parser.add_argument('images', help='folder of held-out images (any depth)')
    parser.add_argument('--num-images', type=int, default=256, help='images to use (default 256, the first ones '
                        'in sorted order)')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction, help='override config keys, key=value')
    parser.add_argument('--trust-checkpoint', action='store_true', help=TRUST_CHECKPOINT_HELP)
    parser.add_argument('--debug', action='store_true', help='show the traceback of an error')
    return parser.parse_args(argv)


def load_inputs(paths: list[str], size: tuple[int, int], preprocessor: dict) -> torch.Tensor:
    """Images resized to ``size`` (H, W) and normalised as the pretraining data preprocessor does: (N, 3, H, W)."""
    mean = torch.tensor(preprocessor.get('mean', [0.0, 0.0, 0.0])).view(1, 3, 1, 1)
    std = torch.tensor(preprocessor.get('std', [1.0, 1.0, 1.0])).view(1, 3, 1, 1)
    images = []
    for path in paths:
        image = cv2.imread(path, cv2.IMREAD_COLOR)
        if image is None:
            raise ValueError(f'{path} is not a readable image; remove it from the folder')
        image = cv2.resize(image, (size[1], size[0]), interpolation=cv2.INTER_AREA)
        images.append(image[..., ::-1] if preprocessor.get('bgr_to_rgb', False) else image)
    x = torch.from_numpy(np.ascontiguousarray(np.stack(images))).permute(0, 3, 1, 2).float()
    return (x - mean) / std


def main(argv=None) -> int:
    args = parse_args(argv)
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    if cfg.model.get('loss_weights', {}).get('dino', 1.0) == 0:
        raise ValueError(f'{args.config} trains no self-distillation (model.loss_weights.dino=0): its DINO head is '
                         'never trained, so its targets say nothing; check a config with a DINO loss')
    paths = find_images(args.images)[:args.num_images]
    if len(paths) < 2:
        raise ValueError(f'{args.images} holds {len(paths)} images; the health check needs at least 2 (256 '
                         'recommended)')
    with DefaultScope.overwrite_default_scope('sapiens2'):
        model = MODELS.build(cfg.model)
    load_model_weights(model, args.checkpoint, strict=True, trust_checkpoint=args.trust_checkpoint or None)
    size = tuple(cfg.model.backbone.img_size)
    probs = teacher_targets(model.eval(), load_inputs(paths, size, cfg.model.get('data_preprocessor', {})))
    rows = health_verdict(target_health(probs))
    print(f'teacher targets of {len(paths)} images ({probs.shape[1]} prototypes):')
    print(format_verdict(rows))
    failed = [r for r in rows if not r['passed']]
    print('verdict: ' + ('PASS' if not failed else 'FAIL: ' + '; '.join(f'{r["name"]}: {r["reason"]}'
                                                                          for r in failed)))
    return 1 if failed else 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except (OSError, ValueError, RuntimeError) as e:
        if '--debug' in sys.argv:
            raise
        sys.exit(f'health_check.py: error: {e}')
