"""Statements on one connection: the compare-and-swap, lookups, message and session inserts."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import and_, bindparam, func, or_, select, update
from sqlalchemy.engine import Connection, RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from abridged.errors import ConflictError, CorruptRowError, NotFoundError, OwnershipError
from abridged.store import codec, fast, lineage
from abridged.store.records import SessionTotals, StoredMessage, StoredSummary
from abridged.store.schema import conversations, messages, sessions, summaries

R = TypeVar("R", bound=Mapping[Any, Any])


def new_id() -> str:
    """A fresh random id (32 hex digits)."""
    return uuid.uuid4().hex


def check_owner(row: Mapping[Any, Any], owner: str | None) -> None:
    """Raise ``OwnershipError`` when ``owner`` is given and is not the conversation's owner."""
    if owner is not None and row["owner"] != owner:
        raise OwnershipError("the conversation belongs to another owner", conversation_id=row["id"])


# Built once: the hot operations (a turn's lease, the append path) run them at every model
# call, and building and hashing a statement costs more than SQLite takes to run it.
CONVERSATION_ROW = select(*codec.columns(conversations)).where(
    conversations.c.id == bindparam("conversation_id")
)
CONVERSATION_ROW_LOCKED = CONVERSATION_ROW.with_for_update()


def checked_conversation(row: R | None, conversation_id: str, owner: str | None) -> R:
    """``row`` when it exists and belongs to ``owner``; ``NotFoundError`` or ``OwnershipError``
    otherwise."""
    if row is None:
        raise NotFoundError("no such conversation", conversation_id=conversation_id)
    check_owner(row, owner)
    return row


async def read_conversation(
    conn: AsyncConnection, conversation_id: str, owner: str | None
) -> RowMapping:
    """The conversation's row; ``NotFoundError`` or ``OwnershipError`` otherwise (an id no
    database can hold: ``FormatError``, before the statement)."""
    key = {"conversation_id": codec.check_id(conversation_id, "conversation_id")}
    row = (await conn.execute(CONVERSATION_ROW, key)).mappings().first()
    return checked_conversation(row, conversation_id, owner)


def read_conversation_sync(
    conn: Connection, conversation_id: str, owner: str | None, *, for_update: bool = False
) -> Mapping[Any, Any]:
    """The same on a synchronous connection; ``for_update`` locks the row (PostgreSQL)."""
    query = CONVERSATION_ROW_LOCKED if for_update else CONVERSATION_ROW
    key = {"conversation_id": codec.check_id(conversation_id, "conversation_id")}
    row = fast.execute(conn, query, key).first()
    return checked_conversation(row, conversation_id, owner)


async def cas(
    conn: AsyncConnection, conversation_id: str, expected_version: int, **values: Any
) -> RowMapping:
    """The single writer: bump ``conversations.version`` from ``expected_version`` (and set
    ``values``) or raise ``ConflictError`` naming the version found. On PostgreSQL the updated row
    stays locked until the transaction ends, so what follows in it sees no concurrent append."""
    stmt = (
        update(conversations)
        .where(conversations.c.id == conversation_id)
        .where(conversations.c.version == expected_version)
        .values(version=expected_version + 1, updated_at=codec.now(), **values)
        .returning(*codec.columns(conversations))
    )
    row = (await conn.execute(stmt)).mappings().first()
    if row is not None:
        return row
    found = (
        await conn.execute(
            select(conversations.c.version).where(conversations.c.id == conversation_id)
        )
    ).scalar()
    if found is None:
        raise NotFoundError("no such conversation", conversation_id=conversation_id)
    raise ConflictError(
        "another writer changed the conversation first",
        conversation_id=conversation_id,
        expected_version=expected_version,
        found_version=found,
    )


async def set_conversation(conn: AsyncConnection, conversation_id: str, **values: Any) -> None:
    """Set columns of a conversation already locked by ``cas`` in this transaction."""
    await conn.execute(
        update(conversations).where(conversations.c.id == conversation_id).values(**values)
    )


async def session_row(conn: AsyncConnection, conversation_id: str, session_id: str) -> RowMapping:
    """A session of the conversation; ``NotFoundError`` when it is not one of its sessions."""
    codec.check_id(session_id, "session_id", conversation_id=conversation_id)
    row = (
        (await conn.execute(select(*codec.columns(sessions)).where(sessions.c.id == session_id)))
        .mappings()
        .first()
    )
    if row is None or row["conversation_id"] != conversation_id:
        raise NotFoundError(
            "no such session in this conversation",
            conversation_id=conversation_id,
            session_id=session_id,
        )
    return row


async def all_sessions(conn: AsyncConnection, conversation_id: str) -> list[RowMapping]:
    """Every session of a conversation, by number."""
    result = await conn.execute(
        select(*codec.columns(sessions))
        .where(sessions.c.conversation_id == conversation_id)
        .order_by(sessions.c.number)
    )
    return list(result.mappings().all())


def node(row: RowMapping) -> lineage.Node:
    """The lineage view of a session row; ``CorruptRowError`` names a damaged one."""
    try:
        return lineage.Node(
            id=row["id"],
            parent_id=row["parent_id"],
            reason=row["reason"],
            start_seq=int(row["start_seq"]),
            carry_from=int(row["carry_from"]),
        )
    except codec.DECODE_ERRORS as exc:
        raise CorruptRowError(
            f"stored session cannot be decoded: {exc}",
            conversation_id=row["conversation_id"],
            session_id=row["id"],
        ) from exc


def segments_of(row: RowMapping) -> list[lineage.Segment]:
    """A session's stored segments."""
    raw = codec.loads_list(
        row["segments"],
        what="session segments",
        conversation_id=row["conversation_id"],
        session_id=row["id"],
    )
    try:
        return [(str(s), int(lo), int(hi)) for s, lo, hi in raw]
    except codec.DECODE_ERRORS as exc:
        raise CorruptRowError(
            "stored session segments are malformed",
            conversation_id=row["conversation_id"],
            session_id=row["id"],
        ) from exc


async def summary_by_id(conn: AsyncConnection, summary_id: str | None) -> StoredSummary | None:
    """A stored summary, or ``None``."""
    if summary_id is None:
        return None
    row = (
        (await conn.execute(select(*codec.columns(summaries)).where(summaries.c.id == summary_id)))
        .mappings()
        .first()
    )
    return codec.summary(row)


async def start_summary(conn: AsyncConnection, row: RowMapping) -> StoredSummary | None:
    """The summary a session's context starts from: its own start summary; for a session
    started by ``new`` or ``resume``, its parent's final summary once that is ready; none
    after ``clear``."""
    if row["start_summary_id"] is not None:
        return await summary_by_id(conn, row["start_summary_id"])
    if row["reason"] in ("new", "resume") and row["parent_id"] is not None:
        final_id = (
            await conn.execute(
                select(sessions.c.final_summary_id).where(sessions.c.id == row["parent_id"])
            )
        ).scalar()
        return await summary_by_id(conn, final_id)
    return None


def latest_versions(rows: Iterable[RowMapping]) -> list[StoredMessage]:
    """Decode rows ordered by (seq, version), keeping the newest version of each message."""
    out: list[StoredMessage] = []
    for row in rows:
        decoded = codec.stored_message(row)
        if out and out[-1].seq == decoded.seq and decoded.seq is not None:
            out[-1] = decoded
        else:
            out.append(decoded)
    return out


async def segment_messages(
    conn: AsyncConnection,
    conversation_id: str,
    own_session_id: str,
    segments: Sequence[lineage.Segment],
    *,
    with_queued: bool = False,
) -> list[RowMapping]:
    """Rows of a session's own messages and of its segments (and the queued ones), by seq."""
    m = messages.c
    terms = [and_(m.session_id == own_session_id, m.seq.is_not(None))]
    terms += [and_(m.session_id == s, m.seq >= lo, m.seq < hi) for s, lo, hi in segments]
    if with_queued:
        terms.append(and_(m.conversation_id == conversation_id, m.seq.is_(None)))
    stmt = select(*codec.columns(messages)).where(or_(*terms)).order_by(m.seq, m.version, m.pk)
    return list((await conn.execute(stmt)).mappings().all())


async def next_number(conn: AsyncConnection, conversation_id: str) -> int:
    """The next session number in a conversation."""
    top = (
        await conn.execute(
            select(func.max(sessions.c.number)).where(sessions.c.conversation_id == conversation_id)
        )
    ).scalar()
    try:
        return int(top or 0) + 1
    except codec.DECODE_ERRORS as exc:
        raise CorruptRowError(
            f"stored session numbers are damaged: {exc}", conversation_id=conversation_id
        ) from exc


async def insert_session(
    conn: AsyncConnection,
    conversation_id: str,
    *,
    reason: str,
    parent_id: str | None,
    carry_from: int,
    start_seq: int,
    segments: Sequence[lineage.Segment] = (),
    start_summary_id: str | None = None,
) -> str:
    """Insert a session and return its id."""
    session_id = new_id()
    await conn.execute(
        sessions.insert().values(
            id=session_id,
            conversation_id=conversation_id,
            number=await next_number(conn, conversation_id),
            parent_id=parent_id,
            reason=reason,
            start_summary_id=start_summary_id,
            carry_from=carry_from,
            start_seq=start_seq,
            segments=codec.dumps([list(s) for s in segments]),
            created_at=codec.now(),
        )
    )
    return session_id


async def insert_summary(
    conn: AsyncConnection,
    conversation_id: str,
    summary: StoredSummary,
    *,
    covers_to_seq: int,
    vector: Sequence[float] | None,
    embedder: str | None,
) -> str:
    """Store a summary once and return its id."""
    summary_id = new_id()
    text, meta = codec.text_for_storage(summary.text, dict(summary.meta))
    await conn.execute(
        summaries.insert().values(
            id=summary_id,
            conversation_id=conversation_id,
            text=text,
            meta=codec.dumps(meta),
            carried_seqs=codec.dumps([int(s) for s in summary.carried_seqs]),
            file_ops=codec.dumps({k: [str(p) for p in v] for k, v in summary.file_ops.items()}),
            covers_to_seq=covers_to_seq,
            embedding=codec.dumps(list(vector)) if vector is not None else None,
            embedder=embedder if vector is not None else None,
            created_at=codec.now(),
        )
    )
    return summary_id


async def live_totals(
    conn: AsyncConnection, conversation_id: str, session_id: str | None = None
) -> dict[str, SessionTotals]:
    """Message count (latest versions) and usage sums (every stored call) per session."""
    m = messages.c
    stmt = (
        select(
            m.session_id,
            func.count(func.distinct(m.seq)),
            func.sum(m.input_tokens),
            func.sum(m.output_tokens),
            func.sum(m.cache_read_tokens),
            func.sum(m.cache_write_tokens),
            func.sum(m.reasoning_tokens),
        )
        .where(m.seq.is_not(None))
        .group_by(m.session_id)
    )
    # One session: through its own index, never a scan of the whole conversation.
    if session_id is not None:
        stmt = stmt.where(m.session_id == session_id)
    else:
        stmt = stmt.where(m.conversation_id == conversation_id)
    out: dict[str, SessionTotals] = {}
    for sid, count, i, o, cr, cw, r in (await conn.execute(stmt)).all():
        out[sid] = SessionTotals(
            messages=int(count or 0),
            input=int(i or 0),
            output=int(o or 0),
            cache_read=int(cr or 0),
            cache_write=int(cw or 0),
            reasoning=int(r or 0),
        )
    return out


def totals_columns(t: SessionTotals) -> dict[str, int]:
    """Session columns holding finalised totals."""
    return {
        "message_count": t.messages,
        "input_tokens": t.input,
        "output_tokens": t.output,
        "cache_read_tokens": t.cache_read,
        "cache_write_tokens": t.cache_write,
        "reasoning_tokens": t.reasoning,
    }


_MESSAGE_BY_ID = (
    select(*codec.columns(messages))
    .where(messages.c.conversation_id == bindparam("conversation_id"))
    .where(messages.c.message_id == bindparam("message_id"))
    .order_by(messages.c.version.desc())
    .limit(1)
)


def message_by_id(conn: Connection, conversation_id: str, message_id: str) -> StoredMessage | None:
    """The newest version of the message with this message id, queued or delivered."""
    codec.check_id(message_id, "message_id", conversation_id=conversation_id)
    key = {"conversation_id": conversation_id, "message_id": message_id}
    row = fast.execute(conn, _MESSAGE_BY_ID, key).first()
    return None if row is None else codec.stored_message(row)
