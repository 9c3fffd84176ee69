"""The store tests run on both backends: a SQLite file per test and PostgreSQL (see
``tests.databases``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from abridged.store import Store
from tests.databases import (
    BACKENDS,
    Postgres,
    backend_param,
    database_url,
    empty_database_url,
    require_postgres,
)

__all__ = ["Postgres", "require_postgres"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """``sqlite`` or ``postgresql``: every store test runs on both."""
    return backend_param(request)


@pytest.fixture
def db_url(backend: str, tmp_path: Path, postgres: Postgres | str) -> str:
    """An empty, migrated database of the backend under test."""
    return database_url(backend, tmp_path, postgres)


@pytest.fixture
def empty_url(backend: str, tmp_path: Path, postgres: Postgres | str) -> Iterator[str]:
    """A database of the backend under test with no tables at all (for schema tests)."""
    yield from empty_database_url(backend, tmp_path, postgres)


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    """An open store on the backend under test."""
    s = Store(db_url)
    await s.open()
    try:
        yield s
    finally:
        await s.close()
