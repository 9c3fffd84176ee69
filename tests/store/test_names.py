"""Conversation names scoped to their owner (migration 0007): two owners may each have a
conversation named "c1", each lives on its own (messages, idempotent appends, turn leases), what
one owner sees never depends on what another did, and a database from before the revision keeps
every conversation reachable by its owner under the same id. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from abridged.core.model import Message
from abridged.errors import ConflictError, NotFoundError, StoreError
from abridged.store import Store, upgrade
from abridged.store.conversations import scoped_key

from .helpers import downgrade_to


async def test_two_owners_each_have_their_own_conversation_of_one_name(store: Store) -> None:
    a = await store.create_conversation(name="c1", owner="acme", model="m-a")
    b = await store.create_conversation(name="c1", owner="globex", model="m-b")
    assert (a.name, b.name) == ("c1", "c1")
    assert a.id != b.id
    assert await store.conversation_key("c1", owner="acme") == a.id
    assert await store.conversation_key("c1", owner="globex") == b.id
    await store.append(a.id, Message.user("for acme"), owner="acme")
    await store.append(b.id, Message.user("for globex"), owner="globex")
    assert [m.message.text for m in await store.stored_messages(a.id)] == ["for acme"]
    assert [m.message.text for m in await store.stored_messages(b.id)] == ["for globex"]
    # each owner's listing shows its own, by name
    assert [c.name for c in await store.list_conversations(owner="globex")] == ["c1"]
    with pytest.raises(ConflictError):  # its own name again: the owner's conflict
        await store.create_conversation(name="c1", owner="globex")
    await store.delete_conversation(b.id, owner="globex")
    with pytest.raises(NotFoundError):
        await store.conversation_key("c1", owner="globex")
    assert (await store.open_conversation(a.id, owner="acme")).model == "m-a"


async def test_a_name_nobody_uses_and_one_another_owner_uses_read_alike(store: Store) -> None:
    await store.create_conversation(name="theirs", owner="acme")
    answers = []
    for name in ("theirs", "nobody's"):
        with pytest.raises(NotFoundError) as caught:
            await store.conversation_key(name, owner="globex")
        answers.append((caught.value.message, dict(caught.value.context)))
    assert answers[0] == ("no such conversation", {"conversation_id": "theirs"})
    assert answers[1] == ("no such conversation", {"conversation_id": "nobody's"})


async def test_keys_are_the_owners_and_names_alone_unless_taken(store: Store) -> None:
    """The key of a named conversation depends on its owner and name only; when another
    conversation already holds that key (made by its key, e.g. through the library), a fresh
    key is drawn instead of refusing."""
    made = await store.create_conversation(name="n", owner="acme")
    assert made.id == scoped_key("acme", "n")
    squatter = await store.create_conversation(scoped_key("globex", "n"), owner="someone")
    named = await store.create_conversation(name="n", owner="globex")
    assert named.id not in (squatter.id, made.id)
    assert await store.conversation_key("n", owner="globex") == named.id


async def test_ids_without_a_name_stay_global(store: Store) -> None:
    """The library's ids (no name) are as before: one id, one conversation, whoever owns it."""
    await store.create_conversation("lib-1", owner="acme")
    with pytest.raises(ConflictError):
        await store.create_conversation("lib-1", owner="globex")
    with pytest.raises(ConflictError):
        await store.create_conversation("lib-1")
    info = await store.open_conversation("lib-1")
    assert (info.id, info.name, info.owner) == ("lib-1", "lib-1", "acme")
    assert await store.conversation_key("lib-1", owner="acme") == "lib-1"


async def test_idempotent_appends_and_turn_leases_hold_per_owner(store: Store) -> None:
    a = await store.create_conversation(name="same", owner="acme")
    b = await store.create_conversation(name="same", owner="globex")
    first_a = await store.append(a.id, Message.user("a's", id="msg-1"), owner="acme")
    first_b = await store.append(b.id, Message.user("b's", id="msg-1"), owner="globex")
    again_b = await store.append(b.id, Message.user("b's retry", id="msg-1"), owner="globex")
    assert (first_a.seq, first_b.seq) == (1, 1)
    assert (again_b.seq, again_b.message.text) == (1, "b's")  # the retry found b's own row
    assert [m.message.text for m in await store.stored_messages(a.id)] == ["a's"]
    # a turn of acme's "same" does not hold globex's "same"
    assert await store.acquire_turn(a.id, "worker-a", owner="acme") is not None
    assert await store.acquire_turn(b.id, "worker-b", owner="globex") is not None
    assert await store.acquire_turn(b.id, "worker-c", owner="globex") is None  # b's own fence
    assert await store.release_turn(b.id, "worker-b")


async def test_concurrent_creates_of_one_name_make_one_conversation_per_owner(
    db_url: str,
) -> None:
    """Three stores (connections) each create "race" for acme and for globex at once: each
    owner ends with exactly one, the others get ``ConflictError`` (the client's 409, never the
    database's refusal as an outage)."""
    stores = [Store(db_url) for _ in range(3)]
    try:
        for s in stores:
            await s.open()
        attempts = [
            s.create_conversation(name="race", owner=owner)
            for s in stores
            for owner in ("acme", "globex")
        ]
        outcomes = await asyncio.gather(*attempts, return_exceptions=True)
        made = [o for o in outcomes if not isinstance(o, BaseException)]
        refused = [o for o in outcomes if isinstance(o, BaseException)]
        assert sorted(o.owner or "" for o in made) == ["acme", "globex"]
        assert len(refused) == 4 and all(isinstance(e, ConflictError) for e in refused), refused
    finally:
        for s in stores:
            await s.close()


async def test_an_owner_cannot_reach_another_owners_key(store: Store) -> None:
    """Names are resolved per owner, and keys stay checked by owner as before."""
    a = await store.create_conversation(name="x", owner="acme")
    with pytest.raises(StoreError):  # OwnershipError, which the service answers as 404
        await store.open_conversation(a.id, owner="globex")


# -- what an owner sees never depends on what another did ----------------------------------------

NAMES = ("c1", "c2", "c3")


@dataclass(frozen=True)
class Op:
    """One operation of a tenant, by the name it uses."""

    kind: str  # create, append, read, delete, list
    name: str = ""
    text: str = ""


ops = st.one_of(
    st.builds(Op, kind=st.just("create"), name=st.sampled_from(NAMES)),
    st.builds(
        Op,
        kind=st.just("append"),
        name=st.sampled_from(NAMES),
        text=st.sampled_from(["a", "b", "c"]),
    ),
    st.builds(Op, kind=st.just("read"), name=st.sampled_from(NAMES)),
    st.builds(Op, kind=st.just("delete"), name=st.sampled_from(NAMES)),
    st.builds(Op, kind=st.just("list")),
)


async def _do(store: Store, owner: str, op: Op) -> Any:
    """What ``owner`` sees of ``op``, as the service does it (resolve the name, then act)."""
    try:
        if op.kind == "create":
            info = await store.create_conversation(name=op.name, owner=owner)
            return ("created", info.name)
        if op.kind == "list":
            return ("list", sorted(c.name for c in await store.list_conversations(owner=owner)))
        key = await store.conversation_key(op.name, owner=owner)
        if op.kind == "append":
            stored = await store.append(key, Message.user(op.text), owner=owner)
            return ("appended", stored.seq)
        if op.kind == "read":
            texts = [m.message.text for m in await store.stored_messages(key, owner=owner)]
            return ("read", texts)
        await store.delete_conversation(key, owner=owner)
        return ("deleted",)
    except StoreError as exc:
        return (type(exc).__name__, exc.message, dict(exc.context))


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    mine=st.lists(ops, min_size=1, max_size=8),
    theirs=st.lists(ops, max_size=8),
    interleave=st.lists(st.booleans(), min_size=16, max_size=16),
)
async def test_what_one_owner_sees_never_depends_on_what_another_did(
    store: Store, mine: list[Op], theirs: list[Op], interleave: list[bool]
) -> None:
    """Owner B runs ``mine`` with owner A's ``theirs`` interleaved; owner B2 runs ``mine``
    alone in the same database. B and B2 see exactly the same answers."""
    tag = (await store.create_conversation()).id  # fresh owners for every example
    a, b, b2 = f"a-{tag}", f"b-{tag}", f"b2-{tag}"
    seen_b: list[Any] = []
    pending = list(theirs)
    for op, a_first in zip(mine, interleave, strict=False):
        if a_first and pending:
            await _do(store, a, pending.pop(0))
        seen_b.append(await _do(store, b, op))
    for op in pending:
        await _do(store, a, op)
    seen_b2 = [await _do(store, b2, op) for op in mine[: len(seen_b)]]
    assert seen_b == seen_b2


# -- a database from before migration 0007 -------------------------------------------------------

AT = datetime(2026, 1, 1, tzinfo=UTC)


async def test_conversations_from_before_0007_stay_reachable_under_their_ids(
    empty_url: str,
) -> None:
    """A database at 0006 holding acme's "shared" (with messages), globex's "g-1" and a
    library conversation without owner: after the upgrade each owner finds its conversations
    under the same ids with every message, and globex can make its own "shared"."""
    store = Store(empty_url)
    await store.open()

    async with store.engine.begin() as conn:
        await conn.run_sync(downgrade_to("0006"))
        # rows as the 0006 schema holds them (this version's store cannot write that schema)
        for cid, owner in (("shared", "acme"), ("g-1", "globex"), ("lib", None)):
            await conn.execute(
                text(
                    "INSERT INTO conversations (id, owner, model, settings, version, next_seq,"
                    " current_session_id, prune_boundary, created_at, updated_at)"
                    " VALUES (:id, :owner, 'm', '{}', 0, 3, :sid, 0, :at, :at)"
                ),
                {"id": cid, "owner": owner, "sid": f"s-{cid}", "at": AT},
            )
            await conn.execute(
                text(
                    "INSERT INTO sessions (id, conversation_id, number, reason, carry_from,"
                    " start_seq, segments, created_at) VALUES (:sid, :id, 1, 'start', 1, 1,"
                    " '[]', :at)"
                ),
                {"id": cid, "sid": f"s-{cid}", "at": AT},
            )
            for seq in (1, 2):
                await conn.execute(
                    text(
                        "INSERT INTO messages (conversation_id, session_id, seq, version,"
                        " message_id, role, parts, status, created_at, idempotency_key)"
                        " VALUES (:id, :sid, :seq, 0, :mid, 'user', :parts, 'delivered', :at,"
                        " :mid)"
                    ),
                    {
                        "id": cid,
                        "sid": f"s-{cid}",
                        "seq": seq,
                        "mid": f"{cid}-m{seq}",
                        "parts": f'[{{"type": "text", "text": "{cid} {seq}"}}]',
                        "at": AT,
                    },
                )
    await store.close()
    assert await upgrade(empty_url) == "upgraded"
    again = Store(empty_url)
    try:
        await again.open()
        assert await again.conversation_key("shared", owner="acme") == "shared"
        assert await again.conversation_key("g-1", owner="globex") == "g-1"
        texts = [m.message.text for m in await again.stored_messages("shared", owner="acme")]
        assert texts == ["shared 1", "shared 2"]
        assert (await again.open_conversation("lib")).name == "lib"
        with pytest.raises(NotFoundError):
            await again.conversation_key("shared", owner="globex")
        mine = await again.create_conversation(name="shared", owner="globex")
        assert mine.id != "shared"
        await again.append(mine.id, Message.user("globex's own"), owner="globex")
        texts = [m.message.text for m in await again.stored_messages("shared", owner="acme")]
        assert texts == ["shared 1", "shared 2"]
        # acme's idempotency keys from before still dedupe acme's retries
        retried = await again.append("shared", Message.user("retry", id="shared-m1"))
        assert (retried.seq, retried.message.text) == (1, "shared 1")
        with pytest.raises(ConflictError):
            await again.create_conversation(name="shared", owner="acme")
    finally:
        await again.close()
