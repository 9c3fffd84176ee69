"""Tests of ``bench/heldout_canaries_d.py``, the fourth held-out canary generator: reproducible
sets of the asked size, a 16-session block covering every template, kind, style, voice and
correction phrasing, keep strings that only their own fact holds, pairs scored the way the
generator means them, and a tiny ``bench/retention.py`` run with it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from abridged.core.model import Message
from tests.bench.support import BENCH, bench_main, compacting_sessions, load_bench

D = load_bench("heldout_canaries_d")
R = load_bench("retention")
SEED = 424242
BLOCK = 16  # sessions in the run the plan is made to cover


def _block(seed: int, count: int = 24) -> list[list[dict[str, Any]]]:
    return [D.generate(seed, count, variant=v) for v in range(BLOCK)]


def test_a_seed_count_and_variant_give_the_same_set_and_others_do_not() -> None:
    one = D.generate(SEED, 24, variant=3)
    assert one == D.generate(SEED, 24, variant=3)
    assert json.dumps(one) == json.dumps(D.generate(SEED, 24, 3))
    texts = {c["text"] for c in one}
    assert texts.isdisjoint(c["text"] for c in D.generate(SEED, 24, variant=4))
    assert texts.isdisjoint(c["text"] for c in D.generate(SEED + 1, 24, variant=3))


@pytest.mark.parametrize("count", [1, 4, 6, 7, 13, 24, 40, 61])
def test_a_set_has_the_asked_count_in_the_benchmark_shape(count: int) -> None:
    made = D.generate(SEED, count, variant=2)
    canaries = R.canaries_from(made)
    assert len(canaries) == count
    assert len({c.id for c in canaries}) == count
    assert [c.at for c in canaries] == sorted(c.at for c in canaries)
    assert all(0.0 <= c.at <= 1.0 and c.keep for c in canaries)
    assert all(c.kind in D.KINDS and c.style in D.STYLES and c.template for c in canaries)
    assert {c["voice"] for c in made} <= set(D.VOICES)
    singles, fixes, both = D.shares(count)
    assert sum(c.supersedes is not None for c in canaries) == fixes
    assert sum(c.coexists is not None for c in canaries) == 2 * both
    assert singles >= 0


def test_the_templates_span_the_asked_kinds_styles_and_phrasings() -> None:
    assert len(D.SINGLES) + len(D.PAIRS) >= 40
    assert len(D.SINGLES) >= 40
    assert len({t.name for t in D.SINGLES} | {p.name for p in D.PAIRS}) == len(D.SINGLES) + len(
        D.PAIRS
    )
    asked = {"constraint", "prohibition", "preference", "identifier", "decision", "quantity"}
    asked |= {"path", "version", "owner", "correction"}
    assert asked <= set(D.KINDS)
    assert len(D.STYLES) >= 8
    unmarked = [p for p in D.CORRECTIONS if not p.marker]
    assert len(D.CORRECTIONS) >= 12 and len(unmarked) >= 12
    assert len(unmarked) > 2 * (len(D.CORRECTIONS) - len(unmarked))
    assert len(D.COEXISTING) >= 2


@pytest.mark.parametrize("seed", [SEED, 7])
def test_a_16_session_block_covers_every_template_kind_style_and_voice(seed: int) -> None:
    planted = [c for s in _block(seed) for c in s]
    templates = {c["template"] for c in planted}
    assert {t.name for t in D.SINGLES} <= templates
    assert {p.name for p in D.PAIRS} <= templates
    assert {f"{p.name}:first" for p in D.PAIRS} <= templates
    assert {c["kind"] for c in planted} == set(D.KINDS)
    assert {c["style"] for c in planted} == set(D.STYLES)
    assert {c["voice"] for c in planted} == set(D.VOICES)
    phrasings = Counter(c["template"] for c in planted if c.get("supersedes"))
    assert len(phrasings) == len(D.CORRECTIONS)
    marked = sum(bool(c["marker"]) for c in planted if c.get("supersedes"))
    assert sum(phrasings.values()) > 3 * marked
    # every voice says facts of several kinds, in several styles
    for voice in D.VOICES:
        mine = [c for c in planted if c["voice"] == voice]
        assert len({c["kind"] for c in mine}) >= 5 and len({c["style"] for c in mine}) >= 3


@pytest.mark.parametrize("seed", [SEED, 7, 2026])
def test_a_keep_string_is_held_by_its_own_fact_alone(seed: int) -> None:
    for made in _block(seed):
        by_id = {c["id"]: c for c in made}
        for c in made:
            assert all(s in c["text"] for s in c["keep"]), c
            for other in made:
                if other is c:
                    continue
                assert not any(s in k for s in c["keep"] for k in other["keep"]), (c, other)
                if other.get("supersedes") != c["id"]:  # a correction may quote the old value
                    assert not any(s in other["text"] for s in c["keep"]), (c, other)
        for c in made:
            if c.get("supersedes"):
                assert by_id[c["supersedes"]]["at"] < c["at"]
                assert c["kind"] == "correction"
            if c.get("coexists"):
                assert by_id[c["coexists"]]["coexists"] == c["id"]


def _present(canaries: list[Any], texts: list[str]) -> frozenset[str]:
    index = R.KeepIndex(canaries)
    return index.of_context([Message.user(t) for t in texts])


def test_a_correction_supersedes_and_a_coexisting_pair_both_count() -> None:
    made = D.generate(SEED, 24, variant=0)
    canaries = R.canaries_from(made)
    by_id = {c.id: c for c in canaries}
    positions = {c.id: i for i, c in enumerate(canaries)}
    fixes = [c for c in canaries if c.supersedes]
    pairs = [c for c in canaries if c.coexists and positions[c.id] < positions[c.coexists]]
    assert fixes and pairs
    for fix in fixes:
        old = by_id[fix.supersedes]
        # the correction alone keeps the new value and does not present the old one as current
        present = _present(canaries, [fix.text])
        assert all(s in present for s in fix.keep) and f"stale:{old.id}" not in present
        # the old fact said again after the correction is stale
        assert f"stale:{old.id}" in _present(canaries, [fix.text, old.text])
        scores = R.score_context(
            present, canaries, positions, cut=len(canaries), said_before=len(canaries)
        )
        assert {s.canary.id: s.status for s in scores}[old.id] == "superseded"
    for first in pairs:
        second = by_id[first.coexists]
        present = _present(canaries, [first.text, second.text])
        scores = R.score_context(
            present, canaries, positions, cut=len(canaries), said_before=len(canaries)
        )
        status = {s.canary.id: s.status for s in scores}
        assert status[first.id] == status[second.id] == "kept"
        # and one of them alone is lost, not covered by the other
        alone = _present(canaries, [second.text])
        assert not all(s in alone for s in first.keep)


def test_no_fact_of_a_block_is_found_in_its_recorded_session(swebench_path: Path) -> None:
    """The bench plants variant ``i`` in session ``i``: none of those facts' keep strings all
    occur in that session already (the bench would count it as ambiguous)."""
    lines = [ln for ln in swebench_path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    ambiguous = []
    for v, line in enumerate(lines[:BLOCK]):
        session = "\n".join(str(m.get("content")) for m in json.loads(line)["messages"])
        for c in D.generate(SEED, 24, variant=v):
            if all(s in session for s in c["keep"]):
                ambiguous.append((v, c["template"], c["keep"]))
    assert ambiguous == []


def test_retention_runs_with_this_generator_and_reports_its_kinds_and_styles(
    swebench_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "one.jsonl"
    compacting_sessions(swebench_path, data, 1)
    generator = BENCH / "heldout_canaries_d.py"
    args = ["--data", str(data), "--seed", str(SEED), "--generator", str(generator)]
    args += ["--placements", "tool", "--no-langchain", "--jobs", "1", "--no-results", "--json"]
    out, printed = bench_main("retention", args, capsys)
    planted = D.generate(SEED, 24, variant=0)
    assert out["seed"] == SEED
    assert out["canary_source"] == f"generated by {generator}"
    assert out["canary_count"] == 24
    assert set(out["survival_after_5_by_placement_kind"]["tool"]) == {c["kind"] for c in planted}
    assert set(out["survival_after_5_by_placement_style"]["tool"]) == {c["style"] for c in planted}
    assert set(out["survival_after_5_by_template"]) == {c["template"] for c in planted}
    assert out["ambiguous_pairs"] == 0
    # the session compacts, and this generator's facts are scored after its first compaction
    assert out["compactions"] >= 1
    scored = {k for k, row in out["survival_by_kind"].items() if row["1"] is not None}
    assert scored - {"all"} and scored - {"all"} <= set(D.KINDS)
    assert "retention" in printed
