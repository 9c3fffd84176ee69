"""Tests of ``bench/retention.py``: canary insertion and scoring, and one run as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from abridged.core.model import Message, ToolCall
from abridged.core.summary import summary_message
from tests.bench.support import BENCH, bench_usage_error, load_bench

R = load_bench("retention")


def _session(steps: int, output: str = "ok") -> list[Message]:
    """System, task, then ``steps`` steps of a bash call (every third one edits a file) and its
    result."""
    messages = [Message.system("You are an agent."), Message.user("Fix the bug in parser.py.")]
    for k in range(steps):
        command = f"sed -i 's/x/y/' src/mod_{k}.py" if k % 3 == 0 else f"cat src/mod_{k}.py"
        call = ToolCall(f"c{k}", "bash", json.dumps({"command": command}))
        messages.append(Message.assistant(f"Reading module {k}.", tool_calls=[call]))
        messages.append(Message.tool(f"c{k}", f"{output} {k}", name="bash"))
    return messages


def _canary(cid: str, at: float, keep: str, kind: str = "identifier", **kw: str) -> object:
    return R.Canary(cid, kind, at, f"Remember {keep} for later.", (keep,), kw.get("supersedes"))


def test_canaries_go_after_the_step_at_their_fraction() -> None:
    original = _session(10)
    canaries = [
        _canary("a", 0.0, "ALPHA-1"),
        _canary("b", 0.25, "BRAVO-2"),
        _canary("c", 0.25, "CHARLIE-3"),
        _canary("d", 0.85, "DELTA-4"),
    ]
    seeded = R.insert_canaries(original, canaries)
    assert seeded.steps == 10
    assert len(seeded.messages) == len(original) + 4
    # before the first step: right after system + task
    assert seeded.positions["a"] == 2
    # floor(0.25 * 10) = 2 steps before b and c (2 messages each), in file order
    assert seeded.positions["b"] == 2 + 1 + 4
    assert seeded.positions["c"] == seeded.positions["b"] + 1
    # floor(0.85 * 10) = 8 steps before d
    assert seeded.positions["d"] == 2 + 3 + 16
    for cid, pos in seeded.positions.items():
        m = seeded.messages[pos]
        assert m.role == "user" and m.text.startswith("Remember") and cid in m.id
    # the recorded messages keep their order, and no step is split
    assert [m for m in seeded.messages if not m.id.startswith("canary-")] == original
    assert seeded.messages[seeded.positions["b"] - 1].role == "tool"
    assert seeded.messages[seeded.positions["c"] + 1].role == "assistant"


def test_scoring_kept_tail_dropped_and_summary() -> None:
    canaries = [_canary("early", 0.1, "ZEBRA-123"), _canary("late", 0.6, "QUOKKA-77")]
    seeded = R.insert_canaries(_session(10), canaries)
    index = R.KeepIndex(canaries)
    pos = seeded.positions
    call = len(seeded.messages)
    # a context that still holds both canary messages verbatim (the kept tail): both survive
    present = index.of_context(seeded.messages)
    scores = R.score_context(present, canaries, pos, cut=call, said_before=call)
    assert {s.canary.id: s.status for s in scores} == {"early": "kept", "late": "kept"}
    # the early one dropped with no summary: lost; the late one still in the tail: kept
    tail = [seeded.messages[0], *seeded.messages[pos["early"] + 1 :]]
    scores = R.score_context(index.of_context(tail), canaries, pos, cut=call, said_before=call)
    assert {s.canary.id: s.status for s in scores} == {"early": "lost", "late": "kept"}
    # the same cut with a summary that carries the early value: kept again
    summary = summary_message("## User intent and requests\n- Remember ZEBRA-123 for later.")
    context = [seeded.messages[0], summary, *seeded.messages[pos["early"] + 1 :]]
    scores = R.score_context(index.of_context(context), canaries, pos, cut=call, said_before=call)
    assert {s.canary.id: s.status for s in scores} == {"early": "kept", "late": "kept"}
    # only canaries inserted before the cut are scored
    scores = R.score_context(present, canaries, pos, cut=pos["late"], said_before=call)
    assert [s.canary.id for s in scores] == ["early"]


def test_every_keep_string_must_be_present() -> None:
    canary = R.Canary("d6", "identifier", 0.1, "Ticket OPS-1 ships in 7.1.", ("OPS-1", "7.1"))
    index = R.KeepIndex([canary])
    half = [Message.user("Only OPS-1 here.")]
    scores = R.score_context(index.of_context(half), [canary], {"d6": 0}, cut=1, said_before=1)
    assert scores[0].status == "lost"
    both = [Message.user("OPS-1 and 7.1")]
    scores = R.score_context(index.of_context(both), [canary], {"d6": 0}, cut=1, said_before=1)
    assert scores[0].status == "kept"


def test_superseded_canary_is_not_required_once_corrected() -> None:
    old = _canary("d15", 0.1, "release/2026-q4", kind="update")
    new = _canary("d16", 0.5, "release/2026-q4-hotfix", kind="update", supersedes="d15")
    canaries = [old, new]
    index = R.KeepIndex(canaries)
    positions = {"d15": 3, "d16": 8}
    only_new = index.of_context([Message.user("use release/2026-q4-hotfix")])
    # the correction was said before this call: the old value is not required, and not stale
    # (its string is a prefix of the new one, which does not count)
    scores = {
        s.canary.id: s
        for s in R.score_context(only_new, canaries, positions, cut=10, said_before=10)
    }
    assert scores["d15"].status == "superseded" and not scores["d15"].stale
    assert scores["d16"].status == "kept"
    # the old value still in the context next to the correction: reported stale
    both = index.of_context(
        [Message.user("branch is release/2026-q4."), Message.user("release/2026-q4-hotfix")]
    )
    scores = {
        s.canary.id: s for s in R.score_context(both, canaries, positions, cut=10, said_before=10)
    }
    assert scores["d15"].status == "superseded" and scores["d15"].stale
    # before the correction was said, the old value is required like any canary
    lost = index.of_context([Message.user("the branch was mentioned earlier")])
    scores = {
        s.canary.id: s for s in R.score_context(lost, canaries, positions, cut=5, said_before=6)
    }
    assert scores["d15"].status == "lost" and "d16" not in scores


def test_last_n_fits_every_call() -> None:
    sizes = [100.0, 50.0, 400.0, 300.0, 200.0, 100.0]
    # head 1 (100); the call at 6 with the last 3 messages is 100 + 600 = 700
    assert R.last_n_for(1, sizes, [3, 6], 700) == 3
    assert R.last_n_for(1, sizes, [3, 6], 10_000) == 5
    # nothing fits but the head: at least one message is kept
    assert R.last_n_for(1, sizes, [6], 150) == 1


def test_session_replay_keeps_canaries_the_baseline_drops() -> None:
    """A session that compacts several times: abridged keeps the early canary through every
    compaction (in the summary); keeping the last N messages drops it."""
    canaries = [_canary("early", 0.05, "ZEBRA-123"), _canary("mid", 0.5, "QUOKKA-77")]
    output = "\n".join(f"line {i}: value = compute(x_{i}, y_{i})  # tokens" for i in range(120))
    original = _session(30, output)
    result = R.run_session(
        "hand-made",
        None,
        original,
        canaries,
        keep_index=R.KeepIndex(canaries),
        ruler=R.Ruler(),
        trim=None,
    )
    assert len(result.cycles) >= 5
    figures = R.aggregate([result], canaries)
    assert figures["sessions_with_5"] == 1
    ours = figures["methods"]["abridged"]
    base = figures["methods"]["last_n"]
    assert ours["contexts_over_budget"] == 0
    assert all(c["share"] == 1.0 for c in ours["survival_by_kind"]["all"].values())
    assert ours["survival_after_5"] == 1.0 and ours["retention_every_call"] == 1.0
    # the baseline lost the early canary by then (the mid one may still be in its last N)
    assert base["survival_after_5"] <= 0.5 and base["retention_every_call"] < 1.0
    # the summary names the files modified before each cut
    assert figures["files_modified_before_cut"] > 0
    assert figures["files_missing_from_summary"] == 0


def _longest_session(source: Path, target: Path) -> None:
    lines = [ln for ln in source.read_text(encoding="utf-8").splitlines() if ln.strip()]
    target.write_text(max(lines, key=lambda ln: len(json.loads(ln)["messages"])) + "\n", "utf-8")


def test_benchmark_runs_and_reports(swebench_path: Path, tmp_path: Path) -> None:
    data = tmp_path / "one.jsonl"
    _longest_session(swebench_path, data)
    results = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "retention.py"),
            "--data",
            str(data),
            "--json",
            "--results",
            str(results),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["sessions"] == 1 and out["sessions_with_5"] == 1
    assert 0.0 <= out["survival_after_5"] <= 1.0
    # by default the canaries are generated from a fresh seed, printed to reproduce the run
    assert out["canary_source"] == "generated" and isinstance(out["seed"], int)
    assert f"--seed {out['seed']}" in done.stdout
    # one pass per placement; the headline survival is the lowest of them
    assert set(out["by_placement"]) == {"user", "tool", "assistant"}
    assert out["survival_after_5"] == min(out["survival_after_5_by_placement"].values())
    assert all(p["sessions_with_5"] == 1 for p in out["by_placement"].values())
    for cols in out["survival_by_kind"].values():
        assert all(v is None or 0.0 <= v <= 1.0 for v in cols.values())
    assert out["contexts_over_budget"] == 0 and out["engine_contexts_over_budget"] == 0
    assert out["max_context_ratio"] <= 1.0
    assert set(out["baselines"]) == {"last_n", "trim_messages"}
    for row in out["baselines"].values():
        assert 0.0 <= row["survival_after_5"] <= 1.0
        assert row["contexts"] == out["calls"]
    assert out["files_missing_from_summary"] <= out["files_modified_before_cut"]
    own = out["own_text_marks"]  # one figure per compaction of the three passes
    assert own["summaries"] == out["compactions"] and 0 <= own["with_inline"] <= own["summaries"]
    section = results.read_text(encoding="utf-8")
    assert "marks on the session's own text" in section
    assert section.count("## retention") == 1 and "trim_messages" in section
    assert "| method | user | tool | assistant | min |" in section
    assert "| abridged (extractive summary) | assistant |" in section


def test_own_text_marks_count_marks_on_what_no_canary_said() -> None:
    canaries = [
        R.Canary(
            "a", "update", 0.5, "Deploy from release/7.3, not release/7.2.", ("release/7.3",), "b"
        )
    ]
    summary = "\n".join(
        [
            "- If `obj` is `(was None)` we skip it.",  # in place, the session's own
            "- branch: release/7.3 (was release/7.2)",  # a canary's value: not counted
            "- checks_class = AdminChecks (was BaseChecks)",  # at a line's end
            "- 618 pattern_name = x (was delete_view).",
        ]
    )
    assert R.own_text_marks(summary, canaries) == (1, 2)
    assert R.own_text_marks("no marks at all", canaries) == (0, 0)


@pytest.mark.parametrize("limit", ["0", "x"])
def test_bad_limit_is_refused(limit: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert "--limit" in bench_usage_error("retention", ["--limit", limit, "--no-results"], capsys)
