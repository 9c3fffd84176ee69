"""The append path: rows built before the transaction, one short transaction per call (on
SQLite run whole by the store's runner, ``abridged.store.threaded``)."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Insert, bindparam, literal, null, select, union_all, update
from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from abridged.core.model import Message
from abridged.errors import LeaseLostError, StoreError
from abridged.store import codec, fast, queries
from abridged.store.records import NewMessage, StoredMessage
from abridged.store.schema import conversations, messages

Rows = list[dict[str, Any]]


#: ``count`` sequence numbers taken (the conversation's row lock with them on PostgreSQL).
_RESERVATION = (
    update(conversations)
    .where(conversations.c.id == bindparam("conversation_id"))
    .values(next_seq=conversations.c.next_seq + bindparam("count"), updated_at=bindparam("now"))
)
_RESERVE = _RESERVATION.returning(
    conversations.c.id,
    conversations.c.owner,
    conversations.c.next_seq,
    conversations.c.current_session_id,
)

# The fence of a write made under the turn lease: the reservation itself (the statement that
# takes the row lock) matches only while the writer holds the lease, so a takeover committed
# before it refuses it and one after it sees its rows.
_RESERVE_FENCED = _RESERVE.where(conversations.c.lease_holder == bindparam("holder"))


def reserve(
    conn: Connection,
    conversation_id: str,
    owner: str | None,
    count: int,
    *,
    holder: str | None = None,
) -> Mapping[Any, Any]:
    """Reserve ``count`` sequence numbers and read the current session; ``NotFoundError`` or
    ``OwnershipError`` (the caller's transaction rolls back). On PostgreSQL it takes the
    conversation's row lock, so the session read is the one a concurrent compaction commits
    against, before or after it, never during.

    With ``holder``, only while ``holder`` holds the conversation's turn lease (an expired
    lease nobody took over still counts: nobody else wrote): ``LeaseLostError`` otherwise."""
    codec.check_id(conversation_id, "conversation_id")
    values: dict[str, Any] = {
        "conversation_id": conversation_id,
        "count": count,
        "now": codec.now(),
    }
    if holder is None:
        head = fast.execute(conn, _RESERVE, values).first()
        return queries.checked_conversation(head, conversation_id, owner)
    values["holder"] = holder
    head = fast.execute(conn, _RESERVE_FENCED, values).first()
    if head is None:  # no such conversation, another owner's, or the lease is not ours
        queries.read_conversation_sync(conn, conversation_id, owner)
        raise LeaseLostError(
            "the turn lease was taken over: this write came too late and was not stored",
            conversation_id=conversation_id,
        )
    return queries.checked_conversation(head, conversation_id, owner)


def encode(entries: Sequence[NewMessage], conversation_id: str, stamp: datetime) -> Rows:
    """The rows to insert, without their session and sequence numbers (filled in later)."""
    codec.check_id(conversation_id, "conversation_id")
    rows = []
    for index, entry in enumerate(entries):
        codec.check_id(entry.message.id, "message_id", conversation_id=conversation_id, index=index)
        row = codec.message_columns(entry.message)
        row.update(
            conversation_id=conversation_id,
            idempotency_key=codec.idempotency_key(entry.message),
            version=0,
            model=entry.model,
            ttft_ms=entry.ttft_ms,
            total_ms=entry.total_ms,
            status=entry.status,
            created_at=stamp,
        )
        rows.append(row)
    return rows


def stored_row(pk: int, row: Mapping[str, Any], message: Message) -> StoredMessage:
    """The ``StoredMessage`` of ``row`` (from ``encode``, placed) just inserted as ``pk``."""
    return StoredMessage(
        pk=pk,
        conversation_id=row["conversation_id"],
        session_id=row["session_id"],
        seq=row["seq"],
        version=0,
        message=message,
        status=row["status"],
        model=row["model"],
        ttft_ms=row["ttft_ms"],
        total_ms=row["total_ms"],
        created_at=row["created_at"],
    )


def place(rows: Rows, head: Mapping[Any, Any], delivered: int) -> None:
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
_ROW_COLUMNS = (
    *codec.MESSAGE_COLUMNS,
    "conversation_id",
    "version",
    "model",
    "ttft_ms",
    "total_ms",
    "status",
    "created_at",
    "session_id",
    "seq",
    "idempotency_key",
)
_INSERT_ONE = (
    messages.insert()
    .values({name: bindparam(name) for name in _ROW_COLUMNS})
    .returning(messages.c.pk)
)


# The optimistic form of an append (see ``append_rows``): a row whose idempotency key is stored
# already is not inserted (and says so by returning nothing), any other conflict still raises.
_KEY = ("conversation_id", "idempotency_key")
_INSERT_ONE_UNLESS_KEPT = (
    sqlite_insert(messages)
    .values({name: bindparam(name) for name in _ROW_COLUMNS})
    .on_conflict_do_nothing(index_elements=_KEY)
    .returning(messages.c.pk)
)
_INSERT_UNLESS_KEPT = (
    pg_insert(messages)
    .on_conflict_do_nothing(index_elements=_KEY)
    .returning(messages.c.pk, messages.c.idempotency_key)
)


class KeyStoredError(StoreError):
    """An optimistic append met a message id stored already: its transaction rolls back and
    the append runs again with the look-up (``append_rows(look_up=True)``). Never leaves the
    store."""


def _delivered(rows: Rows) -> int:
    return sum(1 for r in rows if r["status"] == "delivered")


_BY_KEY = select(*codec.columns(messages)).where(
    messages.c.conversation_id == bindparam("conversation_id"),
    messages.c.idempotency_key == bindparam("key"),
)
_BY_KEYS = select(*codec.columns(messages)).where(
    messages.c.conversation_id == bindparam("conversation_id"),
    messages.c.idempotency_key.in_(bindparam("keys", expanding=True)),
)


def stored_already(conn: Connection, conversation_id: str, rows: Rows) -> dict[str, Any]:
    """The rows already stored under the idempotency keys of ``rows``, by key."""
    keys = [row["idempotency_key"] for row in rows if row["idempotency_key"] is not None]
    if not keys:
        return {}
    if conn.dialect.name == "sqlite":  # a prebuilt statement a key: a few microseconds each
        found = [
            fast.execute(conn, _BY_KEY, {"conversation_id": conversation_id, "key": key}).first()
            for key in keys
        ]
        return {row["idempotency_key"]: row for row in found if row is not None}
    result = conn.execute(_BY_KEYS, {"conversation_id": conversation_id, "keys": keys})
    return {row["idempotency_key"]: dict(row) for row in result.mappings()}


def append_rows(
    conn: Connection,
    conversation_id: str,
    owner: str | None,
    rows: Rows,
    *,
    holder: str | None = None,
    look_up: bool = True,
) -> list[int | dict[str, Any]]:
    """Reserve, place and insert ``rows`` in the caller's transaction (their keys distinct;
    only while ``holder`` holds the turn lease, when given); for each row its new pk, or the
    row already stored under its idempotency key.

    ``look_up=False``: the optimistic form, for rows that all have keys: no look-up first (a
    statement a row on SQLite, a round trip on PostgreSQL, for ids that are nearly always new:
    the runtime's own, a client's first send); a key found stored by the insert itself raises
    ``KeyStoredError``, and the caller runs the append again with the look-up.

    The look-up runs after ``reserve``, which holds the conversation's row lock on PostgreSQL
    (SQLite's write lock is taken at BEGIN): an append of the same key elsewhere has committed
    before it or waits until this one commits, so it is never stored twice and every caller gets
    the same row; the unique index ``uq_messages_conversation_key`` guarantees it regardless."""
    delivered = _delivered(rows)
    head = reserve(conn, conversation_id, owner, delivered, holder=holder)
    if not look_up:
        return _insert_unless_kept(conn, rows, head, delivered)
    found = stored_already(conn, conversation_id, rows)
    fresh = [row for row in rows if row["idempotency_key"] not in found]
    if found:
        # give back the sequence numbers of the rows stored already (this transaction holds
        # the lock since it reserved them: they are the last ones), so that none is skipped
        unused = delivered - _delivered(fresh)
        if unused:
            head = reserve(conn, conversation_id, owner, -unused)
    place(fresh, head, _delivered(fresh))
    if not fresh:
        pks: list[int] = []
    elif conn.dialect.name == "sqlite":
        # a row at a time on SQLite's own cursor (``fast``): a few microseconds each, where
        # Core's multi-row INSERT costs ~70 us to set up; elsewhere one statement (one round
        # trip to the server)
        pks = [int(fast.execute(conn, _INSERT_ONE, row).rows[0]["pk"]) for row in fresh]
    else:
        pks = [int(pk) for pk in conn.execute(_INSERT, fresh).scalars().all()]
    new = iter(pks)
    return [
        found[row["idempotency_key"]] if row["idempotency_key"] in found else next(new)
        for row in rows
    ]


def optimistic(rows: Rows) -> bool:
    """Whether ``append_rows`` may run ``rows`` without the look-up first: every row has an
    idempotency key (a row without one never conflicts, and the look-up is skipped for it
    anyway), so the insert itself tells which were stored already."""
    return bool(rows) and all(row["idempotency_key"] is not None for row in rows)


def _insert_unless_kept(
    conn: Connection, rows: Rows, head: Mapping[Any, Any], delivered: int
) -> list[int | dict[str, Any]]:
    place(rows, head, delivered)
    if conn.dialect.name == "sqlite":
        pks: list[int | dict[str, Any]] = []
        for row in rows:
            inserted = fast.execute(conn, _INSERT_ONE_UNLESS_KEPT, row).first()
            if inserted is None:
                raise KeyStoredError(row["idempotency_key"])
            pks.append(int(inserted["pk"]))
        return pks
    by_key = {key: int(pk) for pk, key in conn.execute(_INSERT_UNLESS_KEPT, rows).all()}
    if len(by_key) != len(rows):
        raise KeyStoredError(
            next(r["idempotency_key"] for r in rows if r["idempotency_key"] not in by_key)
        )
    return [by_key[row["idempotency_key"]] for row in rows]


# -- PostgreSQL: an append in one statement -------------------------------------------------

#: The unique index that says a message id is stored already (``append_rows``).
KEY_INDEX = "uq_messages_conversation_key"


def append_in_one_statement(
    conn: Connection,
    conversation_id: str,
    owner: str | None,
    rows: Rows,
    *,
    holder: str | None = None,
) -> list[int | dict[str, Any]]:
    """An append (``append_rows(look_up=False)``) on PostgreSQL as one statement,
    sent outside any transaction: one round trip where BEGIN, the reservation, the insert
    and COMMIT were four. The reservation is the statement's first part (a data-modifying
    ``WITH``): it takes the conversation's row lock and matches only the owner's conversation
    (and, with ``holder``, only while it holds the turn lease); the rows are placed from what
    it returns. A message id stored already fails the whole statement, so nothing is reserved
    or stored (no sequence number is skipped): ``KeyStoredError``, and the caller appends
    again with the look-up, in a transaction. Nothing written because nothing matched:
    ``NotFoundError``, ``OwnershipError`` or ``LeaseLostError``, as ``reserve`` says.

    ``rows``: as ``in_one_statement`` allows."""
    delivered = tuple(row["status"] == "delivered" for row in rows)
    statement = _one_statement(delivered, owner is not None, holder is not None)
    params: dict[str, Any] = {
        "conversation_id": codec.check_id(conversation_id, "conversation_id"),
        "count": sum(delivered),
        "now": codec.now(),
    }
    if owner is not None:
        params["expected_owner"] = owner  # (not "owner": an UPDATE would set it)
    if holder is not None:
        params["holder"] = holder
    for index, row in enumerate(rows):
        params.update({f"{name}_{index}": row[name] for name in _PLACED_COLUMNS})
    try:
        stored = conn.execute(statement, params).all()
    except sa_exc.IntegrityError as exc:
        if KEY_INDEX in str(exc.orig):
            raise KeyStoredError("a message id is stored already") from None
        raise
    if not stored:  # nothing matched: say why (a read, on this error path only)
        queries.read_conversation_sync(conn, conversation_id, owner)
        raise LeaseLostError(
            "the turn lease was taken over: this write came too late and was not stored",
            conversation_id=conversation_id,
        )
    # A row with a key is found by it; one without (delivered: ``in_one_statement``) by its
    # place among them, the sequence numbers rising in the order of the rows.
    by_key = {key: (int(pk), session, seq) for pk, key, session, seq in stored if key is not None}
    unkeyed = iter(sorted((seq, int(pk), sid) for pk, key, sid, seq in stored if key is None))
    pks: list[int | dict[str, Any]] = []
    for row in rows:
        key = row["idempotency_key"]
        if key is not None:
            pk, row["session_id"], row["seq"] = by_key[key]
        else:
            row["seq"], pk, row["session_id"] = next(unkeyed)
        pks.append(pk)
    return pks


def in_one_statement(rows: Rows) -> bool:
    """Whether ``append_in_one_statement`` can place ``rows``: each has an idempotency key
    (what finds its row in the statement's answer) or is delivered (found by its number), and
    no key is repeated."""
    keys = [row["idempotency_key"] for row in rows if row["idempotency_key"] is not None]
    placeable = all(r["idempotency_key"] is not None or r["status"] == "delivered" for r in rows)
    return bool(rows) and placeable and len(set(keys)) == len(keys)


#: The columns a row brings (``encode``); the session and the sequence number come from the
#: reservation.
_PLACED_COLUMNS = tuple(name for name in _ROW_COLUMNS if name not in ("session_id", "seq"))


@functools.lru_cache(maxsize=64)
def _one_statement(delivered: tuple[bool, ...], owned: bool, fenced: bool) -> Insert:
    """The statement of ``append_in_one_statement`` for rows of this shape (delivered or
    queued, in order), built once per shape: the reservation as a ``WITH`` that returns the
    new head, then the rows selected from it, each with its own parameters."""
    reserve = _RESERVATION
    if owned:
        reserve = reserve.where(conversations.c.owner == bindparam("expected_owner"))
    if fenced:
        reserve = reserve.where(conversations.c.lease_holder == bindparam("holder"))
    head = reserve.returning(conversations.c.next_seq, conversations.c.current_session_id).cte(
        "head"
    )
    count = sum(delivered)
    selects = []
    number = 0
    for index, is_delivered in enumerate(delivered):
        if is_delivered:
            seq: Any = head.c.next_seq - count + literal(number)
            number += 1
        else:
            seq = null()
        columns = [
            bindparam(f"{name}_{index}", type_=messages.c[name].type).label(name)
            for name in _PLACED_COLUMNS
        ]
        selects.append(
            select(*columns, head.c.current_session_id.label("session_id"), seq.label("seq"))
        )
    rows = selects[0] if len(selects) == 1 else union_all(*selects)
    return (
        messages.insert()
        .add_cte(head)
        .from_select([*_PLACED_COLUMNS, "session_id", "seq"], rows)
        .returning(messages.c.pk, messages.c.idempotency_key, messages.c.session_id, messages.c.seq)
    )
