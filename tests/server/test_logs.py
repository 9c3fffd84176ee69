"""The service's structured logs: one JSON object per line, with the conversation id and the
tenant of each turn, and never a key or a message's content."""

from __future__ import annotations

import json
import logging

import pytest

from abridged.server.logs import JsonFormatter
from tests.server.conftest import RunningService


def test_a_turn_is_logged_with_its_conversation_and_tenant(
    service: RunningService, caplog: pytest.LogCaptureFixture
) -> None:
    client = service.client("globex")
    cid = client.post("/v1/conversations", json={}).json()["id"]
    with caplog.at_level(logging.INFO, logger="abridged.server.turns"):
        answer = client.post(
            f"/v1/conversations/{cid}/messages?stream=false",
            json={"content": "a secret plan that must not be logged"},
        )
    assert answer.status_code == 200
    turns = [r for r in caplog.records if getattr(r, "event", None) == "turn"]
    assert len(turns) == 1
    line = json.loads(JsonFormatter().format(turns[0]))
    assert line["conversation_id"] == cid and line["tenant"] == "globex"
    assert line["outcome"] == "ok" and line["level"] == "info" and line["duration_ms"] > 0
    text = JsonFormatter().format(turns[0])
    assert "secret plan" not in text
    assert all(key not in text for key in service.keys.values())


def test_the_formatter_keeps_only_known_fields_and_the_error_line() -> None:
    record = logging.LogRecord("abridged.x", logging.ERROR, __file__, 1, "boom %s", ("x",), None)
    record.conversation_id = "c1"
    record.password = "hunter2"  # an unknown field is not copied
    try:
        raise ValueError("bad thing")
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    line = json.loads(JsonFormatter().format(record))
    assert line["msg"] == "boom x" and line["conversation_id"] == "c1"
    assert "password" not in line and line["error"] == "ValueError: bad thing"
