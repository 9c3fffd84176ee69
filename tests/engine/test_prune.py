"""Tests of tool-output pruning: plan, apply, boundary, idempotence, policies, placeholders."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.core.model import Image, Message, Text, ToolCall, ToolResult, assign_ids
from abridged.core.turns import split_steps
from abridged.engine.prune import (
    TOOL_POLICIES,
    PrunePlan,
    PruneSettings,
    apply_prune,
    placeholder_text,
    plan_prune,
)
from abridged.errors import MessageValidationError, SettingError
from tests.strategies import (
    TOOLS,
    agent_session,
    assert_valid_context,
    conversations,
    count_tokens,
    total_tokens,
)

PLACEHOLDER = re.compile(
    r"^\[tool output pruned: [\d,]+ chars(, \d+ non-text parts?)?, ~[\d.]+[km]? tokens; "
    r"call (\w+#)?[\w,]+\]$"
)


@st.composite
def prune_settings(draw: st.DrawFn) -> PruneSettings:
    policies = st.sampled_from(TOOL_POLICIES)
    return PruneSettings(
        mode=draw(st.sampled_from(["auto", "keep_all", "keep_none"])),
        tool_policy=draw(st.dictionaries(st.sampled_from(TOOLS), policies, max_size=3)),
        protect_recent_tokens=draw(st.sampled_from([0, 500, 2_000, 20_000])),
        protect_recent_steps=draw(st.integers(0, 4)),
        min_savings_tokens=draw(st.sampled_from([0, 100, 1_000, 4_096])),
        min_result_tokens=draw(st.sampled_from([0, 50, 256])),
        hard_limit_tokens=draw(st.none() | st.integers(1, 60_000)),
    )


def _results(message: Message) -> list[tuple[str, str, bool]]:
    return [(r.call_id, r.name, r.is_error) for r in message.tool_results]


def _check_plan(messages: list[Message], settings: PruneSettings, plan: PrunePlan) -> None:
    """Everything a plan and its application promise."""
    pruned = apply_prune(messages, plan)
    assert len(pruned) == len(messages)
    assert_valid_context(messages, pruned)
    # Ids, roles, call ids, tool names and error flags are kept: only result contents change.
    for before, after in zip(messages, pruned, strict=True):
        assert (after.id, after.role, _results(after)) == (before.id, before.role, _results(before))
        assert after.tool_calls == before.tool_calls
    # Nothing changes before the old boundary or in the protected window.
    changed = [i for i, (a, b) in enumerate(zip(messages, pruned, strict=True)) if a is not b]
    assert changed == list(plan.indexes)
    assert all(plan.boundary <= i < plan.protect_start for i in changed)
    # The plan's arithmetic is the truth.
    assert plan.tokens_before == total_tokens(messages)
    assert plan.tokens_after == total_tokens(pruned)
    assert plan.new_boundary >= plan.boundary
    for i in changed:
        # Never larger: each changed message shrinks, in tokens and in characters.
        assert count_tokens(pruned[i]) < count_tokens(messages[i])
        assert pruned[i].meta["pruned"]
        for call_id in pruned[i].meta["pruned"]:
            (result,) = [r for r in pruned[i].tool_results if r.call_id == call_id]
            assert PLACEHOLDER.match(result.text), result.text
            (original,) = [r for r in messages[i].tool_results if r.call_id == call_id]
            assert len(result.text) < len(original.text) or any(
                not isinstance(c, Text) for c in original.content
            )
    if plan.skipped:
        assert plan.pruned == () and plan.new_boundary == plan.boundary
        assert pruned == messages
    else:
        assert plan.pruned and plan.new_boundary == plan.protect_start
        if not plan.forced:
            assert plan.saved_tokens >= settings.min_savings_tokens
    # Policies: keep is never pruned and summarize is left for the summarizer, unless forced.
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    for item in plan.pruned:
        for call_id in item.call_ids:
            policy = settings.policy_for(names[call_id])
            assert plan.forced or policy == "prune"
    if settings.mode == "keep_all":
        assert plan.forced or plan.skipped
    for _index, call_id in plan.for_summarizer:
        assert settings.policy_for(names[call_id]) == "summarize"
        assert call_id not in plan.call_ids


@given(conversations(), prune_settings(), st.data())
def test_prune_plan_and_apply_keep_every_promise(
    messages: list[Message], settings: PruneSettings, data: st.DataObject
) -> None:
    boundary = data.draw(st.integers(0, len(messages)))
    plan = plan_prune(messages, settings, count_tokens, boundary=boundary)
    assert plan == plan_prune(messages, settings, count_tokens, boundary=boundary)  # deterministic
    _check_plan(messages, settings, plan)


@given(conversations(), prune_settings())
def test_prune_is_idempotent(messages: list[Message], settings: PruneSettings) -> None:
    plan = plan_prune(messages, settings, count_tokens)
    once = apply_prune(messages, plan)
    assert apply_prune(once, plan) == once
    for boundary in (plan.boundary, plan.new_boundary):
        again = plan_prune(once, settings, count_tokens, boundary=boundary)
        assert again.pruned == ()
        assert apply_prune(once, again) == once


@given(conversations("agent"), prune_settings(), st.data())
def test_prune_boundary_only_moves_forward_and_keeps_the_prefix(
    messages: list[Message], settings: PruneSettings, data: st.DataObject
) -> None:
    """A growing conversation pruned at every step: the boundary never moves back, and the
    context before it stays byte-identical from one call to the next."""
    growth = sorted(data.draw(st.sets(st.integers(1, len(messages)), min_size=1, max_size=8)))
    context: list[Message] = []
    boundary = 0
    previous_boundary = 0
    for size in growth:
        context = context + messages[len(context) : size]
        plan = plan_prune(context, settings, count_tokens, boundary=boundary)
        _check_plan(context, settings, plan)
        pruned = apply_prune(context, plan)
        assert plan.new_boundary >= boundary >= previous_boundary
        assert all(a is b for a, b in zip(context[:boundary], pruned[:boundary], strict=False))
        assert [m.fingerprint for m in pruned[:boundary]] == [
            m.fingerprint for m in context[:boundary]
        ]
        previous_boundary, boundary = boundary, plan.new_boundary
        context = pruned


@given(conversations(), prune_settings())
def test_protected_window_covers_recent_tokens_and_steps(
    messages: list[Message], settings: PruneSettings
) -> None:
    plan = plan_prune(messages, settings, count_tokens)
    start = plan.protect_start
    if settings.protect_recent_tokens:
        assert total_tokens(messages[start:]) >= min(
            settings.protect_recent_tokens, total_tokens(messages)
        )
    steps = split_steps(messages)
    if settings.protect_recent_steps and steps:
        assert start <= steps[-min(len(steps), settings.protect_recent_steps)].start


# -- examples ------------------------------------------------------------------------------------


def _settings(**changes: object) -> PruneSettings:
    base: dict[str, object] = {
        "protect_recent_tokens": 0,
        "protect_recent_steps": 1,
        "min_savings_tokens": 0,
    }
    base.update(changes)
    return PruneSettings(**base)  # type: ignore[arg-type]


def test_placeholder_format() -> None:
    assert (
        placeholder_text("bash", "c12", 48_211, 12_390)
        == "[tool output pruned: 48,211 chars, ~12.1k tokens; call bash#c12]"
    )
    assert placeholder_text("", "c1", 5_000, 900) == (
        "[tool output pruned: 5,000 chars, ~900 tokens; call c1]"
    )


def test_old_bulky_output_becomes_a_placeholder_with_its_size() -> None:
    messages = agent_session(3, output_chars=48_000)
    plan = plan_prune(messages, _settings(protect_recent_steps=2), count_tokens)
    assert plan.skipped is None
    assert [p.index for p in plan.pruned] == [3, 5]  # the last two steps (6-8) are protected
    pruned = apply_prune(messages, plan)
    result = pruned[3].tool_results[0]
    original = messages[3].tool_results[0]
    assert result.call_id == "c0" and result.name == "bash"
    chars = len(original.text)
    tokens = count_tokens(messages[3]) - count_tokens(Message("tool", (ToolResult("c0", "bash"),)))
    assert tokens == 12_002
    assert result.text == f"[tool output pruned: {chars:,} chars, ~11.7k tokens; call bash#c0]"
    assert pruned[3].meta["pruned"] == {"c0": {"chars": chars, "tokens": tokens}}
    assert pruned[7] is messages[7]
    assert plan.new_boundary == plan.protect_start == 6


def test_tool_name_comes_from_the_call_when_the_result_has_none() -> None:
    messages = assign_ids(
        [
            Message.user("u"),
            Message.assistant(tool_calls=[ToolCall("r1", "read_file", "{}")]),
            Message("tool", (ToolResult("r1", "", (Text("y" * 5_000),)),)),
            Message.assistant("done"),
        ]
    )
    plan = plan_prune(messages, _settings(tool_policy={"read_file": "keep"}), count_tokens)
    assert plan.skipped == "nothing to prune"
    plan = plan_prune(messages, _settings(), count_tokens)
    assert plan.pruned[0].tool == "read_file"
    assert "call read_file#r1" in apply_prune(messages, plan)[2].tool_results[0].text


def test_placeholder_never_larger_keeps_the_original() -> None:
    messages = assign_ids(
        [
            Message.user("u"),
            Message.assistant(tool_calls=[ToolCall("a", "bash"), ToolCall("b", "bash")]),
            Message(
                "tool",
                (
                    ToolResult("a", "bash", (Text("ok"),)),
                    ToolResult("b", "bash", (Text("z" * 900),)),
                ),
            ),
            Message.assistant("done"),
        ]
    )
    plan = plan_prune(messages, _settings(mode="keep_none", min_result_tokens=0), count_tokens)
    assert plan.call_ids == ("b",)
    pruned = apply_prune(messages, plan)
    assert pruned[2].tool_results[0].text == "ok"
    assert set(pruned[2].meta["pruned"]) == {"b"}


def test_auto_skips_small_results_and_keep_none_does_not() -> None:
    messages = agent_session(4, output_chars=600)  # ~150 tokens per result
    auto = plan_prune(messages, _settings(), count_tokens)
    assert auto.skipped == "nothing to prune"
    keep_none = plan_prune(messages, _settings(mode="keep_none"), count_tokens)
    assert len(keep_none.pruned) == 4  # the final answer is the protected last step


def test_prune_freeing_too_little_is_skipped() -> None:
    messages = agent_session(3, output_chars=4_000)
    plan = plan_prune(messages, _settings(min_savings_tokens=4_096), count_tokens)
    assert plan.skipped is not None
    assert re.fullmatch(r"frees 2\.\dk tokens, under min_savings_tokens 4k", plan.skipped)
    assert plan.new_boundary == plan.boundary == 0
    assert apply_prune(messages, plan) == messages
    assert not plan_prune(messages, _settings(min_savings_tokens=1_000), count_tokens).skipped


def test_summarize_policy_is_left_for_the_summarizer() -> None:
    messages = agent_session(3, output_chars=8_000)
    plan = plan_prune(messages, _settings(tool_policy={"bash": "summarize"}), count_tokens)
    assert plan.skipped == "nothing to prune"
    assert plan.for_summarizer == ((3, "c0"), (5, "c1"), (7, "c2"))


def test_keep_all_prunes_nothing_until_the_hard_limit_then_everything() -> None:
    messages = agent_session(3, output_chars=8_000)
    total = total_tokens(messages)
    keep = {"bash": "keep"}
    under = plan_prune(
        messages,
        _settings(mode="keep_all", hard_limit_tokens=total, tool_policy=keep),
        count_tokens,
    )
    assert under.skipped == "mode keep_all (under the hard limit)" and not under.forced
    over = plan_prune(
        messages,
        _settings(
            mode="keep_all", hard_limit_tokens=total - 1, tool_policy=keep, min_savings_tokens=10**6
        ),
        count_tokens,
    )
    assert over.forced and over.skipped is None
    assert over.call_ids == ("c0", "c1", "c2")
    assert plan_prune(messages, _settings(mode="keep_all"), count_tokens).skipped


def test_keep_policy_is_never_pruned_in_auto_or_keep_none() -> None:
    messages = agent_session(3, output_chars=8_000)
    for mode in ("auto", "keep_none"):
        plan = plan_prune(
            messages, _settings(mode=mode, tool_policy={"bash": "keep"}), count_tokens
        )
        assert plan.pruned == ()


def test_text_protocol_results_are_pruned_in_their_text_too() -> None:
    observation = "<returncode>0</returncode>\n<output>\n" + "line\n" * 2_000 + "</output>"
    meta = {"text_protocol": True}
    messages = assign_ids(
        [
            Message.user("task"),
            Message(
                "assistant",
                (Text("```bash\nls\n```"), ToolCall("b1", "bash", '{"command": "ls"}')),
                meta=meta,
            ),
            Message(
                "tool",
                (Text(observation), ToolResult("b1", "bash", (Text(observation),))),
                meta=meta,
            ),
            Message.assistant("done"),
        ]
    )
    plan = plan_prune(messages, _settings(), count_tokens)
    (item,) = plan.pruned
    assert item.text_protocol and item.chars == len(observation)
    pruned = apply_prune(messages, plan)[2]
    assert pruned.text == item.placeholder
    assert pruned.tool_results[0].text == item.placeholder
    assert pruned.meta["text_protocol"] is True
    assert pruned.meta["pruned"] == {"b1": {"chars": len(observation), "tokens": item.tokens}}
    assert count_tokens(pruned) < count_tokens(messages[2])


def test_placeholder_never_longer_than_a_short_text_protocol_output() -> None:
    observation = "<returncode>0</returncode>\n<output>\nok\n</output>"
    meta = {"text_protocol": True}
    messages = assign_ids(
        [
            Message.user("task"),
            Message("assistant", (Text("ls"), ToolCall("b1", "bash", "{}")), meta=meta),
            Message(
                "tool",
                (Text(observation), ToolResult("b1", "bash", (Text(observation),))),
                meta=meta,
            ),
            Message.assistant("done"),
        ]
    )

    def heavy(message: Message) -> int:  # a counter that finds the observation very costly
        return 1_000 if "<returncode>" in message.text else 1

    plan = plan_prune(messages, _settings(mode="keep_none"), heavy)
    assert plan.pruned == () and plan.skipped == "nothing to prune"


def test_results_with_images_say_so() -> None:
    content = (Text("x" * 4_000), Image(url="https://example.invalid/a.png"))
    messages = assign_ids(
        [
            Message.user("u"),
            Message.assistant(tool_calls=[ToolCall("s1", "screenshot")]),
            Message("tool", (ToolResult("s1", "screenshot", content),)),
            Message.assistant("done"),
        ]
    )
    plan = plan_prune(messages, _settings(), count_tokens)
    assert "4,000 chars, 1 non-text part, ~" in plan.pruned[0].placeholder


def test_apply_rejects_a_plan_made_for_other_messages() -> None:
    messages = agent_session(3, output_chars=8_000)
    plan = plan_prune(messages, _settings(), count_tokens)
    with pytest.raises(MessageValidationError) as info:
        apply_prune(messages[:2], plan)
    assert info.value.field == "index"
    shifted = [messages[0], *messages[2:]]
    with pytest.raises(MessageValidationError) as info:
        apply_prune(shifted, plan)
    assert info.value.field == "call_id" and info.value.index == 3


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("mode", "sometimes"),
        ("default_policy", "drop"),
        ("tool_policy", ["bash"]),
        ("protect_recent_tokens", -1),
        ("protect_recent_steps", 1.5),
        ("min_savings_tokens", True),
        ("min_result_tokens", -3),
        ("hard_limit_tokens", 0),
        ("hard_limit_tokens", "16k"),
    ],
)
def test_prune_settings_errors(name: str, value: object) -> None:
    with pytest.raises(SettingError) as info:
        PruneSettings(**{name: value})  # type: ignore[arg-type]
    assert info.value.name == name
    assert info.value.value is value


def test_unknown_tool_policy_names_the_tool() -> None:
    with pytest.raises(SettingError) as info:
        PruneSettings(tool_policy={"bash": "shred"})  # type: ignore[dict-item]
    assert info.value.name == "tool_policy['bash']"
    assert info.value.value == "shred"


@pytest.mark.parametrize("boundary", [-1, 99, 1.0, True])
def test_boundary_out_of_range(boundary: object) -> None:
    with pytest.raises(SettingError) as info:
        plan_prune(agent_session(2), PruneSettings(), count_tokens, boundary=boundary)  # type: ignore[arg-type]
    assert info.value.name == "boundary"
