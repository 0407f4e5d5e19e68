"""The manifest of a SynthHumans folder: which configuration it holds and which files are its own.

A folder may hold files that SynthHumans did not write (a user's own data next to the set). Only the files listed in
the set's manifest are ever removed or replaced; a file that is not listed is never deleted or overwritten.
"""
import json
import os
import os.path as osp
import shutil
from typing import List, Optional

MANIFEST = 'manifest.json'
CONFIG_KEYS = ('renderer_version', 'num_train', 'num_val', 'size', 'seed', 'rgb_only', 'photo_ratio', 'photos',
               'scene_variety', 'patterned_clothes', 'posture_ratio')
# Keys added after the first manifests were written, with the value that those older manifests mean (``photos``: the
# SHA-256 of the background photos, None without them).
CONFIG_DEFAULTS = dict(rgb_only=False, photo_ratio=0.0, photos=None, scene_variety='plain', patterned_clothes=False,
                       posture_ratio=0.0)
# Keys a manifest holds only when they differ from their default, so that such a set's manifest stays byte for byte
# that of the versions before them.
OMITTED_AT_DEFAULT = ('scene_variety', 'patterned_clothes', 'posture_ratio')


class SynthHumansFolderError(FileExistsError):
    """A folder that SynthHumans cannot generate into without touching files that are not its own."""


def read_manifest(root: str) -> Optional[dict]:
    """The manifest of ``root``, or None when ``root`` has none."""
    path = osp.join(root, MANIFEST)
    if not osp.lexists(path):
        return None
    try:
        with open(path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise SynthHumansFolderError(
            f'{path} cannot be read as a SynthHumans manifest ({e}); nothing was changed. Delete the folder by hand '
            'if nothing in it is yours, or generate into another folder.') from e
    if not isinstance(manifest, dict):
        raise SynthHumansFolderError(f'{path} is not a SynthHumans manifest (expected a JSON object); nothing was '
                                     'changed. Generate into another folder.')
    return manifest


def configuration(manifest: dict) -> dict:
    """The part of a manifest that decides whether a set can be reused (everything but its file list)."""
    return {key: manifest.get(key, CONFIG_DEFAULTS.get(key)) for key in CONFIG_KEYS}


def owned_files(root: str, manifest: dict) -> List[str]:
    """The files of the set in ``root`` as paths relative to it, the manifest first; checked to lie inside ``root``."""
    path = osp.join(root, MANIFEST)
    files = manifest.get('files')
    if files is None:
        raise SynthHumansFolderError(
            f'{root} holds a SynthHumans set (renderer version {manifest.get("renderer_version")}) whose {MANIFEST} '
            'does not list its files (it was written by an older version), so it cannot be replaced without risking '
            f'files that are not its own; nothing was changed. Delete the folder by hand if nothing in it is yours '
            f'(rm -r {root}), or generate into another folder.')
    if not isinstance(files, list) or not all(isinstance(rel, str) for rel in files):
        raise SynthHumansFolderError(f'{path}: "files" must be a list of paths relative to the folder; nothing was '
                                     'changed. Delete the folder by hand, or generate into another folder.')
    real_root = osp.realpath(root)
    for rel in files:
        outside = osp.isabs(rel) or osp.normpath(rel) != rel or rel.split(os.sep)[0] == '..' or rel == '.'
        if outside or osp.commonpath([real_root, osp.realpath(osp.join(root, osp.dirname(rel)))]) != real_root:
            raise SynthHumansFolderError(
                f'{path} lists {rel!r}, which is not a file inside {root} (absolute, not normalised, or reached '
                'through a symbolic link); nothing was changed. Delete the set by hand, or generate into another '
                'folder.')
    return [MANIFEST] + [rel for rel in files if rel != MANIFEST]


def remove_files(root: str, files: List[str]) -> None:
    """Delete ``files`` (relative to ``root``, in order), then the folders below ``root`` that this left empty."""
    for rel in files:
        try:
            os.remove(osp.join(root, rel))
        except FileNotFoundError:
            pass
    folders = set()
    for rel in files:
        folder = osp.dirname(rel)
        while folder:
            folders.add(folder)
            folder = osp.dirname(folder)
    for folder in sorted(folders, key=lambda f: f.count(os.sep), reverse=True):
        try:
            os.rmdir(osp.join(root, folder))
        except OSError:
            pass


def install_set(src: str, dst: str, replaced: List[str]) -> None:
    """Move the complete set in ``src`` into the existing folder ``dst``, replacing the files ``replaced`` of the set
    that ``dst`` held (see :func:`owned_files`). The manifest leaves first and arrives last, so a folder with a
    manifest is always complete. Refuses, changing nothing, when a new file would land on a file not in ``replaced``.
    """
    files = read_manifest(src)['files']
    replaced_set = set(replaced)
    taken = [rel for rel in files + [MANIFEST] if rel not in replaced_set and osp.lexists(osp.join(dst, rel))]
    folders = {osp.dirname(rel) for rel in files} - {''}
    taken += [folder for folder in sorted(folders)
              if osp.lexists(osp.join(dst, folder)) and not osp.isdir(osp.join(dst, folder))]
    if taken:
        raise SynthHumansFolderError(
            f'{dst} already holds {len(taken)} path(s) that SynthHumans would overwrite and that are not files of its '
            f'own set, e.g. {taken[:3]}; nothing was changed. Move them away, or generate into another folder.')
    remove_files(dst, replaced)
    for rel in files:
        os.makedirs(osp.dirname(osp.join(dst, rel)), exist_ok=True)
        shutil.move(osp.join(src, rel), osp.join(dst, rel))  # direct write: checked free (lexists) above
    shutil.move(osp.join(src, MANIFEST), osp.join(dst, MANIFEST))  # direct write: checked free above
