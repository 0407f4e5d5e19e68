"""Video and live input with the shipped pose-tiny: track ids through crossing paths, JSON Lines written frame by frame,
the detector every N frames, warnings once per run, webcams, a local MJPEG stream, and --show under Xvfb."""
import dataclasses
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading

import cv2
import numpy as np
import pytest

from sapiens2.apis import Sapiens2Inferencer
from sapiens2.apis.cli import main as infer_main
from sapiens2.apis.io.live import LatestFrames, is_live_input, live_name
from sapiens2.apis.io.sources import collect_sources
from sapiens2.apis.pose_video.stream import StreamOptions
from sapiens2.datasets.synthhumans.sequence import render_clip, write_clip

FRAMES = 8


@pytest.fixture(scope='module')
def clip():
    return render_clip('crossing', num_frames=FRAMES, size=(96, 128), seed=0)


@pytest.fixture(scope='module')
def clip_files(clip, tmp_path_factory):
    folder = tmp_path_factory.mktemp('clip')
    return dict(gif=write_clip(clip, str(folder / 'crossing.gif')), avi=write_clip(clip, str(folder / 'crossing.avi')))


@pytest.fixture(scope='module')
def inferencer():
    """pose-tiny; a frame without boxes is one whole-image box (the tests give boxes or a detector where they count)."""
    return Sapiens2Inferencer('pose-tiny', device='cpu', batch_size=4, task_options=dict(pose=dict(person_finder=None)))


def shuffled_boxes(clip, seed=0):
    """Ground-truth boxes per frame name, in a random order per frame; and that order."""
    rng = np.random.default_rng(seed)
    boxes, orders = {}, []
    for t, frame_boxes in enumerate(clip.bboxes):
        order = rng.permutation(len(frame_boxes))
        boxes[f'crossing_{t:06d}'] = frame_boxes[order].tolist()
        orders.append(order)
    return boxes, orders


def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope='module')
def tracked(inferencer, clip, clip_files, tmp_path_factory):
    """The GIF with shuffled ground-truth boxes, tracked and smoothed (the video defaults): (results, out dir)."""
    out_dir = tmp_path_factory.mktemp('tracked')
    results = inferencer(clip_files['gif'], out_dir=str(out_dir), bboxes=shuffled_boxes(clip)[0], show_progress=False)
    return results, out_dir


def test_track_ids_follow_people_through_crossing_paths(tracked, clip):
    results, tmp_path = tracked
    _, orders = shuffled_boxes(clip)
    assert len(results) == FRAMES
    ids_per_person = np.stack([r['pose']['track_ids'][np.argsort(order)] for r, order in zip(results, orders)])
    assert np.all(ids_per_person == ids_per_person[0]) and len(set(ids_per_person[0])) == 2
    # Smoothed (video default) keypoints stay near the ground truth.
    for r, order, truth in zip(results, orders, clip.keypoints):
        assert np.abs(r['pose']['keypoints'] - truth[order, :, :2]).mean() < 15
    # JSON Lines: a header, then one line per frame with the track ids; the drawn video.
    header, *frames = read_lines(tmp_path / 'pose' / 'crossing_predictions.jsonl')
    assert header['video'] == 'crossing' and header['num_keypoints'] == 308 and len(frames) == FRAMES
    assert [[i['track_id'] for i in f['instances']] for f in frames] == [list(r['pose']['track_ids']) for r in results]
    assert (tmp_path / 'pose' / 'crossing.mp4').is_file()


def test_smoothing_is_for_videos_only_and_can_be_turned_off(inferencer, tracked, clip, clip_files, monkeypatch):
    smoothed, _ = tracked
    def keypoints(options):
        monkeypatch.setattr(inferencer.tasks[0], 'stream_options', options)
        return [r['pose']['keypoints'] for r in inferencer(clip_files['gif'], bboxes=shuffled_boxes(clip)[0],
                                                           show_progress=False)]

    raw, causal = keypoints(StreamOptions(smooth=False)), keypoints(StreamOptions(lag=0))
    assert np.allclose(causal[0], raw[0]) and not np.allclose(causal[-1], raw[-1])  # a causal filter starts there
    # Video files are smoothed two-sided (the default lag): the first frame already sees the later ones.
    assert not np.allclose(smoothed[0]['pose']['keypoints'], raw[0])
    image = inferencer(clip.frames[0], show_progress=False)[0]['pose']
    assert 'track_ids' not in image  # images are neither tracked nor smoothed


def test_an_interrupted_video_keeps_every_frame_written(inferencer, clip, clip_files, tmp_path, monkeypatch):
    task = inferencer.tasks[0]
    predict, calls = task.predict, []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return predict(*args, **kwargs)

    monkeypatch.setattr(task, 'predict', interrupted)
    with pytest.raises(KeyboardInterrupt):
        Sapiens2Inferencer.from_tasks([task], batch_size=1)(clip_files['avi'], out_dir=str(tmp_path),
                                                            show_progress=False)
    header, *frames = read_lines(tmp_path / 'pose' / 'crossing_predictions.jsonl')
    assert [f['image_name'] for f in frames] == [f'crossing_{t:06d}' for t in range(3)]


def test_detector_every_n_frames_and_warnings_once(inferencer, clip, clip_files, monkeypatch):
    from sapiens2.apis import notices
    task = inferencer.tasks[0]
    detected, logged = [], []

    def detect(image):  # the ground-truth boxes of the frame (the AVI is lossless)
        frame = int(np.argmin([np.abs(image.astype(int) - f).mean() for f in clip.frames]))
        detected.append(frame)
        return clip.bboxes[frame]

    monkeypatch.setattr(notices, 'print_log', lambda message, **kwargs: logged.append(message))
    monkeypatch.setattr(task, 'find_people', detect)
    monkeypatch.setattr(task, 'stream_options', StreamOptions(det_interval=3))
    results = inferencer(clip_files['avi'], show_progress=False)
    assert detected == [0, 3, 6]
    assert all(list(r['pose']['track_ids']) == [1, 2] for r in results)
    # Between detections the boxes follow the tracked keypoints: the walkers' boxes move with them.
    centres = np.stack([r['pose']['bboxes'][:, [0, 2]].mean(-1) for r in results])
    truth = clip.bboxes[..., [0, 2]].mean(-1)
    assert np.array_equal(np.sign(centres[2] - centres[0]), np.sign(truth[2] - truth[0]))
    # Without boxes, detector or person finder every frame is the whole image: warned once for the whole video.
    monkeypatch.setattr(task, 'find_people', None)
    inferencer(clip_files['gif'], show_progress=False)
    assert len([m for m in logged if 'whole' in m]) == 1


def test_live_input_names():
    assert is_live_input('webcam') and is_live_input('webcam:2') and is_live_input('rtsp://cam.local/live')
    assert is_live_input('http://127.0.0.1:8080/video.mjpg') and not is_live_input('0')
    assert not is_live_input('webcam.mp4') and not is_live_input('clips/webcam:2.mp4')
    assert (live_name('webcam'), live_name('webcam:2'), live_name('http://h:1/a/video.mjpg')) == \
        ('webcam_0', 'webcam_2', 'video')
    with pytest.raises(FileNotFoundError, match='input 0 does not exist'):
        collect_sources('0')  # a file named 0, not a camera


def test_a_missing_camera_is_one_error_line(tmp_path, capsys):
    assert infer_main(['webcam:9', '--task', 'pose', '--size', 'tiny', '--out', str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith('sapiens2-infer: error: cannot open webcam:9: no camera with index 9') and '\n' not in err


def test_capture_on_a_video_file_drops_frames_for_a_slow_consumer(clip_files):
    frames = LatestFrames(cv2.VideoCapture(clip_files['avi']), 'crossing', fps=10)
    indices = []
    for index, image in frames:
        indices.append(index)
        assert image.shape == (96, 128, 3)
        threading.Event().wait(0.05)  # a model slower than the file's decoding
    assert indices == sorted(set(indices)) and indices[-1] == FRAMES - 1
    assert frames.processed == len(indices) and frames.processed + frames.dropped == FRAMES


class MJPEGHandler(http.server.BaseHTTPRequestHandler):
    """Serves the test clip's frames once as an MJPEG stream (multipart/x-mixed-replace) at 20 frames/s."""
    jpegs: list = []

    def do_GET(self):
        self.send_response(200)
        self.send_header('Content-Type', 'multipart/x-mixed-replace; boundary=frame')
        self.end_headers()
        try:
            for jpeg in self.jpegs:
                self.wfile.write(b'--frame\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n' % len(jpeg))
                self.wfile.write(jpeg + b'\r\n')
                threading.Event().wait(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


def test_mjpeg_stream_served_locally(inferencer, clip, tmp_path, monkeypatch):
    import mmengine.logging
    reports = []  # the report is logged once, at the end (live.py imports print_log when it reports)
    monkeypatch.setattr(mmengine.logging, 'print_log', lambda message, **kwargs: reports.append(message))
    MJPEGHandler.jpegs = [cv2.imencode('.jpg', frame)[1].tobytes() for frame in np.concatenate([clip.frames] * 3)]
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), MJPEGHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f'http://127.0.0.1:{server.server_address[1]}/camera.mjpg'
        results = inferencer(url, out_dir=str(tmp_path), show_progress=False)
    finally:
        server.shutdown()
        server.server_close()
    assert results and all(r['name'].startswith('camera_') for r in results)
    header, *frames = read_lines(tmp_path / 'pose' / 'camera_predictions.jsonl')
    assert len(frames) == len(results) and all(f['instances'][0]['track_id'] == 1 for f in frames)
    assert len(reports) == 1 and 'frames/s' in reports[0] and 'dropped' in reports[0]


def test_show_needs_a_display(tmp_path, clip_files, capsys, monkeypatch):
    monkeypatch.delenv('DISPLAY', raising=False)
    monkeypatch.delenv('WAYLAND_DISPLAY', raising=False)
    assert infer_main([clip_files['gif'], '--task', 'pose', '--size', 'tiny', '--out', str(tmp_path), '--show']) == 1
    assert '--show needs' in capsys.readouterr().err


def test_show_under_xvfb(tmp_path, clip):
    if shutil.which('xvfb-run') is None:
        if os.environ.get('CI') == '1':
            pytest.fail('xvfb-run is missing: make test-deps installs it')
        pytest.skip('xvfb-run is missing (make test-deps installs it)')
    gif = write_clip(dataclasses.replace(clip, frames=clip.frames[:3]), str(tmp_path / 'crossing.gif'))
    command = ['xvfb-run', '-a', sys.executable, '-m', 'sapiens2.apis.cli', gif, '--task', 'pose',
               '--size', 'tiny', '--out', str(tmp_path), '--show', '--no-vis', '--quiet', '--device', 'cpu']
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    header, *frames = read_lines(tmp_path / 'pose' / 'crossing_predictions.jsonl')
    assert len(frames) == 3
