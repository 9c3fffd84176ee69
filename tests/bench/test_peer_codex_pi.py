"""Tests of ``bench/peer_codex.py`` and ``bench/peer_pi.py``: when each peer compacts, what its
compacted context and summary request look like, how it recovers, on synthetic and real sessions."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from abridged.core.model import Message, ToolCall, Usage
from tests.bench.support import FakeKit, load_bench

KIT = load_bench("policy_kit")
CODEX = load_bench("peer_codex")
PI = load_bench("peer_pi")

W16 = KIT.Window("16k", 16_384, 4_096)
W32 = KIT.Window("32k", 32_768, 4_096)


# -- a synthetic session --------------------------------------------------------------------------

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "theta",
    "kappa",
    "lambda",
    "sigma",
    "omega",
]
SYSTEM = Message.system("You are a coding agent. Use the bash tool.")
TASK = Message.user("Fix the bug in parser.py: " + " ".join(WORDS * 20))


def _output(step: int, words: int) -> str:
    return f"file_{step}.py\n" + " ".join(
        f"{WORDS[(i + step) % len(WORDS)]}{i}" for i in range(words)
    )


def step(index: int, words: int = 500) -> list[Message]:
    """One assistant step: a thought and a bash call, then its (big) result."""
    call = ToolCall(f"call_{index}", "bash", json.dumps({"command": f"cat file_{index}.py"}))
    return [
        Message.assistant(f"THOUGHT: step {index}, reading file_{index}.py", tool_calls=[call]),
        Message.tool(f"call_{index}", _output(index, words), name="bash"),
    ]


@dataclass
class Call:
    new: list[Message]
    context: list[Message]
    compactions: int  # the policy's compactions made in this ``prepare``
    sent: int  # tokens of what was finally sent (0 when nothing could be)


def replay(policy: Any, kit: FakeKit, batches: Sequence[Sequence[Message]]) -> list[Call]:
    """The harness's loop: prepare, send (one recover and retry over the limit), observe."""
    calls: list[Call] = []
    for new in batches:
        before = policy.stats()["compactions"]
        context = policy.prepare(list(new))
        made = policy.stats()["compactions"] - before
        tokens = kit.count(context)
        if tokens > kit.window.limit:
            retry = policy.recover(KIT.Rejected(tokens, kit.window.limit))
            tokens = 0 if retry is None else kit.count(retry)
            if tokens > kit.window.limit:
                tokens = 0
            if retry is not None:
                context = retry
        calls.append(Call(list(new), context, made, tokens))
        if tokens:
            policy.observe(Usage(input=tokens, output=50))
    return calls


def session(steps: int, words: int = 500) -> list[list[Message]]:
    """The batches ``prepare`` gets: system and task, then each step's reply and result."""
    batches: list[list[Message]] = [[SYSTEM, TASK]]
    batches.extend(step(i, words) for i in range(steps))
    return batches


def _paired(context: Sequence[Message]) -> bool:
    """Every tool result follows its call in ``context``."""
    calls: set[str] = set()
    for message in context:
        calls.update(c.id for c in message.tool_calls)
        if any(r.call_id not in calls for r in message.tool_results):
            return False
    return True


# -- Codex ----------------------------------------------------------------------------------------


def test_codex_constants_scale_with_the_window() -> None:
    assert CODEX.auto_compact_limit(W16) == 11_059  # 90% of 12,288
    assert CODEX.auto_compact_limit(W32) == 25_804
    assert CODEX.user_message_budget(W16) == CODEX.user_message_budget(W32) == 20_000
    assert CODEX.COMPACT_USER_MESSAGE_MAX_TOKENS == 20_000


def _codex_total(usage_total: int, new: Sequence[Message]) -> int:
    """Codex's ``get_total_token_usage``, computed here: the last total plus the JSON bytes / 4
    of the function outputs recorded after the reply."""
    outputs = [m for m in new if m.role == "tool"]
    return usage_total + sum(
        math.ceil(
            len(
                json.dumps(
                    {
                        "type": "function_call_output",
                        "call_id": m.tool_results[0].call_id,
                        "output": m.tool_results[0].text,
                    },
                    ensure_ascii=False,
                    separators=(",", ":"),
                ).encode()
            )
            / 4
        )
        for m in outputs
    )


def test_codex_compacts_when_the_total_reaches_its_limit_and_not_before() -> None:
    kit = FakeKit(W16)
    policy = CODEX.make(kit)
    calls = replay(policy, kit, session(14))
    limit = 11_059  # 90% of the 16k window's 12,288 input tokens
    compacted = [i for i, c in enumerate(calls) if c.compactions]
    assert compacted, "a 14-step session of ~1k-token results must compact at 16k"
    previous_total: int | None = None
    for i, call in enumerate(calls):
        expected = previous_total is not None and _codex_total(previous_total, call.new) >= limit
        assert bool(call.compactions) == expected, i
        previous_total = call.sent + 50 if call.sent else None
    assert all(c.sent for c in calls), "Codex's estimate kept this session under the limit"
    assert policy.stats()["compactions"] == len(compacted)
    assert policy.stats()["prunes"] == 0
    assert policy.stats()["summary_requests"] == len(kit.summaries)


def test_codex_rebuilds_initial_context_user_messages_and_summary() -> None:
    kit = FakeKit(W16)
    policy = CODEX.CodexPolicy(kit, user_message_max_tokens=20_000)
    calls = replay(policy, kit, session(26))
    first = next(c for c in calls if c.compactions)
    system, task, summary = first.context
    assert system == SYSTEM
    assert task.role == "user" and task.text == TASK.text
    assert summary.role == "user" and summary.is_summary
    assert summary.text == f"{CODEX.SUMMARY_PREFIX}\nsummary 1"
    # A second compaction keeps the real user message, not the first summary.
    second = [c for c in calls if c.compactions][1]
    assert [m.text for m in second.context[1:]] == [TASK.text, f"{CODEX.SUMMARY_PREFIX}\nsummary 2"]


def test_codex_summary_request_is_the_history_plus_its_prompt() -> None:
    kit = FakeKit(W16)
    policy = CODEX.make(kit)
    calls = replay(policy, kit, session(14))
    index = next(i for i, c in enumerate(calls) if c.compactions)
    request = kit.summaries[0].request
    # The context of the previous call, what came since, then the prompt as a user message:
    # a prefix of the previous request, so it can read the prompt cache.
    assert request == [*calls[index - 1].context, *calls[index].new, request[-1]]
    assert request[-1].role == "user" and request[-1].text == CODEX.SUMMARIZATION_PROMPT
    assert kit.summaries[0].previous is None
    assert kit.summaries[0].max_tokens == W16.max_output


def test_codex_keeps_the_newest_user_messages_within_the_budget() -> None:
    kit = FakeKit(W16)
    policy = CODEX.CodexPolicy(kit, user_message_max_tokens=40)
    calls = replay(policy, kit, session(14))
    first = next(c for c in calls if c.compactions)
    kept = first.context[1].text
    assert kept.startswith(TASK.text[:80]) and kept.endswith(TASK.text[-80:])
    assert "tokens truncated…" in kept
    assert CODEX.approx_token_count(kept) < CODEX.approx_token_count(TASK.text)


def test_codex_has_no_recovery_but_compacts_after_a_rejection() -> None:
    kit = FakeKit(W16)
    policy = CODEX.make(kit)
    replay(policy, kit, session(2))
    assert policy.recover(KIT.Rejected(20_000, W16.limit)) is None
    assert policy.stats()["rejections"] == 1
    context = policy.prepare(step(2))  # small, but the context was marked full
    assert policy.stats()["compactions"] == 1
    assert context[-1].is_summary


def test_codex_trims_the_oldest_items_from_a_compaction_request_too_long() -> None:
    kit = FakeKit(W16)
    policy = CODEX.make(kit)
    policy.prepare([SYSTEM, TASK])
    for i in range(14):  # no usage observed: nothing triggers, the history outgrows the window
        policy.prepare(step(i))
    assert kit.count(policy.prepare([])) > W16.limit
    policy.recover(KIT.Rejected(0, W16.limit))
    context = policy.prepare(step(14))
    stats = policy.stats()
    assert stats["compactions"] == 1 and stats["trimmed_items"] > 0
    request = kit.summaries[0].request
    assert kit.count(request) <= W16.limit
    assert TASK not in request  # the oldest item went first...
    assert context[1].text == TASK.text  # ...but the user messages come from the whole history
    assert _paired(request)


# -- pi -------------------------------------------------------------------------------------------


def test_pi_settings_scale_to_the_window() -> None:
    assert PI.Settings.for_window(W16) == PI.Settings(4_096, 5_000)
    assert PI.Settings.for_window(W32) == PI.Settings(8_192, 10_000)
    big = KIT.Window("200k", 200_000, 32_000)
    assert PI.Settings.for_window(big) == PI.Settings(PI.RESERVE_TOKENS, PI.KEEP_RECENT_TOKENS)


def _chars4(message: Message) -> int:
    """pi's ``estimateTokens`` of the synthetic messages, computed here."""
    if message.role == "tool":
        return math.ceil(len(message.tool_results[0].text) / 4)
    calls = sum(len(c.name) + len(c.arguments.replace(": ", ":")) for c in message.tool_calls)
    return math.ceil((len(message.text) + calls) / 4)


def test_pi_compacts_past_window_minus_reserve_and_not_before() -> None:
    kit = FakeKit(W16)
    policy = PI.make(kit)
    calls = replay(policy, kit, session(20))
    threshold = W16.tokens - PI.Settings.for_window(W16).reserve_tokens
    first = next(i for i, c in enumerate(calls) if c.compactions)
    for i in range(1, first + 1):
        # Before any compaction the usage is trusted: last call's total + what followed it.
        usage = calls[i - 1].sent + 50
        estimate = usage + sum(_chars4(m) for m in calls[i].new[1:])
        assert (estimate > threshold) == (i == first), i
    assert policy.stats()["compactions"] >= 2


def test_pi_context_is_summary_and_a_tail_cut_at_a_turn_boundary() -> None:
    kit = FakeKit(W16)
    policy = PI.make(kit)
    calls = replay(policy, kit, session(14))
    for call in (c for c in calls if c.compactions):
        system, summary, *kept = call.context
        assert system == SYSTEM
        assert summary.is_summary and summary.text.startswith(PI.COMPACTION_SUMMARY_PREFIX)
        assert summary.text.endswith(PI.COMPACTION_SUMMARY_SUFFIX)
        assert kept and kept[0].role == "assistant"  # never a tool result first
        assert _paired(kept)
        kept_tokens = sum(_chars4(m) for m in kept)
        # The walk stops once keepRecentTokens is reached, at the next cut point after it.
        assert kept_tokens <= PI.Settings.for_window(W16).keep_recent_tokens + max(
            _chars4(m) for m in kept
        )


def test_pi_first_summary_is_a_split_turn_from_a_serialized_transcript() -> None:
    kit = FakeKit(W16)
    policy = PI.make(kit)
    calls = replay(policy, kit, session(14))
    first = next(c for c in calls if c.compactions)
    # One turn (the task) split: no history, so only the turn prefix is summarized.
    assert len(kit.summaries) == 1
    prefix = kit.summaries[0]
    assert prefix.messages[0] == TASK
    assert prefix.max_tokens == int(0.5 * 4_096)
    system, user = prefix.request
    assert system.role == "system" and system.text == PI.SUMMARIZATION_SYSTEM_PROMPT
    assert user.text.startswith(f"<conversation>\n[User]: {TASK.text}\n\n[Assistant]: THOUGHT")
    assert '[Assistant tool calls]: bash(command="cat file_0.py")' in user.text
    assert "more characters truncated]" in user.text  # results cut at 2,000 chars
    assert user.text.endswith(PI.TURN_PREFIX_SUMMARIZATION_PROMPT)
    assert PI.NO_PRIOR_HISTORY + PI.SPLIT_TURN_HEADING + "summary 1" in first.context[1].text
    assert policy.stats()["split_turns"] == 1


def test_pi_next_compaction_updates_the_summary_and_loses_no_kept_message() -> None:
    kit = FakeKit(W16)
    policy = PI.make(kit)
    calls = replay(policy, kit, session(20))
    compactions = [c for c in calls if c.compactions]
    assert len(compactions) >= 2
    first_kept = compactions[0].context[2]
    update = kit.summaries[1]
    assert update.previous is not None and update.previous.startswith(PI.NO_PRIOR_HISTORY)
    assert update.messages[0] is first_kept  # the fix of pi #2608: kept messages are summarized
    text = update.request[1].text
    assert f"<previous-summary>\n{update.previous}\n</previous-summary>" in text
    assert text.endswith(PI.UPDATE_SUMMARIZATION_PROMPT)
    # Every message is either in the final context or was handed to a summary.
    seen = {id(m) for s in kit.summaries for m in s.messages} | {id(m) for m in calls[-1].context}
    assert all(id(m) in seen for batch in session_messages(calls) for m in batch)


def session_messages(calls: Sequence[Call]) -> list[list[Message]]:
    return [[m for m in c.new if m.role != "system"] for c in calls]


def test_pi_recovers_an_overflow_once() -> None:
    kit = FakeKit(W16)
    policy = PI.PiPolicy(kit, mid_run=False)  # pi <= 0.84: no threshold check inside a run
    calls = replay(policy, kit, session(14))
    assert policy.stats()["overflow_compactions"] >= 1
    assert policy.stats()["compactions"] == policy.stats()["overflow_compactions"]
    assert all(c.sent for c in calls), "each overflow was compacted and retried"
    assert all(c.sent <= W16.limit for c in calls)
    # A second overflow before any successful response: pi gives up.
    policy.prepare(step(14))
    assert policy.recover(KIT.Rejected(20_000, W16.limit)) is not None
    assert policy.recover(KIT.Rejected(20_000, W16.limit)) is None


def test_pi_mid_run_check_compacts_before_any_overflow() -> None:
    kit = FakeKit(W16)
    policy = PI.make(kit)
    replay(policy, kit, session(14))
    assert policy.stats()["compactions"] >= 1
    assert policy.stats()["overflow_compactions"] == 0
    assert policy.stats()["summary_requests"] == len(kit.summaries)


# -- real sessions --------------------------------------------------------------------------------


@pytest.mark.parametrize("peer", ["codex", "pi"])
def test_peers_on_real_sessions(peer: str, swebench_path: Path) -> None:
    from abridged.formats.transcripts import load_transcripts

    module = CODEX if peer == "codex" else PI
    transcripts = load_transcripts(str(swebench_path))[:3]
    total_compactions = 0
    for transcript in transcripts:
        kit = FakeKit(W16)
        policy = module.make(kit)
        messages = transcript.messages
        fed = 0
        for index, message in enumerate(messages):
            if message.role != "assistant":
                continue
            new = [m.replace(usage=None) if m.usage else m for m in messages[fed:index]]
            fed = index
            context = policy.prepare(new)
            assert _paired(context)
            tokens = kit.count(context)
            if tokens > W16.limit:
                # Only where the peer's own estimate said it fit.
                if peer == "codex":
                    assert policy.total_usage_tokens() < CODEX.auto_compact_limit(W16)
                else:
                    threshold = W16.tokens - policy.settings.reserve_tokens
                    assert policy.context_tokens() <= threshold
                retry = policy.recover(KIT.Rejected(tokens, W16.limit))
                if retry is None:
                    continue
                tokens = kit.count(retry)
                if tokens > W16.limit:
                    continue
            output = message.usage.output if message.usage else 100
            policy.observe(Usage(input=tokens, output=output))
        total_compactions += policy.stats()["compactions"]
    assert total_compactions >= 2
