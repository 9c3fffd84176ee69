"""Tenant isolation on every route, table-driven from the service's own OpenAPI schema (a route
added later cannot skip it): another tenant's id answers exactly as an id that does not exist,
and changes nothing; no key or a wrong key answers 401; no secret is echoed or stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.server.conftest import RunningService

#: Routes that need no key: they say nothing about any tenant.
PUBLIC = {
    ("GET", "/"),
    ("GET", "/page/{name}"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
    ("GET", "/openapi.json"),
    ("GET", "/docs"),
    ("GET", "/docs/oauth2-redirect"),
    ("GET", "/redoc"),
}
#: A valid body (or query) for each route that takes one: the request must be one the owner
#: could make, so that only the tenant decides the answer.
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/v1/conversations/{conversation_id}/messages"): {"content": "hello"},
    ("POST", "/v1/conversations/{conversation_id}/compact"): {"dry_run": True},
    ("POST", "/v1/conversations/{conversation_id}/sessions/resume"): {"session": "#1"},
    ("PATCH", "/v1/conversations/{conversation_id}/settings"): {"trigger": 0.7},
    ("PATCH", "/v1/conversations/{conversation_id}"): {"title": "renamed"},
}
QUERIES: dict[tuple[str, str], dict[str, str]] = {
    ("DELETE", "/v1/conversations/{conversation_id}"): {"confirm": "true"},
    ("GET", "/v1/conversations/{conversation_id}/sessions/search"): {"q": "records"},
    ("POST", "/v1/conversations/{conversation_id}/messages"): {"stream": "false"},
}
MISSING = "0" * 32


def _routes(client: httpx.Client) -> list[tuple[str, str]]:
    schema = client.get("/openapi.json").json()
    return [(m.upper(), p) for p, ops in schema["paths"].items() for m in ops]


def _snapshot(client: httpx.Client, cid: str) -> Any:
    timeline = client.get(f"/v1/conversations/{cid}/messages").json()
    return {
        "conversation": client.get(f"/v1/conversations/{cid}").json(),
        "messages": [(m["id"], m["seq"], m["status"]) for m in timeline["messages"]],
        "compactions": [c["id"] for c in timeline["compactions"]],
        "sessions": [s["id"] for s in client.get(f"/v1/conversations/{cid}/sessions").json()],
        "settings": client.get(f"/v1/conversations/{cid}/settings").json(),
    }


def _call(client: httpx.Client, method: str, path: str, ids: dict[str, str]) -> httpx.Response:
    url = path.format(**ids)
    body = BODIES.get((method, path))
    return client.request(method, url, json=body, params=QUERIES.get((method, path)), timeout=60)


def test_every_route_keeps_tenants_apart(service: RunningService) -> None:
    acme, globex = service.client("acme"), service.client("globex")
    cid = acme.post("/v1/conversations", json={"title": "acme's"}).json()["id"]
    sent = acme.post(f"/v1/conversations/{cid}/messages?stream=false", json={"content": "go"})
    assert sent.status_code == 200, sent.text
    session = acme.get(f"/v1/conversations/{cid}/sessions").json()[0]["id"]
    before = _snapshot(acme, cid)

    routes = _routes(acme)
    scoped = [(m, p) for m, p in routes if "{conversation_id}" in p]
    unscoped = {(m, p) for m, p in routes if "{conversation_id}" not in p}
    # every route is either scoped by conversation (checked here), public, or one of these
    assert unscoped - PUBLIC == {
        ("GET", "/v1/conversations"),
        ("POST", "/v1/conversations"),
        ("POST", "/v1/replay"),
        ("GET", "/v1/search/messages"),  # the tenant's own only: tests/server/test_search.py
    }
    assert len(scoped) >= 15
    for method, path in scoped:
        ids = {"session_id": session, "index": "0"}
        theirs = _call(globex, method, path, {"conversation_id": cid, **ids})
        missing = _call(globex, method, path, {"conversation_id": MISSING, **ids})
        assert theirs.status_code == 404, (method, path, theirs.status_code, theirs.text)
        assert theirs.text.replace(cid, "ID") == missing.text.replace(MISSING, "ID"), (
            method,
            path,
        )
    assert _snapshot(acme, cid) == before
    assert cid not in {c["id"] for c in globex.get("/v1/conversations").json()}
    assert cid in {c["id"] for c in acme.get("/v1/conversations").json()}


def test_no_key_or_a_wrong_key_answers_401_on_every_private_route(
    service: RunningService,
) -> None:
    acme = service.client("acme")
    cid = acme.post("/v1/conversations", json={}).json()["id"]
    routes = [r for r in _routes(acme) if r not in PUBLIC]
    anonymous = service.client(None)
    wrong = httpx.Client(
        base_url=service.base_url, headers={"Authorization": "Bearer abr_not-a-key"}
    )
    service.clients.append(wrong)
    for method, path in routes:
        for client in (anonymous, wrong):
            ids = {"conversation_id": cid, "session_id": "x", "index": "0"}
            answer = _call(client, method, path, ids)
            assert answer.status_code == 401, (method, path, answer.status_code)
            assert "API key" in answer.json()["detail"]
            assert answer.headers.get("www-authenticate") == "Bearer"
    for method, path in PUBLIC & set(_routes(acme)):
        if "{" not in path:
            assert anonymous.request(method, path).status_code == 200, path


def test_keys_are_never_echoed_nor_stored(service: RunningService) -> None:
    acme = service.client("acme")
    cid = acme.post("/v1/conversations", json={"system": "be brief"}).json()["id"]
    answer = acme.post(f"/v1/conversations/{cid}/messages?stream=false", json={"content": "go"})
    exported = acme.get(f"/v1/conversations/{cid}/export")
    metrics = acme.get("/metrics")
    secrets = [*service.keys.values(), "test-provider-key"]
    for response in (answer, exported, metrics):
        for secret in secrets:
            assert secret not in response.text
    if service.db_url.startswith("sqlite"):
        path = Path(service.db_url.split(":///", 1)[1])
        stored = b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
        for secret in secrets:
            assert secret.encode() not in stored
        assert json.dumps(answer.json()["result"]["text"])  # the conversation did run
