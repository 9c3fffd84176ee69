"""A provider that refuses connections: the service and the proxy answer 502 naming the real
cause (the connection was refused), not a timeout and not a 500. Real HTTP to a closed port."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from abridged.server.config import ServiceConfig
from abridged.server.proxy.config import ProxyConfig
from tests.server.conftest import free_port, make_keys, serving
from tests.server.test_proxy import proxying


@pytest.fixture
def closed_port(monkeypatch: pytest.MonkeyPatch) -> int:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ABRIDGED_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ABRIDGED_API_KEY", "test-provider-key")
    return free_port()  # nothing listens there


def test_the_service_answers_502_with_the_refused_connection(
    closed_port: int, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    keys = asyncio.run(make_keys(db, ("acme",)))
    config = ServiceConfig(
        db=db,
        models=(f"http://127.0.0.1:{closed_port}/v1#gpt-test",),
        context_window=8_192,
        max_output_tokens=1_024,
    )
    with serving(config) as base:
        client = httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {keys['acme']}"}, timeout=120
        )
        made = client.post("/v1/conversations", json={})
        assert made.status_code == 201, made.text
        cid = made.json()["id"]
        answer = client.post(
            f"/v1/conversations/{cid}/messages?stream=false", json={"content": "hi"}
        )
        assert answer.status_code == 502, answer.text
        detail = answer.json()["detail"]
        assert "refused" in detail.lower() and "timed out" not in detail, detail
        # streamed, the error event says the same
        events = client.post(f"/v1/conversations/{cid}/messages", json={"content": "again"})
        errors = [
            json.loads(line[5:])
            for line in events.text.splitlines()
            if line.startswith("data:") and "refused" in line.lower()
        ]
        assert errors, events.text[-500:]
        assert "timed out" not in events.text


def test_the_proxy_answers_502_with_the_refused_connection(
    closed_port: int, tmp_path: Path
) -> None:
    config = ProxyConfig(
        upstream=f"http://127.0.0.1:{closed_port}",
        db=str(tmp_path / "p.db"),
        context_window=8_192,
        max_output_tokens=1_024,
    )
    with proxying(config) as base:
        answer = httpx.post(
            base + "/v1/messages",
            json={"model": "c", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]},
            headers={"x-api-key": "sk-test"},
            timeout=60,
        )
    assert answer.status_code == 502
    error = answer.json()
    assert error["type"] == "error" and error["error"]["type"] == "api_error"
    assert "refused" in error["error"]["message"].lower()
