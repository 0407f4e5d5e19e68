"""The 29-class body-part metadata shipped with the package (``sapiens2/metainfo/seg29.json``)."""
from typing import Dict, List, Tuple

from . import load_metainfo

SEG29_FILE = 'seg29.json'


def load_seg29() -> dict:
    """Parsed ``seg29.json``: class names, RGB palette, CE class weights, flip pairs, source-class mappings."""
    return load_metainfo(SEG29_FILE)


def seg29_metainfo() -> dict:
    """mmseg dataset metainfo: ``classes`` (29 names) and ``palette`` (RGB triplets)."""
    meta = load_seg29()
    return dict(classes=tuple(meta['class_names']), palette=[list(c) for c in meta['palette_rgb']])


def seg29_flip_pairs() -> List[Tuple[int, int]]:
    """The 8 left/right label pairs swapped by a horizontal flip."""
    return [tuple(p) for p in load_seg29()['flip_swap_label_pairs']]


def seg29_class_weight() -> List[float]:
    """The 29 cross-entropy class weights of the official configs."""
    return [float(w) for w in load_seg29()['class_weight_ce']]


def source_label_map(mapping: str) -> Dict[int, int]:
    """Label map from a source taxonomy to the 29 classes, for every uint8 id.

    Ids the table maps to null, and ids outside the table, become 255 (ignore). Identity entries are omitted, so
    the map only lists ids that change (the format of mmseg's ``label_map``).

    Args:
        mapping: A key of ``source_to_29_mappings`` in ``seg29.json``, e.g. ``'DOME_MAPPING_34_to_29'``.
    """
    tables = load_seg29()['source_to_29_mappings']
    if mapping not in tables:
        raise KeyError(f'unknown source mapping {mapping!r} (seg29.json source_to_29_mappings); '
                       f'choose one of {sorted(tables)}')
    targets = {row['source_id']: row['target_id'] for row in tables[mapping] if row['target_id'] is not None}
    full = {source: targets.get(source, 255) for source in range(256)}
    return {source: target for source, target in full.items() if source != target}
