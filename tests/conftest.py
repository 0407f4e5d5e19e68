"""Shared pytest fixtures."""
import atexit
import os
import os.path as osp
import shutil
import tempfile

import pytest

REPO_ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
# No test may reach the Hugging Face Hub: huggingface_hub reads this when it is first imported (after this file),
# and subprocesses inherit it.
os.environ['HF_HUB_OFFLINE'] = '1'
# The data check's label-id cache (sapiens2.datasets.label_id_cache) of a test session stays out of the user's home.
os.environ['SAPIENS2_CACHE_DIR'] = tempfile.mkdtemp(prefix='sapiens2-test-cache-')
atexit.register(shutil.rmtree, os.environ['SAPIENS2_CACHE_DIR'], ignore_errors=True)


def pytest_collection_modifyitems(items: list) -> None:
    """Files that hold a ``slow`` test first (in their own order), so that ``make test``'s workers, which take whole
    files in this order, start the long tests early instead of leaving one for the end."""
    slow_files = {item.path for item in items if item.get_closest_marker('slow')}
    items.sort(key=lambda item: item.path not in slow_files)


@pytest.fixture(scope='session')
def synthhumans_root() -> str:
    """The default SynthHumans dataset (256 train + 64 val at 256x192, seed 0), rendered once under data/.

    Generation is deterministic regardless of thread settings (pure numpy element-wise maths and OpenCV I/O) and
    safe when several pytest processes start at once (file lock, temporary folder, atomic rename).
    """
    from sapiens2.datasets.synthhumans import ensure_synthhumans
    return ensure_synthhumans(osp.join(REPO_ROOT, 'data', 'synthhumans'), num_train=256, num_val=64, size=(256, 192),
                              seed=0)


@pytest.fixture(scope='session')
def _pristine_default_scopes() -> dict:
    from mmengine.registry import DefaultScope
    return dict(DefaultScope._instance_dict)


@pytest.fixture(autouse=True)
def _isolate_default_scope(_pristine_default_scopes):
    """Resets MMEngine's default scope after each test, so an ``init_default_scope`` (mmpose, mmseg...) in a test or
    in a module-scoped fixture does not change how later tests resolve registry names."""
    from mmengine.registry import DefaultScope
    yield
    DefaultScope._instance_dict.clear()
    DefaultScope._instance_dict.update(_pristine_default_scopes)


@pytest.fixture(autouse=True)
def _restore_logger_levels():
    """Restores the level of every MMEngine logger after each test: a benchmark's ``main`` run in-process quietens
    the current logger to WARNING, which would hide the INFO lines a later test reads."""
    from mmengine.logging import MMLogger
    MMLogger.get_current_instance()  # MMEngine's default 'mmengine' logger, created at INFO if no test made it yet
    levels = {name: logger.level for name, logger in MMLogger._instance_dict.items()}
    yield
    for name, level in levels.items():
        if name in MMLogger._instance_dict:
            MMLogger._instance_dict[name].setLevel(level)


@pytest.fixture(scope='session')
def hf():
    """The transformers module for the interoperability tests (requirements/tests.txt). Without it they skip,
    except when the ``CI`` environment variable is set: then a missing transformers is a failure."""
    try:
        import transformers
    except ImportError:
        message = ('transformers is not installed: pip install -r requirements/tests.txt to run the transformers '
                   'interoperability tests')
        if os.environ.get('CI'):
            pytest.fail(f'{message} (CI is set, so this is a failure, not a skip)', pytrace=False)
        pytest.skip(f'{message}; with CI set this is a failure')
    return transformers
