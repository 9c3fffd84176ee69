"""The service answers a tool-using conversation over real HTTP (the broad tests are in the
other modules of this package)."""

from __future__ import annotations

from tests.server.conftest import RunningService


def test_a_conversation_runs_over_http(service: RunningService) -> None:
    client = service.client()
    made = client.post("/v1/conversations", json={"title": "smoke"})
    assert made.status_code == 201, made.text
    cid = made.json()["id"]
    sent = client.post(f"/v1/conversations/{cid}/messages?stream=false", json={"content": "go"})
    assert sent.status_code == 200, sent.text
    body = sent.json()
    assert body["result"]["text"].startswith("Done:")
    assert body["result"]["calls"] == 4
    assert body["meter"]["window"] == 8192
    timeline = client.get(f"/v1/conversations/{cid}/messages").json()
    roles = [m["role"] for m in timeline["messages"]]
    assert roles[0] == "user" and roles[-1] == "assistant"
    assert roles.count("tool") == 3
