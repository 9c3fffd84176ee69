"""The model calls of each turn, kept in the store at the turn's end (the call inspector reads
them from there: after a restart, and from any worker)."""

from __future__ import annotations

import bisect
import itertools
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from abridged.core.model import Message, starts_with_same
from abridged.runtime.conversation import CallRecord, Conversation
from abridged.store import CallEntry
from abridged.store.calls import SentRef, reference

__all__ = [
    "CallMark",
    "LastSentKept",
    "calls_not_kept",
    "entries",
    "mark_calls",
    "sent_refs",
    "turn_calls",
]

log = logging.getLogger("abridged.server.calls")

#: Where a conversation's call log stood before a turn: its newest record (``None``: empty).
CallMark = CallRecord | None


def mark_calls(convo: Conversation) -> CallMark:
    """The conversation's newest call record now, to find the turn's own calls after it."""
    return convo.call_log[-1] if convo.call_log else None


def _since(convo: Conversation, mark: CallMark) -> list[CallRecord]:
    """The records added after ``mark`` (by identity: the log is bounded, so its length says
    nothing once it is full)."""
    out: list[CallRecord] = []
    for record in reversed(convo.call_log):
        if record is mark:
            break
        out.append(record)
    out.reverse()
    return out


#: Conversations whose last call's references are kept, to extend for their next call.
MAX_KEPT = 1_024


@dataclass(slots=True)
class LastSent:
    """The references of a conversation's last call, kept so that the next call, which sends
    the same messages and more, makes references for its new messages only: ``counts`` and
    their running ``sums`` (``sums[i]``: the first ``i`` messages), ``cached`` (how many
    leading messages lay in the cached prefix), ``summary`` (one of them is a summary)."""

    messages: list[Message]
    counts: list[int]
    sums: list[int]
    refs: list[SentRef]
    factor: float
    cached: int
    summary: bool
    zero: int  # the first message that counts no token (none cached from it on)


class LastSentKept:
    """The last call's references (``LastSent``) of the ``max_kept`` conversations that called
    most recently: what a worker's runner keeps between turns (``turn_calls``)."""

    def __init__(self, max_kept: int = MAX_KEPT) -> None:
        self.max_kept = max_kept
        self._kept: OrderedDict[str, tuple[Conversation, LastSent]] = OrderedDict()

    def get(self, convo: Conversation) -> LastSent | None:
        """``convo``'s last call's references (``None`` for another object of its id)."""
        kept = self._kept.get(convo.id)
        return kept[1] if kept is not None and kept[0] is convo else None

    def put(self, convo: Conversation, last: LastSent) -> None:
        """Keep ``last`` for ``convo``, the least recent conversation dropped beyond the bound."""
        self._kept[convo.id] = (convo, last)
        self._kept.move_to_end(convo.id)
        while len(self._kept) > self.max_kept:
            self._kept.popitem(last=False)


def entries(
    convo: Conversation, records: list[CallRecord], kept: LastSentKept | None = None
) -> list[CallEntry]:
    """What the store keeps of ``records``: ``call_entry(inspect_call(...))`` of each (tokens
    by the conversation's calibrated estimate, as the turn counted them), built without the
    inspection's objects of every message (``sent_refs``): each call's references extend the
    conversation's last call's (``extend_refs``, kept in ``kept`` between turns), so a call
    costs its new messages."""
    count = convo.counter
    factor = count.calibration.factor  # what ``Calibration.apply`` multiplies by
    tools = convo.budget().tools_tokens
    last = kept.get(convo) if kept is not None else None
    out = []
    for r in records:
        last, sent = extend_refs(
            last,
            r.messages,
            tokens=lambda m: round(count.message_tokens(m) * factor),
            cache_read=r.usage.cache_read if r.usage is not None else 0,
            factor=factor,
        )
        out.append(
            CallEntry(
                epoch=r.epoch,
                estimate=r.estimate,
                tools=tools,
                usage=r.usage,
                retry=r.retry,
                ok=r.ok,
                sent=sent,
            )
        )
    if kept is not None and last is not None:
        kept.put(convo, last)
    return out


def extend_refs(
    last: LastSent | None,
    messages: Sequence[Message],
    *,
    tokens: Callable[[Message], int],
    cache_read: int,
    factor: float,
) -> tuple[LastSent, tuple[SentRef, ...]]:
    """``sent_refs(messages, ...)``, and what to keep for the next call. When ``messages``
    start with ``last``'s (the same objects) and bring no summary, the references of that
    prefix are ``last``'s, but for the messages whose cached flag moved with ``cache_read``
    or, when the calibration ``factor`` moved, whose tokens round otherwise now; the new
    messages are referenced as ``sent_refs`` would. Otherwise every message is."""
    p = len(last.messages) if last is not None else 0
    if (
        last is None
        or not starts_with_same(messages, last.messages)
        or any(m.is_summary for m in messages[p:])
    ):
        kept = _refs_whole(messages, tokens, cache_read, factor)
        return kept, tuple(kept.refs)
    moved = last.factor != factor  # the calibration learnt since: counts may round otherwise
    if moved:
        counts = [tokens(m) for m in last.messages]
        sums = list(itertools.accumulate(counts, initial=0))
    else:
        counts, sums = list(last.counts), list(last.sums)
    for m in messages[p:]:
        counts.append(tokens(m))
        sums.append(sums[-1] + counts[-1])
    # message i is cached when every one before it is, it counts, and the first i + 1 fit
    # in what the provider read from its cache (``sent_refs``'s running rule)
    zero = last.zero if not moved else p
    if zero >= p:
        start = p if not moved else 0
        zero = next((i for i in range(start, len(counts)) if counts[i] <= 0), len(counts))
    cached = min(zero, bisect.bisect_right(sums, cache_read) - 1)
    refs = last.refs[:]
    if moved:  # a reference remade only where its tokens or its cached flag changed
        for i in range(p):
            ref, count, flag = refs[i], counts[i], i < cached
            if ref.tokens != count or ref.cached != flag:
                refs[i] = _remade(ref, count, flag)
    else:
        for i in range(min(cached, last.cached), min(max(cached, last.cached), p)):
            ref = refs[i]
            refs[i] = _remade(ref, ref.tokens, i < cached)
    # after the prefix: no summary among them, so none lies before a summary
    refs.extend(
        _ref(messages[i], counts[i], i < cached, before_summary=False)
        for i in range(p, len(messages))
    )
    kept = LastSent(list(messages), counts, sums, refs, factor, cached, last.summary, zero)
    return kept, tuple(refs)


def _refs_whole(
    messages: Sequence[Message], tokens: Callable[[Message], int], cache_read: int, factor: float
) -> LastSent:
    """Every message's reference, in one pass (``sent_refs``'s rules), and their sums."""
    summary = any(m.is_summary for m in messages)
    before_summary = summary
    counts: list[int] = []
    sums = [0]
    refs: list[SentRef] = []
    total, cached, zero = 0, -1, -1
    for i, message in enumerate(messages):
        if before_summary and message.is_summary:
            before_summary = False
        count = tokens(message)
        if count <= 0 and zero < 0:
            zero = i
        total += count
        if cached < 0 and not (count > 0 and total <= cache_read):
            cached = i  # from here on nothing lies in the cached prefix
        counts.append(count)
        sums.append(total)
        refs.append(_ref(message, count, cached < 0, before_summary=before_summary))
    n = len(messages)
    return LastSent(
        list(messages),
        counts,
        sums,
        refs,
        factor,
        n if cached < 0 else cached,
        summary,
        n if zero < 0 else zero,
    )


def _remade(ref: SentRef, tokens: int, cached: bool) -> SentRef:
    """``ref`` with other tokens and cached flag (positional: ``dataclasses.replace`` reads
    the fields' definitions at every call)."""
    return SentRef(ref.section, tokens, cached, ref.message_id, ref.pruned, ref.summary, ref.copy)


def sent_refs(
    messages: Sequence[Message],
    *,
    tokens: Callable[[Message], int],
    cache_read: int,
    seen: dict[tuple[int, int, bool, bool], SentRef] | None = None,
) -> tuple[SentRef, ...]:
    """``call_entry(inspect_call(...)).sent`` of a call that sent ``messages`` (the provider
    read ``cache_read`` tokens from its cache), in one pass: a call sends the whole context,
    so the inspection's two objects a message cost more than the rest of the turn's steps
    (``bench/service.py``). The rules are ``abridged.runtime.inspection``'s (section, cached
    prefix) and ``abridged.store.calls.reference``'s (where the store finds a message);
    ``tests/server/test_calllog.py`` holds them equal. ``seen`` keeps the references made,
    by message (identity: only while the messages live) and what else decides them, for the
    next call of the same turn to take again."""
    if seen is None:
        seen = {}
    before_summary = any(m.meta.get("kind") == "summary" for m in messages)
    cached_left = cache_read
    out: list[SentRef] = []
    for message in messages:
        meta = message.meta
        summary = meta.get("kind") == "summary"
        if summary:
            before_summary = False
        count = tokens(message)
        cached = 0 < count <= cached_left
        cached_left = cached_left - count if cached else 0
        key = (id(message), count, cached, before_summary)
        known = seen.get(key)
        if known is not None:
            out.append(known)
            continue
        ref = _ref(message, count, cached, before_summary=before_summary)
        seen[key] = ref
        out.append(ref)
    return tuple(out)


def _ref(message: Message, count: int, cached: bool, *, before_summary: bool) -> SentRef:
    """The reference of one message sent (``sent_refs``'s rules)."""
    if message.role == "system":
        section = "system"
    elif message.is_summary:
        section = "summary"
    elif message.meta.get("pruned"):
        section = "pruned"
    else:
        section = "pinned" if before_summary else "kept"
    return reference(message, section=section, tokens=count, cached=cached)


def turn_calls(convo: Conversation, mark: CallMark, kept: LastSentKept) -> list[CallEntry]:
    """What the store keeps of the calls ``convo`` made since ``mark`` (kept with the turn's
    release of its lease, ``Store.finish_turn``), each call's references extended from those
    ``kept`` of the last."""
    records = _since(convo, mark)
    return entries(convo, records, kept) if records else []


def calls_not_kept(conversation_id: str, exc: BaseException) -> None:
    """Log that a turn's model calls were not kept for the inspector."""
    log.warning(
        "the turn's model calls were not kept for the inspector: %s",
        type(exc).__name__,
        extra={"event": "calls_not_kept", "conversation_id": conversation_id},
    )
