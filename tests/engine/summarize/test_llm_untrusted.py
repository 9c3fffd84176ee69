"""The model summarizer and untrusted text: secrets in a failed call's reason, reserved tags in
tool output in both modes (transcript and cache-reusing)."""

from __future__ import annotations

import json
import random
import string

import pytest

from abridged.core.model import Message, ToolCall
from abridged.core.protocols import SummaryRequest
from abridged.engine.summarize.llm import LLMSummarizer
from abridged.engine.summarize.prompts import render_sections
from abridged.errors import ProviderError
from abridged.providers.scripted import ScriptedModel

GOOD = render_sections({"intent": "- Fix the parser.", "state": "Tests pass."})


def _session(output: str = "ok") -> list[Message]:
    messages = [Message.system("You are a coding agent."), Message.user("Fix the unit parser.")]
    for k in range(3):
        call = ToolCall(f"c{k}", "bash", json.dumps({"command": f"cat src/file{k}.py"}))
        messages.append(Message.assistant(f"Step {k}.", tool_calls=[call]))
        messages.append(Message.tool(call.id, output if k == 1 else f"ok {k}", name="bash"))
    messages.append(Message.assistant("Done."))
    return messages


def _key(seed: int) -> str:
    rng = random.Random(seed)
    return (
        "sk-"
        + "proj-"
        + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(48))
    )


def _errors(key: str) -> list[BaseException]:
    broken = key[:10] + "\u200b" + key[10:]
    return [
        RuntimeError(f"Error code: 401 - Incorrect API key provided: {key}"),
        ValueError(f"bad header Authorization: Bearer {key}"),
        # forms a redactor that does not fold misses
        RuntimeError(f"Incorrect API key provided: {broken}"),
        RuntimeError(
            "Incorrect API key provided: "
            + "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in key)
        ),
    ]


@pytest.mark.parametrize("index", range(4))
@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_a_model_error_carrying_a_key_leaves_no_key_in_the_fallback_reason(
    index: int, seed: int
) -> None:
    key = _key(seed)
    error = _errors(key)[index]
    summarizer = LLMSummarizer(
        ScriptedModel([error]), max_output_tokens=500, input_budget_tokens=20_000
    )
    summary = await summarizer.summarize(SummaryRequest(messages=tuple(_session()), max_tokens=800))
    reason = summary.fallback_reason
    assert reason is not None and type(error).__name__ in reason
    folded = reason.replace("\u200b", "")
    assert key[8:20] not in folded and "[REDACTED:" in reason
    assert not any(chr(ord(c) + 0xFEE0) in reason for c in key[8:20] if c.isalnum())


async def test_without_a_fallback_the_error_raised_carries_no_key() -> None:
    key = _key(9)
    broken = key[:10] + "\u200b" + key[10:]
    summarizer = LLMSummarizer(
        ScriptedModel([RuntimeError(f"invalid key {broken}")]),
        max_output_tokens=500,
        input_budget_tokens=20_000,
        fallback=None,
    )
    with pytest.raises(ProviderError) as info:
        await summarizer.summarize(SummaryRequest(messages=tuple(_session()), max_tokens=800))
    shown = str(info.value) + repr(info.value.context)
    assert key[12:24] not in shown.replace("\u200b", "")
