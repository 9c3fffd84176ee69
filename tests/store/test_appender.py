"""The append path's rows (``abridged.store.appender``): SQLite inserts them one at a time
through a statement naming its columns, so every column ``encode`` and ``place`` fill must be
one of them, or SQLite would drop it where PostgreSQL (Core's multi-row insert) keeps it."""

from __future__ import annotations

from abridged.core.model import Message, Usage
from abridged.store import appender, codec
from abridged.store.records import NewMessage


def test_the_row_statement_binds_every_column_a_row_has() -> None:
    message = Message.assistant("ok").replace(usage=Usage(input=10, output=2))
    rows = appender.encode([NewMessage(message, model="m", ttft_ms=1.0)], "c1", codec.now())
    appender.place(rows, {"next_seq": 5, "current_session_id": "s1"}, delivered=1)
    bound = set(appender._INSERT_ONE.compile().params)
    assert set(rows[0]) == bound
    assert rows[0]["seq"] == 4 and rows[0]["session_id"] == "s1"
