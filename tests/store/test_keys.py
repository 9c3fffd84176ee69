"""API keys of the service: shown once, stored as their SHA-256 only, revocable."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import select

from abridged.errors import NotFoundError, SettingError
from abridged.store import Store
from abridged.store.schema import api_keys


async def test_a_key_is_shown_once_and_only_its_hash_is_stored(store: Store) -> None:
    key, record = await store.create_api_key("acme", label="ci")
    assert key.startswith("abr_") and len(key) > 40
    async with store.engine.connect() as conn:
        rows = (await conn.execute(select(api_keys))).mappings().all()
    assert len(rows) == 1
    row = rows[0]
    assert row["key_hash"] == hashlib.sha256(key.encode()).hexdigest()
    assert key not in " ".join(str(v) for v in row.values())
    assert (row["tenant"], row["label"], row["id"]) == ("acme", "ci", record.id)
    assert await store.tenant_for_key(key) == "acme"
    assert await store.tenant_for_key(key + "x") is None
    assert await store.tenant_for_key("") is None


async def test_keys_are_listed_and_revoked(store: Store) -> None:
    a, first = await store.create_api_key("acme")
    b, second = await store.create_api_key("globex")
    assert [k.tenant for k in await store.list_api_keys()] == ["acme", "globex"]
    assert [k.id for k in await store.list_api_keys("globex")] == [second.id]
    await store.revoke_api_key(first.id)
    assert await store.tenant_for_key(a) is None
    assert await store.tenant_for_key(b) == "globex"
    listed = {k.id: k for k in await store.list_api_keys()}
    assert listed[first.id].revoked_at is not None and listed[second.id].revoked_at is None
    with pytest.raises(NotFoundError):
        await store.revoke_api_key(first.id)  # already revoked
    with pytest.raises(NotFoundError):
        await store.revoke_api_key("no-such-key")


@pytest.mark.parametrize("tenant", ["", "   ", "x" * 256])
async def test_a_tenant_needs_a_name(store: Store, tenant: str) -> None:
    with pytest.raises(SettingError):
        await store.create_api_key(tenant)
