"""What the client caused is a 4xx and not logged as a store error; damage is not absence: a
conversation whose current session is missing answers 500 naming it, never 404."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from abridged.store import Store
from tests.server.conftest import RunningService


def test_creating_a_taken_id_is_a_409_not_a_store_error(
    service: RunningService, caplog: pytest.LogCaptureFixture
) -> None:
    client = service.client()
    assert client.post("/v1/conversations", json={"id": "mine"}).status_code == 201
    with caplog.at_level("ERROR", logger="abridged.server"):
        again = client.post("/v1/conversations", json={"id": "mine"})
    assert again.status_code == 409, again.text
    assert again.json()["detail"].startswith("a conversation with this id exists")
    assert not [r for r in caplog.records if "store error" in r.getMessage()]


async def _dangle(url: str, cid: str) -> None:
    store = Store(url)
    try:
        async with store.engine.begin() as conn:
            await conn.execute(
                text("UPDATE conversations SET current_session_id = 'gone' WHERE id = :c"),
                {"c": cid},
            )
    finally:
        await store.close()


def test_a_missing_current_session_is_damage_not_a_missing_conversation(
    service: RunningService,
) -> None:
    client = service.client()
    cid = client.post("/v1/conversations", json={}).json()["id"]
    asyncio.run(_dangle(service.db_url, cid))
    answer = client.get(f"/v1/conversations/{cid}/context")
    assert answer.status_code == 500, answer.text
    assert answer.json()["session_id"] == "gone"
    assert "no such conversation" not in answer.text
