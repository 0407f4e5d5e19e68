"""The message that replaces MMEngine's "Cannot find valid image after 1000!"."""
from mmengine.dataset import BaseDataset

from sapiens2.engine.rejected_samples import describe_rejection


class _Samples(BaseDataset):
    def load_data_list(self):
        return [dict(img_path='d/a.png', depth_path='d/a.npy', sample_name='a')]


class _Keep:
    def __call__(self, results):
        return results


class _Drop:
    def __init__(self):
        self.calls = 0

    def __call__(self, results):
        self.calls += 1
        return None if self.calls == 1 else results  # a random rejection: passes when run again

    def __repr__(self):
        return 'Drop()'


def test_names_the_files_and_the_transform():
    dataset = _Samples(data_root='d', pipeline=[_Keep(), lambda r: None], serialize_data=False, max_refetch=9)
    message = describe_rejection(dataset, 0)
    assert message.startswith("_Samples(data_root='d') with 1 samples: 10 samples drawn in a row were all rejected")
    assert 'sample 0 (img_path=d/a.png, depth_path=d/a.npy)' in message and 'sample_name' not in message


def test_a_random_rejection_says_so_and_test_mode_is_named():
    drop = _Drop()
    dataset = _Samples(pipeline=[drop], serialize_data=False, test_mode=True)
    drop.calls = 1
    message = describe_rejection(dataset, 0)
    assert 'was rejected by the test pipeline (a random transform of the pipeline' in message
