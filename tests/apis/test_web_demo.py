"""``sapiens2 web``: its work in this process, and the page in a real browser.

The browser test starts ``sapiens2 web`` on a free port of 127.0.0.1 with the Python that has gradio and selenium
(this one, or ``.venv-web`` from ``make web-deps``), then headless Chromium (Debian's chromium and chromium-driver)
uploads a rendered photo and waits for the result pictures (tests/apis/web_browser.py). Without those it skips, except
under ``CI``, where it fails. ``SAPIENS2_WEB_SCREENSHOT=path`` also saves the browser's screenshot there (the
README's docs/images/web_demo.png).
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path
from typing import Optional

import cv2
import numpy as np
import pytest

from sapiens2.apis.web_demo import WebDemo, offered_models, people_option, pose_status, split_outputs
from sapiens2.hub.download import cached_hub_file
from tests.hub.fake_hub import add_snapshot

REPO = Path(__file__).resolve().parents[2]
WEB_VENV_PYTHON = REPO / '.venv-web' / 'bin' / 'python'
SERVER_START_TIMEOUT = 300


@pytest.fixture(scope='module')
def photo(tmp_path_factory) -> str:
    """A rendered SynthHumans photo (people the tiny models were trained on)."""
    from sapiens2.datasets.synthhumans.render import render_scene
    from sapiens2.datasets.synthhumans.scene import sample_scene
    path = str(tmp_path_factory.mktemp('photo') / 'person.png')
    cv2.imwrite(path, render_scene(sample_scene(np.random.default_rng(3), (256, 192))).image)
    return path


def test_offers_the_shipped_models_offline():
    shipped, _ = offered_models()
    assert {'pose-tiny', 'seg-tiny', 'normal-tiny'} <= set(shipped)
    assert all(alias.endswith('-tiny') for alias in shipped)


def test_cached_hub_file_never_downloads(tmp_path):
    assert cached_hub_file('facebook/sapiens2-pose-1b', ['a.safetensors'], cache_dir=str(tmp_path)) is None
    add_snapshot(str(tmp_path), 'facebook/sapiens2-pose-1b', {'b.safetensors': b'x'})
    found = cached_hub_file('facebook/sapiens2-pose-1b', ['a.safetensors', 'b.safetensors'], cache_dir=str(tmp_path))
    assert found is not None and found.endswith('b.safetensors')


def test_run_on_a_photo_and_a_video(tmp_path, photo):
    demo = WebDemo(str(tmp_path), device='cpu')
    shown, files, status = demo.run(photo, ['pose-tiny'])
    assert [Path(p).relative_to(tmp_path).parts[1:] for p in shown] == [('pose', 'person.png')]
    assert files[0].endswith('person_results.zip') and any(Path(f).name.startswith('pose-') and f.endswith('.json')
                                                            for f in files[1:])
    with zipfile.ZipFile(files[0]) as archive:
        assert 'pose/person.png' in archive.namelist() and len(archive.namelist()) == len(files)
    assert 'pose-tiny on person.png' in status

    clip = str(tmp_path / 'walk.mp4')
    writer = cv2.VideoWriter(clip, cv2.VideoWriter_fourcc(*'mp4v'), 5, (192, 256))
    for _ in range(3):
        writer.write(cv2.imread(photo))
    writer.release()
    shown, files, _ = demo.run(clip, ['pose-tiny'])
    assert len(shown) == 1 and shown[0].endswith('walk.webm')  # a copy the browser plays
    capture = cv2.VideoCapture(shown[0])
    assert int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) in (0, 3) and capture.read()[0]  # WebM may not count frames
    capture.release()
    with pytest.raises(ValueError, match='upload a photo or a video'):
        demo.run(None, ['pose-tiny'])
    with pytest.raises(ValueError, match='choose at least one model'):
        demo.run(photo, [])


def test_keypoint_threshold_and_a_photo_where_no_person_is_found(tmp_path, photo):
    """The page's threshold slider reaches the pose picture and JSON; a photo with no keypoint above it says why."""
    demo = WebDemo(str(tmp_path), device='cpu')
    _, files, status = demo.run(photo, ['pose-tiny'], kpt_thr=0.05)
    pose_json = next(f for f in files if Path(f).name == 'pose-person.json')
    assert json.loads(Path(pose_json).read_text())['kpt_thr_used'] == 0.05
    assert re.search(r'pose: \d+ person box\(es\), \d+ keypoints above 0\.05', status), status
    wall = str(tmp_path / 'wall.png')  # a photo without a person: a plain grey wall
    cv2.imwrite(wall, np.full((480, 640, 3), 128, np.uint8))
    _, _, status = demo.run(wall, ['pose-tiny'], kpt_thr=0.3)
    assert 'pose: no person found - the page finds people as the person regions of the shipped matting' in status
    with pytest.raises(ValueError, match='the keypoint threshold is a score between 0 and 1, got 1.5'):
        demo.run(photo, ['pose-tiny'], kpt_thr=1.5)
    _, _, status = demo.run(photo, ['seg-tiny'], kpt_thr=0.5)
    assert 'pose:' not in status  # no pose, no pose line


def test_people_option_with_pose_and_a_dense_model_shows_the_people_picture(tmp_path, photo):
    assert people_option(['pose-tiny']) == dict(visible=False, value=False)  # hidden and cleared
    assert people_option(['seg-tiny', 'normal-tiny']) == dict(visible=False, value=False)
    assert people_option(['pose-tiny', 'normal-tiny', 'seg-tiny']) == dict(visible=True)
    assert people_option(['pointmap-tiny', 'pose-tiny']) == dict(visible=True)
    demo = WebDemo(str(tmp_path), device='cpu')
    shown, files, status = demo.run(photo, ['pose-tiny', 'seg-tiny'], people=True)
    assert [Path(p).relative_to(tmp_path).parts[1:] for p in shown] == [
        ('people', 'person.png'), ('pose', 'person.png'), ('seg', 'person.png')]
    assert any(Path(f).name == 'people-coco_results.json' for f in files) and '(people)' in status
    with pytest.raises(ValueError, match='people needs a pose model and a seg, matting or pointmap model'):
        demo.run(photo, ['pose-tiny'], people=True)


def test_split_outputs(tmp_path):
    for relative in ('pose/x.png', 'pose/x.json', 'seg/x.png', 'seg/x_seg.npy', 'seg/x_seg.png',
                     'seg/v/x.png'):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes(b'')
    pictures, raw = split_outputs(str(tmp_path), 'x')
    assert [Path(p).relative_to(tmp_path).as_posix() for p in pictures] == ['pose/x.png', 'seg/x.png']
    assert sorted(Path(p).relative_to(tmp_path).as_posix() for p in raw) == [
        'pose/x.json', 'seg/v/x.png', 'seg/x_seg.npy', 'seg/x_seg.png']


def web_python() -> Optional[str]:
    """The Python with gradio and selenium, if any, and Debian's chromium and its driver."""
    if not (shutil.which('chromium') and shutil.which('chromedriver')):
        return None
    check = 'import importlib.util as u, sys; sys.exit(not (u.find_spec("gradio") and u.find_spec("selenium")))'
    for python in (sys.executable, str(WEB_VENV_PYTHON)):
        if os.path.exists(python) and subprocess.run([python, '-c', check], timeout=120).returncode == 0:
            return python
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def wait_for_page(url: str, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f'sapiens2 web exited with {server.returncode}: {server.stdout.read()[-3000:]}')
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f'sapiens2 web did not answer on {url} within {SERVER_START_TIMEOUT} s')


@pytest.mark.slow
def test_web_demo_in_a_browser(photo):
    python = web_python()
    if python is None:
        message = ('the web demo test needs gradio and selenium (this Python or .venv-web) and chromium with '
                   'chromium-driver: run `make web-deps`')
        if os.environ.get('CI'):
            pytest.fail(f'{message} (CI is set, so this is a failure, not a skip)', pytrace=False)
        pytest.skip(message)
    port = free_port()
    url = f'http://127.0.0.1:{port}/'
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS='1', PYTHONUNBUFFERED='1')
    command = ('import sys, sapiens2_entry; '
               f'sys.exit(sapiens2_entry.main(["web", "--port", "{port}", "--device", "cpu"]))')
    server = subprocess.Popen([python, '-c', command], cwd=REPO, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        wait_for_page(url, server)
        browser = subprocess.run([python, '-m', 'tests.apis.web_browser', url, photo,
                                  os.environ.get('SAPIENS2_WEB_SCREENSHOT', '')], cwd=REPO, env=env,
                                 capture_output=True, text=True, timeout=600)
        assert browser.returncode == 0, browser.stdout[-3000:] + browser.stderr[-3000:]
        page = json.loads(browser.stdout.strip().splitlines()[-1])
    finally:
        server.send_signal(signal.SIGTERM)  # sapiens2 web closes gradio and removes its outputs
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    assert page['pictures'] == 3  # pose, seg and normal
    assert any(name.endswith('person_results.zip') for name in page['files'])
    assert 'on person.png' in page['status'] and all(alias in page['status'] for alias in ('pose-tiny', 'seg-tiny',
                                                                                            'normal-tiny'))
    assert page['threshold'] and 'keypoints above 0.3' in page['status']  # the slider, and what pose drew
    assert page['external'] == []  # no fonts, scripts or analytics from outside: it works with no network


class _PageError(Exception):
    """gradio.Error's signature, for the tests that run without gradio."""

    def __init__(self, message: str = 'Error raised.', print_exception: bool = True) -> None:
        super().__init__(message)
        self.print_exception = print_exception


def _fake_gradio(**attributes):
    from types import SimpleNamespace
    return SimpleNamespace(Error=_PageError, **attributes)


def test_unreadable_uploads_and_user_errors_are_page_messages(tmp_path, photo):
    from PIL import Image

    from sapiens2.apis.web_demo import shown_errors
    gr = _fake_gradio()

    def gradio_decoder(path):  # what gr.Image's preprocess does with an upload
        with Image.open(path) as image:
            return image.size

    (tmp_path / 'notes.png').write_text('not a picture')
    with pytest.raises(_PageError, match=r'the upload is not a photo this page can read \(cannot identify image '
                                         r'file') as caught:
        shown_errors(gr, gradio_decoder, 'a photo')(str(tmp_path / 'notes.png'))
    assert not caught.value.print_exception and caught.value.__suppress_context__  # no traceback in the log
    assert shown_errors(gr, gradio_decoder, 'a photo')(photo) == (192, 256)

    predict = shown_errors(gr, WebDemo(str(tmp_path), device='cpu').run)
    with pytest.raises(_PageError, match=r'input .*notes\.png is not an image OpenCV can read'):
        predict(str(tmp_path / 'notes.png'), ['pose-tiny'])
    with pytest.raises(_PageError, match='choose at least one model'):
        predict(photo, [])

    def bug(*_):
        raise RuntimeError('a bug')

    with pytest.raises(RuntimeError, match='a bug'):  # not the user's: Gradio logs its traceback
        shown_errors(gr, bug)()


def test_gradio_keeps_its_files_in_the_runs_folder(tmp_path, monkeypatch):
    """serve() points GRADIO_TEMP_DIR into the run's folder (removed at exit) and launches with the upload limit."""
    from types import SimpleNamespace
    from unittest import mock

    from sapiens2.apis import web_demo
    launched = {}

    class Page:
        def queue(self, **_):
            pass

        def launch(self, **kwargs):
            launched.update(kwargs, temp_dir=os.environ['GRADIO_TEMP_DIR'])
            Path(launched['temp_dir'], 'upload.png').write_bytes(b'x')  # Gradio's copy of an upload

        def close(self):
            pass

    def stop(_):
        raise KeyboardInterrupt

    monkeypatch.setenv('TMPDIR', str(tmp_path))
    monkeypatch.delenv('GRADIO_TEMP_DIR', raising=False)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    gradio = _fake_gradio(themes=SimpleNamespace(Default=lambda **_: None))
    try:
        with mock.patch.dict(sys.modules, {'gradio': gradio}), mock.patch.object(web_demo, 'build_page',
                                                                               return_value=Page()), \
                mock.patch.object(web_demo.time, 'sleep', side_effect=stop), \
                mock.patch('tempfile.tempdir', str(tmp_path)):
            web_demo.serve(max_upload_mb=5)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert launched['max_file_size'] == 5 * 2 ** 20
    temp_dir = Path(launched['temp_dir'])
    assert temp_dir.parent.parent == tmp_path and temp_dir.parent.name.startswith('sapiens2-web-')
    assert not temp_dir.parent.exists(), "the run's folder (with Gradio's copies) is left after the server stopped"


def test_the_pose_status_says_people_drawn_found_but_faint_or_none_found(tmp_path):
    (tmp_path / 'pose').mkdir()

    def status(instances):
        (tmp_path / 'pose' / 'p.json').write_text(json.dumps(dict(instances=instances)))
        return pose_status(str(tmp_path), 'p', 0.3)
    assert status([dict(keypoint_scores=[0.5, 0.1]), dict(keypoint_scores=[0.2])]) == \
        'pose: 1 person box(es), 1 keypoints above 0.3'
    assert status([dict(keypoint_scores=[0.2])]).startswith('pose: 1 person box(es) found, but no keypoint scored')
    assert status([]).startswith('pose: no person found')
    assert pose_status(str(tmp_path), 'other', 0.3) == ''
