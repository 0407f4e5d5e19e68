"""sapiens2.engine.checkpoint.averaging: the mean of checkpoints of one model, read through the safe loader."""
import pytest
import torch

from sapiens2.engine.checkpoint import (
    CheckpointMismatchError,
    UnsafeCheckpointError,
    average_checkpoints,
    save_weights,
)


def write(tmp_path, name: str, state_dict: dict, meta=None) -> str:
    path = str(tmp_path / name)
    save_weights(state_dict, path, meta=meta)
    return path


def weights(scale: float, dtype=torch.float16) -> dict:
    return {'w': (torch.arange(6.0).reshape(2, 3) * scale).to(dtype), 'steps': torch.tensor([3])}


def test_the_mean_of_safetensors_and_torch_files_in_the_first_files_dtypes(tmp_path):
    paths = [write(tmp_path, 'a.safetensors', weights(1.0), meta={'dataset_meta': {'classes': ['a']}}),
             write(tmp_path, 'b.pth', weights(2.0, torch.float32)),
             write(tmp_path, 'c.safetensors', weights(6.0))]
    averaged = average_checkpoints(paths)
    assert averaged['meta'] == {'dataset_meta': {'classes': ['a']}}
    mean = averaged['state_dict']['w']
    assert mean.dtype == torch.float16 and torch.equal(mean, (torch.arange(6.0).reshape(2, 3) * 3).half())
    assert torch.equal(averaged['state_dict']['steps'], torch.tensor([3]))


def test_fp16_weights_are_summed_in_fp32(tmp_path):
    """60000 + 60000 overflows fp16; their mean is 60000."""
    big = {'w': torch.tensor([60000.0], dtype=torch.float16)}
    paths = [write(tmp_path, f'{n}.safetensors', big) for n in 'ab']
    assert average_checkpoints(paths)['state_dict']['w'].item() == 60000.0


@pytest.mark.parametrize('other, message', [
    ({'w': torch.zeros(2, 3), 'steps': torch.tensor([3]), 'extra': torch.zeros(1)}, 'holds extra and'),
    ({'w': torch.zeros(3, 2), 'steps': torch.tensor([3])}, 'w is (3, 2) in'),
    ({'w': torch.zeros(2, 3), 'steps': torch.tensor([4])}, 'steps (a torch.int64 tensor, e.g. a counter) differs'),
])
def test_checkpoints_of_different_models_are_refused_in_one_line(tmp_path, other, message):
    paths = [write(tmp_path, 'a.safetensors', weights(1.0, torch.float32)), write(tmp_path, 'b.safetensors', other)]
    with pytest.raises(CheckpointMismatchError) as err:
        average_checkpoints(paths)
    assert message in str(err.value) and '\n' not in str(err.value)


def test_one_checkpoint_is_not_an_average(tmp_path):
    with pytest.raises(ValueError, match='at least two checkpoints, got 1'):
        average_checkpoints([write(tmp_path, 'a.safetensors', weights(1.0))])


class RunsCode:
    def __reduce__(self):
        return print, ('code ran', )


def test_a_pickled_object_in_any_file_is_refused_unless_trusted(tmp_path):
    evil = str(tmp_path / 'evil.pth')
    torch.save({'state_dict': weights(1.0), 'meta': {'note': RunsCode()}}, evil)
    with pytest.raises(UnsafeCheckpointError):
        average_checkpoints([write(tmp_path, 'a.safetensors', weights(1.0)), evil])
    assert average_checkpoints([write(tmp_path, 'b.safetensors', weights(3.0)), evil],
                               trust_checkpoint=True)['state_dict']['w'][0, 1].item() == 2.0
