"""Forwarding to the upstream provider: the request's headers (the client's key included, never
stored or logged), the response passed back (an event stream chunk by chunk, a JSON answer
whole), and the usage report read from it on the way (JSON or server-sent events, OpenAI or
Anthropic).

The upstream client is ``aiohttp``'s: a hop through it costs about half of what the same hop
through ``httpx`` costs, and that hop is most of what the proxy adds to a request
(``bench/proxy.py``; the figures are in ``bench/RESULTS.md``, "moved from docstrings").
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any

import aiohttp
from yarl import URL

from abridged.core.model import Usage
from abridged.errors import AbridgedError
from abridged.formats.usage import usage_from_anthropic, usage_from_openai
from abridged.server.proxy.apis import Api

__all__ = ["UPSTREAM_ERRORS", "Upstream", "UsageTap", "forward_headers", "response_headers"]

#: What reaching the upstream can raise (the proxy answers 502).
UPSTREAM_ERRORS: tuple[type[BaseException], ...] = (aiohttp.ClientError, asyncio.TimeoutError)

# Hop-by-hop and length/encoding headers are the proxy's own business on each side.
_DROP_REQUEST = frozenset(
    {
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "accept-encoding",
    }
)
_DROP_RESPONSE = frozenset(
    {
        b"content-length",
        b"content-encoding",
        b"connection",
        b"keep-alive",
        b"transfer-encoding",
        b"trailer",
        b"upgrade",
    }
)


def forward_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The client's headers as sent upstream (its credentials kept; the proxy's own
    ``x-abridged-*`` headers and hop-by-hop headers dropped)."""
    out: dict[str, str] = {}
    for name, value in headers:
        lower = name.lower()
        if lower in _DROP_REQUEST or lower.startswith("x-abridged"):
            continue
        out[lower] = value
    return out


def response_headers(raw: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The upstream's response headers as passed to the client (repeated ones kept)."""
    return [(k.lower(), v) for k, v in raw if k.lower() not in _DROP_RESPONSE]


class Upstream:
    """The upstream provider, over one ``aiohttp`` session (its connection pool) per worker;
    made and closed on the worker's event loop (``open``, ``close``)."""

    def __init__(self, base_url: str, *, timeout: float) -> None:
        # credentials in the URL (a gateway's basic auth) go in a header of their own: the
        # client's own ``authorization`` wins over them
        url = URL(base_url.rstrip("/"))
        self._basic: str | None = None
        if url.user is not None:
            pair = f"{url.user}:{url.password or ''}".encode()
            self._basic = "Basic " + base64.b64encode(pair).decode("ascii")
            url = url.with_user(None)
        self.base_url = str(url)
        self._timeout = aiohttp.ClientTimeout(total=None, sock_connect=10.0, sock_read=timeout)
        self._session: aiohttp.ClientSession | None = None
        self._urls: dict[str, URL] = {}  # by path and query: a client calls a few, again and again

    async def open(self) -> None:
        """Make the session (on the running loop)."""
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=1000, limit_per_host=0),
            timeout=self._timeout,
            auto_decompress=False,  # bytes pass through exactly as sent
            skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
            cookie_jar=aiohttp.DummyCookieJar(),  # one client's cookies are not another's
        )

    async def close(self) -> None:
        """Close the session and its connections."""
        if self._session is not None:
            await self._session.close()

    async def send(
        self, method: str, target: str, headers: Mapping[str, str], content: bytes
    ) -> aiohttp.ClientResponse:
        """Send a request (``target``: path and query, as the client sent them); the response
        with its body not read yet. ``UPSTREAM_ERRORS`` when the upstream cannot be reached."""
        assert self._session is not None, "Upstream.open() first"
        url = self._urls.get(target)
        if url is None:
            url = URL(self.base_url + target, encoded=True)
            if len(self._urls) < 256:
                self._urls[target] = url
        sent = {**headers, "accept-encoding": "identity"}
        if self._basic is not None and "authorization" not in sent:
            sent["authorization"] = self._basic
        return await self._session.request(
            method,
            url,
            headers=sent,
            data=content or None,
            allow_redirects=False,
        )


def _anthropic_usage(start: Mapping[str, Any] | None, delta: Mapping[str, Any] | None) -> Any:
    merged: dict[str, Any] = dict(start or {})
    if delta:
        merged.update({k: v for k, v in delta.items() if v is not None})
    return merged or None


class UsageTap:
    """Reads the usage report out of a response as its bytes pass through.

    JSON bodies are parsed once at the end (``usage``); event streams are read line by line,
    keeping only the events that carry usage (OpenAI's last chunk when the client asked for
    ``stream_options.include_usage``; Responses' ``response.completed``; Anthropic's
    ``message_start`` and ``message_delta``).
    """

    def __init__(self, api: Api, *, streaming: bool, limit: int = 32 << 20) -> None:
        self.api = api
        self.streaming = streaming
        self._limit = limit
        self._parts: list[bytes] = []  # a JSON body's chunks, joined once (one copy at most)
        self._size = 0
        self._overflowed = False  # a JSON body over the limit: no usage rather than a guess
        self._rest = b""
        self._openai: Mapping[str, Any] | None = None
        self._start: Mapping[str, Any] | None = None
        self._delta: Mapping[str, Any] | None = None

    def feed(self, chunk: bytes) -> None:
        """One chunk of the response body."""
        if not self.streaming:
            if self._overflowed or self._size + len(chunk) > self._limit:
                self._overflowed = True
                self._parts.clear()
                return
            self._parts.append(chunk)
            self._size += len(chunk)
            return
        data = self._rest + chunk
        lines = data.split(b"\n")
        self._rest = lines.pop()
        if len(self._rest) > self._limit:
            self._rest = b""
        for line in lines:
            if line.startswith(b"data:") and b'"usage"' in line:
                self._event(line[5:].strip())

    def _event(self, raw: bytes) -> None:
        try:
            event = json.loads(raw)
        except ValueError:
            return
        if not isinstance(event, dict):
            return
        if self.api == "openai-chat":
            if isinstance(event.get("usage"), dict):
                self._openai = event["usage"]
            return
        if self.api == "openai-responses":  # response.completed (or .incomplete) holds it
            response = event.get("response")
            if isinstance(response, dict) and isinstance(response.get("usage"), dict):
                self._openai = response["usage"]
            return
        if event.get("type") == "message_start":
            message = event.get("message")
            if isinstance(message, dict) and isinstance(message.get("usage"), dict):
                self._start = message["usage"]
        elif isinstance(event.get("usage"), dict):
            self._delta = event["usage"]

    def usage(self) -> Usage | None:
        """The usage reported, if the response held one."""
        try:
            if not self.streaming:
                # one chunk (a body read whole) is parsed as it is, not copied
                if self._overflowed or not self._parts:
                    return None
                body = json.loads(b"".join(self._parts))
                report = body.get("usage") if isinstance(body, dict) else None
                if not isinstance(report, dict):
                    return None
                if self.api != "anthropic":
                    return usage_from_openai(report)
                return usage_from_anthropic(report)
            if self.api != "anthropic":
                return usage_from_openai(self._openai) if self._openai else None
            merged = _anthropic_usage(self._start, self._delta)
            return usage_from_anthropic(merged) if merged else None
        except (ValueError, TypeError, AttributeError, AbridgedError):
            return None
