"""Checkpoint names -> local files, without torch: Hub references (``hf://...``) and model aliases (``pose-1b``).

:mod:`sapiens2.hub.resolve` registers these as schemes of the checkpoint loader. The commands call
:func:`fetch_released` before they import torch, so that a released checkpoint that is neither cached nor reachable
fails within :data:`~sapiens2.hub.download.CONNECT_TIMEOUT` of the start, not after the seconds of imports.
"""
import os.path as osp
from typing import Optional

from .download import HubCheckpointNotFoundError, download_checkpoint
from .model_zoo import ModelZooEntry, checkpoint_root, entries_of_repo, find_local_checkpoint, get_entry
from .reference import is_hub_uri, parse_hub_uri

DEFAULT_FILENAMES = ('model.safetensors', 'pytorch_model.bin')


def resolve_hub_uri(uri: str, cache_dir: Optional[str] = None, local_files_only: Optional[bool] = None) -> str:
    """The local file of ``hf://org/repo[@revision][/<file>]``, downloaded into the Hub cache if needed.

    Without a file name, the candidates are the model zoo's file names for that repository, else
    ``model.safetensors`` then ``pytorch_model.bin``.
    """
    reference = parse_hub_uri(uri)
    if reference.filename:
        filenames = (reference.filename, )
    else:
        filenames = tuple(dict.fromkeys(name for entry in entries_of_repo(reference.repo_id) for name in entry.files))
        filenames = filenames or DEFAULT_FILENAMES
    return download_checkpoint(reference.repo_id, filenames, reference.revision, cache_dir, local_files_only)


def resolve_alias(name: str, cache_dir: Optional[str] = None, local_files_only: Optional[bool] = None) -> str:
    """The local file of a model alias: the file shipped in the package (``packaged`` rows), else a matching file
    under the checkpoint root, else the Hub download.

    A name that is no alias is returned as it is (the loader then reports the missing file).
    """
    entry = get_entry(name)
    if entry is None:
        return name
    if entry.packaged:
        return _packaged_file(name, entry)
    local = find_local_checkpoint(entry)
    if local is not None:
        from mmengine.logging import print_log
        print_log(f'{name}: using {local} (found under the checkpoint root, not downloaded)', logger='current')
        return local
    return _download_alias(name, entry, cache_dir, local_files_only)


def fetch_released(name: Optional[str]) -> None:
    """Download the checkpoint of a model alias or ``hf://`` reference now, unless it is cached, packaged or under
    the checkpoint root; a packaged alias whose file is missing and a local file that does not exist are errors now
    (before the seconds of imports); other names (URLs, None) are left to the checkpoint loader."""
    if not name or osp.exists(name):
        return
    if is_hub_uri(name):
        resolve_hub_uri(name)
        return
    entry = get_entry(name)
    if entry is None:
        if '://' not in name:  # the checkpoint loader's words
            raise FileNotFoundError(f'Checkpoint {name} does not exist; pass a local .safetensors or .pth file, a '
                                    'Hub reference hf://org/repo[@revision][/<file>], or a model alias (`sapiens2 '
                                    'models` lists them).')
    elif entry.packaged:
        _packaged_file(name, entry)
    elif find_local_checkpoint(entry) is None:
        _download_alias(name, entry)


def _packaged_file(name: str, entry: ModelZooEntry) -> str:
    path = entry.packaged_path()
    if not osp.isfile(path):
        raise FileNotFoundError(
            f'Model alias {name} (defined in {", ".join(entry.sources)}) names the packaged file {path}, which '
            'is missing: reinstall sapiens2, or re-create the demo models with '
            'tools/misc/train_demo_models.py and copy them there')
    return path


def _download_alias(name: str, entry: ModelZooEntry, cache_dir: Optional[str] = None,
                    local_files_only: Optional[bool] = None) -> str:
    try:
        return download_checkpoint(entry.repo, entry.files, entry.revision, cache_dir, local_files_only)
    except HubCheckpointNotFoundError as err:
        raise HubCheckpointNotFoundError(
            f'Model alias {name} ({entry.uri()}, defined in {", ".join(entry.sources)}): {err}\n  Or put the file '
            f'({entry.files[0]}) under the checkpoint root {checkpoint_root()} (SAPIENS2_CHECKPOINT_ROOT).') from err
