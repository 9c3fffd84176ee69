"""Benchmark: replaying real agent sessions through abridged (engine and store), end to end.

    .venv/bin/python bench/replay.py [--data PATH] [--window 16k] [--limit N] [--json]
                                     [--no-results]

What ``abridged replay FILE --window 16k`` does, timed: every session of the file is loaded,
then replayed call by call through ``ContextManager`` with the extractive summarizer, every
message written to a temporary SQLite store and every compaction and prune committed through its
single writer. Reported: sessions, model calls (steps), turns (a user message and what follows
until the model answers without a tool: most agent sessions are one turn of many steps),
compactions, prunes, contexts over the window (must be 0), the largest context against the input
budget, and the time: loading, replaying, total, calls per second and turns per second.

Target: the 101 sessions of ``../shared/data/swebench-gemini3/trajectories.jsonl`` with a 16k
window in under 2 minutes. The table goes to stdout and to the ``## replay`` section of
``bench/RESULTS.md``; with ``--json`` the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from abridged.core.budget import format_token_size, parse_token_size  # noqa: E402
from abridged.formats.transcripts import load_transcripts  # noqa: E402
from abridged.runtime.replay import ReplayOptions, replay_transcripts  # noqa: E402
from results import add_output_options, save_section  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "swebench-gemini3" / "trajectories.jsonl"
SECTION = "## replay"
TARGET_SECONDS = 120.0


def main() -> int:
    """Replay, print, write the section; the exit code is 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--window", default="16k")
    parser.add_argument("--limit", type=int, default=None, help="only the first N sessions")
    add_output_options(parser)
    args = parser.parse_args()
    if not args.data.exists():
        raise SystemExit(f"no data at {args.data} (pass --data)")

    started = time.perf_counter()
    transcripts = load_transcripts(args.data)
    if args.limit is not None:
        transcripts = transcripts[: args.limit]
    loaded = time.perf_counter()
    options = ReplayOptions(window=parse_token_size(args.window, name="window"))
    report = asyncio.run(replay_transcripts(transcripts, options, path=str(args.data)))
    data = report.to_json()
    finished = time.perf_counter()
    load_s, replay_s, total_s = loaded - started, finished - loaded, finished - started
    totals = data["totals"]
    sessions = data["sessions"]
    budget = sessions[0]["budget"]
    limits = sessions[0]["limits"]
    per_session = sorted(s["totals"]["seconds"] for s in sessions)
    calls, turns = totals["calls"], totals["turns"]
    over_budget = sum(
        1 for s in data["steps"] if s["context_tokens"] > s_budget(sessions, s["session"])
    )
    met_time = total_s < TARGET_SECONDS
    stopped = int(totals.get("stopped") or 0)
    met_budget = totals["overflows"] == 0 and over_budget == 0 and stopped == 0
    k = format_token_size
    lines = [
        SECTION,
        "",
        f"`python bench/replay.py --window {args.window}` ({args.data.name}: "
        f"{len(sessions)} sessions; extractive summarizer, temporary SQLite store; "
        f"Python {platform.python_version()})",
        "",
        f"Window {k(limits['context_window'])}, max output {k(limits['max_output'])} (the "
        f"model's, capped at the window), output reserve {k(budget['output_reserve'])} (half the "
        f"window at most): input budget {k(budget['input_budget'])}, "
        f"trigger {k(budget['trigger'])}, target {k(budget['target'])}, keep recent "
        f"{k(budget['keep_recent'])}.",
        "",
        "| sessions | model calls | turns | messages | compactions | prunes | over the window "
        "| largest context |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {len(sessions)} | {calls:,} | {turns:,} | {totals['messages']:,} | "
        f"{totals['compactions']:,} | {totals['prunes']:,} | {totals['overflows']} | "
        f"{k(totals['max_context_tokens'])} |",
        "",
        "| load | replay | total | model calls / s | turns / s | per session median | p90 | max |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {load_s:.1f} s | {replay_s:.1f} s | {total_s:.1f} s | {calls / replay_s:,.0f} | "
        f"{turns / replay_s:,.2f} | {statistics.median(per_session):.2f} s | "
        f"{per_session[min(len(per_session) - 1, int(0.9 * len(per_session)))]:.2f} s | "
        f"{per_session[-1]:.2f} s |",
        "",
        f"Tokens sent: {k(totals['input_tokens'])} input (estimated cache hit "
        f"{totals['cache_hit']:.0%}), against {k(totals['recorded_input_tokens'] or 0)} in the "
        "recorded runs (1M-token window, no compaction); estimated cost at list prices "
        + (f"${totals['cost']:,.2f}" if totals["cost"] is not None else "n/a")
        + ". The store matched the engine's state after every session: "
        + ("yes" if totals["stored_consistent"] else "NO")
        + ".",
        "",
        f"Targets: whole set under {TARGET_SECONDS:.0f} s: {'met' if met_time else 'missed'} "
        f"({total_s:.1f} s); no context over the window or the input budget: "
        f"{'met' if met_budget else 'missed'} ({totals['overflows']} over the window, "
        f"{over_budget} over the input budget, {stopped} sessions stopped).",
    ]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    save_section(args, text)
    if args.json:
        payload: dict[str, Any] = {
            "sessions": len(sessions),
            "calls": calls,
            "turns": turns,
            "compactions": totals["compactions"],
            "prunes": totals["prunes"],
            "overflows": totals["overflows"],
            "over_budget": over_budget,
            "stopped": stopped,
            "max_context_tokens": totals["max_context_tokens"],
            "input_budget": budget["input_budget"],
            "load_seconds": round(load_s, 2),
            "replay_seconds": round(replay_s, 2),
            "total_seconds": round(total_s, 2),
            "calls_per_second": round(calls / replay_s, 1),
            "turns_per_second": round(turns / replay_s, 2),
            "target_met": met_time and met_budget,
        }
        sys.stdout.write(json.dumps(payload) + "\n")
    return 0 if met_time and met_budget else 1


def s_budget(sessions: list[dict[str, Any]], session_id: str) -> int:
    """The input budget of one session (they share the window, not the system prompt)."""
    for s in sessions:
        if s["id"] == session_id:
            return int(s["budget"]["input_budget"])
    raise KeyError(session_id)


if __name__ == "__main__":
    raise SystemExit(main())
