"""A scripted model that acts like a small tool-calling agent, for ``abridged demo``.

``demo_reply`` answers every request the local provider server gets (``ProviderServer(replies=
demo_reply)``) from what the request holds, so the service, the proxy and ``chat`` can be tried
with no provider key and no network:

- a user message asking for something long (``long``, ``essay``, ``story``, ``detail``) gets a
  long answer of about ``LONG_WORDS`` words, so a few of them fill a small window;
- any other user message, when the request offers the demo tools (``read_record``,
  ``search_records``: ``--tools abridged.testing.tools:TOOLS``), starts a short agent run: one
  search, then a read of up to ``READS_PER_TURN`` records (bulky tool output, as a real agent's),
  then an answer naming what it read; without those tools, a short answer;
- every answer says how many messages and tokens the model was sent, so compaction is visible
  from the model's side;
- asked to summarize the conversation (abridged's summarizer prompts, in either mode), it writes
  a short summary with the required headings: the user's requests, verbatim and clipped, and
  where the work stands. A demo of the plumbing, not of summary quality: the fact ledger adds
  what was learned.

Deterministic: the same request gets the same reply.

>>> from abridged.testing.provider_server import RecordedRequest
>>> from abridged.core.model import Message
>>> request = RecordedRequest(0, "openai-chat", "/v1/chat/completions", {}, {},
...                           messages=[Message.user("hello")], prompt_tokens=9)
>>> demo_reply(request).text
'You said: "hello". (I was sent 1 message, 9 tokens.)'
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from abridged.core.model import Message
from abridged.engine.summarize.prompts import SYSTEM_PROMPT
from abridged.testing.provider_server import RecordedRequest, Reply

#: Words in a long answer (about 1.3 tokens each).
LONG_WORDS: Final = 900
#: Records the agent reads in one turn after its search.
READS_PER_TURN: Final = 2
#: Lines of each record it reads.
RECORD_LINES: Final = 60
_LONG = re.compile(r"\b(?:long|essay|story|detail(?:ed|s)?)\b", re.IGNORECASE)
_CACHE_REUSE_OPENING = "STOP. The conversation above is being compacted."
_TRANSCRIPT_USER = re.compile(r"<user>\s*(.*?)\s*</user>", re.DOTALL)
_VOCABULARY = [
    "context",
    "window",
    "budget",
    "summary",
    "compaction",
    "prune",
    "token",
    "cache",
    "prefix",
    "session",
    "turn",
    "step",
    "tool",
    "result",
    "call",
    "history",
    "message",
    "model",
    "provider",
    "usage",
    "estimate",
    "trigger",
    "target",
    "keep",
    "recent",
    "ledger",
    "fact",
    "decision",
    "constraint",
    "file",
    "path",
    "version",
    "owner",
    "deadline",
    "retry",
    "limit",
]


def demo_reply(request: RecordedRequest) -> Reply:
    """The demo agent's reply to ``request`` (see the module documentation)."""
    messages = request.messages
    if _is_summary_request(messages):
        return Reply(text=_summary(messages))
    tools = _tool_names(request.body)
    last_user = _last_user_index(messages)
    if last_user is None:
        return Reply(text="Hello! Ask me anything." + _footer(request))
    asked = messages[last_user].text.strip()
    steps = sum(1 for m in messages[last_user + 1 :] if m.role == "assistant")
    if _LONG.search(asked) and steps == 0:
        return Reply(text=_long_text(asked) + _footer(request))
    if {"search_records", "read_record"} <= tools and steps <= READS_PER_TURN:
        return _tool_step(asked, steps)
    if steps:
        return Reply(text=_report(messages[last_user + 1 :], asked) + _footer(request))
    return Reply(text=f'You said: "{_clip(asked, 200)}".' + _footer(request))


def _tool_names(body: Any) -> frozenset[str]:
    """The function tools a request offers, in any of the three APIs' shapes."""
    if not isinstance(body, Mapping):
        return frozenset()
    names: set[str] = set()
    for item in body.get("tools") or ():
        if not isinstance(item, Mapping):
            continue
        function = item.get("function")
        name = function.get("name") if isinstance(function, Mapping) else item.get("name")
        if isinstance(name, str):
            names.add(name)
    return frozenset(names)


def _last_user_index(messages: Sequence[Message]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user" and not messages[i].is_summary:
            return i
    return None


def _is_summary_request(messages: Sequence[Message]) -> bool:
    """Whether abridged's summarizer is asking: its own system prompt (transcript mode), or the
    cache-reusing mode's final instruction."""
    system = next((m.text for m in messages if m.role == "system"), "")
    last = messages[-1].text if messages and messages[-1].role == "user" else ""
    return system == SYSTEM_PROMPT or last.startswith(_CACHE_REUSE_OPENING)


def _summary(messages: Sequence[Message]) -> str:
    """A summary with the headings abridged requires, from the user's requests."""
    if messages and messages[-1].text.startswith(_CACHE_REUSE_OPENING):
        asked = [m.text for m in messages[:-1] if m.role == "user" and not m.is_summary]
    else:  # transcript mode: the requests are the <user> blocks of the transcript
        asked = _TRANSCRIPT_USER.findall(messages[-1].text if messages else "")
    requests = [f"- {_clip(text, 160)}" for text in asked if text.strip()] or ["- (none)"]
    return "\n".join(
        [
            "## User intent and requests",
            *requests,
            "",
            "## Current state and next step",
            "- Answered the last request; waiting for the next one.",
        ]
    )


def _tool_step(asked: str, steps: int) -> Reply:
    if steps == 0:
        query = " ".join(asked.split()[:6]) or "records"
        return Reply(
            text="Let me search the records first.",
            tool_calls=[("search_records", {"query": query})],
        )
    key = f"rec-{_number(asked, steps) % 100:03d}"
    return Reply(
        text=f"Reading {key}.",
        tool_calls=[("read_record", {"key": key, "lines": RECORD_LINES})],
    )


def _report(since: Sequence[Message], asked: str) -> str:
    read = [
        str(call.parsed_arguments().get("key", "?"))
        for m in since
        for call in m.tool_calls
        if call.name == "read_record" and isinstance(call.parsed_arguments(), Mapping)
    ]
    searched = sum(1 for m in since for call in m.tool_calls if call.name == "search_records")
    done = f"searched {searched} time{'s' * (searched != 1)}"
    if read:
        done += " and read " + ", ".join(read)
    return f'For "{_clip(asked, 120)}" I {done}. Ask for more, or for something long.'


def _long_text(asked: str) -> str:
    draw = random.Random(_number(asked, 0))
    sentences: list[str] = []
    words = 0
    while words < LONG_WORDS:
        length = draw.randint(6, 16)
        sentences.append(" ".join(draw.choices(_VOCABULARY, k=length)).capitalize() + ".")
        words += length
    paragraphs = [" ".join(sentences[i : i + 6]) for i in range(0, len(sentences), 6)]
    return f'Here is a long answer to "{_clip(asked, 80)}".\n\n' + "\n\n".join(paragraphs)


def _footer(request: RecordedRequest) -> str:
    count = len(request.messages)
    return f" (I was sent {count} message{'s' * (count != 1)}, {request.prompt_tokens:,} tokens.)"


def _clip(text: str, limit: int) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def _number(text: str, salt: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{salt}:{text}".encode()).digest()[:4], "big")
