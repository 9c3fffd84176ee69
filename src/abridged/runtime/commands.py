"""Slash commands: handled before the model, stored, never sent to it (they cost no tokens).

========================  ===========================================================  =========
command                   what it does                                                 when
========================  ===========================================================  =========
``/status``               context used / window and %, input budget, summary size,     at once
                          session, cache hit rate, cost so far (when the registry
                          knows the model's prices)
``/new``                  start a new session from this one's summary                  after
``/clear``                start a new, empty session (the old one is kept)             after
``/compact [focus]``      compact now, with optional focus for the summary             after
``/prune``                prune old tool outputs now                                   after
``/resume [id | words]``  make an earlier session current (by id, id prefix, number    after
                          or search words); without an argument, list the sessions
``/abort``                cancel the reply in progress, keeping what was received      at once
``/help``                 this list; an unknown command gets it too                    at once
========================  ===========================================================  =========

"after": when a turn is in progress the command waits for it to end (in order with the
messages sent before it). Each command and its output are stored (``meta["kind"]``
``command`` and ``command_output``) and never become part of the model's context.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from abridged.core.budget import format_token_size
from abridged.core.windows import Pricing
from abridged.engine.summarize.prompts import parse_sections, summary_title
from abridged.errors import AbridgedError
from abridged.events.runtime import TurnResult
from abridged.runtime.state import summary_tokens
from abridged.store import SessionInfo, SessionTotals

if TYPE_CHECKING:
    from abridged.runtime.conversation import Conversation
    from abridged.store import Store

__all__ = [
    "COMMANDS",
    "Status",
    "command_name",
    "help_text",
    "is_command",
    "is_immediate",
    "run_command",
    "status",
]

COMMANDS: dict[str, tuple[str, str]] = {
    "status": ("/status", "context used / window, summary, session, cache hit rate, cost"),
    "new": ("/new", "start a new session from this one's summary"),
    "clear": ("/clear", "start a new, empty session (the old one is kept)"),
    "compact": ("/compact [focus]", "compact now, with optional focus instructions"),
    "prune": ("/prune", "replace old tool outputs with placeholders now"),
    "resume": ("/resume [id | words]", "resume an earlier session; without argument, list"),
    "abort": ("/abort", "cancel the reply in progress, keeping what was received"),
    "help": ("/help", "this list"),
}
"""Every command: its usage and what it does."""

IMMEDIATE = frozenset({"status", "abort", "help"})
"""Commands handled at once, even during a turn (the others wait for it to end)."""

_COMMAND = re.compile(r"^/([A-Za-z][\w-]*)(?:\s+(.*))?$", re.DOTALL)


def is_command(text: str) -> bool:
    """Whether ``text`` is a slash command (``/name`` then optional arguments; a path such as
    ``/usr/bin/env`` is not one).

    >>> is_command("/compact focus on the API"), is_command("/usr/bin/env"), is_command("hi")
    (True, False, False)
    """
    return _COMMAND.match(text.strip()) is not None


def command_name(text: str) -> str:
    """The command's name, lower case (``"compact"``)."""
    match = _COMMAND.match(text.strip())
    return match.group(1).lower() if match else ""


def command_argument(text: str) -> str:
    """What follows the command's name, stripped."""
    match = _COMMAND.match(text.strip())
    return (match.group(2) or "").strip() if match else ""


def is_immediate(text: str) -> bool:
    """Whether the command is handled at once (``/status``, ``/abort``, ``/help``, unknown)."""
    name = command_name(text)
    return name in IMMEDIATE or name not in COMMANDS


def help_text(unknown: str | None = None) -> str:
    """The list of commands (after a line naming the unknown one, if any)."""
    width = max(len(usage) for usage, _ in COMMANDS.values())
    lines = [f"Unknown command /{unknown}." if unknown else "Commands:"]
    if unknown:
        lines.append("Commands:")
    lines.extend(f"  {usage.ljust(width)}  {what}" for usage, what in COMMANDS.values())
    return "\n".join(lines)


# -- /status ------------------------------------------------------------------------------------


def _percent(part: int, whole: int) -> int:
    return round(100 * part / whole) if whole > 0 else 0


def _cost(totals: SessionTotals, pricing: Pricing | None) -> float | None:
    if pricing is None:
        return None
    return pricing.cost(
        input=totals.input,
        output=totals.output,
        cache_read=totals.cache_read,
        cache_write=totals.cache_write,
    )


@dataclass(frozen=True, slots=True)
class Status:
    """What ``/status`` reports (``text`` is the human form)."""

    model: str
    context_tokens: int
    context_window: int
    input_budget: int
    summary_tokens: int
    compactions: int
    context_messages: int
    session: SessionInfo | None
    sessions: int
    totals: SessionTotals
    cache_hit_rate: float | None
    cost: float | None
    busy: bool
    compacting: bool
    queued: int

    @property
    def text(self) -> str:
        """Five lines: context, summary, session, cache, cost."""
        size = format_token_size(self.context_tokens)
        lines = [
            f"Context: {size} / {format_token_size(self.context_window)} window "
            f"({_percent(self.context_tokens, self.context_window)}%); input budget "
            f"{format_token_size(self.input_budget)} "
            f"({_percent(self.context_tokens, self.input_budget)}% used)",
        ]
        if self.summary_tokens:
            plural = "s" if self.compactions != 1 else ""
            lines.append(
                f"Summary: {format_token_size(self.summary_tokens)} tokens "
                f"({self.compactions} compaction{plural} in this lineage)"
            )
        else:
            lines.append("Summary: none")
        if self.session is not None:
            lines.append(
                f"Session: #{self.session.number} ({self.session.reason}) "
                f"{self.session.id[:8]}, {self.context_messages} messages in context, "
                f"{self.sessions} session{'s' if self.sessions != 1 else ''} in all"
            )
        if self.cache_hit_rate is None:
            lines.append("Cache: no usage reported yet")
        else:
            lines.append(
                f"Cache: {round(100 * self.cache_hit_rate)}% of prompt tokens read from cache"
            )
        if self.cost is None:
            lines.append(f"Cost so far: unknown (no prices known for {self.model})")
        else:
            lines.append(f"Cost so far: ${self.cost:.4f}")
        state = []
        if self.busy:
            state.append("replying")
        if self.compacting:
            state.append("compacting")
        if self.queued:
            state.append(f"{self.queued} queued")
        if state:
            lines.append("Now: " + ", ".join(state))
        return "\n".join(lines)


async def status(convo: Conversation) -> Status:
    """The conversation's status now (reads the store's usage totals)."""

    budget = convo.budget()
    sessions = await convo.store.list_sessions(convo.id, owner=convo.owner)
    totals = SessionTotals()
    for s in sessions:
        t = s.totals or SessionTotals()
        totals = SessionTotals(
            messages=totals.messages + t.messages,
            input=totals.input + t.input,
            output=totals.output + t.output,
            cache_read=totals.cache_read + t.cache_read,
            cache_write=totals.cache_write + t.cache_write,
            reasoning=totals.reasoning + t.reasoning,
        )
    prompt = totals.input + totals.cache_read + totals.cache_write
    pricing = convo.limits.pricing
    if pricing is None:
        from abridged.providers.registry import lookup_model  # noqa: PLC0415

        try:
            entry = lookup_model(convo.model.name)
        except AbridgedError:
            entry = None
        pricing = entry.pricing if entry is not None else None
    return Status(
        model=convo.model.name,
        context_tokens=convo.context_tokens(),
        context_window=budget.context_window,
        input_budget=budget.input_budget,
        summary_tokens=summary_tokens(convo),
        compactions=convo.state.compactions,
        context_messages=len(convo.context()),
        session=convo.session,
        sessions=len(sessions),
        totals=totals,
        cache_hit_rate=(totals.cache_read / prompt) if prompt else None,
        cost=_cost(totals, pricing),
        busy=convo.busy,
        compacting=convo.compacting,
        queued=convo.queued,
    )


# -- the others ---------------------------------------------------------------------------------


def session_gist(summary: str, max_chars: int = 80) -> str:
    """What tells a session apart in a listing: the newest request its summary records (every
    session of a conversation starts from the same first task), else ``summary_title``.

    >>> session_gist("## User intent and requests\\n- Fix the parser.\\n- Now add a --strict flag.")
    'Now add a --strict flag.'
    """
    for raw in reversed(parse_sections(summary).get("intent", "").splitlines()):
        line = raw.strip().lstrip("-*• ").strip()
        if line and not line.startswith(("[", "<", "(")):
            return line if len(line) <= max_chars else line[: max_chars - 1].rstrip() + "…"
    return summary_title(summary, max_chars)


def _clip(text: str, max_chars: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= max_chars else line[: max_chars - 1].rstrip() + "…"


async def session_gists(
    store: Store,
    conversation_id: str,
    sessions: Sequence[SessionInfo],
    *,
    max_chars: int = 80,
) -> dict[str, str]:
    """A line telling each session apart, by id, as ``/resume`` and the page list them: the
    newest request said in it (``Store.newest_requests``); for one with none, the newest
    request its summary records (``session_gist``), or, for a session that starts from its
    predecessor's summary and holds nothing yet, that it does. Sessions share summaries (a
    compaction's new session starts from the one its predecessor ended with, and a summary
    need not record the requests of the kept tail), so a summary alone told them apart badly.
    """
    by_id = {s.id: s for s in sessions}
    asked = await store.newest_requests(conversation_id, [s.id for s in sessions])
    gists: dict[str, str] = {}
    for s in sessions:
        summary = s.final_summary or s.start_summary
        if s.id in asked:
            gists[s.id] = _clip(asked[s.id], max_chars)
        elif s.final_summary is None and s.start_summary is not None and s.parent_id in by_id:
            parent = by_id[s.parent_id]
            gists[s.id] = f"(no request yet; starts from #{parent.number}'s summary)"
        else:
            gists[s.id] = session_gist(summary.text, max_chars) if summary is not None else ""
    return gists


async def _resume(convo: Conversation, argument: str) -> str:
    store = convo.store
    sessions = await store.list_sessions(convo.id, owner=convo.owner)
    if not argument:
        lines = ["Sessions (/resume ID, number or search words):"]
        gists = await session_gists(store, convo.id, sessions)
        for s in sessions:
            title = gists.get(s.id, "")
            gist = f": {title}" if title else ""
            mark = "*" if s.is_current else " "
            lines.append(f" {mark} #{s.number} {s.id[:8]} ({s.reason}){gist}")
        return "\n".join(lines)
    wanted = argument.lstrip("#")
    found: SessionInfo | None = None
    for s in sessions:
        if s.id == argument or (len(argument) >= 4 and s.id.startswith(argument)):
            found = s
            break
        if wanted.isdigit() and s.number == int(wanted):
            found = s
            break
    if found is None:
        hits = await store.search(argument, conversation_id=convo.id, owner=convo.owner, limit=1)
        if hits:
            found = next((s for s in sessions if s.id == hits[0].session_id), None)
    if found is None:
        return f"No session matches {argument!r} (/resume lists them)."
    target = found
    budget = convo.budget()

    async def action() -> object:
        return await store.resume(
            convo.id,
            target.id,
            input_budget=budget.input_budget,
            ratio=convo.settings.resume_ratio,
            estimate=convo.estimate_tokens,
            summarize=convo.finalize_summary,
            owner=convo.owner,
        )

    result = await convo.switch_session(action)
    mode = getattr(result, "mode", "resumed")
    if mode == "current":
        return f"Session #{target.number} is already the current one."
    if mode == "new":
        convo.expect_summary()
        return (
            f"Session #{target.number}'s context does not fit the budget: a new session started "
            "from its summary."
        )
    return f"Resumed session #{target.number} ({target.id[:8]})."


async def run_command(convo: Conversation, line: str) -> TurnResult:
    """Run one command line and return its result (``command`` names it)."""
    name = command_name(line)
    argument = command_argument(line)
    if name == "status":
        text = (await status(convo)).text
    elif name == "help":
        text = help_text()
    elif name == "abort":
        text = "Aborting the reply in progress." if convo.abort() else "Nothing to abort."
    elif name == "compact":
        result = await convo.compact_now(argument or None)
        if result is None:
            text = "Nothing to compact."
        else:
            text = "; ".join(e.text for e in result.events if e.kind == "compaction_ended")
            text = text or f"Compaction {result.status}."
            if result.status == "compacted" and convo.state.summary != result.summary_text:
                text += " (another writer had compacted first: its summary is used)"

    elif name == "prune":
        pruned = await convo.prune_now()
        text = pruned.text if pruned is not None else "Nothing to prune."
    elif name in ("new", "clear"):
        reason: Literal["new", "clear"] = "new" if name == "new" else "clear"

        async def action() -> object:
            return await convo.store.new_session(
                convo.id, reason=reason, summarize=convo.finalize_summary, owner=convo.owner
            )

        await convo.switch_session(action)
        number = convo.session.number if convo.session is not None else 0
        if reason == "new":
            convo.expect_summary()
            text = (
                f"Started session #{number}: it starts from the previous session's summary as "
                "soon as that is ready."
            )
        else:
            text = f"Cleared: session #{number} starts empty (/resume brings the old one back)."
    elif name == "resume":
        text = await _resume(convo, argument)
    else:
        text = help_text(unknown=name)
        name = "help"
    return TurnResult(text=text, command=name, calls=0)
