"""The call inspector's API: every model call of a conversation, message by message, is exactly
what the provider received (checked against the local provider's own record of each request),
read from the store by any worker and after a restart."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from abridged.core.model import message_from_dict
from abridged.testing import ProviderServer
from tests.server.conftest import RunningService, make_keys, service_config, serving


def _send(client: httpx.Client, cid: str, text: str) -> None:
    answer = client.post(
        f"/v1/conversations/{cid}/messages", params={"stream": "false"}, json={"content": text}
    )
    assert answer.status_code == 200, answer.text


def _texts(messages: list[Any]) -> list[str]:
    return [m.text for m in messages]


def test_each_call_shows_what_the_provider_received_part_by_part(
    service: RunningService,
) -> None:
    client = service.client()
    cid = client.post(
        "/v1/conversations",
        json={"system": "You read records.", "settings": {"summarizer": "extractive"}},
    ).json()["id"]
    for turn in range(12):
        _send(client, cid, f"task {turn}: read the next records")
    requests = service.provider.requests
    calls = client.get(f"/v1/conversations/{cid}/calls", params={"limit": 500}).json()
    assert len(calls) == len(requests) >= 48

    sections_seen: set[str] = set()
    for call, request in zip(calls, requests, strict=True):
        detail = client.get(f"/v1/conversations/{cid}/calls/{call['index']}").json()
        sent = [message_from_dict(m["message"]) for m in detail["sent"]]
        # the same messages, in the same order, as the provider read them
        assert _texts(sent) == _texts(request.messages)
        assert [m.role for m in sent] == [m.role for m in request.messages]
        assert detail["input_tokens"] == request.prompt_tokens
        assert detail["cached_tokens"] == request.cached_tokens
        by_section = {s: 0 for s in detail["by_section"]}
        for m in detail["sent"]:
            by_section[m["section"]] += m["tokens"]
            sections_seen.add(m["section"])
        assert by_section == detail["by_section"]
        # the demo tools' definitions are sent with every call: counted apart from the messages
        assert detail["tools"] > 0
        # the layout is stable-first: system, then what precedes the summary, the summary, then
        # the pruned region and the verbatim tail
        order = [m["section"] for m in detail["sent"]]
        if "summary" in order:
            assert set(order[: order.index("summary")]) <= {"system", "pinned"}
            assert set(order[order.index("summary") + 1 :]) <= {"pruned", "kept"}
    assert {"system", "summary", "kept"} <= sections_seen
    assert "pruned" in sections_seen


def test_the_calls_of_a_conversation_are_its_tenants_alone(service: RunningService) -> None:
    acme, other = service.client("acme"), service.client("globex")
    cid = acme.post("/v1/conversations", json={}).json()["id"]
    _send(acme, cid, "read one record")
    assert acme.get(f"/v1/conversations/{cid}/calls").status_code == 200
    assert other.get(f"/v1/conversations/{cid}/calls").status_code == 404
    assert other.get(f"/v1/conversations/{cid}/calls/0").status_code == 404
    missing = acme.get(f"/v1/conversations/{cid}/calls/999")
    assert missing.status_code == 404 and "no call 999" in missing.json()["detail"]


def test_the_calls_are_read_from_the_store_by_every_worker_and_after_a_restart(
    service_db: str, provider: ProviderServer
) -> None:
    """Two app instances on one database (the backend under test; on PostgreSQL, as two workers
    are): the calls one made are listed whole by the other, each message read back as the
    provider received it; after both restart, the same again. Before the store kept them, the
    second instance listed no call at all."""
    keys = asyncio.run(make_keys(service_db))
    config = service_config(service_db, provider)
    with serving(config) as first, serving(config) as second:
        one = RunningService(first, keys, provider, service_db, config.models[0]).client()
        two = RunningService(second, keys, provider, service_db, config.models[0]).client()
        cid = one.post(
            "/v1/conversations",
            json={"system": "You read records.", "settings": {"summarizer": "extractive"}},
        ).json()["id"]
        for turn in range(10):
            _send(one if turn % 2 == 0 else two, cid, f"task {turn}: read the next records")
        listed = one.get(f"/v1/conversations/{cid}/calls", params={"limit": 500}).json()
        assert listed == two.get(f"/v1/conversations/{cid}/calls", params={"limit": 500}).json()
        assert [c["index"] for c in listed] == list(range(len(provider.requests)))
        details = [two.get(f"/v1/conversations/{cid}/calls/{c['index']}").json() for c in listed]
        for c in (one, two):
            c.close()
    sections = {m["section"] for d in details for m in d["sent"]}
    assert {"system", "summary", "pruned", "kept"} <= sections  # every kind of reference
    for detail, request in zip(details, provider.requests, strict=True):
        sent = [message_from_dict(m["message"]) for m in detail["sent"]]
        assert _texts(sent) == _texts(request.messages)
        assert [m.role for m in sent] == [m.role for m in request.messages]
    with serving(config) as again:
        client = RunningService(again, keys, provider, service_db, config.models[0]).client()
        assert client.get(f"/v1/conversations/{cid}/calls", params={"limit": 500}).json() == listed
        last = listed[-1]["index"]
        assert client.get(f"/v1/conversations/{cid}/calls/{last}").json() == details[-1]
        assert client.get(f"/v1/conversations/{cid}/calls/{last + 1}").status_code == 404
        client.close()
