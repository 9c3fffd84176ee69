"""The safety net under an accepted model summary: a model that writes the headings and nothing
under them still hands on what the extractive path keeps (the user's words, the fact ledger, the
exact references), within the same ceiling, across updates."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from abridged.core.model import Message, ToolCall
from abridged.core.protocols import SummaryRequest
from abridged.core.tokens import estimate_text_tokens
from abridged.engine.summarize.extractive import ExtractiveSummarizer
from abridged.engine.summarize.llm import LLMSummarizer
from abridged.engine.summarize.prompts import SECTIONS, parse_sections, render_sections
from abridged.engine.summarize.safety_net import add_net, missing_entries
from abridged.providers.scripted import ScriptedModel

#: The worst summary the heading check accepts: every heading, nothing under it.
EMPTY = "\n\n".join(f"## {s.title}\nNothing recorded." for s in SECTIONS)

RULE = "Never touch anything under tests/fixtures/legacy_q7, another team generates it."
PREFERENCE = "Please keep every public function signature unchanged."


def _session(k: int = 0) -> list[Message]:
    call = ToolCall(f"c{k}", "bash", json.dumps({"command": f"cat deploy/NOTES{k}.md"}))
    return [
        Message.user(f"Task {k}: deploy the billing service, ticket OPS-{4821 + k}."),
        Message.user(RULE if k == 0 else PREFERENCE),
        Message.assistant("Reading the notes.", tool_calls=[call]),
        Message.tool(
            f"c{k}",
            f"The deploy window is Tuesday 1{k}:00 UTC.\n"
            f"Never deploy billing without the feature flag BILL-{2291 + k} switched off.\n",
            name="bash",
        ),
        Message.assistant(f"Deploying in step {k}."),
    ]


def _summarizer(model: ScriptedModel) -> LLMSummarizer:
    return LLMSummarizer(model, max_output_tokens=2_000, input_budget_tokens=20_000)


async def test_an_empty_model_summary_keeps_the_users_words_and_the_facts() -> None:
    # Before the net, the ledger under a model summary listed tool and assistant facts only:
    # the user's rule and ticket were gone with the model's "Nothing recorded.".
    request = SummaryRequest(messages=tuple(_session()), max_tokens=800)
    summary = await _summarizer(ScriptedModel([EMPTY])).summarize(request)
    assert summary.summarizer.startswith("llm:") and summary.fallback_reason is None
    for kept in (RULE, "OPS-4821", "BILL-2291", "Tuesday 10:00 UTC"):
        assert kept in summary.text
    assert RULE in parse_sections(summary.text)["constraints"]
    assert estimate_text_tokens(summary.text) <= 800


async def test_an_empty_model_summary_keeps_what_the_extractive_summary_keeps() -> None:
    request = SummaryRequest(messages=tuple(_session()), max_tokens=800)
    summary = await _summarizer(ScriptedModel([EMPTY])).summarize(request)
    extractive = ExtractiveSummarizer().build(request)
    # Everything of the net's sections the extractive summary holds, the model's summary holds.
    assert missing_entries(summary.text, extractive.text) == {}


async def test_the_users_words_survive_updates_under_empty_model_summaries() -> None:
    model = ScriptedModel([EMPTY] * 4)
    summarizer = _summarizer(model)
    previous = None
    for k in range(4):
        request = SummaryRequest(
            messages=tuple(_session(k)),
            kind="update" if previous else "initial",
            previous_summary=previous,
            max_tokens=600,
        )
        summary = await summarizer.summarize(request)
        assert estimate_text_tokens(summary.text) <= 600
        previous = summary.text
    assert previous is not None
    for kept in (RULE, PREFERENCE, "OPS-4821", "OPS-4824", "BILL-2294"):
        assert kept in previous


async def test_what_the_model_already_holds_is_not_repeated() -> None:
    full = render_sections(
        {
            "intent": "- Task 0: deploy the billing service, ticket OPS-4821.",
            "constraints": f"- {RULE}",
            "decisions": "- BILL-2291 must be off; the window is Tuesday 10:00 UTC.",
        }
    )
    request = SummaryRequest(messages=tuple(_session()), max_tokens=800)
    summary = await _summarizer(ScriptedModel([full])).summarize(request)
    assert summary.text.count(RULE) == 1
    assert summary.text.count("BILL-2291") == 1


async def test_without_a_net_the_model_summary_stands_alone() -> None:
    model = ScriptedModel([EMPTY])
    summarizer = LLMSummarizer(
        model, max_output_tokens=2_000, input_budget_tokens=20_000, safety_net=None
    )
    summary = await summarizer.summarize(SummaryRequest(messages=tuple(_session()), max_tokens=800))
    assert RULE not in summary.text


def test_of_a_group_of_facts_only_the_ones_not_held_are_added() -> None:
    net = render_sections(
        {"decisions": "- [tool: bash `cat a`]\n  - memory limit 512 MiB\n  - region eu-west-3"}
    )
    lost = missing_entries("## Facts and decisions\n- the limit is 512 MiB.", net)
    assert lost == {"decisions": ["[tool: bash `cat a`] region eu-west-3"]}
    merged = add_net("## Facts and decisions\n- the limit is 512 MiB.", net)
    assert merged.count("512 MiB") == 1 and "eu-west-3" in merged


@settings(max_examples=40, deadline=None)
@given(
    ceiling=st.integers(min_value=64, max_value=1_500),
    filler=st.integers(min_value=0, max_value=400),
    steps=st.integers(min_value=1, max_value=4),
)
async def test_a_summary_with_its_net_never_passes_the_ceiling(
    ceiling: int, filler: int, steps: int
) -> None:
    reply = render_sections({"state": " ".join(["word"] * filler) or "Working."})
    messages = [m for k in range(steps) for m in _session(k)]
    model = ScriptedModel([reply], enforce_max_output=True)
    summary = await _summarizer(model).summarize(
        SummaryRequest(messages=tuple(messages), max_tokens=ceiling)
    )
    assert estimate_text_tokens(summary.text) <= ceiling
