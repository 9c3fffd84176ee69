"""The turn lease: one turn at a time per conversation, across processes and machines.

A worker that runs a turn holds the conversation's lease (``holder``, an expiry). Taking it is a
compare-and-swap on the lease columns: it succeeds when nobody holds the lease, when the caller
already holds it (a renewal), or when the holder's lease has expired (a takeover: its worker
died or stalled). No lock is held across a model call: the lease is a row value, renewed by its
holder while the turn runs.

The swap is on the lease columns, not on ``conversations.version``: bumping the version would
make every compaction planned before the renewal lose its own compare-and-swap, although
nothing it depends on changed. Expiry uses the worker's clock (milliseconds since the epoch);
workers on several machines need clocks within a fraction of the lease's time to live.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Select, and_, bindparam, or_, update
from sqlalchemy.engine import Connection

from abridged.core.model import Message
from abridged.errors import SettingError
from abridged.store import codec, fast, queries
from abridged.store.appender import Rows, append_rows, encode, stored_row
from abridged.store.base import StoreBase
from abridged.store.calls import (
    CallEntry,
    NotFinishedAloneError,
    call_rows,
    insert_calls,
    numbered_after,
    run_numbered,
)
from abridged.store.records import ConversationInfo, NewMessage, StoredMessage
from abridged.store.schema import conversations

__all__ = ["LeaseOps", "TurnLease"]


def now_ms() -> int:
    """The wall clock in milliseconds since the epoch (the lease's unit)."""
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class TurnLease:
    """A lease held: ``expires_ms`` (epoch milliseconds); ``took_over_from``: the holder whose
    expired lease this one replaced (``None`` when the lease was free or already ours);
    ``conversation``: the conversation as read when the lease was taken (``acquire_turn``), so
    that the holder need not read it again; ``message``: the message asked for with
    ``acquire_turn(message_id=...)`` as stored then (``None``: not asked, or no such message)."""

    conversation_id: str
    holder: str
    expires_ms: int
    took_over_from: str | None = None
    conversation: ConversationInfo | None = field(default=None, compare=False, repr=False)
    message: StoredMessage | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class LeaseState:
    """Who holds a conversation's lease now (``holder`` ``None``: nobody, or expired)."""

    holder: str | None
    expires_ms: int | None


#: A message stored queued, and the turn lease when it was free (``LeaseOps.queue_turn``).
Queued = tuple[StoredMessage, TurnLease | None]

# Built once: a turn takes and gives back its lease around every model call (see
# ``queries.CONVERSATION_ROW``).
_TAKE = (
    update(conversations)
    .where(conversations.c.id == bindparam("conversation_id"))
    .where(
        or_(
            conversations.c.lease_holder.is_(None),
            conversations.c.lease_holder == bindparam("holder"),
            conversations.c.lease_expires_ms < bindparam("now"),
        )
    )
    .values(lease_holder=bindparam("holder"), lease_expires_ms=bindparam("expires"))
)
_MINE = and_(
    conversations.c.id == bindparam("conversation_id"),
    conversations.c.lease_holder == bindparam("holder"),
)
_RENEW = update(conversations).where(_MINE).values(lease_expires_ms=bindparam("expires"))
_RELEASE = update(conversations).where(_MINE).values(lease_holder=None, lease_expires_ms=None)
_FINISH = _RELEASE.returning(*conversations.c)


def finish_in_one_statement(
    conn: Connection,
    values: Mapping[str, Any],
    rows: Sequence[dict[str, Any]],
    owner: str | None,
) -> Mapping[Any, Any]:
    """``finish_turn`` with calls on PostgreSQL as one statement, sent outside any
    transaction: the lease given back (matching only the holder's and, with ``owner``, the
    owner's conversation) and the calls numbered after the last one, inserted only when it
    matched; one round trip where five were. The conversation's row as the turn left it;
    ``NotFinishedAloneError`` when nothing was written (``calls.run_numbered``): the
    transaction then does it, and says why when nothing matched."""
    params = dict(values)
    if owner is not None:
        params["expected_owner"] = owner  # (not "owner": an UPDATE would set it)
    return run_numbered(conn, _finish_statement(len(rows), owner is not None), rows, params)


@functools.lru_cache(maxsize=32)
def _finish_statement(count: int, owned: bool) -> Select[Any]:
    release = _RELEASE
    if owned:
        release = release.where(conversations.c.owner == bindparam("expected_owner"))
    return numbered_after(release.returning(*conversations.c).cte("released"), count)


# A free lease taken in one statement (the common case: the last turn gave it back). Only on
# SQLite, whose write lock is already held when the clock is read; on PostgreSQL the update
# could wait for the row lock after the expiry was computed.
_TAKE_FREE = (
    update(conversations)
    .where(conversations.c.id == bindparam("conversation_id"))
    .where(conversations.c.lease_holder.is_(None))
    .values(lease_holder=bindparam("holder"), lease_expires_ms=bindparam("expires"))
    .returning(*codec.columns(conversations))
)


def _take(
    conn: Connection, conversation_id: str, holder: str, ttl: float, owner: str | None
) -> tuple[Mapping[Any, Any], int, str | None] | None:
    """Take the lease: (the conversation's row, the expiry, the holder taken over from), or
    ``None`` when another holder's lease is live."""
    if conn.dialect.name == "sqlite":
        expires = now_ms() + int(ttl * 1000)
        values = {"conversation_id": conversation_id, "holder": holder, "expires": expires}
        taken = fast.execute(conn, _TAKE_FREE, values).first()
        if taken is not None:  # the owner checked after: a mismatch rolls the update back
            return queries.checked_conversation(taken, conversation_id, owner), expires, None
    # The row is read locked (SQLite's write transaction already is): a lease released between
    # an unlocked read and the update would otherwise count as a takeover.
    row = queries.read_conversation_sync(conn, conversation_id, owner, for_update=True)
    # the clock read once the row is ours: waiting for a connection or for the lock must not
    # shorten the lease (it could be granted already expired, and taken over)
    now = now_ms()
    expires = now + int(ttl * 1000)
    previous = row["lease_holder"]
    previous_expiry = row["lease_expires_ms"]
    stale = (
        previous is not None
        and previous != holder
        and (previous_expiry is None or int(previous_expiry) < now)
    )
    if previous is not None and previous != holder and not stale:
        return None  # another holder's live lease (the row is locked: no update needed)
    values = {"conversation_id": conversation_id, "holder": holder, "now": now, "expires": expires}
    if fast.execute(conn, _TAKE, values).rowcount != 1:
        return None
    return row, expires, previous if stale else None


def _acquire(
    conn: Connection,
    conversation_id: str,
    holder: str,
    *,
    ttl: float,
    owner: str | None,
    message_id: str | None = None,
) -> TurnLease | None:
    taken = _take(conn, conversation_id, holder, ttl, owner)
    if taken is None:
        return None
    row, expires, took_over_from = taken
    message = None
    if message_id is not None:
        message = queries.message_by_id(conn, conversation_id, message_id)
    # the conversation as the turn starts (the lease columns aside, what the row held)
    info = codec.conversation_info(row)
    return TurnLease(conversation_id, holder, expires, took_over_from, info, message)


def _queued(
    conn: Connection,
    conversation_id: str,
    owner: str | None,
    message: Message,
    rows: Rows,
    *,
    look_up: bool,
) -> StoredMessage:
    """Append ``message`` queued (its one row in ``rows``: ``append_rows``); as stored."""
    (placed,) = append_rows(conn, conversation_id, owner, rows, look_up=look_up)
    if not isinstance(placed, int):  # its id was stored already: the row as it is
        return codec.stored_message(placed)
    return stored_row(placed, rows[0], message)


def _check_lease(holder: str, ttl: float) -> None:
    if not holder or len(holder) > 128:
        raise SettingError("holder", holder, "a lease holder of 1 to 128 characters")
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl <= 0:
        raise SettingError("ttl", ttl, "a number of seconds > 0")


def _lease_state(conn: Connection, conversation_id: str, owner: str | None) -> LeaseState:
    row = queries.read_conversation_sync(conn, conversation_id, owner)
    holder, expires = row["lease_holder"], row["lease_expires_ms"]
    if holder is None or expires is None or int(expires) < now_ms():
        return LeaseState(None, None)
    return LeaseState(str(holder), int(expires))


class LeaseOps(StoreBase):
    """Turn leases: ``acquire_turn`` (or ``queue_turn``, with a message stored), ``renew_turn``,
    ``release_turn`` (or ``finish_turn``), ``turn_lease``. Each is one short transaction run
    whole on a synchronous connection (``StoreBase._run_sync``): a turn takes and gives back its
    lease around every model call, so these are on the hot path of the service and the
    proxy."""

    async def acquire_turn(
        self,
        conversation_id: str,
        holder: str,
        *,
        ttl: float = 30.0,
        owner: str | None = None,
        message_id: str | None = None,
    ) -> TurnLease | None:
        """Take (or renew) the turn lease for ``ttl`` seconds; ``None`` when another holder's
        lease has not expired. ``NotFoundError`` / ``OwnershipError`` as every operation.

        With ``message_id``, the lease also carries that message as stored now (its newest
        version, queued or delivered; ``None`` when there is none), read in the same
        transaction: what ``find_message`` would return once the lease is held."""
        _check_lease(holder, ttl)
        return await self._run_sync(
            lambda conn: _acquire(
                conn, conversation_id, holder, ttl=ttl, owner=owner, message_id=message_id
            ),
            mode="write",
            operation="acquire_turn",
        )

    async def queue_turn(
        self,
        conversation_id: str,
        message: Message,
        holder: str,
        *,
        ttl: float = 30.0,
        owner: str | None = None,
    ) -> Queued:
        """Store ``message`` queued, as ``append(status="queued")`` (idempotent: an id stored
        already gives back its row), and take the turn lease in the same transaction, as
        ``acquire_turn``, its ``message`` the one stored; the lease is ``None`` when another
        holder's is live (the message is stored either way). One transaction where a send of
        the service made two: the message is as durable, and the lease taken no earlier."""
        _check_lease(holder, ttl)
        rows = encode([NewMessage(message, status="queued")], conversation_id, codec.now())

        def queue(look_up: bool) -> Callable[[Connection], Queued]:
            def body(conn: Connection) -> Queued:
                stored = _queued(conn, conversation_id, owner, message, rows, look_up=look_up)
                lease = _acquire(conn, conversation_id, holder, ttl=ttl, owner=owner)
                return stored, None if lease is None else replace(lease, message=stored)

            return body

        return await self._write_keyed(queue, rows, operation="queue_turn")

    async def renew_turn(
        self, conversation_id: str, holder: str, *, ttl: float = 30.0
    ) -> TurnLease | None:
        """Extend a lease still held by ``holder``; ``None`` when it was lost (expired and
        taken over): the caller must stop its turn."""
        expires = now_ms() + int(ttl * 1000)
        values = {"conversation_id": conversation_id, "holder": holder, "expires": expires}
        count = await self._run_alone(  # one statement: on PostgreSQL, one round trip
            lambda conn: fast.execute(conn, _RENEW, values).rowcount,
            mode="write",
            operation="renew_turn",
        )
        return TurnLease(conversation_id, holder, expires) if count == 1 else None

    async def release_turn(self, conversation_id: str, holder: str) -> bool:
        """Give the lease back (only if ``holder`` still holds it); whether it did."""
        values = {"conversation_id": conversation_id, "holder": holder}
        count = await self._run_alone(  # one statement: on PostgreSQL, one round trip
            lambda conn: fast.execute(conn, _RELEASE, values).rowcount,
            mode="write",
            operation="release_turn",
        )
        return bool(count == 1)

    async def finish_turn(
        self,
        conversation_id: str,
        holder: str,
        *,
        calls: Sequence[CallEntry] = (),
        owner: str | None = None,
    ) -> ConversationInfo | None:
        """Give the lease back, as ``release_turn``, and return the conversation as the turn
        left it (read in the same statement); ``None`` when ``holder`` no longer held the
        lease (it expired and was taken over: what the turn left may have been changed).

        ``calls``: the turn's model calls, kept in the same transaction (as ``record_calls``
        with ``owner``: numbered after the conversation's last one, the lease's row lock held
        until they are). A failure keeps neither: the lease is still held."""
        values = {"conversation_id": conversation_id, "holder": holder}
        rows = call_rows(conversation_id, calls) if calls else []

        def finish(conn: Connection) -> Mapping[Any, Any] | None:
            row = fast.execute(conn, _FINISH, values).first()
            if rows:
                if row is not None:  # the row just read says whose it is
                    queries.checked_conversation(row, conversation_id, owner)
                insert_calls(conn, conversation_id, owner, rows, checked=row is not None)
            return row

        row: Mapping[Any, Any] | None
        if not rows:  # one statement: on PostgreSQL, one round trip
            row = await self._run_alone(
                lambda conn: fast.execute(conn, _FINISH, values).first(),
                mode="write",
                operation="finish_turn",
            )
        elif self.dialect == "postgresql":
            try:
                row = await self._run_alone(
                    lambda conn: finish_in_one_statement(conn, values, rows, owner),
                    mode="write",
                    operation="finish_turn",
                )
            except NotFinishedAloneError:  # a rare path: the transaction says what happened
                row = await self._run_sync(finish, mode="write", operation="finish_turn")
        else:
            row = await self._run_sync(finish, mode="write", operation="finish_turn")
        return None if row is None else codec.conversation_info(row)

    async def turn_lease(self, conversation_id: str, *, owner: str | None = None) -> LeaseState:
        """Who holds the lease now (an expired lease reads as free)."""
        return await self._run_sync(
            lambda conn: _lease_state(conn, conversation_id, owner),
            mode="read",
            operation="turn_lease",
        )
