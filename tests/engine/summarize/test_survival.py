"""Tests of what lets a fact planted in tool output or an assistant message survive compactions:
one attribution per run of facts, structured and commented lines read as facts, rare code
names as exact values, a cap that grows with the ceiling."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abridged.core.model import Message, ToolCall
from abridged.core.protocols import SummaryRequest
from abridged.core.tokens import estimate_text_tokens
from abridged.engine.summarize.extractive import ExtractiveSummarizer, _entries, _grouped_lines
from abridged.engine.summarize.ledger import build_ledger, parse_facts, ungrouped_facts
from abridged.engine.summarize.prompts import parse_sections

SUMMARIZER = ExtractiveSummarizer()


def _bash(call_id: str, command: str, output: str) -> list[Message]:
    return [
        Message.assistant(
            f"Running {command.split(maxsplit=1)[0]}.",
            tool_calls=[ToolCall(call_id, "bash", json.dumps({"command": command}))],
        ),
        Message.tool(call_id, output, name="bash"),
    ]


def _observation(output: str) -> Message:
    """A text-protocol observation (mini-swe-agent's shape) printing ``output``."""
    return Message.user(f"<returncode>0</returncode><output>\n{output}\n</output>")


def _listed(messages: list[Message]) -> list[str]:
    return [f.text for f in build_ledger(messages).facts]


# -- one attribution per run of facts -------------------------------------------------------------


def test_facts_printed_by_one_command_share_one_attribution() -> None:
    output = "retry_limit = 5\nchunk_size = 8 MiB\nupload_host = up-7.internal.example.net\n"
    messages = [
        Message.user("Tune the uploader."),
        *_bash("c1", "cat conf/uploader.ini", output),
    ]
    text = SUMMARIZER.build(SummaryRequest(messages=tuple(messages))).text
    body = parse_sections(text)["decisions"]
    assert body.count("[tool: bash `cat conf/uploader.ini`]") == 1
    for line in ("retry_limit = 5", "chunk_size = 8 MiB", "up-7.internal.example.net"):
        assert line in body


def test_a_grouped_facts_section_is_read_back_fact_by_fact() -> None:
    """An update re-ranks the facts of the previous summary: each fact of a group keeps its
    attribution when it is read back (and re-rendered the same)."""
    output = "retry_limit = 5\nchunk_size = 8 MiB\n"
    first = SUMMARIZER.build(
        SummaryRequest(messages=tuple(_bash("c1", "cat conf/uploader.ini", output)))
    )
    facts = parse_facts(_entries(parse_sections(first.text)["decisions"]))
    assert [(f.source, f.origin, f.text) for f in facts] == [
        ("tool", "tool: bash `cat conf/uploader.ini`", "retry_limit = 5"),
        ("tool", "tool: bash `cat conf/uploader.ini`", "chunk_size = 8 MiB"),
    ]
    again = SUMMARIZER.build(
        SummaryRequest(messages=(Message.user("Go on."),), previous_summary=first.text)
    )
    assert parse_sections(again.text)["decisions"] == parse_sections(first.text)["decisions"]


_HEADS = st.sampled_from(["[tool: bash `cat a.txt`]", "[assistant]", "[tool: read]", ""])
_BODIES = st.from_regex(r"[A-Za-z][A-Za-z0-9 _.=:-]{0,30}[A-Za-z0-9]", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_HEADS, _BODIES), max_size=12))
def test_grouped_lines_read_back_to_the_same_facts(facts: list[tuple[str, str]]) -> None:
    """Whatever the runs of heads, rendering then reading back gives every fact, in order,
    with its own head; the rendering is never longer than one line per fact with its head."""
    heads = [h for h, _ in facts]
    items = [b for _, b in facts]
    lines = _grouped_lines(items, heads)
    read = [" ".join(r.split()) for r in ungrouped_facts(_entries("\n".join(lines)))]
    # (a fact is one line, its spaces folded, as the ledger makes it)
    assert read == [" ".join(f"{h} {b}".split()) for h, b in facts]
    flat = "\n".join(f"- {h} {b}" if h else f"- {b}" for h, b in facts)
    assert estimate_text_tokens("\n".join(lines)) <= estimate_text_tokens(flat) + 1


# -- structured and commented lines ---------------------------------------------------------------


def test_a_json_field_weighs_as_the_same_field_in_yaml() -> None:
    as_yaml = _listed([_observation("deps:\n  frozen_package: mezefu-ponu")])
    as_json = _listed([_observation('{"frozen_package": "mezefu-ponu"}')])
    # (a nested line is shown with its section's path: read alone, it says whose it is)
    assert as_yaml == ["deps.frozen_package: mezefu-ponu"]
    # (a one-line JSON object is read as the settings it holds: ``inline_records``)
    assert as_json == ["frozen_package: mezefu-ponu"]


def test_a_comment_that_names_something_exact_is_a_fact() -> None:
    output = "x = compute()\n# memory leak = WWL-67847\n# tidy this up later\n"
    assert _listed([_observation(output)]) == ["# memory leak = WWL-67847"]


# -- ranking --------------------------------------------------------------------------------------


def test_the_agent_planning_around_a_rule_word_ranks_below_an_exact_fact() -> None:
    """*I need to make sure I don't break it* is the agent's plan, not a rule someone set: a
    fact with an exact value from the same message ranks above it."""
    text = (
        "If I change the check, I need to make sure I don't break the integer conversion. "
        "The upload limit is 2927 MB."
    )
    ranked = _listed([Message.user("Fix it."), Message.assistant(text)])
    assert ranked[0] == "The upload limit is 2927 MB."


@pytest.mark.parametrize(
    "line",
    [
        "put tests in TestZorepiVene",
        "name the helper _lubizis_vipo",
        "runs need --govilir-vedus on",
    ],
)
def test_code_names_of_every_shape_count_when_rare(line: str) -> None:
    """A CamelCase class, a private name, a long option: code names without a digit or an
    underscore inside, exact when the conversation names them once."""
    assert _listed([Message.user("Fix it."), _observation(line)]) == [line]


def test_a_code_name_the_conversation_names_once_is_an_exact_value() -> None:
    """A fixture named once in a tool's output is a fact; the same line about a name the
    agent keeps using (it greps it, edits it) is the code at hand."""
    once = _listed([Message.user("Fix it."), _observation("use korafix_robir_fixture in tests")])
    assert once == ["use korafix_robir_fixture in tests"]
    again = _listed(
        [
            Message.user("Fix it."),
            _observation("use value_unit_fixture in tests"),
            *_bash("c1", "grep -rn value_unit_fixture tests/", "tests/a.py:3: value_unit_fixture"),
        ]
    )
    assert "use value_unit_fixture in tests" not in again


@settings(max_examples=50, deadline=None)
@given(st.from_regex(r"[a-z]{3,8}_[a-z]{3,8}(_[a-z]{3,8})?", fullmatch=True))
def test_rarity_only_raises_a_code_name(name: str) -> None:
    """Rarity makes a code name exact; it never lowers anything: the same line weighs at
    least as much named once as named again elsewhere."""
    line = f"use {name} in tests"
    alone = build_ledger([_observation(line)]).facts
    repeated = build_ledger([_observation(line), _observation(f"{name}()")]).facts
    weight = {f.text: f.weight for f in alone}.get(line, 0.0)
    assert weight >= {f.text: f.weight for f in repeated}.get(line, 0.0)
    assert line in {f.text for f in alone}


# -- the cap --------------------------------------------------------------------------------------


def _name(i: int) -> str:
    return "".join("bdfgklmnprstvz"[int(d)] + "aeiou"[int(d) % 5] for d in f"{i:03d}")


def _many_facts(n: int) -> list[Message]:
    """``n`` settings, five per output (lines of one shape with other numbers are a log's)."""
    messages = [Message.user("Collect the settings.")]
    for batch in range(0, n, 5):
        lines = "\n".join(f"{_name(i)}_limit = {1000 + i} ms" for i in range(batch, batch + 5))
        messages.extend(_bash(f"c{batch}", f"cat conf/part{batch}.ini", lines))
    return messages


def test_the_fact_cap_grows_with_the_ceiling() -> None:
    """A larger summary holds more facts: the cap is no fixed count, and the ceiling still
    holds."""
    messages = tuple(_many_facts(100))
    small = SUMMARIZER.build(SummaryRequest(messages=messages, max_tokens=1_000))
    large = SUMMARIZER.build(SummaryRequest(messages=messages, max_tokens=4_000))
    shown = [i for i in range(100) if f"{1000 + i} ms" in large.text]
    assert len(shown) > 60
    assert estimate_text_tokens(large.text) <= 4_000
    assert estimate_text_tokens(small.text) <= 1_000
    assert SUMMARIZER.fact_cap(1_000) == SUMMARIZER.max_facts


async def test_a_model_summary_reads_grouped_facts_back_with_their_attribution() -> None:
    """An update by a model after an extractive summary (a fallback, say): the grouped facts of
    the previous summary ride along each with its own attribution, no head left alone."""
    from abridged.engine.summarize.llm import LLMSummarizer
    from abridged.engine.summarize.prompts import render_sections
    from abridged.providers.scripted import ScriptedModel

    output = "retry_limit = 5\nchunk_size = 8 MiB\n"
    first = SUMMARIZER.build(
        SummaryRequest(messages=tuple(_bash("c1", "cat conf/uploader.ini", output)))
    )
    reply = render_sections({"intent": "- Tune the uploader.", "decisions": "- Tuning it."})
    summarizer = LLMSummarizer(
        ScriptedModel([reply]), max_output_tokens=2_000, input_budget_tokens=20_000
    )
    request = SummaryRequest(
        messages=(Message.user("Go on."), Message.assistant("Going on.")),
        previous_summary=first.text,
        max_tokens=800,
    )
    summary = await summarizer.summarize(request)
    facts = parse_facts(_entries(parse_sections(summary.text)["decisions"]))
    origins = {f.text: f.origin for f in facts}
    assert origins["retry_limit = 5"] == "tool: bash `cat conf/uploader.ini`"
    assert origins["chunk_size = 8 MiB"] == "tool: bash `cat conf/uploader.ini`"
    assert not any(f.text.startswith("[tool") for f in facts)
