"""Tests of ``bench/heldout_canaries_e.py``, the fifth held-out canary generator: reproducible,
the asked count, every template, kind, style and correction phrasing in a block of sessions,
keep strings that only their own fact holds, corrections and pairs that point at facts of the
same set, values absent from the recorded sessions, and a tiny ``bench/retention.py`` run."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from abridged.core.model import Message
from tests.bench.support import BENCH, bench_main, load_bench

E = load_bench("heldout_canaries_e")
R = load_bench("retention")

SEEDS = (0, 1, 2)
MARKERS = ("correction", "actually", "instead", "supersede", "update:", "changed to")


def _canaries(seed: int, variant: int, count: int = 24) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = E.generate(seed, count, variant=variant)["canaries"]
    return out


def _block(seed: int, count: int = 24, first: int = 0) -> list[list[dict[str, Any]]]:
    return [_canaries(seed, v, count) for v in range(first, first + E.BLOCK)]


def test_a_seed_and_variant_reproduce_their_set() -> None:
    for seed, variant in [(0, 0), (3, 5), (41, 17)]:
        assert E.generate(seed, 24, variant) == E.generate(seed, 24, variant=variant)
    base = _canaries(7, 2)
    assert base != _canaries(7, 3)
    assert base != _canaries(8, 2)
    keeps = {k for c in base for k in c["keep"]}
    assert keeps.isdisjoint({k for c in _canaries(8, 2) for k in c["keep"]})
    # what the benchmark reads of it
    parsed = R.canaries_from(E.generate(7, 24, 2))
    assert [c.id for c in parsed] == [c["id"] for c in base]
    assert all(c.style in E.STYLES and c.kind in E.KINDS and c.template for c in parsed)


@pytest.mark.parametrize("count", [1, 2, 6, 7, 13, 24, 40])
def test_the_asked_count(count: int) -> None:
    for variant in (0, 5, 15, 16):
        canaries = _canaries(4, variant, count)
        assert len(canaries) == count
        assert len({c["id"] for c in canaries}) == count
        ats = [c["at"] for c in canaries]
        assert ats == sorted(ats) and all(0.0 < a < 1.0 for a in ats)
    assert E.generate(4, 0, 0)["canaries"] == []


def test_the_inventory() -> None:
    assert len(E.SINGLES) >= 40
    assert len(E.PHRASINGS) >= 14
    assert len(E.STYLES) >= 10
    assert len(E.TEMPLATES) == len(set(E.TEMPLATES))
    fact_kinds = {s.kind for s in E.SINGLES} | {c.old_kind for c in E.CORRECTIONS}
    assert fact_kinds | {"correction"} == set(E.KINDS)
    for kind in ("constraint", "prohibition", "preference", "identifier", "decision"):
        assert sum(s.kind == kind for s in E.SINGLES) >= 3, kind
    for kind in ("quantity", "path", "version", "owner"):
        assert sum(s.kind == kind for s in E.SINGLES) >= 3, kind
    styles = {s.style for s in E.SINGLES}
    assert styles == set(E.STYLES)
    assert {c.style for c in E.CORRECTIONS} <= set(E.STYLES)
    assert len({c.style for c in E.CORRECTIONS}) >= 10
    assert E.PAIRS


@pytest.mark.parametrize(("seed", "count", "first"), [(0, 24, 0), (9, 24, 16), (2, 8, 0)])
def test_a_block_of_sessions_uses_every_template(seed: int, count: int, first: int) -> None:
    block = _block(seed, count, first)
    flat = [c for session in block for c in session]
    assert {c["template"] for c in flat} == set(E.TEMPLATES)
    assert {c["kind"] for c in flat} == set(E.KINDS)
    assert {c["style"] for c in flat} == set(E.STYLES)
    phrasings = {c["template"] for c in flat if c["kind"] == "correction"}
    assert phrasings == set(E.PHRASINGS)
    assert sum(1 for c in flat if c.get("coexists")) >= 2 * len(E.PAIRS)
    # spread: no template crowds a block
    uses = Counter(c["template"] for c in flat)
    assert max(uses.values()) <= 2 * min(uses.values()) + 2


def test_most_corrections_carry_no_marker_word() -> None:
    marked: set[str] = set()
    unmarked: set[str] = set()
    for session in _block(5):
        for c in session:
            if c["kind"] == "correction":
                lowered = c["text"].lower()
                has = any(m in lowered for m in MARKERS)
                (marked if has else unmarked).add(c["template"])
    assert len(unmarked - marked) >= 14
    assert len(marked) <= 2


def test_keep_strings_belong_to_their_own_fact() -> None:
    everywhere: dict[str, tuple[int, int]] = {}
    for seed in SEEDS:
        for variant in range(E.BLOCK):
            canaries = _canaries(seed, variant)
            by_id = {c["id"]: c for c in canaries}
            for c in canaries:
                assert c["keep"] and all(k in c["text"] for k in c["keep"]), c
                for k in c["keep"]:
                    assert len(k) >= 5, k
                    for other in canaries:
                        if other is c or other.get("supersedes") == c["id"]:
                            continue
                        assert k not in other["text"], (k, c["template"], other["template"])
                    # a value does not come back in another session either
                    assert everywhere.setdefault(k, (seed, variant)) == (seed, variant), k
            # a correction may quote the value it replaces, nothing else's
            for c in canaries:
                if c.get("supersedes"):
                    old = by_id[c["supersedes"]]
                    assert not any(k in old["text"] for k in c["keep"])


def test_corrections_and_pairs_point_inside_their_set() -> None:
    seen_pairs = seen_corrections = 0
    for seed in SEEDS:
        for variant in range(E.BLOCK):
            canaries = _canaries(seed, variant)
            by_id = {c["id"]: c for c in canaries}
            for c in canaries:
                if c["kind"] == "correction":
                    seen_corrections += 1
                    old = by_id[c["supersedes"]]
                    assert old["kind"] != "correction" and not old.get("supersedes")
                    assert old["at"] < c["at"]
                    assert old["template"] == f"{c['template']}/old"
                    assert set(old["keep"]).isdisjoint(c["keep"])
                else:
                    assert "supersedes" not in c
                if c.get("coexists"):
                    seen_pairs += 1
                    other = by_id[c["coexists"]]
                    assert other["coexists"] == c["id"] and other["id"] != c["id"]
                    assert other["template"] == c["template"] and other["kind"] == c["kind"]
                    assert "supersedes" not in c and "supersedes" not in other
    assert seen_corrections and seen_pairs


def test_the_benchmark_reads_corrections_as_intended() -> None:
    """A correction quoting the old value does not make it stale by itself; the first fact
    beside it does; a pair's facts are both required, neither superseded."""
    canaries = R.canaries_from(E.generate(3, 24, 1))
    by_id = {c.id: c for c in canaries}
    index = R.KeepIndex(canaries)
    positions = {c.id: i for i, c in enumerate(canaries)}
    end = len(canaries)
    checked = 0
    for new in canaries:
        if not new.supersedes:
            continue
        old = by_id[new.supersedes]

        def stale(*texts: str, old_id: str = old.id) -> bool:
            present = index.of_context([Message.user(t) for t in texts])
            scores = R.score_context(present, canaries, positions, cut=end, said_before=end)
            found = next(s for s in scores if s.canary.id == old_id)
            assert found.status == "superseded"
            return bool(found.stale)

        # quoted whole inside other output, the correction names the old value only to
        # replace it; the first fact stated beside it is still current
        assert not stale(f"<output>\nok\n{new.text}\ndone\n</output>")
        assert stale(old.text, new.text)
        checked += 1
    assert checked
    every = [c.text for c in canaries]
    present = index.of_context([Message.user(t) for t in every])
    scores = R.score_context(present, canaries, positions, cut=end, said_before=end)
    for s in scores:
        if s.canary.coexists:
            assert s.status == "kept"


def test_no_keep_string_occurs_in_the_recorded_sessions(swebench_path: Path) -> None:
    lines = swebench_path.read_text(encoding="utf-8").splitlines()
    corpus = "\n".join(
        str(m.get("content"))
        for line in lines
        if line.strip()
        for m in json.loads(line)["messages"]
    )
    keeps = {k for session in _block(11) for c in session for k in c["keep"]}
    assert len(keeps) > 300
    assert sorted(k for k in keeps if k in corpus) == []


def _longest(source: Path, target: Path) -> Path:
    lines = [ln for ln in source.read_text(encoding="utf-8").splitlines() if ln.strip()]
    target.write_text(max(lines, key=lambda ln: len(json.loads(ln)["messages"])) + "\n", "utf-8")
    return target


def test_a_tiny_retention_run_with_this_generator(
    swebench_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(_longest(swebench_path, tmp_path / "one.jsonl"))
    generator = str(BENCH / "heldout_canaries_e.py")
    assert any(c.get("coexists") for c in _canaries(5, 0))  # the session carries a pair
    args = ["--data", data, "--seed", "5", "--generator", generator, "--placements", "tool"]
    out, _ = bench_main(
        "retention", ["--no-results", "--json", *args, "--no-langchain", "--jobs", "1"], capsys
    )
    assert out["seed"] == 5 and out["canary_source"] == f"generated by {generator}"
    assert out["canary_count"] == 24 and out["sessions_with_5"] == 1
    by_style = out["survival_after_5_by_placement_style"]["tool"]
    assert by_style and set(by_style) <= set(E.STYLES)
    assert set(out["survival_after_5_by_placement_kind"]["tool"]) <= set(E.KINDS)
    assert set(out["survival_after_5_by_template"]) <= set(E.TEMPLATES)
    assert out["coexisting_after_5_by_placement"]["tool"] is not None
    # made-up values: none is in the recorded session by chance
    assert out["ambiguous_pairs"] == 0
