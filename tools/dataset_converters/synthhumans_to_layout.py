"""Convert a SynthHumans folder to another keypoint layout or to own body-part classes, in the data layout of
``configs/_base_/datasets/custom_{keypoints,parts}.py`` (docs/custom_data.md):

    <out>/images/{train,val}/<name>.jpg
    <out>/annotations/{train,val}.json          (--keypoints: COCO keypoint files, file_name relative to images/)
    <out>/annotations/{train,val}/<name>.png    (--parts: class ids in the order of the metainfo's classes)

Keypoints: ``coco17``, ``coco_wholebody`` (COCO-WholeBody v1.0 fields: keypoints, foot_kpts, face_kpts,
lefthand_kpts, righthand_kpts and their boxes) or a keypoint metainfo file whose point names are 308-keypoint names
or COCO-WholeBody names (each point from the recipe of sapiens2/structures/keypoint_formats.py; a point without
counterpart is unlabelled, v = 0). Parts: a parts metainfo file; a class takes the 29-class label of the same name
(case aside) and the labels ``--class-map CLASS=SOURCE[,SOURCE...]`` gives it (``*``: every label no other class
takes); labels no class takes become 255 (ignored).

Example:
    python tools/dataset_converters/synthhumans_to_layout.py --src data/synthhumans --out data/synthhumans_coco17 \
        --keypoints coco17
"""
import argparse
import json
import os
import os.path as osp
import sys
from typing import Dict, List, Optional, Sequence, Tuple

import cv2
import numpy as np

from sapiens2.config.layout_file import find_layout_file, read_dataset_info, read_parts_metainfo
from sapiens2.metainfo import load_metainfo
from sapiens2.structures.keypoint_formats import FORMAT_NAMES, KeypointFormat, keypoint_format
from sapiens2.utils import strict_json
from sapiens2.utils.atomic_save import atomic_write_text
from sapiens2.utils.cli_errors import add_debug_argument, run_cli
from sapiens2.utils.image_write import write_image

SPLITS = ('train', 'val')
WHOLEBODY_FIELDS = (('keypoints', 'body'), ('foot_kpts', 'foot'), ('face_kpts', 'face'),
                    ('lefthand_kpts', 'left_hand'), ('righthand_kpts', 'right_hand'))
WHOLEBODY_BOXES = (('face', 'face'), ('lefthand', 'left_hand'), ('righthand', 'right_hand'))


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Convert SynthHumans to another keypoint layout or own classes.')
    parser.add_argument('--src', default='data/synthhumans', help='a SynthHumans folder (make_synthhumans.py)')
    parser.add_argument('--out', required=True, help='output folder (created; existing files are not replaced)')
    kind = parser.add_mutually_exclusive_group(required=True)
    kind.add_argument('--keypoints', help=f'{" or ".join(FORMAT_NAMES[:2])}, or a keypoint metainfo file')
    kind.add_argument('--parts', help='a parts metainfo file (classes, palette, flip_pairs)')
    parser.add_argument('--class-map', nargs='+', default=[], metavar='CLASS=SOURCE[,SOURCE...]',
                        help='29-class labels (seg29.json names, * = the rest) that make up a class')
    parser.add_argument('--num-train', type=int, help='convert only the first N training images')
    parser.add_argument('--num-val', type=int, help='convert only the first N validation images')
    add_debug_argument(parser)
    return parser.parse_args(argv)


def keypoint_layout(spec: str) -> Tuple[KeypointFormat, Optional[dict]]:
    """The target format of ``--keypoints`` and, for ``coco_wholebody``, its parts."""
    if spec in FORMAT_NAMES[:2]:
        layout = keypoint_format(spec)
        return layout, layout.parts if spec == 'coco_wholebody' else None
    path = find_layout_file(spec)
    info = read_dataset_info(path)
    points = sorted(info.get('keypoint_info', {}).values(), key=lambda p: p['id'])
    if not points:
        raise ValueError(f'{path}: no keypoint_info; --keypoints takes coco17, coco_wholebody or an mmpose keypoint '
                         'metainfo file')
    names = tuple(p['name'] for p in points)
    wholebody = keypoint_format('coco_wholebody')
    recipes = {name: recipe for name, recipe in zip(wholebody.keypoint_names, wholebody.recipes)}
    recipes.update({name: ((name, 1.0), ) for name in load_metainfo('keypoints308.json')['keypoint_names']})
    unknown = [name for name in names if name not in recipes]
    if unknown:
        raise ValueError(f'{path}: keypoints {unknown} are neither 308-keypoint nor COCO-WholeBody names; SynthHumans '
                         'has no source for them')
    links = tuple(tuple(link['link']) for link in info.get('skeleton_info', {}).values())
    return KeypointFormat(info.get('dataset_name', 'custom'), names, tuple(recipes[n] for n in names),
                          {'all': (0, len(names))}, links), None


def convert_annotation(ann: dict, layout: KeypointFormat, parts: Optional[dict]) -> dict:
    """One 308-keypoint COCO annotation in ``layout`` (COCO-WholeBody fields when ``parts`` is given)."""
    source = np.asarray(ann['keypoints'], dtype=np.float64).reshape(-1, 3)
    points, visibility = layout.convert(source[:, :2], source[:, 2])
    visibility = np.round(visibility).astype(np.int64)
    points[visibility == 0] = 0.0
    triples = np.concatenate([np.round(points, 3), visibility[:, None]], axis=1)
    out = {k: ann[k] for k in ('id', 'image_id', 'category_id', 'bbox', 'area', 'iscrowd')}
    out['segmentation'] = []
    if parts is None:
        out.update(keypoints=_flat(triples), num_keypoints=int((visibility > 0).sum()))
        return out
    for field, part in WHOLEBODY_FIELDS:
        start, stop = parts[part]
        out[field] = _flat(triples[start:stop])
    start, stop = parts['body']
    out['num_keypoints'] = int((visibility[start:stop] > 0).sum())
    for prefix, part in WHOLEBODY_BOXES:
        start, stop = parts[part]
        out[f'{prefix}_box'], out[f'{prefix}_valid'] = _box(triples[start:stop])
    out['foot_valid'] = bool((triples[slice(*parts['foot']), 2] > 0).any())
    return out


def _flat(triples: np.ndarray) -> List[float]:
    return [float(v) for v in triples.reshape(-1)]


def _box(triples: np.ndarray) -> Tuple[List[float], bool]:
    """xywh box of the labelled points, and whether there are any."""
    labelled = triples[triples[:, 2] > 0, :2]
    if not len(labelled):
        return [0.0, 0.0, 0.0, 0.0], False
    (x0, y0), (x1, y1) = labelled.min(axis=0), labelled.max(axis=0)
    return [float(x0), float(y0), float(x1 - x0), float(y1 - y0)], True


def class_lookup(classes: Sequence[str], class_map: Sequence[str]) -> np.ndarray:
    """(256,) uint8: 29-class label -> class id (255 where no class takes it)."""
    names = load_metainfo('seg29.json')['class_names']
    by_name = {name.lower(): i for i, name in enumerate(names)}
    lookup = np.full(256, 255, dtype=np.uint8)
    rest = None
    for target, source in enumerate(classes):
        if source.lower() in by_name:
            lookup[by_name[source.lower()]] = target
    for entry in class_map:
        target, _, sources = entry.partition('=')
        if target not in classes or not sources:
            raise ValueError(f'--class-map {entry!r}: give CLASS=SOURCE[,SOURCE...] with CLASS one of {list(classes)}')
        for source in sources.split(','):
            if source == '*':
                rest = classes.index(target)
            elif source.lower() in by_name:
                lookup[by_name[source.lower()]] = classes.index(target)
            else:
                raise ValueError(f'--class-map {entry!r}: {source!r} is not a 29-class label; choose from {names}')
    if rest is not None:
        untaken = lookup[:len(names)] == 255
        lookup[:len(names)][untaken] = rest
    return lookup


def convert_split(src: str, out: str, split: str, limit: Optional[int], layout=None, parts=None,
                  lookup: Optional[np.ndarray] = None) -> int:
    """Convert the first ``limit`` images of a split; return their number."""
    with open(osp.join(src, 'annotations', f'keypoints308_{split}.json')) as f:
        data = json.load(f)
    images = sorted(data['images'], key=lambda image: image['id'])[:limit]
    os.makedirs(osp.join(out, 'images', split), exist_ok=True)
    for image in images:
        name = osp.splitext(osp.basename(image['file_name']))[0]
        _write(osp.join(out, 'images', split, f'{name}.jpg'), cv2.imread(osp.join(src, image['file_name'])))
        if lookup is not None:
            labels = cv2.imread(osp.join(src, split, 'seg', f'{name}.png'), cv2.IMREAD_UNCHANGED)
            os.makedirs(osp.join(out, 'annotations', split), exist_ok=True)
            _write(osp.join(out, 'annotations', split, f'{name}.png'), lookup[labels])
        image['file_name'] = f'{split}/{name}.jpg'
    if layout is not None:
        ids = {image['id'] for image in images}
        anns = [convert_annotation(a, layout, parts) for a in data['annotations'] if a['image_id'] in ids]
        category = dict(id=1, name='person', supercategory='person', keypoints=list(layout.keypoint_names),
                        skeleton=[list(link) for link in layout.links])
        os.makedirs(osp.join(out, 'annotations'), exist_ok=True)
        path = osp.join(out, 'annotations', f'{split}.json')
        _refuse_existing(path)
        atomic_write_text(path, strict_json.dumps(dict(images=images, annotations=anns, categories=[category])))
    return len(images)


def _refuse_existing(path: str) -> None:
    if osp.exists(path):
        raise FileExistsError(f'{path} exists; choose another --out (nothing there is replaced)')


def _write(path: str, image: Optional[np.ndarray]) -> None:
    _refuse_existing(path)
    if image is None:
        raise OSError(f'could not convert to {path}; is --src a complete SynthHumans folder?')
    write_image(path, image)


def main(argv=None) -> None:
    args = parse_args(argv)
    if not osp.isfile(osp.join(args.src, 'annotations', 'keypoints308_train.json')):
        raise FileNotFoundError(f'--src {args.src}: no SynthHumans folder there (annotations/keypoints308_train.json);'
                                ' render one with tools/dataset_converters/make_synthhumans.py')
    layout = parts = lookup = None
    if args.keypoints:
        layout, parts = keypoint_layout(args.keypoints)
    else:
        lookup = class_lookup(read_parts_metainfo(find_layout_file(args.parts))['classes'], args.class_map)
    counts: Dict[str, int] = {}
    for split, limit in zip(SPLITS, (args.num_train, args.num_val)):
        counts[split] = convert_split(args.src, args.out, split, limit, layout, parts, lookup)
    print(f'converted {counts["train"]} train and {counts["val"]} val images to {args.out}')


if __name__ == '__main__':
    sys.exit(run_cli(main))
