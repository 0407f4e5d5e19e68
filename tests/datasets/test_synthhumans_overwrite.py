"""ensure_synthhumans never deletes or overwrites a file that is not its own set's (manifest file list)."""
import json
import multiprocessing as mp
import os
import os.path as osp
from typing import Tuple

import pytest

from sapiens2.datasets.synthhumans import SynthHumansFolderError, ensure_synthhumans, generate_synthhumans
from sapiens2.datasets.synthhumans import generate as generate_module
from sapiens2.datasets.synthhumans.manifest import owned_files, read_manifest, remove_files

TINY = dict(num_train=2, num_val=1, size=(32, 24))
FILES_PER_SET = 3 * 12 + 4  # 12 maps per image, per split a keypoint and a scene-property file (plus manifest.json)


def _tree(root):
    return sorted(osp.relpath(osp.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def _manifest(root):
    with open(osp.join(root, 'manifest.json')) as f:
        return json.load(f)


def _user_file(root, rel='my_notes.txt', text='mine'):
    path = osp.join(root, rel)
    os.makedirs(osp.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)
    return path


def _read(path):
    with open(path) as f:
        return f.read()


@pytest.fixture
def count_renders(monkeypatch):
    calls = []
    render = generate_module.render_scene

    def counting(scene, background=None):
        calls.append(scene)
        return render(scene, background)

    monkeypatch.setattr(generate_module, 'render_scene', counting)
    return calls


def test_manifest_lists_every_file_it_wrote(tmp_path):
    root = generate_synthhumans(str(tmp_path / 'synth'), **TINY)
    files = _manifest(root)['files']
    assert sorted(files) == [rel for rel in _tree(root) if rel != 'manifest.json'] and len(files) == FILES_PER_SET


def test_generate_refuses_a_non_empty_folder(tmp_path):
    user = _user_file(str(tmp_path))
    with pytest.raises(SynthHumansFolderError, match='not empty'):
        generate_synthhumans(str(tmp_path), **TINY)
    assert _tree(str(tmp_path)) == ['my_notes.txt'] and _read(user) == 'mine'


def test_an_empty_folder_is_filled(tmp_path):
    root = tmp_path / 'synth'
    root.mkdir()
    assert ensure_synthhumans(str(root), **TINY) == str(root)
    assert len(_tree(str(root))) == FILES_PER_SET + 1
    assert sorted(os.listdir(tmp_path)) == ['synth']


def test_reuse_does_not_render(tmp_path, count_renders):
    root = str(tmp_path / 'synth')
    ensure_synthhumans(root, **TINY)
    assert len(count_renders) == 3
    ensure_synthhumans(root, **TINY)
    assert len(count_renders) == 3


def _folder_with_old_manifest(tmp_path) -> Tuple[str, dict]:
    """A generated folder whose manifest has no file list (as written before there was one), and that manifest."""
    root = str(tmp_path / 'synth')
    ensure_synthhumans(root, **TINY)
    old = {k: v for k, v in _manifest(root).items() if k != 'files'}
    with open(osp.join(root, 'manifest.json'), 'w') as f:
        json.dump(old, f)
    return root, old


def test_an_old_manifest_without_file_list_is_reused_when_it_matches(tmp_path, count_renders):
    root, old = _folder_with_old_manifest(tmp_path)
    ensure_synthhumans(root, **TINY)
    assert len(count_renders) == 3


def test_a_non_empty_folder_without_manifest_is_refused(tmp_path, count_renders):
    root = tmp_path / 'photos'
    user = _user_file(str(root))
    with pytest.raises(SynthHumansFolderError) as error:
        ensure_synthhumans(str(root), **TINY)
    assert str(root) in str(error.value) and 'overwrite' in str(error.value) and 'another' in str(error.value)
    assert _tree(str(root)) == ['my_notes.txt'] and _read(user) == 'mine'
    assert sorted(os.listdir(tmp_path)) == ['photos'] and not count_renders


def test_overwrite_adds_the_set_next_to_user_files_and_removes_only_its_own(tmp_path):
    root = str(tmp_path / 'photos')
    user = _user_file(root)
    nested = _user_file(root, osp.join('train', 'rgb', 'holiday.png'), 'photo')
    ensure_synthhumans(root, overwrite=True, **TINY)
    assert len(_tree(root)) == FILES_PER_SET + 1 + 2
    first = _manifest(root)
    ensure_synthhumans(root, overwrite=True, **TINY)
    assert _manifest(root) == first and len(_tree(root)) == FILES_PER_SET + 1 + 2
    assert _read(user) == 'mine' and _read(nested) == 'photo'
    assert sorted(os.listdir(tmp_path)) == ['photos']


def test_regeneration_on_a_mismatch_keeps_user_files(tmp_path, count_renders):
    root = str(tmp_path / 'synth')
    ensure_synthhumans(root, num_train=3, num_val=1, size=(32, 24))
    user = _user_file(root)
    nested = _user_file(root, osp.join('train', 'depth', 'extra.npy'), 'data')
    ensure_synthhumans(root, seed=1, **TINY)
    assert len(count_renders) == 4 + 3
    manifest = _manifest(root)
    assert manifest['seed'] == 1 and manifest['num_train'] == 2
    assert sorted(_tree(root)) == sorted(manifest['files'] + ['manifest.json', 'my_notes.txt', 'train/depth/extra.npy'])
    assert not osp.exists(osp.join(root, 'train', 'rgb', '000002.png'))
    assert _read(user) == 'mine' and _read(nested) == 'data'
    assert sorted(os.listdir(tmp_path)) == ['synth']


def test_removing_a_set_keeps_user_files_and_prunes_folders_it_emptied(tmp_path):
    root = str(tmp_path / 'synth')
    generate_synthhumans(root, **TINY)
    user = _user_file(root, osp.join('train', 'rgb', 'mine.png'))
    os.makedirs(osp.join(root, 'empty_of_mine'))
    remove_files(root, owned_files(root, read_manifest(root)))
    assert _tree(root) == ['train/rgb/mine.png'] and _read(user) == 'mine'
    assert sorted(os.listdir(root)) == ['empty_of_mine', 'train'] and os.listdir(osp.join(root, 'train')) == ['rgb']


@pytest.mark.parametrize('overwrite', [False, True])
def test_an_old_manifest_without_file_list_is_never_replaced(tmp_path, overwrite):
    root, old = _folder_with_old_manifest(tmp_path)
    before = _tree(root)
    with pytest.raises(SynthHumansFolderError, match='does not list its files') as error:
        ensure_synthhumans(root, seed=1 - overwrite, overwrite=overwrite, **TINY)
    assert root in str(error.value) and 'by hand' in str(error.value)
    assert _tree(root) == before and _manifest(root) == old
    assert sorted(os.listdir(tmp_path)) == ['synth']


def test_a_new_file_never_lands_on_a_user_file(tmp_path):
    root = str(tmp_path / 'photos')
    user = _user_file(root, osp.join('train', 'rgb', '000000.png'), 'my photo')
    with pytest.raises(SynthHumansFolderError, match='not files of its own') as error:
        ensure_synthhumans(root, overwrite=True, **TINY)
    assert 'train/rgb/000000.png' in str(error.value)
    assert _tree(root) == ['train/rgb/000000.png'] and _read(user) == 'my photo'
    assert sorted(os.listdir(tmp_path)) == ['photos']


def test_a_manifest_listing_paths_outside_the_folder_is_refused(tmp_path):
    root = str(tmp_path / 'synth')
    generate_synthhumans(root, **TINY)
    victim = _user_file(str(tmp_path), 'victim.txt')
    manifest = _manifest(root)
    manifest['files'].append('../victim.txt')
    with open(osp.join(root, 'manifest.json'), 'w') as f:
        json.dump(manifest, f)
    with pytest.raises(SynthHumansFolderError, match='not a file inside'):
        ensure_synthhumans(root, overwrite=True, **TINY)
    assert _read(victim) == 'mine' and len(_tree(root)) == FILES_PER_SET + 1


def test_a_manifest_reaching_out_through_a_symlink_is_refused(tmp_path):
    root = str(tmp_path / 'synth')
    generate_synthhumans(root, **TINY)
    outside = tmp_path / 'elsewhere'
    victim = _user_file(str(outside), '000000.png')
    os.symlink(str(outside), osp.join(root, 'linked'))
    manifest = _manifest(root)
    manifest['files'].append('linked/000000.png')
    with open(osp.join(root, 'manifest.json'), 'w') as f:
        json.dump(manifest, f)
    with pytest.raises(SynthHumansFolderError, match='symbolic link'):
        ensure_synthhumans(root, seed=3, **TINY)
    assert _read(victim) == 'mine'


def test_an_unreadable_manifest_is_refused(tmp_path):
    root = str(tmp_path / 'synth')
    _user_file(root, 'manifest.json', '{not json')
    with pytest.raises(SynthHumansFolderError, match='manifest.json cannot be read'):
        ensure_synthhumans(root, overwrite=True, **TINY)
    assert _tree(root) == ['manifest.json']


def test_a_file_in_place_of_the_folder_is_refused(tmp_path):
    path = _user_file(str(tmp_path), 'synth')
    with pytest.raises(SynthHumansFolderError, match='not a folder'):
        ensure_synthhumans(path, **TINY)
    assert _read(path) == 'mine'


def _ensure_seed_2(root):
    ensure_synthhumans(root, seed=2, **TINY)


def test_concurrent_regeneration_keeps_user_files(tmp_path):
    root = str(tmp_path / 'synth')
    ensure_synthhumans(root, **TINY)
    user = _user_file(root)
    procs = [mp.get_context('fork').Process(target=_ensure_seed_2, args=(root, )) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert all(p.exitcode == 0 for p in procs)
    assert _manifest(root)['seed'] == 2 and len(_tree(root)) == FILES_PER_SET + 2 and _read(user) == 'mine'
    assert sorted(os.listdir(tmp_path)) == ['synth']
