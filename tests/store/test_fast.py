"""Prebuilt statements on SQLite's own cursor (``abridged.store.fast``) answer as
``Connection.execute`` does, on both backends: the same rows by label, the same row counts,
SQLAlchemy's errors for the driver's, and the engine's ``before_cursor_execute`` listeners
still called (the fault injection depends on it)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import bindparam, event, insert, update
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection

from abridged.errors import StoreEnvironmentError, StoreError
from abridged.store import Store, codec, fast, queries
from abridged.store.schema import conversations

_RENAME = (
    update(conversations)
    .where(conversations.c.id == bindparam("conversation_id"))
    .values(model=bindparam("model"), lease_holder=None)
    .returning(conversations.c.id, conversations.c.model, conversations.c.next_seq)
)
_TOUCH = (
    update(conversations)
    .where(conversations.c.id == bindparam("conversation_id"))
    .values(lease_holder=None)
)
_DUPLICATE = insert(conversations).values(
    id=bindparam("conversation_id"), created_at=bindparam("at"), updated_at=bindparam("at")
)


async def _both(store: Store, body: Any) -> tuple[Any, Any]:
    """``body(conn, run)`` once with ``fast.execute`` and once with Core's execute."""

    def core(conn: Connection, statement: Any, params: Any) -> fast.Outcome:
        result = conn.execute(statement, dict(params))
        rows = [dict(r) for r in result.mappings()] if result.returns_rows else []
        return fast.Outcome(rows, result.rowcount)

    got = await store._run_sync(lambda c: body(c, fast.execute), mode="write", operation="t")
    want = await store._run_sync(lambda c: body(c, core), mode="write", operation="t")
    return got, want


async def test_rows_and_counts_are_those_of_core(store: Store) -> None:
    if store.engine.dialect.name != "sqlite":
        pytest.skip("on PostgreSQL fast.execute is Core's execute: nothing to compare")
    convo = await store.create_conversation(model="a")

    def rename(conn: Connection, run: Any) -> tuple[Any, ...]:
        renamed = run(conn, _RENAME, {"conversation_id": convo.id, "model": "b"})
        missing = run(conn, _RENAME, {"conversation_id": "nope", "model": "b"})
        touched = run(conn, _TOUCH, {"conversation_id": convo.id}).rowcount
        untouched = run(conn, _TOUCH, {"conversation_id": "nope"}).rowcount
        row = run(conn, queries.CONVERSATION_ROW, {"conversation_id": convo.id}).first()
        return renamed.rows, missing.rows, touched, untouched, row

    (got, want) = await _both(store, rename)
    assert got[:4] == want[:4] == ([{"id": convo.id, "model": "b", "next_seq": 1}], [], 1, 0)
    assert got[4] == want[4] and got[4] is not None and got[4]["model"] == "b"
    assert set(got[4]) == {c.name for c in conversations.c}
    # with RETURNING, the count is of the rows returned (SQLite's cursor counts them as they
    # are read; Core reads the count before the rows)
    assert (
        await store._run_sync(
            lambda c: (
                fast.execute(c, _RENAME, {"conversation_id": convo.id, "model": "c"}).rowcount
            ),
            mode="write",
            operation="t",
        )
        == 1
    )


async def test_driver_errors_come_out_as_sqlalchemy_errors(store: Store) -> None:
    convo = await store.create_conversation()

    raised: list[BaseException] = []

    def duplicate(conn: Connection) -> None:
        try:
            fast.execute(conn, _DUPLICATE, {"conversation_id": convo.id, "at": codec.now()})
        except BaseException as exc:
            raised.append(exc)
            raise

    # SQLAlchemy's error inside, the store's at its boundary: refused, not an environment
    # failure (the same as through Core)
    with pytest.raises(StoreError, match="refused") as caught:
        await store._run_sync(duplicate, mode="write", operation="duplicate")
    assert not isinstance(caught.value, StoreEnvironmentError)
    assert isinstance(raised[0], sa_exc.IntegrityError)
    assert (await store.open_conversation(convo.id)).id == convo.id  # nothing else changed


async def test_cursor_listeners_are_called(store: Store) -> None:
    convo = await store.create_conversation()
    seen: list[str] = []

    def listen(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    for engine in store.sync_engines:
        event.listen(engine, "before_cursor_execute", listen)
    try:
        await store.open_conversation(convo.id)
    finally:
        for engine in store.sync_engines:
            event.remove(engine, "before_cursor_execute", listen)
    assert any("FROM conversations" in s for s in seen)
