"""Benchmark: prompt-cache reads and billed input cost of real sessions replayed over HTTP.

    .venv/bin/python bench/cache.py [--data PATH] [--limit N] [--workers N] [--json]
                                    [--no-results] [--results PATH]

Each session of ``--data`` is replayed call by call against the local provider
(``abridged.testing.ProviderServer``: OpenAI's prompt-cache rule, o200k counts) through the OpenAI
Chat Completions adapter (``abridged.providers.openai.OpenAIChatModel``, the official SDK, real
HTTP, streaming). The server is scripted to answer each call with the recorded assistant message;
the recorded message and the recorded observations are then appended to the history, so every
variant sees the same conversation. Three variants, in the same run:

- **abridged**: ``ContextManager`` (16k window = 16,384 tokens, 4,096 max output, default
  settings, extractive summarizer) prepares each context and is given the server's usage after
  each call; the server enforces the 16k window (an overflow would go through
  ``recover_overflow`` and one retry, and is counted).
- **upper bound**: no compaction, the server's window set huge: the whole history every call.
- **summary-first every turn**: the same manager, but from its first compaction on it is made to
  compact again before every call (``compact()``: the summary is re-made with the newest steps
  folded in and the cut moved), so the context is rebuilt summary-first each call and its prefix
  changes: a naive compactor.

mini-swe-agent sessions are text-protocol: the adapter sends them as their text, so the server
sees the original user/assistant messages. The server's prompt cache is reset before each
session of each variant (results do not depend on the order or on ``--workers``).

Reported per variant: the share of prompt tokens read from the cache, overall and outside the
calls right after a prune or compaction (the call whose prefix changed: ``Prepared.changed``,
or a retry after an overflow); the billed input cost in input-token units (uncached 1x, cache
reads 0.1x, cache writes 1.25x; the OpenAI API reports no writes, so a second column bills every
uncached token as a write, as a provider with explicit cache writes would). Target: outside the
calls right after a prune or compaction, abridged's cache-read share is >= 90% and within 5
points of the upper bound. The table goes to stdout and to the ``## cache`` section of
``bench/RESULTS.md``; with ``--json`` the last line is one JSON object (``cache_read_share``,
``upper_bound_share``, ...).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import multiprocessing
import os
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from abridged.core.budget import compute_budget  # noqa: E402
from abridged.core.model import Message  # noqa: E402
from abridged.errors import ContextOverflowError  # noqa: E402
from abridged.formats.transcripts import Transcript, load_transcripts  # noqa: E402
from abridged.runtime.context_manager import ContextManager  # noqa: E402
from results import add_output_options, save_section  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "swebench-gemini3" / "trajectories.jsonl"
SECTION = "## cache"
WINDOW = 16_384
MAX_OUTPUT = 4_096
HUGE_WINDOW = 100_000_000
MODEL = "bench-model"
STREAM_CHUNK = 512
READ_PRICE = 0.1
WRITE_PRICE = 1.25
TARGET_SHARE = 0.90
TARGET_GAP = 0.05
VARIANTS = ("abridged", "upper", "naive")
LABELS = {
    "abridged": "abridged (16k)",
    "upper": "upper bound: no compaction, unlimited window",
    "naive": "summary-first rebuilt every call (16k)",
}


@dataclass(slots=True)
class Call:
    """One request the server answered."""

    prompt: int
    cached: int
    written: int
    after_change: bool
    retry: bool = False


@dataclass(slots=True)
class Run:
    """One session replayed in one variant."""

    variant: str
    session: str
    calls: list[Call] = field(default_factory=list)
    compactions: int = 0
    prunes: int = 0
    overflows: int = 0
    failed: str | None = None


# -- the worker side ----------------------------------------------------------------------------

_TRANSCRIPTS: list[Transcript] = []
_WORKER: dict[str, Any] = {}


def _fast_server(stream_chunk: int) -> None:
    """Stream ``stream_chunk`` characters per delta instead of the local provider's 16: the SDK
    parses every streamed event into a model object, which otherwise dominates the run. Token
    counts and the cache are unchanged. The server has no switch for it, so its OpenAI module's
    chunking function is set here."""
    from abridged.testing import exchange, openai_api

    if stream_chunk != exchange.CHUNK_CHARS and hasattr(openai_api, "chunks"):

        def chunks(text: str, size: int = stream_chunk) -> Iterator[str]:
            return exchange.chunks(text, size)

        openai_api.chunks = chunks  # type: ignore[attr-defined]


def _init_worker(stream_chunk: int) -> None:
    from abridged.testing import ProviderServer

    _fast_server(stream_chunk)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    servers = {
        "small": ProviderServer(context_window=WINDOW, max_output=MAX_OUTPUT, model=MODEL).start(),
        "huge": ProviderServer(
            context_window=HUGE_WINDOW, max_output=MAX_OUTPUT, model=MODEL
        ).start(),
    }
    _WORKER.update(loop=loop, servers=servers, models={})


def _model(server: Any) -> Any:
    import openai

    from abridged.providers.openai import OpenAIChatModel

    models: dict[str, tuple[Any, Any]] = _WORKER["models"]
    key = server.base_url
    if key not in models:
        # the official SDK client, made here so that it can be closed (the adapter has no close)
        client = openai.AsyncOpenAI(base_url=server.base_url + "/v1", api_key="test", max_retries=0)
        model = OpenAIChatModel(MODEL, client=client, base_url=server.base_url + "/v1")
        models[key] = (model, client)
    return models[key][0]


def _close_worker() -> None:
    loop: asyncio.AbstractEventLoop = _WORKER["loop"]
    for _, client in _WORKER["models"].values():
        loop.run_until_complete(client.close())
    for server in _WORKER["servers"].values():
        server.stop()
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


def _stripped(message: Message) -> Message:
    """The recorded message without its recorded usage (the server reports its own)."""
    return message.replace(usage=None) if message.usage is not None else message


async def _replay(variant: str, transcript: Transcript) -> Run:
    from abridged.events.engine import CompactionEnded, Pruned
    from abridged.testing import Reply

    server = _WORKER["servers"]["huge" if variant == "upper" else "small"]
    model = _model(server)
    server.reset()
    run = Run(variant, transcript.id)
    cm = (
        ContextManager(context_window=WINDOW, max_output_tokens=MAX_OUTPUT, model=MODEL)
        if variant != "upper"
        else None
    )
    history: list[Message] = []

    async def send(context: Sequence[Message], reply: str) -> Any:
        server.set_replies([Reply(reply)])
        return await model.complete(context, max_output_tokens=MAX_OUTPUT)

    def record(after_change: bool, retry: bool = False) -> None:
        request = server.requests[-1]
        run.calls.append(
            Call(
                request.prompt_tokens,
                request.cached_tokens,
                request.cache_write_tokens,
                after_change,
                retry,
            )
        )

    def note(events: Sequence[Any]) -> None:
        for event in events:
            if isinstance(event, CompactionEnded) and event.status == "compacted":
                run.compactions += 1
            elif isinstance(event, Pruned):
                run.prunes += 1

    for message in transcript.messages:
        if message.role == "assistant" and (not history or history[-1].role != "assistant"):
            if cm is None:
                await send(history, message.text)
                record(False)
            else:
                prepared = await cm.aprepare(history)
                changed = prepared.changed
                note(prepared.events)
                if variant == "naive" and cm.state.compactions and not changed:
                    forced = await cm.acompact()
                    note(forced.events)
                    prepared = await cm.aprepare(history)
                    changed = forced.changed or prepared.changed
                try:
                    completion = await send(prepared.messages, message.text)
                    record(changed)
                except ContextOverflowError as e:
                    run.overflows += 1
                    recovered = await cm.arecover_overflow(e.tokens)
                    note(recovered.events)
                    try:
                        completion = await send(recovered.messages, message.text)
                    except ContextOverflowError as again:
                        run.failed = f"overflow after recovery: {again}"
                        return run
                    record(True, retry=True)
                cm.record_usage(completion.usage)
        history.append(_stripped(message))
    return run


def _session(index: int) -> list[dict[str, Any]]:
    transcript = _TRANSCRIPTS[index]
    loop: asyncio.AbstractEventLoop = _WORKER["loop"]
    out = []
    for variant in VARIANTS:
        run = loop.run_until_complete(_replay(variant, transcript))
        out.append(asdict(run))
    return out


# -- figures ----------------------------------------------------------------------------------


def _cost(calls: Sequence[Call]) -> tuple[float, float]:
    """(billed as recorded, billed with every uncached token written to the cache)."""
    recorded = 0.0
    write_all = 0.0
    for c in calls:
        uncached = c.prompt - c.cached - c.written
        recorded += uncached + READ_PRICE * c.cached + WRITE_PRICE * c.written
        write_all += READ_PRICE * c.cached + WRITE_PRICE * (c.prompt - c.cached)
    return recorded, write_all


def _share(calls: Sequence[Call]) -> float | None:
    prompt = sum(c.prompt for c in calls)
    return sum(c.cached for c in calls) / prompt if prompt else None


def prefix_breaks(calls: Sequence[Call]) -> int:
    """Calls outside a change whose cached tokens fall short of the whole previous request:
    the sent prefix was not byte-identical to the previous context (invariant 5 broken)."""
    from abridged.testing.cache import openai_cached
    from abridged.testing.counting import REPLY_PRIMING

    broken = 0
    for previous, call in itertools.pairwise(calls):
        if not call.after_change and call.cached < openai_cached(previous.prompt - REPLY_PRIMING):
            broken += 1
    return broken


def summarize(runs: Sequence[Run]) -> dict[str, Any]:
    budget = compute_budget(WINDOW, MAX_OUTPUT).input_budget
    out: dict[str, Any] = {}
    for variant in VARIANTS:
        mine = [r for r in runs if r.variant == variant]
        calls = [c for r in mine for c in r.calls]
        steady = [c for c in calls if not c.after_change]
        changed = [c for c in calls if c.after_change]
        cost, cost_write_all = _cost(calls)
        prompt = sum(c.prompt for c in calls)
        out[variant] = {
            "sessions": len(mine),
            "calls": len(calls),
            "prompt_tokens": prompt,
            "cached_tokens": sum(c.cached for c in calls),
            "share": _share(calls),
            "steady_share": _share(steady),
            "steady_calls": len(steady),
            "changed_calls": len(changed),
            "changed_share": _share(changed),
            "cost": cost,
            "cost_write_all": cost_write_all,
            "cost_per_prompt_token": cost / prompt if prompt else None,
            "compactions": sum(r.compactions for r in mine),
            "prunes": sum(r.prunes for r in mine),
            "overflows": sum(r.overflows for r in mine),
            "failed": [f"{r.session}: {r.failed}" for r in mine if r.failed],
            "max_prompt": max((c.prompt for c in calls), default=0),
            "max_prompt_ratio": max((c.prompt for c in calls), default=0) / budget,
            "over_budget": sum(1 for c in calls if c.prompt > budget),
            "prefix_breaks": sum(prefix_breaks(r.calls) for r in mine),
            "mean_prompt_steady": (sum(c.prompt for c in steady) / len(steady) if steady else None),
            "mean_uncached_steady": (
                sum(c.prompt - c.cached for c in steady) / len(steady) if steady else None
            ),
        }
    return out


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def render(result: dict[str, Any]) -> str:
    v = result["variants"]
    ours, upper, naive = v["abridged"], v["upper"], v["naive"]
    budget = result["input_budget"]
    lines = [
        SECTION,
        "",
        f"`{result['command']}` ({result['sessions']} sessions, {ours['calls']} calls per "
        f"variant, {result['workers']} worker(s), {result['seconds']:.0f} s)",
        "",
        "Each call sent through the OpenAI Chat adapter (official SDK, streaming, real HTTP) to "
        "the local provider (OpenAI prompt-cache rule: longest common prefix with one of the "
        "last four requests, rounded down to 128, none below 1,024; o200k counts), which answers "
        "with the recorded assistant message. The cache is reset before each session. 16k window "
        f"(16,384), 4,096 max output: input budget {budget:,}.",
        "",
        "| variant | calls | prompt tokens | cache-read share | share outside calls after "
        "a change | share on calls after a change | billed input (x input price) | billed, "
        "writes at 1.25x | compactions / prunes | max prompt / budget |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key in VARIANTS:
        row = v[key]
        over = row["max_prompt_ratio"] if key != "upper" else None
        lines.append(
            f"| {LABELS[key]} | {row['calls']:,} | {row['prompt_tokens']:,} | "
            f"{_f(row['share'])} | {_f(row['steady_share'])} ({row['steady_calls']:,} calls) | "
            f"{_f(row['changed_share'])} ({row['changed_calls']:,}) | {row['cost']:,.0f} | "
            f"{row['cost_write_all']:,.0f} | {row['compactions']} / {row['prunes']} | "
            f"{_f(over)} |"
        )
    share = result["cache_read_share"]
    bound = result["upper_bound_share"]
    gap = bound - share if share is not None and bound is not None else None
    met = share is not None and gap is not None and share >= TARGET_SHARE and gap <= TARGET_GAP
    lines += [
        "",
        f"- abridged: {ours['overflows']} overflow errors from the server, "
        f"{ours['over_budget']} requests above the input budget (max {ours['max_prompt']:,} "
        f"tokens); summary-first: {naive['overflows']} overflows, {naive['over_budget']} above "
        "the budget.",
        f"- billed input against the upper bound: abridged {ours['cost'] / upper['cost']:.3f}x, "
        f"summary-first {naive['cost'] / upper['cost']:.3f}x (writes at 1.25x: "
        f"{ours['cost_write_all'] / upper['cost_write_all']:.3f}x and "
        f"{naive['cost_write_all'] / upper['cost_write_all']:.3f}x).",
        "- *calls after a change*: the call right after a prune or compaction (its prefix "
        "changed), or the retry after an overflow; the upper bound has none.",
        "- outside changes, a call reads all but the new messages (and the rounding to 128) "
        "from the cache in every variant: uncached tokens per call "
        f"{ours['mean_uncached_steady']:,.0f} (abridged) vs "
        f"{upper['mean_uncached_steady']:,.0f} (upper bound), over a mean prompt of "
        f"{ours['mean_prompt_steady']:,.0f} vs {upper['mean_prompt_steady']:,.0f} tokens: the "
        "share is lower with the smaller context, the billed tokens too.",
        f"- prefix stability (invariant 5): calls outside a change that read less from the "
        f"cache than the whole previous request: abridged {ours['prefix_breaks']}, upper bound "
        f"{upper['prefix_breaks']}, summary-first {naive['prefix_breaks']}.",
        "",
        f"Target: outside the calls right after a prune or compaction, cache-read share >= "
        f"{TARGET_SHARE:.2f} and within {TARGET_GAP * 100:.0f} points of the upper bound: "
        f"{_f(share)} vs {_f(bound)} (gap {_f(gap)} = {(gap or 0) * 100:.1f} points): "
        f"{'met' if met else 'missed'}.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None, help="only the first N sessions")
    parser.add_argument(
        "--workers", type=int, default=min(2, os.cpu_count() or 1), help="processes (default 2)"
    )
    parser.add_argument(
        "--stream-chunk",
        type=int,
        default=STREAM_CHUNK,
        help=f"characters per streamed delta from the local provider (default {STREAM_CHUNK}; "
        "the server's own is 16)",
    )
    add_output_options(parser)
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be >= 1")
    if args.workers < 1 or args.stream_chunk < 1:
        parser.error("--workers and --stream-chunk must be >= 1")

    started = time.perf_counter()
    transcripts = load_transcripts(args.data)
    if args.limit is not None:
        transcripts = transcripts[: args.limit]
    _TRANSCRIPTS[:] = transcripts
    gc.freeze()  # the loaded sessions never die: keep them out of every collection
    # longest first, so that the workers finish together
    order = sorted(range(len(transcripts)), key=lambda i: -len(transcripts[i].messages))
    rows: list[dict[str, Any]] = []
    workers = min(args.workers, max(1, len(transcripts)))
    if workers == 1:
        _init_worker(args.stream_chunk)
        try:
            for i in order:
                rows.extend(_session(i))
        finally:
            _close_worker()
    else:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(
            workers, mp_context=context, initializer=_init_worker, initargs=(args.stream_chunk,)
        ) as pool:
            for chunk in pool.map(_session, order):
                rows.extend(chunk)
    runs = [Run(**{k: v for k, v in r.items() if k != "calls"}) for r in rows]
    for run, row in zip(runs, rows, strict=True):
        run.calls = [Call(**c) for c in row["calls"]]
    variants = summarize(runs)
    seconds = time.perf_counter() - started
    command = "python bench/cache.py"
    if args.data != DEFAULT_DATA:
        command += f" --data {args.data}"
    if args.limit is not None:
        command += f" --limit {args.limit}"
    result: dict[str, Any] = {
        "command": command,
        "sessions": len(transcripts),
        "workers": workers,
        "seconds": seconds,
        "input_budget": compute_budget(WINDOW, MAX_OUTPUT).input_budget,
        "variants": variants,
        "cache_read_share": variants["abridged"]["steady_share"],
        "upper_bound_share": variants["upper"]["share"],
    }
    table = render(result)
    print(table)
    save_section(args, table)
    if args.json:
        ours, upper, naive = (variants[k] for k in VARIANTS)
        out = {
            "cache_read_share": result["cache_read_share"],
            "upper_bound_share": result["upper_bound_share"],
            "gap": (
                result["upper_bound_share"] - result["cache_read_share"]
                if result["cache_read_share"] is not None
                and result["upper_bound_share"] is not None
                else None
            ),
            "cache_read_share_all_calls": ours["share"],
            "naive_share": naive["share"],
            "cost": ours["cost"],
            "upper_bound_cost": upper["cost"],
            "naive_cost": naive["cost"],
            "cost_write_all": ours["cost_write_all"],
            "upper_bound_cost_write_all": upper["cost_write_all"],
            "naive_cost_write_all": naive["cost_write_all"],
            "calls": ours["calls"],
            "sessions": result["sessions"],
            "overflows": ours["overflows"],
            "over_budget": ours["over_budget"],
            "max_prompt_ratio": ours["max_prompt_ratio"],
            "prefix_breaks": ours["prefix_breaks"],
            "variants": variants,
            "seconds": seconds,
        }
        print(json.dumps(out))
    return result


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
