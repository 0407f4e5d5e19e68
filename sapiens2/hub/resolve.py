"""Checkpoint names -> local files: Hub references (``hf://...``) and model aliases (``pose-1b``).

Importing this module registers both as schemes of the checkpoint loader
(:func:`sapiens2.engine.checkpoint.register_checkpoint_scheme`), and the check of a Hub snapshot's ``config.json`` as
a fit check (:func:`~sapiens2.engine.checkpoint.register_checkpoint_check`); ``import sapiens2`` does, so every place
that takes a checkpoint accepts them. An existing local file always wins.
"""
import os.path as osp
from typing import Optional

from mmengine.logging import print_log

from sapiens2.engine.checkpoint import register_checkpoint_check, register_checkpoint_scheme

from .config_check import check_model_fits_hub_config
from .download import HubCheckpointNotFoundError, download_checkpoint
from .model_zoo import checkpoint_root, entries_of_repo, find_local_checkpoint, get_entry
from .reference import HF_PREFIX, parse_hub_uri

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
        path = entry.packaged_path()
        if not osp.isfile(path):
            raise FileNotFoundError(
                f'Model alias {name} (defined in {", ".join(entry.sources)}) names the packaged file {path}, which '
                'is missing: reinstall sapiens2, or re-create the demo models with '
                'tools/misc/train_demo_models.py and copy them there')
        return path
    local = find_local_checkpoint(entry)
    if local is not None:
        print_log(f'{name}: using {local} (found under the checkpoint root, not downloaded)', logger='current')
        return local
    try:
        return download_checkpoint(entry.repo, entry.files, entry.revision, cache_dir, local_files_only)
    except HubCheckpointNotFoundError as err:
        raise HubCheckpointNotFoundError(
            f'Model alias {name} ({entry.uri()}, defined in {", ".join(entry.sources)}): {err}\n  Or put the file '
            f'({entry.files[0]}) under the checkpoint root {checkpoint_root()} (SAPIENS2_CHECKPOINT_ROOT).') from err


register_checkpoint_scheme(HF_PREFIX, resolve_hub_uri)
register_checkpoint_scheme('', resolve_alias)
register_checkpoint_check(check_model_fits_hub_config)
