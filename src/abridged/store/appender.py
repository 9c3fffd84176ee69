"""The append path: rows built before the transaction, one short transaction per call, and on
SQLite a worker thread that runs the whole transaction (one thread hop instead of a dozen)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from sqlalchemy import Update, update
from sqlalchemy.engine import URL, Connection, Engine, RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from abridged.errors import AbridgedError, NotFoundError
from abridged.store import codec, queries
from abridged.store.connect import DRIVER_ERRORS, create_sqlite_sync_engine, environment_error
from abridged.store.records import NewMessage
from abridged.store.schema import conversations, messages

Rows = list[dict[str, Any]]


def reserve_statement(conversation_id: str, count: int) -> Update:
    """Reserve ``count`` sequence numbers and read the current session. On PostgreSQL it takes
    the conversation's row lock, so the session read is the one a concurrent compaction commits
    against, before or after it, never during."""
    return (
        update(conversations)
        .where(conversations.c.id == conversation_id)
        .values(next_seq=conversations.c.next_seq + count, updated_at=codec.now())
        .returning(
            conversations.c.id,
            conversations.c.owner,
            conversations.c.next_seq,
            conversations.c.current_session_id,
        )
    )


def checked_head(head: RowMapping | None, conversation_id: str, owner: str | None) -> RowMapping:
    """The reserved row, or ``NotFoundError`` / ``OwnershipError`` (the caller rolls back)."""
    if head is None:
        raise NotFoundError("no such conversation", conversation_id=conversation_id)
    queries.check_owner(head, owner)
    return head


def encode(entries: Sequence[NewMessage], conversation_id: str, stamp: datetime) -> Rows:
    """The rows to insert, without their session and sequence numbers (filled in later)."""
    rows = []
    for entry in entries:
        row = codec.message_columns(entry.message)
        row.update(
            conversation_id=conversation_id,
            version=0,
            model=entry.model,
            ttft_ms=entry.ttft_ms,
            total_ms=entry.total_ms,
            status=entry.status,
            created_at=stamp,
        )
        rows.append(row)
    return rows


def place(rows: Rows, head: RowMapping, delivered: int) -> None:
    """Give delivered rows consecutive sequence numbers in the current session."""
    seq = int(head["next_seq"]) - delivered
    for row in rows:
        row["session_id"] = head["current_session_id"]
        if row["status"] == "delivered":
            row["seq"] = seq
            seq += 1
        else:
            row["seq"] = None


_INSERT = messages.insert().returning(messages.c.pk, sort_by_parameter_order=True)


def _delivered(rows: Rows) -> int:
    return sum(1 for r in rows if r["status"] == "delivered")


async def append_async(
    conn: AsyncConnection, conversation_id: str, owner: str | None, rows: Rows
) -> list[int]:
    """Reserve, place and insert ``rows`` on an async connection in a transaction; their pks."""
    delivered = _delivered(rows)
    head = (await conn.execute(reserve_statement(conversation_id, delivered))).mappings().first()
    place(rows, checked_head(head, conversation_id, owner), delivered)
    return [int(pk) for pk in (await conn.execute(_INSERT, rows)).scalars().all()]


def append_sync(conn: Connection, conversation_id: str, owner: str | None, rows: Rows) -> list[int]:
    """The same on a synchronous connection."""
    delivered = _delivered(rows)
    head = conn.execute(reserve_statement(conversation_id, delivered)).mappings().first()
    place(rows, checked_head(head, conversation_id, owner), delivered)
    return [int(pk) for pk in conn.execute(_INSERT, rows).scalars().all()]


class SqliteAppender:
    """Runs SQLite append transactions in one worker thread on a synchronous engine."""

    def __init__(self, url: URL, synchronous: str = "NORMAL") -> None:
        self._url = url
        self._engine = create_sqlite_sync_engine(url, sqlite_synchronous=synchronous)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="abridged-append")

    @property
    def engine(self) -> Engine:
        """The synchronous engine the appends run on."""
        return self._engine

    def _run(self, conversation_id: str, owner: str | None, rows: Rows) -> list[int]:
        try:
            with self._engine.connect() as conn, conn.begin():
                return append_sync(conn, conversation_id, owner, rows)
        except AbridgedError:
            raise
        except DRIVER_ERRORS as exc:  # the store's boundary, as ``connect.transaction``
            raise environment_error(exc, "append_many", self._url) from exc

    async def append(self, conversation_id: str, owner: str | None, rows: Rows) -> list[int]:
        """Append in the worker thread; the same errors as ``append_async`` (and the same
        ``StoreEnvironmentError`` subclasses as ``connect.transaction``)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._run, conversation_id, owner, rows)

    def close(self) -> None:
        """Stop the thread and close the connections."""
        self._executor.shutdown(wait=True)
        self._engine.dispose()
