"""Store operations on conversations: create (by key, or by a name scoped to its owner), open,
list, delete."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from sqlalchemy import bindparam, delete, select

from abridged.errors import (
    ConflictError,
    CorruptRowError,
    NotFoundError,
    SettingError,
    StoreEnvironmentError,
    StoreError,
)
from abridged.store import codec, queries
from abridged.store.base import StoreBase, log
from abridged.store.connect import transaction
from abridged.store.records import ConversationInfo
from abridged.store.schema import conversations

# Built once: the HTTP service resolves a tenant's id at every request.
NAMED_KEY = select(conversations.c.id).where(
    conversations.c.owner == bindparam("owner"), conversations.c.name == bindparam("name")
)


def scoped_key(owner: str, name: str) -> str:
    """The storage key an owner's conversation ``name`` is made under: a function of the two
    alone (nothing about other owners' conversations goes into it), 40 characters."""
    digest = hashlib.sha256()
    for part in (owner, name):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return "k" + digest.hexdigest()[:39]


def _checked(conversation_id: str) -> str:
    cid = codec.check_id(conversation_id, "conversation_id")
    if not cid or len(cid) > 64:
        raise StoreError("a conversation id has 1 to 64 characters", conversation_id=cid)
    return cid


class ConversationOps(StoreBase):
    """Conversations: each starts with one session (reason ``start``)."""

    async def create_conversation(
        self,
        conversation_id: str | None = None,
        *,
        owner: str | None = None,
        model: str | None = None,
        settings: Mapping[str, Any] | None = None,
        name: str | None = None,
    ) -> ConversationInfo:
        """Create a conversation and its first session.

        ``conversation_id`` is its storage key, the id every other operation takes (a fresh
        one by default); ids are global: ``ConflictError`` when the key is taken.

        ``name`` (with an ``owner``) makes the id the owner's own, as the HTTP service does for
        its tenants: ``ConflictError`` only when this owner has a conversation of that name;
        the key is ``conversation_id`` or else ``scoped_key(owner, name)``, and when another
        conversation holds that key a fresh one is drawn, so whether another owner uses the
        name never shows. ``conversation_key(name, owner=...)`` finds the key again.
        """
        await self.open()
        scoped = name is not None and owner is not None
        label = _checked(name) if name is not None else None
        if conversation_id is not None:
            cid = _checked(conversation_id)
        elif owner is not None and label is not None:
            cid = scoped_key(owner, label)
        else:
            cid = label or queries.new_id()
        for attempt in range(2):
            try:
                return await self._insert_conversation(
                    cid, label or cid, owner=owner, scoped=scoped, model=model, settings=settings
                )
            except (StoreEnvironmentError, ConflictError):
                raise
            except StoreError:
                # a concurrent create of the same key or name won the insert (PostgreSQL,
                # READ COMMITTED): the second look finds it and says which conflict it is
                if attempt:
                    raise
        raise AssertionError("unreachable")

    async def _insert_conversation(
        self,
        cid: str,
        label: str,
        *,
        owner: str | None,
        scoped: bool,
        model: str | None,
        settings: Mapping[str, Any] | None,
    ) -> ConversationInfo:
        stamp = codec.now()
        async with transaction(self._engine, operation="create_conversation") as conn:
            if scoped:
                named = (await conn.execute(NAMED_KEY, {"owner": owner, "name": label})).first()
                if named is not None:  # the caller's conflict, not the database's failure
                    raise ConflictError("a conversation with this id exists", conversation_id=label)
            taken = (
                await conn.execute(select(conversations.c.id).where(conversations.c.id == cid))
            ).first()
            if taken is not None:
                if not scoped:
                    raise ConflictError("a conversation with this id exists", conversation_id=cid)
                cid = queries.new_id()  # another conversation's key: nothing of it may show
            await conn.execute(
                conversations.insert().values(
                    id=cid,
                    owner=owner,
                    name=label if scoped else cid,
                    model=model,
                    settings=codec.dumps(dict(settings or {})),
                    version=0,
                    next_seq=1,
                    current_session_id=None,
                    prune_boundary=0,
                    resummarize_from=None,
                    created_at=stamp,
                    updated_at=stamp,
                )
            )
            session_id = await queries.insert_session(
                conn, cid, reason="start", parent_id=None, carry_from=1, start_seq=1
            )
            await queries.set_conversation(conn, cid, current_session_id=session_id)
            row = await queries.read_conversation(conn, cid, None)
        return codec.conversation_info(row)

    async def conversation_key(self, name: str, *, owner: str) -> str:
        """The storage key of ``owner``'s conversation named ``name`` (see
        ``create_conversation``); ``NotFoundError`` when the owner has none of that name,
        whichever conversations other owners have (an id no database can hold:
        ``FormatError``)."""
        params = {"owner": owner, "name": codec.check_id(name, "conversation_id")}
        key = await self._run_alone(
            lambda conn: conn.execute(NAMED_KEY, params).scalar(),
            mode="read",
            operation="conversation_key",
        )
        if key is None:
            raise NotFoundError("no such conversation", conversation_id=name)
        return str(key)

    async def ensure_conversation(
        self,
        conversation_id: str,
        *,
        owner: str | None = None,
        model: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> ConversationInfo:
        """The conversation named ``conversation_id``, made (with ``model`` and ``settings``)
        when there is none: for ids a caller chooses (a thread, a session, a proxied client).
        Another process making it at the same time is not an error; a failing database is."""
        try:
            return await self.open_conversation(conversation_id, owner=owner)
        except NotFoundError:
            pass
        try:
            return await self.create_conversation(
                conversation_id, owner=owner, model=model, settings=settings
            )
        except StoreEnvironmentError:
            raise
        except StoreError:  # taken meanwhile by another process: read what it made
            return await self.open_conversation(conversation_id, owner=owner)

    async def open_conversation(
        self, conversation_id: str, *, owner: str | None = None
    ) -> ConversationInfo:
        """A conversation; ``NotFoundError`` if missing, ``OwnershipError`` on owner mismatch."""
        return await self._run_sync(
            lambda conn: codec.conversation_info(
                queries.read_conversation_sync(conn, conversation_id, owner)
            ),
            mode="read",
            operation="open_conversation",
        )

    async def list_conversations(self, *, owner: str | None = None) -> list[ConversationInfo]:
        """Conversations (of ``owner`` when given), most recently updated first; a row that
        cannot be decoded is left out (logged), ``open_conversation`` names it."""
        await self.open()
        stmt = select(*codec.columns(conversations)).order_by(conversations.c.updated_at.desc())
        if owner is not None:
            stmt = stmt.where(conversations.c.owner == owner)
        async with transaction(self._engine, "read", operation="list_conversations") as conn:
            rows = (await conn.execute(stmt)).mappings().all()
        out = []
        for row in rows:
            try:
                out.append(codec.conversation_info(row))
            except CorruptRowError as exc:  # one damaged row must not hide the others
                log.warning("a corrupt conversation row was left out of the listing: %s", exc)
        return out

    async def update_settings(
        self,
        conversation_id: str,
        settings: Mapping[str, Any],
        *,
        owner: str | None = None,
        model: str | None = None,
    ) -> ConversationInfo:
        """Replace a conversation's stored settings and, when ``model`` is given, its model (not
        compaction state: the single writer's version is left alone, so compactions planned
        before still commit; what is stored was sent to whichever model, so nothing else
        changes with it)."""
        await self.open()
        codec.check_id(conversation_id, "conversation_id")
        values: dict[str, Any] = {"settings": codec.dumps(dict(settings))}
        if model is not None:
            if not model or len(model) > 255:
                raise SettingError("model", model[:80], "a model string of 1 to 255 characters")
            values["model"] = model
        async with transaction(self._engine, operation="update_settings") as conn:
            await queries.read_conversation(conn, conversation_id, owner)
            await queries.set_conversation(conn, conversation_id, **values, updated_at=codec.now())
            row = await queries.read_conversation(conn, conversation_id, None)
        return codec.conversation_info(row)

    async def delete_conversation(self, conversation_id: str, *, owner: str | None = None) -> None:
        """Delete a conversation with its sessions, messages, summaries and compactions, for
        real. Only ever on a person's request: no automatic operation calls this."""
        await self.open()
        async with transaction(self._engine, operation="delete_conversation") as conn:
            await queries.read_conversation(conn, conversation_id, owner)
            await conn.execute(delete(conversations).where(conversations.c.id == conversation_id))
