"""Connections to PostgreSQL (``abridged.store.connect``): a pooled connection is pinged only
when it rested in the pool, and one whose server side died while it rested is replaced.

On a real PostgreSQL server started by the suite; the idle window is set by the test
(``PING_AFTER_IDLE_S``), never waited for."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import make_url

from abridged.store import connect
from tests.databases import Postgres, database_url


def _engine(tmp_path: Path, postgres: Postgres | str) -> tuple[Any, list[bool]]:
    engine = connect.create_engine(make_url(database_url("postgresql", tmp_path, postgres)))
    pinged: list[bool] = []

    def taken(_dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        pinged.append(bool(record.info[connect.PINGED]))

    event.listen(engine.sync_engine.pool, "checkout", taken)
    return engine, pinged


async def _backend_pid(engine: Any) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(text("SELECT pg_backend_pid()"))).scalar_one())


def test_a_connection_taken_again_at_once_is_not_pinged(
    tmp_path: Path, postgres: Postgres | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, pinged = _engine(tmp_path, postgres)
    # no connection rests this long in a test: every checkout is "at once"
    monkeypatch.setattr(connect, "PING_AFTER_IDLE_S", 3600.0)

    async def run() -> None:
        try:
            first = await _backend_pid(engine)
            assert await _backend_pid(engine) == first
            monkeypatch.setattr(connect, "PING_AFTER_IDLE_S", 0.0)  # now every rest is long
            assert await _backend_pid(engine) == first
        finally:
            await engine.dispose()

    asyncio.run(run())
    assert pinged == [False, False, True]


def test_a_connection_that_died_while_it_rested_is_replaced(
    tmp_path: Path, postgres: Postgres | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, pinged = _engine(tmp_path, postgres)
    monkeypatch.setattr(connect, "PING_AFTER_IDLE_S", 0.0)

    async def run() -> tuple[int, int]:
        try:
            first = await _backend_pid(engine)  # back in the pool
            killer = connect.create_engine(engine.url)
            try:
                async with killer.connect() as conn:
                    await conn.execute(text(f"SELECT pg_terminate_backend({first})"))
            finally:
                await killer.dispose()
            # the pooled connection is dead: the ping finds it and a fresh one answers
            return first, await _backend_pid(engine)
        finally:
            await engine.dispose()

    first, second = asyncio.run(run())
    assert second != first
    assert pinged[-1] is True
