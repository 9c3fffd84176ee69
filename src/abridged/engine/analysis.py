"""Where a transcript's tokens go: totals per category, context size per call, what triggers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from abridged.core.budget import Budget
from abridged.core.model import Message, Reasoning, Text, ToolCall, ToolResult
from abridged.core.tokens import REPLY_PRIMING, TokenCounter, estimate_text_tokens
from abridged.core.turns import split_steps, split_turns
from abridged.engine.prune import PruneSettings, plan_prune

CATEGORIES = ("system", "user", "assistant", "reasoning", "tool_calls", "tool_results")


@dataclass(frozen=True, slots=True)
class CallPoint:
    """One model call of the transcript: the context it was sent.

    ``index`` is the assistant message the call produced; ``reported`` is the provider's count
    of the context (``None`` when it reported nothing); ``cold`` the estimate of the messages
    alone; ``hybrid`` the previous report plus the estimate of what was added since.
    """

    index: int
    reported: int | None
    cold: int
    hybrid: int

    @property
    def tokens(self) -> int:
        """The best-known context size: the report, else the hybrid estimate."""
        return self.reported if self.reported is not None else self.hybrid


@dataclass(frozen=True, slots=True)
class ToolTotals:
    """Calls of one tool and the tokens of their results."""

    name: str
    calls: int
    result_tokens: int


@dataclass(frozen=True, slots=True)
class TranscriptAnalysis:
    """What ``analyze_messages`` found. Token figures are estimates unless named ``reported``."""

    messages: int
    turns: int
    steps: int
    categories: dict[str, int]
    calls: tuple[CallPoint, ...]
    tools: tuple[ToolTotals, ...]
    budget: Budget | None = None
    first_trigger_call: int | None = None
    calls_over_trigger: int = 0
    calls_over_budget: int = 0
    prunable_tokens: int = 0
    counter_source: str = "estimate"
    notes: tuple[str, ...] = field(default=())

    @property
    def total_tokens(self) -> int:
        """Estimated tokens of the whole transcript."""
        return sum(self.categories.values())

    @property
    def peak_context(self) -> int:
        """The largest context sent (reported where known)."""
        return max((c.tokens for c in self.calls), default=0)

    def errors(self, which: str) -> list[float]:
        """Relative errors of ``"cold"`` or ``"hybrid"`` estimates against reported counts."""
        out = []
        for call in self.calls:
            if call.reported:
                predicted = call.cold if which == "cold" else call.hybrid
                out.append(abs(predicted - call.reported) / call.reported)
        return out


def _categorize(message: Message, totals: dict[str, int]) -> None:
    if message.role in ("system", "user"):
        totals[message.role] += estimate_text_tokens(message.text)
        return
    text_protocol = bool(message.meta.get("text_protocol"))
    for part in message.parts:
        if isinstance(part, Text):
            totals["assistant" if message.role == "assistant" else "tool_results"] += (
                estimate_text_tokens(part.text)
            )
        elif isinstance(part, Reasoning):
            totals["reasoning"] += estimate_text_tokens(part.text)
        elif isinstance(part, ToolCall) and not text_protocol:
            totals["tool_calls"] += estimate_text_tokens(part.name + part.arguments)
        elif isinstance(part, ToolResult):
            totals["tool_results"] += estimate_text_tokens(part.text)


def _tool_totals(messages: Sequence[Message]) -> tuple[ToolTotals, ...]:
    names: dict[str, str] = {}
    calls: dict[str, int] = {}
    tokens: dict[str, int] = {}
    for message in messages:
        for call in message.tool_calls:
            names[call.id] = call.name
            calls[call.name] = calls.get(call.name, 0) + 1
        for result in message.tool_results:
            name = result.name or names.get(result.call_id, "?")
            tokens[name] = tokens.get(name, 0) + estimate_text_tokens(result.text)
    ordered = sorted(set(calls) | set(tokens), key=lambda n: (-tokens.get(n, 0), n))
    return tuple(ToolTotals(n, calls.get(n, 0), tokens.get(n, 0)) for n in ordered)


def analyze_messages(
    messages: Sequence[Message],
    *,
    counter: TokenCounter | None = None,
    budget: Budget | None = None,
    prune_settings: PruneSettings | None = None,
) -> TranscriptAnalysis:
    """Analyse where the tokens of ``messages`` go and how their context grew call by call.

    Each assistant message is one call; its context is the messages before it. ``cold`` is the
    counter's calibrated estimate of that context (calibration learns only from earlier reports),
    ``hybrid`` the newest earlier report plus the estimate since. With a ``budget`` it also says
    at which call the compaction trigger is first crossed, how many calls exceed the trigger and
    the input budget, and how many tokens pruning old tool outputs would free at the end.

    >>> from abridged.core.model import Message
    >>> a = analyze_messages([Message.user("fix the bug"), Message.assistant("done")])
    >>> a.steps, a.turns, len(a.calls)
    (1, 1, 1)
    """
    counter = counter or TokenCounter()
    totals = dict.fromkeys(CATEGORIES, 0)
    calls: list[CallPoint] = []
    cumulative = 0
    for index, message in enumerate(messages):
        if message.role == "assistant":
            context = messages[:index]
            cold = counter.calibration.apply(cumulative + REPLY_PRIMING)
            hybrid = counter.context_tokens(context)
            reported = message.usage.context_tokens if message.usage is not None else None
            calls.append(CallPoint(index, reported or None, int(cold), hybrid))
            if reported:
                counter.observe(messages[: index + 1], index)
        cumulative += counter.message_tokens(message)
        _categorize(message, totals)

    first_trigger = None
    over_trigger = over_budget = 0
    prunable = 0
    if budget is not None:
        for number, call in enumerate(calls, start=1):
            if call.tokens >= budget.trigger:
                over_trigger += 1
                first_trigger = first_trigger or number
            if call.tokens > budget.input_budget:
                over_budget += 1
        plan = plan_prune(messages, prune_settings or PruneSettings(), counter.message_tokens)
        prunable = plan.saved_tokens
    return TranscriptAnalysis(
        messages=len(messages),
        turns=len(split_turns(messages)),
        steps=len(split_steps(messages)),
        categories=totals,
        calls=tuple(calls),
        tools=_tool_totals(messages),
        budget=budget,
        first_trigger_call=first_trigger,
        calls_over_trigger=over_trigger,
        calls_over_budget=over_budget,
        prunable_tokens=prunable,
        counter_source=counter.source,
    )
