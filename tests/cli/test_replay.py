"""``abridged replay``: real processes on real files, the JSON contract, budgets, bad input."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from abridged.cli.app import app
from abridged.cli.common import Knobs, limits_for, load
from abridged.cli.replay import run_replay_async
from abridged.core.budget import parse_token_size
from abridged.engine.summarize.prompts import SECTIONS
from abridged.testing import ProviderServer, RecordedRequest
from tests.cli.conftest import CLAUDE_CODE, CODEX, EXAMPLE, Run

ACTIONS = {"send", "prune", "compact", "recover"}


def _json(out: Any) -> dict[str, Any]:
    assert out.returncode == 0, out.stderr
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def test_the_example_replays_within_the_budget_and_compacts(cli: Run) -> None:
    data = _json(cli("replay", EXAMPLE, "--window", "16k", "--json"))
    steps, totals = data["steps"], data["totals"]
    (session,) = data["sessions"]
    budget = session["budget"]
    assert session["limits"]["context_window"] == 16_384
    assert len(steps) == totals["calls"] == 58  # one entry per model call
    assert {s["action"] for s in steps} <= ACTIONS
    assert all(isinstance(s["context_tokens"], int) for s in steps)
    # every context sent fits the input budget; none is over the window
    assert max(s["context_tokens"] for s in steps) == totals["max_context_tokens"]
    assert totals["max_context_tokens"] <= budget["input_budget"]
    assert totals["overflows"] == 0 and totals["over_budget"] == 0
    # pruning and a compaction both happened, and the counts agree with the steps
    assert totals["prunes"] == sum(s["pruned"] for s in steps) >= 1
    assert totals["compactions"] == sum(s["action"] == "compact" for s in steps) >= 1
    compaction = session["compactions"][0]
    assert compaction["tokens_after"] < compaction["tokens_before"]
    assert compaction["summary"].startswith(("## ", "The turn in progress"))
    step = steps[compaction["call"] - 1]
    assert step["action"] == "compact" and step["tokens_before"] > budget["trigger"] * 0.9
    # the store holds every message and the compaction's child session
    stored = session["stored"]
    assert stored["messages"] == 116 and stored["sessions"] == 2
    assert stored["compactions"] == 1 and stored["consistent"] is True
    # the cache estimate: the first call reads nothing, an unchanged prefix is read back
    assert steps[0]["cached_tokens"] == 0
    assert steps[1]["cached_tokens"] == steps[0]["context_tokens"]
    assert 0.5 < totals["cache_hit"] < 1
    assert totals["cost"] is None  # the example's model has no known prices


def test_the_timeline_names_what_happened_and_no_progress_bar_off_a_terminal(cli: Run) -> None:
    out = cli("replay", EXAMPLE, "--window", "16k")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""  # no progress bar when stderr is not a terminal
    for words in ("call", "context", "pruned", "compacted", "overflows", "0 (contexts over"):
        assert words in out.stdout
    assert "compaction at call" in out.stdout
    assert "2 sessions, 1 compaction committed in a temporary SQLite store" in out.stdout


def test_prices_give_a_cost_estimate(cli: Run) -> None:
    data = _json(cli("replay", EXAMPLE, "--window", "16k", "--model", "openai/gpt-4.1", "--json"))
    pricing = data["sessions"][0]["limits"]["pricing"]
    assert pricing["input"] > 0
    steps = data["steps"]
    first = steps[0]
    expected = (
        first["context_tokens"] * pricing["input"] + first["output_tokens"] * pricing["output"]
    )
    assert first["cost"] == pytest.approx(expected / 1e6)
    assert data["totals"]["cost"] == pytest.approx(sum(s["cost"] for s in steps), abs=1e-5)


@pytest.mark.parametrize("window", [8_192, 12_288, 32_768])
def test_every_context_fits_the_input_budget_at_any_window(window: int) -> None:
    transcripts = load(EXAMPLE, None)
    data = asyncio.run(
        run_replay_async(transcripts, db=None, knobs=Knobs(), window=str(window), path="x")
    ).to_json()
    budget = data["sessions"][0]["budget"]
    assert all(s["context_tokens"] <= budget["input_budget"] for s in data["steps"])
    assert data["totals"]["overflows"] == 0
    assert data["totals"]["stored_consistent"]


def test_settings_change_the_replay() -> None:
    transcripts = load(EXAMPLE, None)

    def run(**knobs: Any) -> dict[str, Any]:
        data = asyncio.run(
            run_replay_async(transcripts, db=None, knobs=Knobs(**knobs), window="16k", path="x")
        ).to_json()
        totals: dict[str, Any] = data["totals"]
        return totals

    base = run()
    no_prune = run(prune=False)
    assert no_prune["prunes"] == 0 and no_prune["compactions"] > base["compactions"]
    eager = run(trigger=0.6, target=0.3)
    assert eager["compactions"] + eager["prunes"] > base["compactions"] + base["prunes"]
    assert eager["input_tokens"] < base["input_tokens"]  # smaller contexts on average


def test_a_shared_session_replays_within_budget(cli: Run, swebench_path: Path) -> None:
    data = _json(cli("replay", swebench_path, "--session", "3", "--window", "16k", "--json"))
    (session,) = data["sessions"]
    assert session["model"] == "google/gemini-3-pro-preview"
    assert session["limits"]["pricing"] is not None and data["totals"]["cost"] > 0
    assert data["totals"]["compactions"] >= 1
    assert all(s["context_tokens"] <= session["budget"]["input_budget"] for s in data["steps"])
    assert data["totals"]["overflows"] == 0


@pytest.mark.parametrize(
    ("path", "fmt", "calls"), [(CLAUDE_CODE, "claude-code", 4), (CODEX, "codex", 3)]
)
def test_agent_cli_sessions_replay(cli: Run, path: Path, fmt: str, calls: int) -> None:
    # the Claude Code session ends with a user message: one more call would answer it
    data = _json(cli("replay", path, "--window", "8k", "--json"))
    assert data["format"] == fmt
    assert data["totals"]["calls"] == calls
    assert [s["action"] for s in data["steps"]] == ["send"] * calls
    assert data["sessions"][0]["stored"]["consistent"]
    # the logs hold no system prompt or tool definitions, which the recorded counts include
    assert data["totals"]["hidden_prefix"] > 1_000
    assert data["totals"]["recoveries"] == 0
    assert "hidden prefix" in cli("replay", path, "--window", "8k").stdout


def test_a_model_summarizer_writes_the_summaries(cli: Run) -> None:
    summary = "\n\n".join(f"## {s.title}\nround_total must round half up." for s in SECTIONS)
    asked: list[str] = []

    def reply(request: RecordedRequest) -> str:
        asked.append(str(request.model))
        return summary

    with ProviderServer(context_window=200_000, max_output=8_192, replies=reply) as server:
        model = f"{server.base_url}/v1#summarizer-test"
        data = _json(cli("replay", EXAMPLE, "--window", "16k", "--summarizer", model, "--json"))
    assert data["summarizer"] == "llm:summarizer-test"
    compactions = data["sessions"][0]["compactions"]
    assert compactions and asked and set(asked) == {"summarizer-test"}
    assert all(c["summarizer"] == "llm:summarizer-test" for c in compactions)
    assert "round_total must round half up." in compactions[0]["summary"]


def test_a_fallback_and_its_reason_show_in_the_terminal_and_html_views(
    cli: Run, tmp_path: Path
) -> None:
    with ProviderServer(
        context_window=200_000, max_output=8_192, replies=lambda _r: "Sorry."
    ) as server:
        model = f"{server.base_url}/v1#summarizer-test"
        report = tmp_path / "report.html"
        out = cli(
            "replay",
            EXAMPLE,
            "--window",
            "16k",
            "--summarizer",
            model,
            "--summary-temperature",
            "0.3",
            "--timeline",
            "--report",
            str(report),
        )
        temperatures = {r.body.get("temperature") for r in server.requests}
    assert out.returncode == 0, out.stderr
    assert temperatures == {0.3}
    text = " ".join(out.stdout.split())
    assert "summary by extractive" in text
    assert "fallback from llm:summarizer-test: the reply has none of the section headings" in text
    html = report.read_text()
    assert "fallback from llm:summarizer-test: the reply has none of the section headings" in html


def test_a_summarizer_with_a_smaller_window_gets_requests_that_fit_it(cli: Run) -> None:
    """The summarizer's server has a 4k window, the conversation 16k: sized from its own
    window, no request is rejected and every summary is the model's."""
    summary = "\n\n".join(f"## {s.title}\nround_total must round half up." for s in SECTIONS)
    with ProviderServer(
        context_window=4_096, max_output=1_024, replies=lambda _r: summary
    ) as server:
        model = f"{server.base_url}/v1#small"
        data = _json(
            cli(
                "replay",
                EXAMPLE,
                "--window",
                "16k",
                "--summarizer",
                model,
                "--summary-window",
                "4k",
                "--json",
            )
        )
        statuses = [r.status for r in server.requests]
    compactions = data["sessions"][0]["compactions"]
    assert compactions and statuses and set(statuses) == {200}
    assert all(c["summarizer"] == "llm:small" and not c["fallback_reason"] for c in compactions)
    assert all(c["summary_usage"] and c["summary_usage"]["input"] > 0 for c in compactions)
    assert data["settings"]["summary_window"] == 4_096


def test_bad_input_names_the_line_and_exits_1(cli: Run, tmp_path: Path) -> None:
    missing = cli("replay", tmp_path / "nope.jsonl")
    assert missing.returncode == 1 and "cannot read" in missing.stderr
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], "{broken", lines[0]]) + "\n", encoding="utf-8")
    out = cli("replay", bad)
    assert out.returncode == 1
    assert "line 2" in out.stderr and "expected one JSON object per line" in out.stderr
    claude = tmp_path / "claude.jsonl"
    entries = CLAUDE_CODE.read_text(encoding="utf-8").splitlines()
    claude.write_text("\n".join([*entries[:3], '{"type": "user", "uuid": "u"}']) + "\n")
    out = cli("replay", claude)
    assert out.returncode == 1 and "line 4" in out.stderr and "message" in out.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--window", "lots"], "--window 'lots'"),
        (["--window", "16k", "--keep-recent", "50k"], "--keep-recent"),
        (["--trigger", "1.5"], "--trigger"),
        (["--format", "yaml"], "--input-format 'yaml'"),
        (["--input-format", "yaml"], "--input-format 'yaml'"),
        (["--session", "2"], "--session 2: the file holds 1 session"),
        (["--summarizer", "no-such-model"], "--summarizer 'no-such-model'"),
    ],
)
def test_bad_arguments_exit_2(args: list[str], words: str) -> None:
    # in-process (the same typer app the console script runs): argument errors are fast
    result = CliRunner().invoke(app, ["replay", str(EXAMPLE), *args])
    assert result.exit_code == 2, result.stderr
    assert words in " ".join(result.stderr.split())
    assert result.exception is None or isinstance(result.exception, SystemExit)


def _swebench_session(
    path: Path, task_words: int, *, sessions: int = 1, name: str = "case"
) -> Path:
    """A small mini-swe-agent file in ``tmp_path``: a task of ``task_words`` words, three calls."""
    lines = []
    for n in range(sessions):
        task = " ".join(f"word{i}" for i in range(task_words))
        messages = [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": f"Fix the bug. {task}"},
            {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls\n```"},
            {"role": "user", "content": "a.py b.py"},
            {"role": "assistant", "content": "THOUGHT: done\n\n```bash\necho done\n```"},
        ]
        lines.append(
            json.dumps(
                {
                    "instance_id": f"{name}-{n}",
                    "model": "google/gemini-3-pro-preview",
                    "messages": messages,
                }
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_replay_that_cannot_proceed_says_stopped_and_exits_1(cli: Run, tmp_path: Path) -> None:
    # the first task alone is larger than a 4k window's input budget: the replay stops at call 1
    big = _swebench_session(tmp_path / "big.jsonl", 3_000)
    out = cli("replay", big, "--window", "4k", "--json")
    assert out.returncode == 1
    assert "stopped" in out.stderr and "call 1" in out.stderr
    data = json.loads(out.stdout)
    (session,) = data["sessions"]
    stopped = session["stopped"]
    assert stopped["call"] == 1 and "minimal context" in stopped["reason"]
    budget = session["budget"]
    # the real budget of the 4k window, not zeros, and the sizes that did not fit
    assert 0 < budget["input_budget"] == stopped["limit"] < stopped["tokens"]
    assert stopped["window"] == 4_096
    assert data["totals"]["stopped"] == 1
    # prices come from the registry: a stopped call costs nothing, the total is still priced
    assert data["totals"]["cost"] == 0
    assert data["totals"]["input_tokens"] == 0  # the call that did not fit was not sent
    text = cli("replay", big, "--window", "4k")
    assert text.returncode == 1
    words = " ".join(text.stdout.split())
    assert "stopped" in words and "input budget 0" not in words
    assert f"input budget {budget['input_budget'] / 1024:.1f}k" in words
    assert "no prices known" not in words
    # a context over the window is an error too
    tiny = cli("replay", big, "--window", "1024")
    assert tiny.returncode == 1 and "over the window" in tiny.stderr


def test_whole_file_totals_count_stopped_sessions_and_keep_prices(cli: Run, tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.jsonl"
    _swebench_session(tmp_path / "a.jsonl", 20, sessions=2)
    _swebench_session(tmp_path / "b.jsonl", 3_000, name="big")
    small = (tmp_path / "a.jsonl").read_text(encoding="utf-8")
    mixed.write_text(small + (tmp_path / "b.jsonl").read_text(encoding="utf-8"))
    out = cli("replay", mixed, "--window", "4k", "--json")
    assert out.returncode == 1
    data = json.loads(out.stdout)
    totals = data["totals"]
    assert totals["sessions"] == 3 and totals["stopped"] == 1
    assert [s["stopped"] is None for s in data["sessions"]] == [True, True, False]
    assert totals["cost"] is not None and totals["cost"] > 0
    text = cli("replay", mixed, "--window", "4k")
    words = " ".join(text.stdout.split())
    assert "no prices known" not in words and "1 of 3 sessions stopped" in words


def test_a_wrong_format_or_an_empty_file_is_an_error(cli: Run, tmp_path: Path) -> None:
    out = cli("replay", CLAUDE_CODE, "--format", "codex")
    assert out.returncode == 1 and out.stdout == ""
    words = " ".join(out.stderr.split())
    assert str(CLAUDE_CODE) in words and "codex" in words and "no message" in words
    empty = tmp_path / "summaries.jsonl"
    empty.write_text(json.dumps({"type": "summary", "summary": "x", "leafUuid": "l"}) + "\n")
    out = cli("replay", empty)
    assert out.returncode == 1 and "no message" in out.stderr and "Traceback" not in out.stderr
    # a session of a multi-session file that holds no message, picked with --session
    two = tmp_path / "two.jsonl"
    sessions = [
        {"instance_id": "a", "messages": [{"role": "user", "content": "hi"}]},
        {"instance_id": "b", "messages": []},
    ]
    two.write_text("".join(json.dumps(s) + "\n" for s in sessions), encoding="utf-8")
    out = cli("replay", two, "--session", "2")
    assert out.returncode == 1 and "session 2 (b) holds no message" in out.stderr


def test_session_n_reads_only_that_session(cli: Run, tmp_path: Path) -> None:
    """``--session 2`` of a mini-swe-agent file reads line 2 alone: a broken line before or
    after it is never parsed (the whole file would be, without ``--session``)."""
    good = _swebench_session(tmp_path / "good.jsonl", 20, sessions=3)
    lines = good.read_text(encoding="utf-8").splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(["{not json", lines[1], "{neither"]) + "\n", encoding="utf-8")
    fmt = ("--input-format", "swebench-jsonl")
    out = cli("replay", broken, *fmt, "--session", "2", "--window", "16k", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["sessions"][0]["id"] == "case-1"
    whole = cli("replay", broken, *fmt, "--window", "16k")
    assert whole.returncode == 1 and "line 1" in whole.stderr
    beyond = cli("replay", good, "--session", "4", "--window", "16k")
    assert beyond.returncode == 2 and "holds 3 sessions" in beyond.stderr


def test_progress_lines_say_how_far_a_piped_replay_got(cli: Run, tmp_path: Path) -> None:
    three = _swebench_session(tmp_path / "three.jsonl", 20, sessions=3)
    out = cli("replay", three, "--window", "16k", "--progress", "--json")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("session ")]
    assert [line.split(":")[0] for line in lines] == [
        "session 1/3 case-0",
        "session 2/3 case-1",
        "session 3/3 case-2",
    ]
    assert "2 calls" in lines[0] and "0 overflows" in lines[0]
    quiet = cli("replay", three, "--window", "16k", "--json")
    assert not [line for line in quiet.stderr.splitlines() if line.startswith("session ")]


def test_a_replay_kept_with_db_reopens_sending_the_same_bytes(cli: Run, tmp_path: Path) -> None:
    """``--db`` keeps the replay as a conversation: reopened from that database, it sends the
    very request the replay's last call sent (its prune boundary and pruned outputs stored)."""
    from abridged.core.model import Message
    from abridged.formats.openai_chat import messages_to_openai
    from abridged.runtime import ContextManager
    from abridged.store import Store

    # the example without its recorded usage: the estimator's calibration against the
    # provider's reports is not stored, so a reopened conversation counts as a fresh one
    record = json.loads(EXAMPLE.read_text(encoding="utf-8").splitlines()[0])
    record["messages"] = [{k: v for k, v in m.items() if k != "usage"} for m in record["messages"]]

    def write(messages: list[dict[str, Any]]) -> Path:
        path = tmp_path / f"session-{len(messages)}.jsonl"
        path.write_text(json.dumps({**record, "messages": messages}) + "\n", encoding="utf-8")
        return path

    (transcript,) = load(write(record["messages"]), None)
    model = str(transcript.meta["model"])
    limits = limits_for(model, "16k", None)

    def manager(**store: Any) -> ContextManager:
        knobs = Knobs()
        return ContextManager(
            limits,
            model=model,
            budget=knobs.budget(),
            settings=knobs.compaction_settings(),
            **store,
        )

    # the last call of the replay whose context holds pruned outputs: the transcript is cut
    # there, so that the stored conversation ends where that call did
    steps = list(manager().replay(transcript.messages))
    last = max((s for s in steps if s.state.pruned), key=lambda s: s.index)
    sent = json.dumps(messages_to_openai(last.context))

    db = tmp_path / "kept.db"
    cut = write(record["messages"][: last.index])
    data = _json(cli("replay", cut, "--window", "16k", "--db", db, "--json"))
    (session,) = data["sessions"]
    assert data["totals"]["calls"] == steps.index(last) + 1
    assert data["totals"]["prunes"] >= 1

    async def reopen() -> str:
        store = Store(str(db))
        try:
            cid = session["conversation_id"]
            info = await store.open_conversation(cid)
            history = [Message.system(str(info.settings["system"]))]
            history += [m.message for m in await store.stored_messages(cid)]
            prepared = await manager(store=store, conversation_id=cid).aprepare(history)
            return json.dumps(messages_to_openai(prepared.messages))
        finally:
            await store.close()

    assert asyncio.run(reopen()) == sent


def test_a_hidden_prefix_replay_counts_a_recovery_only_when_there_was_one() -> None:
    """A Codex-like rollout (the first call reports a 17k hidden prefix, later reports grow
    faster than the messages), replayed as ``abridged replay --window 128k --max-output 64k``
    does (store-backed, input budget 61.4k): each emergency stage's printed figures show a
    context above the input budget, and the replay counts as recoveries exactly the calls whose
    context was above it before the emergency path ran."""
    from abridged.formats.transcripts import Transcript
    from tests.runtime.test_hidden_prefix import invisible_growth_transcript

    transcript = Transcript("codex-like", tuple(invisible_growth_transcript(17_000, 2_000)), "x")
    data = asyncio.run(
        run_replay_async(
            [transcript], db=None, knobs=Knobs(), window="128k", max_output="64k", path="x"
        )
    ).to_json()
    budget = data["sessions"][0]["budget"]["input_budget"]
    steps = data["steps"]
    for step in steps:
        for text in step["events"]:
            if text.startswith("Compacting (emergency:"):
                # the figures it prints are the ones that sent it there
                m = re.search(r"context (\S+) > input budget (\S+)$", text)
                assert m is not None, text
                printed = [parse_token_size(v, name="x") for v in m.groups()]
                assert printed[0] > printed[1], text
        if step["action"] == "recover":
            assert step["tokens_before"] > budget, step
    recovered = [s for s in steps if s["action"] == "recover"]
    assert data["totals"]["recoveries"] == len(recovered)
    assert all(s["context_tokens"] <= budget for s in steps)
    assert any(s["action"] == "compact" for s in steps)  # the trigger was reached
