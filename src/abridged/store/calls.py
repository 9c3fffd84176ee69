"""The model calls of a conversation, kept for the call inspector (every worker reads them, and
a restart keeps them): what each call sent, as references to rows the store holds already.

A message sent is kept as one of (``SentRef``):

- a stored message, by its message id (the version stored at the time of the call);
- a stored message's pruned form (``pruned_outputs``), by its message id;
- a summary of the conversation, by the digest of the message that carried it (summaries are
  few, and the same summary opens every call of its session);
- a copy, only for what no other row holds as it was sent: the system prompt (a setting that
  may change later), a tool result clipped to fit, a damaged row's placeholder.

So a call costs a few dozen bytes a message instead of a copy of its context. What a reference
no longer finds (its conversation's session or message deleted on purpose) reads back as a
placeholder saying so.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import CTE, RowMapping, Select, bindparam, func, select, true, union_all
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from abridged.core.model import Message, Usage, message_from_dict, message_to_dict, usage_to_dict
from abridged.core.summary import summary_message
from abridged.errors import CorruptRowError, NotFoundError, StoreError
from abridged.store import codec, fast, queries
from abridged.store.base import StoreBase
from abridged.store.connect import transaction
from abridged.store.schema import calls, messages, pruned_outputs, summaries

__all__ = [
    "CallEntry",
    "CallOps",
    "SentRef",
    "StoredCall",
    "encode_sent",
    "reference",
    "summary_digest",
]


@dataclass(frozen=True, slots=True)
class SentRef:
    """One message a call sent: its part of the layout (``section``), tokens, whether it lay in
    the cached prefix, and where the store finds it: ``message_id`` (with ``pruned``: its
    pruned form), ``summary`` (the digest of the summary message), or ``copy``."""

    section: str
    tokens: int
    cached: bool
    message_id: str | None = None
    pruned: bool = False
    summary: str | None = None
    copy: Message | None = None


@dataclass(frozen=True, slots=True)
class CallEntry:
    """One model call to keep: its compaction epoch, abridged's estimate, the tool definitions'
    tokens, what the provider reported (``None``: nothing), whether it was the retry after an
    overflow, whether it succeeded, and what it sent."""

    epoch: int
    estimate: int
    tools: int
    usage: Usage | None
    retry: bool
    ok: bool
    sent: tuple[SentRef, ...]


@dataclass(frozen=True, slots=True)
class StoredCall(CallEntry):
    """A kept call: its number in the conversation (0 the first) and when it was stored (at the
    end of its turn)."""

    number: int = 0
    created_at: datetime | None = None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def summary_digest(message: Message) -> str:
    """The digest a summary message is kept by (``SentRef.summary``)."""
    return _digest(message.text)


def reference(message: Message, *, section: str, tokens: int, cached: bool) -> SentRef:
    """How the store keeps ``message`` as a call sent it (see the module docstring)."""
    meta = message.meta
    if message.is_summary:
        return SentRef(section, tokens, cached, summary=summary_digest(message))
    if (
        message.role == "system"
        or not message.id
        or "clipped" in meta
        or meta.get("kind") == "damaged"
    ):
        return SentRef(section, tokens, cached, copy=message)
    return SentRef(section, tokens, cached, message_id=message.id, pruned=bool(meta.get("pruned")))


def _encode(ref: SentRef) -> dict[str, Any]:
    out: dict[str, Any] = {"k": ref.section, "t": ref.tokens}
    if ref.cached:
        out["c"] = 1
    if ref.summary is not None:
        out["s"] = ref.summary
    elif ref.copy is not None:
        out["x"] = message_to_dict(ref.copy)
    else:
        out["m"] = ref.message_id
        if ref.pruned:
            out["p"] = 1
    return out


def _decode(data: Mapping[str, Any]) -> SentRef:
    copy = data.get("x")
    return SentRef(
        section=str(data["k"]),
        tokens=int(data["t"]),
        cached=bool(data.get("c")),
        message_id=data.get("m"),
        pruned=bool(data.get("p")),
        summary=data.get("s"),
        copy=message_from_dict(copy) if isinstance(copy, dict) else None,
    )


def _stored_call(row: RowMapping) -> StoredCall:
    usage = json.loads(row["usage"]) if row["usage"] is not None else None
    return StoredCall(
        epoch=int(row["epoch"]),
        estimate=int(row["estimate"]),
        tools=int(row["tools"]),
        usage=Usage(**usage) if isinstance(usage, dict) else None,
        retry=bool(row["retry"]),
        ok=bool(row["ok"]),
        sent=tuple(_decode(d) for d in json.loads(row["sent"])),
        number=int(row["number"]),
        created_at=codec.stamp(row["created_at"]),
    )


def _missing(what: str) -> Message:
    return Message.user(f"[{what} is no longer stored: deleted since this call]")


_string = json.encoder.encode_basestring


def _encode_text(ref: SentRef) -> str:
    """``codec.dumps(_encode(ref))`` before its surrogates are escaped, written directly
    (keys sorted: c, k, m, p, s, t, x) where it holds no copy."""
    if ref.copy is not None:
        return json.dumps(_encode(ref), ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    text = '{"c":1,"k":' if ref.cached else '{"k":'
    text += _string(ref.section)
    if ref.summary is not None:
        return f'{text},"s":{_string(ref.summary)},"t":{int(ref.tokens)}}}'
    where = "null" if ref.message_id is None else _string(ref.message_id)
    pruned = ',"p":1' if ref.pruned else ""
    return f'{text},"m":{where}{pruned},"t":{int(ref.tokens)}}}'


def encode_sent(sent: Sequence[SentRef], texts: dict[int, str] | None = None) -> str:
    """The ``sent`` column of a call: ``codec.dumps`` of its references' JSON objects, joined
    from each one's text (a call sends the whole context: the generic encoder of a list of
    dicts cost more than the turn's other steps). ``texts`` keeps each reference's text by
    identity (only while the references live), for the next call of a turn that shares them."""
    if texts is None:
        texts = {}
    parts = []
    for ref in sent:
        text = texts.get(id(ref))
        if text is None:
            text = texts[id(ref)] = _encode_text(ref)
        parts.append(text)
    return codec.escape_surrogates("[" + ",".join(parts) + "]")


_LAST_NUMBER = select(func.max(calls.c.number)).where(
    calls.c.conversation_id == bindparam("conversation_id")
)
#: The columns a call's row brings (``call_rows``); its number is given apart (``insert_calls``,
#: ``numbered_after``).
_CALL_COLUMNS = (
    "conversation_id",
    "epoch",
    "estimate",
    "tools",
    "usage",
    "retry",
    "ok",
    "sent",
    "created_at",
)
_INSERT_CALL = calls.insert().values({name: bindparam(name) for name in ("number", *_CALL_COLUMNS)})


def call_rows(conversation_id: str, entries: Sequence[CallEntry]) -> list[dict[str, Any]]:
    """The rows of ``entries`` (encoded before any transaction), numbered by ``insert_calls``."""
    stamp = codec.now()
    texts: dict[int, str] = {}  # the calls of a turn share most of their references
    return [
        {
            "conversation_id": conversation_id,
            "epoch": e.epoch,
            "estimate": e.estimate,
            "tools": e.tools,
            "usage": codec.dumps(usage_to_dict(e.usage)) if e.usage is not None else None,
            "retry": e.retry,
            "ok": e.ok,
            "sent": encode_sent(e.sent, texts),
            "created_at": stamp,
        }
        for e in entries
    ]


def insert_calls(
    conn: Connection,
    conversation_id: str,
    owner: str | None,
    rows: list[dict[str, Any]],
    *,
    checked: bool = False,
) -> list[int]:
    """Number ``rows`` after the conversation's last call and insert them; their numbers.
    ``checked``: the caller's transaction read the conversation's row and its owner already."""
    if not checked:
        queries.read_conversation_sync(conn, conversation_id, owner)
    last = fast.execute(conn, _LAST_NUMBER, {"conversation_id": conversation_id}).first()
    value = next(iter(last.values())) if last else None
    first = 0 if value is None else int(value) + 1
    for i, row in enumerate(rows):
        row["number"] = first + i
    if conn.dialect.name == "sqlite":  # a row at a time on SQLite's own cursor (``fast``)
        for row in rows:
            fast.execute(conn, _INSERT_CALL, row)
    else:
        conn.execute(calls.insert(), rows)
    return [first + i for i in range(len(rows))]


class NotFinishedAloneError(StoreError):
    """A single statement that numbers calls wrote nothing (``run_numbered``): the caller
    runs its transaction instead. Never leaves the store."""


#: The unique index that says a call's number is taken (``run_numbered``).
NUMBER_INDEX = "uq_calls_conversation_id"


def numbered_after(head: CTE, count: int) -> Select[Any]:
    """One statement (PostgreSQL): ``head``, a data-modifying ``WITH`` returning the
    conversation's row, then ``count`` calls inserted numbered after the conversation's last
    one (parameters ``{column}_{index}``, ``run_numbered``), only when ``head`` matched; it
    returns ``head``'s row."""
    last = (
        select(func.coalesce(func.max(calls.c.number), -1).label("n"))
        .where(calls.c.conversation_id == bindparam("conversation_id"))
        .cte("last_call")
    )
    selects = [
        select(
            *(
                bindparam(f"{name}_{index}", type_=calls.c[name].type).label(name)
                for name in _CALL_COLUMNS
            ),
            (last.c.n + 1 + index).label("number"),
        ).select_from(head.join(last, true()))
        for index in range(count)
    ]
    rows = selects[0] if count == 1 else union_all(*selects)
    kept = calls.insert().from_select([*_CALL_COLUMNS, "number"], rows).returning(calls.c.pk)
    return select(*head.c).add_cte(kept.cte("kept"))


def run_numbered(
    conn: Connection,
    statement: Select[Any],
    rows: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
) -> Mapping[Any, Any]:
    """Run a ``numbered_after`` statement for ``rows`` (``call_rows``); the row its head
    returned. ``NotFinishedAloneError`` when nothing was written: the head matched nothing,
    or a number was taken meanwhile (a call kept by a write committed after the statement
    began, which its snapshot does not see: the unique index fails the whole statement)."""
    values = dict(params)
    for index, row in enumerate(rows):
        values.update({f"{name}_{index}": row[name] for name in _CALL_COLUMNS})
    try:
        found = conn.execute(statement, values).mappings().first()
    except IntegrityError as exc:
        if NUMBER_INDEX in str(exc.orig):
            raise NotFinishedAloneError("a call number was taken") from None
        raise
    if found is None:
        raise NotFinishedAloneError("nothing matched")
    return found


class CallOps(StoreBase):
    """Model calls: ``record_calls``, ``list_calls``, ``get_call``, ``sent_messages``."""

    async def record_calls(
        self, conversation_id: str, entries: Sequence[CallEntry], *, owner: str | None = None
    ) -> list[int]:
        """Keep ``entries``, numbered after the conversation's last call; their numbers. One
        short transaction run whole (``StoreBase._run_sync``): it ends every turn of the
        service, its rows encoded before it begins."""
        if not entries:
            return []
        rows = call_rows(conversation_id, entries)
        return await self._run_sync(
            lambda conn: insert_calls(conn, conversation_id, owner, rows),
            mode="write",
            operation="record_calls",
        )

    async def list_calls(
        self, conversation_id: str, *, owner: str | None = None, limit: int = 50
    ) -> list[StoredCall]:
        """The conversation's newest ``limit`` calls, oldest first."""
        await self.open()
        stmt = (
            select(*codec.columns(calls))
            .where(calls.c.conversation_id == conversation_id)
            .order_by(calls.c.number.desc())
            .limit(limit)
        )
        async with transaction(self._engine, "read", operation="list_calls") as conn:
            await queries.read_conversation(conn, conversation_id, owner)
            rows = (await conn.execute(stmt)).mappings().all()
        return [_stored_call(r) for r in reversed(rows)]

    async def call_count(self, conversation_id: str, *, owner: str | None = None) -> int:
        """How many calls of the conversation are kept."""
        await self.open()
        stmt = select(func.count()).where(calls.c.conversation_id == conversation_id)
        async with transaction(self._engine, "read", operation="call_count") as conn:
            await queries.read_conversation(conn, conversation_id, owner)
            return int((await conn.execute(stmt)).scalar() or 0)

    async def get_call(
        self, conversation_id: str, number: int, *, owner: str | None = None
    ) -> StoredCall:
        """Call ``number`` of the conversation; ``NotFoundError`` when there is none."""
        await self.open()
        stmt = select(*codec.columns(calls)).where(
            calls.c.conversation_id == conversation_id, calls.c.number == number
        )
        async with transaction(self._engine, "read", operation="get_call") as conn:
            await queries.read_conversation(conn, conversation_id, owner)
            row = (await conn.execute(stmt)).mappings().first()
        if row is None:
            raise NotFoundError("no such call", conversation_id=conversation_id, call=number)
        return _stored_call(row)

    async def sent_messages(
        self, conversation_id: str, call: StoredCall, *, owner: str | None = None
    ) -> list[Message]:
        """The messages ``call`` sent, in order, read back from what its references name."""
        await self.open()
        async with transaction(self._engine, "read", operation="sent_messages") as conn:
            await queries.read_conversation(conn, conversation_id, owner)
            return await _resolve(conn, conversation_id, call)


async def _resolve(conn: AsyncConnection, conversation_id: str, call: StoredCall) -> list[Message]:
    ids = sorted({r.message_id for r in call.sent if r.message_id is not None})
    stored: dict[str, tuple[int | None, Message]] = {}
    if ids:
        stmt = (
            select(*codec.columns(messages))
            .where(messages.c.conversation_id == conversation_id, messages.c.message_id.in_(ids))
            .order_by(messages.c.version, messages.c.pk)
        )
        for row in (await conn.execute(stmt)).mappings().all():
            try:
                decoded = codec.stored_message(row)
            except CorruptRowError:  # damaged since the call: read as not stored
                continue
            if call.created_at is not None and decoded.created_at > call.created_at:
                continue  # an edit made after the call: the call sent the version before
            stored[decoded.message.id] = (decoded.seq, decoded.message)
    pruned: dict[int, RowMapping] = {}
    seqs = sorted(
        seq
        for r in call.sent
        if r.pruned and r.message_id in stored and (seq := stored[r.message_id][0]) is not None
    )
    if seqs:
        stmt = select(pruned_outputs.c.seq, pruned_outputs.c.parts, pruned_outputs.c.meta).where(
            pruned_outputs.c.conversation_id == conversation_id, pruned_outputs.c.seq.in_(seqs)
        )
        pruned = {int(r["seq"]): r for r in (await conn.execute(stmt)).mappings().all()}
    by_digest: dict[str, Message] = {}
    if any(r.summary is not None for r in call.sent):
        stmt = select(summaries.c.text, summaries.c.meta).where(
            summaries.c.conversation_id == conversation_id
        )
        for row in (await conn.execute(stmt)).mappings().all():
            text, _ = codec.text_from_storage(row["text"], json.loads(row["meta"] or "{}"))
            message = summary_message(text)
            by_digest[_digest(message.text)] = message
    out: list[Message] = []
    for ref in call.sent:
        if ref.copy is not None:
            out.append(ref.copy)
        elif ref.summary is not None:
            out.append(by_digest.get(ref.summary) or _missing("this summary"))
        elif ref.message_id in stored:
            seq, message = stored[ref.message_id]
            form = pruned.get(seq) if ref.pruned and seq is not None else None
            shown = codec.pruned_message(form, message) if form is not None else None
            out.append(shown if shown is not None else message)
        else:
            out.append(_missing(f"message {ref.message_id}"))
    return out
