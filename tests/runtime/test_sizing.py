"""Tests of context sizes: the report plus the calibrated estimate, stale reports, bounds."""

from __future__ import annotations

from abridged.core.model import Message, Reasoning, Usage
from abridged.core.tokens import REPLY_PRIMING, TokenCounter
from abridged.engine.context import CompactionState
from abridged.runtime.caller_formats import token_upper_bound
from abridged.runtime.sizing import Sizer, known_output_tokens
from abridged.runtime.token_sums import TokenSums


def setup(history: list[Message]) -> tuple[Sizer, TokenSums]:
    counter = TokenCounter()
    sums = TokenSums(counter.message_tokens, token_upper_bound)
    sums.extend(history)
    return Sizer(counter), sums


def test_without_a_report_the_context_is_estimated() -> None:
    history = [Message.system("s"), Message.user("hello there")]
    sizer, sums = setup(history)
    state = CompactionState()
    exact = sizer.exact(state, 2, history, sums)
    assert exact == sums.exact(0, 2) + REPLY_PRIMING
    assert sizer.upper(state, sums) >= exact


def test_a_report_is_the_base_and_a_stale_one_is_ignored() -> None:
    history = [Message.user("q"), Message.assistant("answer " * 20), Message.user("next")]
    sizer, sums = setup(history)
    state = CompactionState()
    # (a report far beyond what "q" can cost would be a hidden prefix: see test_hidden_prefix)
    assert sizer.record(Usage(input=12, output=22), 1, 0, current=0)
    size = sizer.exact(state, 3, history, sums)
    assert 12 + 22 < size < 12 + 60
    assert not sizer.record(Usage(input=5_000), 3, 0, current=1)
    moved = CompactionState(epoch=1)
    assert sizer.exact(moved, 3, history, sums) < 100


def test_known_output_is_trusted_within_reason() -> None:
    reply = Message.assistant("word " * 40)
    assert known_output_tokens(reply, Usage(input=1, output=41), 45) == 45
    assert known_output_tokens(reply, Usage(input=1, output=500), 45) is None
    thinking = Message("assistant", (Reasoning("hmm"),))
    assert known_output_tokens(thinking, Usage(input=1, output=3), 5) is None


def test_consecutive_reports_calibrate() -> None:
    history = [Message.user("x " * 400)]
    sizer, sums = setup(history)
    state = CompactionState()
    for k in range(6):
        history.append(Message.user(f"more {k} " * 300))
        sums.extend(history[-1:])
        real = round(1.5 * (sums.upper(0) / 2))  # any consistent over-count
        sizer.record(Usage(input=real), len(history), 0, current=0)
    sizer.learn(state, history, sums)
    assert sizer.counter.calibration.samples >= 5
