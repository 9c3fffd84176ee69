"""Schema and migrations: the migrated schema is the models', unknown schemas are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

from abridged.core.model import Message
from abridged.errors import SchemaVersionError, StoreError
from abridged.store import Store, head_revision, upgrade
from abridged.store.connect import ENV_VAR, resolve_url
from abridged.store.migrate import HEAD
from abridged.store.schema import Base

from .helpers import downgrade_to


async def test_migrations_build_exactly_the_models(store: Store) -> None:
    def diff(conn: Connection) -> list[object]:
        return list(compare_metadata(MigrationContext.configure(conn), Base.metadata))

    async with store.engine.connect() as conn:
        assert await conn.run_sync(diff) == []


async def test_indexes_load_a_sessions_messages_in_order(store: Store) -> None:
    def indexes(conn: Connection) -> dict[str, list[str | None]]:
        return {
            i["name"] or "": list(i["column_names"]) for i in inspect(conn).get_indexes("messages")
        }

    async with store.engine.connect() as conn:
        found = await conn.run_sync(indexes)
    assert found["ix_messages_session_seq"] == ["session_id", "seq"]


async def test_empty_database_gets_the_schema(empty_url: str) -> None:
    store = Store(empty_url)
    try:
        convo = await store.create_conversation()
        assert (await store.open_conversation(convo.id)).version == 0
    finally:
        await store.close()


async def test_empty_database_is_refused_without_create(empty_url: str) -> None:
    store = Store(empty_url, create=False)
    try:
        with pytest.raises(SchemaVersionError, match="upgrade"):
            await store.open()
    finally:
        await store.close()
    assert await upgrade(empty_url) == "created"
    assert await upgrade(empty_url) == "current"


async def _set_revision(url: str, revision: str) -> None:
    store = Store(url)
    try:
        await store.open()
        async with store.engine.begin() as conn:
            await conn.execute(text("UPDATE alembic_version SET version_num = :r"), {"r": revision})
    finally:
        await store.close()


async def test_unknown_newer_revision_is_refused(empty_url: str) -> None:
    db_url = empty_url  # a database of its own: this test breaks its schema
    await _set_revision(db_url, "9999_from_the_future")
    store = Store(db_url)
    try:
        with pytest.raises(SchemaVersionError) as info:
            await store.create_conversation()
        assert "does not know" in str(info.value)
        assert info.value.context["found"] == "9999_from_the_future"
        # ``upgrade`` cannot fix it either: the schema is newer than this abridged.
        with pytest.raises(SchemaVersionError):
            await upgrade(db_url)
    finally:
        await store.close()


async def test_older_known_revision_is_refused_then_upgraded(
    empty_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _set_revision(empty_url, "0000_older")
    # Pretend 0000 is a revision this abridged knows, older than the head.
    from abridged.store import migrate

    known = migrate._known
    upgraded: list[str] = []
    monkeypatch.setattr(
        migrate, "_known", lambda revision: revision == "0000_older" or known(revision)
    )
    monkeypatch.setattr(migrate, "_upgrade_sync", lambda conn: upgraded.append("yes"))
    store = Store(empty_url)
    with pytest.raises(SchemaVersionError) as info:
        await store.open()
    await store.close()
    assert "upgrade it with" in str(info.value)
    assert "abridged.store" in str(info.value) and "upgrade(" in str(info.value)
    assert info.value.context["found"] == "0000_older"
    assert upgraded == []
    assert await upgrade(empty_url) == "upgraded"
    assert upgraded == ["yes"]


async def test_foreign_tables_without_revision_are_refused(empty_url: str) -> None:
    db_url = empty_url
    store = Store(db_url)
    await store.open()
    async with store.engine.begin() as conn:
        await conn.execute(text("DROP TABLE alembic_version"))
    await store.close()
    again = Store(db_url)
    try:
        with pytest.raises(SchemaVersionError, match="no schema revision"):
            await again.open()
    finally:
        await again.close()


def test_head_revision_is_the_first_migration() -> None:
    assert head_revision() == HEAD == "0009"


async def test_sqlite_pragmas(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "p.db"))
    try:
        await store.open()
        async with store.engine.connect() as conn:
            mode = (await conn.execute(text("PRAGMA journal_mode"))).scalar()
            fks = (await conn.execute(text("PRAGMA foreign_keys"))).scalar()
            sync = (await conn.execute(text("PRAGMA synchronous"))).scalar()
        assert (mode, fks, sync) == ("wal", 1, 1)  # synchronous=1 is NORMAL
    finally:
        await store.close()


def test_url_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env" / "a.db"))
    assert resolve_url(None).database == str(tmp_path / "env" / "a.db")
    assert (tmp_path / "env").is_dir()
    monkeypatch.delenv(ENV_VAR)
    monkeypatch.setattr(
        "abridged.store.connect.platformdirs.user_data_dir", lambda *a, **k: str(tmp_path / "ud")
    )
    assert resolve_url(None).database == str(tmp_path / "ud" / "abridged.db")
    pg = resolve_url("postgresql://u:secret@h:5/db")
    assert pg.drivername == "postgresql+asyncpg"
    assert resolve_url("sqlite:////x/y.db").drivername == "sqlite+aiosqlite"
    with pytest.raises(StoreError, match="in-memory"):
        resolve_url("sqlite://")
    with pytest.raises(StoreError) as info:
        resolve_url("mysql://u:secret@h/db")
    assert "secret" not in str(info.value)


def test_store_hides_the_password() -> None:
    store = Store("postgresql://u:hunter2@127.0.0.1:1/db")
    assert "hunter2" not in store.url


def test_missing_postgres_skips_loudly_or_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.databases import _no_postgres

    monkeypatch.setenv("ABRIDGED_CI", "1")
    with pytest.raises(pytest.fail.Exception, match=r"PostgreSQL missing under ABRIDGED_CI=1"):
        _no_postgres("no binaries")
    monkeypatch.setenv("CI", "true")  # a CI machine's own variable changes nothing
    monkeypatch.delenv("ABRIDGED_CI")
    with pytest.raises(pytest.skip.Exception, match="PostgreSQL NOT TESTED: no binaries"):
        _no_postgres("no binaries")


async def test_a_database_at_the_first_revision_is_upgraded_keeping_its_rows(
    empty_url: str,
) -> None:
    """A real upgrade 0001 -> head: the new table appears, the stored conversation stays."""
    store = Store(empty_url)
    await store.open()  # head; go back to 0001 as an older abridged would have left it
    convo = await store.create_conversation()

    async with store.engine.begin() as conn:
        await conn.run_sync(downgrade_to("0001"))
        assert not await conn.run_sync(lambda c: inspect(c).has_table("pruned_outputs"))
    await store.close()
    assert await upgrade(empty_url) == "upgraded"
    again = Store(empty_url)
    try:
        await again.open()
        assert (await again.open_conversation(convo.id)).id == convo.id
        async with again.engine.connect() as conn:
            assert await conn.run_sync(lambda c: inspect(c).has_table("pruned_outputs"))
    finally:
        await again.close()


async def test_0003_moves_carried_messages_and_file_operations_out_of_meta(
    empty_url: str,
) -> None:
    """A summary written before 0003 kept them in ``meta``: the upgrade moves them to their
    columns, and the store reads them back from there."""
    from alembic import command

    from abridged.store import migrate

    store = Store(empty_url)
    await store.open()
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 7)])

    def to_0002(conn: Connection) -> None:
        config = migrate._config()
        config.attributes["connection"] = conn
        command.downgrade(config, "0002")

    async with store.engine.begin() as conn:
        await conn.run_sync(to_0002)
        await conn.execute(
            text(
                "INSERT INTO summaries (id, conversation_id, text, meta, covers_to_seq, "
                "created_at) VALUES ('s1', :c, 'old summary', :meta, 4, CURRENT_TIMESTAMP)"
            ),
            {
                "c": convo.id,
                "meta": json.dumps(
                    {"sections": 2, "carried_seqs": [1], "file_ops": {"read": ["a.py"]}}
                ),
            },
        )
    await store.close()
    assert await upgrade(empty_url) == "upgraded"
    again = Store(empty_url)
    try:
        await again.open()
        async with again.engine.connect() as conn:
            row = (
                (await conn.execute(text("SELECT meta, carried_seqs, file_ops FROM summaries")))
                .mappings()
                .one()
            )
        assert json.loads(row["meta"]) == {"sections": 2}
        assert json.loads(row["carried_seqs"]) == [1]
        assert json.loads(row["file_ops"]) == {"read": ["a.py"]}
    finally:
        await again.close()


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u@127.0.0.1:1/db?password=hunter2",
        "postgresql://u:hunter2@127.0.0.1:1/db?sslmode=require&sslpassword=hunter2",
        "postgresql://127.0.0.1:1/db?user=u&password=hunter2&password=hunter2",
    ],
)
def test_store_hides_a_password_given_as_a_query_parameter(url: str) -> None:
    store = Store(url)
    assert "hunter2" not in store.url
    assert "127.0.0.1" in store.url and "***" in store.url
