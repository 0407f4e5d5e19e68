"""Labelling jobs end to end on 2 CPU ranks (gloo, tools/dist_infer.sh) with the nano pose config: the split, the
merge (the same files as one process), the failure record, resumption after kill -9 of a rank or of the launcher at
several moments, the refused rerun with other settings, and the COCO keypoint file read back by mmpose."""
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch

from sapiens2.apis.builder import init_model
from sapiens2.apis.cli import main
from sapiens2.engine.checkpoint import save_weights

REPO = Path(__file__).resolve().parents[3]
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')
IMAGES = 30
MERGED = ('index.jsonl', 'failures.jsonl', 'pose/coco_results.json', 'pose/coco_keypoints.json')
TIMEOUT_S = 300


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture(scope='module')
def job_inputs(tmp_path_factory):
    """A folder of tiny JPEGs, one damaged file among them, and random nano pose weights."""
    root = tmp_path_factory.mktemp('labelling')
    folder = root / 'photos'
    folder.mkdir()
    rng = np.random.default_rng(0)
    for i in range(IMAGES):
        cv2.imwrite(str(folder / f'{i:06d}.jpg'), rng.integers(0, 255, (64, 48, 3), np.uint8))
    (folder / 'damaged.jpg').write_bytes(b'\xff\xd8\xff\xe0 truncated')
    torch.manual_seed(0)
    checkpoint = str(root / 'pose.safetensors')
    save_weights(init_model(POSE, device='cpu').state_dict(), checkpoint)
    return folder, checkpoint


def options(job_inputs, out) -> list:
    folder, checkpoint = job_inputs
    return [str(folder), '--model', POSE, '--weights', checkpoint, '--out', str(out), '--device', 'cpu',
            '--batch-size', '1', '--kpt-thr', '0.0', '--person-finder', 'none']  # noise: one whole-image box each


def env() -> dict:
    return dict(os.environ, PYTHON=sys.executable, PORT=str(free_port()), OMP_NUM_THREADS='1', PYTHONPATH=str(REPO))


def launch(job_inputs, out, *extra) -> subprocess.Popen:
    """tools/dist_infer.sh with 2 ranks, in a session of its own (killed whole at the end of a test)."""
    return subprocess.Popen(['bash', 'tools/dist_infer.sh', '2', *options(job_inputs, out), *extra], cwd=REPO,
                            env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def finish(proc: subprocess.Popen, code: int = 0) -> str:
    output, _ = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == code, output[-4000:]
    return output


def merged(out: Path) -> dict:
    return {name: (out / name).read_text() for name in MERGED}


@pytest.fixture(scope='module')
def reference(job_inputs, tmp_path_factory):
    """An uninterrupted 2-rank job: its output folder and its output."""
    out = tmp_path_factory.mktemp('reference') / 'labels'
    return out, finish(launch(job_inputs, out))


def test_two_ranks_split_the_inputs_and_merge_them(reference):
    out, output = reference
    last = output.strip().splitlines()[-1]
    assert last.startswith(f'{IMAGES + 1} items: {IMAGES} succeeded, 1 failed, 0 skipped'), output[-3000:]
    assert re.search(r'photos/damaged\.jpg failed, the run goes on \(failures\.jsonl\): cannot read image', output)
    ranks = [[json.loads(line) for line in (out / f'.sapiens2_job/ledger/rank{r}.jsonl').read_text().splitlines()]
             for r in (0, 1)]
    names = [[entry['item'] for entry in lines] for lines in ranks]
    assert not set(names[0]) & set(names[1]) and abs(len(names[0]) - len(names[1])) <= 1
    assert sorted(names[0] + names[1]) == sorted([f'{i:06d}' for i in range(IMAGES)] + ['damaged'])
    index = [json.loads(line) for line in (out / 'index.jsonl').read_text().splitlines()]
    assert [entry['item'] for entry in index] == sorted(names[0] + names[1])  # each item once
    failures = [json.loads(line) for line in (out / 'failures.jsonl').read_text().splitlines()]
    assert [entry['item'] for entry in failures] == ['damaged'] and 'cannot read image' in failures[0]['reason']
    results = json.loads((out / 'pose/coco_results.json').read_text())
    assert sorted({entry['image_id'] for entry in results}) == list(range(IMAGES))  # numbered files keep numbers
    assert all(len(entry['keypoints']) == 308 * 3 for entry in results)


def test_the_keypoint_file_reads_back_in_mmpose(reference):
    from mmpose.datasets import CocoDataset

    from sapiens2.datasets.pose import Keypoints308CocoDataset
    out, _ = reference
    annotations = json.loads((out / 'pose/coco_keypoints.json').read_text())
    assert len(annotations['images']) == IMAGES and len(annotations['categories'][0]['keypoints']) == 308
    for dataset_type in (CocoDataset, Keypoints308CocoDataset):
        dataset = dataset_type(ann_file=str(out / 'pose/coco_keypoints.json'), data_root='', data_prefix=dict(img=''),
                               serialize_data=False)
        assert len(dataset) == len(annotations['annotations'])
        info = dataset.get_data_info(0)
        assert Path(info['img_path']).is_file() and info['keypoints'].shape == (1, 308, 2)
        first = np.asarray(annotations['annotations'][0]['keypoints']).reshape(-1, 3)
        assert np.allclose(info['keypoints'][0], first[:, :2])


@pytest.fixture
def one_thread():
    """torch on one thread, as each rank of tools/dist_infer.sh (OMP_NUM_THREADS=1): sums in another order would
    round some coordinates of the written files the other way."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_one_process_merges_to_the_same_files(reference, job_inputs, tmp_path, capsys, one_thread):
    out = tmp_path / 'labels'
    assert main([*options(job_inputs, out), '--launcher', 'none', '--quiet', '--workers', '1']) == 0
    assert merged(out) == merged(reference[0])
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith(f'{IMAGES + 1} items: {IMAGES} succeeded')


def test_a_listed_file_that_is_no_image_is_a_failure_of_a_job_and_an_error_of_a_run(job_inputs, tmp_path, capsys):
    """The early not-an-image check of a run (before the model is built) stays out of a job's way: there the item is
    recorded in failures.jsonl and the others are labelled."""
    folder, _ = job_inputs
    (tmp_path / 'notes.jpg').write_text('not a photo')
    listing = tmp_path / 'list.txt'
    listing.write_text(f'{folder / "000000.jpg"}\nnotes.jpg\n{folder / "000001.jpg"}\n')
    args = [str(listing), *options(job_inputs, tmp_path / 'labels')[1:], '--quiet']
    assert main(args) != 0  # a run: one line before any model
    assert 'notes.jpg is not an image OpenCV can read' in capsys.readouterr().err
    assert main([*args, '--launcher', 'none']) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith('3 items: 2 succeeded, 1 failed')
    failures = [json.loads(line) for line in (tmp_path / 'labels' / 'failures.jsonl').read_text().splitlines()]
    assert [entry['item'] for entry in failures] == ['notes']


def test_a_rerun_skips_the_done_items_and_other_settings_are_refused(reference, job_inputs, tmp_path, capsys,
                                                                    caplog):
    out = tmp_path / 'labels'
    shutil.copytree(reference[0], out)
    args = [*options(job_inputs, out), '--launcher', 'none', '--quiet']
    assert main(args[:-1]) == 0
    captured = capsys.readouterr()
    last = captured.out.strip().splitlines()[-1]
    assert last.startswith(f'{IMAGES + 1} items: 0 succeeded, 1 failed, {IMAGES} skipped')
    assert f'{IMAGES + 1}/{IMAGES + 1}' in captured.err.split('\r')[-1]  # the job's progress line, earlier items in
    assert any('damaged.jpg failed, the run goes on' in record.getMessage() for record in caplog.records)
    assert merged(out) == merged(reference[0])
    before = {p: p.stat().st_mtime_ns for p in (out / 'pose').iterdir()}
    assert main([*args[:-3], '--kpt-thr', '0.5', '--launcher', 'none', '--quiet']) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'kpt_thr changed: kpt_thr was 0.0, now 0.5' in err[0] and '--overwrite' in err[0]
    assert {p: p.stat().st_mtime_ns for p in (out / 'pose').iterdir()} == before  # nothing written


def _rank_pids(agent: int) -> dict:
    """The rank processes torchrun's agent ``agent`` started, by rank."""
    pids = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/stat') as f:
                parent = int(f.read().rsplit(')', 1)[1].split()[1])
            with open(f'/proc/{entry}/environ', 'rb') as f:
                environ = dict(item.split(b'=', 1) for item in f.read().split(b'\0') if b'=' in item)
        except (OSError, ValueError):
            continue
        if parent == agent and b'RANK' in environ:
            pids[int(environ[b'RANK'])] = int(entry)
    return pids


def _done_lines(out: Path, rank=None) -> int:
    paths = (out / '.sapiens2_job/ledger').glob('rank*.jsonl' if rank is None else f'rank{rank}.jsonl')
    return sum(p.read_text().count('\n') for p in paths)


def _freeze(pids) -> None:
    """SIGSTOP ``pids`` and wait until each is stopped (or gone): the job's progress ends at this moment."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    while any(_proc_field(pid, 'State:')[:1] not in ('T', 't', 'Z', 'X', '') for pid in pids):
        time.sleep(0.001)


def _proc_field(pid: int, field: str) -> str:
    try:
        with open(f'/proc/{pid}/status') as f:
            return next((line.split(None, 1)[1] for line in f if line.startswith(field)), '')
    except OSError:
        return ''


def _sigterm_pending(pid: int) -> bool:
    pending = _proc_field(pid, 'ShdPnd:')
    return not pending or bool(int(pending, 16) & (1 << (signal.SIGTERM - 1)))


def _kill_when(proc: subprocess.Popen, out: Path, victim: str, items: int) -> None:
    """``kill -9`` the ``victim`` (``rank0``, ``rank1`` or ``launcher``) of the job ``proc`` once it (the launcher:
    the job) has finished ``items`` items; wait until the job and its ranks are gone.

    The ranks are frozen (SIGSTOP) at that moment and thawed only once their ending is under way (the agent's SIGTERM
    pending, or the launcher's key-value store gone), so that how many items the others finish meanwhile does not
    depend on the machine's speed: at most the one each had in hand."""
    try:
        rank = None if victim == 'launcher' else int(victim[-1])
        lines = _done_lines(out, rank) + items
        deadline = time.time() + TIMEOUT_S
        while _done_lines(out, rank) < lines and proc.poll() is None and time.time() < deadline:
            time.sleep(0.002)
        ranks = _rank_pids(proc.pid)
        _freeze(ranks.values())
        os.kill(proc.pid if victim == 'launcher' else ranks[rank], signal.SIGKILL)
        others = [pid for r, pid in ranks.items() if r != rank]
        while victim != 'launcher' and not all(map(_sigterm_pending, others)) and time.time() < deadline:
            time.sleep(0.01)  # torchrun's agent has seen the death and is ending the other ranks
        for pid in others:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        output, _ = proc.communicate(timeout=TIMEOUT_S)
        if victim != 'launcher':  # torchrun's agent ends the job and names the rank
            assert proc.returncode != 0 and re.search(rf'rank\s*: {rank}', output), output[-3000:]
        while any(os.path.exists(f'/proc/{pid}') for pid in ranks.values()) and time.time() < deadline:
            time.sleep(0.1)  # ranks without their launcher stop at their next call to its key-value store
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.slow
def test_a_job_killed_at_several_moments_finishes_on_rerun_with_the_same_merged_files(reference, job_inputs,
                                                                                      tmp_path):
    """kill -9 of rank 1 after its first item, of the launcher in the rerun, of rank 0 in the next; then a last
    rerun finishes the job: the merged files are those of the uninterrupted job, no file is truncated."""
    out = tmp_path / 'labels'
    for victim, items in (('rank1', 1), ('launcher', 3), ('rank0', 1)):
        _kill_when(launch(job_inputs, out), out, victim, items)
        assert _done_lines(out) < IMAGES + 1, f'the kill of {victim} came after the end: no resumption tested'
    output = finish(launch(job_inputs, out))
    assert merged(out) == merged(reference[0])
    assert not [p for p in out.rglob('*') if '.tmp' in p.name]  # no temporary file of a killed write left
    assert all(cv2.imread(str(p)) is not None for p in (out / 'pose').glob('*.png'))  # no truncated picture
    assert re.search(r'\d+ succeeded, 1 failed, \d+ skipped', output.strip().splitlines()[-1])
