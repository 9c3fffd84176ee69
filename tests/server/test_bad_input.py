"""Bad input gets a 4xx that says what is wrong, and changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server.conftest import RunningService

JSON = {"content-type": "application/json"}


def _state(client: httpx.Client) -> Any:
    conversations = client.get("/v1/conversations").json()
    return [
        (
            c["id"],
            c["settings"],
            len(client.get(f"/v1/conversations/{c['id']}/messages").json()["messages"]),
        )
        for c in conversations
    ]


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "says"),
    [
        ("POST", "/v1/conversations", {"json": {"title": 5}}, 422, "title"),
        ("POST", "/v1/conversations", {"json": {"colour": "red"}}, 422, "colour"),
        ("POST", "/v1/conversations", {"json": {"id": "bad id/with slash"}}, 422, "id"),
        ("POST", "/v1/conversations", {"json": {"model": "nobody/knows"}}, 422, "model"),
        ("POST", "/v1/conversations", {"content": b"{not json", "headers": JSON}, 422, "JSON"),
        ("POST", "{c}/messages", {"json": {}}, 422, "content"),
        ("POST", "{c}/messages", {"json": {"content": ""}}, 422, "content"),
        ("POST", "{c}/messages", {"json": {"content": ["a"]}}, 422, "content"),
        ("POST", "{c}/messages", {"json": {"content": "x", "id": "has space"}}, 422, "id"),
        ("POST", "{c}/messages?stream=maybe", {"json": {"content": "x"}}, 422, "stream"),
        ("POST", "{c}/compact", {"json": {"dry_run": "often"}}, 422, "dry_run"),
        ("POST", "{c}/sessions/resume", {"json": {}}, 422, "session"),
        ("GET", "{c}/export?format=xml", {}, 422, "format"),
        ("GET", "/v1/conversations?limit=0", {}, 422, "limit"),
        ("GET", "/v1/conversations/" + "x" * 300, {}, 404, "no such conversation"),
        ("POST", "/v1/conversations/nope/messages", {"json": {"content": "x"}}, 404, "no such"),
        # ids no database can hold: the client's error, not an outage (was 503 / 500)
        ("GET", "/v1/conversations/a%00b", {}, 422, "conversation id"),
        ("POST", "/v1/conversations/a%00b/messages", {"json": {"content": "x"}}, 422, "NUL"),
        ("POST", "/v1/replay", {"content": b"   "}, 422, "empty"),
        ("POST", "/v1/replay", {"content": b"this is not a transcript"}, 422, ""),
    ],
)  # fmt: skip
def test_bad_requests_say_what_is_wrong_and_change_nothing(  # noqa: PLR0917
    service: RunningService,
    method: str,
    path: str,
    kwargs: dict[str, Any],
    status: int,
    says: str,
) -> None:
    client = service.client()
    cid = client.post("/v1/conversations", json={"title": "kept"}).json()["id"]
    before = _state(client)
    answer = client.request(method, path.replace("{c}", f"/v1/conversations/{cid}"), **kwargs)
    assert answer.status_code == status, answer.text
    detail = answer.json()["detail"]
    assert says.lower() in str(detail).lower()
    assert _state(client) == before


def _chunks(size: int) -> Iterator[bytes]:
    sent = 0
    while sent < size:
        yield b" " * 65_536
        sent += 65_536


def test_huge_bodies_get_413_declared_or_streamed(service: RunningService) -> None:
    client = service.client()
    cid = client.post("/v1/conversations", json={}).json()["id"]
    before = _state(client)
    huge = b'{"content": "' + b"a" * (2 << 20) + b'"}'
    declared = client.post(f"/v1/conversations/{cid}/messages", content=huge,
                           headers={"content-type": "application/json"})  # fmt: skip
    assert declared.status_code == 413 and "larger than" in declared.json()["detail"], declared.text
    streamed = client.post(f"/v1/conversations/{cid}/messages", content=_chunks(3 << 20),
                           headers={"content-type": "application/json"})  # fmt: skip
    assert streamed.status_code == 413
    assert _state(client) == before


def test_a_lone_surrogate_is_kept_and_answered(service: RunningService) -> None:
    client = service.client()
    cid = client.post("/v1/conversations", json={}).json()["id"]
    raw = b'{"content": "broken \\ud800 text"}'
    answer = client.post(f"/v1/conversations/{cid}/messages?stream=false", content=raw,
                         headers={"content-type": "application/json"})  # fmt: skip
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["text"].startswith("Done:")
    users = [m for m in client.get(f"/v1/conversations/{cid}/messages").json()["messages"]
             if m["role"] == "user"]  # fmt: skip
    assert len(users) == 1 and users[0]["text"].startswith("broken ")
