"""Limits on a request's headers: too many, or too many bytes, is answered 431 before any route
runs (``HeaderLimit``; under ``abridged serve`` also before they are all held in memory:
``abridged.server.protocol``)."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["HeaderLimit", "body_431", "header_problem"]


def header_problem(count: int, size: int, max_headers: int, max_bytes: int) -> str | None:
    """What is wrong with ``count`` headers of ``size`` bytes, or ``None`` within the limits.

    >>> header_problem(101, 500, 100, 32768)
    'the request has more than 100 headers'
    """
    if count > max_headers:
        return f"the request has more than {max_headers} headers"
    if size > max_bytes:
        return f"the request's headers are larger than {max_bytes} bytes"
    return None


def body_431(problem: str) -> bytes:
    """The JSON body of a 431 answer."""
    return json.dumps({"detail": problem}).encode("utf-8")


class HeaderLimit:
    """ASGI middleware: a request over either limit gets 431 and never reaches the app."""

    def __init__(self, app: ASGIApp, max_headers: int, max_bytes: int) -> None:
        self.app = app
        self.max_headers = max_headers
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = scope["headers"]
            size = sum(len(k) + len(v) + 4 for k, v in headers)  # "name: value\r\n"
            problem = header_problem(len(headers), size, self.max_headers, self.max_bytes)
            if problem is not None:
                body = body_431(problem)
                await send(
                    {
                        "type": "http.response.start",
                        "status": 431,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode("ascii")),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
