"""Tests of the /models probe (abridged.providers.probe) against a real local HTTP server."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from abridged.core.windows import TTLCache
from abridged.errors import SettingError
from abridged.providers import probe as probe_module
from abridged.providers.probe import (
    ProbeKey,
    ProbeResult,
    clear_probe_cache,
    models_url,
    parse_models_payload,
    probe_model_limits,
    probe_model_limits_sync,
    redact_url,
)

API_KEY = "sk-test-0123456789abcdef-SECRET"

VLLM_BODY = {
    "object": "list",
    "data": [
        {
            "id": "meta-llama/Llama-3.1-8B-Instruct",
            "object": "model",
            "created": 1_700_000_000,
            "owned_by": "vllm",
            "root": "meta-llama/Llama-3.1-8B-Instruct",
            "parent": None,
            "max_model_len": 32_768,
            "permission": [],
        }
    ],
}
OPENROUTER_BODY = {
    "data": [
        {
            "id": "anthropic/claude-sonnet-4.5",
            "context_length": 1_000_000,
            "top_provider": {
                "context_length": 1_000_000,
                "max_completion_tokens": 64_000,
                "is_moderated": False,
            },
            "pricing": {"prompt": "0.000003", "completion": "0.000015"},
        },
        {
            "id": "some/routed-model",
            "context_length": 131_072,
            "top_provider": {"context_length": 32_768, "max_completion_tokens": 99_999},
        },
    ]
}
GROQ_BODY = {
    "object": "list",
    "data": [
        {
            "id": "llama-3.3-70b-versatile",
            "context_window": 131_072,
            "max_completion_tokens": 32_768,
        }
    ],
}
OLLAMA_BODY = {
    "object": "list",
    "data": [{"id": "llama3.2:latest", "object": "model", "created": 1, "owned_by": "library"}],
}


@dataclass
class Server:
    """A real HTTP server on 127.0.0.1, in a thread, recording what it was asked."""

    base: str
    hits: dict[str, int] = field(default_factory=dict)
    headers: dict[str, dict[str, str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, path: str) -> int:
        with self.lock:
            return self.hits.get(path, 0)


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            # the slow route's client gave up, as the test meant it to: nothing to report, and a
            # traceback printed from this thread races ``ast`` in whatever test runs next
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

        def do_GET(self) -> None:
            path = self.path
            with server.lock:
                server.hits[path] = server.hits.get(path, 0) + 1
                server.headers[path] = dict(self.headers.items())
            auth = self.headers.get("Authorization", "")
            routes: dict[str, Any] = {
                "/vllm/v1/models": VLLM_BODY,
                "/api/v1/models": OPENROUTER_BODY,
                "/groq/openai/v1/models": GROQ_BODY,
                "/ollama/v1/models": OLLAMA_BODY,
                "/counted/v1/models": VLLM_BODY,
                "/shape/v1/models": {"models": "nope"},
            }
            if path in routes:
                self._send(200, json.dumps(routes[path]).encode())
            elif path == "/error/v1/models":
                self._send(500, f"internal error; you sent {auth}".encode(), "text/plain")
            elif path == "/denied/v1/models":
                self._send(401, json.dumps({"error": f"bad key {auth}"}).encode())
            elif path == "/badjson/v1/models":
                self._send(200, f"<html>not json {auth}".encode(), "text/html")
            elif path == "/slow/v1/models":
                time.sleep(1.5)
                self._send(200, json.dumps(VLLM_BODY).encode())
            elif path == "/big/v1/models":
                self._send(200, b"[" + b" " * 5_000 + b"]")
            elif path == "/redirect/v1/models":
                self.send_response(307)
                self.send_header("Location", "/vllm/v1/models")
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self._send(404, b'{"error": "not found"}')

    return Handler


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    state = Server(base="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    # joined by server_close: no handler thread outlives the module's tests
    httpd.daemon_threads = False
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    clear_probe_cache()
    yield
    clear_probe_cache()


Probe = Callable[..., Awaitable[ProbeResult]]


async def _async_probe(*args: Any, **kwargs: Any) -> ProbeResult:
    return await probe_model_limits(*args, **kwargs)


async def _sync_probe(*args: Any, **kwargs: Any) -> ProbeResult:
    return probe_model_limits_sync(*args, **kwargs)


@pytest.fixture(params=["async", "sync"])
def probe(request: pytest.FixtureRequest) -> Probe:
    return _async_probe if request.param == "async" else _sync_probe


# --- URLs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ("http://localhost:8000/v1", "http://localhost:8000/v1/models"),
        ("http://localhost:8000/v1/", "http://localhost:8000/v1/models"),
        ("http://localhost:8000", "http://localhost:8000/v1/models"),
        ("http://localhost:8000/", "http://localhost:8000/v1/models"),
        ("  http://localhost:11434/v1/  ", "http://localhost:11434/v1/models"),
        ("https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1/models"),
        ("https://api.groq.com/openai/v1", "https://api.groq.com/openai/v1/models"),
        ("http://host/v1/models", "http://host/v1/models"),
        ("http://host/prefix/v10", "http://host/prefix/v10/v1/models"),
    ],
)
def test_models_url(base: str, expected: str) -> None:
    assert models_url(base) == expected


@pytest.mark.parametrize("base", ["", "localhost:8000", "ftp://host/v1", "http://", "not a url"])
def test_models_url_rejects_non_http_urls(base: str) -> None:
    with pytest.raises(SettingError) as info:
        models_url(base)
    assert info.value.name == "base_url"


def test_models_url_error_hides_credentials() -> None:
    with pytest.raises(SettingError) as info:
        models_url("ftp://user:hunter2@host/v1?key=abc")
    assert "hunter2" not in str(info.value)
    assert "abc" not in str(info.value)


def test_redact_url_drops_userinfo_and_query() -> None:
    shown = redact_url("https://me:pw@example.com:8443/v1/models?api_key=zzz#frag")
    assert shown == "https://example.com:8443/v1/models"


# --- parsing (no network) ----------------------------------------------------------------------


def test_parse_prefers_the_smaller_of_openrouter_context_lengths() -> None:
    limits, reason = parse_models_payload(OPENROUTER_BODY, "some/routed-model")
    assert reason is None and limits is not None
    assert limits.context_window == 32_768
    assert limits.field == "top_provider.context_length"
    assert limits.max_output == 32_768  # 99,999 capped at the window


def test_parse_other_field_names() -> None:
    limits, _ = parse_models_payload(GROQ_BODY, "llama-3.3-70b-versatile")
    assert limits is not None and (limits.context_window, limits.max_output) == (131_072, 32_768)
    assert limits.field == "context_window"
    mistral = {"data": [{"id": "mistral-large-latest", "max_context_length": 131_072}]}
    limits, _ = parse_models_payload(mistral, "mistral/mistral-large-latest")
    assert limits is not None and limits.field == "max_context_length"
    bare_list = [{"id": "m", "max_input_tokens": "200000"}]
    limits, _ = parse_models_payload(bare_list, "M")
    assert limits is not None and limits.context_window == 200_000


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"data": "x"}, "unexpected response shape"),
        (42, "unexpected response shape"),
        ({"data": [{"id": "other", "max_model_len": 4096}]}, "not listed"),
        ({"data": [{"id": "m", "max_model_len": 0}]}, "without a context length"),
        ({"data": [{"id": "m", "max_model_len": True}]}, "without a context length"),
        ({"data": [{"id": "m", "max_model_len": 1.5}]}, "without a context length"),
    ],
)
def test_parse_failures_have_reasons(payload: Any, fragment: str) -> None:
    limits, reason = parse_models_payload(payload, "m")
    assert limits is None
    assert reason is not None and fragment in reason


# --- against the server ------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["/vllm/v1", "/vllm/v1/", "/vllm"])
async def test_vllm_window_and_v1_stripping(server: Server, probe: Probe, suffix: str) -> None:
    result = await probe(server.base + suffix, "meta-llama/Llama-3.1-8B-Instruct", use_cache=False)
    assert result.ok, result.reason
    assert result.limits is not None
    assert result.limits.context_window == 32_768
    assert result.limits.max_output is None
    assert result.limits.field == "max_model_len"
    assert result.limits.model_id == "meta-llama/Llama-3.1-8B-Instruct"
    assert result.url == f"{server.base}/vllm/v1/models"
    assert result.status == 200 and result.reason is None


async def test_openrouter_style(server: Server, probe: Probe) -> None:
    result = await probe(
        f"{server.base}/api/v1", "openrouter/anthropic/claude-sonnet-4.5", use_cache=False
    )
    assert result.limits is not None, result.reason
    assert result.limits.context_window == 1_000_000
    assert result.limits.max_output == 64_000
    assert result.limits.model_id == "anthropic/claude-sonnet-4.5"


async def test_groq_style_with_path_prefix(server: Server, probe: Probe) -> None:
    result = await probe(f"{server.base}/groq/openai/v1", "llama-3.3-70b-versatile")
    assert result.limits is not None, result.reason
    assert (result.limits.context_window, result.limits.max_output) == (131_072, 32_768)


async def test_bearer_key_is_sent(server: Server, probe: Probe) -> None:
    await probe(f"{server.base}/counted/v1", "x", api_key=API_KEY, use_cache=False)
    assert server.headers["/counted/v1/models"]["Authorization"] == f"Bearer {API_KEY}"
    await probe(f"{server.base}/counted/v1", "x", use_cache=False)
    assert "Authorization" not in server.headers["/counted/v1/models"]


async def test_http_500_gives_none_and_hides_the_key(server: Server, probe: Probe) -> None:
    result = await probe(f"{server.base}/error/v1", "m", api_key=API_KEY)
    assert result.limits is None
    assert result.status == 500
    assert result.reason is not None and "HTTP 500" in result.reason
    assert "internal error" in result.reason  # the server's words are kept...
    assert API_KEY not in result.reason  # ...but not the key it echoed
    assert "SECRET" not in result.reason
    assert result.transient


async def test_http_401_hides_the_key(server: Server, probe: Probe) -> None:
    result = await probe(f"{server.base}/denied/v1", "m", api_key=API_KEY)
    assert result.limits is None and result.status == 401
    assert result.reason is not None and "HTTP 401" in result.reason
    assert API_KEY not in result.reason and API_KEY not in repr(result)


async def test_invalid_json(server: Server, probe: Probe) -> None:
    result = await probe(f"{server.base}/badjson/v1", "m", api_key=API_KEY)
    assert result.limits is None
    assert result.reason is not None and "not valid JSON" in result.reason
    assert API_KEY not in result.reason
    assert not result.transient


async def test_slow_server_times_out(server: Server, probe: Probe) -> None:
    result = await probe(f"{server.base}/slow/v1", "m", api_key=API_KEY, timeout=0.3)
    # the 1.5 s server was not waited for: its answer would have given the limits
    assert result.limits is None
    assert result.reason is not None and "timed out after 0.3 s" in result.reason
    assert API_KEY not in result.reason
    assert result.transient


async def test_connection_refused(probe: Probe) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = await probe(f"http://127.0.0.1:{port}/v1", "m", api_key=API_KEY)
    assert result.limits is None and result.status is None
    assert result.reason and API_KEY not in result.reason
    assert result.transient


async def test_model_not_listed_and_no_window_field(server: Server, probe: Probe) -> None:
    missing = await probe(f"{server.base}/vllm/v1", "other-model")
    assert missing.limits is None and missing.reason is not None
    assert "not listed" in missing.reason and "1 models" in missing.reason
    ollama = await probe(f"{server.base}/ollama/v1", "llama3.2:latest")
    assert ollama.limits is None and ollama.reason is not None
    assert "without a context length" in ollama.reason
    shape = await probe(f"{server.base}/shape/v1", "m")
    assert shape.reason is not None and "unexpected response shape" in shape.reason


async def test_redirects_are_not_followed(server: Server, probe: Probe) -> None:
    before = server.count("/vllm/v1/models")
    result = await probe(
        f"{server.base}/redirect/v1", "meta-llama/Llama-3.1-8B-Instruct", api_key=API_KEY
    )
    assert result.limits is None and result.status == 307
    assert server.count("/vllm/v1/models") == before  # the key went nowhere else


async def test_credentials_in_the_url_stay_out_of_reasons(server: Server, probe: Probe) -> None:
    base = server.base.replace("http://", "http://user:hunter22@") + "/error/v1?token=qwerty"
    result = await probe(base, "m")
    assert result.limits is None and result.reason is not None
    assert "hunter22" not in result.reason and "hunter22" not in result.url
    assert "qwerty" not in result.reason and "qwerty" not in result.url


async def test_oversized_body(
    server: Server, probe: Probe, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(probe_module, "MAX_BODY_BYTES", 1_000)
    result = await probe(f"{server.base}/big/v1", "m")
    assert result.limits is None
    assert result.reason is not None and "larger than 1,000 bytes" in result.reason


async def test_bad_base_url_returns_a_reason(probe: Probe) -> None:
    result = await probe("ftp://user:pw123@host/v1", "m", api_key=API_KEY)
    assert result.limits is None and result.reason is not None
    assert "base_url" in result.reason and "pw123" not in result.reason
    empty = await probe("http://127.0.0.1:9/v1", "  ")
    assert empty.reason == "no model name given"


async def test_invalid_timeout_is_a_setting_error(probe: Probe) -> None:
    with pytest.raises(SettingError, match="timeout"):
        await probe("http://127.0.0.1:9/v1", "m", timeout=0)


async def test_shared_async_client_is_left_open(server: Server) -> None:
    async with httpx.AsyncClient() as client:
        result = await probe_model_limits(
            f"{server.base}/vllm", "meta-llama/Llama-3.1-8B-Instruct", client=client
        )
        assert result.ok
        assert not client.is_closed


# --- caching -----------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


async def test_results_are_cached_per_url_and_model(server: Server, probe: Probe) -> None:
    clock = FakeClock()
    cache: TTLCache[ProbeKey, ProbeResult] = TTLCache(3600.0)
    base = f"{server.base}/counted/v1"
    model = "meta-llama/Llama-3.1-8B-Instruct"

    def hits() -> int:
        return server.count("/counted/v1/models") - before

    before = server.count("/counted/v1/models")
    first = await probe(base, model, cache=cache, clock=clock, ttl=60.0)
    second = await probe(base, model, cache=cache, clock=clock, ttl=60.0)
    assert hits() == 1
    assert first.ok and not first.cached
    assert second.cached and second.limits == first.limits
    await probe(base, "another-model", cache=cache, clock=clock)
    assert hits() == 2  # another key
    clock.now += 59.9
    await probe(base, model, cache=cache, clock=clock, ttl=60.0)
    assert hits() == 2
    clock.now += 0.2  # past the 60 s TTL
    third = await probe(base, model, cache=cache, clock=clock, ttl=60.0)
    assert hits() == 3 and not third.cached


async def test_failures_are_cached_for_the_shorter_ttl(server: Server, probe: Probe) -> None:
    clock = FakeClock()
    cache: TTLCache[ProbeKey, ProbeResult] = TTLCache(3600.0)
    base = f"{server.base}/error/v1"
    before = server.count("/error/v1/models")
    for _ in range(3):
        result = await probe(base, "m", cache=cache, clock=clock, ttl=600.0, failure_ttl=10.0)
        assert result.limits is None
    assert server.count("/error/v1/models") == before + 1
    clock.now += 10.0
    await probe(base, "m", cache=cache, clock=clock, ttl=600.0, failure_ttl=10.0)
    assert server.count("/error/v1/models") == before + 2


async def test_default_cache_and_bypass(server: Server, probe: Probe) -> None:
    base = f"{server.base}/counted/v1"
    before = server.count("/counted/v1/models")
    await probe(base, "meta-llama/Llama-3.1-8B-Instruct")
    cached = await probe(base, "meta-llama/Llama-3.1-8B-Instruct")
    assert cached.cached
    assert server.count("/counted/v1/models") == before + 1
    await probe(base, "meta-llama/Llama-3.1-8B-Instruct", use_cache=False)
    assert server.count("/counted/v1/models") == before + 2
    clear_probe_cache()
    await probe(base, "meta-llama/Llama-3.1-8B-Instruct")
    assert server.count("/counted/v1/models") == before + 3
