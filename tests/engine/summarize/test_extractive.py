"""Tests of the extractive summarizer: sections, verbatim user text, folding, ceiling."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abridged.core.model import Image, Message, Text, ToolCall, ToolResult
from abridged.core.protocols import FileOps, Summary, SummaryKind, SummaryRequest
from abridged.core.tokens import estimate_text_tokens
from abridged.engine.summarize.extractive import (
    ExtractiveSummarizer,
    harvest_references,
    is_constraint,
    omitted_references_note,
    user_request_text,
)
from abridged.engine.summarize.prompts import SECTION_KEYS, find_headings, parse_sections
from abridged.errors import SettingError
from tests.strategies import conversations

SUMMARIZER = ExtractiveSummarizer()


def _bash(call_id: str, command: str, output: str, *, code: int = 0) -> list[Message]:
    return [
        Message.assistant(
            f"Running {command.split(maxsplit=1)[0]}.",
            tool_calls=[ToolCall(call_id, "bash", json.dumps({"command": command}))],
        ),
        Message.tool(call_id, output, name="bash", is_error=code != 0),
    ]


def _session() -> list[Message]:
    return [
        Message.system("You are a coding agent."),
        Message.user("Fix the unit parser in astropy/units/format/cds.py; see OPS-48213."),
        *_bash("c1", "cat astropy/units/format/cds.py", "def parse(): ..." * 50),
        Message.user("Never modify tests/fixtures/legacy_q7; keep every public signature."),
        *_bash(
            "c2", "python -m pytest tests/test_cds.py", "E   ValueError: bad unit\n1 failed", code=1
        ),
        Message.assistant("The root cause is that division is parsed right-associatively."),
        *_bash("c3", "sed -i 's/a/b/' astropy/units/format/cds.py", ""),
        *_bash("c4", "python -m pytest tests/test_cds.py", "1 passed"),
        Message.assistant("The fix works; next I will add a regression test."),
    ]


def _summarize(messages: list[Message], **kwargs: object) -> Summary:
    return SUMMARIZER.build(SummaryRequest(messages=tuple(messages), **kwargs))  # type: ignore[arg-type]


def test_every_section_is_present_in_order() -> None:
    summary = _summarize(_session())
    assert find_headings(summary.text) == list(SECTION_KEYS)
    assert summary.summarizer == "extractive" and not summary.truncated
    assert summary.fallback_reason is None and summary.usage is None


def test_user_requests_and_constraints_are_verbatim() -> None:
    sections = parse_sections(_summarize(_session()).text)
    assert (
        "- Fix the unit parser in astropy/units/format/cds.py; see OPS-48213." in sections["intent"]
    )
    assert (
        "- Never modify tests/fixtures/legacy_q7; keep every public signature."
        in sections["constraints"]
    )


def test_state_decisions_progress_errors_files_and_references() -> None:
    summary = _summarize(_session())
    sections = parse_sections(summary.text)
    assert "The fix works; next I will add a regression test." in sections["state"]
    assert "Last action: `python -m pytest tests/test_cds.py` (succeeded)" in sections["state"]
    assert "root cause is that division is parsed right-associatively" in sections["decisions"]
    assert (
        "Ran 4 tool calls (1 failed); modified astropy/units/format/cds.py" in sections["progress"]
    )
    assert "`sed -i 's/a/b/' astropy/units/format/cds.py`" in sections["progress"]
    assert (
        "`python -m pytest tests/test_cds.py` failed (error), printed «E   ValueError: bad unit»"
        " -> fixed later (the same command succeeded)"
    ) in sections["errors"]
    assert sections["files"] == "Modified: astropy/units/format/cds.py\nRead: none"
    assert summary.file_ops == FileOps(modified=frozenset({"astropy/units/format/cds.py"}))
    for ref in ("OPS-48213", "astropy/units/format/cds.py", "tests/fixtures/legacy_q7"):
        assert f"- {ref}" in sections["references"]


def test_an_unresolved_error_is_blocked_and_text_protocol_return_codes_count() -> None:
    meta = {"text_protocol": True}
    said = "THOUGHT: run it.\n\n```bash\nmake build\n```"
    messages = [
        Message.user("Build it."),
        Message(
            "assistant",
            (Text(said), ToolCall("t1", "bash", '{"command": "make build"}')),
            meta=meta,
        ),
        Message(
            "tool",
            (
                ToolResult(
                    "t1",
                    "bash",
                    (
                        Text(
                            "<returncode>2</returncode>\n<output>\n"
                            "make: *** No rule to make target\n</output>"
                        ),
                    ),
                ),
            ),
            meta={**meta, "wire_role": "user"},
        ),
    ]
    sections = parse_sections(_summarize(messages).text)
    assert (
        "`make build` failed (exit 2), printed «make: *** No rule to make target» -> unresolved"
        in sections["errors"]
    )
    assert (
        "Blocked:\n- `make build`: printed «make: *** No rule to make target»"
        in sections["progress"]
    )


def test_observations_and_tool_results_are_not_user_requests() -> None:
    assert user_request_text(Message.user("<returncode>0</returncode>\n<output>x</output>")) is None
    assert user_request_text(Message("user", (ToolResult("c", "t", (Text("x"),)),))) is None
    assert user_request_text(Message.user("hi", meta={"kind": "summary"})) is None
    assert user_request_text(Message("user", (Text("look"), Image(url="u")))) == "look\n[image]"


def test_constraints_are_short_rule_like_messages() -> None:
    assert is_constraint("Do not add dependencies.")
    assert is_constraint("From now on, run only the tests of the module you change.")
    assert not is_constraint("Please fix the bug in the parser.")
    assert not is_constraint("Do not stop. " + "Some long pasted log line. " * 80)


def test_the_first_message_is_the_task_whatever_words_it_uses() -> None:
    sections = parse_sections(
        _summarize([Message.user("Never give up: make the build pass.")]).text
    )
    assert "Never give up" in sections["intent"]


def test_the_same_request_gives_the_same_bytes() -> None:
    request = SummaryRequest(messages=tuple(_session()), max_tokens=300)
    first = SUMMARIZER.build(request)
    assert ExtractiveSummarizer().build(request) == first
    assert SUMMARIZER.build(request).text.encode() == first.text.encode()


async def test_the_async_form_gives_the_same_summary() -> None:
    request = SummaryRequest(messages=tuple(_session()))
    assert await SUMMARIZER.summarize(request) == SUMMARIZER.build(request)


def _round(k: int) -> list[Message]:
    """One stretch of work with a new user instruction naming an exact identifier."""
    messages = [
        Message.user(f"Instruction {k}: always tag builds with REL-{1000 + k} and ping @dev{k}.")
    ]
    for s in range(6):
        messages += _bash(f"r{k}s{s}", f"python step_{k}_{s}.py", f"output {k}.{s} " * 300)
    messages.append(
        Message.assistant(f"Round {k} done; the plan is to continue with round {k + 1}.")
    )
    return messages


def test_user_instructions_survive_ten_successive_compactions() -> None:
    task = Message.user("Port the billing service to Python 3.12; target build 7.14.2.")
    previous: str | None = None
    ops = FileOps()
    for k in range(10):
        messages = ([task] if k == 0 else []) + _round(k)
        kind: SummaryKind = "update" if previous else "initial"
        summary = SUMMARIZER.build(
            SummaryRequest(
                messages=tuple(messages),
                kind=kind,
                previous_summary=previous,
                file_ops=ops,
                max_tokens=1_500,
            )
        )
        assert estimate_text_tokens(summary.text) <= 1_500
        previous, ops = summary.text, summary.file_ops
    assert previous is not None
    assert "Port the billing service to Python 3.12; target build 7.14.2." in previous
    for k in range(10):
        assert (
            f"Instruction {k}: always tag builds with REL-{1000 + k} and ping @dev{k}." in previous
        )
    # Carried once each, not duplicated by folding.
    assert previous.count("Instruction 3:") == 1
    assert "Round 9 done" in parse_sections(previous)["state"]


def test_the_ceiling_is_respected_and_flagged() -> None:
    messages = [Message.user("Summarize the logs.")]
    for k in range(40):
        messages += _bash(
            f"c{k}", f"grep -n error /var/log/app{k}.log", f"line {k}\n" * 200, code=k % 3
        )
        messages.append(Message.user(f"Note {k}: keep an eye on shard-{k} (ticket INC-{k:04d})."))
    roomy = _summarize(messages, max_tokens=100_000)
    assert not roomy.truncated
    natural = estimate_text_tokens(roomy.text)
    for ceiling in (120, 400, 1_000, natural - 1):
        summary = _summarize(messages, max_tokens=ceiling)
        assert estimate_text_tokens(summary.text) <= ceiling
        assert summary.truncated
    assert _summarize(messages, max_tokens=natural) == roomy


def test_least_critical_sections_are_cut_first() -> None:
    messages = _session() + [Message.user(f"Reference {k}: see docs/page{k}.md") for k in range(5)]
    full = _summarize(messages, max_tokens=100_000)
    tight = _summarize(messages, max_tokens=estimate_text_tokens(full.text) - 40)
    sections = parse_sections(tight.text)
    assert tight.truncated
    # The user's words all survive; the references list lost entries (from its end), or the
    # whole section when nothing of it was left.
    for k in range(5):
        assert f"Reference {k}: see docs/page{k}.md" in tight.text
    assert "docs/page4.md" in parse_sections(full.text)["references"]
    assert "docs/page4.md" not in sections.get("references", "")
    assert parse_sections(full.text)["state"] == sections["state"]


def test_middle_user_messages_are_clipped_before_the_first_and_newest() -> None:
    first = "Task: " + "migrate the schema carefully. " * 20
    middle = ["Pasted log: " + f"row {i} value {i * 7}; " * 150 + "END-ID-7731" for i in range(3)]
    newest = "Now also bump the version to 2.4.1 and tell @ana."
    messages = [Message.user(first), *(Message.user(m) for m in middle), Message.user(newest)]
    summary = _summarize(messages, max_tokens=700)
    assert estimate_text_tokens(summary.text) <= 700
    assert first.strip() in summary.text
    assert newest in summary.text
    assert middle[0] not in summary.text
    assert "omitted ...]" in summary.text
    # The exact identifiers of the clipped part are kept beside it.
    assert "END-ID-7731" in summary.text


#: A long brief whose facts stand in its middle, where a head-and-tail clip drops them.
BRIEF = (
    "Longer brief for the next part. First get the failing test green without touching the"
    " public interface; if you need a helper, put it next to the code that uses it. Keep the"
    " commit small and explain in the message why the old behaviour was wrong. Cosmin Jeawaex"
    " owns the ingest workers. After that, run the whole suite twice, because the flaky"
    " network test sometimes passes by luck. If anything in the docs is out of date, list it"
    " rather than rewriting it, and leave the changelog to me."
)


@pytest.mark.parametrize("max_tokens", [270, 300])
def test_a_fact_a_clipped_user_entry_drops_is_listed_with_the_facts(max_tokens: int) -> None:
    task = "Fix the parser so that it reads nested lists. " * 20
    messages = [Message.user(task), Message.assistant("ok"), Message.user(BRIEF)]
    text = _summarize(messages, max_tokens=max_tokens).text
    assert estimate_text_tokens(text) <= max_tokens
    assert BRIEF not in text  # the brief was clipped ...
    facts = parse_sections(text)["decisions"]
    assert "Cosmin Jeawaex owns the ingest workers." in facts  # ... and its fact listed


def test_a_user_entry_shown_whole_lends_no_fact_to_the_facts() -> None:
    messages = [Message.user("Fix the parser."), Message.assistant("ok"), Message.user(BRIEF)]
    text = _summarize(messages, max_tokens=2000).text
    assert BRIEF in text
    assert "[user]" not in parse_sections(text).get("decisions", "")


@given(
    host=st.from_regex(r"[a-z]{5,9}\.[a-z]{4,8}\.dev/[a-z]{4,8}/v[0-9]", fullmatch=True),
    others=st.integers(min_value=1, max_value=12),
)
@settings(max_examples=30)
def test_references_of_a_clipped_part_are_listed_whole(host: str, others: int) -> None:
    url = f"https://{host}"
    names = [f"setting_{i}_name" for i in range(others)]
    note = omitted_references_note([*names, url], 16)
    # a cut URL or id is a wrong one: whole references, a URL before code names, the rest
    # counted
    assert url in note
    listed = note.split(": ", 1)[1].rstrip(")").split("; ")[0].split(", ")
    assert all(item in [*names, url] for item in listed)
    left = len(names) + 1 - len(listed)
    assert (f"; {left} more)" in note) == (left > 0)


def test_pasted_commands_clipped_by_lines_keep_their_exact_references() -> None:
    # Fences and a first line fit where the command does not: the clip must still name what
    # the command held (it did not: each URL was lost with its line).
    def paste(i: int) -> tuple[str, str]:
        url = f"https://recv{i}.example.dev/hooks/v{i}"
        command = (
            f"jq '.webhook_receiver_{i} = \"{url}\"' config/settings.json > /tmp/settings.json"
            " && mv /tmp/settings.json config/settings.json"
        )
        return url, f"Pointing the config at the receiver you named:\n\n```bash\n{command}\n```"

    pastes = [paste(i) for i in range(8)]
    texts = ["Task: migrate the schema carefully, then report.", *(p for _u, p in pastes)]
    texts.append("Now also bump the version to 2.4.1.")
    summary = _summarize([Message.user(t) for t in texts], max_tokens=600)
    assert estimate_text_tokens(summary.text) <= 600
    intent = parse_sections(summary.text)["intent"]
    assert not any(p in intent for _u, p in pastes)  # each was clipped
    assert all(u in intent for u, _p in pastes)  # beside its clip, not only at the end


def test_a_previous_summary_in_another_format_is_carried() -> None:
    previous = "The user wants a CSV exporter; they said: never drop the header row."
    summary = _summarize([Message.user("Add JSON too.")], kind="update", previous_summary=previous)
    sections = parse_sections(summary.text)
    assert "Earlier summary: " + previous in sections["intent"]
    assert "Add JSON too." in sections["intent"]
    assert sections["intent"].index("Earlier summary") < sections["intent"].index("Add JSON")


def test_a_leading_summary_message_is_folded_in() -> None:
    first = _summarize([Message.user("Keep answers under 100 words.")])
    summary_message = Message.user(first.text, meta={"kind": "summary"})
    second = _summarize([summary_message, Message.user("Use British spelling.")], kind="update")
    assert "Keep answers under 100 words." in second.text
    assert "Use British spelling." in second.text
    assert second.text.count("## User intent and requests") == 1


def test_secrets_are_redacted() -> None:
    key = "sk-" + "proj-" + "Q9w8E7r6" * 5
    messages = [
        Message.user(f"Use this key: {key}"),
        *_bash("c1", f"curl -H 'Authorization: Bearer {key}' https://api", "ok"),
        Message.assistant(f"I exported OPENAI_API_KEY={key}."),
    ]
    text = _summarize(messages).text
    assert key not in text
    assert "[REDACTED:openai-key]" in text


def test_turn_prefix_and_focus_are_stated() -> None:
    summary = _summarize(_session(), kind="turn_prefix", focus="the parser")
    state = parse_sections(summary.text)["state"]
    assert "This turn is still in progress" in state
    assert "Focus requested for this summary: the parser" in state


def test_an_empty_request_leaves_out_the_empty_sections() -> None:
    summary = _summarize([])
    headings = find_headings(summary.text)
    assert "intent" not in headings and "decisions" not in headings
    assert "None recorded." not in summary.text
    assert estimate_text_tokens(summary.text) < estimate_text_tokens(_summarize(_session()).text)


def test_harvested_references() -> None:
    text = (
        "Ticket OPS-48213 ships in build 7.14.2 on Python 3.9; mail maria.kowalski@example.org "
        "and @mkowalski; job nightly-py311-shard-3 run 88314207; path kv/team-infra/staging-db; "
        "branch release/2026-q4-hotfix; budget 250 microseconds on 10,000 elements, 3.5 GiB; "
        "see https://example.com/x?y=1. Value 70.99200 is data, not an id."
    )
    refs = harvest_references(text)
    for expected in (
        "OPS-48213",
        "7.14.2",
        "Python 3.9",
        "maria.kowalski@example.org",
        "@mkowalski",
        "nightly-py311-shard-3",
        "88314207",
        "kv/team-infra/staging-db",
        "release/2026-q4-hotfix",
        "250 microseconds",
        "10,000 elements",
        "3.5 GiB",
        "https://example.com/x?y=1",
    ):
        assert expected in refs
    assert "99200" not in refs


def test_plain_words_in_backticks_are_no_references() -> None:
    # ``if``, ``mask`` and ``None`` in an agent's reasoning are code a reader rebuilds; copied
    # into the references they crowd out what must be copied exactly.
    text = "If `mask` is `None` the `elif` branch calls `handle_mask(self.mask)` of `NDData`."
    assert harvest_references(text) == ["handle_mask(self.mask)", "NDData"]
    messages = [Message.user("Fix the mask handling."), Message.assistant(text)]
    summary = _summarize(messages).text
    references = summary.split("## Exact references", 1)[1]
    assert "- handle_mask(self.mask)" in references and "- NDData" in references
    assert "- mask\n" not in references and "- None\n" not in references


def test_settings_are_validated() -> None:
    with pytest.raises(SettingError):
        ExtractiveSummarizer(user_share=0)
    with pytest.raises(SettingError):
        ExtractiveSummarizer(max_errors=0)
    with pytest.raises(SettingError):
        ExtractiveSummarizer(entry_floor_tokens=2)
    with pytest.raises(SettingError):
        SUMMARIZER.build(SummaryRequest(messages=(), max_tokens=0))


@settings(max_examples=30)
@given(conversations(), st.sampled_from([60, 300, 1_200, 4_000]))
def test_any_conversation_fits_its_ceiling_with_its_sections_in_order(
    messages: list[Message], ceiling: int
) -> None:
    request = SummaryRequest(messages=tuple(messages), max_tokens=ceiling)
    summary = SUMMARIZER.build(request)
    assert estimate_text_tokens(summary.text) <= ceiling
    headings = find_headings(summary.text)
    # The sections present are in the design's order, each once (empty ones are left out).
    assert headings == [key for key in SECTION_KEYS if key in headings]
    if ceiling >= 300 and any(user_request_text(m) for m in messages):
        assert "intent" in headings
    assert SUMMARIZER.build(request) == summary


def test_deeply_nested_tool_arguments_are_summarized() -> None:
    # a model can emit arguments nested deeper than json can decode: the summary still comes
    deep = "[" * 5_000 + "]" * 5_000
    messages = [
        *_session(),
        Message.assistant("Trying the tool.", tool_calls=[ToolCall("c9", "edit", deep)]),
        Message.tool("c9", "edited", name="edit"),
        Message.assistant("Done."),
    ]
    summary = _summarize(messages)
    assert find_headings(summary.text) == list(SECTION_KEYS)


def test_a_pasted_config_keeps_its_value_lines_when_clipped() -> None:
    settings_lines = [f"option_{i:03d}=default" for i in range(150)]
    settings_lines[67] = "owner=svc-ledger-0931"
    settings_lines[93] = "endpoint=https://relay.internal:7443/v2"
    paste = "Here is our config, keep it in mind:\n" + "\n".join(settings_lines)
    messages = [
        Message.user("Fix the unit parser in astropy/units/format/cds.py."),
        Message.assistant("OK."),
        Message.user(paste),
        Message.assistant("Noted."),
        *[m for k in range(6) for m in _bash(f"b{k}", f"cat part{k}.py", "x = 1\n" * 40)],
        Message.user("Now also bump the version to 2.4.1."),
    ]
    summary = _summarize(messages, max_tokens=500)
    assert estimate_text_tokens(summary.text) <= 500
    # the middle of the paste is where its values are: a head-and-tail clip kept at most the
    # bare values in a note, without what they are the value of
    assert "owner=svc-ledger-0931" in summary.text
    assert "endpoint=https://relay.internal:7443/v2" in summary.text
    assert "lines omitted ...]" in summary.text
