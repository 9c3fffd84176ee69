"""uvicorn's httptools protocol with a bound on the request head it buffers (``abridged serve``
runs with it): httptools itself holds a header of any size, and any number of them."""

from __future__ import annotations

import json
import os
from functools import cache

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from abridged.server.config import DEFAULT_MAX_HEADER_BYTES, DEFAULT_MAX_HEADERS, ENV_PREFIX
from abridged.server.headers import body_431

__all__ = ["HeaderLimitedProtocol"]


@cache
def _limits() -> tuple[int, int]:
    """The service's limits, from its ``ABRIDGED_SERVE_*`` variables (``ServiceConfig.to_env``:
    a worker process learns its settings from them)."""

    def read(name: str, default: int) -> int:
        raw = os.environ.get(ENV_PREFIX + name)
        try:
            value = json.loads(raw) if raw is not None else default
        except ValueError:
            return default
        return value if isinstance(value, int) and not isinstance(value, bool) else default

    return read("MAX_HEADERS", DEFAULT_MAX_HEADERS), read(
        "MAX_HEADER_BYTES", DEFAULT_MAX_HEADER_BYTES
    )


class HeaderLimitedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, answering 431 and closing the connection once a request's
    head (line and headers) passes the byte limit or its header count passes the count limit.

    httptools itself buffers a header of any size (a 1 MB header, or 20,000 of them, were
    accepted); this checks after each chunk is parsed, so what a client can make a worker
    hold is the limit plus one read (at most 256 KiB)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._max_headers, self._max_bytes = _limits()
        self._head_bytes = 0
        self._header_count = 0
        self._in_head = True  # reading a request line and headers (not a body)
        self._refusal: str | None = None

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._in_head and self._refusal is None and self._head_bytes > self._max_bytes:
            # the headers are still not complete: no request cycle has started
            self._refusal = f"the request's headers are larger than {self._max_bytes} bytes"
            self.send_400_response(self._refusal)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._header_count = 0

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        if self._header_count > self._max_headers:
            self._refusal = f"the request has more than {self._max_headers} headers"
            # the parser reports the callback's error; uvicorn then calls send_400_response
            raise ValueError(self._refusal)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_bytes = 0
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head = True

    def send_400_response(self, msg: str) -> None:
        if self._refusal is None:
            super().send_400_response(msg)
            return
        body = body_431(self._refusal)
        head = (
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: application/json\r\n"
            b"content-length: " + str(len(body)).encode("ascii") + b"\r\n"
            b"connection: close\r\n\r\n"
        )
        self.transport.write(head + body)
        self.transport.close()
