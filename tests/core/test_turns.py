"""Tests of turns, steps, cut points and the cuts (find_cut_point, force, emergency cuts)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.core.model import Message, Reasoning, Text, ToolCall, ToolResult, assign_ids
from abridged.core.turns import (
    TURN_REACH,
    CutPoint,
    cut_points,
    emergency_drop_oldest_steps,
    emergency_minimal,
    find_cut_point,
    head_length,
    is_reasoning_only,
    is_tool_result_message,
    is_user_message,
    split_steps,
    split_turns,
)
from abridged.errors import SettingError
from tests.strategies import (
    agent_session,
    assert_valid_context,
    chat_session,
    conversations,
    count_tokens,
    pinned_indexes,
    total_tokens,
)


def _tail(messages: Sequence[Message], index: int) -> int:
    return total_tokens(messages[index:])


def _call(*ids: str, reasoning: bool = False) -> Message:
    return Message.assistant(
        tool_calls=[ToolCall(i, "bash", "{}") for i in ids],
        reasoning=[Reasoning("think", signature="s")] if reasoning else (),
    )


# -- structure -------------------------------------------------------------------------------------


@given(conversations())
def test_turns_and_steps_partition_the_cuttable_region(messages: list[Message]) -> None:
    head = head_length(messages)
    turns = split_turns(messages)
    position = head
    for turn in turns:
        assert turn.start == position
        position = turn.end
        if turn.user is not None:
            assert turn.user == turn.start
            assert is_user_message(messages[turn.user])
        inner = [m for m in messages[turn.start + 1 : turn.end] if is_user_message(m)]
        assert inner == []
        covered = turn.start + (1 if turn.user is not None else 0)
        for step in turn.steps:
            assert step.start == covered
            covered = step.end
            assert step.assistant is not None
            assert messages[step.assistant].role == "assistant"
            assert not is_reasoning_only(messages[step.assistant])
            assert messages[step.start].role == "assistant"
        assert covered == turn.end
    assert position == (len(messages) if turns else head)
    assert [s for t in turns for s in t.steps] == split_steps(messages)


@given(conversations())
def test_cut_points_are_exactly_the_safe_cuts(messages: list[Message]) -> None:
    """Brute force: i is a cut point iff keeping head + messages[i:] is paired and no reasoning
    block is separated from its calls, and messages[i] starts a user turn or a step."""
    head = head_length(messages)
    expected = []
    for i in range(head + 1, len(messages)):
        message = messages[i]
        if not (is_user_message(message) or message.role == "assistant"):
            continue
        if message.role == "assistant" and is_reasoning_only(messages[i - 1]):
            continue
        kept = [*messages[:head], *messages[i:]]
        from abridged.core.validate import is_paired

        if is_paired(kept) and is_paired(messages[:i]):
            expected.append(i)
    assert cut_points(messages) == expected
    for i in expected:
        assert_valid_context(messages, [*messages[:head], *messages[i:]])


def test_parallel_results_in_several_messages_are_never_split() -> None:
    msgs = [
        Message.system("s"),
        Message.user("u"),
        _call("a", "b", "c"),
        Message.tool("b", "rb"),
        Message(
            "tool", (ToolResult("c", "bash", (Text("rc"),)), ToolResult("a", "bash", (Text("ra"),)))
        ),
        Message.assistant("done"),
    ]
    assert cut_points(msgs) == [2, 5]
    assert [(s.start, s.end) for s in split_steps(msgs)] == [(2, 5), (5, 6)]


def test_reasoning_only_message_stays_with_the_tool_calls_after_it() -> None:
    msgs = [
        Message.user("u"),
        Message("assistant", (Reasoning("plan", signature="sig"),)),
        _call("a"),
        Message.tool("a", "ra"),
        Message("assistant", (Reasoning("more", signature="sig2"),)),
        Message.assistant("done"),
    ]
    assert cut_points(msgs) == [1, 4]
    steps = split_steps(msgs)
    assert [(s.start, s.end, s.assistant) for s in steps] == [(1, 4, 2), (4, 6, 5)]


def test_tool_results_are_not_user_messages() -> None:
    anthropic_style = Message("user", (ToolResult("a", "bash", (Text("out"),)),))
    assert is_tool_result_message(anthropic_style)
    assert not is_user_message(anthropic_style)
    assert not is_user_message(Message.tool("a", "out"))
    msgs = [Message.user("u"), _call("a"), anthropic_style, Message.assistant("done")]
    assert [(t.start, t.end) for t in split_turns(msgs)] == [(0, 4)]
    assert cut_points(msgs) == [1, 3]


def test_head_holds_leading_system_and_summary_messages_only() -> None:
    msgs = [
        Message.system("s"),
        Message.user("summary", meta={"kind": "summary"}),
        Message.user("u"),
        Message.system("note"),
        Message.assistant("a"),
    ]
    assert head_length(msgs) == 2
    turns = split_turns(msgs)
    assert [(t.start, t.end, t.user) for t in turns] == [(2, 5, 2)]
    assert cut_points(msgs) == [4]  # the mid-conversation system note stays with its user turn


def test_history_starting_mid_turn_has_a_turn_without_user() -> None:
    msgs = [Message.tool("x", "stray"), _call("a"), Message.tool("a", "r"), Message.user("u")]
    turns = split_turns(msgs)
    assert [(t.start, t.end, t.user) for t in turns] == [(0, 3, None), (3, 4, 3)]
    assert turns[0].steps[0].assistant is None
    assert cut_points(msgs) == [1, 3]


# -- find_cut_point: properties -------------------------------------------------------------------


@st.composite
def _cut_case(draw: st.DrawFn) -> tuple[list[Message], int, int, frozenset[int]]:
    messages = draw(conversations())
    total = total_tokens(messages[head_length(messages) :])
    keep = total * draw(st.integers(0, 120)) // 100  # up to 20% more than the whole history
    min_split = draw(st.integers(1, 8))
    pinned = draw(pinned_indexes(messages))
    return messages, keep, min_split, pinned


def _check_cut(messages: list[Message], cut: CutPoint, min_split: int) -> None:
    kept = cut.apply(messages)
    assert_valid_context(messages, kept)
    head = head_length(messages)
    assert cut.head == head
    assert kept[:head] == messages[:head]
    if cut.none:
        assert kept == messages
        return
    assert cut.index in cut_points(messages)
    assert kept[-1] is messages[-1]
    assert cut.kept_tokens == _tail(messages, cut.index)
    assert cut.kept_tokens + cut.dropped_tokens == total_tokens(messages[head:])
    assert cut.splits_turn == (not is_user_message(messages[cut.index]))
    if cut.splits_turn:
        assert cut.turn_start is not None and cut.turn_prefix is not None
        assert cut.turn_prefix == range(cut.turn_start, cut.index)
        between = [i for i in range(cut.turn_start + 1, cut.index) if is_user_message(messages[i])]
        assert between == []
        assert is_user_message(messages[cut.turn_start]) or cut.turn_start == head
        assert cut.summarize_turn_prefix == (len(cut.turn_prefix) >= min_split)
        end = cut.turn_start if cut.summarize_turn_prefix else cut.index
        assert cut.history == range(head, end)
    else:
        assert cut.turn_start is None and cut.turn_prefix is None
        assert not cut.summarize_turn_prefix
        assert cut.history == range(head, cut.index)


@given(_cut_case())
def test_find_cut_point_keeps_pairing_and_follows_its_rule(
    case: tuple[list[Message], int, int, frozenset[int]],
) -> None:
    messages, keep, min_split, pinned = case
    cut = find_cut_point(
        messages, keep, count_tokens, min_split_turn_messages=min_split, pinned=pinned
    )
    assert cut == find_cut_point(
        messages, keep, count_tokens, min_split_turn_messages=min_split, pinned=pinned
    )
    _check_cut(messages, cut, min_split)
    head = head_length(messages)
    cuts = cut_points(messages)
    total = total_tokens(messages[head:])
    if not cuts or total <= keep:
        assert cut.none
        return
    assert not cut.none
    # The step cut: the oldest cut point whose tail fits in the keep (else the last one).
    step = next((c for c in cuts if _tail(messages, c) <= keep), cuts[-1])
    assert cut.index >= step
    assert cut.kept_tokens <= keep or cut.index == cuts[-1]
    later_turns = [c for c in cuts if c > step and is_user_message(messages[c])]
    if cut.index > step:  # moved forward to the nearest turn start, within reach
        assert cut.reason == "turn"
        assert cut.index == later_turns[0]
        assert _tail(messages, cut.index) >= TURN_REACH * keep
    elif cut.splits_turn and later_turns:  # the nearest later turn start was out of reach
        assert _tail(messages, later_turns[0]) < TURN_REACH * keep
    # Pinned messages before the cut are kept, with their whole step.
    for i in pinned:
        if head <= i < cut.index:
            assert i in cut.pinned


@given(_cut_case())
def test_force_always_cuts_when_a_cut_point_exists(
    case: tuple[list[Message], int, int, frozenset[int]],
) -> None:
    messages, keep, min_split, pinned = case
    cut = find_cut_point(
        messages, keep, count_tokens, min_split_turn_messages=min_split, force=True, pinned=pinned
    )
    _check_cut(messages, cut, min_split)
    cuts = cut_points(messages)
    assert cut.none == (not cuts)
    assert cut.forced
    if cuts and total_tokens(messages[head_length(messages) :]) <= keep:
        turns = [c for c in cuts if is_user_message(messages[c])]
        assert cut.index == (turns[-1] if turns else cuts[-1])


@given(conversations(), st.data())
def test_emergency_drop_oldest_steps_drops_half_the_steps(
    messages: list[Message], data: st.DataObject
) -> None:
    pinned = data.draw(pinned_indexes(messages))
    cut = emergency_drop_oldest_steps(messages, count_tokens, pinned=pinned)
    assert cut == emergency_drop_oldest_steps(messages, count_tokens, pinned=pinned)
    _check_cut(messages, cut, 5)
    steps = split_steps(messages)
    if len(steps) < 2:
        assert cut.none
        return
    dropped = [s for s in steps if s.start < cut.index]
    assert len(dropped) == len(steps) // 2
    assert cut.forced


@given(conversations(), st.data())
def test_emergency_minimal_keeps_head_pinned_and_latest_user(
    messages: list[Message], data: st.DataObject
) -> None:
    pinned = data.draw(pinned_indexes(messages))
    minimal = emergency_minimal(messages, pinned=pinned)
    assert minimal == emergency_minimal(messages, pinned=pinned)
    kept = minimal.apply(messages)
    assert_valid_context(messages, kept)
    head = head_length(messages)
    users = [i for i, m in enumerate(messages) if is_user_message(m) and i >= head]
    assert minimal.latest_user == (users[-1] if users else None)
    expected = set(range(head)) | set(minimal.pinned)
    if users:
        expected.add(users[-1])
    assert set(minimal.kept) == expected
    assert all(i in minimal.pinned for i in pinned if i >= head)
    assert sorted(minimal.dropped + minimal.kept) == list(range(len(messages)))


# -- find_cut_point: the two shapes and examples --------------------------------------------------


def test_agent_session_of_one_task_and_100_steps_compacts_to_keep_recent() -> None:
    messages = agent_session(100)
    keep = 20_000
    total = total_tokens(messages)
    cut = find_cut_point(messages, keep, count_tokens)
    assert 0.9 * keep <= cut.kept_tokens <= keep
    assert cut.dropped_tokens > total - keep - 2_000
    assert cut.splits_turn and cut.turn_start == 1
    assert cut.turn_prefix == range(1, cut.index)
    assert cut.summarize_turn_prefix
    assert cut.history == range(1, 1)  # everything before the cut is the task's turn
    assert messages[cut.index].role == "assistant"
    assert_valid_context(messages, cut.apply(messages))


def test_chat_of_100_turns_compacts_to_keep_recent_at_a_turn_boundary() -> None:
    messages = chat_session(100)
    keep = 20_000
    cut = find_cut_point(messages, keep, count_tokens)
    assert 0.9 * keep <= cut.kept_tokens <= keep
    assert cut.reason == "turn" and not cut.splits_turn
    assert is_user_message(messages[cut.index])
    assert cut.history == range(1, cut.index)
    assert_valid_context(messages, cut.apply(messages))


def test_both_shapes_compact_alike() -> None:
    agent = find_cut_point(agent_session(100), 20_000, count_tokens)
    chat = find_cut_point(chat_session(100), 20_000, count_tokens)
    assert abs(agent.kept_tokens - chat.kept_tokens) < 0.1 * 20_000


def _equal_turns(*steps: int) -> list[Message]:
    """Turns of a user message and ``steps`` answers, every message 100 tokens."""
    body = "x" * 384
    msgs: list[Message] = []
    for t, n in enumerate(steps):
        msgs.append(Message.user(f"{t}{body}"))
        msgs.extend(Message.assistant(f"{t}{s}{body}") for s in range(n))
    msgs = assign_ids(msgs)
    assert {count_tokens(m) for m in msgs} == {100}
    return msgs


def test_turn_within_reach_is_preferred_over_the_step_cut() -> None:
    msgs = _equal_turns(3, 3)  # user 0, steps 1-3; user 4, steps 5-7
    # keep 500: the step cut is index 3 (inside turn 1); turn 2 keeps 400 >= 250: within reach.
    cut = find_cut_point(msgs, 500, count_tokens)
    assert (cut.index, cut.reason, cut.splits_turn) == (4, "turn", False)
    assert cut.history == range(0, 4)


def test_turn_out_of_reach_splits_the_turn() -> None:
    msgs = _equal_turns(3, 1)  # user 0, steps 1-3; user 4, step 5
    # keep 550: the step cut is index 1 (keeps 500); turn 2 keeps 200 < 275: out of reach.
    cut = find_cut_point(msgs, 550, count_tokens)
    assert (cut.index, cut.reason, cut.splits_turn, cut.turn_start) == (1, "step", True, 0)
    assert cut.turn_prefix == range(0, 1)
    assert not cut.summarize_turn_prefix  # 1 message < 5: folded into the main summary
    assert cut.history == range(0, 1)
    # keep 400 reaches exactly twice turn 2's 200: within reach again.
    assert find_cut_point(msgs, 400, count_tokens).index == 4


def test_split_turn_prefix_gets_its_own_summary_from_n_messages() -> None:
    messages = agent_session(10, output_chars=400)
    keep = total_tokens(messages[-5:])
    cut = find_cut_point(messages, keep, count_tokens)
    assert cut.splits_turn and cut.turn_start == 1
    assert len(cut.turn_prefix or ()) >= 5
    assert cut.summarize_turn_prefix and cut.history == range(1, 1)
    prefix = len(cut.turn_prefix or ())
    small = find_cut_point(messages, keep, count_tokens, min_split_turn_messages=prefix + 1)
    assert not small.summarize_turn_prefix
    assert small.history == range(1, small.index)


def test_a_last_step_larger_than_keep_is_kept_alone() -> None:
    messages = agent_session(5, output_chars=40_000)[:-1]  # ends with a bulky step
    cut = find_cut_point(messages, 100, count_tokens)
    assert cut.index == cut_points(messages)[-1]
    assert cut.kept_tokens > 100


def test_no_cut_point_gives_none_and_never_raises() -> None:
    for messages in (
        [],
        [Message.system("s")],
        [Message.system("s"), Message.user("u")],
        [Message.system("s"), _call("a"), Message.tool("a", "r")],  # a single step
        [_call("a"), Message.user("u", meta={"note": 1}), Message.tool("a", "r")],
    ):
        for force in (False, True):
            cut = find_cut_point(messages, 0, count_tokens, force=force)
            assert cut.none and cut.index == 0
            assert cut.apply(messages) == messages
            assert emergency_drop_oldest_steps(messages).none


def test_under_keep_recent_is_no_cut_unless_forced() -> None:
    messages = chat_session(3)
    assert find_cut_point(messages, 10**9, count_tokens).none
    assert find_cut_point(messages, 10**9, count_tokens).reason == "under keep_recent_tokens"
    forced = find_cut_point(messages, 10**9, count_tokens, force=True)
    assert (forced.index, forced.reason, forced.forced) == (5, "force: turn", True)
    agent = agent_session(3, output_chars=100)
    forced = find_cut_point(agent, 10**9, count_tokens, force=True)
    assert forced.index == cut_points(agent)[-1] and forced.splits_turn  # keeps the last step


def test_pinned_steps_are_kept_whole_before_the_tail() -> None:
    messages = agent_session(20, output_chars=400)
    pin_result = 3  # the tool result of the first step (index 2 is its call)
    cut = find_cut_point(messages, 300, count_tokens, pinned={pin_result, 1})
    assert cut.pinned == (1, 2, 3)
    kept = cut.apply(messages)
    assert kept[:4] == messages[:4]
    assert kept[4:] == messages[cut.index :]
    assert_valid_context(messages, kept)
    by_meta = [m.replace(meta={"pinned": True}) if i == 1 else m for i, m in enumerate(messages)]
    assert find_cut_point(by_meta, 300, count_tokens).pinned == (1,)


def test_emergency_drop_moves_to_the_user_message_of_a_turns_first_step() -> None:
    messages = chat_session(4)  # 4 turns of one step: steps at 2, 4, 6, 8
    cut = emergency_drop_oldest_steps(messages, count_tokens)
    assert cut.index == 5  # drops 2 steps; the user message 5 stays with its answer
    assert not cut.splits_turn


def test_emergency_minimal_examples() -> None:
    messages = agent_session(4)
    minimal = emergency_minimal(messages, pinned={3})
    assert minimal.kept == (0, 1, 2, 3)
    assert minimal.latest_user == 1
    no_user = [Message.system("s"), _call("a"), Message.tool("a", "r"), Message.assistant("x")]
    minimal = emergency_minimal(no_user)
    assert (minimal.kept, minimal.latest_user) == ((0,), None)
    assert minimal.dropped == (1, 2, 3)
    assert emergency_minimal([Message.user("u")]).none


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"keep_recent_tokens": -1}, "keep_recent_tokens"),
        ({"keep_recent_tokens": 1.5}, "keep_recent_tokens"),
        ({"keep_recent_tokens": True}, "keep_recent_tokens"),
        ({"min_split_turn_messages": 0}, "min_split_turn_messages"),
    ],
)
def test_find_cut_point_setting_errors(kwargs: dict[str, object], name: str) -> None:
    args: dict[str, object] = {"keep_recent_tokens": 10, **kwargs}
    with pytest.raises(SettingError) as info:
        find_cut_point(chat_session(3), count_tokens=count_tokens, **args)  # type: ignore[arg-type]
    assert info.value.name == name
    assert info.value.value == kwargs[name]


def test_emergency_drop_setting_error() -> None:
    with pytest.raises(SettingError) as info:
        emergency_drop_oldest_steps(chat_session(3), min_split_turn_messages=0)
    assert info.value.name == "min_split_turn_messages"


def test_interrupted_calls_get_an_error_result_before_what_follows() -> None:
    from abridged.core.turns import close_interrupted_calls
    from abridged.core.validate import is_paired

    a = Message("assistant", (ToolCall("c1", "ls"), ToolCall("c2", "cat")))
    answered = Message("tool", (ToolResult("c1", "ls", "a.py"),))
    history = [Message.user("go"), a, answered, Message.user("and now?")]
    closed = close_interrupted_calls(history, "stopped")
    assert [m.role for m in closed] == ["user", "assistant", "tool", "tool", "user"]
    assert closed[3].tool_results[0].call_id == "c2" and closed[3].tool_results[0].is_error
    assert is_paired(closed) and not is_paired(history)
    whole = [Message.user("go"), a, answered, Message("tool", (ToolResult("c2", "cat", "x"),))]
    assert close_interrupted_calls(whole, "stopped") is whole  # nothing missing: the same list
    trailing = close_interrupted_calls([Message.user("go"), a], "stopped")
    assert [m.role for m in trailing] == ["user", "assistant", "tool", "tool"]
