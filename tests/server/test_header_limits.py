"""Header limits of the service over real HTTP: a 1 MB header or 20,000 headers get 431 (the
middleware, under any server), and under ``abridged serve``'s protocol a head over the limit is
refused before it is complete."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn

from abridged.errors import SettingError
from abridged.server.app import create_app
from abridged.server.config import DEFAULT_MAX_HEADER_BYTES, DEFAULT_MAX_HEADERS, ServiceConfig
from abridged.server.protocol import HeaderLimitedProtocol
from abridged.testing import ProviderServer
from tests.server.conftest import free_port, service_config, serving


def test_a_huge_header_and_too_many_headers_get_431(
    provider: ProviderServer, tmp_path: Path
) -> None:
    config = service_config(f"sqlite:///{tmp_path / 'h.db'}", provider, open_access=True)
    with serving(config) as base:
        fine = httpx.get(base + "/healthz", headers={f"x-h{i}": "v" for i in range(50)})
        assert fine.status_code == 200
        huge = httpx.get(base + "/healthz", headers={"x-big": "a" * (1 << 20)}, timeout=60)
        assert huge.status_code == 431
        assert "larger than 32768 bytes" in huge.json()["detail"]
        many = httpx.get(
            base + "/v1/conversations", headers={f"x-h{i}": "v" for i in range(20_000)}, timeout=60
        )
        assert many.status_code == 431
        assert "more than 100 headers" in many.json()["detail"]


def test_the_limits_are_settings() -> None:
    assert ServiceConfig().max_headers == DEFAULT_MAX_HEADERS == 100
    assert ServiceConfig().max_header_bytes == DEFAULT_MAX_HEADER_BYTES == 32 << 10
    assert ServiceConfig(max_headers=200).to_env()["ABRIDGED_SERVE_MAX_HEADERS"] == "200"
    for bad in ({"max_headers": 15}, {"max_header_bytes": 4095}, {"max_headers": True}):
        with pytest.raises(SettingError):
            ServiceConfig(**bad)  # type: ignore[arg-type]


@contextmanager
def _protocol_server(tmp_path: Path) -> Iterator[int]:
    """The service under uvicorn with ``abridged serve``'s protocol; yields its port."""
    port = free_port()
    app = create_app(ServiceConfig(db=f"sqlite:///{tmp_path / 'p.db'}", open_access=True))
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", http=HeaderLimitedProtocol
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _answer(port: int, head: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(head)
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
        return received


def test_serves_protocol_refuses_a_head_over_the_limit_before_it_ends(tmp_path: Path) -> None:
    with _protocol_server(tmp_path) as port:
        ok = _answer(port, b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        assert ok.startswith(b"HTTP/1.1 200")
        # 40 KB of one header, never finished: refused without waiting for its end
        big = _answer(port, b"GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: " + b"a" * (40 << 10))
        assert big.startswith(b"HTTP/1.1 431"), big[:80]
        assert b"larger than 32768 bytes" in big
        lines = b"".join(b"x-h%d: v\r\n" % i for i in range(150))
        many = _answer(port, b"GET /healthz HTTP/1.1\r\nhost: x\r\n" + lines + b"\r\n")
        assert many.startswith(b"HTTP/1.1 431"), many[:80]
        assert b"more than 100 headers" in many
