"""The proxy's pages: the index of its conversations (``/``, by pages of ``INDEX_LIMIT``:
``?page=2``) and each one's meter (``/abridged/conversations/{id}``), read from the store, so
they are there after a restart and the same in every worker.

Sizes, ids and what abridged did only: never a message's content, never a key. The figures of
a conversation are those of its last request (the provider's own count of what it was sent,
from the request line the proxy keeps in the store, or this worker's own when it is newer);
without one the meter page estimates the context the store holds (the context the next
request would start from), and the index says it is not known yet: a page of the index costs
a fixed number of queries (``Store.conversation_page``), not one per conversation. Forks are
shown with their parent and the messages they share. Styled by the service page's own style
sheet.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from abridged.core.budget import format_token_size
from abridged.core.tokens import TokenCounter
from abridged.errors import AbridgedError, NotFoundError
from abridged.server.proxy.conversations import PROXY_MARK, ProxyConversations
from abridged.server.proxy.requestlog import RequestLine
from abridged.store import CompactionBrief, ConversationInfo, ListedConversation, Store
from abridged.store.records import StoredCompaction

__all__ = ["INDEX_LIMIT", "RecentRequests", "latest_line", "router"]

router = APIRouter(include_in_schema=False)

#: Conversations on a page of the index, the most recently updated first.
INDEX_LIMIT = 100

Last = tuple[datetime, RequestLine]  # a request line and when its request ended
_SECURITY = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class RecentRequests:
    """The last request line of each conversation in this worker (the newest ``limit``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lines: OrderedDict[str, Last] = OrderedDict()

    def note(self, line: RequestLine, at: datetime | None = None) -> None:
        """Keep ``line`` as its conversation's last request (ended ``at``, default now)."""
        cid = line.conversation_id
        if cid is None:
            return
        self._lines.pop(cid, None)
        self._lines[cid] = (at or datetime.now(UTC), line)
        while len(self._lines) > self.limit:
            self._lines.popitem(last=False)

    def get(self, conversation_id: str) -> Last | None:
        """The last request of a conversation, and when it ended (``None``: none here)."""
        return self._lines.get(conversation_id)


def latest_line(
    recent: RecentRequests,
    conversation_id: str,
    stored: Mapping[str, Any] | None,
    stored_at: datetime | None,
) -> Last | None:
    """A conversation's last request: the one the store keeps (any worker's), or this
    worker's own when it ended later (its write to the store may not have landed yet)."""
    mine = recent.get(conversation_id)
    kept = (stored_at, RequestLine.of(stored)) if stored is not None and stored_at else None
    if mine is None or (kept is not None and kept[0] > mine[0]):
        return kept
    return mine


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


def _known(request: Request, info: ConversationInfo, last: Last | None) -> _Figures:
    """The figures of a conversation's last request (``tokens`` ``None``: not known)."""
    window = _window(request, info) or (last[1].window if last is not None else None)
    if last is not None and last[1].tokens_sent is not None:
        return _Figures(last[1].tokens_sent, window, "last request")
    return _Figures(None, window, "estimate")


async def _figures(request: Request, info: ConversationInfo, last: Last | None) -> _Figures:
    """The last request's figures, else an estimate of the context the store holds."""
    known = _known(request, info, last)
    if known.tokens is not None:
        return known
    store: Store = request.app.state.store
    try:
        context = await store.load_context(info.id, owner=info.owner)
    except AbridgedError:
        return known
    counter = TokenCounter(model=info.model)
    tokens = await asyncio.to_thread(counter.estimate_context, context.to_messages())
    return _Figures(tokens, known.window, "estimate")


def _meter(figures: _Figures) -> str:
    if figures.tokens is None:
        return "<span class='muted'>not known yet (its page estimates it)</span>"
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


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _lineage(info: ConversationInfo) -> str:
    """The fork's parent and the messages they share; the fork a conversation continues as."""
    out: list[str] = []
    forked = info.settings.get("forked")
    if isinstance(forked, dict) and isinstance(forked.get("from"), str):
        out.append(
            f"<span class='fork' data-testid='fork-of'>fork of {_link(forked['from'])}, "
            f"{_count(int(forked.get('shared') or 0), 'message')} shared</span>"
        )
    now = info.settings.get("fork")
    if isinstance(now, str) and now:
        out.append(
            f"<span class='fork' data-testid='continues-as'>continues as {_link(now)}</span>"
        )
    return "".join(out)


def _when(stamp: datetime) -> str:
    return f"{stamp:%Y-%m-%d %H:%M:%S}"


def _last_action(last: Last | None, compaction: CompactionBrief | None) -> str:
    parts: list[str] = []
    if last is not None:
        line = last[1]
        status = f", {line.status}" if line.status is not None else ""
        parts.append(f"{escape(line.action)}{status} at {last[0]:%H:%M:%S}")
    if compaction is not None:
        parts.append(
            f"{escape(compaction.trigger)} {format_token_size(compaction.tokens_before)} → "
            f"{format_token_size(compaction.tokens_after)} at {compaction.created_at:%H:%M:%S}"
        )
    return "<br>".join(parts) or "<span class='muted'>none yet</span>"


def _brief(done: list[StoredCompaction]) -> CompactionBrief | None:
    if not done:
        return None
    newest = done[-1]
    return CompactionBrief(
        newest.record.trigger,
        newest.record.tokens_before,
        newest.record.tokens_after,
        newest.created_at,
    )


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


def _row(request: Request, listed: ListedConversation) -> str:
    info = listed.info
    recent: RecentRequests = request.app.state.recent
    last = latest_line(recent, info.id, listed.last_request, listed.last_request_at)
    source = info.settings.get(PROXY_MARK, {}).get("source", "")
    return (
        f"<tr data-testid='conversation-row' data-id='{escape(info.id)}'>"
        f"<td>{_link(info.id)} {_lineage(info)}<div class='muted'>{escape(str(source))}, "
        f"{escape(info.model or '')}</div></td>"
        f"<td data-testid='meter'>{_meter(_known(request, info, last))}</td>"
        f"<td data-testid='last-action'>{_last_action(last, listed.last_compaction)}</td>"
        f"<td class='num'>{listed.compactions}</td><td class='num'>{info.next_seq - 1}</td>"
        f"<td>{_when(info.updated_at)}</td></tr>"
    )


def _pager(page: int, pages: int) -> str:
    if pages <= 1:
        return ""
    links = []
    if page > 1:
        links.append(f"<a href='/?page={page - 1}' rel='prev' data-testid='newer'>Newer</a>")
    links.append(f"<span class='muted'>page {page} of {pages}</span>")
    if page < pages:
        links.append(f"<a href='/?page={page + 1}' rel='next' data-testid='older'>Older</a>")
    return f"<nav class='proxy-pager' data-testid='pager'>{' '.join(links)}</nav>"


@router.get("/")
async def index(
    request: Request, page: Annotated[int, Query(ge=1, le=1_000_000)] = 1
) -> HTMLResponse:
    """The proxy's conversations, the most recently updated first, ``INDEX_LIMIT`` a page."""
    store: Store = request.app.state.store
    listed = await store.conversation_page(
        setting=PROXY_MARK, offset=(page - 1) * INDEX_LIMIT, limit=INDEX_LIMIT
    )
    rows = [_row(request, c) for c in listed.conversations]
    pages = max(-(-listed.total // INDEX_LIMIT), 1)
    if rows or listed.total == 0:
        empty = "" if rows else "<p class='muted'>No conversation yet: send a request to /v1.</p>"
    else:
        empty = f"<p class='muted'>No page {page}: <a href='/'>the first page</a>.</p>"
    body = (
        f"<header class='chat-header'><h1>Conversations ({listed.total})</h1></header>"
        "<section class='panel'><table class='proxy-table' data-testid='conversations'>"
        "<tr><th>conversation</th><th>context</th><th>last action</th><th>compactions</th>"
        f"<th>messages</th><th>updated</th></tr>{''.join(rows)}</table>{empty}"
        f"{_pager(page, pages)}</section>"
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
    if info is None or not isinstance(info.settings.get(PROXY_MARK), dict):
        body = "<header class='chat-header'><h1>No such conversation</h1></header>"
        response = _page("Not found", body, request)
        response.status_code = 404
        return response
    kept = await store.last_request(info.id)
    recent: RecentRequests = request.app.state.recent
    last = latest_line(recent, info.id, *(kept if kept is not None else (None, None)))
    figures = await _figures(request, info, last)
    done = await store.compactions(info.id, owner=info.owner)
    rows = "".join(
        f"<tr><td>{c.created_at:%H:%M:%S}</td><td>{escape(c.record.trigger)}"
        f"{_inherited(c)}</td>"
        f"<td class='num'>{format_token_size(c.record.tokens_before)} → "
        f"{format_token_size(c.record.tokens_after)}</td><td class='num'>{c.record.cut_seq}</td>"
        "</tr>"
        for c in done
    )
    body = (
        f"<header class='chat-header'><h1>Conversation {escape(info.id)}</h1></header>"
        f"<section class='panel'><p>{_lineage(info)}</p>"
        f"<p data-testid='meter' class='proxy-meter'>{_meter(figures)}</p>"
        f"<p>Last action: {_last_action(last, _brief(done))}</p>"
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
