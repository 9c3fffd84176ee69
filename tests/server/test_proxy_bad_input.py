"""The proxy never answers a bare 500: malformed requests pass through unchanged (and say so),
its own failures are JSON in the client's API's error shape, an overflow nothing can be dropped
from comes back as the provider's own 400, a body over the limit is refused with 413 before it
is read whole, and the upstream's credentials are never shown. Real HTTP: the official SDKs or
httpx -> the proxy under uvicorn -> the local provider (or a socket server that breaks off)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from abridged.errors import SettingError
from abridged.server.proxy.config import ProxyConfig
from abridged.testing import ProviderServer
from tests.server.test_proxy import KEY, config_for, proxying, record

_DEEP = "[" * 100_000 + "]" * 100_000
_CHAT = "/v1/chat/completions"
_MESSAGES = "/v1/messages"
_RESPONSES = "/v1/responses"
_USER = {"role": "user", "content": "hi"}

#: (name, path, body): bodies are JSON values, or raw text for what ``json.dumps`` cannot make.
MALFORMED: list[tuple[str, str, Any]] = [
    ("unknown role", _CHAT, {"model": "m", "messages": [{"role": "wizard", "content": "hi"}]}),
    ("content an object", _CHAT, {"model": "m", "messages": [{"role": "user", "content": {}}]}),
    ("messages [1, null]", _CHAT, {"model": "m", "messages": [1, None]}),
    ("no role", _CHAT, {"model": "m", "messages": [{"content": "hi"}]}),
    ("role a number", _CHAT, {"model": "m", "messages": [{"role": 5, "content": "hi"}]}),
    ("content a number", _CHAT, {"model": "m", "messages": [{"role": "user", "content": 5}]}),
    (
        "unknown part type",
        _CHAT,
        {"model": "m", "messages": [{"role": "user", "content": [{"type": "zzz"}]}]},
    ),
    (
        "tool_calls a string",
        _CHAT,
        {"model": "m", "messages": [_USER, {"role": "assistant", "tool_calls": "x"}]},
    ),
    (
        "tool result without id",
        _CHAT,
        {"model": "m", "messages": [{"role": "tool", "content": "r"}]},
    ),
    ("model an object", _CHAT, {"model": {"x": 1}, "messages": [_USER]}),
    ("tools an object", _CHAT, {"model": "m", "tools": {"a": 1}, "messages": [_USER]}),
    ("deep in an unused field", _CHAT, '{"model":"m","metadata":' + _DEEP + ',"messages":[]}'),
    (
        "deep in a message",
        _CHAT,
        '{"model":"m","messages":[{"role":"user","content":' + _DEEP + "}]}",
    ),
    (
        "anthropic content [1]",
        _MESSAGES,
        {"model": "c", "max_tokens": 9, "messages": [{"role": "user", "content": [1]}]},
    ),
    (
        "anthropic system {}",
        _MESSAGES,
        {"model": "c", "max_tokens": 9, "system": {}, "messages": [_USER]},
    ),
    (
        "anthropic tool_use without id",
        _MESSAGES,
        {
            "model": "c",
            "max_tokens": 9,
            "messages": [_USER, {"role": "assistant", "content": [{"type": "tool_use"}]}],
        },
    ),
    (
        "anthropic system role",
        _MESSAGES,
        {"model": "c", "max_tokens": 9, "messages": [{"role": "system", "content": "x"}]},
    ),
    ("responses input [null]", _RESPONSES, {"model": "m", "input": [None]}),
    (
        "responses content an object",
        _RESPONSES,
        {"model": "m", "input": [{"role": "user", "content": {"a": 1}}]},
    ),
    ("responses unknown item", _RESPONSES, {"model": "m", "input": [{"type": "zzz", "foo": 1}]}),
]


@pytest.fixture
def provider() -> Iterator[ProviderServer]:
    with ProviderServer(context_window=8_192, max_output=1_024) as server:
        yield server


def _post(base: str, path: str, body: Any, **headers: str) -> httpx.Response:
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    return httpx.post(
        base + path,
        content=raw,
        headers={
            "authorization": f"Bearer {KEY}",
            "x-api-key": KEY,
            "content-type": "application/json",
            **headers,
        },
        timeout=120,
    )


def test_twenty_malformed_requests_pass_through_and_none_gets_a_500(
    provider: ProviderServer, tmp_path: Path
) -> None:
    assert len(MALFORMED) == 20
    with proxying(config_for(provider, tmp_path / "m.db")) as base:
        for n, (name, path, body) in enumerate(MALFORMED, 1):
            answer = _post(base, path, body)
            assert answer.status_code < 500, (name, answer.status_code, answer.text[:200])
            assert answer.headers["content-type"].startswith("application/json"), name
            # each went upstream once, as the client sent it
            assert len(provider.requests) == n, name
            sent = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            if answer.headers.get("x-abridged-passthrough"):
                assert provider.requests[-1].raw_body == sent, name
        # what abridged could not read says so; the provider's own answer came back
        unknown = _post(base, _CHAT, MALFORMED[0][2])
        assert unknown.headers["x-abridged-passthrough"] == "history not readable"
        deep = _post(base, _CHAT, MALFORMED[11][2])
        assert deep.headers["x-abridged-passthrough"] == "nested more than 100 deep"
        assert deep.status_code == 400


def test_the_sdks_get_the_providers_error_once_not_three_times(
    provider: ProviderServer, tmp_path: Path
) -> None:
    with proxying(config_for(provider, tmp_path / "s.db")) as base:
        chat = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=2)
        with pytest.raises(openai.BadRequestError):
            chat.chat.completions.create(
                model="gpt-test",
                messages=[{"role": "wizard", "content": "hi"}],  # type: ignore[list-item,misc]
            )
        claude = anthropic.Anthropic(base_url=base, api_key=KEY, max_retries=2)
        with pytest.raises(anthropic.BadRequestError):
            claude.messages.create(
                model="claude-test",
                max_tokens=9,
                messages=[{"role": "user", "content": [1]}],  # type: ignore[list-item]
            )
    assert len(provider.requests) == 2


def test_an_overflow_nothing_can_be_dropped_from_is_the_providers_own_400(
    provider: ProviderServer, tmp_path: Path
) -> None:
    """One message larger than the provider's window: the proxy (believing in a larger one)
    sends it, the provider answers 400, the emergency path has nothing to drop."""
    huge = {"role": "user", "content": "\n".join(record(str(i)) for i in range(30))}
    with proxying(config_for(provider, tmp_path / "o.db", context_window=65_536)) as base:
        chat = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=2)
        with pytest.raises(openai.BadRequestError) as caught:
            chat.chat.completions.create(model="gpt-test", messages=[huge])  # type: ignore[list-item]
        error = caught.value.body
        assert isinstance(error, dict) and error["code"] == "context_length_exceeded"
        assert "maximum context length" in error["message"]
        # the proxy that knows the window does not manage it either: the provider answers
        with proxying(config_for(provider, tmp_path / "p.db")) as small:
            direct = _post(small, _CHAT, {"model": "gpt-test", "messages": [huge]})
        assert direct.status_code == 400
        assert direct.json()["error"]["code"] == "context_length_exceeded"
    assert all(r.status == 400 for r in provider.requests)


def test_a_body_over_the_limit_is_413_in_the_apis_shape_before_it_is_read(
    provider: ProviderServer, tmp_path: Path
) -> None:
    limit = 64 << 10
    with proxying(config_for(provider, tmp_path / "l.db", max_body_bytes=limit)) as base:
        big = {"role": "user", "content": "x" * (limit + 1)}
        claude = anthropic.Anthropic(base_url=base, api_key=KEY, max_retries=0)
        with pytest.raises(anthropic.APIStatusError) as caught:
            claude.messages.create(model="claude-test", max_tokens=9, messages=[big])  # type: ignore[list-item]
        assert caught.value.status_code == 413
        assert caught.value.body == {
            "type": "error",
            "error": {
                "type": "request_too_large",
                "message": caught.value.body["error"]["message"],
            },  # type: ignore[index]
        }
        chat = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
        with pytest.raises(openai.APIStatusError) as refused:
            chat.chat.completions.create(model="gpt-test", messages=[big])  # type: ignore[list-item]
        assert refused.value.status_code == 413
        assert f"limit of {limit} bytes" in refused.value.message
        # a chunked body without a declared length: answered once past the limit, with 50 MB
        # still unsent
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
            conn.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n"
                b"content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
            )
            chunk = b"x" * 8192
            for _ in range(limit // len(chunk) + 2):
                conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            head = conn.recv(65536)
        assert head.startswith(b"HTTP/1.1 413"), head[:100]
    assert provider.requests == []


class _BreakingUpstream:
    """A server that promises a 1,000-byte JSON body, sends 12 bytes and hangs up."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b'content-length: 1000\r\n\r\n{"id": "chat'
                )

    def close(self) -> None:
        self.sock.close()


def test_an_upstream_body_that_breaks_off_is_a_json_502(tmp_path: Path) -> None:
    upstream = _BreakingUpstream()
    try:
        config = config_for(upstream, tmp_path / "b.db")  # type: ignore[arg-type]
        with proxying(config) as base:
            body = {"model": "gpt-test", "messages": [_USER]}
            for headers in ({}, {"x-abridged": "off"}):
                answer = _post(base, _CHAT, body, **headers)
                assert answer.status_code == 502, answer.text
                assert answer.json()["error"]["type"] == "upstream_unreachable"
            claude = _post(base, _MESSAGES, {"model": "c", "max_tokens": 9, "messages": [_USER]})
            assert claude.status_code == 502
            assert claude.json()["type"] == "error"
    finally:
        upstream.close()


def test_the_upstreams_credentials_are_not_shown(provider: ProviderServer, tmp_path: Path) -> None:
    secret_url = provider.base_url.replace("http://", "http://user:pw-s3cret@")
    with proxying(config_for(provider, tmp_path / "h.db", upstream=secret_url)) as base:
        health = httpx.get(base + "/healthz")
        answer = _post(base, _CHAT, {"model": "gpt-test", "messages": [_USER]})
    assert health.status_code == 200 and answer.status_code == 200
    assert "pw-s3cret" not in health.text and "user" not in health.json()["upstream"]
    assert health.json()["upstream"] == provider.base_url


def test_a_client_gone_before_its_body_ends_sends_nothing_upstream(
    provider: ProviderServer, tmp_path: Path
) -> None:
    with proxying(config_for(provider, tmp_path / "d.db")) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
            conn.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n"
                b"content-type: application/json\r\ncontent-length: 1000\r\n\r\n"
                b'{"model": "gpt-test", "messages": []}'
            )
        after = _post(base, _CHAT, {"model": "gpt-test", "messages": [_USER]})
        assert after.status_code == 200
        for _ in range(20):  # the half request, if it were sent on, would arrive meanwhile
            time.sleep(0.05)
            assert len(provider.requests) == 1, [r.raw_body for r in provider.requests]


class _ReportingUpstream:
    """A Chat Completions upstream whose every answer reports ``prompt_tokens`` (a gateway that
    counts otherwise, or a window set smaller than the provider's)."""

    def __init__(self, prompt_tokens: int) -> None:
        self.prompt_tokens = prompt_tokens
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(
                    next(
                        line
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    ).split(b":")[1]
                )
                while len(body) < length:
                    body += conn.recv(65536)
                answer = json.dumps(
                    {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "model": "gpt-test",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": "fine"},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": 2},
                    }
                ).encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                    b"content-length: %d\r\n\r\n" % len(answer) + answer
                )

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("reported", [20_000, 7_000], ids=["above-the-window", "fills-budget"])
def test_a_usage_report_beyond_the_budget_does_not_stop_managing_the_conversation(
    reported: int, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Found by an independent attack: one report of more than the window holds was learned as
    # a hidden prefix that alone filled the budget. Recording it raised in the clean-up task
    # (a traceback on stderr, the request's log line lost) and every later request of the
    # conversation passed through unmanaged ("too long for the window").
    upstream = _ReportingUpstream(reported)
    try:
        config = config_for(upstream, tmp_path / "u.db", context_window=8_192)  # type: ignore[arg-type]
        history: list[dict[str, Any]] = [_USER]
        with caplog.at_level("INFO", logger="abridged.proxy"), proxying(config) as base:
            for _ in range(3):
                answer = _post(
                    base,
                    _CHAT,
                    {"model": "gpt-test", "messages": history},
                    **{"x-abridged-conversation": "c1"},
                )
                assert answer.status_code == 200, answer.text
                if reported > 8_192:
                    assert "x-abridged-passthrough" not in answer.headers, answer.headers
                history += [
                    answer.json()["choices"][0]["message"],
                    {"role": "user", "content": "more"},
                ]
            deadline = time.monotonic() + 30
            while (
                len([r for r in caplog.records if r.getMessage().startswith("POST /v1/chat")]) < 3
            ):
                assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
                time.sleep(0.05)
        assert not [r for r in caplog.records if r.exc_info], [
            r.getMessage() for r in caplog.records
        ]
    finally:
        upstream.close()


@pytest.mark.parametrize(
    ("count", "size"), [(1, 100_000), (500, 10)], ids=["one-large-header", "many-headers"]
)
def test_headers_over_the_limit_are_431_in_the_apis_shape_and_never_forwarded(
    count: int, size: int, provider: ProviderServer, tmp_path: Path
) -> None:
    # Found by an independent attack: the service answers 431, the proxy forwarded a 1 MB
    # header and 5,000 headers to the upstream.
    with proxying(config_for(provider, tmp_path / "h.db")) as base:
        padding = {f"x-pad-{i}": "a" * size for i in range(count)}
        chat = _post(base, _CHAT, {"model": "m", "messages": [_USER]}, **padding)
        assert chat.status_code == 431, chat.text
        assert "headers" in chat.json()["error"]["message"]
        claude = _post(
            base, _MESSAGES, {"model": "c", "max_tokens": 9, "messages": [_USER]}, **padding
        )
        assert claude.status_code == 431 and claude.json()["type"] == "error"
        assert provider.requests == []
        assert _post(base, _CHAT, {"model": "m", "messages": [_USER]}).status_code == 200


def test_the_header_limits_are_validated() -> None:
    for name, value in (("max_headers", 15), ("max_header_bytes", 4095), ("max_headers", True)):
        with pytest.raises(SettingError, match=name):
            ProxyConfig(upstream="http://127.0.0.1:1", **{name: value})
