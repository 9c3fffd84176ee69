"""``abridged db upgrade``: create, upgrade and leave a current schema alone; refuse bad URLs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from abridged.store import head_revision
from abridged.testing import ProviderServer
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


def _unopenable(tmp_path: Path) -> list[tuple[str, str]]:
    """Database paths that cannot be used, with what the error must say."""
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    return [
        ("/proc/x.db", "/proc/x.db"),  # a directory nobody can create files in
        (str(blocked / "x.db"), "a-file"),  # under a file
        (str(tmp_path), "is a directory"),  # a directory itself
    ]


def test_a_database_that_cannot_be_opened_is_a_clear_error(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "agent-session.jsonl"
    with ProviderServer(context_window=4_096, max_output=1_024) as server:
        model = f"{server.base_url}/v1#test-model"
        for db, words in _unopenable(tmp_path):
            for args in (
                ["db", "upgrade", "--db", db],
                ["replay", str(example), "--window", "16k", "--db", db],
                ["chat", "--model", model, "--db", db],
            ):
                out = run_cli(*args, env={"ABRIDGED_MODEL": ""})
                assert out.returncode == 1, (args, out.stdout, out.stderr)
                assert "Traceback" not in out.stderr and "sqlalchemy" not in out.stderr
                assert words in out.stderr and out.stderr.startswith("error:"), out.stderr


def test_a_database_under_a_missing_directory_is_not_created(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "agent-session.jsonl"
    db = tmp_path / "missing" / "x.db"
    out = run_cli("replay", example, "--window", "16k", "--db", db)
    assert out.returncode == 1 and "does not exist" in out.stderr
    assert not (tmp_path / "missing").exists()
    out = run_cli("chat", "--model", "openai/gpt-4.1", "--db", db, env={"OPENAI_API_KEY": "k"})
    assert out.returncode == 1 and "does not exist" in out.stderr
    assert not (tmp_path / "missing").exists()
    # compact -o under a missing directory: an error too, nothing created
    out = run_cli("compact", example, "-o", tmp_path / "missing" / "out.json")
    assert out.returncode == 1 and not (tmp_path / "missing").exists()
