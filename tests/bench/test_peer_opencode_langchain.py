"""Tests of ``bench/peer_opencode.py`` and ``bench/peer_langchain.py``: each peer's policy on
synthetic sessions through a fake kit (abridged's estimator as the provider's count, a summarizer
that records what it is asked)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from types import ModuleType
from typing import Any

import pytest

from abridged.core.model import Message, ToolCall, Usage
from tests.bench.support import FakeKit as SupportKit
from tests.bench.support import load_bench

OC = load_bench("peer_opencode")
LC = load_bench("peer_langchain")
KIT = load_bench("policy_kit")

W16 = KIT.Window("16k", 16_384, 4_096)
W32 = KIT.Window("32k", 32_768, 4_096)


# the shared fake kit, its summaries labelled ``SUMMARY N``
FakeKit = partial(SupportKit, label="SUMMARY")


def _output(n: int, chars: int) -> str:
    line = f"output line of step {n}: some words to fill the tool result\n"
    return (line * (chars // len(line) + 1))[:chars]


def _step(n: int, chars: int) -> list[Message]:
    call = ToolCall(f"c{n}", "bash", f'{{"command": "cat file_{n}.py"}}')
    return [
        Message.assistant(f"step {n}", tool_calls=[call]),
        Message.tool(f"c{n}", _output(n, chars), name="bash"),
    ]


class Driver:
    """The harness in small: prepare, count, observe the provider's usage."""

    def __init__(self, policy: Any, kit: FakeKit) -> None:
        self.policy = policy
        self.kit = kit
        self.contexts: list[list[Message]] = []

    def call(self, new: Sequence[Message]) -> list[Message]:
        context = self.policy.prepare(new)
        size = self.kit.count(context)
        if size > self.kit.window.limit:
            retry = self.policy.recover(KIT.Rejected(size, self.kit.window.limit))
            if retry is None:
                self.contexts.append([])
                return []
            context = retry
            size = self.kit.count(context)
        self.policy.observe(Usage(input=size, output=50))
        self.contexts.append(context)
        return context


def _paired(context: Sequence[Message]) -> bool:
    calls = {c.id for m in context for c in m.tool_calls}
    return all(r.call_id in calls for m in context for r in m.tool_results)


# -- OpenCode -------------------------------------------------------------------------------------


def test_opencode_numbers_follow_the_window() -> None:
    assert OC.PRUNE_PROTECT == 40_000 and OC.PRUNE_MINIMUM == 20_000
    assert OC.usable(W16) == 8_192 and OC.usable(W32) == 24_576
    assert OC.preserve_recent_budget(W16) == 2_048
    assert OC.preserve_recent_budget(W32) == 6_144
    assert OC.prune_thresholds(W16) == (3_277, 1_638)
    assert OC.prune_thresholds(W32) == (6_554, 3_277)


def _three_runs(kit: FakeKit, first_run_steps: int) -> tuple[Any, Driver]:
    """Three runs (a user message, tool steps, a closing reply); the first run's outputs are
    ~1,000 tokens each, the later runs small. Returns the policy after the third run closed."""
    policy = OC.make(kit)
    driver = Driver(policy, kit)
    pending: list[Message] = [Message.system("You are an agent."), Message.user("task one")]
    n = 0
    for run, (steps, chars) in enumerate([(first_run_steps, 4_000), (2, 200), (2, 200)]):
        if run:
            pending.append(Message.user(f"task {run + 1}"))
        for _ in range(steps):
            driver.call(pending)
            pending = _step(n, chars)
            n += 1
        driver.call(pending)
        pending = [Message.assistant(f"run {run + 1} done")]
    driver.call(pending)
    return policy, driver


def test_opencode_prunes_beyond_its_protect_window_when_it_frees_its_minimum() -> None:
    kit = FakeKit(W32)
    policy, driver = _three_runs(kit, first_run_steps=12)
    assert policy.stats()["compactions"] == 0  # the contexts stay under usable
    context = driver.contexts[-1]
    cleared = {r.call_id for m in context for r in m.tool_results if r.text == OC.CLEARED}
    # 12 outputs of ~1,000 tokens: the newest ~6,554 tokens are protected, the older ones go
    assert cleared == {f"c{i}" for i in range(6)}
    assert policy.stats()["prunes"] == 1
    assert policy.stats()["pruned_results"] == 6
    assert _paired(context)


def test_opencode_does_not_prune_less_than_its_minimum() -> None:
    kit = FakeKit(W32)
    policy, driver = _three_runs(kit, first_run_steps=8)
    # 8 outputs: only ~2 outputs lie beyond the protect window, under the 3,277 minimum
    assert not any(r.text == OC.CLEARED for m in driver.contexts[-1] for r in m.tool_results)
    assert policy.stats()["prunes"] == 0


def test_opencode_protects_the_last_two_turns() -> None:
    kit = FakeKit(W32)
    policy = OC.make(kit)
    driver = Driver(policy, kit)
    pending: list[Message] = [Message.system("s"), Message.user("task")]
    for n in range(12):
        driver.call(pending)
        pending = _step(n, 4_000)
    driver.call(pending)
    pending = [Message.assistant("done"), Message.user("second task")]
    for n in range(12, 14):
        driver.call(pending)
        pending = _step(n, 200)
    driver.call(pending)
    driver.call([Message.assistant("done again")])
    # two runs ended and pruned, but the big outputs are in the previous turn: protected
    assert policy.stats()["prunes"] == 0
    assert not any(r.text == OC.CLEARED for m in driver.contexts[-1] for r in m.tool_results)


def _session(policy: Any, kit: FakeKit, steps: int, chars: int) -> Driver:
    """A task, then ``steps`` tool steps of ``chars`` characters, one call before each."""
    driver = Driver(policy, kit)
    pending: list[Message] = [Message.system("You are an agent."), Message.user("Fix the bug.")]
    for n in range(steps):
        driver.call(pending)
        pending = _step(n, chars)
    driver.call(pending)
    return driver


def _single_run(kit: FakeKit, steps: int, chars: int = 4_000) -> tuple[Any, Driver]:
    policy = OC.make(kit)
    return policy, _session(policy, kit, steps, chars)


def test_opencode_summarizes_on_overflow_with_its_request() -> None:
    kit = FakeKit(W16)
    policy, driver = _single_run(kit, steps=9)
    assert policy.stats()["compactions"] == 1
    request = kit.summaries[0].request
    assert [m.role for m in request] == ["system", "user"]
    assert request[0].text == OC.COMPACTION_SYSTEM
    prompt = request[1].text
    assert prompt.startswith("Here is the conversation so far:\n\n<conversation>\n[User]: Fix")
    assert '[Assistant tool call]: bash({"command":"cat file_0.py"})' in prompt
    assert "[Tool result]: output line of step 0" in prompt
    assert "\n[truncated]" in prompt  # outputs cut at 2,000 characters
    assert "Create a new anchored summary" in prompt
    assert prompt.endswith(OC.SUMMARY_TEMPLATE)
    assert kit.summaries[0].previous is None
    assert kit.summaries[0].max_tokens == W16.max_output
    # the model then sees: the kept tail, the question, the summary, the continue message
    context = driver.contexts[-1]
    texts = [m.text for m in context]
    at = texts.index(OC.COMPACTION_QUESTION)
    assert context[at + 1].role == "assistant" and context[at + 1].text == "SUMMARY 1"
    assert context[at + 2].role == "user" and context[at + 2].text == OC.CONTINUE
    tail = context[1:at]
    assert tail and tail[0].role == "assistant"  # never a tool result without its call
    assert kit.count(tail) <= OC.preserve_recent_budget(W16) + 50
    assert _paired(context)
    summarized = kit.summaries[0].messages
    assert summarized[0].text == "Fix the bug."
    assert not set(map(id, summarized)) & set(map(id, tail))


def test_opencode_second_summary_folds_in_the_first() -> None:
    kit = FakeKit(W16)
    policy, _ = _single_run(kit, steps=20)
    assert policy.stats()["compactions"] >= 2
    second = kit.summaries[1]
    assert second.previous == "SUMMARY 1"
    assert "<prior-summary>\nSUMMARY 1\n</prior-summary>" in second.request[1].text
    # the first summary is not summarized again as a message
    assert all(m.text != "SUMMARY 1" for m in second.messages)


def test_opencode_recovers_from_a_rejection_by_compacting() -> None:
    kit = FakeKit(W16)
    policy = OC.make(kit)
    messages = [Message.system("s"), Message.user("task")]
    for n in range(14):
        messages.extend(_step(n, 4_000))
    context = policy.prepare(messages)  # no usage seen yet: sent as it is
    assert kit.count(context) > W16.limit
    retry = policy.recover(KIT.Rejected(kit.count(context), W16.limit))
    assert retry is not None and kit.count(retry) <= W16.limit
    assert retry[-1].text == OC.OVERFLOW_NOTE + OC.CONTINUE
    assert policy.stats()["overflow_compactions"] == 1
    assert _paired(retry)


# -- LangChain ------------------------------------------------------------------------------------


def test_langchain_is_configured_as_documented() -> None:
    policy = LC.make(FakeKit(W16))
    middleware = policy.middleware
    assert type(middleware).__module__ == "langchain.agents.middleware.summarization"
    assert middleware.keep == ("messages", 20)
    assert middleware.trigger == ("fraction", 0.8)
    assert policy.model.profile == {"max_input_tokens": W16.limit}
    assert policy.recover(KIT.Rejected(20_000, W16.limit)) is None


def test_langchain_summarizes_at_its_trigger_and_keeps_its_tail() -> None:
    kit = FakeKit(W16)
    policy = LC.make(kit)
    driver = _session(policy, kit, steps=40, chars=1_200)
    sizes = [len(c) for c in driver.contexts]
    first = next(i for i, c in enumerate(driver.contexts) if LC.summary_text(c[1]) is not None)
    before = driver.contexts[first - 1]
    assert before[1].text == "Fix the bug."  # nothing was summarized before the trigger
    assert sizes[first] < sizes[first - 1]
    context = driver.contexts[first]
    assert context[0].role == "system"
    kept = context[2:]
    assert len(kept) in (20, 21)  # the last 20, moved back to a call when a result starts them
    assert kept[0].role != "tool"
    assert _paired(context)
    assert policy.stats()["compactions"] >= 1


def test_langchain_summary_request_is_its_prompt() -> None:
    kit = FakeKit(W16)
    policy = LC.LangChainPolicy(kit, trigger=("tokens", 1_500), keep=("messages", 4))
    driver = _session(policy, kit, steps=8, chars=800)
    assert kit.summaries, "the summary model was never called"
    request = kit.summaries[0].request
    assert [m.role for m in request] == ["user"]
    text = request[0].text
    assert text.startswith("<role>\nContext Extraction Assistant\n</role>")
    assert "<messages>\nMessages to summarize:\n" in text
    assert "Fix the bug." in text and "file_0.py" in text
    summarized = kit.summaries[0].messages
    assert summarized[0].text == "Fix the bug."
    summaries = [c[1] for c in driver.contexts if c and LC.summary_text(c[1]) is not None]
    assert summaries and LC.summary_text(summaries[0]) == "SUMMARY 1"
    assert all(_paired(c) for c in driver.contexts)


def test_langchain_trim_drops_a_history_without_a_human_message() -> None:
    """LangChain trims what it summarizes to its last 4,000 tokens starting at a human message:
    a long agent run whose only human message is the task gets no summary call at all."""
    kit = FakeKit(W16)
    policy = LC.make(kit)
    driver = _session(policy, kit, steps=40, chars=1_200)
    summaries = [LC.summary_text(c[1]) for c in driver.contexts if c]
    assert "Previous conversation was too long to summarize." in summaries
    assert policy.stats()["summary_calls"] == len(kit.summaries)


@pytest.mark.parametrize("module", [OC, LC])
def test_make_gives_a_policy(module: ModuleType) -> None:
    policy = module.make(FakeKit(W32))
    assert policy.name in ("opencode", "langchain")
    assert {"compactions", "prunes"} <= set(policy.stats())
