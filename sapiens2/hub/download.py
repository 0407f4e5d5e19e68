"""Downloads a checkpoint file of a Hub repository through huggingface_hub, trying candidate file names in order.

huggingface_hub provides the cache (``HF_HUB_CACHE``, default ``$HF_HOME/hub``), resumable downloads, progress bars,
offline mode (``HF_HUB_OFFLINE=1``), revision pinning and the token for gated repositories (``hf auth login`` or
``HF_TOKEN``). It reads those variables when it is first imported. Offline it raises the same
``LocalEntryNotFoundError`` for a missing repository, revision or file; :class:`HubCheckpointNotFoundError` says
which one is missing from the cache and how to get it.
"""
import os
import os.path as osp
import re
import threading
import time
from typing import Dict, List, Optional, Sequence

from sapiens2.version import __version__

COMMIT_HASH = re.compile(r'^[0-9a-f]{40}$')
_MAX_LISTED_FILES = 20
#: Seconds to wait for the Hub (or its proxy) to answer before calling it unreachable: name lookup, connection and
#: the first response together, tried once. huggingface_hub itself retries a failed request for about a minute.
CONNECT_TIMEOUT = 2.0
#: Seconds a Hub found unreachable stays so without a new attempt (a command resolves its checkpoint twice: before
#: torch is imported, then in the checkpoint loader).
UNREACHABLE_MEMORY = 60.0
_unreachable_until: Dict[str, float] = {}


class HubCheckpointNotFoundError(FileNotFoundError):
    """No candidate checkpoint file of a Hub repository could be found (online) or in the cache (offline)."""


class HubAccessError(OSError):
    """The Hub repository or revision does not exist, or it is gated/private and the token gives no access."""


def hub_cache_dir(cache_dir: Optional[str] = None) -> str:
    """The huggingface_hub cache folder in use (``cache_dir``, else ``HF_HUB_CACHE`` as read at its import)."""
    from huggingface_hub import constants
    return str(cache_dir or constants.HF_HUB_CACHE)


def is_offline(local_files_only: Optional[bool] = None) -> bool:
    """Offline mode: ``local_files_only``, else huggingface_hub's ``HF_HUB_OFFLINE`` (read at its import)."""
    from huggingface_hub import constants
    return bool(local_files_only) or bool(constants.HF_HUB_OFFLINE)


def hub_endpoint(endpoint: Optional[str] = None) -> str:
    """The Hub's address: ``endpoint``, else huggingface_hub's (``HF_ENDPOINT``, read at its import)."""
    from huggingface_hub import constants
    return endpoint or constants.ENDPOINT


def hub_reachable(endpoint: Optional[str] = None, timeout: float = CONNECT_TIMEOUT) -> bool:
    """Whether the Hub answers a ``HEAD`` request (any status) within ``timeout`` seconds, name lookup included.

    The request goes through huggingface_hub's HTTP session, so its proxies and certificates apply. A Hub that did
    not answer is not asked again for :data:`UNREACHABLE_MEMORY` seconds.
    """
    url = hub_endpoint(endpoint)
    if _unreachable_until.get(url, 0.0) > time.monotonic():
        return False
    if not _answers(url, timeout):
        _unreachable_until[url] = time.monotonic() + UNREACHABLE_MEMORY
        return False
    return True


def _answers(url: str, timeout: float) -> bool:
    from huggingface_hub.utils import get_session
    answered = threading.Event()

    def ask() -> None:
        try:
            get_session().head(url, timeout=timeout)
            answered.set()
        except Exception:  # refused, no route, no name, timed out, TLS: not an answer
            pass

    # A thread, because the name lookup has no timeout of its own; a daemon, so that it never delays the exit.
    worker = threading.Thread(target=ask, daemon=True)
    worker.start()
    worker.join(timeout)
    return answered.is_set()


def download_checkpoint(repo_id: str,
                        filenames: Sequence[str],
                        revision: Optional[str] = None,
                        cache_dir: Optional[str] = None,
                        local_files_only: Optional[bool] = None,
                        endpoint: Optional[str] = None) -> str:
    """The local path (in the Hub cache) of the first of ``filenames`` that ``repo_id`` has at ``revision``.

    Downloads it unless it is cached (offline: only the cache is used). A Hub that cannot be reached within
    :data:`CONNECT_TIMEOUT` (no network, connection refused) counts as offline, so the answer (the cached file, or
    the error saying what is missing) comes at once. When the repository has a ``config.json`` it is fetched too, so
    that :mod:`sapiens2.hub.config_check` can compare it with the model. ``endpoint`` replaces ``HF_ENDPOINT``.
    """
    from huggingface_hub import errors, hf_hub_download
    if not filenames:
        raise ValueError(f'no file names to look for in Hub repository {repo_id}')
    offline = is_offline(local_files_only)
    unreachable = not offline and not hub_reachable(endpoint)
    if offline or unreachable:  # the cache alone (huggingface_hub's local_files_only still asks the Hub for agents)
        path = cached_hub_file(repo_id, filenames, revision, cache_dir)
        if path is None:
            raise HubCheckpointNotFoundError(
                missing_checkpoint_message(repo_id, filenames, revision, cache_dir, offline, unreachable))
        fetch_config_json(repo_id, path, cache_dir, offline=True)
        return path
    for filename in filenames:
        try:
            path = hf_hub_download(repo_id, filename, revision=revision, cache_dir=cache_dir,
                                   local_files_only=unreachable, library_name='sapiens2',
                                   library_version=__version__, endpoint=endpoint)
        except errors.GatedRepoError as err:
            raise HubAccessError(
                f'Hub repository {repo_id} is gated: accept its license on https://huggingface.co/{repo_id}, then '
                f'log in (`hf auth login`) or set HF_TOKEN ({err})') from err
        except errors.RepositoryNotFoundError as err:
            raise HubAccessError(
                f'Hub repository {repo_id} does not exist or is private; check the name (docs/model_zoo.md lists '
                f'the released ones) or log in (`hf auth login`, or HF_TOKEN) if it is private ({err})') from err
        except errors.RevisionNotFoundError as err:
            raise HubAccessError(f'Hub repository {repo_id} has no revision {revision!r} (a branch, tag or commit); '
                                 f'fix the part after @ in the reference ({err})') from err
        except errors.EntryNotFoundError as err:
            unreachable = unreachable or isinstance(err, errors.LocalEntryNotFoundError)
            continue
        fetch_config_json(repo_id, path, cache_dir, unreachable, endpoint)
        return path
    raise HubCheckpointNotFoundError(
        missing_checkpoint_message(repo_id, filenames, revision, cache_dir, offline, unreachable))


def cached_hub_file(repo_id: str, filenames: Sequence[str], revision: Optional[str] = None,
                    cache_dir: Optional[str] = None) -> Optional[str]:
    """The path of the first of ``filenames`` that the Hub cache holds for ``repo_id`` at ``revision``, else None
    (never touches the network)."""
    from huggingface_hub import try_to_load_from_cache
    for filename in filenames:
        path = try_to_load_from_cache(repo_id, filename, cache_dir=cache_dir, revision=revision)
        if isinstance(path, str):
            return path
    return None


def snapshot_folder(path: str) -> Optional[str]:
    """The ``.../snapshots/<commit>`` folder holding ``path`` (a file of the Hub cache), or None."""
    folder = osp.dirname(osp.abspath(path))
    while folder != osp.dirname(folder):
        if COMMIT_HASH.match(osp.basename(folder)) and osp.basename(osp.dirname(folder)) == 'snapshots':
            return folder
        folder = osp.dirname(folder)
    return None


def fetch_config_json(repo_id: str, checkpoint_path: str, cache_dir: Optional[str], offline: bool,
                      endpoint: Optional[str] = None) -> Optional[str]:
    """The ``config.json`` of the snapshot of ``checkpoint_path``, downloaded if the repository has one (offline:
    if the cache has it)."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError
    snapshot = snapshot_folder(checkpoint_path)
    if snapshot is None:
        return None
    if offline:
        return cached_hub_file(repo_id, ('config.json', ), osp.basename(snapshot), cache_dir)
    try:
        return hf_hub_download(repo_id, 'config.json', revision=osp.basename(snapshot), cache_dir=cache_dir,
                               local_files_only=offline, library_name='sapiens2', library_version=__version__,
                               endpoint=endpoint)
    except (EntryNotFoundError, OSError):  # no config.json, or not cached while offline: nothing to check
        return None


def _repo_cache_folder(repo_id: str, cache_dir: Optional[str]) -> str:
    return osp.join(hub_cache_dir(cache_dir), 'models--' + repo_id.replace('/', '--'))


def _listing(names: List[str]) -> str:
    shown = ', '.join(names[:_MAX_LISTED_FILES])
    return shown + (f' ... and {len(names) - _MAX_LISTED_FILES} more' if len(names) > _MAX_LISTED_FILES else '')


def _snapshot_files(snapshot: str) -> List[str]:
    found = []
    for folder, _, files in os.walk(snapshot):
        found += [osp.relpath(osp.join(folder, f), snapshot) for f in files]
    return sorted(found)


def describe_cache(repo_id: str, revision: Optional[str], cache_dir: Optional[str]) -> str:
    """What the Hub cache holds of ``repo_id`` at ``revision``: nothing, other revisions, or which files."""
    repo_folder = _repo_cache_folder(repo_id, cache_dir)
    if not osp.isdir(repo_folder):
        return f'the repository is not in the cache (no {repo_folder})'
    revision = revision or 'main'
    commit = revision if COMMIT_HASH.match(revision) else None
    ref_file = osp.join(repo_folder, 'refs', *revision.split('/'))
    if commit is None and osp.isfile(ref_file):
        with open(ref_file) as f:
            commit = f.read().strip()
    snapshot = osp.join(repo_folder, 'snapshots', commit) if commit else None
    if snapshot is None or not osp.isdir(snapshot):
        refs_folder = osp.join(repo_folder, 'refs')
        refs = sorted(osp.relpath(osp.join(d, f), refs_folder) for d, _, fs in os.walk(refs_folder) for f in fs)
        snapshots = sorted(os.listdir(osp.join(repo_folder, 'snapshots'))) \
            if osp.isdir(osp.join(repo_folder, 'snapshots')) else []
        return (f'the repository is cached but not its revision {revision!r} (cached refs: {refs or "none"}; '
                f'snapshots: {snapshots or "none"})')
    files = _snapshot_files(snapshot)
    return f'snapshot {commit} of revision {revision!r} is cached with {_listing(files) if files else "no files"}'


def _remote_files(repo_id: str, revision: Optional[str]) -> Optional[List[str]]:
    try:
        from huggingface_hub import HfApi
        return sorted(HfApi(library_name='sapiens2', library_version=__version__).list_repo_files(
            repo_id, revision=revision))
    except Exception:  # the listing only enriches the error message
        return None


def missing_checkpoint_message(repo_id: str, filenames: Sequence[str], revision: Optional[str],
                               cache_dir: Optional[str], offline: bool, unreachable: bool = False) -> str:
    """The error text when no candidate file was found: repository, revision, files, cache, offline mode, fix."""
    from huggingface_hub import constants
    cache = hub_cache_dir(cache_dir)
    mode = 'on' if offline else ('off, but the Hub could not be reached' if unreachable else 'off')
    lines = [f'No checkpoint found in Hub repository {repo_id} at revision {revision or "main"}: tried '
             f'{", ".join(filenames)}.',
             f'  Hub cache: {cache} (HF_HUB_CACHE; HF_HOME={constants.HF_HOME}); offline mode (HF_HUB_OFFLINE): '
             f'{mode}.',
             f'  In the cache: {describe_cache(repo_id, revision, cache_dir)}.']
    if offline or unreachable:
        pin = f' --revision {revision}' if revision else ''
        lines.append(f'  Fix: run once with network access (HF_HUB_OFFLINE unset) to download it into the cache, or '
                     f'on a machine with network run `hf download {repo_id} {filenames[0]}{pin}` and copy its Hub '
                     'cache folder here (set HF_HOME or HF_HUB_CACHE to where it is); or pass a local file instead.')
    else:
        remote = _remote_files(repo_id, revision)
        listed = f' (the repository has: {_listing(remote)})' if remote else ''
        lines.append(f'  Fix: name the file in the reference, hf://{repo_id}@{revision or "main"}/<file>{listed}, '
                     'or pass a local file.')
    return '\n'.join(lines)
