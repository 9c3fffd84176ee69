"""OpenCode's context management, re-implemented: prune old tool output, then summarize on overflow.

Source: sst/opencode (the snapshot the code index holds, commits 31e22f65 / 3df4a255 / 00d0a710 /
89b31e68); what this module takes from each file:

- ``packages/opencode/src/session/overflow.ts``: ``isOverflow``. The *last finished assistant
  message's* reported tokens (``total``, else input + output + cache read + write) against
  ``usable = context - maxOutput - reserved``, with ``reserved = min(COMPACTION_BUFFER = 20_000,
  maxOutput)``. With this harness's 4,096 output tokens: 8,192 usable of 16k, 24,576 of 32k.
- ``packages/opencode/src/session/prompt.ts`` (the loop): before each call, when the last
  finished assistant message is not a summary and ``isOverflow``, a compaction (``auto``) runs
  first; a provider's context-overflow error makes the processor return ``"compact"`` and the loop
  compacts with ``overflow: true`` and goes on; ``prune`` runs when the loop exits (a reply without
  tool calls ends the run).
- ``packages/opencode/src/session/compaction.ts``: ``PRUNE_MINIMUM = 20_000``, ``PRUNE_PROTECT =
  40_000``, ``PRUNE_PROTECTED_TOOLS = ["skill"]``; ``prune`` walks parts newest first, skips the
  last 2 user turns, stops at a summary or at an output already pruned, and once more than
  ``PRUNE_PROTECT`` tokens of tool output are behind it marks the older outputs compacted, but only
  when they add up to more than ``PRUNE_MINIMUM`` (token estimate: ``Token.estimate``, chars / 4).
  ``process`` (the compaction): ``select`` keeps a recent tail verbatim (``preserveRecentBudget =
  min(15_000, max(2_000, floor(usable * 0.25)))``: 2,048 tokens at 16k, 6,144 at 32k, newest user
  turns first, splitting the oldest kept turn at a message), serializes the rest (``serialize``:
  ``[User]:`` / ``[Assistant]:`` / ``[Assistant tool call]: name(input)`` / ``[Tool result]:``
  cut at ``TOOL_OUTPUT_MAX_CHARS = 2_000`` chars, ``[Old tool result content cleared]`` when
  pruned) and sends the *compaction agent* one user message: ``buildPrompt`` of
  ``packages/core/src/session/compaction.ts`` (the ``<conversation>``, the ``<prior-summary>`` and
  ``SUMMARY_UPDATE_INSTRUCTIONS`` after an earlier compaction, ``SUMMARY_TEMPLATE`` of
  ``packages/core/src/session/compaction-suffix.ts``). On overflow it summarizes up to the last real
  user message and replays that message after the summary; otherwise it adds the synthetic
  "Continue if you have next steps..." message. The default ``mode`` is ``"prepend"`` (the one
  modelled here; the ``"suffix"`` mode is opt-in).
- ``packages/opencode/src/agent/agent.ts`` + ``agent/prompt/compaction.txt``: the compaction
  agent's prompt is the system prompt of that request (``session/llm/request.ts``
  ``prepareSystem``: ``agent.prompt`` replaces the provider prompt; no tools).
- ``message-v2.ts`` (``filterCompacted``, ``toModelMessages``): after a compaction the model sees
  the retained tail, the compaction request as the user text "What did we do so far?", the summary
  as an assistant message, then what follows; a pruned output reads
  ``[Old tool result content cleared]``.

**Scaling.** ``PRUNE_PROTECT`` and ``PRUNE_MINIMUM`` are absolute token counts tuned for the
200k-token windows OpenCode mostly runs with; here they are scaled by ``window / 200_000``
(``prune_thresholds``): protect 3,277 / minimum 1,638 at 16k, 6,554 / 3,277 at 32k. Everything
else (usable, the tail budget) OpenCode already derives from the window, so it is not scaled.

**Departures, by necessity.** The harness gives the recorded system prompt, not OpenCode's; tool
results are abridged ``tool`` messages (OpenCode keeps them inside the assistant message, so a tail
never starts at one here either); token estimates of a serialized message use abridged's
plain-data form instead of the AI SDK's. ``compaction.prune`` defaults to ``false`` in recent
OpenCode releases (1.18) and was on by default before; ``OpenCodePolicy(prune=True)`` is the
default here because pruning is half of what this peer is benchmarked for. A compaction whose
request the provider would reject ends an OpenCode session ("Session too large to compact");
here it is counted in ``failed_compactions``, the history is left as it was, no further compaction
is tried and ``recover`` gives up.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from abridged.core.model import (
    Message,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
    Usage,
    part_to_dict,
)
from policy_kit import Kit, Rejected, Window

NAME = "opencode"

PRUNE_MINIMUM = 20_000
PRUNE_PROTECT = 40_000
PRUNE_PROTECTED_TOOLS = ("skill",)
PRUNE_REFERENCE_WINDOW = 200_000  # the window PRUNE_* were tuned for (see the docstring)
COMPACTION_BUFFER = 20_000
TOOL_OUTPUT_MAX_CHARS = 2_000
MIN_PRESERVE_RECENT_TOKENS = 2_000
MAX_PRESERVE_RECENT_TOKENS = 15_000
PRESERVE_RECENT_SHARE = 0.25

CLEARED = "[Old tool result content cleared]"
COMPACTION_QUESTION = "What did we do so far?"
CONTINUE = (
    "Continue if you have next steps, or stop and ask for clarification if you are unsure how to "
    "proceed."
)
OVERFLOW_NOTE = (
    "The previous request exceeded the provider's size limit due to large media attachments. The "
    "conversation was compacted and media files were removed from context. If the user was asking "
    "about attached images or files, explain that the attachments were too large to process and "
    "suggest they try again with smaller or fewer files.\n\n"
)

#: ``packages/opencode/src/agent/prompt/compaction.txt``: the compaction agent's system prompt.
COMPACTION_SYSTEM = """You are summarizing a conversation for continuation by another agent.

Produce a structured summary with these sections:

## Goal
[What goal(s) is the user trying to accomplish?]

## Instructions
[Important instructions from the user. Include plan/spec details if any.]

## Discoveries
[Notable findings that would help the next agent continue]

## Accomplished
[What has been completed, what is in progress, what remains]

## Relevant files
[Structured list of files read, edited, or created]

## Unresolved issues
[Any errors or blockers that need attention]

Be thorough but concise. Focus on information critical for continuation.
Do not respond to questions in the conversation. Output only the summary.
Do not call any tools.
"""

#: ``packages/core/src/session/compaction-suffix.ts``: ``SUMMARY_TEMPLATE``.
SUMMARY_TEMPLATE = """Output exactly the Markdown structure shown inside <template> and keep the section order unchanged. Do not include the <template> tags in your response.
<template>
## Objective
- [one or two brief sentences describing what the user is trying to accomplish]

## Important Details
- [constraints/preferences, decisions and why, important facts/assumptions, exact context needed to continue, or "(none)"]

## Work State
### Completed
- [finished work, verified facts, or changes made; otherwise "(none)"]

### Active
- [current work, partial changes, or investigation state; otherwise "(none)"]

### Blocked
- [blockers, failing commands, or unknowns; otherwise "(none)"]

## Next Move
1. [immediate concrete action, or "(none)"]
2. [next action if known, or "(none)"]

## Relevant Files
- [file or directory path: why it matters, or "(none)"]
</template>

Rules:
- Keep every section, even when empty.
- Use terse bullets, not prose paragraphs.
- Preserve exact file paths, symbols, commands, error strings, URLs, and identifiers when known.
- Do not mention the summary process or that context was compacted."""  # noqa: E501

#: ``packages/core/src/session/compaction-suffix.ts``: ``SUMMARY_UPDATE_INSTRUCTIONS``.
SUMMARY_UPDATE_INSTRUCTIONS = """The <prior-summary> summarizes everything that happened before the <conversation>. Construct a new summary that combines both. The <prior-summary> is discarded after this: anything you do not carry into the new summary is lost.

When combining:
- Carry forward objectives, constraints, user directives, decisions, and parallel workstreams from the <prior-summary> even when the <conversation> does not mention them. Drop only what is finished and no longer needed.
- The <conversation> is more recent than the <prior-summary>. Where they conflict, the conversation wins: state the corrected fact and drop the old claim.
- Add new progress, decisions, constraints, and context from the conversation.
- Move completed work from "Active" to "Completed".
- If a blocker has been resolved, update the summary to reflect that while keeping any details still needed to continue the work.
- Update "Objective" and "Next Move" to reflect the current work state."""  # noqa: E501

Kind = Literal["message", "compaction", "summary", "continue"]


def estimate(text: str) -> int:
    """OpenCode's ``Token.estimate``: characters / 4, rounded half up (JavaScript's ``round``)."""
    return max(0, int(len(text) / 4 + 0.5))


def usable(window: Window) -> int:
    """``overflow.ts`` ``usable``: the context minus the output and the reserved buffer."""
    reserved = min(COMPACTION_BUFFER, window.max_output)
    return max(0, window.tokens - window.max_output - reserved)


def preserve_recent_budget(window: Window) -> int:
    """``compaction.ts`` ``preserveRecentBudget``: the tokens of recent history kept verbatim."""
    share = int(usable(window) * PRESERVE_RECENT_SHARE)
    return min(MAX_PRESERVE_RECENT_TOKENS, max(MIN_PRESERVE_RECENT_TOKENS, share))


def prune_thresholds(window: Window) -> tuple[int, int]:
    """``(protect, minimum)``: ``PRUNE_PROTECT`` and ``PRUNE_MINIMUM`` scaled to ``window``."""
    scale = window.tokens / PRUNE_REFERENCE_WINDOW
    return round(PRUNE_PROTECT * scale), round(PRUNE_MINIMUM * scale)


def build_prompt(previous: str | None, conversation: str) -> str:
    """``packages/core/src/session/compaction.ts`` ``buildPrompt`` (one context string)."""
    head = f"Here is the conversation so far:\n\n<conversation>\n{conversation}\n</conversation>"
    if previous is None:
        return "\n\n".join(
            [
                head,
                "Create a new anchored summary from the conversation history in the "
                "<conversation> tags above so another coding agent can continue the work.",
                SUMMARY_TEMPLATE,
            ]
        )
    prior = (
        "Here is the summary of the conversation before the <conversation> above:\n\n"
        f"<prior-summary>\n{previous}\n</prior-summary>"
    )
    return "\n\n".join([head, prior, SUMMARY_UPDATE_INSTRUCTIONS, SUMMARY_TEMPLATE])


@dataclass(slots=True)
class _Entry:
    """One message of OpenCode's stored session (the whole history, compacted parts included)."""

    message: Message
    kind: Kind = "message"
    tail_start: int | None = None  # a compaction's first retained entry (``tail_start_id``)


@dataclass(slots=True)
class _Stats:
    compactions: int = 0
    overflow_compactions: int = 0
    failed_compactions: int = 0
    prunes: int = 0
    pruned_results: int = 0
    pruned_tokens: int = 0


def _input_json(arguments: str) -> str:
    """``JSON.stringify(part.state.input)``: the arguments re-encoded compactly."""
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        return arguments


def _truncate(value: str) -> str:
    if len(value) <= TOOL_OUTPUT_MAX_CHARS:
        return value
    return f"{value[:TOOL_OUTPUT_MAX_CHARS]}\n[truncated]"


@dataclass
class OpenCodePolicy:
    """OpenCode's compaction as a bench policy (see the module docstring)."""

    kit: Kit
    prune: bool = True
    name: str = NAME
    _system: list[Message] = field(default_factory=list)
    _log: list[_Entry] = field(default_factory=list)
    _pruned: set[str] = field(default_factory=set)  # call ids whose output is compacted
    _last_total: int | None = None  # tokens of the last finished assistant message
    _stopped: bool = False
    _stats: _Stats = field(default_factory=_Stats)

    # -- the policy interface -----------------------------------------------------------------

    def prepare(self, new: Sequence[Message]) -> list[Message]:
        for message in new:
            if message.role == "system" and not self._log:
                self._system.append(message)
                continue
            self._log.append(_Entry(message))
            if message.role == "assistant" and not message.tool_calls and self.prune:
                # a reply without tool calls ends the loop, and the loop's exit prunes
                self._prune()
        limit = usable(self.kit.window)
        if not self._stopped and self._last_total is not None and self._last_total >= limit:
            self._compact(overflow=False)
        return self._context()

    def observe(self, usage: Usage) -> None:
        # ``tokens.total`` of the reply: input (cached included) plus output
        self._last_total = usage.total_tokens

    def recover(self, error: Rejected) -> list[Message] | None:
        del error
        if self._stopped:
            return None
        if not self._compact(overflow=True):
            return None
        return self._context()

    def stats(self) -> dict[str, int]:
        s = self._stats
        return {
            "compactions": s.compactions,
            "prunes": s.prunes,
            "overflow_compactions": s.overflow_compactions,
            "failed_compactions": s.failed_compactions,
            "pruned_results": s.pruned_results,
            "pruned_tokens": s.pruned_tokens,
        }

    # -- what the model sees ------------------------------------------------------------------

    def _completed(self, index: int) -> bool:
        """Whether the compaction at ``index`` has its summary (``filterCompacted``)."""
        entry = self._log[index]
        following = index + 1 < len(self._log) and self._log[index + 1].kind == "summary"
        return entry.kind == "compaction" and following

    def _view(self) -> list[int]:
        """``filterCompacted``: from the latest completed compaction's tail (or itself) on."""
        for index in range(len(self._log) - 1, -1, -1):
            if self._completed(index):
                tail = self._log[index].tail_start
                return list(range(index if tail is None else tail, len(self._log)))
        return list(range(len(self._log)))

    def _render(self, entry: _Entry) -> Message:
        """``toModelMessages`` of one entry."""
        message = entry.message
        if entry.kind == "compaction":
            return Message.user(COMPACTION_QUESTION)
        if message.role != "tool" or not any(
            r.call_id in self._pruned for r in message.tool_results
        ):
            return message
        parts = tuple(
            ToolResult(p.call_id, p.name, (Text(CLEARED),), p.is_error)
            if isinstance(p, ToolResult) and p.call_id in self._pruned
            else p
            for p in message.parts
        )
        return message.replace(parts=parts)

    def _context(self) -> list[Message]:
        return [*self._system, *(self._render(self._log[i]) for i in self._view())]

    def _tokens(self, indices: Sequence[int]) -> int:
        """``estimate`` of ``JSON.stringify(toModelMessages(...))`` for some entries."""
        data = [
            [m.role, [part_to_dict(p) for p in m.parts]]
            for m in (self._render(self._log[i]) for i in indices)
        ]
        return estimate(json.dumps(data, ensure_ascii=False, separators=(",", ":")))

    # -- prune ----------------------------------------------------------------------------------

    def _prune(self) -> None:
        """``SessionCompaction.prune`` over the whole stored session."""
        protect, minimum = prune_thresholds(self.kit.window)
        total = 0
        pruned = 0
        to_prune: list[str] = []
        turns = 0
        names = self._call_names()
        for entry in reversed(self._log):
            message = entry.message
            if message.role == "user":
                turns += 1
            if turns < 2:
                continue
            if entry.kind == "summary":
                break
            if message.role != "tool":
                continue
            stop = False
            for result in reversed(message.tool_results):
                if result.is_error:
                    continue  # only completed tools are pruned (an error is not an output)
                if names.get(result.call_id, result.name) in PRUNE_PROTECTED_TOOLS:
                    continue
                if result.call_id in self._pruned:
                    stop = True  # everything older was pruned by an earlier pass
                    break
                size = estimate(result.text)
                total += size
                if total <= protect:
                    continue
                pruned += size
                to_prune.append(result.call_id)
            if stop:
                break
        if pruned > minimum:
            self._pruned.update(to_prune)
            self._stats.prunes += 1
            self._stats.pruned_results += len(to_prune)
            self._stats.pruned_tokens += pruned

    def _call_names(self) -> dict[str, str]:
        return {c.id: c.name for e in self._log for c in e.message.tool_calls}

    # -- compaction -----------------------------------------------------------------------------

    def _real_user(self, index: int) -> bool:
        entry = self._log[index]
        return entry.message.role == "user" and entry.kind != "compaction"

    def _select(self, history: Sequence[int]) -> int | None:
        """``select``: the position in ``history`` where the kept tail starts, or ``None``."""
        budget = preserve_recent_budget(self.kit.window)
        starts = [k for k, i in enumerate(history) if self._real_user(i)]
        if not starts:
            return None
        ends = [*starts[1:], len(history)]
        total = 0
        keep: int | None = None
        for start, end in reversed(list(zip(starts, ends, strict=True))):
            size = self._tokens(history[start:end])
            if total + size <= budget:
                total += size
                keep = start
                continue
            remaining = budget - total
            if remaining > 0:
                # ``splitTurn``: the earliest message of the turn whose suffix fits; a tool result
                # is a part of its assistant message in OpenCode, so never a place to split
                for split in range(start + 1, end):
                    if self._log[history[split]].message.role == "tool":
                        continue
                    if self._tokens(history[split:end]) <= remaining:
                        keep = split
                        break
            break
        return keep or None  # a tail from the very start is no tail

    def _serialize(self, entry: _Entry, results: dict[str, ToolResult]) -> str:
        """``serialize``: one message as the summary request shows it."""
        message = entry.message
        if message.role == "user":
            return f"[User]: {message.text}" if message.text else ""
        if message.role != "assistant":
            return ""  # tool results are shown with their calls
        lines: list[str] = []
        for part in message.parts:
            if isinstance(part, Text) and part.text:
                lines.append(f"[Assistant]: {part.text}")
            elif isinstance(part, Reasoning) and part.text:
                lines.append(f"[Assistant reasoning]: {part.text}")
            elif isinstance(part, ToolCall):
                lines.append(f"[Assistant tool call]: {part.name}({_input_json(part.arguments)})")
                result = results.get(part.id)
                if result is None:
                    continue
                if result.is_error:
                    lines.append(f"[Tool error]: {result.text}")
                elif result.call_id in self._pruned:
                    lines.append(f"[Tool result]: {CLEARED}")
                else:
                    lines.append(f"[Tool result]: {_truncate(result.text)}")
        return "\n".join(lines)

    def _compact(self, *, overflow: bool) -> bool:
        """``SessionCompaction.process``: summarize the head, keep the tail (``False``: failed)."""
        view = self._view()
        replay: Message | None = None
        if overflow:
            # summarize up to the last real user message and send that message again after it
            for k in range(len(view) - 1, -1, -1):
                if self._real_user(view[k]):
                    before = view[:k]
                    if any(self._real_user(i) for i in before):
                        replay = self._log[view[k]].message
                        view = before
                    break
        hidden: set[int] = set()
        previous: str | None = None
        for i in view:
            if self._completed(i):
                hidden.update((i, i + 1))
                previous = self._log[i + 1].message.text or None
        history = [i for i in view if i not in hidden]
        split = self._select(history)
        head = history if split is None else history[:split]
        tail_start = None if split is None else history[split]
        results = {r.call_id: r for i in head for r in self._log[i].message.tool_results}
        texts = (self._serialize(self._log[i], results) for i in head)
        conversation = "\n\n".join(t for t in texts if t)
        request = [
            Message.system(COMPACTION_SYSTEM),
            Message.user(build_prompt(previous, conversation)),
        ]
        if self.kit.count(request) > self.kit.window.limit:
            # the provider refuses the compaction request: OpenCode stops the session there
            self._stats.failed_compactions += 1
            self._stopped = True
            return False
        summary = self.kit.summarize(
            [self._render(self._log[i]) for i in head],
            previous=previous,
            request=request,
            max_tokens=self.kit.window.max_output,
        )
        self._log.append(_Entry(Message.user(COMPACTION_QUESTION), "compaction", tail_start))
        self._log.append(_Entry(Message.assistant(summary, meta={"kind": "summary"}), "summary"))
        if replay is not None:
            self._log.append(_Entry(replay))
        else:
            text = (OVERFLOW_NOTE if overflow else "") + CONTINUE
            self._log.append(_Entry(Message.user(text), "continue"))
        self._last_total = None  # the last finished assistant is now the summary
        self._stats.compactions += 1
        self._stats.overflow_compactions += overflow
        return True


def make(kit: Kit) -> OpenCodePolicy:
    """OpenCode's policy for ``kit`` (prune on, as in OpenCode before 1.18)."""
    return OpenCodePolicy(kit)
