"""Store benchmark: append throughput and the latency of loading the current context.

    .venv/bin/python bench/store.py [--json] [--sizes 1000,10000,100000] [--backends B,...]

For each backend (SQLite file in WAL mode with ``synchronous=NORMAL``; PostgreSQL from a
throwaway cluster started from the local binaries, as the tests do, with durable settings):

- single appends: one ``append`` call per message, each its own transaction;
- ``append_many``: batches of ``--batch`` messages;
- load latency: conversations of each size (stored messages) built as many sessions of
  ``--session`` messages, each compacted keeping ``--keep`` of them, then a last session of the
  same shape for every size, so the context loaded is the same size whatever the history; the
  median of ``--loads`` calls of ``load_context``.

Targets (SQLite): load time grows at most 1.5x from 1,000 to 100,000 stored messages; single
appends >= 1,000 messages/s; ``append_many`` >= 10,000 messages/s. The table goes to stdout and
to the ``## store`` section of ``bench/RESULTS.md``; ``--json`` prints one JSON object last.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from abridged.core.model import Message, ToolCall, Usage
from abridged.store import CompactionRecord, Store, StoredSummary
from abridged.store.testing import PostgresCluster, find_bin_dir
from results import add_output_options, save_section

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## store"
TARGET_GROWTH = 1.5
TARGET_APPENDS = 1_000
TARGET_BATCH = 10_000


def step(i: int) -> list[Message]:
    """One agent step (user, assistant calling a tool, tool result), about 600 characters."""
    return [
        Message.user(f"Please look at module_{i}.py and fix the failing test number {i}."),
        Message.assistant(
            f"I will read module_{i}.py first to see what the test expects from it.",
            tool_calls=[ToolCall(f"call_{i}", "read_file", f'{{"path": "src/module_{i}.py"}}')],
            usage=Usage(input=1200 + i % 500, output=80, cache_read=9000, cache_write=300),
        ),
        Message.tool(
            f"call_{i}",
            f"def handler_{i}(request):\n    return process(request, retries={i % 7})\n" * 4,
            name="read_file",
        ),
    ]


def messages(n: int, start: int = 0) -> list[Message]:
    """``n`` messages of consecutive steps."""
    out: list[Message] = []
    i = start
    while len(out) < n:
        out.extend(step(i))
        i += 1
    return out[:n]


async def append_rates(store: Store, singles: int, batched: int, batch: int) -> tuple[float, float]:
    """Messages per second of single appends and of ``append_many``."""
    convo = await store.create_conversation()
    payload = messages(singles)
    await store.append(convo.id, payload[0])  # warm the connection pool
    started = time.perf_counter()
    for m in payload:
        await store.append(convo.id, m)
    single_rate = singles / (time.perf_counter() - started)
    convo = await store.create_conversation()
    payload = messages(batched)
    started = time.perf_counter()
    for k in range(0, batched, batch):
        await store.append_many(convo.id, payload[k : k + batch])
    return single_rate, batched / (time.perf_counter() - started)


async def build(store: Store, size: int, session: int, keep: int) -> str:
    """A conversation of ``size`` stored messages in sessions of ``session`` messages, each
    compacted keeping its last ``keep`` (carried into the next session)."""
    convo = await store.create_conversation()
    written = 0
    while written < size:
        count = min(session if written == 0 else session - keep, size - written)
        await store.append_many(convo.id, messages(count, start=written))
        written += count
        context = await store.load_context(convo.id)
        cut = context.messages[-keep].seq if len(context.messages) > keep else None
        if cut is None:
            continue
        await store.commit_compaction(
            convo.id,
            CompactionRecord(cut, StoredSummary(f"summary up to {cut} " + "x" * 2000)),
            version=context.version,
            session_id=context.session.id,
        )
    return convo.id


async def load_latency(store: Store, cid: str, loads: int) -> tuple[float, int]:
    """Median milliseconds of ``load_context`` and the context's message count."""
    for _ in range(5):
        context = await store.load_context(cid)
    times = []
    for _ in range(loads):
        started = time.perf_counter()
        context = await store.load_context(cid)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), len(context.messages)


async def run_backend(url: str, args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement on one database."""
    store = Store(url)
    try:
        await store.open()
        singles, batch_rate = await append_rates(store, args.appends, args.batched, args.batch)
        loads: dict[str, float] = {}
        sizes: dict[str, int] = {}
        for size in args.sizes:
            # The last session is the same for every size: ``keep`` carried + a full session.
            history = size - (args.session - args.keep)
            if history < args.session:
                raise SystemExit(f"--sizes: {size} is too small for sessions of {args.session}")
            cid = await build(store, history, args.session, args.keep)
            await store.append_many(cid, messages(args.session - args.keep, start=10**6))
            ms, count = await load_latency(store, cid, args.loads)
            stored = (await store.open_conversation(cid)).next_seq - 1
            loads[str(size)] = round(ms, 3)
            sizes[str(size)] = stored
            sessions = len(await store.list_sessions(cid))
            print(
                f"  {store.dialect}: {stored} stored messages in {sessions} sessions, "
                f"context {count} messages: load {ms:.2f} ms",
                flush=True,
            )
        first, last = str(args.sizes[0]), str(args.sizes[-1])
        return {
            "appends_per_s": round(singles, 1),
            "batch_appends_per_s": round(batch_rate, 1),
            "load_ms": loads,
            "stored": sizes,
            "load_growth": round(loads[last] / loads[first], 3),
        }
    finally:
        await store.close()


def table(results: dict[str, dict[str, Any]], sizes: Sequence[int]) -> str:
    """The markdown table of the results."""
    head = ["backend", "appends/s (1 per tx)", "append_many msg/s"]
    head += [f"load ms @ {s:,}" for s in sizes] + [f"growth {sizes[0]:,} -> {sizes[-1]:,}"]
    lines = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for backend, r in results.items():
        row = [backend, f"{r['appends_per_s']:,.0f}", f"{r['batch_appends_per_s']:,.0f}"]
        row += [f"{r['load_ms'][str(s)]:.2f}" for s in sizes] + [f"{r['load_growth']:.2f}x"]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark, print the table (and JSON), write RESULTS.md."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    add_output_options(parser)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--appends", type=int, default=3000, help="single appends to time")
    parser.add_argument("--batched", type=int, default=30000, help="messages for append_many")
    parser.add_argument("--batch", type=int, default=1000, help="append_many batch size")
    parser.add_argument("--session", type=int, default=200, help="messages per session")
    parser.add_argument("--keep", type=int, default=20, help="messages kept by a compaction")
    parser.add_argument("--loads", type=int, default=50, help="load_context calls per size")
    args = parser.parse_args(argv)
    args.sizes = sorted(int(s) for s in args.sizes.split(","))
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    results: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    started = time.perf_counter()
    if "sqlite" in backends:
        directory = Path(tempfile.mkdtemp(prefix="abridged-bench-"))
        try:
            url = f"sqlite+aiosqlite:///{directory / 'bench.db'}"
            results["sqlite"] = asyncio.run(run_backend(url, args))
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    if "postgresql" in backends:
        bin_dir = find_bin_dir()
        if bin_dir is None:
            notes.append("PostgreSQL: not measured (no binaries in /usr/lib/postgresql/*/bin)")
        else:
            cluster = PostgresCluster(bin_dir, fast=False)
            try:
                results["postgresql"] = asyncio.run(run_backend(cluster.start(), args))
            finally:
                cluster.stop()
    elapsed = time.perf_counter() - started
    rendered = table(results, args.sizes)
    lite = results.get("sqlite")
    summary: dict[str, Any] = {
        "sizes": args.sizes,
        "load_growth_1k_to_100k": lite["load_growth"] if lite else None,
        "sqlite_appends_per_s": lite["appends_per_s"] if lite else None,
        "sqlite_batch_appends_per_s": lite["batch_appends_per_s"] if lite else None,
        "backends": results,
        "seconds": round(elapsed, 1),
    }
    checks = []
    if lite:
        checks = [
            (
                "load growth",
                lite["load_growth"],
                f"<= {TARGET_GROWTH}",
                lite["load_growth"] <= TARGET_GROWTH,
            ),
            (
                "single appends/s",
                lite["appends_per_s"],
                f">= {TARGET_APPENDS:,}",
                lite["appends_per_s"] >= TARGET_APPENDS,
            ),
            (
                "append_many msg/s",
                lite["batch_appends_per_s"],
                f">= {TARGET_BATCH:,}",
                lite["batch_appends_per_s"] >= TARGET_BATCH,
            ),
        ]
        summary["targets_met"] = all(ok for *_, ok in checks)
    section = "\n".join(
        [
            SECTION,
            "",
            f"`python bench/store.py --sizes {','.join(map(str, args.sizes))}` "
            f"({elapsed:.0f} s; sessions of {args.session} messages, {args.keep} kept by each "
            f"compaction; load = median of {args.loads} `load_context` calls; PostgreSQL "
            "with fsync and synchronous commit on)",
            "",
            rendered,
            "",
            "Targets (SQLite):",
            *[
                f"- {name}: {value:,.2f} ({target}: {'met' if ok else 'MISSED'})"
                for name, value, target, ok in checks
            ],
            *[f"- {n}" for n in notes],
            "",
        ]
    )
    print()
    print(section)
    save_section(args, section)
    if args.json:
        print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
