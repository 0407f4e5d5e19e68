"""Training never writes over or deletes a checkpoint-named file of its work dir that it did not write
(sapiens2/engine/work_dir_record.py, through the atomic local backend)."""
import json
import zipfile

import pytest
import torch
from mmengine.fileio import get_file_backend

import sapiens2  # noqa: F401  (registers the atomic local backend)
from sapiens2.engine.work_dir_record import RECORD_NAME, claim_checkpoints, is_training_checkpoint, release_checkpoints


@pytest.fixture
def work_dir(tmp_path):
    yield tmp_path
    release_checkpoints(str(tmp_path))


def _listed(work_dir):
    return json.loads((work_dir / RECORD_NAME).read_text())['files']


def test_checkpoints_written_are_recorded_and_may_be_replaced_and_removed(work_dir):
    claim_checkpoints(str(work_dir))
    backend = get_file_backend(str(work_dir))
    backend.put(b'one', str(work_dir / 'iter_1.pth'))
    backend.put(b'two', str(work_dir / 'iter_1.pth'))
    backend.put_text('cfg', str(work_dir / 'config.py'))  # not a checkpoint name: not recorded
    assert _listed(work_dir) == ['iter_1.pth']
    backend.remove(str(work_dir / 'iter_1.pth'))
    assert not (work_dir / 'iter_1.pth').exists()
    release_checkpoints(str(work_dir))
    claim_checkpoints(str(work_dir))  # the same run again: its own files are no strangers


def test_a_file_put_there_during_the_run_is_neither_replaced_nor_removed(work_dir):
    claim_checkpoints(str(work_dir))
    mine = work_dir / 'best_acc_iter_3.pth'
    mine.write_bytes(b'my notes')
    backend = get_file_backend(str(work_dir))
    backend.remove(str(mine))
    with pytest.raises(FileExistsError, match=rf'^{mine} appeared in the work dir during training and was not '
                       'written by it'):
        backend.put(b'checkpoint', str(mine))
    assert mine.read_bytes() == b'my notes'


def test_only_real_training_checkpoints_are_adopted_on_resume(work_dir):
    torch.save({'meta': {'iter': 3}, 'state_dict': {}, 'message_hub': {}}, work_dir / 'iter_3.pth')
    torch.save({'state_dict': {}}, work_dir / 'iter_6.pth')  # weights only: no training checkpoint
    assert is_training_checkpoint(str(work_dir / 'iter_3.pth'))
    assert not is_training_checkpoint(str(work_dir / 'iter_6.pth'))
    with zipfile.ZipFile(work_dir / 'notes.zip', 'w') as archive:
        archive.writestr('x/data.pkl', b'not a pickle')
    assert not is_training_checkpoint(str(work_dir / 'notes.zip'))
    (work_dir / 'last_checkpoint').write_text(str(work_dir / 'iter_3.pth'))
    with pytest.raises(FileExistsError, match=r'holds iter_6.pth, which .*not resumable'):
        claim_checkpoints(str(work_dir), resume=True)
    (work_dir / 'iter_6.pth').unlink()
    claim_checkpoints(str(work_dir), resume=True)
    assert _listed(work_dir) == ['iter_3.pth', 'last_checkpoint']
