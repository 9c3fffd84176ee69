"""pi's (pi-mono coding agent) compaction, re-implemented: summarize all but a recent tail.

Source: badlogic/pi-mono, now earendil-works/pi (``packages/coding-agent``; the mirror's
``main`` at 83378aad, 2026-03-15, and the index's earendil-works/pi: ``compaction.ts`` at
2e5a972a / 00e68365, ``agent-session.ts`` at 014b48bf); what this module takes from each file:

- ``src/core/compaction/compaction.ts``: ``DEFAULT_COMPACTION_SETTINGS = {reserveTokens: 16384,
  keepRecentTokens: 20000}``; ``shouldCompact``: ``contextTokens > contextWindow -
  reserveTokens``; ``estimateContextTokens``: the last valid assistant usage (``totalTokens``,
  else input + output + cache read + cache write; error, aborted and all-zero usages skipped) plus
  ``estimateTokens`` (chars / 4, rounded up; a tool call is its name plus its arguments' JSON, an
  image 4,800 chars) of the messages after it. ``findCutPoint``: walk back from the newest entry
  adding estimates until ``keepRecentTokens`` is reached, then cut at the first valid cut point at
  or after that entry (user or assistant messages, *never a tool result*, so a kept tail never
  starts with an orphan result; when there is none the cut stays at the first cut point); a cut at
  an assistant message splits the turn, whose prefix (from its user message) gets its own summary
  (``TURN_PREFIX_SUMMARIZATION_PROMPT``, ``0.5 * reserveTokens``) next to the history summary
  (``0.8 * reserveTokens``, ``"No prior history."`` when there is no history), merged under
  ``**Turn Context (split turn):**``. ``generateSummary`` uses ``SUMMARIZATION_PROMPT`` or, after
  an earlier compaction, ``UPDATE_SUMMARIZATION_PROMPT`` with the previous summary in
  ``<previous-summary>``; both budgets are capped at the model's ``maxTokens``.
  ``prepareCompaction`` returns nothing when there is nothing to summarize.
- The fix for kept messages lost on a second compaction (earendil-works/pi issue #2608, commit
  eeace797 "preserve kept messages across repeated compaction"): the span a compaction considers
  starts at the previous compaction's ``firstKeptEntryId`` (before it started after the previous
  compaction *entry*, so the messages that compaction had kept were neither kept nor summarized).
  The span walks entries in session order, so the previous compaction entry (after the tail it
  kept, before what followed) adds its summary's estimate to the walk, as ``findCutPoint``'s
  ``sessionEntryToContextMessages`` does; it is never a cut point nor summarized again.
- ``src/core/compaction/utils.ts``: ``serializeConversation`` (``[User]:``,
  ``[Assistant thinking]:``, ``[Assistant]:``, ``[Assistant tool calls]: name(k=v, ...)``,
  ``[Tool result]:`` cut at ``TOOL_RESULT_MAX_CHARS = 2000`` with ``[... N more characters
  truncated]``, the fix of issue #1796), ``SUMMARIZATION_SYSTEM_PROMPT``, the file operations of
  ``read`` / ``write`` / ``edit`` calls appended as ``<read-files>`` / ``<modified-files>`` and
  carried from compaction to compaction. The summary request is a *fresh* request: pi's own
  system prompt and one user message, ``<conversation>`` + the transcript, the previous summary,
  the prompt; it shares no prefix with the session (``cacheRetention: "none"``).
- ``src/core/messages.ts``: the summary enters the context as a user message,
  ``COMPACTION_SUMMARY_PREFIX`` + summary + ``COMPACTION_SUMMARY_SUFFIX``, followed by the kept
  messages (``session-manager.ts`` ``buildSessionContext``).
- ``src/core/agent-session.ts``: when compaction runs. The threshold is checked before each
  request of a run, between tool turns (``prepareNextTurnWithContext`` →
  ``_compactBeforeNextAssistantResponse``, with ``estimateProjectedContextTokens``, which does
  not trust a usage recorded before the latest compaction and then estimates the whole context,
  system prompt included), and before a new user prompt. Up to pi 0.84 (issue #7821) the threshold
  was only checked after a run ended, so a long tool loop only compacted on overflow:
  ``PiPolicy(mid_run=False)``. Overflow (``_checkCompaction``, case 1): a context-overflow error
  compacts the session and retries once; a second overflow before a successful response gives up
  ("Context overflow recovery failed after one compact-and-retry attempt").

**Scaling.** pi does not scale its settings to the model (``settings-manager.ts``
``getCompactionSettings`` returns the configured or default numbers, per-model overrides aside),
and its defaults cannot work in a small window: with ``reserveTokens = 16384`` a 16k window would
compact before every call (16,384 - 16,384 = 0). A user of a small model sets them, and this module
sets them as such a user would: ``reserveTokens`` ("tokens reserved for the LLM response", which
also budgets the summaries) is a quarter of the window, capped at pi's 16,384 (4,096 at 16k: the
harness's max output; 8,192 at 32k); ``keepRecentTokens`` keeps pi's ratio to it (20,000 /
16,384), capped at 20,000 (5,000 at 16k, 10,000 at 32k). ``contextWindow`` is the whole window
(pi's reserve covers the output), so the threshold is 12,288 at 16k (the provider's limit) and
24,576 at 32k.

**Mapping to this harness.** The recorded system prompt stands for pi's; ``tool`` messages are
pi's ``toolResult`` messages; the provider's ``Usage`` after a call is the usage of the assistant
message that call produced (the next ``prepare`` brings it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from abridged.core.model import File, Image, Message, Reasoning, Text, Usage
from policy_kit import Kit, Rejected, Window

NAME = "pi"

RESERVE_TOKENS = 16_384
KEEP_RECENT_TOKENS = 20_000
RESERVE_SHARE = 4  # the reserve scaled to a small window: window / 4 (see the docstring)
HISTORY_SUMMARY_SHARE = 0.8  # of reserveTokens, ``generateSummary``
TURN_PREFIX_SUMMARY_SHARE = 0.5  # of reserveTokens, ``generateTurnPrefixSummary``
TOOL_RESULT_MAX_CHARS = 2_000
ESTIMATED_IMAGE_CHARS = 4_800

SUMMARIZATION_SYSTEM_PROMPT = """You are a context summarization assistant. Your task is to read a conversation between a user and an AI coding assistant, then produce a structured summary following the exact format specified.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary."""  # noqa: E501 (the prompts are verbatim)

SUMMARIZATION_PROMPT = """The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or "(none)" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages."""  # noqa: E501

UPDATE_SUMMARIZATION_PROMPT = """The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.

Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from "In Progress" to "Done" when completed
- UPDATE "Next Steps" based on what was accomplished
- PRESERVE exact file paths, function names, and error messages
- If something is no longer relevant, you may remove it

Use this EXACT format:

## Goal
[Preserve existing goals, add new ones if the task expanded]

## Constraints & Preferences
- [Preserve existing, add new ones discovered]

## Progress
### Done
- [x] [Include previously done items AND newly completed items]

### In Progress
- [ ] [Current work - update based on progress]

### Blocked
- [Current blockers - remove if resolved]

## Key Decisions
- **[Decision]**: [Brief rationale] (preserve all previous, add new)

## Next Steps
1. [Update based on current state]

## Critical Context
- [Preserve important context, add new if needed]

Keep each section concise. Preserve exact file paths, function names, and error messages."""  # noqa: E501

TURN_PREFIX_SUMMARIZATION_PROMPT = """This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.

Summarize the prefix to provide context for the retained suffix:

## Original Request
[What did the user ask for in this turn?]

## Early Progress
- [Key decisions and work done in the prefix]

## Context for Suffix
- [Information needed to understand the retained recent work]

Be concise. Focus on what's needed to understand the kept suffix."""  # noqa: E501

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n"
    "\n"
    "<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = """
</summary>"""
NO_PRIOR_HISTORY = "No prior history."
SPLIT_TURN_HEADING = "\n\n---\n\n**Turn Context (split turn):**\n\n"


@dataclass(frozen=True, slots=True)
class Settings:
    """pi's compaction settings, scaled to a window (see the module docstring)."""

    reserve_tokens: int
    keep_recent_tokens: int

    @classmethod
    def for_window(cls, window: Window) -> Settings:
        """The settings a user of ``window`` would give pi: a quarter of it reserved (at most
        pi's 16,384), and pi's ratio of kept to reserved tokens (at most its 20,000)."""
        reserve = min(RESERVE_TOKENS, window.tokens // RESERVE_SHARE)
        keep = min(KEEP_RECENT_TOKENS, round(reserve * KEEP_RECENT_TOKENS / RESERVE_TOKENS))
        return cls(reserve, keep)


@dataclass(frozen=True, slots=True)
class _Compaction:
    """A compaction entry: its summary, the index of the first entry it kept, its file lists."""

    summary: str
    first_kept: int
    read_files: tuple[str, ...]
    modified_files: tuple[str, ...]


@dataclass(slots=True)
class _FileOps:
    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)


# -- pi's estimates and serialization ---------------------------------------------------------


def _arguments(raw: str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _js_json(value: Any) -> str:
    """``JSON.stringify``: compact, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _is_tool_result(message: Message) -> bool:
    """A pi ``toolResult``: a tool message, or a user message carrying only results."""
    return message.role == "tool" or (bool(message.tool_results) and not message.text)


def _content_chars(parts: Sequence[Any]) -> int:
    chars = 0
    for part in parts:
        if isinstance(part, Text):
            chars += len(part.text)
        elif isinstance(part, Image | File):
            chars += ESTIMATED_IMAGE_CHARS
    return chars


def estimate_tokens(message: Message) -> int:
    """pi's ``estimateTokens``: characters / 4, rounded up."""
    chars = 0
    if _is_tool_result(message):
        for result in message.tool_results:
            chars += _content_chars(result.content)
    elif message.role == "assistant":
        for part in message.parts:
            if isinstance(part, Text | Reasoning):
                chars += len(part.text)
        for call in message.tool_calls:
            parsed = _arguments(call.arguments)
            chars += len(call.name) + len(call.arguments if parsed is None else _js_json(parsed))
    else:
        chars = _content_chars(message.parts)
    return math.ceil(chars / 4)


def _truncate_for_summary(text: str) -> str:
    if len(text) <= TOOL_RESULT_MAX_CHARS:
        return text
    cut = len(text) - TOOL_RESULT_MAX_CHARS
    return f"{text[:TOOL_RESULT_MAX_CHARS]}\n\n[... {cut} more characters truncated]"


def _call_text(name: str, raw: str) -> str:
    parsed = _arguments(raw)
    if not isinstance(parsed, dict):
        return f"{name}({raw})"  # pi's arguments are always an object; keep a bad one verbatim
    return f"{name}({', '.join(f'{k}={_js_json(v)}' for k, v in parsed.items())})"


def serialize_conversation(messages: Sequence[Message]) -> str:
    """pi's ``serializeConversation``: the transcript the summarizer reads."""
    out: list[str] = []
    for message in messages:
        if _is_tool_result(message):
            for result in message.tool_results:
                content = "".join(p.text for p in result.content if isinstance(p, Text))
                if content:
                    out.append(f"[Tool result]: {_truncate_for_summary(content)}")
        elif message.role == "assistant":
            thinking = [p.text for p in message.parts if isinstance(p, Reasoning) and p.text]
            texts = [p.text for p in message.parts if isinstance(p, Text)]
            calls = [_call_text(c.name, c.arguments) for c in message.tool_calls]
            if thinking:
                out.append(f"[Assistant thinking]: {chr(10).join(thinking)}")
            if texts:
                out.append(f"[Assistant]: {chr(10).join(texts)}")
            if calls:
                out.append(f"[Assistant tool calls]: {'; '.join(calls)}")
        elif message.role == "user":
            content = "".join(p.text for p in message.parts if isinstance(p, Text))
            if content:
                out.append(f"[User]: {content}")
    return "\n\n".join(out)


def summary_request(
    messages: Sequence[Message], prompt: str, previous: str | None = None
) -> list[Message]:
    """The request pi sends for a summary: its system prompt, then one user message."""
    text = f"<conversation>\n{serialize_conversation(messages)}\n</conversation>\n\n"
    if previous:
        text += f"<previous-summary>\n{previous}\n</previous-summary>\n\n"
    return [Message.system(SUMMARIZATION_SYSTEM_PROMPT), Message.user(text + prompt)]


def _extract_file_ops(message: Message, ops: _FileOps) -> None:
    """``extractFileOpsFromMessage``: the ``path`` of ``read`` / ``write`` / ``edit`` calls."""
    if message.role != "assistant":
        return
    for call in message.tool_calls:
        args = _arguments(call.arguments)
        path = args.get("path") if isinstance(args, dict) else None
        if not isinstance(path, str) or not path:
            continue
        if call.name == "read":
            ops.read.add(path)
        elif call.name == "write":
            ops.written.add(path)
        elif call.name == "edit":
            ops.edited.add(path)


def _format_file_operations(read: Sequence[str], modified: Sequence[str]) -> str:
    sections = []
    if read:
        sections.append("<read-files>\n" + "\n".join(read) + "\n</read-files>")
    if modified:
        sections.append("<modified-files>\n" + "\n".join(modified) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


def summary_message(summary: str) -> Message:
    """The summary as the context shows it (``convertToLlm`` of a ``compactionSummary``)."""
    return Message.user(
        COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX, meta={"kind": "summary"}
    )


# -- the policy -------------------------------------------------------------------------------


_Entry = Message | _Compaction


class PiPolicy:
    """pi's compaction over a replayed session (see the module docstring).

    The session is kept as pi keeps it, an append-only list of entries (messages and compaction
    entries); the context is built from the latest compaction as ``buildSessionContext`` builds
    it.
    """

    name = NAME

    def __init__(self, kit: Kit, *, settings: Settings | None = None, mid_run: bool = True) -> None:
        self.kit = kit
        self.settings = settings or Settings.for_window(kit.window)
        self.mid_run = mid_run
        self.system: list[Message] = []
        self.entries: list[_Entry] = []
        self.usage: dict[int, int] = {}  # assistant entry index -> its usage's total tokens
        self._pending: Usage | None = None
        self._overflow_attempted = False
        self._compactions = 0
        self._split_turns = 0
        self._overflow_compactions = 0
        self._summaries = 0

    # -- the policy interface ---------------------------------------------------------------

    def prepare(self, new: Sequence[Message]) -> list[Message]:
        """Record ``new``; compact first when pi would before this request."""
        new_prompt = False
        for message in new:
            if message.role == "system":
                self.system.append(message)
                continue
            if message.role == "assistant":
                if self._pending is not None:
                    total = _usage_total(self._pending)
                    if total > 0:  # all-zero usage is not valid usage
                        self.usage[len(self.entries)] = total
                    self._pending = None
                self._overflow_attempted = False  # a successful response resets it
            elif message.role == "user" and not _is_tool_result(message):
                new_prompt = True
            self.entries.append(message)
        started = any(isinstance(e, Message) and e.role == "assistant" for e in self.entries)
        # Before the next response of a run (pi >= the mid-run check) or before a new prompt;
        # nothing is checked before the first response of a session.
        if started and (self.mid_run or new_prompt) and self._should_compact():
            self._compact()
        return self.context()

    def observe(self, usage: Usage) -> None:
        """Keep the usage for the assistant message this call produced (the next ``prepare``)."""
        self._pending = usage

    def recover(self, error: Rejected) -> list[Message] | None:
        """pi's overflow recovery: compact and retry, once until a response succeeds."""
        if self._overflow_attempted:
            return None
        self._overflow_attempted = True
        if not self._compact():
            return None
        self._overflow_compactions += 1
        return self.context()

    def stats(self) -> dict[str, int]:
        """Compactions (overflow ones included), prunes (pi has none), split turns, overflow
        compactions and summary requests."""
        return {
            "compactions": self._compactions,
            "prunes": 0,
            "split_turns": self._split_turns,
            "overflow_compactions": self._overflow_compactions,
            "summary_requests": self._summaries,
        }

    # -- the session ------------------------------------------------------------------------

    def _latest_compaction(self) -> int | None:
        return next(
            (i for i in range(len(self.entries) - 1, -1, -1) if _is_compaction(self.entries[i])),
            None,
        )

    def _projection(self) -> list[tuple[int | None, Message]]:
        """``buildSessionContext``: the latest summary, the entries it kept, what followed
        (each message with its entry index; the summary has none)."""
        latest = self._latest_compaction()
        if latest is None:
            return [(i, e) for i, e in enumerate(self.entries) if isinstance(e, Message)]
        compaction = self.entries[latest]
        assert isinstance(compaction, _Compaction)
        kept = range(compaction.first_kept, len(self.entries))
        return [(None, summary_message(compaction.summary))] + [
            (i, e) for i in kept if isinstance(e := self.entries[i], Message)
        ]

    def context(self) -> list[Message]:
        """What pi sends: its system prompt and the session context."""
        return [*self.system, *(m for _, m in self._projection())]

    def context_tokens(self) -> int:
        """``estimateProjectedContextTokens``: the last valid usage recorded after the latest
        compaction plus estimates of what follows it; else an estimate of it all."""
        projection = self._projection()
        latest = self._latest_compaction()
        for position in range(len(projection) - 1, -1, -1):
            index, _ = projection[position]
            if index is not None and index in self.usage:
                if latest is not None and index < latest:
                    break  # recorded before the latest compaction: not trusted
                trailing = projection[position + 1 :]
                return self.usage[index] + sum(estimate_tokens(m) for _, m in trailing)
        system = sum(math.ceil(len(m.text) / 4) for m in self.system)
        return system + sum(_entry_tokens(m) for _, m in projection)

    def _should_compact(self) -> bool:
        return self.context_tokens() > self.kit.window.tokens - self.settings.reserve_tokens

    # -- the compaction ---------------------------------------------------------------------

    def _cut_point(self, start: int) -> tuple[int, int]:
        """``findCutPoint`` over ``entries[start:]``: the first kept entry, and the start of the
        turn it splits (-1 when it splits none)."""
        end = len(self.entries)
        cut_points = [
            i
            for i in range(start, end)
            if isinstance(e := self.entries[i], Message) and not _is_tool_result(e)
        ]
        if not cut_points:
            return start, -1
        cut = cut_points[0]
        accumulated = 0
        for i in range(end - 1, start - 1, -1):
            tokens = _entry_tokens(self.entries[i])
            if tokens == 0:
                continue
            accumulated += tokens
            if accumulated >= self.settings.keep_recent_tokens:
                cut = next((c for c in cut_points if c >= i), cut)
                break
        if _starts_turn(self.entries[cut]):
            return cut, -1
        turn_start = next(
            (i for i in range(cut, start - 1, -1) if _starts_turn(self.entries[i])), -1
        )
        return cut, turn_start

    def _compact(self) -> bool:
        """``prepareCompaction`` + ``compact``; False when there is nothing to summarize."""
        if self.entries and _is_compaction(self.entries[-1]):
            return False
        latest = self._latest_compaction()
        previous: _Compaction | None = None
        start = 0
        if latest is not None:
            found = self.entries[latest]
            assert isinstance(found, _Compaction)
            previous = found
            start = previous.first_kept  # the fix of #2608: from the first kept entry
        cut, turn_start = self._cut_point(start)
        split = turn_start != -1
        history_end = turn_start if split else cut
        history = self._messages(start, history_end)
        prefix = self._messages(turn_start, cut) if split else []
        if not history and not prefix:
            return False

        ops = _FileOps()
        if previous is not None:
            ops.read.update(previous.read_files)
            ops.edited.update(previous.modified_files)
        for message in [*history, *prefix]:
            _extract_file_ops(message, ops)

        previous_summary = previous.summary if previous else None
        if split and prefix:
            head = self._history_summary(history, previous_summary) if history else NO_PRIOR_HISTORY
            summary = head + SPLIT_TURN_HEADING + self._turn_prefix_summary(prefix)
            self._split_turns += 1
        else:
            summary = self._history_summary(history, previous_summary)
        modified = sorted(ops.edited | ops.written)
        read = sorted(ops.read - set(modified))
        summary += _format_file_operations(read, modified)
        self.entries.append(_Compaction(summary, cut, tuple(read), tuple(modified)))
        self._compactions += 1
        return True

    def _messages(self, start: int, end: int) -> list[Message]:
        return [e for e in self.entries[start:end] if isinstance(e, Message)]

    def _budget(self, share: float) -> int:
        # Capped at the model's maxTokens, as ``generateSummary`` caps it.
        return min(int(share * self.settings.reserve_tokens), self.kit.window.max_output)

    def _history_summary(self, messages: Sequence[Message], previous: str | None) -> str:
        prompt = UPDATE_SUMMARIZATION_PROMPT if previous else SUMMARIZATION_PROMPT
        self._summaries += 1
        return self.kit.summarize(
            messages,
            previous=previous,
            request=summary_request(messages, prompt, previous),
            max_tokens=self._budget(HISTORY_SUMMARY_SHARE),
        )

    def _turn_prefix_summary(self, messages: Sequence[Message]) -> str:
        self._summaries += 1
        return self.kit.summarize(
            messages,
            previous=None,
            request=summary_request(messages, TURN_PREFIX_SUMMARIZATION_PROMPT),
            max_tokens=self._budget(TURN_PREFIX_SUMMARY_SHARE),
        )


def _is_compaction(entry: _Entry) -> bool:
    return isinstance(entry, _Compaction)


def _starts_turn(entry: _Entry) -> bool:
    """``isTurnStartEntry``: a user message (a compaction entry never starts a turn)."""
    return isinstance(entry, Message) and entry.role == "user" and not _is_tool_result(entry)


def _entry_tokens(entry: _Entry | Message) -> int:
    """An entry's estimate; a compaction entry counts as its summary (``compactionSummary``)."""
    if isinstance(entry, _Compaction):
        return math.ceil(len(entry.summary) / 4)
    if entry.is_summary:
        text = entry.text.removeprefix(COMPACTION_SUMMARY_PREFIX)
        return math.ceil(len(text.removesuffix(COMPACTION_SUMMARY_SUFFIX)) / 4)
    return estimate_tokens(entry)


def _usage_total(usage: Usage) -> int:
    """``calculateContextTokens``: input + output + cache read + cache write."""
    return usage.input + usage.output + usage.cache_read + usage.cache_write


def make(kit: Kit) -> PiPolicy:
    """pi's compaction for ``kit`` (the current mid-run check, settings scaled to the window)."""
    return PiPolicy(kit)
