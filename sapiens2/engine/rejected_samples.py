"""Which dataset, files and transform are behind MMEngine's ``Cannot find valid image after 1000!``.

MMEngine's ``BaseDataset`` re-draws another sample when the pipeline returns None (a loading transform rejecting a
sample with too few valid pixels, say) and gives up after ``max_refetch`` draws, or at once in test mode, with a
message that names neither the dataset nor the files nor the transform. :mod:`sapiens2.adaptations` replaces it
with :class:`NoValidSampleError` and the message of :func:`describe_rejection`.
"""
from typing import Optional


class NoValidSampleError(ValueError):
    """Every sample drawn from a dataset was rejected by its pipeline (or, in test mode, one sample was)."""


def describe_rejection(dataset, index: int) -> str:
    """What a rejection of sample ``index`` of ``dataset`` (an MMEngine ``BaseDataset``) is about, and what to do."""
    info = dataset.get_data_info(index)
    files = ', '.join(f'{key}={value}' for key, value in info.items()
                      if key.endswith('_path') and isinstance(value, str))
    culprit = _rejecting_transform(dataset, info)
    source = ', '.join(f'{key}={value!r}' for key, value in (('data_root', dataset.data_root),
                                                               ('ann_file', dataset.ann_file)) if value)
    name = f'{type(dataset).__name__}({source}) with {len(dataset)} samples'
    sample = f'sample {index}' + (f' ({files})' if files else '')
    if dataset.test_mode:
        what = f'{name}: {sample} was rejected by the test pipeline ({culprit}); in test mode every sample must pass.'
    else:
        what = (f'{name}: {dataset.max_refetch + 1} samples drawn in a row were all rejected by the pipeline (a '
                f'transform returned None); the first, {sample}, by {culprit}.')
    return (f'{what} Check that sample\'s files (empty masks, invalid depth, wrong folders...) and the thresholds of '
            'that transform; if only some samples are bad, remove them from the dataset.')


def _rejecting_transform(dataset, info: dict) -> str:
    """The first transform that returns None for ``info`` (run again, one transform at a time)."""
    pipeline = getattr(dataset.pipeline, 'transforms', None)
    if pipeline is None:
        return 'the pipeline'
    data: Optional[dict] = info
    for transform in pipeline:
        try:
            data = transform(data)
        except Exception as err:  # noqa: BLE001  (reported as the reason, not raised: the rejection is the error)
            return f'{transform!r}, which raised {type(err).__name__}: {err}'
        if data is None:
            return repr(transform)
    return 'a random transform of the pipeline (the sample passed when run again)'
