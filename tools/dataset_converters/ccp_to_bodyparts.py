"""Convert Clothing Co-Parsing (CCP; Yang, Luo and Lin, "Clothing Co-Parsing by Joint Image Segmentation and
Labeling", CVPR 2014) to 29-class body-part label maps and person masks, in the layout of the SynthHumans demo set
(so that the seg and matting configs read both alike):

    <out>/{train,val}/rgb/<name>.jpg      the photo (the file's bytes)
    <out>/{train,val}/seg/<name>.png      29-class ids of sapiens2/metainfo/seg29.json, 255 = ignore (mmseg)
    <out>/{train,val}/alpha/<name>.png    person mask, 0 or 255: every pixel CCP gives a label (matting's alpha/)

Only the 1,004 photos with pixel-level annotations (``annotations/pixel-level/<name>.mat``, variable
``groundtruth``) are converted; the last ``--num-val`` of them in name order are the held-out split (default 150).
Label names are read from CCP's ``label_list.mat`` and mapped by name (``CCP_TO_SEG29``):

* ``null`` is Background; hair, glasses, garments and accessories take the class CCP's name says (``Hair``,
  ``Eyeglass``, ``Upper_Clothing``, ``Lower_Clothing``, ``Apparel``).
* One-piece garments (dress, suit, romper...) are split by height: rows in the top 36 % of the person's extent
  (head top to feet) are ``Upper_Clothing``, rows below 46 % ``Lower_Clothing``, the band between (where the waist
  and hips of a standing adult lie: about 0.37 and 0.48 of the stature from the head top) is ignored. CCP's people
  are standing street-fashion portraits, the case this rule is for.
* ``skin`` is ``Face_Neck`` in the top 18 % of the person (head and neck, about 0.17 of the stature) and above the
  highest upper-body garment; other skin (arms, hands, legs: left or right cannot be told) is ignored.
* Shoes, socks, stockings and gloves are ignored: CCP does not say which foot or hand.

Example:
    python tools/dataset_converters/ccp_to_bodyparts.py --src data/clothing-co-parsing --out data/ccp_bodyparts

A rerun skips the images whose files are all there (a killed run resumes); no existing file is replaced.
"""
import argparse
import os
import os.path as osp
import sys
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from sapiens2.metainfo.seg29 import load_seg29
from sapiens2.utils.cli_errors import add_debug_argument, run_cli

IGNORE = 255
SPLITS = ('train', 'val')
UPPER_ONE_PIECE, LOWER_ONE_PIECE = 0.36, 0.46  # share of the person's height: above Upper, below Lower
FACE_NECK_TOP = 0.18  # skin in this top share of the person (and above the upper garments) is Face_Neck
ONE_PIECE, SKIN = 'one_piece', 'skin'  # labels split by rule (see the module docstring)
# CCP label name -> 29-class name, a rule, or None (ignored). Every name of CCP's label_list.mat is here.
CCP_TO_SEG29: Dict[str, Optional[str]] = {
    'null': 'Background',
    'hair': 'Hair',
    'glasses': 'Eyeglass', 'sunglasses': 'Eyeglass',
    **dict.fromkeys(('blazer', 'blouse', 'bra', 'cape', 'cardigan', 'coat', 'hoodie', 'jacket', 'jumper', 'shirt',
                     'sweater', 'sweatshirt', 't-shirt', 'top', 'vest'), 'Upper_Clothing'),
    **dict.fromkeys(('jeans', 'leggings', 'panties', 'pants', 'shorts', 'skirt', 'tights'), 'Lower_Clothing'),
    **dict.fromkeys(('bodysuit', 'dress', 'intimate', 'romper', 'suit', 'swimwear'), ONE_PIECE),
    **dict.fromkeys(('accessories', 'bag', 'belt', 'bracelet', 'earrings', 'hat', 'necklace', 'purse', 'ring',
                     'scarf', 'tie', 'wallet', 'watch'), 'Apparel'),
    'skin': SKIN,
    **dict.fromkeys(('boots', 'clogs', 'flats', 'heels', 'loafers', 'pumps', 'sandals', 'shoes', 'sneakers',
                     'wedges', 'socks', 'stockings', 'gloves'), None),
}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Convert CCP to 29-class body-part maps and person masks.')
    parser.add_argument('--src', required=True,
                        help='the CCP folder (photos/, annotations/pixel-level/, label_list.mat)')
    parser.add_argument('--out', required=True, help='output folder (existing files are kept, not replaced)')
    parser.add_argument('--num-val', type=int, default=150, help='the last N annotated photos are the val split')
    add_debug_argument(parser)
    return parser.parse_args(argv)


def read_label_names(path: str) -> List[str]:
    """CCP's label names by id (``label_list.mat``: a 1x59 cell array of strings)."""
    from scipy.io import loadmat
    cells = np.asarray(loadmat(path).get('label_list', np.empty(0, object))).ravel()
    if cells.size == 0:
        raise ValueError(f'{path}: no label_list variable; is --src the Clothing Co-Parsing folder?')
    return [str(np.asarray(cell).ravel()[0]) if np.asarray(cell).size else '' for cell in cells]


def label_tables(names: Sequence[str]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(256,) uint8 lookup CCP id -> 29-class id (255 for ignored, rule-split and unknown ids), and the CCP ids of
    the one-piece garments and of skin."""
    classes = {name: i for i, name in enumerate(load_seg29()['class_names'])}
    unknown = [name for name in names if name not in CCP_TO_SEG29]
    if unknown:
        raise ValueError(f'label_list.mat names {unknown}, which ccp_to_bodyparts.CCP_TO_SEG29 does not map; add '
                         'them to the table')
    lookup = np.full(256, IGNORE, np.uint8)
    for ccp_id, name in enumerate(names):
        target = CCP_TO_SEG29[name]
        if target not in (None, ONE_PIECE, SKIN):
            lookup[ccp_id] = classes[target]
    rule_ids = [np.array([i for i, name in enumerate(names) if CCP_TO_SEG29[name] == rule], np.int64)
                for rule in (ONE_PIECE, SKIN)]
    return lookup, rule_ids[0], rule_ids[1]


def convert_labels(ccp: np.ndarray, names: Sequence[str]) -> Tuple[np.ndarray, np.ndarray]:
    """29-class ids (H, W) uint8 and the person mask (H, W) uint8 (0 / 255) of a CCP label map."""
    if ccp.ndim != 2 or ccp.size == 0:
        raise ValueError(f'a CCP label map must be a 2-D array, got shape {ccp.shape}')
    if int(ccp.max()) >= len(names):
        raise ValueError(f'label id {int(ccp.max())} is beyond the {len(names)} names of label_list.mat')
    classes = {name: i for i, name in enumerate(load_seg29()['class_names'])}
    lookup, one_piece_ids, skin_ids = label_tables(names)
    labels = lookup[ccp]
    person = ccp != names.index('null')
    rows = np.flatnonzero(person.any(axis=1))
    if rows.size:
        top, height = rows[0], rows[-1] - rows[0] + 1
        share = ((np.arange(ccp.shape[0]) - top) / height)[:, None]  # each row's place in the person's height
        one_piece = np.isin(ccp, one_piece_ids)
        labels[one_piece & (share < UPPER_ONE_PIECE)] = classes['Upper_Clothing']
        labels[one_piece & (share > LOWER_ONE_PIECE)] = classes['Lower_Clothing']
        upper_ids = [i for i, name in enumerate(names) if CCP_TO_SEG29[name] in ('Upper_Clothing', ONE_PIECE)]
        garment_rows = np.flatnonzero(np.isin(ccp, upper_ids).any(axis=1))
        garment_top = garment_rows[0] if garment_rows.size else top + FACE_NECK_TOP * height
        face = np.isin(ccp, skin_ids) & (share < FACE_NECK_TOP) & (np.arange(ccp.shape[0])[:, None] < garment_top)
        labels[face] = classes['Face_Neck']
    return labels, person.astype(np.uint8) * 255


def annotated_names(src: str) -> List[str]:
    folder = osp.join(src, 'annotations', 'pixel-level')
    if not osp.isdir(folder):
        raise FileNotFoundError(f'--src {src}: no annotations/pixel-level/ folder; give the Clothing Co-Parsing '
                                'folder (github.com/bearpaw/clothing-co-parsing)')
    return sorted(osp.splitext(f)[0] for f in os.listdir(folder) if f.endswith('.mat'))


def split_names(names: Sequence[str], num_val: int) -> Dict[str, List[str]]:
    """The last ``num_val`` names (in sorted order) are val, the rest train."""
    if not 0 <= num_val <= len(names):
        raise ValueError(f'--num-val {num_val}: there are {len(names)} annotated photos')
    cut = len(names) - num_val
    return dict(train=list(names[:cut]), val=list(names[cut:]))


def convert_one(src: str, out: str, split: str, name: str, label_names: Sequence[str]) -> bool:
    """Write the three files of one photo; False when they are all there already."""
    import cv2
    from scipy.io import loadmat

    from sapiens2.utils.atomic_save import atomic_write_bytes
    from sapiens2.utils.image_write import write_image
    paths = {sub: osp.join(out, split, sub, f'{name}{ext}')
             for sub, ext in (('rgb', '.jpg'), ('seg', '.png'), ('alpha', '.png'))}
    if all(osp.isfile(p) for p in paths.values()):
        return False
    mat_path = osp.join(src, 'annotations', 'pixel-level', f'{name}.mat')
    ccp = loadmat(mat_path).get('groundtruth')
    if ccp is None:
        raise ValueError(f'{mat_path}: no groundtruth variable')
    photo_path = osp.join(src, 'photos', f'{name}.jpg')
    with open(photo_path, 'rb') as f:
        photo = f.read()
    image = cv2.imdecode(np.frombuffer(photo, np.uint8), cv2.IMREAD_COLOR)
    if image is None or image.shape[:2] != ccp.shape:
        raise ValueError(f'{photo_path}: cannot be read or is not the size of its label map {ccp.shape}')
    try:
        labels, person = convert_labels(np.asarray(ccp, np.int64), label_names)
    except ValueError as err:
        raise ValueError(f'{mat_path}: {err}') from None
    for sub, path in paths.items():
        os.makedirs(osp.dirname(path), exist_ok=True)
        if osp.isfile(path):
            continue
        if sub == 'rgb':
            atomic_write_bytes(path, photo)
        else:
            write_image(path, labels if sub == 'seg' else person)
    return True


def main(argv=None) -> None:
    args = parse_args(argv)
    names = annotated_names(args.src)
    label_names = read_label_names(osp.join(args.src, 'label_list.mat'))
    label_tables(label_names)  # every name mapped, before any file is written
    splits = split_names(names, args.num_val)
    written = 0
    for split in SPLITS:
        for name in splits[split]:
            written += convert_one(args.src, args.out, split, name, label_names)
    print(f'{len(splits["train"])} train and {len(splits["val"])} val photos in {args.out} '
          f'({written} written, the rest were there)')


if __name__ == '__main__':
    sys.exit(run_cli(main))
