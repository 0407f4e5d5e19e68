"""A Hub that cannot be reached answers at once: the cached file, or the clear error, with no retries.

The Hub is a local port that refuses connections (a socket bound, then closed), or one that never answers; offline
mode, which the test session sets (tests/conftest.py), is switched off for these tests so that the download really
tries the network.
"""
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
import torch

from sapiens2.hub.download import HubCheckpointNotFoundError, download_checkpoint, hub_reachable
from tests.hub.fake_hub import add_snapshot

REPO = 'facebook/sapiens2-seg-0.4b'
FILES = ('sapiens2_0.4b_seg.safetensors', 'model.safetensors')


@pytest.fixture
def online(monkeypatch):
    from huggingface_hub import constants
    monkeypatch.setattr(constants, 'HF_HUB_OFFLINE', False)
    for name in ('HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy'):
        monkeypatch.delenv(name, raising=False)


def test_refused_hub_fails_at_once_with_the_clear_message(tmp_path, online, refused_endpoint):
    start = time.perf_counter()
    with pytest.raises(HubCheckpointNotFoundError) as err:
        download_checkpoint(REPO, FILES, cache_dir=str(tmp_path), endpoint=refused_endpoint)
    assert time.perf_counter() - start < 3  # huggingface_hub alone retries for about a minute
    message = str(err.value)
    assert 'offline mode (HF_HUB_OFFLINE): off, but the Hub could not be reached' in message
    assert f'hf download {REPO} {FILES[0]}' in message


def test_refused_hub_still_gives_the_cached_file(tmp_path, online, refused_endpoint):
    add_snapshot(str(tmp_path), REPO, {FILES[1]: {'backbone.w': torch.ones(2)}})
    path = download_checkpoint(REPO, FILES, cache_dir=str(tmp_path), endpoint=refused_endpoint)
    assert path.endswith(FILES[1])


def test_reachability_probe(online, refused_endpoint):
    """Reachable means answering: a refused port and a listener that never answers are not."""

    class NotFound(BaseHTTPRequestHandler):
        def do_HEAD(self):
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    assert not hub_reachable(refused_endpoint)
    with socket.socket() as silent:
        silent.bind(('127.0.0.1', 0))
        silent.listen()
        assert not hub_reachable(f'http://127.0.0.1:{silent.getsockname()[1]}', timeout=0.5)
    server = HTTPServer(('127.0.0.1', 0), NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert hub_reachable(f'http://127.0.0.1:{server.server_port}')  # any status is an answer
    finally:
        server.shutdown()
        server.server_close()
