"""The fact ledger rides with a model's summary: what the model paraphrased away is added back,
within the ceiling, and a replaced value is never shown as current."""

from __future__ import annotations

import json

from abridged.core.model import Message, ToolCall
from abridged.core.protocols import SummaryRequest
from abridged.core.tokens import estimate_text_tokens
from abridged.engine.summarize.ledger import LEDGER_SHARE
from abridged.engine.summarize.llm import LLMSummarizer
from abridged.engine.summarize.prompts import parse_sections, render_sections
from abridged.providers.scripted import ScriptedModel

# What a model writes: the gist, without the exact values the tool output stated.
PARAPHRASE = render_sections(
    {
        "intent": "- Deploy the billing service.",
        "state": "The agent read the deployment notes and is about to deploy.",
        "decisions": "- The deploy settings were read from the notes.",
    }
)


def _session() -> list[Message]:
    call = ToolCall("c1", "bash", json.dumps({"command": "cat deploy/NOTES.md"}))
    later = ToolCall("c2", "bash", json.dumps({"command": "cat deploy/NOTES.md"}))
    return [
        Message.user("Deploy the billing service."),
        Message.assistant("Reading the notes.", tool_calls=[call]),
        Message.tool(
            "c1",
            "Deployment notes\n"
            "The deploy window is Tuesday 14:00 UTC.\n"
            "Never deploy billing without the feature flag BILL-2291 switched off.\n"
            "def helper(x):\n    return x + 1\n",
            name="bash",
        ),
        Message.assistant("Reading them again after the update.", tool_calls=[later]),
        Message.tool("c2", "Update: the deploy window moved to Thursday 09:30 UTC.", name="bash"),
        Message.assistant("I will deploy on Thursday."),
    ]


async def test_the_ledger_restores_what_the_model_left_out() -> None:
    model = ScriptedModel([PARAPHRASE])
    summarizer = LLMSummarizer(model, max_output_tokens=2_000, input_budget_tokens=20_000)
    summary = await summarizer.summarize(SummaryRequest(messages=tuple(_session()), max_tokens=800))
    facts = parse_sections(summary.text)["decisions"]
    assert "BILL-2291" in facts and "Thursday 09:30 UTC" in facts
    # The replaced value is there only as what was replaced.
    assert "Tuesday 14:00 UTC" not in summary.text.replace("(was Tuesday 14:00 UTC", "")
    assert "The deploy settings were read from the notes." in facts  # the model's own line
    assert "return x + 1" not in summary.text  # code is no fact
    assert estimate_text_tokens(summary.text) <= 800
    # The model was asked for less than the ceiling: at least the ledger's share is the net's.
    assert model.calls[0].max_output_tokens <= int(800 * (1 - LEDGER_SHARE))


async def test_a_model_summary_that_has_every_fact_gets_nothing_added() -> None:
    complete = render_sections(
        {
            "intent": "- Deploy the billing service.",
            "decisions": "- Feature flag BILL-2291 must be off; window Thursday 09:30 UTC.",
        }
    )
    model = ScriptedModel([complete])
    summarizer = LLMSummarizer(model, max_output_tokens=2_000, input_budget_tokens=20_000)
    summary = await summarizer.summarize(SummaryRequest(messages=tuple(_session()), max_tokens=800))
    assert summary.text.count("BILL-2291") == 1
