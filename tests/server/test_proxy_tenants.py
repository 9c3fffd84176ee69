"""The proxy in a database it shares with the service: its meter page (open to anyone who has a
proxied conversation's id) says nothing about the service's tenants' conversations."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from abridged.store import Store
from abridged.testing import ProviderServer
from tests.server.test_proxy import config_for, proxying


def test_the_meter_page_shows_no_conversation_of_the_services_tenants(
    provider: ProviderServer, tmp_path: Path
) -> None:
    db = tmp_path / "shared.db"

    async def fill() -> None:
        async with Store(db) as store:  # as the service (open, one tenant) makes them
            await store.create_conversation("tenant-c1", owner="local")

    asyncio.run(fill())
    with proxying(config_for(provider, db)) as base:
        theirs = httpx.get(base + "/abridged/conversations/tenant-c1")
        missing = httpx.get(base + "/abridged/conversations/nobody-has-this")
    assert theirs.status_code == missing.status_code == 404
    assert theirs.text == missing.text
