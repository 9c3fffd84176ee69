"""Benchmark: abridged inside LangChain, pydantic-ai and the OpenAI Agents SDK, against each
framework's own way of keeping a long run inside the window, on real agent sessions.

    .venv/bin/python bench/frameworks.py [--data PATH] [--canaries PATH] [--limit N]
                                         [--window 16k] [--frameworks langchain,...]
                                         [--placements user,tool,assistant] [--json]
                                         [--no-results] [--results PATH]

**What runs.** Each session of ``--data`` (the shared mini-swe-agent sessions by default, first
``--limit`` of them: 3) gets the canaries of ``--canaries`` planted as ``bench/retention.py``
plants them (``insert_canaries``, one pass per placement: a user message, inside a tool output,
in the agent's own words). The seeded session is then *driven through each framework's real
agent loop*: a local provider (``abridged.testing.ProviderServer``, real HTTP, the window
``--window`` with 4,096 tokens of output, its real overflow and tool-pairing checks, prompt-cache
accounting) answers each model call with the session's next recorded assistant step (its bash
call), and the framework's ``bash`` tool returns the recorded output. A user message (the task,
a planted user canary) starts a new run of the agent on the same history (a LangGraph thread, a
pydantic-ai ``message_history``, an Agents SDK session); a step without a tool call ends a run.

**The variants, per framework** (the same window, the same stand-in summarizer where a built-in
takes a model: abridged's ``ExtractiveSummarizer``):

- ``langchain``: *built-in* ``SummarizationMiddleware`` (its token counter, its default
  ``keep=("messages", 20)``; the trigger at abridged's trigger, so both start at the same size;
  its ``summarizer`` the extractive one) against *abridged* ``AbridgedMiddleware``;
- ``pydantic_ai``: *built-in* the history processor of pydantic-ai's documentation (keep the
  most recent messages, here as many as fit the input budget by abridged's estimate), run with
  ``ProcessHistory``, against *abridged* ``AbridgedCapability``;
- ``openai_agents``: *built-in* the SDK's session trimming (``SQLiteSession`` with
  ``SessionSettings(limit=20)``: the last 20 items at the start of each run) against *abridged*
  ``AbridgedSession`` with ``AbridgedInputFilter``.

**Figures**, from the requests the provider received (what each framework really sent):

- ``pairing_errors``: requests the provider rejected for a tool call without its result or a
  result without its call (or that abridged's ``validate_messages`` finds unpaired);
- ``over_budget``: requests above the input budget (window minus output), the ones the provider
  rejected as too long included; ``failed_runs``: agent runs that ended on an error (the rest of
  that run's steps are not sent);
- ``cache_read_share``: cached input tokens / input tokens of the accepted requests (the local
  provider's prompt-cache rule: the longest previously sent prefix, in 128-token blocks);
- ``survival_after_5``: for every accepted request and every canary first sent at least five
  context rewrites earlier (a rewrite: a request whose messages are not the previous request's
  plus new ones: a summary, a trim, a prune), whether every keep string is in the request (the
  superseded ones apart); the lowest of the three placements; ``None`` when no canary went
  through five rewrites.

What these figures do not show: the sessions are replayed, not re-generated (a model that lost
a canary would act differently); the built-in variants are configured as their documentation
shows, and other settings give other figures; survival is over the requests sent, with the
rewrites each framework made, so frameworks that rewrite at every call reach five rewrites
sooner.

The table goes to the ``## frameworks`` section of ``bench/RESULTS.md``; with ``--json`` the last
line is ``{"frameworks": {"langchain": {"builtin": {...}, "abridged": {...}}, ...}}``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from abridged.core.budget import compute_budget, parse_token_size  # noqa: E402
from abridged.core.model import Message  # noqa: E402
from abridged.core.protocols import SummaryRequest  # noqa: E402
from abridged.core.turns import head_length  # noqa: E402
from abridged.core.validate import validate_messages  # noqa: E402
from abridged.engine.summarize.extractive import ExtractiveSummarizer  # noqa: E402
from abridged.formats.transcripts import load_transcripts  # noqa: E402
from abridged.testing import ProviderServer, RecordedRequest, Reply  # noqa: E402
from results import add_output_options, save_section  # noqa: E402
from retention import (  # noqa: E402
    DEFAULT_CANARIES,
    DEFAULT_DATA,
    PLACEMENTS,
    Canary,
    KeepIndex,
    insert_canaries,
    load_canaries,
)

SECTION = "## frameworks"
FRAMEWORKS = ("langchain", "pydantic_ai", "openai_agents")
VARIANTS = ("builtin", "abridged")
MAX_OUTPUT = 4_096
KEY = "sk-bench-frameworks-0123456789"
TRIM_ITEMS = 20  # the Agents SDK session limit used by the built-in variant
REWRITES = 5


# -- the session as runs of steps ----------------------------------------------------------------


@dataclass(slots=True)
class Step:
    """One recorded assistant message: its text, its calls ``(name, arguments)`` and the
    outputs the tools returned, in order."""

    text: str
    calls: list[tuple[str, str]]
    outputs: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Run:
    """One run of the agent: the user message that starts it and the steps it plays."""

    user: str
    steps: list[Step] = field(default_factory=list)


def runs_of(messages: Sequence[Message]) -> list[Run]:
    """The seeded session as agent runs (see the module docstring)."""
    out: list[Run] = []
    for m in messages[head_length(messages) :]:
        if m.role == "user":
            out.append(Run(m.text or "Continue."))
        elif m.role == "assistant":
            if not out or (out[-1].steps and not out[-1].steps[-1].calls):
                out.append(Run("Continue."))
            out[-1].steps.append(Step(m.text, [(c.name, c.arguments) for c in m.tool_calls]))
        elif m.role == "tool" and out and out[-1].steps:
            out[-1].steps[-1].outputs.extend(r.text for r in m.tool_results)
    return [r for r in out if r.steps]


class Player:
    """The provider's answers and the tool's outputs, played back in order."""

    def __init__(self, runs: Sequence[Run]) -> None:
        self.runs = list(runs)
        self.run = 0
        self.step = 0
        self.outputs: deque[str] = deque()

    def start(self, index: int) -> None:
        self.run, self.step = index, 0
        self.outputs.clear()

    def reply(self, _request: RecordedRequest) -> Reply:
        steps = self.runs[self.run].steps
        if self.step >= len(steps):
            return Reply("OK.")
        step = steps[self.step]
        self.step += 1
        self.outputs.extend(step.outputs)
        if not step.calls:
            return Reply(step.text or "OK.")
        return Reply(step.text, tool_calls=list(step.calls))

    def bash(self, command: str) -> str:
        """The recorded output of the next call."""
        del command
        return self.outputs.popleft() if self.outputs else "(no output recorded)"


def _summarize(messages: Sequence[Message]) -> str:
    request = SummaryRequest(messages=tuple(messages), max_tokens=2_000)
    return ExtractiveSummarizer().build(request).text


# -- the frameworks -------------------------------------------------------------------------------


Driver = Callable[[ProviderServer, Player, int, int, Path], None]


def _langchain(builtin: bool) -> Driver:
    def drive(server: ProviderServer, player: Player, window: int, trigger: int, tmp: Path) -> None:
        from langchain.agents import create_agent
        from langchain.agents.middleware import SummarizationMiddleware
        from langchain_core.messages import HumanMessage
        from langchain_core.tools import tool
        from langchain_openai import ChatOpenAI
        from langgraph.checkpoint.memory import InMemorySaver

        from abridged.integrations.langchain import AbridgedMiddleware, message_from_langchain

        del tmp

        @tool
        def bash(command: str) -> str:
            """Run a shell command."""
            return player.bash(command)

        model = ChatOpenAI(
            model="gpt-bench", base_url=server.base_url + "/v1", api_key=KEY, max_retries=0
        )
        if builtin:
            middleware: Any = SummarizationMiddleware(
                model,
                trigger=("tokens", trigger),
                summarizer=lambda ms: _summarize([message_from_langchain(m) for m in ms]),
            )
        else:
            middleware = AbridgedMiddleware(context_window=window, max_output_tokens=MAX_OUTPUT)
        agent = create_agent(model, [bash], middleware=[middleware], checkpointer=InMemorySaver())
        config: dict[str, Any] = {"configurable": {"thread_id": "bench"}}
        for index, run in enumerate(player.runs):
            player.start(index)
            config["recursion_limit"] = 2 * len(run.steps) + 10
            try:
                agent.invoke({"messages": [HumanMessage(run.user)]}, config)
            except Exception:  # a failed run is a figure, not a crash
                continue

    return drive


def _pydantic_ai(builtin: bool) -> Driver:
    def drive(server: ProviderServer, player: Player, window: int, trigger: int, tmp: Path) -> None:
        from pydantic_ai import Agent
        from pydantic_ai.capabilities import ProcessHistory
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        from abridged.core.tokens import TokenCounter
        from abridged.integrations.pydantic_ai import (
            AbridgedCapability,
            messages_from_pydantic_ai,
        )

        del tmp, trigger
        budget = window - MAX_OUTPUT
        counter = TokenCounter()

        def keep_recent(messages: list[Any]) -> list[Any]:
            """The documentation's processor: the latest messages, as many as fit."""
            kept: list[Any] = []
            size = 0
            for message in reversed(messages):
                size += sum(counter.message_tokens(m) for m in messages_from_pydantic_ai(message))
                if size > budget * 0.8 and kept:
                    break
                kept.append(message)
            return list(reversed(kept))

        def bash(command: str) -> str:
            """Run a shell command."""
            return player.bash(command)

        provider = OpenAIProvider(base_url=server.base_url + "/v1", api_key=KEY)
        capability: Any = (
            ProcessHistory(keep_recent)
            if builtin
            else AbridgedCapability(context_window=window, max_output_tokens=MAX_OUTPUT)
        )
        agent: Any = Agent(
            OpenAIChatModel("gpt-bench", provider=provider),
            tools=[bash],
            capabilities=[capability],
            retries=0,
        )
        history: list[Any] | None = None
        for index, run in enumerate(player.runs):
            player.start(index)
            try:
                result = agent.run_sync(run.user, message_history=history)
            except Exception:  # a failed run is a figure
                continue
            history = result.all_messages()

    return drive


def _openai_agents(builtin: bool) -> Driver:
    def drive(server: ProviderServer, player: Player, window: int, trigger: int, tmp: Path) -> None:
        import openai
        from agents import (
            Agent,
            OpenAIResponsesModel,
            RunConfig,
            Runner,
            SQLiteSession,
            function_tool,
        )
        from agents.memory import SessionSettings

        from abridged.integrations.openai_agents import AbridgedInputFilter, AbridgedSession
        from abridged.store import Store

        del trigger

        @function_tool
        def bash(command: str) -> str:
            """Run a shell command."""
            return player.bash(command)

        async def main() -> None:
            client = openai.AsyncOpenAI(
                base_url=server.base_url + "/v1", api_key=KEY, max_retries=0
            )
            agent = Agent(
                name="bench",
                model=OpenAIResponsesModel(model="gpt-bench", openai_client=client),
                tools=[bash],
            )
            store = None
            if builtin:
                session: Any = SQLiteSession(
                    "bench",
                    str(tmp / "agents.db"),
                    session_settings=SessionSettings(limit=TRIM_ITEMS),
                )
                config = RunConfig(tracing_disabled=True)
            else:
                store = Store(tmp / "abridged.db")
                session = AbridgedSession("bench", store)
                guard = AbridgedInputFilter(context_window=window, max_output_tokens=MAX_OUTPUT)
                config = RunConfig(call_model_input_filter=guard, tracing_disabled=True)
            try:
                for index, run in enumerate(player.runs):
                    player.start(index)
                    try:
                        await Runner.run(
                            agent,
                            run.user,
                            session=session,
                            run_config=config,
                            max_turns=len(run.steps) + 5,
                        )
                    except Exception:  # a failed run is a figure
                        continue
            finally:
                if store is not None:
                    await store.close()

        asyncio.run(main())

    return drive


DRIVERS: dict[str, Callable[[bool], Driver]] = {
    "langchain": _langchain,
    "pydantic_ai": _pydantic_ai,
    "openai_agents": _openai_agents,
}


# -- scoring --------------------------------------------------------------------------------------


def _is_pairing(request: RecordedRequest) -> bool:
    if request.status == 200:
        return bool(request.messages) and any(
            i.severity == "error" and "tool" in i.code for i in validate_messages(request.messages)
        )
    text = json.dumps(request.error or "").lower()
    return "tool" in text and "context" not in text and "too long" not in text


def _is_overflow(request: RecordedRequest) -> bool:
    text = json.dumps(request.error or "").lower()
    return request.status != 200 and ("context" in text or "too long" in text)


@dataclass(slots=True)
class Tally:
    requests: int = 0
    pairing_errors: int = 0
    over_budget: int = 0
    failed_runs: int = 0
    prompt: int = 0
    cached: int = 0
    kept: int = 0
    scored: int = 0

    def add(self, other: Tally) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def figures(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "pairing_errors": self.pairing_errors,
            "over_budget": self.over_budget,
            "failed_runs": self.failed_runs,
            "cache_read_share": round(self.cached / self.prompt, 4) if self.prompt else None,
            "survival_after_5": round(self.kept / self.scored, 4) if self.scored else None,
            "survival_samples": self.scored,
        }


def score(requests: Sequence[RecordedRequest], canaries: Sequence[Canary], budget: int) -> Tally:
    """The figures of one driven session (see the module docstring)."""
    tally = Tally(requests=len(requests))
    index = KeepIndex(canaries)
    rewrites = 0
    previous: list[str] = []
    first_seen: dict[str, int] = {}
    said: set[str] = set()
    for request in requests:
        tally.pairing_errors += _is_pairing(request)
        tally.over_budget += request.prompt_tokens > budget or _is_overflow(request)
        if request.status != 200:
            continue
        tally.prompt += request.prompt_tokens
        tally.cached += request.cached_tokens
        texts = [m.fingerprint for m in request.messages]
        if previous and texts[: len(previous)] != previous:
            rewrites += 1
        previous = texts
        present = index.of_context(request.messages)
        for canary in canaries:
            if all(s in present for s in canary.keep) and canary.id not in first_seen:
                first_seen[canary.id] = rewrites
                said.add(canary.id)
        superseded = {c.supersedes for c in canaries if c.supersedes and c.id in said}
        for canary in canaries:
            start = first_seen.get(canary.id)
            if start is None or canary.id in superseded or rewrites - start < REWRITES:
                continue
            tally.scored += 1
            tally.kept += all(s in present for s in canary.keep)
    # a failed request ends its run (none of the variants retries it)
    tally.failed_runs = sum(1 for r in requests if r.status != 200)
    return tally


def drive_session(
    framework: str, builtin: bool, runs: Sequence[Run], canaries: Sequence[Canary], window: int
) -> Tally:
    budget = compute_budget(window, MAX_OUTPUT)
    player = Player(runs)
    with (
        ProviderServer(context_window=window, max_output=MAX_OUTPUT, replies=player.reply) as s,
        tempfile.TemporaryDirectory(prefix="abridged-frameworks-") as tmp,
    ):
        DRIVERS[framework](builtin)(s, player, window, budget.trigger, Path(tmp))
        requests = s.requests
    return score(requests, canaries, window - MAX_OUTPUT)


# -- the command ----------------------------------------------------------------------------------


def run_all(
    data: Path,
    canaries: Sequence[Canary],
    *,
    limit: int,
    window: int,
    frameworks: Sequence[str],
    placements: Sequence[str],
) -> dict[str, dict[str, dict[str, Tally]]]:
    """Tallies by framework, variant and placement."""
    transcripts = [t for t in load_transcripts(data) if t.messages][:limit]
    out: dict[str, dict[str, dict[str, Tally]]] = {
        f: {v: {p: Tally() for p in placements} for v in VARIANTS} for f in frameworks
    }
    for transcript in transcripts:
        for placement in placements:
            seeded = insert_canaries(transcript.messages, canaries, placement)
            runs = runs_of(seeded.messages)
            for framework in frameworks:
                for variant in VARIANTS:
                    tally = drive_session(framework, variant == "builtin", runs, canaries, window)
                    out[framework][variant][placement].add(tally)
                    print(
                        f"{transcript.id} {placement} {framework} {variant}: "
                        f"{tally.requests} requests, {tally.pairing_errors} pairing errors, "
                        f"{tally.over_budget} over budget",
                        file=sys.stderr,
                    )
    return out


def figures(tallies: dict[str, dict[str, dict[str, Tally]]]) -> dict[str, Any]:
    """The JSON figures: per framework and variant, all placements summed, survival the lowest."""
    out: dict[str, Any] = {}
    for framework, variants in tallies.items():
        out[framework] = {}
        for variant, placements in variants.items():
            total = Tally()
            for tally in placements.values():
                total.add(tally)
            result = total.figures()
            survivals = [t.figures()["survival_after_5"] for t in placements.values()]
            known = [s for s in survivals if s is not None]
            result["survival_after_5"] = min(known) if known else None
            result["survival_by_placement"] = dict(zip(placements, survivals, strict=True))
            out[framework][variant] = result
    return out


def render(result: dict[str, Any]) -> str:
    def cell(value: Any) -> str:
        if value is None:
            return "n/a"
        return f"{value:.3f}" if isinstance(value, float) else f"{value:,}"

    lines = [
        SECTION,
        "",
        f"`{result['command']}` ({result['sessions']} sessions x {result['canaries']} canaries "
        f"x {len(result['placements'])} placements, window {result['window']:,}, "
        f"{result['seconds']:.0f} s). See the module docstring for what each figure is and "
        "what the figures do not show.",
        "",
        "| framework | variant | requests | pairing errors | over budget | failed runs "
        "| cache-read share | survival after 5 (min over placements) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for framework, variants in result["frameworks"].items():
        for variant, f in variants.items():
            lines.append(
                f"| {framework} | {variant} | {cell(f['requests'])} | "
                f"{cell(f['pairing_errors'])} | {cell(f['over_budget'])} | "
                f"{cell(f['failed_runs'])} | {cell(f['cache_read_share'])} | "
                f"{cell(f['survival_after_5'])} |"
            )
    return "\n".join(lines) + "\n"


def _names(allowed: Sequence[str]) -> Callable[[str], list[str]]:
    def parse(value: str) -> list[str]:
        names = [v.strip() for v in value.split(",") if v.strip()]
        bad = [n for n in names if n not in allowed]
        if bad or not names:
            raise argparse.ArgumentTypeError(f"expected some of {', '.join(allowed)}")
        return names

    return parse


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--canaries", type=Path, default=DEFAULT_CANARIES)
    parser.add_argument("--limit", type=int, default=3, help="the first N sessions (3)")
    parser.add_argument("--window", default="16k", help="context window (16k)")
    parser.add_argument("--frameworks", type=_names(FRAMEWORKS), default=list(FRAMEWORKS))
    parser.add_argument("--placements", type=_names(PLACEMENTS), default=list(PLACEMENTS))
    add_output_options(parser)
    args = parser.parse_args(argv)
    if args.limit < 1:
        parser.error("--limit must be >= 1")
    window = parse_token_size(args.window, name="window")
    started = time.perf_counter()
    canaries = load_canaries(args.canaries)
    tallies = run_all(
        args.data,
        canaries,
        limit=args.limit,
        window=window,
        frameworks=args.frameworks,
        placements=args.placements,
    )
    command = "python bench/frameworks.py"
    if args.data != DEFAULT_DATA:
        command += f" --data {args.data}"
    if args.canaries != DEFAULT_CANARIES:
        command += f" --canaries {args.canaries}"
    command += f" --limit {args.limit}"
    if window != 16_384:
        command += f" --window {args.window}"
    if list(args.frameworks) != list(FRAMEWORKS):
        command += f" --frameworks {','.join(args.frameworks)}"
    if list(args.placements) != list(PLACEMENTS):
        command += f" --placements {','.join(args.placements)}"
    result = {
        "command": command,
        "sessions": args.limit,
        "canaries": len(canaries),
        "placements": list(args.placements),
        "window": window,
        "seconds": time.perf_counter() - started,
        "frameworks": figures(tallies),
    }
    table = render(result)
    print(table)
    save_section(args, table)
    if args.json:
        print(json.dumps({"frameworks": result["frameworks"]}))
    return result


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
