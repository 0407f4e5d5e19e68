"""Render a SynthHumans contact sheet: per sample a row of image, keypoints + skeleton, part labels, normals,
depth and albedo, to check visually that people look like people and that every map lines up.

Usage: python tools/misc/synthhumans_contact_sheet.py --out work_dirs/synthhumans_sheet.png [--num 6] [--seed 0]
       [--photo-ratio 1 [--photo-folder DIR]] [--scene-variety rich] [--patterned-clothes] [--posture-ratio 0.4]
"""
import argparse
import os
import os.path as osp

import cv2
import numpy as np

from sapiens2.datasets.synthhumans import SCENE_VARIETIES, Rendering, render_scene, scene_for
from sapiens2.datasets.synthhumans.metainfo import keypoint_meta, seg_meta
from sapiens2.datasets.synthhumans.photos import background_for, load_photos, photo_paths
from sapiens2.utils.image_write import write_image


def draw_keypoints(r: Rendering) -> np.ndarray:
    """The image with skeleton links and keypoints (visible filled, occluded as rings) of every person."""
    canvas = r.image.copy()
    links = keypoint_meta()['skeleton_links']
    for kps in r.keypoints:
        for link in links:
            (a, b), color = link['link'], link['color'][::-1]
            if kps[a, 2] > 0 and kps[b, 2] > 0:
                cv2.line(canvas, tuple(np.round(kps[a, :2]).astype(int)), tuple(np.round(kps[b, :2]).astype(int)),
                         color, 1, cv2.LINE_AA)
        for x, y, v in kps:
            if v == 2:
                cv2.circle(canvas, (int(round(x)), int(round(y))), 1, (0, 255, 0), -1)
            elif v == 1:
                cv2.circle(canvas, (int(round(x)), int(round(y))), 2, (0, 0, 255), 1)
    return canvas


def colorize_depth(depth: np.ndarray) -> np.ndarray:
    fg = depth > 0
    out = np.zeros(depth.shape + (3, ), np.uint8)
    if fg.any():
        lo, hi = depth[fg].min(), depth[fg].max()
        scaled = np.clip(255 * (depth - lo) / max(hi - lo, 1e-6), 0, 255).astype(np.uint8)
        out[fg] = cv2.applyColorMap(255 - scaled, cv2.COLORMAP_TURBO)[fg]
    return out


def sheet_row(r: Rendering) -> np.ndarray:
    palette = np.array(seg_meta()['palette_rgb'], np.uint8)[:, ::-1]
    normal = np.where(r.mask[..., None] > 0, np.round((0.5 - 0.5 * r.normal) * 255), 0).astype(np.uint8)[..., ::-1]
    panels = [r.image, draw_keypoints(r), palette[r.seg], normal, colorize_depth(r.depth), r.albedo]
    return np.concatenate([np.pad(p, ((2, 2), (2, 2), (0, 0))) for p in panels], axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description='Render a SynthHumans contact sheet.')
    parser.add_argument('--out', default='work_dirs/synthhumans_contact_sheet.png')
    parser.add_argument('--num', type=int, default=6)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--split', default='train', choices=('train', 'val'))
    parser.add_argument('--size', type=int, nargs=2, default=(256, 192), metavar=('H', 'W'))
    parser.add_argument('--photo-ratio', type=float, default=0.0,
                        help='share of the samples over a real photo, as make_synthhumans.py --photo-ratio')
    parser.add_argument('--photo-folder', default=None, help='your own scene photos (no people) for --photo-ratio')
    parser.add_argument('--scene-variety', default='plain', choices=SCENE_VARIETIES,
                        help='as make_synthhumans.py --scene-variety')
    parser.add_argument('--patterned-clothes', action='store_true', help='as make_synthhumans.py --patterned-clothes')
    parser.add_argument('--posture-ratio', type=float, default=0.0, help='as make_synthhumans.py --posture-ratio')
    args = parser.parse_args()
    photos = load_photos(photo_paths(args.photo_folder)) if args.photo_ratio > 0 else ()
    scenes = [scene_for(args.seed, args.split, i, tuple(args.size), args.scene_variety, args.patterned_clothes,
                        args.posture_ratio) for i in range(args.num)]
    rows = [sheet_row(render_scene(scene, background_for(scene, photos, args.photo_ratio))) for scene in scenes]
    os.makedirs(osp.dirname(osp.abspath(args.out)), exist_ok=True)
    write_image(args.out, np.concatenate(rows, axis=0))
    print(f'wrote {args.out}')


if __name__ == '__main__':
    main()
