"""Render a SynthHumans dataset folder (all task formats at once, or only the images with --rgb-only).

Example:
    python tools/dataset_converters/make_synthhumans.py --out data/synthhumans --num-train 256 --num-val 64 \
        --size 256 192 --seed 0
    # half of the images over real photos (scikit-image's scene photos, or --photo-folder DIR)
    python tools/dataset_converters/make_synthhumans.py --out data/synthhumans_photos --photo-ratio 0.5
    # textured many-coloured rooms and coloured light: no colour shortcut for self-supervised pretraining
    python tools/dataset_converters/make_synthhumans.py --out data/synthhumans_rich --scene-variety rich
    # prints and folds on the clothes: people that look less like mannequins
    python tools/dataset_converters/make_synthhumans.py --out data/synthhumans_clothes --patterned-clothes
    # 40 % of the people sitting, crouching or bending forward instead of standing
    python tools/dataset_converters/make_synthhumans.py --out data/synthhumans_postures --posture-ratio 0.4
"""
import argparse
import sys
import time

from sapiens2.datasets.synthhumans import SCENE_VARIETIES, SynthHumansFolderError, ensure_synthhumans


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Render the SynthHumans dataset.')
    parser.add_argument('--out', default='data/synthhumans', help='output folder')
    parser.add_argument('--num-train', type=int, default=256)
    parser.add_argument('--num-val', type=int, default=64)
    parser.add_argument('--size', type=int, nargs=2, default=(256, 192), metavar=('H', 'W'))
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--rgb-only', action='store_true',
                        help='write only the images (<split>/rgb/*.png), no maps or annotations: unlabeled '
                        'pretraining data, about a tenth of the disk space')
    parser.add_argument('--photo-ratio', type=float, default=0.0,
                        help='share of the images (0..1) whose people stand in front of a real photograph instead '
                        'of a rendered room: the scene photos without people that scikit-image and scikit-learn ship '
                        '(when installed), or those of --photo-folder')
    parser.add_argument('--photo-folder', default=None,
                        help='a folder of your own scene photos (no people in them) for --photo-ratio')
    parser.add_argument('--scene-variety', default='plain', choices=SCENE_VARIETIES,
                        help='plain: one colour per wall and floor under white light; rich: textured rooms in several '
                        'colours each, distractor objects and coloured light varying over the image, so that no '
                        'colour statistic tells scenes apart (same people, labels and scene properties)')
    parser.add_argument('--patterned-clothes', action='store_true',
                        help='print stripes, checks, dots, bricks or grain and draw fabric folds on the garments '
                        '(the albedo carries the prints; same people, labels and scene properties)')
    parser.add_argument('--posture-ratio', type=float, default=0.0,
                        help='share of the people (0..1) who sit, crouch or bend forward instead of standing (the '
                        'cameras, looks and backgrounds stay the same)')
    parser.add_argument('--overwrite', action='store_true',
                        help='render again even if --out holds this configuration, or write into a non-empty folder '
                        'that holds no SynthHumans set; only files listed in an existing set\'s manifest.json are '
                        'removed, never any other file')
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    start = time.perf_counter()
    try:
        ensure_synthhumans(args.out, args.num_train, args.num_val, tuple(args.size), args.seed,
                           overwrite=args.overwrite, verbose=True, rgb_only=args.rgb_only,
                           photo_ratio=args.photo_ratio, photo_folder=args.photo_folder,
                           scene_variety=args.scene_variety, patterned_clothes=args.patterned_clothes,
                           posture_ratio=args.posture_ratio)
    except (SynthHumansFolderError, ValueError) as e:  # ValueError: a bad --size or --photo-*, or no photos
        sys.exit(f'error: {e}')
    print(f'SynthHumans ready in {args.out} ({time.perf_counter() - start:.1f} s)')


if __name__ == '__main__':
    main()
