"""Benchmark: the per-call cost of deciding and preparing a context, on long histories.

    .venv/bin/python bench/overhead.py [--sizes 100 1000 10000 100000] [--calls 50] [--repeats 3]
                                       [--json] [--no-baseline] [--no-results]

For each history size N (messages of a realistic agent session: a system prompt, a task, then
steps of an assistant tool call and its result of 300 to 3,000 characters), the history is loaded
once, then ``--calls`` calls each add one step (two messages) and ask for the context to send,
with a window large enough that nothing is ever compacted; each size is run ``--repeats`` times
and the run with the lowest median kept (the baseline runs once at 100,000 messages):

- **abridged**: ``ContextManager.prepare(messages)`` on OpenAI Chat Completions dicts (the
  caller's own list, grown in place), which converts the new items, keeps its token sums and
  decides; the time includes everything the call does.
- **baseline**: LangChain's ``SummarizationMiddleware`` (``langchain`` v1) with a fake chat
  model and a token trigger it never reaches, its ``before_model`` hook called with a state
  holding the same history as LangChain messages: it counts the whole history on every call.

The table goes to stdout and to the ``## overhead`` section of ``bench/RESULTS.md``; with
``--json`` the last line is one JSON object (``speedup_at_10k``, per-size figures). Targets:
abridged's cost per call stays flat (within 2x from the smallest size to the largest) and is at
least 100x lower than the baseline's at 10,000 messages. Needs ``langchain`` and
``langchain-core`` (the ``bench`` extra) for the baseline; without them only abridged is run.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from abridged.core.model import Message, ToolCall  # noqa: E402
from abridged.formats.openai_chat import messages_to_openai  # noqa: E402
from abridged.runtime import ContextManager  # noqa: E402
from results import add_output_options, save_section  # noqa: E402

SECTION = "## overhead"
DEFAULT_SIZES = (100, 1_000, 10_000, 100_000)
#: A window no history here reaches: nothing is compacted, every call only decides.
WINDOW = 100_000_000
MAX_OUTPUT = 8_192

_WORDS = [
    "def",
    "return",
    "self",
    "value",
    "import",
    "error",
    "test",
    "file",
    "line",
    "path",
    "module",
    "config",
    "result",
    "assert",
    "None",
    "True",
    "False",
    "print",
    "index",
    "buffer",
    "request",
    "response",
    "token",
    "stream",
    "parse",
    "check",
    "update",
]
_TOOLS = ("bash", "read_file", "edit_file", "grep")


def _text(k: int, chars: int) -> str:
    """Deterministic text of about ``chars`` characters, different for each ``k``."""
    words: list[str] = []
    size = 0
    i = k
    while size < chars:
        word = _WORDS[(i * 7 + size) % len(_WORDS)]
        if (i + size) % 11 == 0:
            word = f"{word}_{i % 97}"
        if (i + size) % 13 == 0:
            word += "\n"
        words.append(word)
        size += len(word) + 1
        i += 3
    return " ".join(words)


def step(k: int) -> list[Message]:
    """Step ``k``: an assistant message calling a tool, and the tool's result."""
    tool = _TOOLS[k % len(_TOOLS)]
    call = ToolCall(f"call_{k}", tool, json.dumps({"path": f"src/module_{k % 50}.py", "n": k}))
    said = _text(k, 60 + (k * 37) % 240)
    output = _text(k + 1, 300 + (k * 997) % 2_700)
    return [Message.assistant(said, tool_calls=[call]), Message.tool(call.id, output, name=tool)]


def history(size: int) -> list[Message]:
    """A history of ``size`` messages: system prompt, task, then steps."""
    messages = [
        Message.system("You are a careful coding agent. Use the tools; keep answers short."),
        Message.user("Fix the failing tests in the parser module and explain the fix."),
    ]
    k = 0
    while len(messages) < size:
        messages.extend(step(k))
        k += 1
    return messages[:size]


# -- abridged ----------------------------------------------------------------------------------


def run_abridged(size: int, calls: int) -> list[float]:
    """Seconds per call of ``ContextManager.prepare`` on OpenAI dicts, ``calls`` calls."""
    wire = messages_to_openai(history(size))
    cm = ContextManager(context_window=WINDOW, max_output_tokens=MAX_OUTPUT, format="openai")
    ctx = cm.prepare(wire)  # the initial load: every message is read once
    assert ctx.messages is wire and not ctx.events
    steps = [messages_to_openai(step(1_000_000 + c)) for c in range(calls)]
    times: list[float] = []
    gc.collect()
    gc.disable()
    try:
        for new in steps:
            wire.extend(new)
            started = time.perf_counter()
            ctx = cm.prepare(wire)
            times.append(time.perf_counter() - started)
            assert ctx.messages is wire and not ctx.changed
    finally:
        gc.enable()
    if cm.state.compactions or cm.state.pruned:
        raise AssertionError("the benchmark window was too small: something was compacted")
    return times


# -- baseline: LangChain's SummarizationMiddleware ------------------------------------------------


def _langchain_messages(messages: Sequence[Message]) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[Any] = []
    for m in messages:
        if m.role == "system":
            out.append(SystemMessage(m.text))
        elif m.role == "user":
            out.append(HumanMessage(m.text))
        elif m.role == "assistant":
            calls = [
                {"id": c.id, "name": c.name, "args": json.loads(c.arguments)} for c in m.tool_calls
            ]
            out.append(AIMessage(m.text, tool_calls=calls))
        else:
            result = m.tool_results[0]
            out.append(ToolMessage(result.text, tool_call_id=result.call_id, name=result.name))
    return out


def baseline_available() -> bool:
    """Whether LangChain v1 (``langchain`` and ``langchain-core``) is installed."""
    try:
        from langchain.agents.middleware import SummarizationMiddleware  # noqa: F401
        from langchain_core.language_models.fake_chat_models import (  # noqa: F401
            GenericFakeChatModel,
        )
    except ImportError:
        return False
    return True


def run_baseline(size: int, calls: int) -> list[float]:
    """Seconds per call of ``SummarizationMiddleware.before_model``, ``calls`` calls."""
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    model = GenericFakeChatModel(messages=iter(["summary"]))
    middleware = SummarizationMiddleware(model=model, trigger=("tokens", 10**12))
    state: dict[str, Any] = {"messages": _langchain_messages(history(size))}
    assert middleware.before_model(state, None) is None  # type: ignore[arg-type]
    steps = [_langchain_messages(step(1_000_000 + c)) for c in range(calls)]
    times: list[float] = []
    gc.collect()
    gc.disable()
    try:
        for new in steps:
            state["messages"].extend(new)
            started = time.perf_counter()
            update = middleware.before_model(state, None)  # type: ignore[arg-type]
            times.append(time.perf_counter() - started)
            assert update is None
    finally:
        gc.enable()
    return times


# -- report ------------------------------------------------------------------------------------


def _stats(times: Sequence[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_us": statistics.median(ordered) * 1e6,
        "mean_us": statistics.fmean(ordered) * 1e6,
        "p90_us": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))] * 1e6,
    }


def _us(value: float) -> str:
    if value >= 10_000:
        return f"{value / 1000:,.1f} ms"
    return f"{value:,.0f} µs" if value >= 100 else f"{value:,.1f} µs"


def render(result: dict[str, Any]) -> str:
    """The ``## overhead`` section."""
    lines = [
        SECTION,
        "",
        f"`{result['command']}` ({result['calls']} calls per size, each adding one step; "
        f"window {result['window']:,} tokens: nothing compacts; best of {result['repeats']} runs; "
        f"Python {result['python']})",
        "",
        "Median cost of one call (mean and p90 of that run in parentheses): abridged's "
        "`ContextManager.prepare` on OpenAI dicts against LangChain's `SummarizationMiddleware`"
        ".before_model (fake model, trigger never reached) on the same history.",
        "",
        "| messages | abridged | baseline (LangChain) | speedup |",
        "| ---: | ---: | ---: | ---: |",
    ]
    for row in result["sizes"]:
        ours = row["abridged"]
        base = row.get("baseline")
        ours_text = f"{_us(ours['median_us'])} ({_us(ours['mean_us'])}, {_us(ours['p90_us'])})"
        if base is not None:
            base_text = f"{_us(base['median_us'])} ({_us(base['mean_us'])}, {_us(base['p90_us'])})"
            speed = f"{row['speedup']:,.0f}x"
        else:
            base_text, speed = "not run", "-"
        lines.append(f"| {row['messages']:,} | {ours_text} | {base_text} | {speed} |")
    lines.append("")
    flat = result["flat_ratio"]
    speedup = result.get("speedup_at_10k")
    lines.append("Targets:")
    lines.append(
        f"- flat: largest / smallest size median {flat:.2f}x (target <= 2x: "
        f"{'met' if flat <= 2 else 'missed'})"
    )
    if speedup is not None:
        lines.append(
            f"- speedup at 10,000 messages {speedup:,.0f}x (target >= 100x: "
            f"{'met' if speedup >= 100 else 'missed'})"
        )
    else:
        lines.append("- speedup at 10,000 messages: not measured")
    return "\n".join(lines) + "\n"


def _best(runs: Sequence[dict[str, float]]) -> dict[str, float]:
    """The run with the lowest median: the one least disturbed by other work on the machine."""
    return min(runs, key=lambda r: r["median_us"])


def measure(
    sizes: Sequence[int],
    calls: int,
    *,
    baseline: bool,
    repeats: int,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Run both sides on every size, ``repeats`` times each (the baseline once from 100,000
    messages: a run takes seconds there); the figures as plain data."""
    rows: list[dict[str, Any]] = []
    for size in sizes:
        ours = _best([_stats(run_abridged(size, calls)) for _ in range(repeats)])
        row: dict[str, Any] = {"messages": size, "abridged": ours}
        if baseline:
            times = repeats if size < 100_000 else 1
            base = _best([_stats(run_baseline(size, calls)) for _ in range(times)])
            row["baseline"] = base
            row["speedup"] = base["median_us"] / ours["median_us"]
        rows.append(row)
        log(
            f"{size:>7,} messages: abridged {_us(ours['median_us'])}"
            + (f", baseline {_us(row['baseline']['median_us'])}" if baseline else "")
        )
    medians = [r["abridged"]["median_us"] for r in rows]
    at_10k = next((r for r in rows if r["messages"] == 10_000), None)
    return {
        "sizes": rows,
        "flat_ratio": max(medians) / min(medians) if medians else float("nan"),
        "speedup_at_10k": at_10k.get("speedup") if at_10k is not None else None,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--calls", type=int, default=50, help="calls per size (default 50)")
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs per size, the best kept (default 3)"
    )
    add_output_options(parser)
    parser.add_argument("--no-baseline", action="store_true", help="skip LangChain")
    args = parser.parse_args(argv)
    if args.calls < 1 or args.repeats < 1 or any(size < 10 for size in args.sizes):
        parser.error("--calls and --repeats must be >= 1 and every size >= 10")
    baseline = not args.no_baseline and baseline_available()
    if not args.no_baseline and not baseline:
        print("langchain is not installed: the baseline is skipped", file=sys.stderr)
    figures = measure(
        args.sizes,
        args.calls,
        baseline=baseline,
        repeats=args.repeats,
        log=lambda s: print(s, file=sys.stderr),
    )
    command = "python bench/overhead.py"
    if list(args.sizes) != list(DEFAULT_SIZES):
        command += " --sizes " + " ".join(str(s) for s in args.sizes)
    if args.calls != 50:
        command += f" --calls {args.calls}"
    if args.repeats != 3:
        command += f" --repeats {args.repeats}"
    result = {
        "command": command,
        "calls": args.calls,
        "repeats": args.repeats,
        "window": WINDOW,
        "python": platform.python_version(),
        **figures,
    }
    table = render(result)
    print(table)
    save_section(args, table)
    if args.json:
        out = {
            "speedup_at_10k": result["speedup_at_10k"],
            "flat_ratio": result["flat_ratio"],
            "sizes": {
                str(row["messages"]): {
                    "abridged_us": row["abridged"]["median_us"],
                    "abridged_mean_us": row["abridged"]["mean_us"],
                    "abridged_p90_us": row["abridged"]["p90_us"],
                    "baseline_us": row.get("baseline", {}).get("median_us"),
                    "speedup": row.get("speedup"),
                }
                for row in result["sizes"]
            },
            "calls": args.calls,
        }
        print(json.dumps(out))
    return result


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
