"""``abridged db upgrade``: create, upgrade and leave a current schema alone; refuse bad URLs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from abridged.store import head_revision
from tests.cli.conftest import invoke, run_cli


def test_upgrade_creates_then_reports_current(tmp_path: Path) -> None:
    db = tmp_path / "sub" / "fresh.db"
    out = run_cli("db", "upgrade", "--db", db)
    assert out.returncode == 0, out.stderr
    assert "schema created" in out.stdout and head_revision() in out.stdout
    with sqlite3.connect(db) as conn:
        (revision,) = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert revision == head_revision()
    assert {"conversations", "sessions", "messages", "compactions"} <= tables
    again = run_cli("db", "upgrade", "--db", db)
    assert again.returncode == 0 and "already current" in again.stdout
    listed = run_cli("sessions", "list", "--db", db)
    assert listed.returncode == 0 and "no conversations in" in listed.stdout


def test_upgrade_uses_abridged_db_and_sessions_point_to_it(tmp_path: Path) -> None:
    db = tmp_path / "env.db"
    out = run_cli("db", "upgrade", env={"ABRIDGED_DB": str(db)})
    assert out.returncode == 0, out.stderr
    assert str(db) in out.stdout and db.exists()
    # an empty file is not a store: the commands say how to make it one
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    out = run_cli("sessions", "list", "--db", empty)
    assert out.returncode == 1
    assert f"abridged db upgrade --db {empty}" in out.stderr


def test_bad_urls_exit_1() -> None:
    out = invoke("db", "upgrade", "--db", "mysql://user:secret@host/db")
    assert out.exit_code == 1
    assert "unsupported database" in out.stderr and "secret" not in out.stderr
    assert out.exception is None or isinstance(out.exception, SystemExit)
