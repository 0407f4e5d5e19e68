"""Fixtures of the Hub tests."""
import socket

import pytest


@pytest.fixture
def refused_endpoint() -> str:
    """The address of a local port that refuses connections (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    return f'http://127.0.0.1:{port}'
