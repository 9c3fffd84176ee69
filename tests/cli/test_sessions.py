"""``abridged sessions list | show | search | export`` over a store filled by a real replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from abridged.formats.openai_chat import messages_from_openai
from abridged.formats.transcripts import load_transcripts
from tests.cli.conftest import EXAMPLE, invoke, run_cli


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A database holding the example's replay, and the replay's JSON."""
    db = tmp_path_factory.mktemp("sessions") / "store.db"
    out = run_cli("replay", EXAMPLE, "--window", "16k", "--db", db, "--json")
    assert out.returncode == 0, out.stderr
    return db, json.loads(out.stdout)


def _json(*args: str | Path, env: dict[str, str] | None = None) -> Any:
    out = run_cli(*args, "--json", env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_list(replayed: tuple[Path, dict[str, Any]]) -> None:
    db, replay = replayed
    data = _json("sessions", "list", "--db", db)
    (conv,) = data["conversations"]
    assert (
        conv["id"] == replay["sessions"][0]["conversation_id"] == replay["db"].split("/")[-1]
        or conv["id"]
    )
    assert conv["sessions"] == 2 and conv["messages"] == 116
    assert conv["totals"]["messages"] == 116
    assert conv["totals"]["input"] > 0 and conv["totals"]["cache_read"] > 0
    assert conv["settings"]["system"].startswith("You are a helpful assistant")
    assert conv["latest_summary"] == replay["sessions"][0]["compactions"][0]["summary"]
    text = run_cli("sessions", "list", "--db", db)
    assert text.returncode == 0, text.stderr
    assert conv["id"] in text.stdout and "2 sessions, 116 messages" in text.stdout
    assert "latest summary:" in text.stdout


def test_show_a_conversation_and_a_session(replayed: tuple[Path, dict[str, Any]]) -> None:
    db, replay = replayed
    cid = replay["sessions"][0]["conversation_id"]
    data = _json("sessions", "show", cid, "--db", db)
    first, second = data["sessions"]
    assert first["reason"] == "start" and second["reason"] == "compaction"
    assert second["parent_id"] == first["id"] and second["current"]
    assert first["final_summary"]["text"] == second["start_summary"]["text"]
    # each told apart as the chat's /resume lists them, though they share that summary
    assert first["gist"] and second["gist"] and first["gist"] != second["gist"]
    (compaction,) = data["compactions"]
    assert compaction["child_session_id"] == second["id"]
    assert compaction["tokens_after"] < compaction["tokens_before"]
    assert first["totals"]["messages"] + second["totals"]["messages"] == 116
    text = run_cli("sessions", "show", cid, "--db", db)
    assert text.returncode == 0, text.stderr
    for words in ("compaction of 1", "compactions", "final summary", "current"):
        assert words in text.stdout
    assert "## Files read / modified" in text.stdout
    # a session id (or a unique prefix of it) names its conversation
    by_session = _json("sessions", "show", second["id"][:10], "--db", db)
    assert [s["id"] for s in by_session["sessions"]] == [second["id"]]


def test_search(replayed: tuple[Path, dict[str, Any]]) -> None:
    db, replay = replayed
    data = _json("sessions", "search", "round_total half up rounding", "--db", db)
    assert data["hits"], data
    hit = data["hits"][0]
    assert hit["conversation_id"] == replay["sessions"][0]["conversation_id"]
    assert "round_total" in hit["summary"]
    none = _json("sessions", "search", "kubernetes helm chart", "--db", db)
    assert none["hits"] == []
    text = run_cli("sessions", "search", "round_total", "--db", db)
    assert text.returncode == 0 and hit["conversation_id"] in text.stdout


def test_export_history_and_context(replayed: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    db, replay = replayed
    cid = replay["sessions"][0]["conversation_id"]
    path = tmp_path / "history.json"
    out = run_cli("sessions", "export", cid, "--db", db, "-o", path)
    assert out.returncode == 0, out.stderr
    (history,) = load_transcripts(path)  # abridged's own JSON
    (original,) = load_transcripts(EXAMPLE)
    # nothing is lost: every message, summarized ones included, in order
    assert [m.text for m in history.messages] == [m.text for m in original.messages]
    out = run_cli("sessions", "export", cid, "--db", db, "--context", "--format", "openai")
    assert out.returncode == 0, out.stderr
    items = json.loads(out.stdout)
    assert items[0]["role"] == "system"
    # the task, pinned verbatim, comes before the summary (it stays in the cached prefix)
    assert items[1]["content"] == original.messages[1].text
    assert items[2]["content"].startswith("[Summary of the earlier part")
    context = messages_from_openai(items)
    assert len(context) < len(original.messages)
    assert context[-1].text == original.messages[-1].text


def test_default_database_and_missing_ones(tmp_path: Path) -> None:
    env = {"ABRIDGED_DB": str(tmp_path / "env.db")}
    out = run_cli("sessions", "list", env=env)
    assert out.returncode == 0 and "no conversations yet" in out.stdout
    assert not (tmp_path / "env.db").exists()  # listing never creates a database
    out = run_cli("replay", EXAMPLE, "--window", "16k", "--db", tmp_path / "env.db")
    assert out.returncode == 0, out.stderr
    data = _json("sessions", "list", env=env)  # ABRIDGED_DB names it
    assert len(data["conversations"]) == 1
    bad = invoke("sessions", "show", "nope", env=env)
    assert bad.exit_code == 1 and "no conversation or session 'nope'" in bad.stderr
    bad = invoke("sessions", "show", "x", "--db", tmp_path / "missing.db")
    assert bad.exit_code == 1 and "no database at" in bad.stderr
    bad = invoke("sessions", "export", "x", "--db", tmp_path / "env.db", "--format", "xml")
    assert bad.exit_code == 2 and "--format 'xml'" in bad.stderr


def test_show_finds_a_tenants_conversation_by_the_tenants_id(tmp_path: Path) -> None:
    """The service keeps a tenant's conversation under a key of its own; ``--owner`` with the
    tenant's id finds it (two tenants' conversations of one id stay apart)."""
    import asyncio

    from abridged.core.model import Message
    from abridged.store import Store

    db = tmp_path / "service.db"

    async def fill() -> None:
        async with Store(db) as store:
            for tenant in ("acme", "globex"):
                info = await store.create_conversation(name="c1", owner=tenant)
                await store.append(info.id, Message.user(f"{tenant} speaks"), owner=tenant)

    asyncio.run(fill())
    for tenant in ("acme", "globex"):
        out = run_cli("sessions", "export", "c1", "--owner", tenant, "--db", db)
        assert out.returncode == 0, out.stderr
        assert f"{tenant} speaks" in out.stdout
        other = "globex" if tenant == "acme" else "acme"
        assert f"{other} speaks" not in out.stdout
