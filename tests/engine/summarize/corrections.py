"""Conversations for correction tests of the fact ledger: a fact and a later one placed as the
user, the assistant or a tool's output would state them, summarized by the extractive
summarizer; and the summary read without what it marks replaced."""

from __future__ import annotations

import json
import re

from abridged.core.model import Message, ToolCall
from abridged.core.protocols import SummaryRequest
from abridged.engine.summarize.extractive import ExtractiveSummarizer
from abridged.engine.summarize.ledger import SUPERSEDED_MARK

SUMMARIZER = ExtractiveSummarizer()


def bash(call_id: str, command: str, output: str) -> list[Message]:
    """A bash call and its output."""
    return [
        Message.assistant(
            f"Running {command.split(maxsplit=1)[0]}.",
            tool_calls=[ToolCall(call_id, "bash", json.dumps({"command": command}))],
        ),
        Message.tool(call_id, output, name="bash"),
    ]


def placed(text: str, placement: str, k: int) -> list[Message]:
    """``text`` said by the user, the assistant, or printed by a tool (``cat notes/k.txt``)."""
    if placement == "user":
        return [Message.user(text), Message.assistant("Noted.")]
    if placement == "assistant":
        return [Message.assistant(text), Message.user("ok")]
    return bash(f"c{k}", f"cat notes/{k}.txt", f"{text}\n")


def summary_of(old: str, new: str, placement: str) -> str:
    """The extractive summary of ``old``, an unrelated fact, then ``new``, all in ``placement``."""
    messages = [
        Message.user("Prepare the release notes."),
        Message.assistant("Starting."),
        *placed(old, placement, 1),
        *placed("Unrelated: the docs build takes 4 minutes.", "tool", 2),
        *placed(new, placement, 3),
    ]
    return SUMMARIZER.build(SummaryRequest(messages=tuple(messages))).text


def current(text: str) -> str:
    """The summary without what it marks replaced (a ``(was ...)``, a superseded line)."""
    lines = [line for line in text.split("\n") if SUPERSEDED_MARK not in line]
    return re.sub(r"\(was [^()\n]*\)", "", "\n".join(lines))
