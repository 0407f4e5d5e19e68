"""The settings of a labelling job, recorded in its output folder so that a rerun cannot mix two models' labels."""
import json
import os
import os.path as osp
from typing import Any, Dict

from sapiens2.utils import strict_json
from sapiens2.utils.atomic_save import atomic_write_text

SETTINGS_NAME = 'settings.json'


class SettingsMismatchError(ValueError):
    """A rerun into an output folder with other model, weights, task or output settings."""


def file_identity(path: str) -> Any:
    """What identifies a local checkpoint or config file's content cheaply (size and modification time); the name
    itself for anything else (an alias, ``hf://``)."""
    if path and osp.isfile(path):
        stat = os.stat(path)
        return [osp.realpath(path), stat.st_size, stat.st_mtime_ns]
    return path


def check_settings(job_dir: str, settings: Dict[str, Any], overwrite: bool, write: bool) -> None:
    """Compare ``settings`` with those recorded in ``job_dir``; record them when there are none (or ``overwrite``:
    everything is labelled anew). A difference without ``overwrite`` is one :class:`SettingsMismatchError` line naming
    the settings that changed. ``write``: this process records the settings (rank 0).
    """
    path = osp.join(job_dir, SETTINGS_NAME)
    settings = json.loads(json.dumps(settings))  # as it reads back (tuples are lists)
    recorded = None
    if osp.exists(path):
        recorded = strict_json.load_file(path, 'run again with --overwrite to label everything anew')
    changed = sorted(key for key in set(settings) | set(recorded or {})
                     if recorded is not None and recorded.get(key) != settings.get(key))
    if changed and not overwrite:
        raise SettingsMismatchError(
            f'{osp.dirname(job_dir)} holds the labels of a run with other settings ({", ".join(changed)} changed: '
            f'{_first_change(recorded, settings, changed[0])}); run with the same options to finish it, choose '
            'another --out, or pass --overwrite to label everything anew')
    if write and (recorded is None or changed):
        atomic_write_text(path, json.dumps(settings, indent=1, sort_keys=True) + '\n')


def _first_change(recorded: dict, settings: dict, key: str) -> str:
    return f'{key} was {json.dumps(recorded.get(key))}, now {json.dumps(settings.get(key))}'
