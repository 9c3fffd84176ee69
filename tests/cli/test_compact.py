"""``abridged compact``: one compaction, the context written back, the breakdown printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abridged.core.validate import validate_messages
from abridged.formats.anthropic_messages import messages_from_anthropic
from abridged.formats.openai_chat import messages_from_openai
from abridged.formats.transcripts import load_transcripts
from tests.cli.conftest import CLAUDE_CODE, CODEX, EXAMPLE, Run, invoke


def test_same_format_round_trips_and_shrinks(cli: Run, tmp_path: Path) -> None:
    out_path = tmp_path / "compacted.jsonl"
    out = cli("compact", EXAMPLE, "--window", "16k", "-o", out_path)
    assert out.returncode == 0, out.stderr
    for words in ("before", "after", "summary", "tool results", "Compacted (", "wrote"):
        assert words in out.stdout
    (original,) = load_transcripts(EXAMPLE)
    (compacted,) = load_transcripts(out_path)
    assert compacted.source_format == "swebench-jsonl"
    assert compacted.id == original.id
    assert len(compacted.messages) < len(original.messages) // 2
    assert compacted.messages[0].role == "system"
    assert compacted.messages[0].text == original.messages[0].text
    # the task stays verbatim (pinned), the summary follows the system prompt
    texts = [m.text for m in compacted.messages]
    assert any(t.startswith("[Summary of the earlier part") for t in texts)
    assert original.messages[1].text in texts
    # the tail is the original's tail
    assert compacted.messages[-1].text == original.messages[-1].text


def test_json_breakdown(cli: Run, tmp_path: Path) -> None:
    out = cli("compact", EXAMPLE, "--window", "16k", "-o", tmp_path / "c.jsonl", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "compacted"
    assert data["tokens_after"] < data["tokens_before"]
    assert data["tokens_after"] <= data["budget"]["input_budget"]
    assert data["before"]["summary"] == 0 and data["after"]["summary"] > 0
    assert data["after"]["tool results"] < data["before"]["tool results"]
    assert data["messages_after"] < data["messages_before"] == 117
    assert data["summary"] and data["output_format"] == "swebench-jsonl"


def test_openai_to_stdout_and_breakdown_to_stderr(cli: Run) -> None:
    out = cli("compact", EXAMPLE, "--window", "16k", "--format", "openai")
    assert out.returncode == 0, out.stderr
    items = json.loads(out.stdout)
    assert items[0]["role"] == "system"
    messages = messages_from_openai(items)
    assert [i for i in validate_messages(messages) if i.severity == "error"] == []
    assert "Compacted (" in out.stderr


def test_anthropic_output(cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    out = cli("compact", EXAMPLE, "--window", "16k", "--format", "anthropic", "-o", path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["system"].startswith("You are a helpful assistant")
    messages = messages_from_anthropic(doc["messages"], system=doc["system"])
    assert messages[1].role == "user"
    (loaded,) = load_transcripts(path)
    assert loaded.source_format == "anthropic-messages"


@pytest.mark.parametrize("source", [CLAUDE_CODE, CODEX])
def test_agent_cli_formats_are_written_back(cli: Run, tmp_path: Path, source: Path) -> None:
    path = tmp_path / "out.jsonl"
    out = cli(
        "compact", source, "--window", "2k", "--keep-recent", "64", "--summary-max", "120",
        "-o", path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    (original,) = load_transcripts(source)
    (compacted,) = load_transcripts(path)
    assert compacted.source_format == original.source_format
    assert compacted.messages[-1].text == original.messages[-1].text
    assert any(m.text.startswith("[Summary of the earlier part") for m in compacted.messages)
    assert len(compacted.messages) < len(original.messages)


@pytest.mark.parametrize("source", [CLAUDE_CODE, CODEX])
def test_a_summary_that_would_not_shrink_the_file_changes_nothing(
    cli: Run, tmp_path: Path, source: Path
) -> None:
    # These sessions are a few hundred tokens: a 300-token summary would make them larger.
    path = tmp_path / "out.jsonl"
    out = cli(
        "compact", source, "--window", "2k", "--keep-recent", "64", "--summary-max", "300",
        "-o", path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "nothing to compact" in (out.stdout + out.stderr).lower()
    (original,) = load_transcripts(source)
    (written,) = load_transcripts(path)
    assert [m.text for m in written.messages] == [m.text for m in original.messages]


def test_many_sessions(cli: Run, tmp_path: Path) -> None:
    two = tmp_path / "two.jsonl"
    line = EXAMPLE.read_text(encoding="utf-8").strip()
    two.write_text(line + "\n" + line.replace("example__ledger", "other__ledger") + "\n")
    out = cli("compact", two, "--window", "16k", "--format", "openai")
    assert out.returncode == 2 and "--session" in out.stderr
    path = tmp_path / "both.jsonl"
    out = cli("compact", two, "--window", "16k", "-o", path)
    assert out.returncode == 0, out.stderr
    assert [t.id for t in load_transcripts(path)] == [
        "example__ledger-rounding",
        "other__ledger-rounding",
    ]
    path = tmp_path / "second.json"
    out = cli(
        "compact", two, "--window", "16k", "--session", "2", "--format", "abridged", "-o", path
    )
    assert out.returncode == 0, out.stderr
    (second,) = load_transcripts(path)
    assert second.id == "other__ledger-rounding" and second.source_format == "abridged"


def test_bad_input(tmp_path: Path) -> None:
    out = invoke("compact", tmp_path / "missing.json")
    assert out.exit_code == 1 and "cannot read" in out.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"messages": [{"role": "bot", "content": "x"}]}')
    out = invoke("compact", bad)
    assert out.exit_code == 1 and "unknown role 'bot'" in out.stderr
    out = invoke("compact", EXAMPLE, "--format", "yaml")
    assert out.exit_code == 2 and "--format 'yaml'" in out.stderr
