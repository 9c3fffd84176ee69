"""Real databases for the tests: a SQLite file per test, and PostgreSQL (named by
``ABRIDGED_TEST_PG_URL``, else a throwaway cluster started once per run from the local
binaries; under pytest-xdist once per worker, each worker with its own databases). The
fixtures are registered by ``tests/conftest.py`` (``postgres``, one server per run) and by the
conftests of the packages whose tests run on both backends."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import text

from abridged.store import upgrade
from abridged.store.connect import create_engine, resolve_url
from abridged.store.testing import PostgresCluster, find_bin_dir
from tests.needs import missing

PG_ENV = "ABRIDGED_TEST_PG_URL"
BACKENDS = ["sqlite", "postgresql"]
TABLES = "compactions, messages, sessions, summaries, conversations, api_keys"


@dataclass
class Postgres:
    """A PostgreSQL server the tests may create databases on."""

    admin_url: str  # a database to connect to for CREATE DATABASE
    test_url: str  # the migrated database the tests share (truncated before each test)

    def database_url(self, name: str) -> str:
        """The URL of another database on the same server."""
        admin = resolve_url(self.admin_url)
        return admin.set(database=name).render_as_string(hide_password=False)


async def _sql(url: str, *statements: str) -> None:
    engine = create_engine(resolve_url(url), isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            for statement in statements:
                await conn.execute(text(statement))
    finally:
        await engine.dispose()


def _no_postgres(reason: str) -> None:
    missing("PostgreSQL", reason)


def postgres_server() -> Iterator[Postgres | str]:
    """The PostgreSQL server, or why there is none (each test using it then skips or fails)."""
    named = os.environ.get(PG_ENV)
    cluster: PostgresCluster | None = None
    if named:
        admin = named
    else:
        bin_dir = find_bin_dir()
        if bin_dir is None:
            yield (
                "no PostgreSQL binaries (looked in /usr/lib/postgresql/*/bin and PATH); "
                f"install Debian's `postgresql` package or set {PG_ENV}"
            )
            return
        cluster = PostgresCluster(bin_dir)
        try:
            admin = cluster.start()
        except (RuntimeError, OSError) as exc:
            cluster.stop()
            yield f"could not start a throwaway cluster from {bin_dir}: {exc}"
            return
    # each pytest-xdist worker runs this once, on its own cluster or, with a named server, its own
    # database there: the worker's name is in it so a leftover database says whose it was
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    name = f"abridged_test_{worker}_{uuid.uuid4().hex[:8]}"
    server = Postgres(admin_url=admin, test_url="")
    server.test_url = server.database_url(name)
    asyncio.run(_sql(admin, f"CREATE DATABASE {name}"))
    asyncio.run(upgrade(server.test_url))
    try:
        yield server
    finally:
        if cluster is not None:
            cluster.stop()
        else:
            asyncio.run(_sql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))


def require_postgres(postgres: Postgres | str) -> Postgres:
    """The server, or skip (fail under CI) with the reason there is none."""
    if isinstance(postgres, str):
        _no_postgres(postgres)
        raise AssertionError("unreachable")
    return postgres


def backend_param(request: pytest.FixtureRequest) -> str:
    """``sqlite`` or ``postgresql``: every store test runs on both."""
    return str(request.param)


def database_url(backend: str, tmp_path: Path, postgres: Postgres | str) -> str:
    """An empty, migrated database of the backend under test."""
    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
        asyncio.run(upgrade(url))
        return url
    server = require_postgres(postgres)
    asyncio.run(_sql(server.test_url, f"TRUNCATE {TABLES} CASCADE"))
    return server.test_url


def empty_database_url(backend: str, tmp_path: Path, postgres: Postgres | str) -> Iterator[str]:
    """A database of the backend under test with no tables at all (for schema tests)."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}"
        return
    server = require_postgres(postgres)
    name = f"abridged_empty_{uuid.uuid4().hex[:8]}"
    asyncio.run(_sql(server.admin_url, f"CREATE DATABASE {name}"))
    try:
        yield server.database_url(name)
    finally:
        asyncio.run(_sql(server.admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
