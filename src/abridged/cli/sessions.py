"""``abridged sessions``: what the store holds, per conversation and session.

- ``list``: conversations, most recently updated first, with their sessions, messages, token and
  cache totals and the latest summary;
- ``show ID``: one conversation (or the conversation of a session id): its sessions (why each
  started, where its context starts, totals), its compactions and the sessions' summaries;
- ``search QUERY``: sessions whose final summary matches (the store's session search);
- ``export ID``: a conversation's messages (a session's lineage, summarized ones included, or
  ``--context``: the current context) as abridged, OpenAI or Anthropic JSON.

``--db`` names the database (a SQLite path or a ``postgresql://`` URL); without it
``ABRIDGED_DB``, else the SQLite file in the user's data directory. A SQLite file that does not
exist is never created by these commands.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.console import Console
from rich.table import Table

from abridged.cli.common import (
    BAD_INPUT,
    BAD_USAGE,
    OUTPUT_FORMAT_ALIASES,
    CliError,
    fail,
    plural,
    sqlite_path,
    stdout,
    store_url,
)
from abridged.core.budget import format_token_size
from abridged.core.model import Message, message_to_dict
from abridged.errors import AbridgedError, NotFoundError, OwnershipError, SchemaVersionError
from abridged.store import ConversationInfo, SessionInfo, SessionTotals, Store

if TYPE_CHECKING:
    from abridged.runtime.views import TotalsView

T = TypeVar("T")
EXPORT_FORMATS = ("abridged", "openai", "anthropic")


def _when(stamp: datetime | None) -> str:
    return "" if stamp is None else stamp.astimezone().strftime("%Y-%m-%d %H:%M")


_BOILERPLATE = (
    "none recorded",
    "the turn in progress",
    "this turn is still in progress",
    "[summary of",
)


def _first_line(text: str | None, width: int = 80) -> str:
    """The first informative line of a summary (headings and boilerplate skipped)."""
    if not text:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    useful = [
        line.lstrip("-* ").strip()
        for line in lines
        if not line.startswith("#")
        and not line.endswith(":")
        and not line.lower().startswith(_BOILERPLATE)
    ]
    line = (useful or lines or [""])[0]
    return line if len(line) <= width else line[: width - 1] + "…"


def _short(ident: str) -> str:
    return ident[:12]


def _totals(sessions: list[SessionInfo]) -> TotalsView:
    from abridged.runtime.views import TotalsView  # noqa: PLC0415  (pydantic, when it runs)

    return TotalsView.over(sessions)


def _conversation(c: ConversationInfo) -> dict[str, Any]:
    from abridged.runtime.views import ConversationView  # noqa: PLC0415

    return ConversationView.of(c).model_dump(mode="json")


def _latest_summary(sessions: list[SessionInfo]) -> str | None:
    for s in reversed(sessions):
        for summary in (s.final_summary, s.start_summary):
            if summary is not None and summary.text.strip():
                return summary.text
    return None


class _Db:
    """Opens the store for one command (never creating a missing SQLite file)."""

    def __init__(self, db: str | None) -> None:
        self.url = store_url(db)
        path = sqlite_path(self.url)
        self.missing = path is not None and not path.exists()
        self.where = str(path) if path is not None else (self.url or "")

    def run(self, body: Callable[[Store], Awaitable[T]]) -> T:
        if self.missing:
            raise CliError(f"no database at {self.where} (pass --db, or set ABRIDGED_DB)")

        async def go() -> T:
            store = Store(self.url, create=False)
            try:
                return await body(store)
            finally:
                await store.close()

        try:
            return asyncio.run(go())
        except SchemaVersionError as exc:
            message = exc.message
            if "upgrade it with" in message or "create it with" in message:
                message = (
                    message.split(" with: ")[0] + f" with: abridged db upgrade --db {self.where}"
                )
            raise CliError(message) from exc


async def _find(store: Store, ident: str, owner: str | None) -> tuple[ConversationInfo, str | None]:
    """The conversation named by ``ident`` (its key, or with ``owner`` the owner's id for it,
    as a tenant of the service names it), or the one holding the session ``ident``."""
    try:
        return await store.open_conversation(ident, owner=owner), None
    except (NotFoundError, OwnershipError):
        pass
    if owner is not None:
        try:
            key = await store.conversation_key(ident, owner=owner)
            return await store.open_conversation(key, owner=owner), None
        except NotFoundError:
            pass
    found: list[tuple[ConversationInfo, str]] = []
    for conv in await store.list_conversations(owner=owner):
        for s in await store.list_sessions(conv.id):
            if s.id == ident:
                return conv, s.id
            if len(ident) >= 6 and s.id.startswith(ident):
                found.append((conv, s.id))
    if len(found) == 1:
        return found[0]
    if found:
        raise CliError(f"{ident!r} names {len(found)} sessions: give more of the id", BAD_USAGE)
    raise CliError(f"no conversation or session {ident!r} in the database")


# -- list ---------------------------------------------------------------------------------------


def run_list(*, db: str | None, owner: str | None, as_json: bool, limit: int | None) -> int:
    """``sessions list``."""
    store = _Db(db)
    if store.missing:
        if as_json:
            sys.stdout.write(json.dumps({"conversations": [], "db": store.where}) + "\n")
        else:
            stdout().print(f"no conversations yet (no database at {store.where})")
        return 0

    async def body(s: Store) -> list[tuple[ConversationInfo, list[SessionInfo]]]:
        convs = await s.list_conversations(owner=owner)
        if limit is not None:
            convs = convs[:limit]
        return [(c, await s.list_sessions(c.id)) for c in convs]

    try:
        rows = store.run(body)
    except CliError as exc:
        return fail(exc)
    except AbridgedError as exc:
        return fail(CliError(str(exc)))
    if as_json:
        out = [
            {
                **_conversation(c),
                "sessions": len(ss),
                "totals": _totals(ss).model_dump(mode="json"),
                "latest_summary": _latest_summary(ss),
            }
            for c, ss in rows
        ]
        sys.stdout.write(json.dumps({"db": store.where, "conversations": out}) + "\n")
        return 0
    console = stdout()
    if not rows:
        console.print(f"no conversations in {store.where}", highlight=False)
        return 0
    k = format_token_size
    for c, ss in rows:
        t = _totals(ss)
        console.print(
            f"[bold]{c.id}[/]  {c.model or '?'}  {_when(c.updated_at)}"
            + (f"  owner {c.owner}" if c.owner else ""),
            highlight=False,
        )
        console.print(
            f"  {plural(len(ss), 'session')}, {plural(t.messages, 'message')}; "
            f"{k(t.input)} input, {k(t.output)} output, {k(t.cache_read)} cache read",
            highlight=False,
        )
        latest = _first_line(_latest_summary(ss), max(40, console.width - 20))
        if latest:
            console.print(f"  [dim]latest summary:[/] {latest}", highlight=False)
    console.print(f"{plural(len(rows), 'conversation')} in {store.where}", highlight=False)
    return 0


# -- show ---------------------------------------------------------------------------------------


def run_show(
    ident: str, *, db: str | None, owner: str | None, as_json: bool, summaries: bool
) -> int:
    """``sessions show ID``."""
    store = _Db(db)

    async def body(
        s: Store,
    ) -> tuple[ConversationInfo, str | None, list[SessionInfo], Any, dict[str, str]]:
        from abridged.runtime.commands import session_gists  # noqa: PLC0415

        conv, session = await _find(s, ident, owner)
        sessions = await s.list_sessions(conv.id)
        gists = await session_gists(s, conv.id, sessions)
        return conv, session, sessions, await s.compactions(conv.id), gists

    try:
        conv, session_id, sessions, compactions, gists = store.run(body)
    except CliError as exc:
        return fail(exc)
    except AbridgedError as exc:
        return fail(CliError(str(exc)))
    if session_id is not None:
        sessions_shown = [s for s in sessions if s.id == session_id]
    else:
        sessions_shown = sessions
    if as_json:
        from abridged.runtime.views import CompactionView, SessionView  # noqa: PLC0415

        out = {
            "conversation": _conversation(conv),
            "sessions": [
                SessionView.of(s, gists.get(s.id, "")).model_dump(mode="json")
                for s in sessions_shown
            ],
            "totals": _totals(sessions).model_dump(mode="json"),
            "compactions": [CompactionView.of(c).model_dump(mode="json") for c in compactions],
        }
        sys.stdout.write(json.dumps(out) + "\n")
        return 0
    _render_show(stdout(), conv, sessions, sessions_shown, compactions, summaries)
    return 0


def _render_show(
    console: Console,
    conv: ConversationInfo,
    sessions: list[SessionInfo],
    shown: list[SessionInfo],
    compactions: list[Any],
    summaries: bool,
) -> None:
    k = format_token_size
    number = {s.id: s.number for s in sessions}
    t = _totals(sessions)
    console.print(f"[bold]conversation[/] {conv.id}", highlight=False)
    facts = Table(show_header=False, show_edge=False, box=None, pad_edge=False)
    facts.add_column(style="bold")
    facts.add_column()
    facts.add_row("model", conv.model or "?")
    if conv.owner:
        facts.add_row("owner", conv.owner)
    facts.add_row("created", _when(conv.created_at))
    facts.add_row("updated", _when(conv.updated_at))
    facts.add_row(
        "messages",
        f"{conv.next_seq - 1:,} stored; {k(t.input)} input, {k(t.output)} output, "
        f"{k(t.cache_read)} cache read, {k(t.cache_write)} cache write (provider reports)",
    )
    system = conv.settings.get("system")
    if isinstance(system, str) and system:
        facts.add_row("system prompt", _first_line(system, 90))
    replay = conv.settings.get("replay")
    if isinstance(replay, dict):
        facts.add_row(
            "replay of",
            f"{replay.get('transcript')} from {replay.get('source')} "
            f"(window {k(int(replay.get('window') or 0))}, summarizer {replay.get('summarizer')})",
        )
    facts.add_row("version", str(conv.version))
    console.print(facts)
    table = Table(show_edge=False, box=None, header_style="bold", pad_edge=False, title=None)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("session", no_wrap=True)
    table.add_column("reason", no_wrap=True)
    for name in ("from seq", "msgs", "in", "out", "cache r", "cache w"):
        table.add_column(name, justify="right", no_wrap=True)
    for s in shown:
        st = s.totals or SessionTotals()
        parent = number.get(s.parent_id or "")
        table.add_row(
            f"[green]*{s.number}[/]" if s.is_current else str(s.number),
            _short(s.id),
            s.reason + (f" of {parent}" if parent else ""),
            str(s.carry_from),
            f"{st.messages:,}",
            k(st.input),
            k(st.output),
            k(st.cache_read),
            k(st.cache_write),
        )
    console.print()
    console.print(table)
    console.print("[dim]* current session[/]")
    if compactions:
        console.print()
        console.print("[bold]compactions[/]")
        for c in compactions:
            r = c.record
            source = number.get(c.session_id, "?")
            target = number.get(c.child_session_id, "?")
            console.print(
                f"  session {source} → {target}: {r.trigger}, {k(r.tokens_before)} → "
                f"{k(r.tokens_after)}, kept from seq "
                f"{r.cut_seq}, summary by {r.summarizer or '?'} ({r.duration_ms:.0f} ms)",
                highlight=False,
            )
    if summaries:
        for s in shown:
            for label, summary in (("final summary", s.final_summary),):
                if summary is None or not summary.text.strip():
                    continue
                console.print()
                console.print(
                    f"[bold]session {s.number} {label}[/] (covers messages before seq "
                    f"{summary.covers_to_seq})",
                    highlight=False,
                )
                console.print(summary.text, markup=False, highlight=False)


# -- search -------------------------------------------------------------------------------------


def run_search(
    query: str,
    *,
    db: str | None,
    owner: str | None,
    conversation: str | None,
    limit: int,
    as_json: bool,
) -> int:
    """``sessions search QUERY``."""
    if not query.strip():
        return fail(CliError("the query is empty", BAD_USAGE))
    if limit < 1:
        return fail(CliError(f"--limit {limit}: expected an integer >= 1", BAD_USAGE))
    store = _Db(db)

    async def body(s: Store) -> tuple[list[Any], dict[str, Any]]:
        hits = await s.search(query, conversation_id=conversation, owner=owner, limit=limit)
        sessions: dict[str, Any] = {}
        if as_json:  # each hit shown as the session it found
            for cid in dict.fromkeys(h.conversation_id for h in hits):
                sessions.update({i.id: i for i in await s.list_sessions(cid, owner=owner)})
        return hits, sessions

    try:
        hits, sessions = store.run(body)
    except CliError as exc:
        return fail(exc)
    except AbridgedError as exc:
        return fail(CliError(str(exc)))
    if as_json:
        from abridged.runtime.views import SessionHitView  # noqa: PLC0415

        out = [
            SessionHitView.found(h, sessions[h.session_id]).model_dump(mode="json")
            for h in hits
            if h.session_id in sessions
        ]
        sys.stdout.write(json.dumps({"query": query, "hits": out}) + "\n")
        return 0
    console = stdout()
    if not hits:
        console.print(f"no session summary matches {query!r}", highlight=False)
        return 0
    for h in hits:
        console.print(
            f"[bold]{h.score:.2f}[/]  {h.conversation_id}  session {_short(h.session_id)}",
            highlight=False,
        )
        console.print(f"      {_first_line(h.summary.text, console.width - 8)}", highlight=False)
    return 0


# -- export -------------------------------------------------------------------------------------


def run_export(
    ident: str,
    *,
    db: str | None,
    owner: str | None,
    session: str | None,
    context: bool,
    output_format: str,
    output: Path | None,
) -> int:
    """``sessions export ID``."""
    output_format = OUTPUT_FORMAT_ALIASES.get(output_format, output_format)
    if output_format not in EXPORT_FORMATS:
        return fail(
            CliError(
                f"--format {output_format!r}: expected one of {', '.join(EXPORT_FORMATS)}",
                BAD_USAGE,
            )
        )
    if context and session is not None:
        return fail(CliError("--context exports the current context: drop --session", BAD_USAGE))
    store = _Db(db)

    def head(conv: ConversationInfo) -> list[Message]:
        system = conv.settings.get("system")
        return [Message.system(system, id="system")] if isinstance(system, str) and system else []

    async def body(s: Store) -> tuple[ConversationInfo, str | None, list[Message]]:
        conv, found = await _find(s, ident, owner)
        sid = session or found
        if context:
            # the context as the runtime lays it out for the next call (summary, pinned, tail)
            from abridged.engine.context import build_context  # noqa: PLC0415
            from abridged.runtime.history import load_history  # noqa: PLC0415

            loaded = await load_history(s, conv.id, head(conv), owner=owner)
            return conv, loaded.context.session.id, build_context(loaded.history, loaded.state)
        stored = await s.history(conv.id, session_id=sid, owner=owner)
        return conv, sid or conv.current_session_id, head(conv) + [m.message for m in stored]

    try:
        conv, sid, messages = store.run(body)
    except CliError as exc:
        return fail(exc)
    except AbridgedError as exc:
        return fail(CliError(str(exc)))
    if output_format != "abridged":
        messages = [m for m in messages if m.meta.get("kind") not in ("command", "command_output")]
    if output_format == "openai":
        from abridged.formats.openai_chat import messages_to_openai  # noqa: PLC0415

        doc: Any = messages_to_openai(messages)
    elif output_format == "anthropic":
        from abridged.formats.anthropic_messages import messages_to_anthropic  # noqa: PLC0415

        system_out, items = messages_to_anthropic(messages)
        doc = {"system": system_out, "messages": items} if system_out else {"messages": items}
    else:
        doc = {
            "format": "abridged",
            "id": conv.id,
            "meta": {"conversation_id": conv.id, "session_id": sid, "model": conv.model},
            "messages": [message_to_dict(m) for m in messages],
        }
    text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
        return 0
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        return fail(CliError(f"cannot write {output}: {exc.strerror or exc}", BAD_INPUT))
    stdout().print(f"wrote {len(messages):,} messages to {output} ({output_format})")
    return 0
