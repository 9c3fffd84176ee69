"""Who is asking: ``Authorization: Bearer <key>`` to a tenant (every resource belongs to one).

Keys are made with ``abridged keys create --tenant NAME`` and stored hashed
(``abridged.store.keys``). A request without a key gets 401, with a wrong or revoked key 401;
a tenant asking for another tenant's conversation gets the same 404 as for one that does not
exist. Each worker remembers a checked key for ``KEY_CACHE_SECONDS`` (a revoked key stops
working within that time) so that a request costs no extra query.
"""

from __future__ import annotations

import time

from fastapi import HTTPException, Request

from abridged.store import Store
from abridged.store.keys import hash_key

__all__ = ["KEY_CACHE_SECONDS", "LOCAL_TENANT", "TenantResolver", "require_tenant"]

KEY_CACHE_SECONDS = 10.0
LOCAL_TENANT = "local"
_CHALLENGE = {"WWW-Authenticate": "Bearer"}


class TenantResolver:
    """API keys to tenants, with a short per-worker cache (by the key's hash, never the key)."""

    def __init__(self, store: Store, *, open_access: bool = False) -> None:
        self.store = store
        self.open_access = open_access
        self._cache: dict[str, tuple[str, float]] = {}

    async def tenant(self, authorization: str | None) -> str:
        """The tenant of an ``Authorization`` header; ``HTTPException(401)`` otherwise."""
        if self.open_access:
            return LOCAL_TENANT
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise HTTPException(
                401,
                "an API key is required: send 'Authorization: Bearer <key>' "
                "(make one with: abridged keys create --tenant NAME)",
                headers=_CHALLENGE,
            )
        digest = hash_key(token)
        now = time.monotonic()
        cached = self._cache.get(digest)
        if cached is not None and cached[1] > now:
            return cached[0]
        tenant = await self.store.tenant_for_key(token)
        if tenant is None:
            self._cache.pop(digest, None)
            raise HTTPException(
                401, "the API key is not valid (unknown or revoked)", headers=_CHALLENGE
            )
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[digest] = (tenant, now + KEY_CACHE_SECONDS)
        return tenant


async def require_tenant(request: Request) -> str:
    """FastAPI dependency: the request's tenant."""
    resolver: TenantResolver = request.app.state.tenants
    return await resolver.tenant(request.headers.get("authorization"))
