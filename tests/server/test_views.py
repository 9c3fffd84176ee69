"""One shape per thing shown: a session and a compaction read from the store are the same JSON
in ``abridged sessions show --json`` and in the HTTP API (``abridged.runtime.views``); the CLI's
conversation and totals are views too, their times written as the API writes them."""

from __future__ import annotations

import json

from abridged.runtime.views import (
    CompactionView,
    ConversationView,
    SessionHitView,
    SessionView,
    TotalsView,
)
from tests.cli.conftest import run_cli
from tests.server.conftest import RunningService


def test_sessions_and_compactions_have_one_shape_in_the_cli_and_the_api(
    service: RunningService,
) -> None:
    client = service.client()
    cid = client.post("/v1/conversations", json={}).json()["id"]
    for turn in range(3):
        sent = client.post(
            f"/v1/conversations/{cid}/messages?stream=false", json={"content": f"turn {turn}"}
        )
        assert sent.status_code == 200, sent.text
    done = client.post(f"/v1/conversations/{cid}/compact", json={"confirm": True})
    assert done.status_code == 200, done.text
    api_sessions = client.get(f"/v1/conversations/{cid}/sessions").json()
    api_compactions = client.get(f"/v1/conversations/{cid}/messages").json()["compactions"]
    out = run_cli("sessions", "show", cid, "--db", service.db_url, "--json")
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)
    assert len(shown["sessions"]) == len(api_sessions) >= 2
    assert len(shown["compactions"]) == len(api_compactions) >= 1
    # the same fields and values, field for field
    assert shown["sessions"] == api_sessions
    assert shown["compactions"] == api_compactions
    for session in api_sessions:
        SessionView.model_validate(session)
    for compaction in api_compactions:
        CompactionView.model_validate(compaction)

    # the conversation: the fields the CLI shows, in the one view, and times as the API's
    api_conversation = client.get(f"/v1/conversations/{cid}").json()
    ConversationView.model_validate(shown["conversation"])
    assert shown["conversation"]["name"] == api_conversation["id"]
    for when in ("created_at", "updated_at"):
        assert shown["conversation"][when] == api_conversation[when]
    # the conversation's totals: the sessions' together, in the sessions' own shape
    assert TotalsView.model_validate(shown["totals"]).model_dump() == {
        name: sum(s["totals"][name] for s in api_sessions) for name in shown["totals"]
    }
    listed = json.loads(run_cli("sessions", "list", "--db", service.db_url, "--json").stdout)
    (entry,) = [c for c in listed["conversations"] if c["name"] == cid]
    assert ConversationView.model_validate(entry).model_dump(mode="json") == shown["conversation"]
    assert entry["totals"] == shown["totals"]


def test_a_session_found_by_a_search_has_one_shape_in_the_cli_and_the_api(
    service: RunningService,
) -> None:
    client = service.client()
    cid = client.post("/v1/conversations", json={}).json()["id"]
    for turn in range(3):
        sent = client.post(
            f"/v1/conversations/{cid}/messages?stream=false",
            json={"content": f"turn {turn}: the invoice rounding rule"},
        )
        assert sent.status_code == 200, sent.text
    done = client.post(f"/v1/conversations/{cid}/compact", json={"confirm": True})
    assert done.status_code == 200, done.text
    found = client.get(f"/v1/conversations/{cid}/sessions/search?q=invoice rounding&limit=5")
    assert found.status_code == 200, found.text
    api_hits = found.json()
    out = run_cli(
        "sessions", "search", "invoice rounding", "--db", service.db_url,
        "--conversation", cid, "--limit", "5", "--json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    cli_hits = json.loads(out.stdout)["hits"]
    assert len(api_hits) >= 1
    # the same fields and values, field for field: the session found, where, how well and how
    assert cli_hits == api_hits
    for hit in api_hits:
        SessionHitView.model_validate(hit)
        assert hit["conversation_id"] == cid
        assert hit["method"] in ("text", "embedding") and hit["score"] > 0
    sessions = {s["id"]: s for s in client.get(f"/v1/conversations/{cid}/sessions").json()}
    shown = {k: v for k, v in api_hits[0].items() if k in SessionView.model_fields}
    assert shown == {**sessions[api_hits[0]["id"]], "gist": ""}
