"""Search over past sessions' final summaries: by embedding when stored, else by text."""

from __future__ import annotations

import re
from typing import Literal

from sqlalchemy import select
from sqlalchemy.engine import RowMapping

from abridged.errors import CorruptRowError
from abridged.store import codec
from abridged.store.base import log
from abridged.store.compaction import CompactionOps
from abridged.store.connect import transaction
from abridged.store.embed import cosine
from abridged.store.records import SearchHit, StoredSummary
from abridged.store.schema import conversations, sessions, summaries

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
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
