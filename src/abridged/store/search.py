"""Search over past sessions' final summaries (by embedding when stored, else by text), and
over the text of stored messages (every word of the query, case-insensitive)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import func, select
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from abridged.errors import CorruptRowError
from abridged.store import codec
from abridged.store.base import log
from abridged.store.compaction import CompactionOps
from abridged.store.connect import transaction
from abridged.store.embed import cosine
from abridged.store.records import SearchHit, StoredSummary
from abridged.store.schema import conversations, messages, sessions, summaries

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
#: Characters of message text shown around the first word found.
SNIPPET_CHARS = 160
#: Candidate rows read per hit asked for: the database narrows by substring (which also meets
#: a word inside another, or in a tool call's JSON), the words are then checked in Python.
CANDIDATES_PER_HIT = 5


@dataclass(frozen=True, slots=True)
class MessageHit:
    """A stored message whose text holds every word of a search: where it is, and the text
    around the first word found (``snippet``; ``…`` where it was cut)."""

    conversation_id: str
    seq: int
    role: str
    snippet: str
    created_at: datetime


def snippet(text: str, word: str, width: int = SNIPPET_CHARS) -> str:
    """``width`` characters of ``text`` around the first occurrence of ``word`` (any case).

    >>> snippet("alpha beta gamma delta", "gamma", width=10)
    '…ta gamma d…'
    """
    flat = " ".join(text.split())
    at = flat.lower().find(word.lower())
    at = max(at, 0)
    start = max(0, at + len(word) // 2 - width // 2)
    end = min(len(flat), start + width)
    start = max(0, end - width)
    head = "…" if start > 0 else ""
    tail = "…" if end < len(flat) else ""
    return head + flat[start:end] + tail


#: The least cosine similarity that is a hit: a query sharing no word with a summary still meets
#: it at a few character trigrams or hashed buckets (scores around 0.002), which says nothing.
MIN_EMBEDDING_SCORE = 0.05


def text_score(query: str, text: str) -> float:
    """Share of the query's distinct words found in ``text`` (case-insensitive), 0..1."""
    words = {w.lower() for w in _WORD.findall(query)}
    if not words:
        return 0.0
    found = {w.lower() for w in _WORD.findall(text)}
    return len(words & found) / len(words)


class SearchOps(CompactionOps):
    """Similarity is computed in Python over the stored vectors: a conversation has tens to
    thousands of sessions, so this stays fast and behaves the same on SQLite and PostgreSQL
    without a vector extension."""

    async def search(
        self,
        query: str,
        *,
        conversation_id: str | None = None,
        owner: str | None = None,
        limit: int = 5,
    ) -> list[SearchHit]:
        """Sessions whose final summary best matches ``query``, best first, within one
        conversation or (``owner``) all of an owner's. Summaries embedded by this store's
        embedder are ranked by cosine similarity; the others (or all, when no embedder or no
        vectors) by the share of query words they contain. Hits scoring 0 are left out."""
        await self.open()
        stmt = (
            select(
                sessions.c.id.label("session_id"),
                sessions.c.conversation_id,
                summaries.c.id,
                summaries.c.text,
                summaries.c.meta,
                summaries.c.carried_seqs,
                summaries.c.file_ops,
                summaries.c.covers_to_seq,
                summaries.c.embedding,
                summaries.c.embedder,
            )
            .join(summaries, summaries.c.id == sessions.c.final_summary_id)
            .join(conversations, conversations.c.id == sessions.c.conversation_id)
        )
        if conversation_id is not None:
            stmt = stmt.where(sessions.c.conversation_id == conversation_id)
        if owner is not None:
            stmt = stmt.where(conversations.c.owner == owner)
        async with transaction(self._engine, "read", operation="search") as conn:
            rows = (await conn.execute(stmt)).mappings().all()
        name = self.embedder.name if self.embedder is not None else None
        embedded: list[tuple[RowMapping, StoredSummary, list[float]]] = []
        rest: list[tuple[RowMapping, StoredSummary]] = []
        for r in rows:
            try:  # a damaged summary costs its own hit, never the search
                summary = codec.summary(r)
                assert summary is not None
                if name is not None and r["embedder"] == name:
                    context = {"conversation_id": r["conversation_id"], "summary_id": r["id"]}
                    embedded.append((r, summary, codec.vector(r["embedding"], **context)))
                else:
                    rest.append((r, summary))
            except CorruptRowError as exc:
                log.warning("a corrupt summary was left out of the search: %s", exc)
        hits: list[SearchHit] = []
        if embedded and self.embedder is not None:
            query_vector = (await self.embedder.embed([query]))[0]
            for r, summary, stored in embedded:
                score = cosine(query_vector, stored)
                if score >= MIN_EMBEDDING_SCORE:
                    hits.append(_hit(r, summary, score, "embedding"))
        text_hits = [_hit(r, s, text_score(query, s.text), "text") for r, s in rest]
        hits.sort(key=lambda h: -h.score)
        hits += sorted((h for h in text_hits if h.score > 0), key=lambda h: -h.score)
        return hits[:limit]


def _hit(
    row: RowMapping, summary: StoredSummary, score: float, method: Literal["embedding", "text"]
) -> SearchHit:
    return SearchHit(
        conversation_id=row["conversation_id"],
        session_id=row["session_id"],
        score=score,
        summary=summary,
        method=method,
    )


class MessageSearchOps(SearchOps):
    """Search over the text of stored messages."""

    async def search_messages(
        self,
        query: str,
        *,
        owner: str | None = None,
        conversation_id: str | None = None,
        limit: int = 20,
    ) -> list[MessageHit]:
        """Stored messages whose text (their text parts: what the user and the model wrote;
        tool output and tool calls are not searched) holds every word of ``query`` as a word
        (``bill`` does not find ``billing``), any case,
        the newest first, of ``owner``'s conversations (or one conversation). The newest
        version of an edited message is the one searched. No words: no hits."""
        words = sorted({w.lower() for w in _WORD.findall(query)}, key=len, reverse=True)
        if not words or limit < 1:
            return []
        await self.open()
        stmt = (
            select(*codec.columns(messages))
            .join(conversations, conversations.c.id == messages.c.conversation_id)
            .where(messages.c.seq.is_not(None))
            .order_by(messages.c.pk.desc())
        )
        for word in words:
            # SQLite's LIKE folds ASCII case only: other words are checked in Python alone
            if word.isascii():
                stmt = stmt.where(messages.c.parts.ilike(f"%{word}%"))
        if owner is not None:
            stmt = stmt.where(conversations.c.owner == owner)
        if conversation_id is not None:
            stmt = stmt.where(messages.c.conversation_id == conversation_id)
        hits: list[MessageHit] = []
        seen: set[tuple[str, int]] = set()
        offset, batch = 0, limit * CANDIDATES_PER_HIT
        async with transaction(self._engine, "read", operation="search_messages") as conn:
            while len(hits) < limit:
                rows = (await conn.execute(stmt.limit(batch).offset(offset))).mappings().all()
                for row in rows:
                    key = (row["conversation_id"], row["seq"])
                    if key in seen:
                        continue  # an older version of a message already looked at
                    seen.add(key)
                    try:
                        stored = codec.stored_message(row)
                    except CorruptRowError as exc:
                        log.warning("a corrupt message was left out of the search: %s", exc)
                        continue
                    text = stored.message.text
                    found = {w.lower() for w in _WORD.findall(text)}
                    if stored.seq is None or not all(w in found for w in words):
                        continue
                    if await _edited_since(conn, stored.conversation_id, stored.seq, row):
                        continue  # a newer version of it holds other words
                    hits.append(
                        MessageHit(
                            conversation_id=stored.conversation_id,
                            seq=stored.seq,
                            role=stored.message.role,
                            snippet=snippet(text, words[0]),
                            created_at=stored.created_at,
                        )
                    )
                    if len(hits) >= limit:
                        break
                if len(rows) < batch:
                    break
                offset += batch
        return hits

    async def newest_requests(
        self, conversation_id: str, session_ids: Sequence[str], *, scan: int = 12
    ) -> dict[str, str]:
        """The text of the newest message the user wrote in each of ``session_ids`` (not a
        slash command or its output, not a tool result), by session id; a session with none
        is left out. At most ``scan`` of a session's user rows are read, newest first (the
        ``(session_id, seq)`` index), the newest version of an edited one."""
        await self.open()
        found: dict[str, str] = {}
        async with transaction(self._engine, "read", operation="newest_requests") as conn:
            for sid in session_ids:
                stmt = (
                    select(*codec.columns(messages))
                    .where(messages.c.conversation_id == conversation_id)
                    .where(messages.c.session_id == sid)
                    .where(messages.c.role == "user")
                    .where(messages.c.seq.is_not(None))
                    .order_by(messages.c.seq.desc(), messages.c.version.desc())
                    .limit(scan)
                )
                seen: set[int] = set()
                for row in (await conn.execute(stmt)).mappings().all():
                    if row["seq"] in seen:
                        continue  # an older version of a message already looked at
                    seen.add(row["seq"])
                    try:
                        m = codec.stored_message(row).message
                    except CorruptRowError:
                        continue  # left out here; reading the conversation reports it
                    if m.kind == "message" and not m.tool_results and m.text.strip():
                        found[sid] = m.text
                        break
        return found


async def _edited_since(conn: AsyncConnection, conversation_id: str, seq: int, row: Any) -> bool:
    """Whether a message has a newer version than ``row`` (an edit)."""
    newest = (
        await conn.execute(
            select(func.max(messages.c.version)).where(
                messages.c.conversation_id == conversation_id, messages.c.seq == seq
            )
        )
    ).scalar()
    return newest is not None and int(newest) > int(row["version"])
