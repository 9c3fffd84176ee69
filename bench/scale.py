"""Benchmark: how summarizing and compacting scale with the number of messages.

    .venv/bin/python bench/scale.py [--sizes 1000,10000,100000] [--shapes short,long]
                                    [--repeats 3] [--window 32768] [--json] [--no-memory]
                                    [--no-results]

Two synthetic conversations, built deterministically (a seeded ``random.Random``) at each size:

- **short**: a user/assistant chat of short texts (a few words to a few sentences, some with
  paths, numbers and rules): half the messages are user requests, which is what the extractive
  summarizer's user sections must fit;
- **long**: an agent session: assistant statements with tool calls (JSON arguments), tool
  results of 0.5 to 4 KB (some failing), and a user message every dozen steps.

For each shape and size:

- **summarize**: ``ExtractiveSummarizer().build(SummaryRequest(messages, max_tokens=2000))``
  on the whole conversation;
- **compact**: ``ContextManager(context_window=32k).prepare(messages)`` on a fresh manager:
  reading the history, sizing, planning, pruning, the extractive summary and the context to send
  (the whole engine path; the window is small, so it compacts every time);
- **loop block**: the same on a fresh manager through ``await aprepare(messages)`` while a task
  ticks every 5 ms: the longest the event loop was held (the largest gap between two ticks,
  less the 5 ms), and the most CPU time the loop's own thread spent between two ticks (``loop
  CPU``: the longest stretch of work run on the loop; unlike the gaps, it does not grow when
  the machine is busy with other work or the worker thread holds the GIL), and the longest full
  garbage collection during the call (``GC pause``: CPython stops every thread for it, the
  loop's too, for a time that grows with the objects alive in the process);
- **memory**: the peak of ``tracemalloc`` over one more ``prepare`` (``--no-memory`` skips it).

Times are the median of ``--repeats`` runs (one run from 100,000 messages). The table goes to
stdout and to the ``## scale`` section of ``bench/RESULTS.md``; with ``--json`` the last line is
one JSON object: ``growth_10k_to_100k`` (the largest ratio t(100k) / t(10k) over the shapes and
both measures: linear is 10, the target is <= 12), ``max_loop_block_ms`` (target <= 50),
``max_loop_cpu_ms``, ``max_gc_pause_ms`` and the per-shape figures.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import json
import os
import platform
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from abridged.core.model import Message, ToolCall  # noqa: E402
from abridged.core.protocols import SummaryRequest  # noqa: E402
from abridged.engine.summarize.extractive import ExtractiveSummarizer  # noqa: E402
from abridged.runtime import ContextManager  # noqa: E402
from results import add_output_options, save_section  # noqa: E402

SECTION = "## scale"
DEFAULT_SIZES = (1_000, 10_000, 100_000)
SHAPES = ("short", "long")
#: A small window: every conversation here is far above it, so every ``prepare`` compacts.
WINDOW = 32_768
MAX_OUTPUT = 4_096
SUMMARY_TOKENS = 2_000
TICK = 0.005
#: Sizes from this one on are timed once (a run takes seconds).
ONCE_FROM = 100_000
SEED = 20_240_601

_WORDS = [
    "the",
    "parser",
    "config",
    "value",
    "test",
    "file",
    "module",
    "error",
    "request",
    "response",
    "token",
    "stream",
    "buffer",
    "index",
    "update",
    "check",
    "result",
    "cache",
    "retry",
    "limit",
    "user",
    "session",
    "worker",
    "queue",
    "schema",
    "migration",
    "deploy",
    "build",
    "branch",
    "review",
    "commit",
    "patch",
    "layer",
    "engine",
    "runtime",
    "store",
    "budget",
    "window",
    "summary",
    "prompt",
    "reply",
    "model",
    "tool",
    "call",
    "output",
    "input",
    "table",
    "column",
    "query",
    "latency",
    "timeout",
    "handler",
]
_RULES = (
    "Never push to main.",
    "Always run the tests before committing.",
    "Prefer small functions; keep the public API stable.",
    "Do not touch the migrations.",
    "Use at most 3 retries with a 250 ms backoff.",
    "From now on, answer in English only.",
)
_TOOLS = ("bash", "read_file", "edit_file", "grep")


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(words))
    return text[:1].upper() + text[1:] + "."


def _detail(rng: random.Random, k: int) -> str:
    """A reference now and then: a path, a version, a number with a unit, a ticket."""
    choice = rng.randrange(6)
    if choice == 0:
        return f" See src/pkg/module_{k % 97}.py."
    if choice == 1:
        return f" Version 1.{k % 13}.{k % 7} is out."
    if choice == 2:
        return f" It took {rng.randrange(5, 900)} ms."
    if choice == 3:
        return f" Ticket OPS-{1000 + k % 5000}."
    return ""


def _short(size: int, rng: random.Random) -> list[Message]:
    messages = [Message.system("You are a helpful assistant. Keep answers short.")]
    k = 0
    while len(messages) < size:
        if rng.random() < 0.08:
            asked = rng.choice(_RULES)
        else:
            asked = _sentence(rng, rng.randrange(4, 40)) + _detail(rng, k)
        messages.append(Message.user(f"{asked} (#{k})"))
        said = " ".join(_sentence(rng, rng.randrange(5, 20)) for _ in range(rng.randrange(1, 4)))
        messages.append(Message.assistant(said + _detail(rng, k + 1)))
        k += 1
    return messages[:size]


def _corpus(rng: random.Random) -> str:
    """About 256 KB of log-like lines to take tool outputs from."""
    lines = []
    size = 0
    n = 0
    while size < 256_000:
        line = f"{n:05d} " + " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(3, 14)))
        lines.append(line)
        size += len(line) + 1
        n += 1
    return "\n".join(lines)


def _long(size: int, rng: random.Random) -> list[Message]:
    corpus = _corpus(rng)
    messages = [
        Message.system("You are a careful coding agent. Use the tools; keep answers short."),
        Message.user("Fix the failing tests in the parser module and explain the fix."),
    ]
    k = 0
    while len(messages) < size:
        if k % 12 == 11:
            asked = rng.choice(_RULES) if rng.random() < 0.3 else _sentence(rng, 12)
            messages.append(Message.user(f"{asked} (#{k})"))
        tool = _TOOLS[k % len(_TOOLS)]
        path = f"src/pkg/module_{rng.randrange(200)}.py"
        if tool == "bash":
            args: dict[str, Any] = {"command": f"pytest -q tests/test_{k % 50}.py -k case_{k}"}
        elif tool == "edit_file":
            args = {"path": path, "old": _sentence(rng, 6), "new": _sentence(rng, 8)}
        elif tool == "grep":
            args = {"pattern": rng.choice(_WORDS), "path": "src/"}
        else:
            args = {"path": path}
        call = ToolCall(f"call_{k}", tool, json.dumps(args))
        said = _sentence(rng, rng.randrange(5, 30))
        messages.append(Message.assistant(said, tool_calls=[call]))
        chars = rng.randrange(500, 4_000)
        start = rng.randrange(len(corpus) - chars)
        failed = rng.random() < 0.05
        head = f"$ {tool} {path} (step {k})\n"
        if failed:
            head += f"Traceback (most recent call last):\nValueError: bad value {k}\n"
        messages.append(
            Message.tool(call.id, head + corpus[start : start + chars], name=tool, is_error=failed)
        )
        k += 1
    return messages[:size]


def conversation(shape: str, size: int, seed: int = SEED) -> list[Message]:
    """The ``shape`` conversation of ``size`` messages (same arguments, same messages)."""
    rng = random.Random(f"{seed}:{shape}:{size}")
    if shape == "short":
        return _short(size, rng)
    if shape == "long":
        return _long(size, rng)
    raise ValueError(f"unknown shape {shape!r}")


# -- the measures --------------------------------------------------------------------------------


def _manager(window: int) -> ContextManager:
    return ContextManager(
        context_window=window, max_output_tokens=min(MAX_OUTPUT, window // 4), format="abridged"
    )


def run_summarize(messages: Sequence[Message]) -> float:
    """Seconds of one extractive summary of the whole conversation."""
    request = SummaryRequest(messages=tuple(messages), max_tokens=SUMMARY_TOKENS)
    summarizer = ExtractiveSummarizer()
    started = time.perf_counter()
    summary = summarizer.build(request)
    seconds = time.perf_counter() - started
    assert summary.text.strip()
    return seconds


def run_compact(messages: Sequence[Message], window: int = WINDOW) -> float:
    """Seconds of one ``prepare`` on a fresh manager (it compacts)."""
    cm = _manager(window)
    started = time.perf_counter()
    ctx = cm.prepare(list(messages))
    seconds = time.perf_counter() - started
    if not cm.state.compacted:
        raise AssertionError("the benchmark window was too large: nothing was compacted")
    assert ctx.tokens <= ctx.budget.input_budget
    return seconds


async def _loop_block(messages: Sequence[Message], window: int) -> dict[str, float]:
    cm = _manager(window)
    gaps: list[float] = []
    cpu_gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last, last_cpu = time.perf_counter(), time.thread_time()
        while not done.is_set():
            await asyncio.sleep(TICK)
            now, cpu = time.perf_counter(), time.thread_time()
            gaps.append(now - last)
            cpu_gaps.append(cpu - last_cpu)
            last, last_cpu = now, cpu

    pauses: list[float] = []
    collecting: list[float] = []

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collecting[:] = [time.perf_counter()]
        elif collecting and info["generation"] == 2:
            pauses.append(time.perf_counter() - collecting[0])

    task = asyncio.create_task(ticker())
    await asyncio.sleep(4 * TICK)
    listed = list(messages)
    gc.callbacks.append(on_gc)
    started = time.perf_counter()
    try:
        await cm.aprepare(listed)
    finally:
        gc.callbacks.remove(on_gc)
    seconds = time.perf_counter() - started
    await asyncio.sleep(2 * TICK)
    done.set()
    await task
    if not cm.state.compacted:
        raise AssertionError("the benchmark window was too large: nothing was compacted")
    return {
        "loop_block_ms": max(0.0, max(gaps, default=0.0) - TICK) * 1000,
        "loop_cpu_ms": max(cpu_gaps, default=0.0) * 1000,
        "gc_pause_ms": max(pauses, default=0.0) * 1000,
        "aprepare_s": seconds,
    }


def run_loop_block(messages: Sequence[Message], window: int = WINDOW) -> dict[str, float]:
    """``aprepare`` on a fresh manager while a task ticks every 5 ms: the longest the event loop
    was held (``loop_block_ms``: the largest gap between two ticks, less the 5 ms), the most CPU
    time the loop's own thread spent between two ticks (``loop_cpu_ms``: the longest stretch of
    work run on the loop, whatever else the machine was doing; a gap is longer than it when the
    thread waited for the CPU or for the GIL), the longest full (generation 2) garbage
    collection during the call (``gc_pause_ms``: it stops every thread, the loop's too) and the
    call's duration (``aprepare_s``)."""
    return asyncio.run(_loop_block(messages, window))


def run_memory(messages: Sequence[Message], window: int = WINDOW) -> float:
    """Peak bytes allocated (``tracemalloc``) during one ``prepare`` on a fresh manager."""
    cm = _manager(window)
    listed = list(messages)
    tracemalloc.start()
    try:
        cm.prepare(listed)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return float(peak)


def _timed(run: Callable[[], float], times: int) -> float:
    values = []
    for _ in range(times):
        gc.collect()
        values.append(run())
    return statistics.median(values)


def _growth(rows: dict[int, dict[str, Any]], key: str) -> float | None:
    if 10_000 in rows and 100_000 in rows and rows[10_000][key] > 0:
        return float(rows[100_000][key] / rows[10_000][key])
    return None


def measure(
    sizes: Sequence[int],
    shapes: Sequence[str],
    *,
    repeats: int,
    memory: bool,
    log: Callable[[str], None],
    window: int = WINDOW,
) -> dict[str, Any]:
    """Every measure on every shape and size; the figures as plain data."""
    figures: dict[str, Any] = {}
    for shape in shapes:
        rows: dict[int, dict[str, Any]] = {}
        for size in sizes:
            messages = conversation(shape, size)
            times = repeats if size < ONCE_FROM else 1
            row: dict[str, Any] = {
                "messages": size,
                "users": sum(1 for m in messages if m.role == "user"),
            }
            row["summarize_s"] = _timed(functools.partial(run_summarize, messages), times)
            row["compact_s"] = _timed(functools.partial(run_compact, messages, window), times)
            row.update(run_loop_block(messages, window))
            row["peak_mb"] = run_memory(messages, window) / 2**20 if memory else None
            rows[size] = row
            log(
                f"{shape:>5} {size:>7,}: summarize {row['summarize_s']:.3f} s, "
                f"compact {row['compact_s']:.3f} s, loop block {row['loop_block_ms']:.1f} ms "
                f"(loop CPU {row['loop_cpu_ms']:.1f} ms, GC pause {row['gc_pause_ms']:.1f} ms)"
                + (f", peak {row['peak_mb']:.0f} MB" if row["peak_mb"] is not None else "")
            )
        figures[shape] = {
            "sizes": [rows[s] for s in sizes],
            "growth_summarize": _growth(rows, "summarize_s"),
            "growth_compact": _growth(rows, "compact_s"),
        }
    growths = [
        g
        for shape in figures.values()
        for g in (shape["growth_summarize"], shape["growth_compact"])
        if g is not None
    ]
    every = [row for shape in figures.values() for row in shape["sizes"]]
    return {
        "shapes": figures,
        "growth_10k_to_100k": max(growths) if growths else None,
        "max_loop_block_ms": max((r["loop_block_ms"] for r in every), default=None),
        "max_loop_cpu_ms": max((r["loop_cpu_ms"] for r in every), default=None),
        "max_gc_pause_ms": max((r["gc_pause_ms"] for r in every), default=None),
    }


# -- report ------------------------------------------------------------------------------------


def _s(value: float) -> str:
    if value >= 10:
        return f"{value:,.1f} s"
    if value >= 1:
        return f"{value:.2f} s"
    return f"{value * 1000:,.0f} ms" if value >= 0.01 else f"{value * 1000:.1f} ms"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}x"


def render(result: dict[str, Any]) -> str:
    """The ``## scale`` section."""
    lines = [
        SECTION,
        "",
        f"`{result['command']}` (median of {result['repeats']} runs, one from "
        f"{ONCE_FROM:,} messages; window {result['window']:,} tokens, summary ceiling "
        f"{SUMMARY_TOKENS:,}; Python {result['python']})",
        "",
        "summarize: `ExtractiveSummarizer().build` on the whole conversation; compact: "
        "`ContextManager.prepare` on a fresh manager (read, size, plan, prune, summarize, build "
        "the context); loop block: the longest the event loop was held during `aprepare` (a task "
        "ticking every 5 ms), and the most CPU time the loop's thread spent between two ticks "
        "(loop CPU: work run on the loop, whatever the machine's load); GC pause: the longest "
        "full garbage collection during `aprepare` (it stops every thread, the loop's too); "
        "peak: `tracemalloc` during `prepare`.",
        "",
        "| shape | messages | user messages | summarize | compact | aprepare | loop block "
        "| loop CPU | GC pause | peak |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for shape, figures in result["shapes"].items():
        for row in figures["sizes"]:
            peak = f"{row['peak_mb']:,.0f} MB" if row["peak_mb"] is not None else "-"
            lines.append(
                f"| {shape} | {row['messages']:,} | {row['users']:,} | {_s(row['summarize_s'])} "
                f"| {_s(row['compact_s'])} | {_s(row['aprepare_s'])} "
                f"| {row['loop_block_ms']:,.1f} ms | {row['loop_cpu_ms']:,.1f} ms "
                f"| {row['gc_pause_ms']:,.1f} ms | {peak} |"
            )
    lines.append("")
    lines.append("Growth from 10,000 to 100,000 messages (linear: 10x):")
    for shape, figures in result["shapes"].items():
        lines.append(
            f"- {shape}: summarize {_x(figures['growth_summarize'])}, "
            f"compact {_x(figures['growth_compact'])}"
        )
    lines.append("")
    growth = result["growth_10k_to_100k"]
    block = result["max_loop_block_ms"]
    lines.append("Targets:")
    if growth is not None:
        lines.append(
            f"- growth from 10k to 100k messages {growth:.1f}x (target <= 12x: "
            f"{'met' if growth <= 12 else 'missed'})"
        )
    else:
        lines.append("- growth from 10k to 100k messages: not measured")
    if block is not None:
        lines.append(
            f"- event loop held at most {block:,.1f} ms (target <= 50 ms: "
            f"{'met' if block <= 50 else 'missed'}); at most "
            f"{result['max_loop_cpu_ms']:,.1f} ms of CPU ran on the loop between two ticks; "
            f"the longest full garbage collection took {result['max_gc_pause_ms']:,.1f} ms"
        )
    return "\n".join(lines) + "\n"


def _ints(text: str) -> list[int]:
    return [int(part.replace("_", "")) for part in text.split(",") if part.strip()]


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=_ints, default=list(DEFAULT_SIZES), help="comma-separated message counts"
    )
    parser.add_argument("--shapes", default=",".join(SHAPES), help="short,long (default both)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per size (default 3)")
    parser.add_argument(
        "--window", type=int, default=WINDOW, help=f"context window (default {WINDOW})"
    )
    add_output_options(parser)
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc run")
    args = parser.parse_args(argv)
    shapes = [s for s in args.shapes.split(",") if s]
    if args.repeats < 1 or not args.sizes or any(size < 10 for size in args.sizes):
        parser.error("--repeats must be >= 1 and every size >= 10")
    if args.window < 4_096:
        parser.error("--window must be >= 4096")
    if not shapes or any(s not in SHAPES for s in shapes):
        parser.error(f"--shapes: a comma-separated list of {', '.join(SHAPES)}")
    figures = measure(
        args.sizes,
        shapes,
        repeats=args.repeats,
        memory=not args.no_memory,
        log=lambda s: print(s, file=sys.stderr, flush=True),
        window=args.window,
    )
    command = "python bench/scale.py"
    if list(args.sizes) != list(DEFAULT_SIZES):
        command += " --sizes " + ",".join(str(s) for s in args.sizes)
    if shapes != list(SHAPES):
        command += " --shapes " + ",".join(shapes)
    if args.repeats != 3:
        command += f" --repeats {args.repeats}"
    if args.window != WINDOW:
        command += f" --window {args.window}"
    result = {
        "command": command,
        "repeats": args.repeats,
        "window": args.window,
        "python": platform.python_version(),
        **figures,
    }
    table = render(result)
    print(table)
    save_section(args, table)
    if args.json:
        out = {
            "growth_10k_to_100k": result["growth_10k_to_100k"],
            "max_loop_block_ms": result["max_loop_block_ms"],
            "max_loop_cpu_ms": result["max_loop_cpu_ms"],
            "max_gc_pause_ms": result["max_gc_pause_ms"],
            "window": args.window,
            "shapes": {
                shape: {
                    "growth_summarize": f["growth_summarize"],
                    "growth_compact": f["growth_compact"],
                    "sizes": {
                        str(row["messages"]): {
                            "summarize_s": row["summarize_s"],
                            "compact_s": row["compact_s"],
                            "aprepare_s": row["aprepare_s"],
                            "loop_block_ms": row["loop_block_ms"],
                            "loop_cpu_ms": row["loop_cpu_ms"],
                            "gc_pause_ms": row["gc_pause_ms"],
                            "peak_mb": row["peak_mb"],
                        }
                        for row in f["sizes"]
                    },
                }
                for shape, f in result["shapes"].items()
            },
        }
        print(json.dumps(out))
    return result


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
