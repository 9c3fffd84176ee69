"""Shared pieces of the store tests: message factories, a fake summary maker, compactors, a
statement counter, a database of many proxy conversations."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection

from abridged.core.model import Message, ToolCall, Usage
from abridged.store import (
    CompactionRecord,
    Compactor,
    Context,
    FinalizeRequest,
    Store,
    StoredSummary,
)


def turn(i: int) -> list[Message]:
    """One agent step of three messages: user, assistant calling a tool, tool result."""
    return [
        Message.user(f"request {i}"),
        Message.assistant(
            f"working on {i}",
            tool_calls=[ToolCall(f"call-{i}", "read", f'{{"path": "f{i}.py"}}')],
            usage=Usage(input=100 + i, output=10, cache_read=50, cache_write=5, reasoning=2),
        ),
        Message.tool(f"call-{i}", f"contents of f{i}.py", name="read"),
    ]


def texts(messages: Sequence[Message]) -> list[str]:
    """The text of each message (tool results by their result text)."""
    return [m.text or "".join(r.text for r in m.tool_results) for m in messages]


async def fake_summary(request: FinalizeRequest) -> StoredSummary:
    """A deterministic summary naming what it covered."""
    words = " ".join(m.text for m in request.messages if m.text)
    previous = request.previous.text if request.previous is not None else ""
    return StoredSummary(f"summary of {len(request.messages)} messages: {previous} {words}"[:2000])


class SlowSummary:
    """A summary maker that waits until released (to show finalisation never blocks)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.calls = 0

    async def __call__(self, request: FinalizeRequest) -> StoredSummary:
        self.calls += 1
        self.started.set()
        await self.release.wait()
        return await fake_summary(request)


def keep_last(n: int, *, text: str = "summary") -> Compactor:
    """A compactor that summarises all but the last ``n`` context messages."""

    async def compactor(context: Context) -> CompactionRecord | None:
        if len(context.messages) <= n:
            return None
        cut = context.messages[-n].seq if n else context.conversation.next_seq
        assert cut is not None
        return CompactionRecord(
            cut_seq=cut,
            summary=StoredSummary(f"{text} up to {cut}"),
            tokens_before=len(context.messages),
            tokens_after=n,
            summarizer="test",
        )

    return compactor


def downgrade_to(revision: str) -> Callable[[Connection], None]:
    """A body for ``AsyncConnection.run_sync`` that takes the schema back to ``revision``, as
    an older abridged left it (for tests of an upgrade over existing rows)."""

    def body(conn: Connection) -> None:
        from alembic import command

        from abridged.store import migrate

        config = migrate._config()
        config.attributes["connection"] = conn
        command.downgrade(config, revision)

    return body


#: The settings of a conversation the proxy made.
PROXY = {"proxy": {"source": "fingerprint"}}


@contextmanager
def _listening(store: Store, name: str, note: Callable[..., None]) -> Iterator[None]:
    """``note`` listens to the event ``name`` of the store's engines meanwhile."""
    for engine in store.sync_engines:
        event.listen(engine, name, note)
    try:
        yield
    finally:
        for engine in store.sync_engines:
            event.remove(engine, name, note)


@contextmanager
def statements(store: Store) -> Iterator[list[str]]:
    """The queries the store runs meanwhile (a transaction's BEGIN is not one)."""
    seen: list[str] = []

    def note(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.split(None, 1)[0].upper() not in ("BEGIN", "COMMIT", "ROLLBACK"):
            seen.append(statement)

    with _listening(store, "before_cursor_execute", note):
        yield seen


@contextmanager
def transactions(store: Store) -> Iterator[list[str]]:
    """One entry per transaction the store commits meanwhile."""
    seen: list[str] = []

    def note(conn: Any) -> None:
        seen.append("COMMIT")

    with _listening(store, "commit", note):
        yield seen


async def proxy_conversations(
    store: Store, count: int, *, compacted: int = 0, noted: int = 0
) -> list[str]:
    """``count`` proxy conversations (the first ``compacted`` compacted twice, the first
    ``noted`` with a last request) and two of the service's, not marked ``proxy``: one whose
    title spells the mark (a tenant can write any title), one with a ``proxy`` string."""
    ids = []
    for i in range(count):
        cid = f"px-{i:04d}"
        await store.create_conversation(cid, owner="key-a", settings=PROXY)
        if i < compacted:
            for n in range(2):
                await store.append_many(cid, turn(2 * n) + turn(2 * n + 1), owner="key-a")
                await store.commit_compaction(cid, keep_last(2), owner="key-a")
        if i < noted:
            await store.note_request(cid, {"action": "passed", "tokens_sent": 100 + i})
        ids.append(cid)
    await store.create_conversation("px-tenant", owner="acme", settings={"title": '"proxy":{'})
    await store.create_conversation("svc", owner="acme", settings={"proxy": "a string"})
    return ids
