"""Search over past sessions: the hashing embedder, similarity on both databases, text fallback."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from abridged.core.model import Message
from abridged.store import Embedder, FinalizeRequest, HashingEmbedder, Store, StoredSummary
from abridged.store.embed import cosine

TOPICS = {
    "db": "We migrated the postgres database schema and fixed the alembic revision for users",
    "css": "Styled the landing page with flexbox and a dark theme for the navigation bar",
    "auth": "Implemented OAuth login with refresh tokens and session cookies for the API",
}


def summary_of(topic: str):  # type: ignore[no-untyped-def]
    async def make(request: FinalizeRequest) -> StoredSummary:
        return StoredSummary(TOPICS[topic], {"topic": topic})

    return make


async def _conversation_with_topics(store: Store, owner: str) -> str:
    convo = await store.create_conversation(owner=owner)
    for topic in TOPICS:
        await store.append(convo.id, Message.user(f"let's work on {topic}"), owner=owner)
        await store.new_session(convo.id, summarize=summary_of(topic), owner=owner)
        await store.drain()
    return convo.id


async def test_hashing_embedder_is_deterministic_and_lexical() -> None:
    e = HashingEmbedder(dimensions=256)
    assert isinstance(e, Embedder)
    a, b, c, empty = await e.embed(
        [TOPICS["db"], "postgres schema migration with alembic", TOPICS["css"], "  "]
    )
    assert a == (await e.embed([TOPICS["db"]]))[0]
    assert len(a) == 256 and abs(sum(x * x for x in a) - 1) < 1e-9
    assert cosine(a, b) > cosine(c, b) + 0.1
    assert empty == [0.0] * 256 and cosine(empty, a) == 0.0
    assert cosine([1.0], [1.0, 0.0]) == 0.0
    with pytest.raises(ValueError):
        HashingEmbedder(dimensions=2)


async def test_search_ranks_sessions_by_similarity(store: Store) -> None:
    cid = await _conversation_with_topics(store, "ann")
    other = await _conversation_with_topics(store, "bob")
    hits = await store.search("alembic migration of the database", conversation_id=cid)
    assert hits[0].summary.meta == {"topic": "db"}
    assert hits[0].method == "embedding" and hits[0].conversation_id == cid
    assert all(h.conversation_id == cid for h in hits)
    mine = await store.search("login tokens", owner="ann")
    assert mine[0].summary.meta == {"topic": "auth"}
    assert {h.conversation_id for h in mine} == {cid}
    assert {h.conversation_id for h in await store.search("login tokens")} == {cid, other}
    assert len(await store.search("login tokens", limit=1)) == 1


async def test_text_fallback_when_no_embeddings(db_url: str) -> None:
    plain = Store(db_url, embedder=None)
    try:
        cid = await _conversation_with_topics(plain, "ann")
        hits = await plain.search("OAuth refresh", conversation_id=cid)
        assert [h.method for h in hits] == ["text"]
        assert hits[0].summary.meta == {"topic": "auth"} and hits[0].score == 1.0
        assert await plain.search("zebra", conversation_id=cid) == []
    finally:
        await plain.close()
    # A store with an embedder still finds these summaries, by text.
    embedding = Store(db_url)
    try:
        hits = await embedding.search("flexbox", conversation_id=cid)
        assert hits[0].summary.meta == {"topic": "css"} and hits[0].method == "text"
    finally:
        await embedding.close()


class CountingEmbedder:
    """A custom embedder through the protocol (a two-dimensional toy)."""

    name = "toy-2"
    dimension = 2

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float("postgres" in t.lower()), float("flexbox" in t.lower())] for t in texts]


async def test_custom_embedder_through_the_protocol(db_url: str) -> None:
    store = Store(db_url, embedder=CountingEmbedder())
    try:
        cid = await _conversation_with_topics(store, "ann")
        hits = await store.search("postgres please", conversation_id=cid)
        assert hits[0].summary.meta == {"topic": "db"} and hits[0].method == "embedding"
    finally:
        await store.close()
