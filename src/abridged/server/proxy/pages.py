"""The proxy's pages: the index of its conversations (``/``) and each one's meter
(``/abridged/conversations/{id}``), read from the store, so they are there after a restart.

Sizes, ids and what abridged did only: never a message's content, never a key. The figures of
a conversation are those of its last request in this worker when there was one (the provider's
own count of what it was sent, from the request log), else abridged's estimate of the context
the store holds (the context the next request would start from). Forks are shown with their
parent and the messages they share. Styled by the service page's own style sheet.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from abridged.core.budget import format_token_size
from abridged.core.tokens import TokenCounter
from abridged.errors import AbridgedError, NotFoundError
from abridged.server.proxy.conversations import ProxyConversations
from abridged.server.proxy.requestlog import RequestLine
from abridged.store import ConversationInfo, Store
from abridged.store.records import StoredCompaction

__all__ = ["INDEX_LIMIT", "RecentRequests", "router"]

router = APIRouter(include_in_schema=False)

#: Conversations listed on the index, the most recently updated first.
INDEX_LIMIT = 100
_SECURITY = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class RecentRequests:
    """The last request line of each conversation in this worker (the newest ``limit``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lines: OrderedDict[str, tuple[float, RequestLine]] = OrderedDict()

    def note(self, line: RequestLine) -> None:
        """Keep ``line`` as its conversation's last request."""
        cid = line.conversation_id
        if cid is None:
            return
        self._lines.pop(cid, None)
        self._lines[cid] = (time.time(), line)
        while len(self._lines) > self.limit:
            self._lines.popitem(last=False)

    def get(self, conversation_id: str) -> tuple[float, RequestLine] | None:
        """The last request of a conversation, and when it ended (``None``: none here)."""
        return self._lines.get(conversation_id)


@dataclass(frozen=True, slots=True)
class _Figures:
    tokens: int | None
    window: int | None
    source: str  # "last request" or "estimate"


def _window(request: Request, info: ConversationInfo) -> int | None:
    config = request.app.state.config
    if config.context_window:
        return int(config.context_window)
    conversations: ProxyConversations = request.app.state.conversations
    return conversations.window_of(info.model or "")


async def _figures(request: Request, info: ConversationInfo) -> _Figures:
    window = _window(request, info)
    recent: RecentRequests = request.app.state.recent
    last = recent.get(info.id)
    if last is not None and last[1].tokens_sent is not None:
        return _Figures(last[1].tokens_sent, window, "last request")
    store: Store = request.app.state.store
    try:
        context = await store.load_context(info.id, owner=info.owner)
    except AbridgedError:
        return _Figures(None, window, "estimate")
    counter = TokenCounter(model=info.model)
    tokens = await asyncio.to_thread(counter.estimate_context, context.to_messages())
    return _Figures(tokens, window, "estimate")


def _meter(figures: _Figures) -> str:
    if figures.tokens is None:
        return "<span class='muted'>unknown</span>"
    size = format_token_size(figures.tokens)
    if not figures.window:
        return f"{size} <span class='muted'>({figures.source})</span>"
    share = figures.tokens / figures.window
    return (
        f"<meter min='0' max='{figures.window}' low='{int(figures.window * 0.6)}' "
        f"high='{int(figures.window * 0.8)}' optimum='0' value='{figures.tokens}'></meter> "
        f"{size} of {format_token_size(figures.window)} ({share:.0%}, "
        f"<span class='muted'>{figures.source}</span>)"
    )


def _link(cid: str) -> str:
    return f"<a href='/abridged/conversations/{quote(cid, safe='')}'>{escape(cid)}</a>"


def _lineage(info: ConversationInfo) -> str:
    """The fork's parent and the messages they share; the fork a conversation continues as."""
    out: list[str] = []
    forked = info.settings.get("forked")
    if isinstance(forked, dict) and isinstance(forked.get("from"), str):
        out.append(
            f"<span class='fork' data-testid='fork-of'>fork of {_link(forked['from'])}, "
            f"{int(forked.get('shared') or 0)} messages shared</span>"
        )
    now = info.settings.get("fork")
    if isinstance(now, str) and now:
        out.append(
            f"<span class='fork' data-testid='continues-as'>continues as {_link(now)}</span>"
        )
    return "".join(out)


def _when(stamp: datetime) -> str:
    return f"{stamp:%Y-%m-%d %H:%M:%S}"


def _last_action(recent: tuple[float, RequestLine] | None, done: list[StoredCompaction]) -> str:
    parts: list[str] = []
    if recent is not None:
        line = recent[1]
        status = f", {line.status}" if line.status is not None else ""
        at = time.strftime("%H:%M:%S", time.localtime(recent[0]))
        parts.append(f"{escape(line.action)}{status} at {at}")
    if done:
        c = done[-1].record
        parts.append(
            f"{escape(c.trigger)} {format_token_size(c.tokens_before)} → "
            f"{format_token_size(c.tokens_after)} at {done[-1].created_at:%H:%M:%S}"
        )
    return "<br>".join(parts) or "<span class='muted'>none yet</span>"


def _page(title: str, body: str, request: Request) -> HTMLResponse:
    upstream = escape(request.app.state.upstream_shown)
    html = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{escape(title)} · abridged proxy</title>"
        "<link rel='stylesheet' href='/page/style.css'></head><body class='proxy'>"
        "<aside class='sidebar'><div class='brand'>abridged proxy</div>"
        f"<p class='muted'>upstream {upstream}/v1</p>"
        "<nav class='proxy-nav'><a href='/'>Conversations</a><a href='/metrics'>Metrics</a>"
        "<a href='/healthz'>Health</a></nav></aside>"
        f"<main class='proxy-main'>{body}</main></body></html>"
    )
    return HTMLResponse(html, headers=_SECURITY)


@router.get("/")
async def index(request: Request) -> HTMLResponse:
    """The proxy's conversations, the most recently updated first."""
    store: Store = request.app.state.store
    listed = [c for c in await store.list_conversations() if "proxy" in c.settings]
    shown = listed[:INDEX_LIMIT]
    recent: RecentRequests = request.app.state.recent

    async def row(info: ConversationInfo) -> str:
        figures = await _figures(request, info)
        done = await store.compactions(info.id, owner=info.owner)
        source = info.settings.get("proxy", {}).get("source", "")
        return (
            f"<tr data-testid='conversation-row' data-id='{escape(info.id)}'>"
            f"<td>{_link(info.id)} {_lineage(info)}<div class='muted'>{escape(str(source))}, "
            f"{escape(info.model or '')}</div></td>"
            f"<td data-testid='meter'>{_meter(figures)}</td>"
            f"<td>{_last_action(recent.get(info.id), done)}</td>"
            f"<td class='num'>{len(done)}</td><td class='num'>{info.next_seq - 1}</td>"
            f"<td>{_when(info.updated_at)}</td></tr>"
        )

    rows = [await row(info) for info in shown]
    more = (
        f"<p class='muted'>The {INDEX_LIMIT} most recent of {len(listed)}.</p>"
        if len(listed) > len(shown)
        else ""
    )
    empty = "" if rows else "<p class='muted'>No conversation yet: send a request to /v1.</p>"
    body = (
        f"<header class='chat-header'><h1>Conversations ({len(listed)})</h1></header>"
        "<section class='panel'><table class='proxy-table' data-testid='conversations'>"
        "<tr><th>conversation</th><th>context</th><th>last action</th><th>compactions</th>"
        f"<th>messages</th><th>updated</th></tr>{''.join(rows)}</table>{empty}{more}</section>"
    )
    return _page("Conversations", body, request)


@router.get("/abridged/conversations/{conversation_id}")
async def meter_page(request: Request, conversation_id: str) -> HTMLResponse:
    """A conversation's meter, its lineage and its compactions."""
    store: Store = request.app.state.store
    try:
        info: ConversationInfo | None = await store.open_conversation(conversation_id)
    except NotFoundError:
        info = None
    # the service's conversations in a shared database are its tenants': this page, open to
    # anyone, must not tell which of their ids exist
    if info is None or not isinstance(info.settings.get("proxy"), dict):
        body = "<header class='chat-header'><h1>No such conversation</h1></header>"
        response = _page("Not found", body, request)
        response.status_code = 404
        return response
    figures = await _figures(request, info)
    done = await store.compactions(info.id, owner=info.owner)
    rows = "".join(
        f"<tr><td>{c.created_at:%H:%M:%S}</td><td>{escape(c.record.trigger)}"
        f"{_inherited(c)}</td>"
        f"<td class='num'>{format_token_size(c.record.tokens_before)} → "
        f"{format_token_size(c.record.tokens_after)}</td><td class='num'>{c.record.cut_seq}</td>"
        "</tr>"
        for c in done
    )
    recent: RecentRequests = request.app.state.recent
    body = (
        f"<header class='chat-header'><h1>Conversation {escape(info.id)}</h1></header>"
        f"<section class='panel'><p>{_lineage(info)}</p>"
        f"<p data-testid='meter' class='proxy-meter'>{_meter(figures)}</p>"
        f"<p>Last action: {_last_action(recent.get(info.id), done)}</p>"
        f"<p class='muted'>{info.next_seq - 1} messages stored; {escape(info.model or '')}</p>"
        "</section><section class='panel'>"
        f"<h2>Compactions ({len(done)})</h2><table class='proxy-table' data-testid='compactions'>"
        "<tr><th>when</th><th>trigger</th><th>context</th><th>cut at message</th></tr>"
        f"{rows}</table></section>"
    )
    return _page(info.id, body, request)


def _inherited(c: StoredCompaction) -> str:
    source: Any = c.record.summary.meta.get("inherited_from")
    return f" (the summary of {_link(source)})" if isinstance(source, str) else ""
