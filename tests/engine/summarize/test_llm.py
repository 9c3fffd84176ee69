"""Tests of the model summarizer against the scripted model: prompts, budget, map-reduce,
ceiling, fallback, cache reuse."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abridged.core.model import Message, ToolCall, Usage
from abridged.core.protocols import Completion, FileOps, SummaryRequest, ToolSpec
from abridged.core.tokens import estimate_context_tokens
from abridged.engine.summarize.extractive import ExtractiveSummarizer
from abridged.engine.summarize.ledger import LEDGER_SHARE
from abridged.engine.summarize.llm import (
    NET_MAX_SHARE,
    LLMSummarizer,
    clean_reply,
    ensure_files,
    failure_reason,
)
from abridged.engine.summarize.prompts import (
    SECTION_KEYS,
    SECTIONS,
    SYSTEM_PROMPT,
    find_headings,
    parse_sections,
    render_sections,
)
from abridged.engine.summarize.safety_net import net_tokens
from abridged.errors import ProviderError, SettingError
from abridged.providers.scripted import ScriptedCall, ScriptedModel
from tests.strategies import conversations

GOOD = render_sections({"intent": "- Fix the parser.", "state": "Tests pass."})
TITLES = [s.title for s in SECTIONS]


def _asked(ceiling: int, request: SummaryRequest | None) -> int:
    """What the model is asked for under ``ceiling``: the room the safety net's sections take in
    the extractive summary of ``request`` is kept for it, at least ``LEDGER_SHARE`` of the
    ceiling and at most ``NET_MAX_SHARE`` (``None``: a summarizer without a net)."""
    need = net_tokens(ExtractiveSummarizer().build(request).text) if request else 0
    reserve = min(max(int(ceiling * LEDGER_SHARE), need), int(ceiling * NET_MAX_SHARE))
    return max(1, ceiling - reserve)


def _fits(call: ScriptedCall, budget: int) -> bool:
    """Independently of the summarizer's own helper: the estimator on exactly what was sent."""
    tools = [
        {"name": t.name, "description": t.description, "parameters": dict(t.parameters)}
        for t in call.tools or ()
    ]
    return estimate_context_tokens(call.messages, tools or None) <= budget


def _session(steps: int = 3, output: str = "ok") -> list[Message]:
    messages = [Message.system("You are a coding agent."), Message.user("Fix the unit parser.")]
    for k in range(steps):
        call = ToolCall(f"c{k}", "bash", json.dumps({"command": f"cat src/file{k}.py"}))
        messages.append(Message.assistant(f"Step {k}.", tool_calls=[call]))
        messages.append(Message.tool(call.id, f"{output} {k}", name="bash"))
    messages.append(Message.assistant("Done."))
    return messages


def _request(messages: Sequence[Message], **kwargs: object) -> SummaryRequest:
    return SummaryRequest(messages=tuple(messages), **kwargs)  # type: ignore[arg-type]


async def test_one_call_with_the_anti_continuation_system_prompt_and_the_sections() -> None:
    model = ScriptedModel([GOOD])
    summarizer = LLMSummarizer(model, max_output_tokens=1_500, input_budget_tokens=20_000)
    request = _request(_session(), max_tokens=1_000)
    summary = await summarizer.summarize(request)
    assert len(model.calls) == 1
    call = model.calls[0]
    system, prompt = call.messages
    assert system.role == "system" and system.text == SYSTEM_PROMPT
    assert "you are not the assistant in this conversation" in system.text.lower()
    assert prompt.role == "user"
    body = prompt.text
    assert body.count("<conversation>") == 1 and "<user>\nFix the unit parser.\n</user>" in body
    positions = [body.index("## " + t) for t in TITLES]
    assert positions == sorted(positions)
    # min(max_output_tokens, request.max_tokens), less the safety net's room
    assert call.max_output_tokens == _asked(1_000, request) < 1_000
    assert call.tools is None
    assert summary.summarizer == "llm:scripted"
    # The reply's sections, and the files section the tracked reads added.
    assert find_headings(summary.text) == ["intent", "state", "files"]
    assert not summary.truncated and summary.fallback_reason is None
    assert summary.usage is not None and summary.usage.output > 0
    assert summary.file_ops.read == {f"src/file{k}.py" for k in range(3)}


async def test_update_and_turn_prefix_use_their_prompts() -> None:
    model = ScriptedModel([GOOD, GOOD])
    summarizer = LLMSummarizer(model, max_output_tokens=500, input_budget_tokens=20_000)
    await summarizer.summarize(
        _request(_session(), kind="update", previous_summary="## User intent and requests\n- old")
    )
    await summarizer.summarize(_request(_session(), kind="turn_prefix", focus="the parser"))
    update, prefix = (c.messages[1].text for c in model.calls)
    assert "<previous_summary>\n## User intent and requests\n- old\n</previous_summary>" in update
    assert "still in progress" in prefix and "<focus>\nthe parser\n</focus>" in prefix


async def test_a_leading_summary_message_becomes_the_previous_summary() -> None:
    model = ScriptedModel([GOOD])
    summarizer = LLMSummarizer(model, max_output_tokens=500, input_budget_tokens=20_000)
    old = Message.user("## User intent and requests\n- keep it short", meta={"kind": "summary"})
    await summarizer.summarize(_request([old, *_session()], kind="update"))
    text = model.calls[0].messages[1].text
    assert "<previous_summary>\n## User intent and requests\n- keep it short" in text
    assert "<summary>" not in text


def _tagging_reply(messages: Sequence[Message], tools: Sequence[ToolSpec] | None) -> str:
    """A summary that records how deep in the map-reduce it was made and what it covered."""
    prompt = messages[-1].text
    levels = [int(x) for x in re.findall(r"level=(\d+)", prompt)]
    markers = sorted(set(re.findall(r"marker-\d+", prompt)))
    level = max(levels) + 1 if "<partial_summary" in prompt else 0
    return render_sections({"intent": f"level={level} " + " ".join(markers)})


def _big_session(n: int) -> list[Message]:
    messages: list[Message] = [Message.user("Investigate the flaky build.")]
    for k in range(n):
        call = ToolCall(f"c{k}", "bash", json.dumps({"command": f"./run {k}"}))
        messages.append(Message.user(f"Keep going, marker-{k}."))
        messages.append(Message.assistant(f"Run {k}.", tool_calls=[call]))
        messages.append(Message.tool(call.id, f"run {k}: " + f"value {k} " * 400, name="bash"))
    return messages


async def test_map_reduce_keeps_every_call_within_the_input_budget() -> None:
    budget = 3_000
    model = ScriptedModel(default=_tagging_reply)
    summarizer = LLMSummarizer(model, max_output_tokens=400, input_budget_tokens=budget)
    messages = _big_session(40)
    request = _request(messages, max_tokens=400)
    summary = await summarizer.summarize(request)
    assert summary.fallback_reason is None
    assert len(model.calls) >= 3
    assert all(_fits(call, budget) for call in model.calls)
    maps = [c for c in model.calls if "<conversation>" in c.messages[-1].text]
    merges = [c for c in model.calls if "<partial_summary" in c.messages[-1].text]
    assert len(maps) >= 2 and merges
    assert all(re.search(r"part \d+ of \d+", c.messages[-1].text) for c in maps)
    # Chunks are on message boundaries and cover every message.
    seen = " ".join(c.messages[-1].text for c in maps)
    for k in range(40):
        assert seen.count(f"marker-{k}.") == 1
    # The final summary is the last merge, made within the depth bound (map = level 0).
    level = int(re.search(r"level=(\d+)", summary.text).group(1))  # type: ignore[union-attr]
    assert 1 <= level <= summarizer.max_depth - 1
    assert model.calls[-1].max_output_tokens == _asked(400, request)


async def test_map_reduce_folds_the_previous_summary_first() -> None:
    model = ScriptedModel(default=_tagging_reply)
    summarizer = LLMSummarizer(model, max_output_tokens=300, input_budget_tokens=3_000)
    previous = render_sections({"intent": "- PREVIOUS-INSTRUCTION level=0"})
    await summarizer.summarize(
        _request(_big_session(40), kind="update", previous_summary=previous, max_tokens=300)
    )
    merges = [c.messages[-1].text for c in model.calls if "<partial_summary" in c.messages[-1].text]
    first = merges[0]
    assert first.index("PREVIOUS-INSTRUCTION") < first.index('<partial_summary part="2">')
    maps = [c.messages[-1].text for c in model.calls if "<conversation>" in c.messages[-1].text]
    assert not any("PREVIOUS-INSTRUCTION" in m for m in maps)


def _padded_reply(messages: Sequence[Message], tools: Sequence[ToolSpec] | None) -> str:
    """A tagging summary padded far beyond any ceiling (the model cuts it there)."""
    return _tagging_reply(messages, tools) + "\n\n" + "padding words " * 2_000


@pytest.mark.parametrize("depth", [2, 3, 4])
async def test_map_reduce_depth_is_bounded(depth: int) -> None:
    budget = 2_500
    model = ScriptedModel(default=_padded_reply, enforce_max_output=True)
    # no safety net: its room would shrink the partial summaries, and so the levels needed
    summarizer = LLMSummarizer(
        model, max_output_tokens=300, input_budget_tokens=budget, max_depth=depth, safety_net=None
    )
    request = _request(_big_session(120), max_tokens=300)
    summary = await summarizer.summarize(request)
    assert summary.fallback_reason is None
    level = int(re.search(r"level=(\d+)", summary.text).group(1))  # type: ignore[union-attr]
    assert level <= depth - 1
    if depth >= 3:
        assert level >= 2  # several reduce levels really happened
    assert all(_fits(call, budget) for call in model.calls)
    assert all(call.max_output_tokens is not None for call in model.calls)
    assert model.calls[-1].max_output_tokens == _asked(300, None)
    assert summary.truncated  # every reply was cut at its ceiling


async def test_a_transcript_too_big_for_the_depth_falls_back() -> None:
    model = ScriptedModel(default=_tagging_reply)
    summarizer = LLMSummarizer(model, max_output_tokens=300, input_budget_tokens=1_700, max_depth=2)
    summary = await summarizer.summarize(_request(_big_session(120), max_tokens=300))
    assert summary.summarizer == "extractive"
    assert summary.fallback_reason is not None and "too many to fold" in summary.fallback_reason
    assert model.calls == []


async def test_a_summary_cut_at_the_ceiling_is_kept_and_flagged() -> None:
    cut = GOOD[: len(GOOD) // 2]
    model = ScriptedModel([Completion(Message.assistant(cut), finish_reason="length")])
    summarizer = LLMSummarizer(model, max_output_tokens=200, input_budget_tokens=20_000)
    summary = await summarizer.summarize(_request(_session()))
    assert summary.truncated
    assert summary.text.startswith(cut.strip()[:40])
    assert summary.fallback_reason is None


async def test_a_real_ceiling_cut_through_the_scripted_model_is_flagged() -> None:
    long_summary = render_sections({"intent": "- " + "detail " * 600})
    model = ScriptedModel([long_summary], enforce_max_output=True)
    summarizer = LLMSummarizer(model, max_output_tokens=100, input_budget_tokens=20_000)
    summary = await summarizer.summarize(_request(_session()))
    assert summary.truncated and summary.fallback_reason is None


FAILURES = [
    (RuntimeError("provider exploded"), "provider exploded"),
    (TimeoutError, "TimeoutError"),
    ("", "no text"),
    ("   \n", "no text"),
    ("Error: rate limit exceeded, retry later.", "none of the section headings"),
    ("I'm sorry, but I can't help with that.", "none of the section headings"),
    ("THOUGHT: next I will run the tests.\n\n```bash\npytest\n```", "none of the section headings"),
    (Completion(Message.assistant(GOOD), finish_reason="content_filter"), "content filter"),
    (Message.assistant(tool_calls=[ToolCall("x", "bash", "{}")]), "no text"),
]


@pytest.mark.parametrize(("reply", "reason"), FAILURES, ids=[r for _, r in FAILURES])
async def test_a_failed_model_call_falls_back_to_the_extractive_summary(
    reply: object, reason: str
) -> None:
    model = ScriptedModel([reply])  # type: ignore[list-item]
    summarizer = LLMSummarizer(model, max_output_tokens=500, input_budget_tokens=20_000)
    request = _request(_session(), max_tokens=800)
    summary = await summarizer.summarize(request)
    assert summary.summarizer == "extractive"
    assert summary.fallback_reason is not None and reason in summary.fallback_reason
    assert summary.text == ExtractiveSummarizer().build(request).text
    # An error text is never the summary.
    if isinstance(reply, str) and reply.strip():
        assert reply not in summary.text


async def test_without_a_fallback_a_failure_raises_and_nothing_is_returned() -> None:
    model = ScriptedModel(["Internal server error"])
    summarizer = LLMSummarizer(
        model, max_output_tokens=500, input_budget_tokens=20_000, fallback=None
    )
    with pytest.raises(ProviderError) as info:
        await summarizer.summarize(_request(_session()))
    assert "section headings" in str(info.value.context["reason"])


async def test_the_fallback_usage_includes_what_the_model_spent() -> None:
    model = ScriptedModel([Completion(Message.assistant("oops"), usage=Usage(input=900, output=3))])
    summary = await LLMSummarizer(
        model, max_output_tokens=500, input_budget_tokens=20_000
    ).summarize(_request(_session()))
    assert summary.fallback_reason is not None
    assert summary.usage == Usage(input=900, output=3)


async def test_cache_reuse_sends_the_exact_prefix_then_one_instruction() -> None:
    prefix = tuple(_session(steps=4))
    tools = (ToolSpec("bash", "Run a command.", {"type": "object", "properties": {}}),)
    summarized = prefix[:6]
    model = ScriptedModel([GOOD])
    summarizer = LLMSummarizer(
        model, max_output_tokens=500, input_budget_tokens=20_000, cache_reuse=True
    )
    request = _request(summarized, prefix=prefix, tools=tools, max_tokens=400)
    summary = await summarizer.summarize(request)
    call = model.calls[0]
    assert call.messages[: len(prefix)] == prefix
    assert all(a is b for a, b in zip(call.messages, prefix, strict=False))
    assert len(call.messages) == len(prefix) + 1
    instruction = call.messages[-1]
    assert instruction.role == "user" and instruction.text.startswith("STOP.")
    assert [instruction.text.index("## " + t) for t in TITLES] == sorted(
        instruction.text.index("## " + t) for t in TITLES
    )
    assert "\u00abStep 2.\u00bb" in instruction.text  # where the kept part starts
    assert call.tools == tools
    assert call.options.get("tool_choice") == "none"
    assert call.max_output_tokens == _asked(400, request)
    assert summary.fallback_reason is None and _fits(call, 20_000)


async def test_cache_reuse_uses_the_transcript_when_the_prefix_does_not_fit() -> None:
    prefix = tuple(_session(steps=30, output="x" * 2_000))
    model = ScriptedModel([GOOD])
    budget = 3_000
    summarizer = LLMSummarizer(
        model, max_output_tokens=500, input_budget_tokens=budget, cache_reuse=True
    )
    assert estimate_context_tokens(prefix) > budget
    await summarizer.summarize(_request(prefix[:10], prefix=prefix))
    call = model.calls[0]
    assert call.messages[0].text == SYSTEM_PROMPT and call.tools is None
    assert _fits(call, budget)


async def test_summaries_are_redacted_and_list_every_tracked_file() -> None:
    key = "sk-" + "proj-" + "Zz9Yy8Xx7" * 4
    reply = render_sections({"intent": f"- use key {key}", "files": "Modified: a.py"})
    model = ScriptedModel([reply])
    summarizer = LLMSummarizer(model, max_output_tokens=500, input_budget_tokens=20_000)
    ops = FileOps(read=frozenset({"docs/guide.md"}), modified=frozenset({"a.py", "b.py"}))
    summary = await summarizer.summarize(_request(_session(), file_ops=ops))
    assert key not in summary.text and "[REDACTED:openai-key]" in summary.text
    files = parse_sections(summary.text)["files"]
    assert "b.py" in files and "docs/guide.md" in files and "src/file0.py" in files
    headings = find_headings(summary.text)
    assert headings[:1] == ["intent"] and headings.count("files") == 1
    assert headings == [key for key in SECTION_KEYS if key in headings]


def test_ensure_files_inserts_a_missing_section_in_its_place() -> None:
    text = render_sections({}, keep_empty=True).replace(
        "## Files read / modified\nNone recorded.\n\n", ""
    )
    assert "files" not in find_headings(text)
    fixed = ensure_files(text, FileOps(modified=frozenset({"x.py"})))
    assert find_headings(fixed) == list(SECTION_KEYS)
    # Also when only some sections are there (empty ones are left out of a summary).
    sparse = render_sections({"intent": "- Fix it.", "errors": "- none left", "references": "x"})
    fixed = ensure_files(sparse, FileOps(modified=frozenset({"x.py"})))
    assert find_headings(fixed) == ["intent", "errors", "files", "references"]
    assert parse_sections(fixed)["files"] == "Modified (tracked): x.py"
    assert "Modified (tracked): x.py" in parse_sections(fixed)["files"]
    assert ensure_files(fixed, FileOps(modified=frozenset({"x.py"}))) == fixed


def test_replies_are_unwrapped_and_judged() -> None:
    assert clean_reply(f"```markdown\n{GOOD}\n```") == GOOD
    assert clean_reply(f"<summary>\n{GOOD}\n</summary>") == GOOD
    assert failure_reason(GOOD, "stop") is None
    assert failure_reason(GOOD, "length") is None
    assert failure_reason("plain prose", "stop") is not None


async def test_split_turn_summaries_can_run_concurrently() -> None:
    def reply(messages: Sequence[Message], tools: Sequence[ToolSpec] | None) -> str:
        kind = "prefix" if "still in progress" in messages[-1].text else "main"
        return render_sections({"intent": f"- {kind}"})

    model = ScriptedModel(default=reply)
    summarizer = LLMSummarizer(model, max_output_tokens=500, input_budget_tokens=20_000)
    main, prefix = await asyncio.gather(
        summarizer.summarize(_request(_session())),
        summarizer.summarize(_request(_session(), kind="turn_prefix")),
    )
    assert "- main" in main.text and "- prefix" in prefix.text
    assert len(model.calls) == 2


async def test_nothing_to_summarize_falls_back_without_calling() -> None:
    model = ScriptedModel([GOOD])
    summary = await LLMSummarizer(
        model, max_output_tokens=500, input_budget_tokens=20_000
    ).summarize(_request([Message.system("s")]))
    assert model.calls == [] and summary.fallback_reason == "nothing to summarize"


def test_settings_are_validated() -> None:
    model = ScriptedModel()
    with pytest.raises(SettingError):
        LLMSummarizer(model, max_output_tokens=10, input_budget_tokens=20_000)
    with pytest.raises(SettingError):
        LLMSummarizer(model, max_output_tokens=500, input_budget_tokens=500)
    with pytest.raises(SettingError):
        LLMSummarizer(model, max_output_tokens=500, input_budget_tokens=20_000, max_depth=1)
    named = LLMSummarizer(model, max_output_tokens=500, input_budget_tokens=20_000, name="cheap")
    assert named.name == "cheap"


@settings(max_examples=15, deadline=None)
@given(conversations(), st.sampled_from([1_800, 4_000, 12_000]))
def test_every_call_fits_the_budget_for_any_conversation(
    messages: list[Message], budget: int
) -> None:
    model = ScriptedModel(default=_tagging_reply)
    summarizer = LLMSummarizer(model, max_output_tokens=300, input_budget_tokens=budget)
    summary = asyncio.run(summarizer.summarize(_request(messages, max_tokens=300)))
    assert all(_fits(call, budget) for call in model.calls)
    assert summary.text.strip()
    if summary.fallback_reason is None:
        assert "level=" in summary.text


async def test_a_single_message_bigger_than_a_chunk_is_clipped_to_fit() -> None:
    budget = 2_500
    paste = "Here is the whole log:\n" + "".join(f"row {i}: status ok\n" for i in range(6_000))
    messages = [Message.user(paste), *_big_session(20)]
    model = ScriptedModel(default=_tagging_reply)
    summarizer = LLMSummarizer(model, max_output_tokens=300, input_budget_tokens=budget)
    summary = await summarizer.summarize(_request(messages, max_tokens=300))
    assert summary.fallback_reason is None
    assert all(_fits(call, budget) for call in model.calls)
    first_map = model.calls[0].messages[-1].text
    assert "Here is the whole log" in first_map and "omitted" in first_map
    assert first_map.count("<user>") == first_map.count("</user>")


async def test_cache_reuse_never_appends_after_an_unanswered_tool_call() -> None:
    pending = Message.assistant("Checking.", tool_calls=[ToolCall("p1", "bash", "{}")])
    prefix = (*_session(steps=2), pending)
    model = ScriptedModel([GOOD])
    summarizer = LLMSummarizer(
        model, max_output_tokens=500, input_budget_tokens=20_000, cache_reuse=True
    )
    await summarizer.summarize(_request(prefix[:3], prefix=prefix))
    assert model.calls[0].messages[0].text == SYSTEM_PROMPT


def test_both_summarizers_implement_the_protocol() -> None:
    from abridged.core.protocols import Summarizer

    assert isinstance(ExtractiveSummarizer(), Summarizer)
    llm = LLMSummarizer(ScriptedModel(), max_output_tokens=500, input_budget_tokens=20_000)
    assert isinstance(llm, Summarizer)


def test_a_tracked_file_is_not_taken_as_named_by_a_longer_one() -> None:
    text = render_sections({"files": "Modified: data.py"})
    fixed = ensure_files(text, FileOps(modified=frozenset({"a.py", "data.py"})))
    assert "Modified (tracked): a.py" in fixed


async def test_the_start_of_a_reply_without_headings_is_redacted_in_the_fallback_reason() -> None:
    # the reason is stored in the summary's metadata and shown in notices
    key = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8t"
    reply = f"Error: invalid key {key} for the request"
    # not even the head of the key (the quote is cut at 24 tokens, mid-key on old code)
    assert key[:12] not in (failure_reason(reply, None) or "")
    model = ScriptedModel([reply])
    summarizer = LLMSummarizer(model, max_output_tokens=500, input_budget_tokens=20_000)
    summary = await summarizer.summarize(_request(_session(), max_tokens=800))
    assert summary.fallback_reason is not None and "section headings" in summary.fallback_reason
    assert key[:12] not in summary.fallback_reason and "invalid key" in summary.fallback_reason


async def test_map_reduce_keeps_the_parts_that_succeeded_when_one_fails() -> None:
    """One map call answers with no summary (an error text): the other parts' summaries are
    folded all the same, and the summary says which part was lost and why."""
    calls = 0

    def reply(messages: Sequence[Message], tools: Sequence[ToolSpec] | None) -> str:
        nonlocal calls
        calls += 1
        if calls == 2:  # the second map call
            return "Internal server error"
        return _tagging_reply(messages, tools)

    model = ScriptedModel(default=reply)
    summarizer = LLMSummarizer(model, max_output_tokens=400, input_budget_tokens=3_000)
    summary = await summarizer.summarize(_request(_big_session(40), max_tokens=400))
    assert summary.summarizer == "llm:scripted"  # the model's summary, not the fallback's
    assert summary.fallback_reason is not None
    assert re.search(r"part 2 of \d+", summary.fallback_reason)
    assert "section headings" in summary.fallback_reason
    merges = [c for c in model.calls if "<partial_summary" in c.messages[-1].text]
    assert merges  # the good parts were folded


async def test_map_reduce_falls_back_when_every_part_fails() -> None:
    model = ScriptedModel(default=lambda _m, _t: "Internal server error")
    summarizer = LLMSummarizer(model, max_output_tokens=400, input_budget_tokens=3_000)
    summary = await summarizer.summarize(_request(_big_session(40), max_tokens=400))
    assert summary.summarizer == "extractive"
    assert summary.fallback_reason is not None and "section headings" in summary.fallback_reason


def test_an_empty_reply_says_how_the_model_stopped() -> None:
    """An empty reply cut at the output limit, or a stream that ended without a finish reason,
    is not the same failure as a model that chose to say nothing."""
    assert failure_reason("", "stop") == "the model returned no text"
    assert "output limit" in (failure_reason("", "length") or "")
    assert "without a finish reason" in (failure_reason("", None) or "")
