"""Benchmark: what the call inspector's kept calls cost in the store, against keeping a copy of
every message each call sent.

    .venv/bin/python bench/calls.py [--turns 40] [--window 8192] [--json]

A conversation of the HTTP service's runner (``ConversationPool`` + ``TurnRunner``, SQLite in a
temporary directory) against ``abridged.testing.ProviderServer``: every user message gets three
tool calls, each reading a 60-line record (~600 tokens), then a short text, in a small window,
so it prunes and compacts. Afterwards: the calls kept (``calls`` rows), the bytes of their
``sent`` column (the references), the bytes the same messages take as JSON copies (what keeping
each call's context verbatim would store), and the stored messages' own JSON for scale; and a
check that every call reads back whole (no placeholder).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from sqlalchemy import select

from abridged.core.model import Message, message_to_dict
from abridged.server.app import service_model
from abridged.server.config import ServiceConfig, load_tools
from abridged.server.metrics import ServiceMetrics
from abridged.server.runner import ConversationPool, TurnRunner
from abridged.store import Store
from abridged.store.schema import calls
from abridged.testing import ProviderServer, Reply


def reply(record: Any) -> Reply:
    """Three tool calls for each user message, then a short text."""
    since = 0
    for m in reversed(record.messages):
        if m.role == "user" and not m.tool_results:
            break
        since += bool(m.tool_results)
    if since < 3:
        n = sum(1 for m in record.messages if m.tool_results)
        return Reply("", tool_calls=[("read_record", {"key": f"k{n}", "lines": 60})])
    return Reply("Done.")


async def measure(turns: int, window: int, work: Path) -> dict[str, Any]:
    db = str(work / "calls.db")
    with ProviderServer(context_window=window, max_output=1_024, replies=reply) as provider:
        config = ServiceConfig(
            db=db,
            models=(provider.base_url + "/v1#gpt-test",),
            context_window=window,
            max_output_tokens=1_024,
            tools="abridged.testing.tools:TOOLS",
        )
        store = Store(db)
        metrics = ServiceMetrics()
        pool = ConversationPool(store, config, load_tools(config.tools), metrics, service_model)
        runner = TurnRunner(store, pool, config, metrics)
        try:
            info = await store.create_conversation(
                owner="bench", model=config.models[0], settings={"summarizer": "extractive"}
            )
            for turn in range(turns):
                handle = await runner.start_turn(
                    "bench", info.id, Message.user(f"task {turn}: read the next records")
                )
                await handle.wait()
            kept = await store.list_calls(info.id, limit=10**6)
            copies = 0
            placeholders = 0
            for call in kept:
                sent = await store.sent_messages(info.id, call)
                copies += sum(len(json.dumps(message_to_dict(m))) for m in sent)
                placeholders += sum("no longer stored" in m.text for m in sent)
            async with store.engine.connect() as conn:
                refs = sum(len(r[0]) for r in await conn.execute(select(calls.c.sent)))
            stored = sum(
                len(json.dumps(message_to_dict(m.message)))
                for m in await store.stored_messages(info.id)
            )
        finally:
            await runner.close()
            await store.close()
        return {
            "turns": turns,
            "window": window,
            "calls": len(kept),
            "provider_requests": len(provider.requests),
            "sent_bytes": refs,
            "copy_bytes": copies,
            "stored_message_bytes": stored,
            "placeholders": placeholders,
        }


def report(figures: dict[str, Any], command: str) -> str:
    ratio = figures["copy_bytes"] / max(figures["sent_bytes"], 1)
    return "\n".join(
        [
            f"`{command}`",
            "",
            "| calls | kept as references | as copies | copies / references | stored messages |",
            "| ---: | ---: | ---: | ---: | ---: |",
            f"| {figures['calls']} | {figures['sent_bytes']:,} B"
            f" ({figures['sent_bytes'] // max(figures['calls'], 1):,} B a call)"
            f" | {figures['copy_bytes']:,} B | {ratio:.1f}x"
            f" | {figures['stored_message_bytes']:,} B |",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--window", type=int, default=8192)
    parser.add_argument("--json", action="store_true", help="one JSON line of the figures")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="abridged-calls-") as work:
        figures = asyncio.run(measure(args.turns, args.window, Path(work)))
    assert figures["calls"] == figures["provider_requests"], figures
    assert figures["placeholders"] == 0, figures
    if args.json:
        print(json.dumps(figures))
    else:
        print(report(figures, "bench/calls.py " + " ".join(sys.argv[1:])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
