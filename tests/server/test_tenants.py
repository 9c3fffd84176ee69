"""Tenant isolation on every route, table-driven from the service's own OpenAPI schema (a route
added later cannot skip it): another tenant's id answers exactly as an id that does not exist,
and changes nothing; no key or a wrong key answers 401; no secret is echoed or stored."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abridged.testing import Reply
from tests.server.conftest import RunningService, make_keys

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
        ("GET", "/v1/models"),  # the service's configuration, the same for every tenant
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


# -- ids are the tenant's own: another tenant's id is as free as a fresh one ---------------------

_STAMP = re.compile(r"\d{4}-\d\d-\d\d[T ][\d:.]+(?:Z|[+-]\d\d:?\d\d)?")
_HEX = re.compile(r"\b[a-z]?[0-9a-f]{24,40}\b|(?<=\()[0-9a-f]{8}(?=\))")
_CALL = re.compile(r"\bcall_[A-Za-z0-9_-]+")


def _plain(value: Any, cid: str) -> Any:
    """An answer with what legitimately differs between two conversations taken out: their
    ids, random ids, timestamps and timings."""
    if isinstance(value, dict):
        return {
            k: 0 if k.endswith(("_ms", "seconds")) else _plain(v, cid) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_plain(v, cid) for v in value]
    if isinstance(value, str):
        value = value.replace(cid, "ID") if cid else value
        return _CALL.sub("CALL", _HEX.sub("HEX", _STAMP.sub("STAMP", value)))
    return value


def _answer(response: httpx.Response, cid: str) -> Any:
    try:
        body: Any = response.json()
    except ValueError:
        body = [_sse_events(response.text)] if "event:" in response.text else response.text
    return response.status_code, _plain(body, cid)


def _sse_events(text: str) -> list[list[Any]]:
    events: list[list[Any]] = []
    name = ""
    for line in text.splitlines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            events.append([name, json.loads(line[6:])])
    return events


def _pending_finalisations(client: httpx.Client, cid: str) -> list[int]:
    """The numbers of the sessions left whose background finalisation has not finished (a
    session left empty, with no summary to carry, is never finalised: nothing is pending)."""
    listed = client.get(f"/v1/conversations/{cid}/sessions")
    if listed.status_code == 404:  # deleted by a route already compared: nothing left to wait on
        return []
    assert listed.status_code == 200, listed.text
    return [
        s["number"]
        for s in listed.json()
        if not s["current"]
        and s["finalized_at"] is None
        and (s["messages"] > 0 or s["start_summary"] is not None)
    ]


def _settle(client: httpx.Client, *cids: str) -> None:
    """Wait until no session of these conversations awaits its background finalisation: the
    service finalises a session it leaves after answering, so two conversations compared while
    one's is still running differ by when they are read, not by whose they are."""
    deadline = time.monotonic() + 120  # a hang guard, not a bound on anything measured
    while True:
        pending = {cid: _pending_finalisations(client, cid) for cid in cids}
        if not any(pending.values()):
            return
        assert time.monotonic() < deadline, f"finalisations never finished: {pending}"
        time.sleep(0.05)


def _both(
    client: httpx.Client, method: str, path: str, taken: str, fresh: str, **kwargs: Any
) -> tuple[Any, Any]:
    """The same request on the two conversations, normalized."""
    one = client.request(method, path.format(cid=taken), timeout=60, **kwargs)
    two = client.request(method, path.format(cid=fresh), timeout=60, **kwargs)
    return _answer(one, taken), _answer(two, fresh)


def test_another_tenants_id_is_as_free_as_a_fresh_one_on_every_route(
    service: RunningService,
) -> None:
    """globex creates a conversation under acme's id and one under a fresh id: every answer on
    every route is the same for both (create, read, send with and without streaming, the
    timeline, sessions, calls, the compaction preview, export, delete), and acme's
    conversation of that id is untouched throughout."""
    acme, globex = service.client("acme"), service.client("globex")
    taken, fresh = "shared-conversation", "fresh-conversation"
    # answers in text only: the provider's tool call ids follow its request count, and their
    # token counts would make two conversations' meters differ whoever owns what
    service.provider.set_replies(lambda r: Reply(f"Noted {len(r.messages)} messages."))
    made = acme.post("/v1/conversations", json={"id": taken, "title": "acme's"})
    assert made.status_code == 201, made.text
    said = acme.post(f"/v1/conversations/{taken}/messages?stream=false", json={"content": "a"})
    assert said.status_code == 200, said.text
    before = _snapshot(acme, taken)

    one = globex.post("/v1/conversations", json={"id": taken, "title": "globex's"})
    two = globex.post("/v1/conversations", json={"id": fresh, "title": "globex's"})
    assert one.status_code == 201, one.text  # was 409: the id existed, for acme
    assert _answer(one, taken) == _answer(two, fresh)
    one = globex.post("/v1/conversations", json={"id": taken})
    two = globex.post("/v1/conversations", json={"id": fresh})
    assert one.status_code == two.status_code == 409  # its own ids, now
    assert _answer(one, taken) == _answer(two, fresh)

    sends = [
        ("POST", "/v1/conversations/{cid}/messages", {"json": {"content": "g1", "id": "g-1"}}),
        (
            "POST",
            "/v1/conversations/{cid}/messages",
            {"json": {"content": "g2", "id": "g-msg"}, "params": {"stream": "false"}},
        ),
        (
            "POST",
            "/v1/conversations/{cid}/messages",
            {"json": {"content": "g2", "id": "g-msg"}, "params": {"stream": "false"}},
        ),
    ]
    for method, path, kwargs in sends:
        first, second = _both(globex, method, path, taken, fresh, **kwargs)
        assert first == second, (path, first, second)

    routes = [(m, p) for m, p in _routes(globex) if "{conversation_id}" in p]
    assert len(routes) >= 15
    sessions = {
        cid: globex.get(f"/v1/conversations/{cid}/sessions").json()[0]["id"]
        for cid in (taken, fresh)
    }
    for method, path in sorted(routes, key=lambda r: r[0] == "DELETE"):
        _settle(globex, taken, fresh)
        answers = []
        for cid in (taken, fresh):
            ids = {"conversation_id": cid, "session_id": sessions[cid], "index": "0"}
            answers.append(_answer(_call(globex, method, path, ids), cid))
        assert answers[0] == answers[1], (method, path, answers)
        if method == "DELETE":
            assert answers[0][0] == 204

    assert _snapshot(acme, taken) == before  # acme's conversation of that id: untouched
    assert [c["title"] for c in acme.get("/v1/conversations").json()] == ["acme's"]
    assert globex.get(f"/v1/conversations/{taken}").status_code == 404  # globex's is deleted


def test_a_turn_of_one_tenant_does_not_hold_another_tenants_conversation_of_that_id(
    service: RunningService,
) -> None:
    """Turn leases and idempotent sends are per conversation, so per tenant: while acme's
    "same" runs a turn, globex's "same" answers a send with ``queue=false`` at once, and a
    message id acme used is a new message for globex."""
    acme, globex = service.client("acme"), service.client("globex")
    for client in (acme, globex):
        assert client.post("/v1/conversations", json={"id": "same"}).status_code == 201
    body = {"content": "hello", "id": "client-msg"}
    service.provider.latency = 0.25
    try:
        running = threading.Thread(
            target=lambda: acme.post("/v1/conversations/same/messages?stream=false", json=body)
        )
        running.start()
        deadline = time.monotonic() + 10
        while not service.provider.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        theirs = globex.post(
            "/v1/conversations/same/messages",
            params={"stream": "false", "queue": "false"},
            json=body,
        )
        running.join(60)
    finally:
        service.provider.latency = 0.0
    assert theirs.status_code == 200, theirs.text
    assert theirs.json()["result"]["text"].startswith("Done:")  # answered, not deduplicated
    for client in (acme, globex):
        timeline = client.get("/v1/conversations/same/messages").json()["messages"]
        assert [m["id"] for m in timeline if m["role"] == "user"] == ["client-msg"]


# -- property: what a tenant sees never depends on what another tenant did ------------------------

_NAMES = ("c1", "c2")
_OPS = st.tuples(
    st.sampled_from(["create", "send", "get", "timeline", "export", "preview", "delete", "list"]),
    st.sampled_from(_NAMES),
)


def _op(client: httpx.Client, op: tuple[str, str], step: int) -> Any:
    kind, name = op
    base = f"/v1/conversations/{name}"
    if kind == "create":
        answer = client.post("/v1/conversations", json={"id": name, "title": name})
    elif kind == "send":
        body = {"content": f"say {step}", "id": f"msg-{step}"}
        answer = client.post(f"{base}/messages", params={"stream": "false"}, json=body)
    elif kind == "get":
        answer = client.get(base)
    elif kind == "timeline":
        answer = client.get(f"{base}/messages")
    elif kind == "export":
        answer = client.get(f"{base}/export")
    elif kind == "preview":
        answer = client.post(f"{base}/compact", json={"dry_run": True})
    elif kind == "delete":
        answer = client.delete(base, params={"confirm": "true"})
    else:
        answer = client.get("/v1/conversations")
    return _answer(answer, "")


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    mine=st.lists(_OPS, min_size=1, max_size=6),
    theirs=st.lists(_OPS, max_size=6),
    a_first=st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_what_a_tenant_sees_never_depends_on_another_tenant(
    service: RunningService,
    mine: list[tuple[str, str]],
    theirs: list[tuple[str, str]],
    a_first: list[bool],
) -> None:
    """Tenant B runs ``mine`` with tenant A's ``theirs`` interleaved, on the same ids; tenant
    B2 runs ``mine`` alone. Every answer B gets equals B2's."""
    service.provider.set_replies(lambda r: Reply(f"Noted {len(r.messages)} messages."))
    tag = uuid.uuid4().hex[:8]
    keys = asyncio.run(make_keys(service.db_url, (f"a-{tag}", f"b-{tag}", f"b2-{tag}")))
    a, b, b2 = (
        httpx.Client(base_url=service.base_url, headers={"Authorization": f"Bearer {k}"})
        for k in keys.values()
    )
    try:
        pending = list(theirs)
        seen_b = []
        for step, (op, first) in enumerate(zip(mine, a_first, strict=False)):
            if first and pending:
                _op(a, pending.pop(0), 100 + step)
            seen_b.append(_op(b, op, step))
        for step, op in enumerate(pending):
            _op(a, op, 200 + step)
        seen_b2 = [_op(b2, op, step) for step, op in enumerate(mine[: len(seen_b)])]
        assert seen_b == seen_b2
    finally:
        for client in (a, b, b2):
            client.close()


def test_errors_name_the_conversation_by_the_tenants_id_never_the_stored_one(
    service: RunningService,
) -> None:
    """A 409 for a busy turn names the conversation as the tenant does: the storage id behind
    it (derived from the tenant and the id) never shows."""
    from abridged.store.conversations import scoped_key

    globex = service.client("globex")
    assert globex.post("/v1/conversations", json={"id": "busy"}).status_code == 201
    stored = scoped_key("globex", "busy")
    service.provider.latency = 0.25
    try:
        running = threading.Thread(
            target=lambda: globex.post(
                "/v1/conversations/busy/messages?stream=false", json={"content": "go"}
            )
        )
        running.start()
        deadline = time.monotonic() + 10
        while not service.provider.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        busy = globex.post(
            "/v1/conversations/busy/messages",
            params={"stream": "false", "queue": "false"},
            json={"content": "not now"},
        )
        running.join(60)
    finally:
        service.provider.latency = 0.0
    assert busy.status_code == 409, busy.text
    assert busy.json()["conversation_id"] == "busy" and "'busy'" in busy.json()["detail"]
    assert stored not in busy.text
