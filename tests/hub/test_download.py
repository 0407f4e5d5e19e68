"""Downloads through huggingface_hub, offline from a Hub cache in a temporary folder (real snapshot layout).

Every call passes ``cache_dir`` and ``local_files_only=True``: huggingface_hub reads HF_HUB_CACHE/HF_HUB_OFFLINE only
when it is imported, so environment changes made here would be ignored.
"""
import pytest
import torch

from sapiens2.hub.download import HubCheckpointNotFoundError, download_checkpoint, snapshot_folder
from sapiens2.hub.resolve import resolve_hub_uri
from tests.hub.fake_hub import OTHER_REVISION, REVISION, add_snapshot

REPO = 'facebook/sapiens2-seg-0.4b'
FILES = ('sapiens2_0.4b_seg.safetensors', 'model.safetensors')


def weights(value: float) -> dict:
    return {'backbone.w': torch.full((2, ), value)}


def read(path: str) -> float:
    from safetensors.torch import load_file
    return float(load_file(path)['backbone.w'][0])


def test_the_first_cached_candidate_wins(tmp_path):
    cache = str(tmp_path)
    add_snapshot(cache, REPO, {'model.safetensors': weights(2.0), 'config.json': {'model_type': 'sapiens2'}})
    path = download_checkpoint(REPO, FILES, cache_dir=cache, local_files_only=True)
    assert path.endswith(f'snapshots/{REVISION}/model.safetensors') and read(path) == 2.0
    assert snapshot_folder(path).endswith(REVISION)

    add_snapshot(cache, REPO, {FILES[0]: weights(1.0)})
    assert read(download_checkpoint(REPO, FILES, cache_dir=cache, local_files_only=True)) == 1.0


def test_revision_pinning(tmp_path):
    cache = str(tmp_path)
    add_snapshot(cache, REPO, {FILES[0]: weights(1.0)})
    add_snapshot(cache, REPO, {FILES[0]: weights(3.0)}, revision=OTHER_REVISION, refs=('v2', ))
    assert read(download_checkpoint(REPO, FILES, cache_dir=cache, local_files_only=True)) == 1.0
    assert read(download_checkpoint(REPO, FILES, 'v2', cache_dir=cache, local_files_only=True)) == 3.0
    assert read(download_checkpoint(REPO, FILES, OTHER_REVISION, cache_dir=cache, local_files_only=True)) == 3.0
    uri = f'hf://{REPO}@v2/{FILES[0]}'
    assert read(resolve_hub_uri(uri, cache_dir=cache, local_files_only=True)) == 3.0


def test_uri_without_file_uses_the_model_zoo_candidates(tmp_path):
    cache = str(tmp_path)
    add_snapshot(cache, REPO, {FILES[0]: weights(1.0)})
    assert read(resolve_hub_uri(f'hf://{REPO}', cache_dir=cache, local_files_only=True)) == 1.0
    add_snapshot(cache, 'someone/finetuned', {'model.safetensors': weights(4.0)})
    assert read(resolve_hub_uri('hf://someone/finetuned', cache_dir=cache, local_files_only=True)) == 4.0


def test_missing_repository_error(tmp_path):
    with pytest.raises(HubCheckpointNotFoundError) as err:
        download_checkpoint('facebook/sapiens2-seg-9b', FILES, cache_dir=str(tmp_path), local_files_only=True)
    message = str(err.value)
    for part in ('facebook/sapiens2-seg-9b', 'revision main', ', '.join(FILES), str(tmp_path), 'HF_HUB_CACHE',
                 'HF_HOME', 'offline mode (HF_HUB_OFFLINE): on', 'the repository is not in the cache',
                 'run once with network access', 'hf download facebook/sapiens2-seg-9b'):
        assert part in message, part


def test_missing_file_error_lists_what_the_snapshot_has(tmp_path):
    cache = str(tmp_path)
    add_snapshot(cache, REPO, {'config.json': {'model_type': 'sapiens2'}, 'other.bin': b'x'})
    with pytest.raises(HubCheckpointNotFoundError) as err:
        download_checkpoint(REPO, FILES, cache_dir=cache, local_files_only=True)
    message = str(err.value)
    assert f'snapshot {REVISION} of revision \'main\' is cached with config.json, other.bin' in message
    assert f'tried {FILES[0]}, {FILES[1]}' in message
    with pytest.raises(HubCheckpointNotFoundError, match='tried nope.safetensors'):
        resolve_hub_uri(f'hf://{REPO}/nope.safetensors', cache_dir=cache, local_files_only=True)


def test_missing_revision_error_lists_the_cached_refs(tmp_path):
    cache = str(tmp_path)
    add_snapshot(cache, REPO, {FILES[0]: weights(1.0)})
    with pytest.raises(HubCheckpointNotFoundError) as err:
        download_checkpoint(REPO, FILES, 'v3', cache_dir=cache, local_files_only=True)
    assert "cached but not its revision 'v3'" in str(err.value) and "['main']" in str(err.value)
    assert REVISION in str(err.value)
