"""A prefix the provider counts but the messages do not hold (agent logs without their system
prompt, a caller that leaves out ``tools=``): learned as a fixed offset from the reports, not
as a ratio; counted in sizes and in the budget, never compacted; forgotten when it goes."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from abridged.core.model import Message, ToolCall, Usage, assign_ids
from abridged.core.tokens import TokenCounter
from abridged.errors import ContextOverflowError
from abridged.events.engine import (
    CompactionEnded,
    CompactionStarted,
    HiddenPrefix,
    OverflowRecovered,
)
from abridged.formats.openai_chat import messages_from_openai
from abridged.runtime import ContextManager
from abridged.runtime.sizing import HIDDEN_MIN_TOKENS
from abridged.store import Store

HIDDEN = 20_000  # what the provider counts besides the messages (a big agent's system and tools)


def log_text(k: int, chars: int = 3_000) -> str:
    line = f"2025-01-0{k % 9 + 1} INFO worker-{k} processed batch {k}: ok; queue depth {k * 7}\n"
    return (line * (chars // len(line) + 1))[:chars]


def step(k: int) -> list[dict[str, Any]]:
    call = {
        "id": f"call_{k}",
        "type": "function",
        "function": {"name": "read_log", "arguments": json.dumps({"part": k})},
    }
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{k}", "content": log_text(k)},
    ]


def provider_count(messages: list[dict[str, Any]], hidden: int) -> int:
    """What the provider bills for a context: its messages (by the same estimator) + hidden."""
    counter = TokenCounter()
    return hidden + sum(counter.message_tokens(m) for m in messages_from_openai(messages))


def run(cm: ContextManager, steps: int, hidden: int) -> tuple[list[Any], list[int]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": "Why does the queue back up?"}]
    events: list[Any] = []
    real: list[int] = []
    for k in range(steps):
        ctx = cm.prepare(items)
        events += ctx.events
        sent = provider_count(ctx.messages, hidden)
        real.append(sent)
        cm.record_usage({"prompt_tokens": sent, "completion_tokens": 20})
        items += step(k)
    return events, real


def after_first_compaction(cm: ContextManager) -> tuple[int, int]:
    """Run the loop; ``(what the engine said the first compaction left, what the provider
    then counted)``."""
    events, real = run(cm, 60, HIDDEN)
    ended = [e for e in events if isinstance(e, CompactionEnded) and e.status == "compacted"]
    assert ended
    drop = next(k for k in range(1, len(real)) if real[k] < real[k - 1])
    return ended[0].tokens_after, real[drop]


def test_a_steady_gap_is_learned_as_a_fixed_offset_and_compactions_reach_their_target() -> None:
    cm = ContextManager(context_window=65_536, max_output_tokens=4_096, summarizer="extractive")
    said, counted = after_first_compaction(cm)
    assert abs(cm.hidden_prefix - HIDDEN) <= 0.05 * HIDDEN
    # the calibration did not absorb the gap as a ratio
    assert 0.8 <= cm.counter.calibration.factor <= 1.25
    budget = cm.budget
    assert budget.tools_tokens >= 0.95 * HIDDEN  # the fixed part every plan counts
    # what the engine planned is what the provider counted, and it is below the target
    assert abs(said - counted) <= 0.1 * counted
    assert counted <= budget.target


def test_the_event_says_what_seems_missing() -> None:
    cm = ContextManager(context_window=65_536, max_output_tokens=4_096, summarizer="extractive")
    events, real = run(cm, 60, HIDDEN)
    learned = [e for e in events if isinstance(e, HiddenPrefix)]
    assert len(learned) == 1 and abs(learned[0].tokens - HIDDEN) <= 0.05 * HIDDEN
    assert "system prompt or tool definitions" in learned[0].text
    assert max(real) <= cm.budget.input_budget
    assert not [e for e in events if isinstance(e, OverflowRecovered)]


def test_taken_as_a_ratio_the_gap_makes_compactions_miss_their_target() -> None:
    """The counterfactual of the test above (it can fail): the gap learned as a ratio (bounded
    at 2x), the engine believes its compaction left far less than the provider then counts."""
    cm = ContextManager(context_window=65_536, max_output_tokens=4_096, summarizer="extractive")
    cm._sizer._learn_whole = lambda cal, real, est: cal.update(real, est)  # type: ignore[method-assign]
    said, counted = after_first_compaction(cm)
    assert counted - said >= HIDDEN / 2
    assert counted > cm.budget.target


def test_a_gap_a_ratio_can_explain_is_calibration_not_a_prefix() -> None:
    cm = ContextManager(context_window=65_536, max_output_tokens=4_096, summarizer="extractive")
    events, _ = run(cm, 8, 0)
    assert cm.hidden_prefix == 0
    assert not [e for e in events if isinstance(e, HiddenPrefix)]


def test_the_offset_goes_when_the_reports_no_longer_show_it() -> None:
    cm = ContextManager(context_window=65_536, max_output_tokens=4_096, summarizer="extractive")
    run(cm, 3, HIDDEN)
    assert cm.hidden_prefix > HIDDEN_MIN_TOKENS
    # the caller now passes what was missing: a new epoch's report shows no gap
    cm.compact()
    items = [{"role": "user", "content": "Why does the queue back up?"}]
    for k in range(3):
        items += step(k)
    ctx = cm.prepare(items)
    cm.record_usage({"prompt_tokens": provider_count(ctx.messages, 0), "completion_tokens": 20})
    ctx = cm.prepare([*items, {"role": "user", "content": "and now?"}])
    assert cm.hidden_prefix == 0
    gone = [e for e in ctx.events if isinstance(e, HiddenPrefix)]
    assert gone and gone[-1].tokens == 0 and "gone" in gone[-1].text


def invisible_growth_transcript(hidden: int, invisible: int, steps: int = 60) -> list[Message]:
    """An agent log like a Codex rollout: the first call reports a large hidden prefix, and every
    later report grows by ``invisible`` tokens more than the messages do (reasoning the log does
    not hold), so that the reports run far ahead of any estimate of the messages."""
    counter = TokenCounter()
    rng = random.Random(1)
    messages = [Message.user("Fix the failing tests in the repository.")]
    for k in range(steps):
        call = ToolCall(f"call_{k}", "shell", json.dumps({"cmd": f"cat part{k}.log"}))
        messages.append(Message.assistant(f"step {k}", tool_calls=[call]))
        output = " ".join(f"w{rng.randrange(10**6)}" for _ in range(50))
        messages.append(Message.tool(f"call_{k}", output))
    messages.append(Message.assistant("done"))
    out: list[Message] = []
    calls = 0
    for i, message in enumerate(messages):
        if message.role != "assistant":
            out.append(message)
            continue
        size = hidden + sum(counter.message_tokens(m) for m in messages[:i]) + invisible * calls
        out.append(message.replace(usage=Usage(input=size, output=30)))
        calls += 1
    return assign_ids(out)


def test_an_emergency_runs_only_when_the_figures_it_prints_say_it_must() -> None:
    """Replayed at a 128k window with a 64k output reserve (input budget 61.4k): the context
    reaches the trigger while its messages' estimate is within the kept tail. Every emergency
    stage, and every recovery counted, shows a context above the input budget."""
    cm = ContextManager(context_window=128_000, max_output_tokens=64_000, summarizer="extractive")
    events = [
        e for step in cm.replay(invisible_growth_transcript(17_000, 2_000)) for e in step.events
    ]
    budget = cm.budget.input_budget
    started = [e for e in events if isinstance(e, CompactionStarted)]
    assert started  # the trigger was reached
    for event in started:
        if event.emergency is not None:
            assert event.tokens_before > budget, event.text
    for event in events:
        if isinstance(event, OverflowRecovered):
            assert event.tokens_before > budget, event.text


def test_a_report_beyond_the_window_is_ignored_not_learned_as_a_prefix() -> None:
    # Found by an independent attack through the proxy: a report of more than the window holds
    # (a window set smaller than the provider's, a gateway that counts otherwise) was learned as
    # a hidden prefix that alone filled the budget; record_usage raised, and so did every later
    # prepare of the conversation.
    cm = ContextManager(context_window=8_192, max_output_tokens=1_024, summarizer="extractive")
    items: list[dict[str, Any]] = [{"role": "user", "content": "hi there"}]
    cm.prepare(items)
    event = cm.record_usage({"prompt_tokens": 20_000, "completion_tokens": 3})
    assert event is not None and event.stale
    items += [{"role": "assistant", "content": "hello"}, {"role": "user", "content": "again"}]
    ctx = cm.prepare(items)
    assert not [e for e in ctx.events if isinstance(e, HiddenPrefix | CompactionStarted)]
    assert len(ctx.messages) == 3
    # a report the window can hold still teaches the prefix
    cm.record_usage({"prompt_tokens": 5_000, "completion_tokens": 3})
    ctx = cm.prepare(
        [*items, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "x"}]
    )
    assert [e.tokens for e in ctx.events if isinstance(e, HiddenPrefix)] != []


async def test_a_conversation_learns_the_prefix_by_the_managers_rule(store: Store) -> None:
    """A ``Conversation`` learns its calibration as every ``ContextManager`` does: a provider
    that counts 20k tokens the messages do not hold (its own system prompt) is a hidden prefix,
    said by an event and counted in the budget, not a calibration factor pushed to its bound.
    The real OpenAI SDK against the local provider; a thin wrapper adds the prefix to the
    usage it reports (no provider here has a prompt of its own)."""
    from dataclasses import replace

    from abridged.core.protocols import Completion
    from abridged.events.runtime import Notice
    from abridged.runtime import Conversation
    from abridged.testing import ProviderServer
    from tests.runtime.support import make_model

    class WithPrefix:
        def __init__(self, model: Any) -> None:
            self.model = model
            self.name = model.name

        def __getattr__(self, name: str) -> Any:
            return getattr(self.model, name)

        async def stream(self, *args: Any, **kwargs: Any) -> Any:
            async for event in self.model.stream(*args, **kwargs):
                if isinstance(event, Completion) and event.usage is not None:
                    usage = replace(event.usage, input=event.usage.input + 20_000)
                    yield replace(event, usage=usage)
                else:
                    yield event

    with ProviderServer(context_window=128_000, replies=["one", "two"]) as server:
        convo = await Conversation.open(
            store,
            WithPrefix(make_model("openai", server)),
            summarizer="extractive",
            context_window=128_000,
            max_output_tokens=4_096,
        )
        before = convo.budget().tools_tokens
        first = await convo.send("hello")
        await convo.send("and again")
        found = [
            e.event
            for e in first.events
            if isinstance(e, Notice) and isinstance(e.event, HiddenPrefix)
        ]
        assert found and found[0].tokens > 19_000
        assert convo.budget().tools_tokens - before > 19_000
        assert convo.counter.calibration.factor < 1.5
        await convo.close()


def test_the_window_is_read_when_the_prefix_alone_fills_the_budget() -> None:
    # The proxy's request line reads the window after recording the provider's report: read
    # through ``budget`` (computed anew for the prefix learned) it raised, and the line was lost.
    cm = ContextManager(context_window=8_192, max_output_tokens=1_024, summarizer="extractive")
    cm.prepare([{"role": "user", "content": "hi there"}])
    with pytest.raises(ContextOverflowError):
        cm.record_usage({"prompt_tokens": 7_000, "completion_tokens": 3})
    with pytest.raises(ContextOverflowError):
        _ = cm.budget
    assert cm.context_window == 8_192
