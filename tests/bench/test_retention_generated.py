"""Tests of ``bench/retention.py`` with generated canaries (``--seed``): each session its own
reproducible set, figures by style, kind and template, pairs that both hold, and the fixed
canary files still running as regression sets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from abridged.core.model import Message
from tests.bench.support import BENCH, bench_main, bench_usage_error, load_bench
from tests.bench.test_retention_bench import R, _session

G = load_bench("canary_generator")


def test_a_correction_naming_the_old_value_is_not_stale_by_itself() -> None:
    old = R.Canary("a", "path", 0.1, "Logs go to /var/log/zu/kelo.log.", ("/var/log/zu/kelo.log",))
    new = R.Canary(
        "b",
        "correction",
        0.5,
        "Forget /var/log/zu/kelo.log - the log file is /var/log/zu/mira.log.",
        ("/var/log/zu/mira.log",),
        supersedes="a",
    )
    index = R.KeepIndex([old, new])
    positions = {"a": 1, "b": 3}

    def stale(*texts: str) -> bool:
        present = index.of_context([Message.user(t) for t in texts])
        scores = R.score_context(present, [old, new], positions, cut=5, said_before=5)
        return bool(next(s for s in scores if s.canary.id == "a").stale)

    # the correction quoted whole names the old value only to replace it
    assert not stale(new.text)
    assert not stale(f"Tool output\n{new.text}\nmore output")
    # the old value stated on its own, beside the correction, is still stale
    assert stale(new.text, "the log file is /var/log/zu/kelo.log")
    assert stale(old.text, new.text)


def test_each_session_gets_its_own_reproducible_set() -> None:
    source = R.CanarySource(seed=41, count=12)
    first = source.for_session(0)
    assert first == R.CanarySource(seed=41, count=12).for_session(0)
    assert first == R.canaries_from(G.generate(41, 12, variant=0))
    second = source.for_session(1)
    assert {k for c in first for k in c.keep}.isdisjoint({k for c in second for k in c.keep})
    assert all(c.style in G.STYLES and c.template for c in first)
    # a file gives every session the same canaries
    path = BENCH / "canaries-second-set.json"
    fixed = R.CanarySource(path=path)
    assert fixed.for_session(0) == fixed.for_session(7) == R.load_canaries(path)


def test_another_generator_file_makes_the_canaries(tmp_path: Path) -> None:
    made = tmp_path / "other_generator.py"
    made.write_text(
        "from dataclasses import dataclass\n"
        "@dataclass\n"
        "class Seen:\n"
        "    seed: int\n"
        "def generate(seed, count, variant=0):\n"
        "    value = f'QZ-{Seen(seed).seed}-{variant}'\n"
        "    return {'canaries': [{'id': 'x', 'kind': 'identifier', 'at': 0.5,\n"
        "        'text': f'The ticket is {value}.', 'keep': [value], 'style': 'sentence'}]}\n",
        encoding="utf-8",
    )
    source = R.CanarySource(seed=3, count=6, generator=made)
    assert [c.keep for c in source.for_session(2)] == [("QZ-3-2",)]
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="defines no generate"):
        R.CanarySource(seed=3, generator=empty).for_session(0)


def test_figures_by_style_kind_template_and_pairs() -> None:
    canaries = [
        R.Canary("a", "path", 0.05, "scratch: /srv/scratch/zobe-4411", ("/srv/scratch/zobe-4411",),
                 style="chat", template="scratch_dir"),
        R.Canary("b", "identifier", 0.1, "| ticket_docs | QX-77341 | per ops |", ("QX-77341",),
                 style="table", template="ticket", coexists="c"),
        R.Canary("c", "identifier", 0.2, "The crash is tracked as KV-90210.", ("KV-90210",),
                 style="sentence", template="ticket", coexists="b"),
    ]  # fmt: skip
    output = "\n".join(f"line {i}: value = compute(x_{i}, y_{i})  # tokens" for i in range(120))
    result = R.run_session(
        "hand-made",
        None,
        _session(30, output),
        canaries,
        keep_index=R.KeepIndex(canaries),
        ruler=R.Ruler(),
        trim=None,
    )
    assert len(result.cycles) >= 5 and result.canaries == canaries
    ours = R.aggregate([result], [])["methods"]["abridged"]
    assert set(ours["survival_after_5_by_style"]) == {"chat", "table", "sentence"}
    assert all(cell["n"] == 1 for cell in ours["survival_after_5_by_style"].values())
    assert set(ours["survival_after_5_by_kind"]) == {"path", "identifier"}
    assert ours["survival_after_5_by_kind"]["identifier"]["n"] == 2
    assert set(ours["survival_after_5_by_template"]) == {"scratch_dir", "ticket"}
    assert set(ours["survival_after_5_by_kind_style"]) == {
        "path/chat",
        "identifier/table",
        "identifier/sentence",
    }
    assert ours["coexisting_after_5_n"] == 2
    assert ours["coexisting_after_5"] == ours["survival_after_5_by_template"]["ticket"]["share"]


def _longest(source: Path, target: Path) -> Path:
    lines = [ln for ln in source.read_text(encoding="utf-8").splitlines() if ln.strip()]
    target.write_text(max(lines, key=lambda ln: len(json.loads(ln)["messages"])) + "\n", "utf-8")
    return target


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    out, printed = bench_main("retention", ["--no-results", "--json", *args], capsys)
    assert "--seed" in printed or out["seed"] is None
    return out


def test_a_seed_reproduces_a_generated_run(
    swebench_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(_longest(swebench_path, tmp_path / "one.jsonl"))
    args = ("--data", data, "--seed", "123", "--placements", "tool", "--no-langchain")
    out = _run(capsys, *args, "--jobs", "1")
    again = _run(capsys, *args, "--jobs", "2")
    out.pop("seconds"), again.pop("seconds")
    for p in (out, again):
        for row in p["by_placement"].values():
            row.pop("seconds", None)
    assert out == again
    assert out["seed"] == 123 and out["canary_source"] == "generated"
    assert out["canary_count"] == 24 and out["sessions_with_5"] == 1
    by_style = out["survival_after_5_by_placement_style"]["tool"]
    assert by_style and set(by_style) <= set(G.STYLES)
    assert all(v is None or 0.0 <= v <= 1.0 for v in by_style.values())
    assert set(out["survival_after_5_by_placement_kind"]["tool"]) <= set(G.KINDS)
    kind_style = out["survival_after_5_by_placement_kind_style"]["tool"]
    scored = {
        k for k, v in out["survival_after_5_by_placement_kind"]["tool"].items() if v is not None
    }
    assert {k.split("/")[0] for k in kind_style} == scored
    assert {k.split("/")[1] for k in kind_style} == {
        k for k, v in by_style.items() if v is not None
    }
    assert set(out["baselines"]["last_n"]["survival_after_5_by_style"]) == set(
        out["survival_after_5_by_style"]
    )
    assert out["coexisting_after_5_by_placement"]["tool"] is not None
    summarized = out["stale_summarized_by_placement"]["tool"]
    assert summarized is None or 0.0 <= summarized <= 1.0
    tool = out["by_placement"]["tool"]["methods"]["abridged"]
    assert tool["superseded_summarized"] <= tool["superseded_excluded"]
    assert tool["superseded_stale_summarized"] <= tool["superseded_stale_in_context"]
    # generated values are made up: none occurs in the recorded session by chance
    assert out["ambiguous_pairs"] == 0
    # another seed plants other facts
    other = _run(capsys, "--data", data, "--seed", "124", "--placements", "tool", "--no-langchain")
    assert other["survival_after_5_by_template"] != out["survival_after_5_by_template"] or (
        other["by_placement"]["tool"]["superseded_excluded"]
        != out["by_placement"]["tool"]["superseded_excluded"]
    )


def test_a_canary_file_still_runs_as_a_regression_set(
    swebench_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(_longest(swebench_path, tmp_path / "one.jsonl"))
    path = BENCH / "canaries-second-set.json"
    out = _run(
        capsys, "--data", data, "--canaries", str(path), "--placements", "user", "--no-langchain"
    )
    assert out["seed"] is None and out["canary_source"] == str(path)
    assert out["canary_count"] == len(R.load_canaries(path))
    assert out["survival_after_5_by_style"] == {}  # the fixed files have no styles
    assert out["sessions_with_5"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seed", "3", "--canaries", "x.json"], "--seed"),
        (["--canary-count", "5"], "--canary-count"),
    ],
)
def test_bad_canary_options_are_refused(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert message in bench_usage_error("retention", ["--no-results", *args], capsys)
