"""Store operations on messages: append, deliver, edit, and loading contexts and histories."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.engine import Connection, RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from abridged.core.model import Message
from abridged.errors import CorruptRowError, NotFoundError, StoreError
from abridged.store import codec, damaged, fast, lineage, queries
from abridged.store.appender import (
    Rows,
    append_in_one_statement,
    append_rows,
    encode,
    reserve,
    stored_row,
)
from abridged.store.base import log
from abridged.store.connect import transaction
from abridged.store.conversations import ConversationOps
from abridged.store.records import (
    STATUSES,
    Context,
    DeliveryStatus,
    NewMessage,
    StoredMessage,
    StoredSummary,
)
from abridged.store.schema import messages, pruned_outputs


def _entry(item: Message | NewMessage) -> NewMessage:
    if isinstance(item, NewMessage):
        entry = item
    elif isinstance(item, Message):
        entry = NewMessage(item)
    else:
        raise StoreError(f"expected a Message or NewMessage, got {type(item).__name__}")
    if entry.status not in STATUSES:
        raise StoreError(f"unknown message status {entry.status!r}", expected=list(STATUSES))
    return entry


class MessageOps(ConversationOps):
    """Messages are immutable once written: appends add rows, edits add versions, and the only
    update is the one-time delivery of a queued message (its ``seq`` and status)."""

    async def append(
        self,
        conversation_id: str,
        message: Message | NewMessage,
        *,
        owner: str | None = None,
        model: str | None = None,
        ttft_ms: float | None = None,
        total_ms: float | None = None,
        status: DeliveryStatus = "delivered",
        holder: str | None = None,
    ) -> StoredMessage:
        """Append one message to the current session, in its own transaction.

        ``status="queued"`` stores a message that arrived while a reply is in progress: it gets
        its sequence number when ``deliver`` is called. ``NotFoundError`` / ``OwnershipError``
        leave everything unchanged. ``holder``: the write of a turn run under the turn lease,
        stored only while that holder still holds it (``LeaseLostError`` otherwise, nothing
        stored): a worker that stalled past its lease cannot write into the turn of the one
        that took it over.
        """
        entry = (
            message
            if isinstance(message, NewMessage)
            else NewMessage(message, model=model, ttft_ms=ttft_ms, total_ms=total_ms, status=status)
        )
        stored = await self.append_many(conversation_id, [entry], owner=owner, holder=holder)
        return stored[0]

    async def append_many(
        self,
        conversation_id: str,
        items: Iterable[Message | NewMessage],
        *,
        owner: str | None = None,
        holder: str | None = None,
    ) -> list[StoredMessage]:
        """Append messages in order, in one transaction (all or none).

        Idempotent: a message whose id was chosen (not ``Message``'s default, derived from the
        content) and is stored in the conversation already is not stored again; its stored
        row is returned in its place, as it is to every caller sending that id at once (a
        client's retry). A repeated id within ``items`` is the first one's row. ``holder`` as
        in ``append``."""
        entries = [_entry(i) for i in items]
        if not entries:
            return []
        stamp = codec.now()
        rows = encode(entries, conversation_id, stamp)  # JSON encoding before any lock
        first: dict[str, int] = {}  # a key's first row in this batch
        same = [
            first.setdefault(r["idempotency_key"], i) if r["idempotency_key"] else i
            for i, r in enumerate(rows)
        ]
        distinct = [row for i, row in enumerate(rows) if same[i] == i]
        pks = await self._append_rows(conversation_id, owner, distinct, holder)
        placed = iter(pks)
        out: list[StoredMessage] = []
        for i, (row, entry) in enumerate(zip(rows, entries, strict=True)):
            if same[i] != i:
                out.append(out[same[i]])
                continue
            pk = next(placed)
            if not isinstance(pk, int):  # stored already: the row as it is
                out.append(codec.stored_message(pk))
                continue
            out.append(stored_row(pk, row, entry.message))
        return out

    async def _append_rows(
        self, conversation_id: str, owner: str | None, rows: Rows, holder: str | None
    ) -> list[int | dict[str, Any]]:
        """``append_rows`` in a write transaction (``_write_keyed``), or in one statement on
        PostgreSQL (``append_in_one_statement``)."""
        return await self._write_keyed(
            lambda look_up: (
                lambda conn: append_rows(
                    conn, conversation_id, owner, rows, holder=holder, look_up=look_up
                )
            ),
            rows,
            operation="append_many",
            alone=lambda conn: append_in_one_statement(
                conn, conversation_id, owner, rows, holder=holder
            ),
        )

    async def deliver(
        self, conversation_id: str, *, owner: str | None = None, holder: str | None = None
    ) -> list[StoredMessage]:
        """Give the queued messages their sequence numbers (in arrival order) in the current
        session: they join the context after everything stored so far (``holder`` as in
        ``append``)."""
        rows = await self._run_sync(
            lambda conn: _deliver(conn, conversation_id, owner, holder),
            mode="write",
            operation="deliver",
        )
        return [codec.stored_message(r) for r in rows]

    async def get_message(
        self,
        conversation_id: str,
        seq: int,
        *,
        version: int | None = None,
        owner: str | None = None,
    ) -> StoredMessage:
        """One stored message (its newest version unless ``version`` is given)."""
        await self.open()
        stmt = (
            select(*codec.columns(messages))
            .where(messages.c.conversation_id == conversation_id, messages.c.seq == seq)
            .order_by(messages.c.version.desc())
            .limit(1)
        )
        if version is not None:
            stmt = stmt.where(messages.c.version == version)
        async with transaction(self._engine, "read", operation="get_message") as conn:
            await queries.read_conversation(conn, conversation_id, owner)
            row = (await conn.execute(stmt)).mappings().first()
        if row is None:
            raise NotFoundError(
                "no such message", conversation_id=conversation_id, seq=seq, version=version
            )
        return codec.stored_message(row)

    async def find_message(
        self, conversation_id: str, message_id: str, *, owner: str | None = None
    ) -> StoredMessage | None:
        """The stored message with this message id (its newest version), queued or delivered;
        ``None`` when the conversation has none (what makes a retried send idempotent)."""

        def find(conn: Connection) -> StoredMessage | None:
            queries.read_conversation_sync(conn, conversation_id, owner)
            return queries.message_by_id(conn, conversation_id, message_id)

        return await self._run_sync(find, mode="read", operation="find_message")

    async def stored_messages(
        self,
        conversation_id: str,
        *,
        owner: str | None = None,
        all_versions: bool = False,
        skip_corrupt: bool = False,
    ) -> list[StoredMessage]:
        """Every stored message of the conversation, in any session: delivered ones by sequence
        number (newest version of each unless ``all_versions``), then queued ones.

        A row that cannot be decoded raises ``CorruptRowError``, or is left out with
        ``skip_corrupt`` so that everything else can still be read.
        """
        await self.open()
        stmt = (
            select(*codec.columns(messages))
            .where(messages.c.conversation_id == conversation_id)
            .order_by(messages.c.seq.is_(None), messages.c.seq, messages.c.version, messages.c.pk)
        )
        async with transaction(self._engine, "read", operation="stored_messages") as conn:
            await queries.read_conversation(conn, conversation_id, owner)
            rows = (await conn.execute(stmt)).mappings().all()
        out: list[StoredMessage] = []
        for row in rows:
            try:
                decoded = codec.stored_message(row)
            except CorruptRowError:
                if skip_corrupt:
                    continue
                raise
            if not all_versions and out and decoded.seq is not None and out[-1].seq == decoded.seq:
                out[-1] = decoded
            else:
                out.append(decoded)
        return out

    async def load_context(self, conversation_id: str, *, owner: str | None = None) -> Context:
        """The current context, read in one snapshot: the summary the current session starts
        from, then the delivered messages of its lineage from its carry-from on, in order.

        Cost grows with the context, not with the stored history.
        """
        await self.open()
        async with transaction(self._engine, "read", operation="load_context") as conn:
            conv = await queries.read_conversation(conn, conversation_id, owner)
            return await context_of(conn, conv, conv["current_session_id"])

    async def history(
        self,
        conversation_id: str,
        *,
        session_id: str | None = None,
        owner: str | None = None,
    ) -> list[StoredMessage]:
        """Every message of a session's lineage (default: the current session), including those
        its summaries cover: what a re-summarisation or an export reads."""
        await self.open()
        async with transaction(self._engine, "read", operation="history") as conn:
            conv = await queries.read_conversation(conn, conversation_id, owner)
            sid = (await current_or_named_session(conn, conv, session_id))["id"]
            nodes = [queries.node(r) for r in await queries.all_sessions(conn, conversation_id)]
            chain = lineage.chain_from(nodes, sid)
            segments: list[lineage.Segment] = []
            if chain[0].reason == "compaction" and len(chain) > 1:
                segments = lineage.walk(chain[1:], lineage.floor(chain), chain[0].start_seq)
            rows = await queries.segment_messages(conn, conversation_id, sid, segments)
        return queries.latest_versions(rows)

    async def edit_message(
        self,
        conversation_id: str,
        seq: int,
        message: Message,
        *,
        owner: str | None = None,
        model: str | None = None,
    ) -> StoredMessage:
        """Store a new version of the message at ``seq`` (the old one is kept). If a summary of
        the current session covers it, mark the conversation for re-summarisation from ``seq``;
        both through the single writer."""

        async def body(conn: AsyncConnection, conv: RowMapping) -> StoredMessage:
            old = (
                (
                    await conn.execute(
                        select(*codec.columns(messages))
                        .where(messages.c.conversation_id == conversation_id)
                        .where(messages.c.seq == seq)
                        .order_by(messages.c.version.desc())
                        .limit(1)
                    )
                )
                .mappings()
                .first()
            )
            if old is None:
                raise NotFoundError("no such message", conversation_id=conversation_id, seq=seq)
            previous = codec.stored_message(old)
            codec.check_id(message.id, "message_id", conversation_id=conversation_id, seq=seq)
            current = await queries.session_row(conn, conversation_id, conv["current_session_id"])
            values: dict[str, Any] = {}
            if seq < queries.node(current).carry_from and current["reason"] != "clear":
                mark = conv["resummarize_from"]
                values["resummarize_from"] = seq if mark is None else min(int(mark), seq)
            await queries.cas(conn, conversation_id, int(conv["version"]), **values)
            row = codec.message_columns(message)
            row.update(
                conversation_id=conversation_id,
                session_id=previous.session_id,
                seq=seq,
                version=previous.version + 1,
                model=model,
                status="delivered",
                created_at=codec.now(),
            )
            await conn.execute(messages.insert().values(**row))
            new = (
                (
                    await conn.execute(
                        select(*codec.columns(messages)).where(
                            messages.c.conversation_id == conversation_id,
                            messages.c.seq == seq,
                            messages.c.version == row["version"],
                        )
                    )
                )
                .mappings()
                .one()
            )
            return codec.stored_message(new)

        return await self._write(conversation_id, owner, body, operation="edit_message")


_QUEUED = (
    select(messages.c.pk)
    .where(messages.c.conversation_id == bindparam("conversation_id"))
    .where(messages.c.seq.is_(None))
    .order_by(messages.c.pk)
)
_PLACE = (
    update(messages)
    .where(messages.c.pk == bindparam("message_pk"), messages.c.seq.is_(None))
    .values(seq=bindparam("seq"), status="delivered", session_id=bindparam("session_id"))
    .returning(*codec.columns(messages))
)


def _deliver(
    conn: Connection, conversation_id: str, owner: str | None, holder: str | None
) -> list[Any]:
    """``deliver``'s transaction: the rows of the messages it delivered, in order."""
    reserve(conn, conversation_id, owner, 0, holder=holder)  # lock first: one at a time
    key = {"conversation_id": conversation_id}
    pks = [int(row["pk"]) for row in fast.execute(conn, _QUEUED, key).rows]
    if not pks:
        return []
    head = reserve(conn, conversation_id, owner, len(pks))
    first = int(head["next_seq"]) - len(pks)
    placed = []
    for offset, pk in enumerate(pks):
        values = {"message_pk": pk, "seq": first + offset, "session_id": head["current_session_id"]}
        placed.extend(fast.execute(conn, _PLACE, values).rows)  # the row as it now is
    return placed


async def context_of(conn: AsyncConnection, conv: RowMapping, session_id: str) -> Context:
    """Build the context of a session of a conversation whose row was just read."""
    cid = conv["id"]
    row = await current_or_named_session(conn, conv, session_id)
    summary = await queries.start_summary(conn, row)
    final = await queries.summary_by_id(conn, row["final_summary_id"])
    rows = await queries.segment_messages(
        conn, cid, session_id, queries.segments_of(row), with_queued=True
    )
    delivered = [r for r in rows if r["seq"] is not None]
    queued = sorted((r for r in rows if r["seq"] is None), key=lambda r: int(r["pk"]))
    session = codec.session_info(
        row, start=summary, final=final, current_id=conv["current_session_id"]
    )
    # a damaged row is a placeholder plus its error, never a conversation that cannot be read
    decoded, errors = damaged.newest_versions(delivered)
    tail = tuple(decoded)
    waiting = []
    for r in queued:
        try:
            waiting.append(codec.stored_message(r))
        except CorruptRowError as exc:  # it has no place yet: reported, not sent
            errors.append(exc)
    carried, carried_errors = await _carried(conn, cid, summary)
    errors += carried_errors
    for error in errors:
        log.warning("a damaged message row is sent as a placeholder: %s", error)
    return Context(
        conversation=codec.conversation_info(conv),
        session=session,
        summary=summary,
        messages=tail,
        queued=tuple(waiting),
        pruned=await _pruned_forms(conn, cid, tail),
        carried=carried,
        damaged=tuple(errors),
    )


async def current_or_named_session(
    conn: AsyncConnection, conv: RowMapping, session_id: str | None
) -> RowMapping:
    """The session row ``session_id`` of the conversation just read. The conversation's own
    current session missing is damage (``CorruptRowError``), not a conversation that does not
    exist: a damaged conversation must not look deleted."""
    current = conv["current_session_id"]
    if session_id is None or session_id == current:
        if current is None:
            raise CorruptRowError(
                "the conversation has no current session", conversation_id=conv["id"]
            )
        try:
            return await queries.session_row(conn, conv["id"], current)
        except NotFoundError as exc:
            raise CorruptRowError(
                "the conversation's current session is missing",
                conversation_id=conv["id"],
                session_id=current,
            ) from exc
    return await queries.session_row(conn, conv["id"], session_id)


async def _carried(
    conn: AsyncConnection, conversation_id: str, summary: StoredSummary | None
) -> tuple[tuple[StoredMessage, ...], list[CorruptRowError]]:
    """The messages before the cut the summary's compaction carried (``carried_seqs``: pinned
    steps, the latest user message after the emergency path), newest versions, in one query;
    a carried message that is gone is left out."""
    wanted = sorted(set(summary.carried_seqs)) if summary is not None else []
    if not wanted:
        return (), []
    rows = (
        (
            await conn.execute(
                select(*codec.columns(messages))
                .where(messages.c.conversation_id == conversation_id, messages.c.seq.in_(wanted))
                .order_by(messages.c.seq, messages.c.version)
            )
        )
        .mappings()
        .all()
    )
    decoded, errors = damaged.newest_versions(rows)
    return tuple(decoded), errors


async def _pruned_forms(
    conn: AsyncConnection, conversation_id: str, tail: Sequence[StoredMessage]
) -> Mapping[int, Message]:
    """The stored pruned form of each tail message that has one (sequence number -> message
    as sent); forms that no longer fit their message are left out."""
    by_seq = {m.seq: m.message for m in tail if m.seq is not None}
    if not by_seq:
        return {}
    rows = (
        (
            await conn.execute(
                select(pruned_outputs.c.seq, pruned_outputs.c.parts, pruned_outputs.c.meta).where(
                    pruned_outputs.c.conversation_id == conversation_id,
                    pruned_outputs.c.seq >= min(by_seq),
                )
            )
        )
        .mappings()
        .all()
    )
    out: dict[int, Message] = {}
    for r in rows:
        original = by_seq.get(r["seq"])
        if original is not None and (form := codec.pruned_message(r, original)) is not None:
            out[r["seq"]] = form
    return out
