"""Benchmark: what each context policy costs and whether it overflows, abridged against the peers.

    .venv/bin/python bench/policies.py [--data PATH] [--limit N] [--windows 16k,32k]
                                       [--policies a,b] [--workers N] [--json]
                                       [--no-results] [--results PATH]

Every session of ``--data`` is replayed call by call through each policy (``policy_kit``
describes the interface), at each window of ``--windows`` (4,096 tokens kept for the reply),
against one simulated provider:

- **Ruler**: the context is written as an OpenAI Chat request (``messages_to_openai``) and
  counted as the local provider counts it (``abridged.testing.counting``: o200k, per-message
  overhead, reply priming). The same ruler for every policy; a policy's own estimate may differ.
- **Limit**: a context over ``window - 4,096`` tokens is rejected (``Rejected``); the policy runs
  its own recovery once and the call is retried once. A call still over after that is counted in
  ``still_over`` (nothing is billed for it) and the session goes on.
- **Cache**: OpenAI's automatic prefix cache (``abridged.testing.cache.OpenAICache``: the longest
  common prefix with one of the last four requests, in 128-token steps from 1,024). Summary
  requests go through the same cache.
- **Usage**: each sent call reports ``Usage(input=uncached, cache_read=cached, output=the
  recorded reply's output tokens)`` to the policy.
- **Summarizer**: the same for every policy, abridged's extractive summarizer (deterministic, no
  model) at the ceiling the policy asks for. What differs is the *request* each policy would send
  its model for the summary (``Kit.summarize``'s ``request``): it is counted and cached like a
  call. abridged's request is the one its ``LLMSummarizer`` builds (the bench model bills it,
  then fails, so the extractive fallback writes the same summary as for the peers).

The policies:

- ``none``: no compaction, the whole history every call, no limit: the baseline of the ratios.
- ``abridged``: ``ContextManager`` with its defaults, the provider's usage after each call, its
  summarizer the conversation's own model (``summarizer=`` a ``ChatModel`` named like ``model=``).
- ``abridged-replay``: the same manager fed as ``abridged replay`` feeds it: the recorded
  provider usage while the context is the recorded one, no usage after its first compaction.
- ``codex``, ``pi``, ``opencode``, ``langchain``: re-implementations of the peers (modules
  ``peer_codex``, ``peer_pi``, ``peer_opencode``, ``peer_langchain``; each cites its sources).

Reported per window and policy: calls, contexts rejected and ``still_over`` after recovery,
compactions and prunes, the cache-read share of the calls' input, the billed input relative to
``none`` (uncached tokens at 1, cache reads at 0.1) with every summary request billed at 1
(``billed_vs_none``) and with summary requests reading the cache like calls
(``billed_cache_aware_vs_none``), and the policy's own time per call (the shared ruler and
summarizer excluded). The table goes to stdout and to the ``## policies`` section of
``bench/RESULTS.md``; with ``--json`` the last line is one JSON object
``{"windows": {"16k": {"policies": {name: {...}}}, ...}, ...}``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import multiprocessing
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from abridged.core.budget import BudgetSettings, compute_budget, parse_token_size  # noqa: E402
from abridged.core.model import Message, Usage  # noqa: E402
from abridged.core.protocols import Completion, SummaryRequest, ToolSpec  # noqa: E402
from abridged.engine.compaction_settings import CompactionSettings  # noqa: E402
from abridged.engine.summarize.extractive import ExtractiveSummarizer  # noqa: E402
from abridged.errors import SettingError  # noqa: E402
from abridged.formats.openai_chat import messages_to_openai  # noqa: E402
from abridged.formats.transcripts import Transcript, load_transcripts  # noqa: E402
from abridged.runtime.context_manager import ContextManager  # noqa: E402
from abridged.testing.cache import OpenAICache  # noqa: E402
from abridged.testing.counting import REPLY_PRIMING, TokenCounter, chat_segments  # noqa: E402
from policy_kit import Kit, Policy, Rejected, Window  # noqa: E402
from results import add_output_options, save_section  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "swebench-gemini3" / "trajectories.jsonl"
SECTION = "## policies"
MAX_OUTPUT = 4_096
MODEL = "bench-model"
READ_PRICE = 0.1
UNLIMITED = 1 << 40
DEFAULT_WINDOWS = ("16k", "32k")
PEERS = {
    "codex": "peer_codex",
    "pi": "peer_pi",
    "opencode": "peer_opencode",
    "langchain": "peer_langchain",
}
T = TypeVar("T")
POLICIES = ("none", "abridged", "abridged-replay", *PEERS)


# -- the simulated provider --------------------------------------------------------------------


class Ruler:
    """Counts a context as the local provider counts an OpenAI Chat request (memoized texts)."""

    def __init__(self) -> None:
        self.counter = TokenCounter("o200k")
        self._known: dict[str, int] = {}

    def segments(self, messages: Sequence[Message]) -> list[Any]:
        """The measured blocks of ``messages`` sent as one request."""
        blocks = chat_segments({"model": MODEL, "messages": messages_to_openai(messages)})
        known = self._known
        fresh = list({s.text for s in blocks if s.text not in known})
        if fresh:
            known.update(zip(fresh, self.counter.count(fresh), strict=True))
        return [replace(s, tokens=known[s.text] + s.extra) for s in blocks]

    @staticmethod
    def total(blocks: Sequence[Any]) -> int:
        """``prompt_tokens`` of measured blocks."""
        return sum(b.tokens for b in blocks) + REPLY_PRIMING


@dataclass
class Tally:
    """What one policy cost on one session (or many, summed)."""

    calls: int = 0
    rejected: int = 0
    still_over: int = 0
    compactions: int = 0
    prunes: int = 0
    prompt: int = 0
    cached: int = 0
    summary_requests: int = 0
    summary_prompt: int = 0
    summary_cached: int = 0
    seconds: float = 0.0
    shared_seconds: float = 0.0
    failed: int = 0

    def add(self, other: Tally) -> None:
        """Sum ``other`` into this one."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def billed(self, *, cache_aware: bool) -> float:
        """Billed input: calls (cache reads at 0.1) plus summary requests."""
        calls = self.prompt - self.cached + READ_PRICE * self.cached
        if cache_aware:
            summaries = self.summary_prompt - self.summary_cached + READ_PRICE * self.summary_cached
        else:
            summaries = float(self.summary_prompt)
        return calls + summaries


class Provider:
    """The simulated provider of one session: limit, cache and bills (see the module docstring)."""

    def __init__(self, ruler: Ruler, limit: int, tally: Tally) -> None:
        self.ruler = ruler
        self.limit = limit
        self.tally = tally
        self.cache = OpenAICache(ruler.counter)

    def send(self, messages: Sequence[Message]) -> tuple[int, int]:
        """Send one call: ``(prompt tokens, cached tokens)``, or ``Rejected`` over the limit."""
        blocks = self.ruler.segments(messages)
        tokens = self.ruler.total(blocks)
        if tokens > self.limit:
            raise Rejected(tokens, self.limit)
        cached = min(self.cache.lookup(MODEL, blocks).read, tokens)
        self.tally.calls += 1
        self.tally.prompt += tokens
        self.tally.cached += cached
        return tokens, cached

    def bill_summary(self, request: Sequence[Message]) -> None:
        """A summary request: counted and cached like a call, billed apart."""
        blocks = self.ruler.segments(request)
        tokens = self.ruler.total(blocks)
        cached = min(self.cache.lookup(MODEL, blocks).read, tokens)
        self.tally.summary_requests += 1
        self.tally.summary_prompt += tokens
        self.tally.summary_cached += cached


class BenchKit:
    """The ``Kit`` of one run: the ruler, and the shared summarizer with its request billed."""

    def __init__(self, window: Window, provider: Provider) -> None:
        self.window = window
        self.provider = provider
        self._summarizer = ExtractiveSummarizer()

    def count(self, messages: Sequence[Message]) -> int:
        """Tokens of ``messages`` as the provider counts them."""
        started = time.perf_counter()
        try:
            return self.provider.ruler.total(self.provider.ruler.segments(messages))
        finally:
            self.provider.tally.shared_seconds += time.perf_counter() - started

    def summarize(
        self,
        messages: Sequence[Message],
        *,
        previous: str | None,
        request: Sequence[Message],
        max_tokens: int,
    ) -> str:
        """The shared summarizer's summary; ``request`` billed like a call."""
        started = time.perf_counter()
        self.provider.bill_summary(request)
        self.provider.tally.shared_seconds += time.perf_counter() - started
        summary = asyncio.run(
            self._summarizer.summarize(
                SummaryRequest(
                    messages=tuple(messages),
                    kind="update" if previous else "initial",
                    previous_summary=previous,
                    max_tokens=max(1, max_tokens),
                )
            )
        )
        return summary.text


def time_extractive_summaries(tallies: list[Tally]) -> None:
    """Count the time of every extractive summary as the shared summarizer's (in
    ``tallies[-1].shared_seconds``): it is the same for every policy, abridged's included,
    whose fallback summarizer the manager makes itself (and runs in a worker thread)."""
    original = ExtractiveSummarizer.build
    if getattr(original, "timed", False):
        return

    def build(self: ExtractiveSummarizer, request: SummaryRequest) -> Any:
        started = time.perf_counter()
        try:
            return original(self, request)
        finally:
            if tallies:
                tallies[-1].shared_seconds += time.perf_counter() - started

    build.timed = True  # type: ignore[attr-defined]
    ExtractiveSummarizer.build = build  # type: ignore[method-assign]


# -- the policies of this module -----------------------------------------------------------------


class NoCompaction:
    """The whole history every call."""

    name = "none"

    def __init__(self, kit: Kit) -> None:
        self.history: list[Message] = []

    def prepare(self, new: Sequence[Message]) -> list[Message]:
        self.history.extend(new)
        return list(self.history)

    def observe(self, usage: Usage) -> None:
        pass

    def recover(self, error: Rejected) -> list[Message] | None:
        return None

    def stats(self) -> dict[str, int]:
        return {"compactions": 0, "prunes": 0}


class SummaryRequestModel:
    """abridged's summarizer model in the bench: bills the request its ``LLMSummarizer`` builds,
    then fails, so that the extractive fallback writes the summary (the peers' summarizer)."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        self.requests = 0

    @property
    def name(self) -> str:
        return MODEL

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        started = time.perf_counter()
        self.provider.bill_summary(messages)
        self.requests += 1
        self.provider.tally.shared_seconds += time.perf_counter() - started
        raise RuntimeError("bench: the summary text comes from the shared summarizer")

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> AsyncIterator[Any]:
        yield await self.complete(messages, tools=tools, max_output_tokens=max_output_tokens)


def variant_settings(text: str) -> tuple[BudgetSettings, CompactionSettings]:
    """The budget and compaction settings of ``name=value,...`` (``trigger_ratio=0.9,
    prune_enabled=false``): what a variant ``abridged:...`` of ``--policies`` tries instead of
    the defaults."""
    values: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, _, value = item.partition("=")
        if key in BudgetSettings.__dataclass_fields__:
            target = values[0]
        elif key in CompactionSettings.__dataclass_fields__:
            target = values[1]
        else:
            raise argparse.ArgumentTypeError(f"abridged:{text}: no setting {key!r}")
        if value.lower() in ("true", "false"):
            target[key] = value.lower() == "true"
            continue
        try:
            number = float(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"abridged:{text}: {key}={value!r}") from exc
        target[key] = int(number) if number.is_integer() and "ratio" not in key else number
    try:
        return BudgetSettings(**values[0]), CompactionSettings(**values[1])
    except SettingError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


class Abridged:
    """abridged's ``ContextManager`` with its defaults (``replay=True``: fed as replay feeds it;
    ``budget``: other budget settings, for a variant)."""

    def __init__(
        self,
        kit: Kit,
        provider: Provider,
        *,
        replay: bool = False,
        budget: BudgetSettings | None = None,
        settings: CompactionSettings | None = None,
    ) -> None:
        self.name = "abridged-replay" if replay else "abridged"
        self.replay = replay
        self.model = SummaryRequestModel(provider)
        self.manager = ContextManager(
            context_window=kit.window.tokens,
            max_output_tokens=kit.window.max_output,
            model=MODEL,
            format="abridged",
            summarizer=self.model,
            budget=budget,
            settings=settings,
        )
        self.history: list[Message] = []
        self.prunes = 0

    def _note(self, events: Sequence[Any]) -> None:
        self.prunes += sum(1 for e in events if e.kind == "pruned")

    def prepare(self, new: Sequence[Message]) -> list[Message]:
        for message in new:
            # the recorded usage is another provider's count of another context: replay keeps
            # it while the context is the recorded one, the library is told the bench's own
            keep = self.replay and self.manager.state.epoch == 0
            self.history.append(
                message if keep or message.usage is None else message.replace(usage=None)
            )
        prepared = self.manager.prepare(self.history)
        self._note(prepared.events)
        return list(prepared.messages)

    def observe(self, usage: Usage) -> None:
        if not self.replay:
            self.manager.record_usage(usage)

    def recover(self, error: Rejected) -> list[Message] | None:
        prepared = self.manager.recover_overflow(error.tokens)
        self._note(prepared.events)
        return list(prepared.messages)

    def stats(self) -> dict[str, int]:
        return {"compactions": self.manager.state.compactions, "prunes": self.prunes}


def make_policy(name: str, kit: Kit, provider: Provider) -> Policy:
    """The policy called ``name`` for one session."""
    if name == "none":
        return NoCompaction(kit)
    base, _, variant = name.partition(":")
    if base in ("abridged", "abridged-replay"):
        budget, settings = variant_settings(variant) if variant else (None, None)
        return Abridged(
            kit, provider, replay=base == "abridged-replay", budget=budget, settings=settings
        )
    module = importlib.import_module(PEERS[name])
    policy: Policy = module.make(kit)
    return policy


# -- one session ---------------------------------------------------------------------------------


def _output_tokens(message: Message, ruler: Ruler) -> int:
    if message.usage is not None:
        return message.usage.output
    return ruler.total(ruler.segments([message])) - REPLY_PRIMING


def _timed(tally: Tally, step: Callable[[Any], T], argument: Any) -> T:
    """``step(argument)``, its time added to the policy's own (``tally.seconds``)."""
    started = time.perf_counter()
    try:
        return step(argument)
    finally:
        tally.seconds += time.perf_counter() - started


def run_session(transcript: Transcript, policy_name: str, window: Window, ruler: Ruler) -> Tally:
    """Replay one session through one policy at one window."""
    tally = Tally()
    limit = UNLIMITED if policy_name == "none" else window.limit
    provider = Provider(ruler, limit, tally)
    kit = BenchKit(window, provider)
    policy = make_policy(policy_name, kit, provider)
    _ACTIVE[:] = [tally]
    messages = transcript.messages
    fed = 0
    for index, message in enumerate(messages):
        if message.role != "assistant" or (index > 0 and messages[index - 1].role == "assistant"):
            continue
        context = _timed(tally, policy.prepare, messages[fed:index])
        fed = index
        try:
            tokens, cached = provider.send(context)
        except Rejected as error:
            tally.rejected += 1
            retry = _timed(tally, policy.recover, error)
            try:
                if retry is None:
                    raise error
                tokens, cached = provider.send(retry)
            except Rejected:
                tally.still_over += 1
                continue
        usage = Usage(
            input=tokens - cached, output=_output_tokens(message, ruler), cache_read=cached
        )
        _timed(tally, policy.observe, usage)
    stats = policy.stats()
    tally.compactions = int(stats.get("compactions", 0))
    tally.prunes = int(stats.get("prunes", 0))
    _ACTIVE.clear()
    return tally


# -- the run -------------------------------------------------------------------------------------

_TRANSCRIPTS: list[Transcript] = []
_RULER: list[Ruler] = []
_ACTIVE: list[Tally] = []  # the run whose shared summarizer time is being counted


def _job(job: tuple[int, str, str, int]) -> tuple[str, str, dict[str, Any]]:
    index, policy_name, window_name, tokens = job
    if not _RULER:
        _RULER.append(Ruler())
        time_extractive_summaries(_ACTIVE)
    window = Window(window_name, tokens, MAX_OUTPUT)
    try:
        tally = run_session(_TRANSCRIPTS[index], policy_name, window, _RULER[0])
    except Exception as exc:  # a policy that crashes on a session is counted, not fatal
        print(f"{policy_name} at {window_name} failed on session {index}: {exc!r}", file=sys.stderr)
        tally = Tally(failed=1)
    return window_name, policy_name, asdict(tally)


def figures(tally: Tally, none: Tally) -> dict[str, Any]:
    """One policy's reported figures against the baseline's bill."""
    base = none.billed(cache_aware=False)
    calls = max(1, tally.calls)
    return {
        "calls": tally.calls,
        "rejected": tally.rejected,
        "still_over": tally.still_over,
        "failed_sessions": tally.failed,
        "compactions": tally.compactions,
        "prunes": tally.prunes,
        "summary_requests": tally.summary_requests,
        "summary_tokens": tally.summary_prompt,
        "summary_cached": tally.summary_cached,
        "prompt_tokens": tally.prompt,
        "cache_read_share": round(tally.cached / tally.prompt, 4) if tally.prompt else None,
        "billed_vs_none": round(tally.billed(cache_aware=False) / base, 4) if base else None,
        "billed_cache_aware_vs_none": (
            round(tally.billed(cache_aware=True) / base, 4) if base else None
        ),
        "ms_per_call": round((tally.seconds - tally.shared_seconds) * 1000 / calls, 4),
    }


def render(result: dict[str, Any]) -> str:
    """The ``## policies`` section."""
    lines = [
        SECTION,
        "",
        f"`{result['command']}`: {result['sessions']} sessions, {result['seconds']:.0f} s. "
        "Billed input: uncached tokens at 1, cache reads at 0.1; summary requests at 1 "
        "(`vs none`) or reading the cache like calls (`cache-aware`). `ms/call`: the policy's "
        "own time, ruler and summarizer excluded.",
    ]
    for window, data in result["windows"].items():
        lines += [
            "",
            f"### {window} window (limit {data['limit']:,} input tokens)",
            "",
            "| policy | calls | rejected | still over | compactions | prunes | cache-read share "
            "| billed vs none | cache-aware | ms/call |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name, f in data["policies"].items():
            share = "-" if f["cache_read_share"] is None else f"{f['cache_read_share']:.3f}"
            failed = f" ({f['failed_sessions']} failed)" if f["failed_sessions"] else ""
            lines.append(
                f"| {name}{failed} | {f['calls']:,} | {f['rejected']:,} | {f['still_over']:,} "
                f"| {f['compactions']:,} | {f['prunes']:,} | {share} | {f['billed_vs_none']:.3f} "
                f"| {f['billed_cache_aware_vs_none']:.3f} | {f['ms_per_call']:.3f} |"
            )
    return "\n".join(lines) + "\n"


def _names(allowed: Sequence[str]) -> Callable[[str], list[str]]:
    def parse(text: str) -> list[str]:
        # ';' separates variants (their settings hold commas); ',' plain names
        names = [n.strip() for n in text.split(";" if ";" in text or ":" in text else ",")]
        names = [n for n in names if n]
        for name in names:
            base, _, variant = name.partition(":")
            if variant and base in ("abridged", "abridged-replay"):
                variant_settings(variant)
        unknown = [n for n in names if n.partition(":")[0] not in allowed]
        if unknown or not names:
            raise argparse.ArgumentTypeError(
                f"unknown {', '.join(unknown) or 'empty list'}: choose from {', '.join(allowed)}"
            )
        return names

    return parse


def _windows(text: str) -> list[tuple[str, int]]:
    out = []
    for name in (n.strip() for n in text.split(",")):
        try:
            tokens = parse_token_size(name, name="--windows")
        except SettingError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from exc
        if tokens <= MAX_OUTPUT + 1_024:
            raise argparse.ArgumentTypeError(f"--windows: {name} leaves no room for input")
        out.append((name, tokens))
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None, help="only the first N sessions")
    parser.add_argument("--windows", type=_windows, default=_windows(",".join(DEFAULT_WINDOWS)))
    parser.add_argument(
        "--policies",
        type=_names(POLICIES),
        default=list(POLICIES),
        help=f"comma-separated, of {', '.join(POLICIES)} (default all); a variant of abridged "
        "with other budget settings: 'abridged:trigger_ratio=0.9,target_ratio=0.3', several "
        "separated by ';'",
    )
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    add_output_options(parser)
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be >= 1")
    if args.workers < 1:
        parser.error("--workers must be >= 1")
    names = list(dict.fromkeys(["none", *args.policies]))
    for name in names:  # a variant's sizes must fit every window of the run
        variant = name.partition(":")[2]
        for window, tokens in args.windows if variant else ():
            try:
                compute_budget(tokens, MAX_OUTPUT, variant_settings(variant)[0])
            except SettingError as exc:
                parser.error(f"--policies {name} at {window}: {exc}")

    started = time.perf_counter()
    transcripts = load_transcripts(args.data)
    if args.limit is not None:
        transcripts = transcripts[: args.limit]
    _TRANSCRIPTS[:] = transcripts
    # the longest sessions first, so that the workers finish together
    order = sorted(range(len(transcripts)), key=lambda i: -len(transcripts[i].messages))
    jobs = [(i, n, w, t) for i in order for w, t in args.windows for n in names]
    tallies: dict[str, dict[str, Tally]] = {w: {n: Tally() for n in names} for w, _ in args.windows}
    if args.workers == 1:
        done = map(_job, jobs)
        for window, name, row in done:
            tallies[window][name].add(Tally(**row))
    else:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(args.workers, mp_context=context) as pool:
            for window, name, row in pool.map(_job, jobs, chunksize=4):
                tallies[window][name].add(Tally(**row))
    seconds = time.perf_counter() - started
    command = "python bench/policies.py"
    if args.data != DEFAULT_DATA:
        command += f" --data {args.data}"
    if args.limit is not None:
        command += f" --limit {args.limit}"
    windows = {}
    for window, tokens in args.windows:
        none = tallies[window]["none"]
        windows[window] = {
            "tokens": tokens,
            "limit": tokens - MAX_OUTPUT,
            "policies": {n: figures(tallies[window][n], none) for n in names},
        }
    result: dict[str, Any] = {
        "command": command,
        "sessions": len(transcripts),
        "seconds": round(seconds, 1),
        "windows": windows,
    }
    table = render(result)
    print(table)
    save_section(args, table)
    if args.json:
        print(json.dumps(result))
    return result


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
