"""The pieces of a labelling job without a model: the split, the ledger (torn lines), the settings check, input
lists and globs, and the failures of unreadable inputs."""
import json
import os

import cv2
import numpy as np
import pytest

from sapiens2.apis.io.frames import frames_and_ends
from sapiens2.apis.io.input_lists import expand_inputs
from sapiens2.apis.io.sources import Source, collect_sources
from sapiens2.apis.labelling.ledger import DONE, FAILED, Ledger, read_ledgers
from sapiens2.apis.labelling.settings import SettingsMismatchError, check_settings
from sapiens2.apis.labelling.share import rank_share


@pytest.mark.parametrize('world', [1, 2, 3, 7])
def test_rank_shares_are_disjoint_cover_everything_and_are_balanced(world):
    items = [f'img{i:03d}' for i in range(50)]
    shares = [rank_share(items, rank, world) for rank in range(world)]
    assert sorted(sum(shares, [])) == items
    assert max(map(len, shares)) - min(map(len, shares)) <= 1
    assert shares == [rank_share(items, rank, world) for rank in range(world)]  # deterministic


def test_rank_share_refuses_a_rank_outside_the_world():
    with pytest.raises(ValueError, match='rank 2 of a world of 2'):
        rank_share([1, 2], 2, 2)


def test_ledger_ignores_a_torn_last_line_and_cuts_it_before_appending(tmp_path):
    ledger = Ledger(str(tmp_path), 0)
    ledger.record('a', DONE, 'in/a.jpg')
    ledger.record('b', FAILED, 'in/b.jpg', 'cannot read image')
    ledger.close()
    with open(ledger.path, 'ab') as f:  # a kill in the middle of a line
        f.write(b'{"item": "c", "sta')
    assert {name: entry['status'] for name, entry in read_ledgers(str(tmp_path)).items()} == dict(a=DONE, b=FAILED)
    ledger = Ledger(str(tmp_path), 0)  # the rank's next run cuts the torn line off
    ledger.record('c', DONE, 'in/c.jpg')
    ledger.close()
    lines = open(ledger.path).read().splitlines()
    assert [json.loads(line)['item'] for line in lines] == ['a', 'b', 'c']


def test_a_done_line_of_any_rank_wins_over_a_failed_one(tmp_path):
    later = Ledger(str(tmp_path), 0)  # rank 0 of a second run did what rank 1 of the first could not
    later.record('x', DONE, 'x.jpg')
    later.close()
    first = Ledger(str(tmp_path), 1)
    first.record('x', FAILED, 'x.jpg', 'vanished')
    first.close()
    assert read_ledgers(str(tmp_path))['x']['status'] == DONE


def test_a_damaged_ledger_line_is_one_error_line(tmp_path):
    ledger = Ledger(str(tmp_path), 0)
    ledger.close()
    with open(ledger.path, 'w') as f:
        f.write('not json\n')
    with pytest.raises(ValueError, match=r'rank0\.jsonl, line 1, is not a ledger line .* --overwrite'):
        read_ledgers(str(tmp_path))


def test_settings_are_recorded_and_a_change_is_refused_unless_overwrite(tmp_path):
    job = str(tmp_path / '.sapiens2_job')
    check_settings(job, dict(model=['pose-tiny'], kpt_thr=0.3), overwrite=False, write=True)
    check_settings(job, dict(model=['pose-tiny'], kpt_thr=0.3), overwrite=False, write=True)  # the same: fine
    with pytest.raises(SettingsMismatchError, match=r'kpt_thr changed: kpt_thr was 0\.3, now 0\.5\); run with the '
                       r'same options'):
        check_settings(job, dict(model=['pose-tiny'], kpt_thr=0.5), overwrite=False, write=True)
    check_settings(job, dict(model=['pose-tiny'], kpt_thr=0.5), overwrite=True, write=True)
    check_settings(job, dict(model=['pose-tiny'], kpt_thr=0.5), overwrite=False, write=True)


def test_list_files_and_globs_expand_in_order(tmp_path):
    for sub in ('a', 'b/c'):
        (tmp_path / sub).mkdir(parents=True)
        for name in ('x.jpg', 'y.png'):
            (tmp_path / sub / name).write_bytes(b'')
    listing = tmp_path / 'list.txt'
    listing.write_text(f'# my images\nb/c/y.png\n\n{tmp_path}/a/x.jpg\n')
    assert expand_inputs([str(listing)]) == [str(tmp_path / 'b/c/y.png'), str(tmp_path / 'a/x.jpg')]
    assert expand_inputs([f'{tmp_path}/**/*.jpg']) == [str(tmp_path / 'a/x.jpg'), str(tmp_path / 'b/c/x.jpg')]
    with pytest.raises(FileNotFoundError, match=r'list\.txt, line 2: gone\.jpg does not exist'):
        listing.write_text('a/x.jpg\ngone.jpg\n')
        expand_inputs([str(listing)])
    with pytest.raises(FileNotFoundError, match=r"input pattern '.*\*\.gif' matches no file"):
        expand_inputs([f'{tmp_path}/*.gif'])
    with pytest.raises(ValueError, match='names no input'):
        listing.write_text('# nothing\n')
        expand_inputs([str(listing)])


@pytest.mark.parametrize('workers', [0, 1])
def test_unreadable_inputs_are_reported_and_the_frames_go_on(tmp_path, workers):
    rng = np.random.default_rng(0)
    for name in ('a', 'c', 'vanished'):
        cv2.imwrite(str(tmp_path / f'{name}.jpg'), rng.integers(0, 255, (16, 12, 3), np.uint8))
    (tmp_path / 'b.jpg').write_bytes(b'\xff\xd8 not a jpeg')
    clip = tmp_path / 'clip.avi'  # 20 frames announced, cut at half
    writer = cv2.VideoWriter(str(clip), cv2.VideoWriter_fourcc(*'MJPG'), 10, (48, 64))
    for i in range(20):
        writer.write(np.random.default_rng(i).integers(0, 255, (64, 48, 3), np.uint8))
    writer.release()
    data = clip.read_bytes()
    clip.write_bytes(data[:len(data) // 2])
    sources = collect_sources(str(tmp_path))
    os.remove(tmp_path / 'vanished.jpg')  # listed, then gone before it is read
    failed = {}
    seen = [(source.name, index) for source, index, _ in
            frames_and_ends(sources, lambda source, reason: failed.setdefault(source.name, reason), workers)]
    assert set(failed) == {'b', 'clip', 'vanished'}
    assert 'cannot read image' in failed['b'] and 'does not exist' in failed['vanished']
    assert failed['clip'].startswith('video ended early')
    assert ('a', 0) in seen and ('c', 0) in seen and ('b', 0) not in seen
    assert [name for name, index in seen if index is None] == [source.name for source in sources]  # every end
    with pytest.raises(OSError, match='cannot read image'):
        list(frames_and_ends([Source('image', 'b', 'x', path=str(tmp_path / 'b.jpg'))], None, workers))


@pytest.mark.parametrize('argv, message', [
    (['x.jpg', '--model', 'pose-tiny', '--out', 'o', '--workers', '-1'], '--workers -1: give a number of decoding'),
    (['x.jpg', '--model', 'pose-tiny', '--out', 'o', '--launcher', 'none', '--show'], '--show shows nothing in a '
     'labelling job'),
    (['x.jpg', '--merge', 'o'], '--merge OUT takes no inputs'),
    (['--model', 'pose-tiny', '--out', 'o'], 'give the inputs'),
    (['x.jpg', '--model', 'pose-tiny', '--launcher', 'mpi', '--out', 'o'], "invalid choice: 'mpi'"),
])
def test_mistakes_in_the_new_options_are_one_error_line(argv, message, capsys):
    from sapiens2.apis.cli import parse_args
    with pytest.raises(SystemExit):
        parse_args(argv)
    errors = [line for line in capsys.readouterr().err.splitlines() if 'error:' in line]
    assert len(errors) == 1 and message in errors[0]


def test_merge_of_a_folder_without_a_job_and_a_bad_list_are_one_line(tmp_path, capsys):
    from sapiens2.apis.cli import main
    assert main(['--merge', str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip() == (f'sapiens2-infer: error: {tmp_path} holds no labelling job '
                                               f'({tmp_path}/.sapiens2_job/settings.json is missing): --merge takes '
                                               'the --out folder of a sapiens2-infer run with --launcher (--debug '
                                               'shows the traceback)')
    (tmp_path / 'list.txt').write_text('gone.jpg\n')
    assert main([str(tmp_path / 'list.txt'), '--model', 'pose-tiny', '--out', str(tmp_path / 'o'), '--launcher',
                 'none']) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'list.txt, line 1: gone.jpg does not exist' in err[0]
