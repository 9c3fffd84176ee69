"""Tests of resolve_model_limits (abridged.providers.limits): probe, registry and default wired."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from abridged.core.windows import LimitsOverride, ModelLimits
from abridged.providers.limits import resolve_model_limits, resolve_model_limits_sync
from abridged.providers.probe import clear_probe_cache

API_KEY = "sk-limits-test-key-987654321"
HITS: dict[str, int] = {}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        HITS[self.path] = HITS.get(self.path, 0) + 1
        payload: dict[str, Any]
        if self.path == "/ok/v1/models":
            status, payload = 200, {"data": [{"id": "gpt-4.1", "max_model_len": 65_536}]}
        elif self.path == "/local/v1/models":
            status, payload = 200, {"data": [{"id": "my-finetune", "max_model_len": 16_384}]}
        else:
            status, payload = 500, {"error": f"boom {self.headers.get('Authorization')}"}
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # joined by server_close: no handler thread outlives the module's tests
    httpd.daemon_threads = False
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    clear_probe_cache()
    HITS.clear()
    yield
    clear_probe_cache()


async def test_probe_beats_the_registry(base: str) -> None:
    limits = await resolve_model_limits("gpt-4.1", base_url=f"{base}/ok/v1", api_key=API_KEY)
    assert limits.source == "probe" and limits.context_window == 65_536
    assert limits.output_source == "registry"  # the probe gave no output limit
    assert limits.max_output == 32_768
    assert limits.pricing is not None  # prices still come from the registry


async def test_failed_probe_falls_back_to_the_registry_with_a_note(base: str) -> None:
    limits = await resolve_model_limits("gpt-4.1", base_url=f"{base}/down/v1", api_key=API_KEY)
    assert limits.source == "registry" and limits.context_window > 900_000
    assert any("probe of" in note and "HTTP 500" in note for note in limits.notes)
    assert all(API_KEY not in note for note in limits.notes)


async def test_local_model_unknown_to_the_registry_is_known_through_the_probe(base: str) -> None:
    limits = await resolve_model_limits("my-finetune", base_url=f"{base}/local")
    assert limits.known and limits.source == "probe"
    assert (limits.context_window, limits.max_output) == (16_384, 4_096)


async def test_nothing_known_gives_the_flagged_default(base: str) -> None:
    limits = await resolve_model_limits("my-private-model", base_url=f"{base}/down")
    assert not limits.known and limits.source == "default"
    assert limits.context_window == 8_192
    assert len(limits.notes) >= 2  # the probe failure and the default


async def test_full_override_skips_the_probe(base: str) -> None:
    override = LimitsOverride(context_window=20_000, max_output=2_000)
    limits = await resolve_model_limits("gpt-4.1", base_url=f"{base}/ok/v1", override=override)
    assert (limits.context_window, limits.max_output, limits.source) == (20_000, 2_000, "override")
    assert HITS == {}


async def test_partial_override_still_probes(base: str) -> None:
    override = LimitsOverride(max_output=1_000)
    limits = await resolve_model_limits("gpt-4.1", base_url=f"{base}/ok/v1", override=override)
    assert (limits.source, limits.output_source) == ("probe", "override")
    assert HITS == {"/ok/v1/models": 1}


async def test_no_base_url_or_probe_disabled_uses_the_registry(base: str) -> None:
    assert (await resolve_model_limits("claude-sonnet-4-5")).source == "registry"
    limits = await resolve_model_limits("gpt-4.1", base_url=f"{base}/ok/v1", probe=False)
    assert limits.source == "registry"
    assert HITS == {}


async def test_first_party_hosts_are_not_probed() -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"unexpected request to {request.url}")

    async with httpx.AsyncClient(transport=httpx.MockTransport(fail)) as client:
        limits = await resolve_model_limits(
            "gpt-4.1", base_url="https://api.openai.com/v1", client=client
        )
    assert limits.source == "registry"


async def test_custom_registry_replaces_the_snapshot() -> None:
    mine = {"house-model": ModelLimits(50_000, 5_000, "registry", True)}
    limits = await resolve_model_limits("House-Model", registry=mine)
    assert (limits.context_window, limits.source) == (50_000, "registry")
    assert (await resolve_model_limits("gpt-4.1", registry=mine)).source == "default"


def test_sync_variant(base: str) -> None:
    limits = resolve_model_limits_sync("gpt-4.1", base_url=f"{base}/ok")
    assert limits.source == "probe" and limits.context_window == 65_536
    fallback = resolve_model_limits_sync("gpt-4.1", base_url=f"{base}/down", api_key=API_KEY)
    assert fallback.source == "registry"
    assert all(API_KEY not in note for note in fallback.notes)
