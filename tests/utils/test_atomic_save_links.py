"""The one writer: atomic, and never through a symbolic link (sapiens2/utils/atomic_save.py)."""
import contextlib
import os
import stat
import threading

import numpy as np
import pytest

from sapiens2.utils.atomic_save import (
    AtomicOutput,
    LinkedOutputError,
    atomic_copy,
    atomic_output_with_siblings,
    atomic_save_npy,
    atomic_write_bytes,
    open_atomic,
    open_fresh,
    refuse_links,
)


@pytest.fixture
def mine(tmp_path):
    path = tmp_path / 'mine.txt'
    path.write_bytes(b'my own file')
    return path


@pytest.mark.parametrize('write', [
    lambda p: atomic_write_bytes(p, b'x'),
    lambda p: atomic_save_npy(p, np.zeros(2)),
    lambda p: open_fresh(p).close(),
    lambda p: AtomicOutput(p),
    lambda p: atomic_copy(__file__, p),
    lambda p: atomic_output_with_siblings(p).__enter__(),
])
def test_every_writer_refuses_a_link_and_leaves_its_target(tmp_path, mine, write):
    link = tmp_path / 'out.npy'
    link.symlink_to(mine)
    with pytest.raises(LinkedOutputError, match=rf'^the output {link} is a symbolic link to {mine}: .*remove the '
                       r'link'):
        write(str(link))
    assert mine.read_bytes() == b'my own file' and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ['mine.txt', 'out.npy'], 'a temporary file was left'


def test_a_linked_folder_below_the_root_is_refused_the_root_itself_may_be_a_link(tmp_path):
    (tmp_path / 'elsewhere').mkdir()
    (tmp_path / 'real_out').mkdir()
    (tmp_path / 'out').symlink_to(tmp_path / 'real_out')
    refuse_links(tmp_path / 'out/a.png', root=tmp_path / 'out')
    (tmp_path / 'real_out/seg').symlink_to(tmp_path / 'elsewhere')
    with pytest.raises(LinkedOutputError, match=rf'is below {tmp_path}/out/seg, a symbolic link to '):
        refuse_links(tmp_path / 'out/seg/sub/a.png', root=tmp_path / 'out')


def test_atomic_output_keeps_the_suffix_commits_and_discards(tmp_path):
    target = tmp_path / 'a.npy'
    with AtomicOutput(target) as out:
        assert out.tmp.endswith('.npy') and os.path.dirname(out.tmp) == str(tmp_path)
        np.save(out.tmp, np.arange(3))
    assert np.load(target).tolist() == [0, 1, 2]
    with pytest.raises(RuntimeError), AtomicOutput(target) as out:
        np.save(out.tmp, np.arange(5))
        raise RuntimeError('writer failed')
    assert np.load(target).tolist() == [0, 1, 2] and sorted(os.listdir(tmp_path)) == ['a.npy']


def test_open_atomic_and_open_fresh_keep_a_hard_links_other_name(tmp_path, mine):
    os.link(mine, tmp_path / 'out.txt')
    with open_atomic(tmp_path / 'out.txt') as f:
        f.write('new')
    assert (tmp_path / 'out.txt').read_text() == 'new' and mine.read_bytes() == b'my own file'
    os.link(mine, tmp_path / 'log.txt')
    with open_fresh(tmp_path / 'log.txt') as f:
        f.write('log')
    assert (tmp_path / 'log.txt').read_text() == 'log' and mine.read_bytes() == b'my own file'


def _write_fresh(path: str) -> None:
    with open_fresh(path, 'wb') as f:  # closed here, not when collected: the reader waits for the end of the pipe
        f.write(b'data')


def _write_atomic_output(path: str) -> None:
    with AtomicOutput(path).open('wb') as f:
        f.write(b'data')


@pytest.mark.parametrize('write', [lambda p: atomic_write_bytes(p, b'data'), _write_fresh, _write_atomic_output])
def test_a_pipe_or_device_is_written_into_never_replaced(tmp_path, write):
    """As /dev/null or /dev/full: replacing such a file with a regular one would break every later user of it."""
    pipe = tmp_path / 'pipe'
    os.mkfifo(pipe)
    read = []
    reader = threading.Thread(target=lambda: read.append(pipe.read_bytes()))
    reader.start()
    try:
        write(str(pipe))
    finally:
        if reader.is_alive():  # unblock a reader still waiting for a writer; one that has gone needs nothing
            with contextlib.suppress(OSError):  # ENXIO: no reader has the pipe open (a blocking open would hang)
                os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
        reader.join()
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode) and read == [b'data']


def test_a_file_with_siblings_replaces_them_all_after_success_and_nothing_after_an_error(tmp_path):
    model, data = tmp_path / 'model.onnx', tmp_path / 'model.onnx.data'
    model.write_bytes(b'old model')
    data.write_bytes(b'old data')
    with pytest.raises(RuntimeError):
        with atomic_output_with_siblings(model) as tmp:
            open(tmp + '.data', 'wb').write(b'half')
            raise RuntimeError('the writer failed')
    assert (model.read_bytes(), data.read_bytes()) == (b'old model', b'old data')
    with atomic_output_with_siblings(model) as tmp:
        assert os.path.basename(tmp) == 'model.onnx' and os.path.dirname(tmp) != str(tmp_path)
        open(tmp, 'wb').write(b'new model')
        open(tmp + '.data', 'wb').write(b'new data')
    assert (model.read_bytes(), data.read_bytes()) == (b'new model', b'new data')
    assert sorted(os.listdir(tmp_path)) == ['model.onnx', 'model.onnx.data']  # no temporary folder left
    data.unlink()
    data.symlink_to(tmp_path / 'model.onnx')
    with pytest.raises(LinkedOutputError):
        with atomic_output_with_siblings(model) as tmp:
            open(tmp, 'wb').write(b'newer')
            open(tmp + '.data', 'wb').write(b'newer data')
    assert model.read_bytes() == b'new model'
