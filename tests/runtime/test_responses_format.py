"""The ContextManager on OpenAI Responses items (input items in, input items out) and on the
provider's own compaction items (Responses ``compaction``, Anthropic ``compaction`` blocks):
what precedes them is neither sent nor summarized again, and they are carried through
abridged's own later compactions."""

from __future__ import annotations

import json
from typing import Any

from abridged.core.model import Opaque
from abridged.core.validate import is_paired
from abridged.formats.anthropic_messages import messages_from_anthropic
from abridged.formats.openai_responses import messages_from_responses
from abridged.runtime import ContextManager, Prepared
from abridged.runtime.caller_formats import detect_format

ENCRYPTED = "gAAAAABo" + "c3VtbWFyeQ" * 60


def make(**kwargs: Any) -> ContextManager:
    """A manager for a 16k window (input budget 11k), extractive summaries."""
    return ContextManager(
        context_window=16_384, max_output_tokens=4_096, summarizer="extractive", **kwargs
    )


def log_text(k: int, chars: int = 2_400) -> str:
    line = f"2025-01-0{k % 9 + 1} INFO worker-{k} processed batch {k}: ok; queue depth {k * 7}\n"
    return (line * (chars // len(line) + 1))[:chars]


def response_output(k: int, parallel: bool) -> list[dict[str, Any]]:
    """What one response gives: reasoning, one or two function calls (the second in parallel),
    and every fourth step a built-in web search."""
    items: list[dict[str, Any]] = [
        {"type": "reasoning", "id": f"rs_{k}", "summary": [], "encrypted_content": "enc" * 20}
    ]
    if k % 4 == 0:
        items.append(
            {
                "type": "web_search_call",
                "id": f"ws_{k}",
                "status": "completed",
                "action": {"type": "search", "query": f"queue depth worker {k}"},
            }
        )
    calls = [f"call_{k}a", f"call_{k}b"] if parallel else [f"call_{k}a"]
    items += [
        {
            "type": "function_call",
            "call_id": c,
            "name": "read_log",
            "arguments": json.dumps({"part": k, "c": c}),
        }
        for c in calls
    ]
    return items


def outputs(k: int, parallel: bool) -> list[dict[str, Any]]:
    calls = [f"call_{k}a", f"call_{k}b"] if parallel else [f"call_{k}a"]
    return [{"type": "function_call_output", "call_id": c, "output": log_text(k)} for c in calls]


def check(ctx: Prepared) -> None:
    assert ctx.format == "responses"
    assert ctx.tokens <= ctx.budget.input_budget
    sent = messages_from_responses(ctx.messages)
    assert is_paired(sent)
    for item in ctx.messages:  # every function_call_output has its call in what is sent
        if item.get("type") == "function_call_output":
            assert any(
                i.get("type") == "function_call" and i.get("call_id") == item["call_id"]
                for i in ctx.messages
            )


def run_session(cm: ContextManager, steps: int, start: list[dict[str, Any]]) -> Prepared:
    items = list(start)
    ctx = cm.prepare(items)
    for k in range(steps):
        items += response_output(k, parallel=k % 3 == 0)  # appended as the response gave them
        ctx = cm.prepare(items)
        check(ctx)
        items += outputs(k, parallel=k % 3 == 0)
        ctx = cm.prepare(items)
        check(ctx)
    return ctx


SYSTEM = {"role": "developer", "content": "You are an operations agent."}
TASK = {"role": "user", "content": "Find out why the queue backs up."}


def test_responses_items_are_detected_and_written_back_as_they_came() -> None:
    assert detect_format([TASK, *response_output(0, True)]) == ("responses", True)
    content = [{"type": "input_text", "text": "hi"}]
    assert detect_format([{"role": "user", "content": content}]) == ("responses", True)
    cm = make()
    items = [SYSTEM, TASK, *response_output(0, True), *outputs(0, True)]
    ctx = cm.prepare(items)
    assert ctx.messages is items and not ctx.changed


def test_a_long_responses_session_with_parallel_calls_stays_paired_and_in_budget() -> None:
    cm = make()
    ctx = run_session(cm, 60, [SYSTEM, TASK])
    assert cm.state.compactions >= 1
    assert ctx.messages[0] is SYSTEM  # the caller's own objects where unchanged
    # a response's reasoning, calls and built-in items are one message: never split
    for m in cm.history:
        kinds = {p.kind for p in m.parts}
        assert not ("reasoning" in kinds and m.role != "assistant")


def test_a_changed_item_inside_a_response_group_is_read_again_with_its_group() -> None:
    cm = make()
    items = [SYSTEM, TASK, *response_output(0, True)]
    cm.prepare(items)
    edited = [*items[:-1], {**items[-1], "arguments": '{"part": 99}'}]
    ctx = cm.prepare(edited)
    calls = [c for m in cm.history for c in m.tool_calls]
    assert [c.arguments for c in calls][-1] == '{"part": 99}'
    assert len(calls) == 2 and ctx.messages[-1]["arguments"] == '{"part": 99}'
    assert sum(1 for m in cm.history if m.role == "assistant") == 1


def test_what_precedes_a_responses_compaction_item_is_not_sent_again() -> None:
    cm = make()
    before = [SYSTEM, TASK, *response_output(0, False), *outputs(0, False)]
    compaction = {"type": "compaction", "id": "cmp_1", "encrypted_content": ENCRYPTED}
    after = {"role": "user", "content": "Go on from the summary."}
    ctx = cm.prepare([*before, compaction, after])
    assert ctx.messages == [SYSTEM, compaction, after]
    assert ctx.changed


def test_a_provider_compaction_is_carried_through_abridgeds_own_compactions() -> None:
    cm = make()
    compaction = {"type": "compaction", "id": "cmp_1", "encrypted_content": ENCRYPTED}
    ctx = run_session(cm, 40, [SYSTEM, TASK, compaction])
    assert cm.state.compactions >= 1
    assert compaction in ctx.messages  # only the provider can read what it stands for
    assert TASK not in ctx.messages or ctx.messages.index(TASK) > 0
    summaries = [s for s in (cm.state.summary or "",) if s]
    assert all(ENCRYPTED[:60] not in s for s in summaries)


def test_what_precedes_an_anthropic_compaction_block_is_not_sent_again() -> None:
    cm = ContextManager(context_window=16_384, max_output_tokens=4_096, format="anthropic")
    old = [
        {"role": "user", "content": "Summarise the incident report."},
        {"role": "assistant", "content": "The report says the queue backed up at 09:14."},
    ]
    compacted = {
        "role": "assistant",
        "content": [
            {"type": "compaction", "content": "The user asked about a queue incident."},
            {"type": "text", "text": "Noted."},
        ],
    }
    follow = {"role": "user", "content": "What was the cause?"}
    ctx = cm.prepare([*old, {"role": "user", "content": "go on"}, compacted, follow])
    assert ctx.messages == [compacted, follow]
    sent = messages_from_anthropic(ctx.messages)
    assert isinstance(sent[0].parts[0], Opaque) and sent[0].parts[0].is_compaction


def test_an_edit_before_the_provider_compaction_rolls_the_boundary_back() -> None:
    cm = make()
    compaction = {"type": "compaction", "id": "cmp_1", "encrypted_content": ENCRYPTED}
    after = {"role": "user", "content": "Go on."}
    assert cm.prepare([SYSTEM, TASK, compaction, after]).messages == [SYSTEM, compaction, after]
    # the caller drops the compaction item (an edit): everything is sent again
    ctx = cm.prepare([SYSTEM, TASK, after])
    assert ctx.messages == [SYSTEM, TASK, after]
