"""Pages of conversations with their compactions and their last request, in a fixed number of
queries whatever the page holds; and each conversation's last request, kept as its surface saw
it (the proxy's request line, ``last_requests``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, String, bindparam, func, select, type_coerce
from sqlalchemy.engine import Connection
from sqlalchemy.sql.dml import Insert

from abridged.errors import CorruptRowError, SettingError
from abridged.store import codec
from abridged.store.base import StoreBase, log
from abridged.store.records import ConversationInfo
from abridged.store.schema import compactions, conversations, last_requests

__all__ = ["CompactionBrief", "ConversationPage", "ListedConversation", "ListingOps"]

#: The most conversations one page may hold.
MAX_PAGE = 1_000


@dataclass(frozen=True, slots=True)
class CompactionBrief:
    """A conversation's newest compaction, as a listing shows it."""

    trigger: str
    tokens_before: int
    tokens_after: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ListedConversation:
    """One conversation of a page: how many compactions it had and its newest, and its last
    request (the JSON object its surface stored, and when that request ended)."""

    info: ConversationInfo
    compactions: int
    last_compaction: CompactionBrief | None
    last_request: Mapping[str, Any] | None
    last_request_at: datetime | None


@dataclass(frozen=True, slots=True)
class ConversationPage:
    """A page of conversations, the most recently updated first; ``total``: how many match."""

    conversations: tuple[ListedConversation, ...]
    total: int
    offset: int
    limit: int


def _stamp(column: ColumnElement[Any], name: str) -> ColumnElement[Any]:
    # read as stored (text on SQLite) and decoded row by row, as ``codec.columns`` does
    return type_coerce(column, String()).label(name)


def _holding(setting: str) -> ColumnElement[bool]:
    """Rows whose settings (``codec.dumps``: compact, keys sorted) hold ``setting`` with an
    object value. A string value cannot forge it: its quotes are escaped in the JSON text."""
    token = json.dumps(setting, ensure_ascii=False) + ":{"
    escaped = token.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return conversations.c.settings.like(f"%{escaped}%", escape="\\")


def _upsert(dialect: str) -> Insert:
    """Insert or replace a conversation's last request, unless the stored one ended later
    (two lines written out of order keep the newer)."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert  # noqa: PLC0415
    else:
        from sqlalchemy.dialects.sqlite import insert  # type: ignore[assignment]  # noqa: PLC0415
    stmt = insert(last_requests).values(
        conversation_id=bindparam("cid"), line=bindparam("line"), at=bindparam("at")
    )
    return stmt.on_conflict_do_update(
        index_elements=[last_requests.c.conversation_id],
        set_={"line": stmt.excluded.line, "at": stmt.excluded.at},
        where=last_requests.c.at <= stmt.excluded.at,
    )


def _brief(row: Mapping[str, Any]) -> CompactionBrief:
    return CompactionBrief(
        trigger=str(row["trigger"]),
        tokens_before=int(row["tokens_before"]),
        tokens_after=int(row["tokens_after"]),
        created_at=codec.stamp(row["created_at"]),
    )


def _last_request(row: Mapping[str, Any]) -> tuple[dict[str, Any] | None, datetime | None]:
    if row["last_line"] is None:
        return None, None
    try:
        line = codec.loads_object(row["last_line"], what="last request", conversation_id=row["id"])
        return line, codec.stamp(row["last_at"])
    except (CorruptRowError, ValueError) as exc:  # only the line is lost, not the row
        log.warning("a damaged last request of %s is left out: %s", row["id"], exc)
        return None, None


class ListingOps(StoreBase):
    """Conversations by page (``conversation_page``) and their last requests
    (``note_request``, ``last_request``)."""

    _upserts: dict[str, Insert] | None = None

    async def note_request(
        self, conversation_id: str, line: Mapping[str, Any], *, at: datetime | None = None
    ) -> None:
        """Keep ``line`` (a JSON object) as the conversation's last request, ended ``at``
        (default now), unless the one stored ended later."""
        await self.open()
        dialect = self._engine.dialect.name
        upserts = self._upserts if self._upserts is not None else {}
        self._upserts = upserts
        stmt = upserts.get(dialect)
        if stmt is None:  # built once: the proxy writes one at every request
            stmt = upserts[dialect] = _upsert(dialect)
        params = {
            "cid": codec.check_id(conversation_id, "conversation_id"),
            "line": codec.dumps(dict(line)),
            "at": at or codec.now(),
        }
        await self._run_alone(  # one statement: on PostgreSQL, one round trip
            lambda conn: conn.execute(stmt, params), mode="write", operation="note_request"
        )

    async def last_request(self, conversation_id: str) -> tuple[Mapping[str, Any], datetime] | None:
        """The conversation's last request and when it ended (``None``: none kept)."""
        stmt = select(
            conversations.c.id,
            last_requests.c.line.label("last_line"),
            _stamp(last_requests.c.at, "last_at"),
        ).where(last_requests.c.conversation_id == conversation_id)
        stmt = stmt.join_from(
            last_requests, conversations, conversations.c.id == last_requests.c.conversation_id
        )

        def read(conn: Connection) -> Mapping[str, Any] | None:
            row = conn.execute(stmt).mappings().first()
            return dict(row) if row is not None else None

        row = await self._run_sync(read, mode="read", operation="last_request")
        if row is None:
            return None
        line, at = _last_request(row)
        return (line, at) if line is not None and at is not None else None

    async def conversation_page(
        self,
        *,
        setting: str | None = None,
        owner: str | None = None,
        offset: int = 0,
        limit: int = 100,
    ) -> ConversationPage:
        """``limit`` conversations from ``offset`` on, the most recently updated first, with
        their compactions and last request: three queries, however many the page holds.
        ``setting``: only those whose settings hold it with an object value (the proxy's own
        are marked ``proxy``; ``total`` would count one holding it only in a nested object,
        which no page lists); ``owner``: only that owner's. A row that cannot be decoded is
        left out (logged), as ``list_conversations`` does."""
        if not 1 <= limit <= MAX_PAGE:
            raise SettingError("limit", limit, f"1 to {MAX_PAGE} conversations a page")
        if offset < 0:
            raise SettingError("offset", offset, "0 or more")
        where: list[ColumnElement[bool]] = []
        if setting is not None:
            where.append(_holding(setting))
        if owner is not None:
            where.append(conversations.c.owner == owner)
        count = select(func.count()).select_from(conversations).where(*where)
        page = (
            select(
                *codec.columns(conversations),
                last_requests.c.line.label("last_line"),
                _stamp(last_requests.c.at, "last_at"),
            )
            .select_from(
                conversations.outerjoin(
                    last_requests, last_requests.c.conversation_id == conversations.c.id
                )
            )
            .where(*where)
            .order_by(conversations.c.updated_at.desc(), conversations.c.id.desc())
            .offset(offset)
            .limit(limit)
        )

        def read(conn: Connection) -> tuple[int, list[Any], list[Any]]:
            total = int(conn.execute(count).scalar_one())
            rows = [dict(r) for r in conn.execute(page).mappings()]
            ids = [r["id"] for r in rows]
            done: list[Any] = []
            if ids:  # the newest compaction of each, and how many, in one query
                ranked = (
                    select(
                        compactions.c.conversation_id,
                        compactions.c.trigger,
                        compactions.c.tokens_before,
                        compactions.c.tokens_after,
                        _stamp(compactions.c.created_at, "created_at"),
                        func.count()
                        .over(partition_by=compactions.c.conversation_id)
                        .label("count"),
                        func.row_number()
                        .over(
                            partition_by=compactions.c.conversation_id,
                            order_by=compactions.c.version.desc(),
                        )
                        .label("rank"),
                    )
                    .where(compactions.c.conversation_id.in_(ids))
                    .subquery()
                )
                newest = select(ranked).where(ranked.c.rank == 1)
                done = [dict(r) for r in conn.execute(newest).mappings()]
            return total, rows, done

        total, rows, done = await self._run_sync(read, mode="read", operation="conversation_page")
        by_id = {r["conversation_id"]: r for r in done}
        out: list[ListedConversation] = []
        for row in rows:
            try:
                info = codec.conversation_info(row)
                compacted = by_id.get(info.id)
                brief = _brief(compacted) if compacted is not None else None
            except (CorruptRowError, ValueError) as exc:
                log.warning("a corrupt conversation row was left out of a page: %s", exc)
                continue
            if setting is not None and not isinstance(info.settings.get(setting), dict):
                continue  # the text matched elsewhere in its settings (a nested key)
            line, at = _last_request(row)
            out.append(
                ListedConversation(
                    info=info,
                    compactions=int(compacted["count"]) if compacted is not None else 0,
                    last_compaction=brief,
                    last_request=line,
                    last_request_at=at,
                )
            )
        return ConversationPage(tuple(out), total, offset, limit)
