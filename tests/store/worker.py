"""A child process for the race and crash tests: ``python -m tests.store.worker MODE ...``.

Modes: ``race URL CONVERSATION CUT BARRIER_DIR N`` (compact once, after all N workers have read
the context), ``append URL CONVERSATION COUNT TAG`` (append messages one by one), ``crash URL
CONVERSATION CUT POINT`` (compact and SIGKILL itself at POINT: ``before`` the commit, ``during``
it, at ``commit``, or ``after`` it). Prints one JSON line with what it did.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from sqlalchemy import event

from abridged.core.model import Message
from abridged.errors import ContentionError
from abridged.store import CompactionRecord, Context, Store, StoredSummary


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


async def race(url: str, cid: str, cut: int, barrier: Path, n: int) -> dict[str, Any]:
    store = Store(url)
    me = f"{os.getpid()}"

    async def compactor(context: Context) -> CompactionRecord:
        (barrier / me).touch()
        deadline = time.monotonic() + 60
        while len(list(barrier.iterdir())) < n:  # everyone has read the same version
            if time.monotonic() > deadline:
                raise TimeoutError("barrier")
            await asyncio.sleep(0.01)
        return CompactionRecord(cut_seq=cut, summary=StoredSummary(f"by {me}"), summarizer=me)

    try:
        outcome = await store.commit_compaction(cid, compactor)
        return {"pid": me, "status": outcome.status, "attempts": outcome.attempts}
    except ContentionError:
        return {"pid": me, "status": "contention", "attempts": 2}
    finally:
        await store.close()


async def append(url: str, cid: str, count: int, tag: str) -> dict[str, Any]:
    store = Store(url)
    try:
        for i in range(count):
            await store.append(cid, Message.user(f"{tag}-{i}"))
        return {"appended": count}
    finally:
        await store.close()


async def crash(url: str, cid: str, cut: int, point: str) -> dict[str, Any]:
    store = Store(url)
    await store.open()
    sync_engine = store.engine.sync_engine
    if point == "during":

        @event.listens_for(sync_engine, "before_cursor_execute")
        def _mid(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            if statement.lstrip().upper().startswith("INSERT INTO COMPACTIONS"):
                _die()

    if point == "commit":

        @event.listens_for(sync_engine, "commit")
        def _at_commit(conn: Any) -> None:
            if conn.info.get("compacting"):
                _die()

        @event.listens_for(sync_engine, "before_cursor_execute")
        def _mark(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            if statement.lstrip().upper().startswith("INSERT INTO COMPACTIONS"):
                conn.info["compacting"] = True

    async def compactor(context: Context) -> CompactionRecord:
        if point == "before":
            _die()  # during the "model call": nothing is open
        return CompactionRecord(cut_seq=cut, summary=StoredSummary("crash test"))

    outcome = await store.commit_compaction(cid, compactor)
    if point == "after":
        _die()
    await store.close()
    return {"status": outcome.status}


def main(argv: list[str]) -> None:
    """Run one mode and print its JSON result."""
    mode, url, cid, *rest = argv
    if mode == "race":
        result = asyncio.run(race(url, cid, int(rest[0]), Path(rest[1]), int(rest[2])))
    elif mode == "append":
        result = asyncio.run(append(url, cid, int(rest[0]), rest[1]))
    elif mode == "crash":
        result = asyncio.run(crash(url, cid, int(rest[0]), rest[1]))
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
