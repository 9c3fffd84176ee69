"""Tests of ``bench/heldout_canaries.py``: the benchmark's rules hold on every drawn set, each rule
of its ``check`` can fail, the sets are varied and reproducible, and ``bench/retention.py
--generator`` runs on them."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bench.support import BENCH, ROOT, load_bench

H = load_bench("heldout_canaries")
MARKERS = ("correction", "instead", "no longer", "update", "actually", "changed")


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**63),
    variant=st.integers(min_value=0, max_value=500),
    count=st.integers(min_value=6, max_value=H.MAX_COUNT),
)
def test_every_set_keeps_the_benchmarks_rules(seed: int, variant: int, count: int) -> None:
    made = H.generate(seed, count, variant)
    assert made == H.generate(seed, count, variant)  # deterministic
    assert (made["seed"], made["variant"]) == (seed, variant)
    canaries = made["canaries"]
    assert len(canaries) == count
    by_id = {c["id"]: c for c in canaries}
    ats = [c["at"] for c in canaries]
    assert ats == sorted(ats) and len(set(ats)) == count and ats[0] >= 0 and ats[-1] < 1
    corrections = [c for c in canaries if c.get("supersedes")]
    assert len(corrections) == max(1, round(count / 4))
    assert sum(1 for c in canaries if c.get("coexists")) == 2 * max(1, round(count / 12))
    for c in canaries:
        assert c["keep"] and all(k in c["text"] for k in c["keep"])
        named_by = {d["id"] for d in canaries if d.get("supersedes") == c["id"]}
        for other in canaries:
            if other["id"] != c["id"] and other["id"] not in named_by:
                assert not any(k in other["text"] for k in c["keep"]), (c, other)
        if c.get("supersedes"):
            old = by_id[c["supersedes"]]
            assert old["at"] < c["at"] and old["subject"] == c["subject"]
            assert c["kind"] == "correction" and old["kind"] != "correction"
            assert not set(old["keep"]) & set(c["keep"])
        if c.get("coexists"):
            mate = by_id[c["coexists"]]
            assert mate["coexists"] == c["id"] and mate["template"] == c["template"]
            assert mate["subject"] != c["subject"] and "supersedes" not in c


def _first_with(made: dict[str, Any], key: str) -> dict[str, Any]:
    return next(c for c in made["canaries"] if c.get(key))


def _break_keep(made: dict[str, Any]) -> None:
    made["canaries"][0]["keep"] = ["no such value"]


def _leak_keep(made: dict[str, Any]) -> None:
    first = made["canaries"][0]
    other = next(c for c in made["canaries"][1:] if c.get("supersedes") != first["id"])
    other["text"] += " " + first["keep"][0]


def _supersede_later(made: dict[str, Any]) -> None:
    fix = _first_with(made, "supersedes")
    fix["supersedes"] = made["canaries"][-1]["id"]


def _supersede_other_subject(made: dict[str, Any]) -> None:
    fix = _first_with(made, "supersedes")
    fix["subject"] = "something else"


def _lonely_pair(made: dict[str, Any]) -> None:
    _first_with(made, "coexists")["coexists"] = "nobody"


def _unordered(made: dict[str, Any]) -> None:
    made["canaries"][1]["at"] = made["canaries"][0]["at"]


def _unknown_style(made: dict[str, Any]) -> None:
    made["canaries"][0]["style"] = "haiku"


@pytest.mark.parametrize(
    "spoil",
    [
        _break_keep,
        _leak_keep,
        _supersede_later,
        _supersede_other_subject,
        _lonely_pair,
        _unordered,
        _unknown_style,
    ],
)
def test_check_refuses_a_set_that_breaks_a_rule(spoil: Callable[[dict[str, Any]], None]) -> None:
    made = H.generate(2027, 24, 3)
    H.check(made)
    spoiled = copy.deepcopy(made)
    spoil(spoiled)
    with pytest.raises(ValueError, match="seed 2027 variant 3"):
        H.check(spoiled)


def test_sets_are_varied_across_sessions() -> None:
    sets = [H.generate(424242, 24, v)["canaries"] for v in range(120)]
    flat = [c for s in sets for c in s]
    templates = {c["template"] for c in flat if c["kind"] != "correction"}
    ways = {c["template"] for c in flat if c["kind"] == "correction"}
    assert len(templates) >= 50 and len(ways) >= 15
    assert len({c["style"] for c in flat}) >= 12
    assert {c["kind"] for c in flat} == set(H.KINDS)
    # a correction mostly says the new value without announcing that it is one
    marked = [c for c in flat if c["kind"] == "correction" and _marked(c["text"])]
    assert len(marked) < 0.4 * sum(1 for c in flat if c["kind"] == "correction")
    # values are drawn fresh: sessions share almost none
    first, second = ({k for c in s for k in c["keep"]} for s in sets[:2])
    assert len(first & second) <= 2
    assert H.generate(1, 24, 0) != H.generate(2, 24, 0)


def _marked(text: str) -> bool:
    return any(m in text.lower() for m in MARKERS)


def test_counts_outside_the_range_are_refused() -> None:
    with pytest.raises(ValueError, match="count"):
        H.generate(1, 5)
    with pytest.raises(ValueError, match="count"):
        H.generate(1, H.MAX_COUNT + 1)


def test_main_prints_the_set() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "heldout_canaries.py"),
            "--seed",
            "3",
            "--count",
            "7",
            "--variant",
            "2",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(done.stdout) == H.generate(3, 7, 2)


def test_retention_runs_on_the_held_out_sets(swebench_path: Path) -> None:
    generator = BENCH / "heldout_canaries.py"
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "retention.py"),
            *("--no-results", "--json", "--data", str(swebench_path)),
            *("--generator", str(generator), "--seed", "11", "--limit", "2"),
            *("--placements", "tool", "--no-langchain", "--jobs", "1"),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["seed"] == 11 and "heldout_canaries.py" in out["canary_source"]
    assert out["sessions_with_5"] >= 1
    survival = out["survival_after_5_by_placement"]["tool"]
    assert survival is not None and 0.0 <= survival <= 1.0
    by_style = out["survival_after_5_by_placement_style"]["tool"]
    assert by_style and set(by_style) <= set(H.STYLES)
    assert out["coexisting_after_5_by_placement"]["tool"] is not None
    stale = out["by_placement"]["tool"]["methods"]["abridged"]
    assert stale["superseded_excluded"] > 0
    # made-up values: none of them is in the recorded sessions by chance
    assert out["ambiguous_pairs"] <= 2
