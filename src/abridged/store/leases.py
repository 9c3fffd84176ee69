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

import time
from dataclasses import dataclass, field

from sqlalchemy import Update, and_, or_, select, update

from abridged.errors import NotFoundError, SettingError
from abridged.store import codec, queries
from abridged.store.base import StoreBase
from abridged.store.connect import transaction
from abridged.store.records import ConversationInfo, StoredMessage
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


def _release(conversation_id: str, holder: str) -> Update:
    """Give the lease back, if ``holder`` still holds it."""
    return (
        update(conversations)
        .where(and_(conversations.c.id == conversation_id, conversations.c.lease_holder == holder))
        .values(lease_holder=None, lease_expires_ms=None)
    )


class LeaseOps(StoreBase):
    """Turn leases: ``acquire_turn``, ``renew_turn``, ``release_turn`` (or ``finish_turn``),
    ``turn_lease``."""

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
        if not holder or len(holder) > 128:
            raise SettingError("holder", holder, "a lease holder of 1 to 128 characters")
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl <= 0:
            raise SettingError("ttl", ttl, "a number of seconds > 0")
        await self.open()
        async with transaction(self._engine, "write", operation="acquire_turn") as conn:
            # The row is read locked (SQLite's write transaction already is): a lease released
            # between an unlocked read and the update would otherwise count as a takeover.
            row = (
                (
                    await conn.execute(
                        select(*codec.columns(conversations))
                        .where(conversations.c.id == conversation_id)
                        .with_for_update()
                    )
                )
                .mappings()
                .first()
            )
            if row is None:
                raise NotFoundError("no such conversation", conversation_id=conversation_id)
            queries.check_owner(row, owner)
            # the clock read once the row is ours: waiting for a connection or for the lock must
            # not shorten the lease (it could be granted already expired, and taken over)
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
            result = await conn.execute(
                update(conversations)
                .where(conversations.c.id == conversation_id)
                .where(
                    or_(
                        conversations.c.lease_holder.is_(None),
                        conversations.c.lease_holder == holder,
                        conversations.c.lease_expires_ms < now,
                    )
                )
                .values(lease_holder=holder, lease_expires_ms=expires)
            )
            if result.rowcount != 1:
                return None
            message = None
            if message_id is not None:
                message = await queries.message_by_id(conn, conversation_id, message_id)
        return TurnLease(
            conversation_id,
            holder,
            expires,
            previous if stale else None,
            codec.conversation_info(row),  # the update changed only the lease columns
            message,
        )

    async def renew_turn(
        self, conversation_id: str, holder: str, *, ttl: float = 30.0
    ) -> TurnLease | None:
        """Extend a lease still held by ``holder``; ``None`` when it was lost (expired and
        taken over): the caller must stop its turn."""
        await self.open()
        expires = now_ms() + int(ttl * 1000)
        async with transaction(self._engine, "write", operation="renew_turn") as conn:
            result = await conn.execute(
                update(conversations)
                .where(
                    and_(
                        conversations.c.id == conversation_id,
                        conversations.c.lease_holder == holder,
                    )
                )
                .values(lease_expires_ms=expires)
            )
        if result.rowcount != 1:
            return None
        return TurnLease(conversation_id, holder, expires)

    async def release_turn(self, conversation_id: str, holder: str) -> bool:
        """Give the lease back (only if ``holder`` still holds it); whether it did."""
        await self.open()
        async with transaction(self._engine, "write", operation="release_turn") as conn:
            result = await conn.execute(_release(conversation_id, holder))
        return bool(result.rowcount == 1)

    async def finish_turn(self, conversation_id: str, holder: str) -> ConversationInfo | None:
        """Give the lease back, as ``release_turn``, and return the conversation as the turn
        left it (read in the same statement); ``None`` when ``holder`` no longer held the
        lease (it expired and was taken over: what the turn left may have been changed)."""
        await self.open()
        async with transaction(self._engine, "write", operation="finish_turn") as conn:
            row = (
                (await conn.execute(_release(conversation_id, holder).returning(*conversations.c)))
                .mappings()
                .first()
            )
        return None if row is None else codec.conversation_info(row)

    async def turn_lease(self, conversation_id: str, *, owner: str | None = None) -> LeaseState:
        """Who holds the lease now (an expired lease reads as free)."""
        await self.open()
        async with transaction(self._engine, "read", operation="turn_lease") as conn:
            await queries.read_conversation(conn, conversation_id, owner)
            row = (
                await conn.execute(
                    select(conversations.c.lease_holder, conversations.c.lease_expires_ms).where(
                        conversations.c.id == conversation_id
                    )
                )
            ).first()
        assert row is not None
        holder, expires = row
        if holder is None or expires is None or int(expires) < now_ms():
            return LeaseState(None, None)
        return LeaseState(str(holder), int(expires))
