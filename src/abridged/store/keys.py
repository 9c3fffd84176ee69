"""API keys of the HTTP service: made once, stored as their SHA-256, looked up per request.

A key is 32 random bytes (``abr_`` and 43 URL-safe characters): far too much entropy for a
dictionary attack, so a plain SHA-256 (no salt, no slow hash) is enough to store it and lets a
request find its key with one indexed lookup.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update

from abridged.errors import NotFoundError, SettingError
from abridged.store import codec, queries
from abridged.store.base import StoreBase
from abridged.store.connect import transaction
from abridged.store.schema import api_keys

__all__ = ["ApiKey", "KeyOps", "hash_key"]

KEY_PREFIX = "abr_"


def hash_key(key: str) -> str:
    """The stored form of a key (hex SHA-256)."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A stored key (never the key itself): its id, tenant, label and dates."""

    id: str
    tenant: str
    label: str | None
    created_at: datetime
    revoked_at: datetime | None


def _check_tenant(tenant: object) -> str:
    if not isinstance(tenant, str) or not tenant.strip() or len(tenant) > 255:
        raise SettingError("tenant", tenant, "a tenant name of 1 to 255 characters")
    return tenant.strip()


class KeyOps(StoreBase):
    """API keys: ``create_api_key``, ``tenant_for_key``, ``list_api_keys``, ``revoke_api_key``."""

    async def create_api_key(self, tenant: str, *, label: str | None = None) -> tuple[str, ApiKey]:
        """A new key for ``tenant``: the key (shown once, never stored) and its record."""
        name = _check_tenant(tenant)
        await self.open()
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        record = ApiKey(queries.new_id(), name, label, codec.now(), None)
        async with transaction(self._engine, operation="create_api_key") as conn:
            await conn.execute(
                api_keys.insert().values(
                    id=record.id,
                    tenant=name,
                    key_hash=hash_key(key),
                    label=label,
                    created_at=record.created_at,
                    revoked_at=None,
                )
            )
        return key, record

    async def tenant_for_key(self, key: str) -> str | None:
        """The tenant of a valid (not revoked) key; ``None`` for any other string."""
        if not key or len(key) > 512:
            return None
        await self.open()
        async with transaction(self._engine, "read", operation="tenant_for_key") as conn:
            row = (
                await conn.execute(
                    select(api_keys.c.tenant)
                    .where(api_keys.c.key_hash == hash_key(key))
                    .where(api_keys.c.revoked_at.is_(None))
                )
            ).first()
        return None if row is None else str(row[0])

    async def list_api_keys(self, tenant: str | None = None) -> list[ApiKey]:
        """Keys (of ``tenant`` when given), oldest first; revoked ones included."""
        await self.open()
        stmt = select(api_keys).order_by(api_keys.c.created_at)
        if tenant is not None:
            stmt = stmt.where(api_keys.c.tenant == tenant)
        async with transaction(self._engine, "read", operation="list_api_keys") as conn:
            rows = (await conn.execute(stmt)).mappings().all()
        return [
            ApiKey(
                r["id"],
                r["tenant"],
                r["label"],
                codec.aware(r["created_at"]),
                codec.aware(r["revoked_at"]) if r["revoked_at"] is not None else None,
            )
            for r in rows
        ]

    async def revoke_api_key(self, key_id: str) -> None:
        """Revoke a key by its id (the row stays, for the record); ``NotFoundError`` if none."""
        await self.open()
        async with transaction(self._engine, operation="revoke_api_key") as conn:
            result = await conn.execute(
                update(api_keys)
                .where(api_keys.c.id == key_id)
                .where(api_keys.c.revoked_at.is_(None))
                .values(revoked_at=codec.now())
            )
        if result.rowcount != 1:
            raise NotFoundError("no such active API key", key_id=key_id)
