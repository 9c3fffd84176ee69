"""Shared by the converter tests: a tiny PNG and the mini-swe-agent fixture, as loaded and as
sent, with a pruned variant."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from abridged.core.model import Message
from abridged.engine.prune import PrunedOutput, PrunePlan, apply_prune, placeholder_text
from abridged.formats.transcripts import load_transcripts

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAC"
    "hwGA60e6kgAAAABJRU5ErkJggg=="
)

MINI_SWE_AGENT = Path(__file__).parent / "data" / "mini_swe_agent.jsonl"


def mini_swe_agent_sessions() -> list[tuple[list[Message], list[dict[str, Any]]]]:
    """Each session of the mini-swe-agent fixture: as loaded (tool steps recovered from its
    bash blocks) and as sent (its plain ``{"role", "content"}`` messages). Shared with the
    Responses and Anthropic tests."""
    lines = MINI_SWE_AGENT.read_text(encoding="utf-8").splitlines()
    sent = [
        [{"role": m["role"], "content": m["content"]} for m in json.loads(line)["messages"]]
        for line in lines
    ]
    loaded = [list(t.messages) for t in load_transcripts(MINI_SWE_AGENT)]
    assert any(m.tool_calls for messages in loaded for m in messages)  # steps were recovered
    return list(zip(loaded, sent, strict=True))


def prune_observations(
    messages: list[Message], sent: list[dict[str, Any]]
) -> tuple[list[Message], list[dict[str, Any]]]:
    """Every observation pruned as the engine prunes a text-protocol message, and the plain
    messages that stand for the result: each observation's text replaced by its placeholder."""
    items = []
    expected = list(sent)
    for k, m in enumerate(messages):
        if m.role == "tool":
            (result,) = m.tool_results
            chars = len(result.text)
            placeholder = placeholder_text("bash", result.call_id, chars, chars // 4)
            items.append(
                PrunedOutput(
                    k, (result.call_id,), "bash", chars, chars // 4, placeholder, text_protocol=True
                )
            )
            expected[k] = {"role": "user", "content": placeholder}
    assert items
    plan = PrunePlan(tuple(items), (), 0, 0, 0, len(messages), len(messages))
    return apply_prune(messages, plan), expected
