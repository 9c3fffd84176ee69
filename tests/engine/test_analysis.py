"""Tests of the transcript analysis: categories, per-call sizes, trigger and prune figures."""

from __future__ import annotations

from abridged.core.budget import compute_budget
from abridged.core.model import Message, Reasoning, ToolCall, Usage
from abridged.core.tokens import TokenCounter, estimate_text_tokens
from abridged.engine.analysis import analyze_messages
from abridged.engine.prune import PruneSettings


def _agent_session(steps: int, output: str) -> list[Message]:
    msgs = [Message.system("You are an agent."), Message.user("Fix the rounding bug.")]
    reported = 0
    counter = TokenCounter()
    for n in range(steps):
        reported = counter.estimate_context(msgs)
        msgs.append(
            Message.assistant(
                f"step {n}",
                tool_calls=[ToolCall(f"c{n}", "bash", '{"command": "cat a.py"}')],
                reasoning=[Reasoning("thinking about it")],
                usage=Usage(input=reported, output=10),
            )
        )
        msgs.append(Message.tool(f"c{n}", output, name="bash"))
    msgs.append(Message.assistant("done", usage=Usage(input=counter.estimate_context(msgs))))
    return msgs


def test_categories_add_up_and_name_each_kind_of_content() -> None:
    msgs = _agent_session(3, "x = 1\n" * 50)
    a = analyze_messages(msgs)
    assert a.categories["system"] == estimate_text_tokens("You are an agent.")
    assert a.categories["tool_results"] == 3 * estimate_text_tokens("x = 1\n" * 50)
    assert a.categories["reasoning"] == 3 * estimate_text_tokens("thinking about it")
    assert a.categories["tool_calls"] > 0
    assert a.total_tokens == sum(a.categories.values())
    assert (a.turns, a.steps, len(a.calls)) == (1, 4, 4)
    assert a.tools[0].name == "bash" and a.tools[0].calls == 3


def test_calls_carry_reports_and_estimates_close_to_them() -> None:
    msgs = _agent_session(6, "line of output\n" * 40)
    a = analyze_messages(msgs)
    assert [c.index for c in a.calls] == [i for i, m in enumerate(msgs) if m.role == "assistant"]
    # The reports were made with the same estimator, so both predictions are near-exact.
    assert max(a.errors("hybrid")) < 0.02
    assert max(a.errors("cold")) < 0.05
    assert a.peak_context == max(c.reported or 0 for c in a.calls)


def test_trigger_and_budget_figures() -> None:
    msgs = _agent_session(30, "data " * 400)
    budget = compute_budget(16_384, 4_096)
    a = analyze_messages(
        msgs, budget=budget, prune_settings=PruneSettings(protect_recent_tokens=budget.keep_recent)
    )
    over = [n for n, c in enumerate(a.calls, 1) if c.tokens >= budget.trigger]
    assert a.first_trigger_call == over[0]
    assert a.calls_over_trigger == len(over)
    assert a.calls_over_budget == sum(c.tokens > budget.input_budget for c in a.calls)
    # Everything outside the protected recent window can go.
    assert a.prunable_tokens > 0.6 * a.categories["tool_results"]


def test_no_budget_means_no_trigger_figures() -> None:
    a = analyze_messages(_agent_session(2, "y"))
    assert a.budget is None and a.first_trigger_call is None and a.prunable_tokens == 0
