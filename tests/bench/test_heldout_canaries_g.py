"""Tests of the held-out canary generator ``bench/heldout_canaries_g.py``: reproducible per seed,
well-formed canaries in the shape ``bench/retention.py`` reads, the breadth it promises (templates,
styles, kinds, ways of correcting), facts landing in each placement, every template planted in a
run of 16 sessions, and a tiny benchmark run with it (its figures are neither asserted nor
printed: this generator measures, it is not tuned)."""

from __future__ import annotations

import functools
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.bench.support import (
    BENCH,
    assert_keep_strings_apart,
    assert_no_keep_string_recorded,
    correction_pairs,
    generator_run,
    load_bench,
)

H = load_bench("heldout_canaries_g")
R = load_bench("retention")
PATH = BENCH / "heldout_canaries_g.py"
KEYS = {"id", "kind", "at", "text", "keep", "style", "template"}
# words that announce a correction; none may be the way most corrections are written
MARKERS = (
    "correction", "corrected", "instead", "no longer", "update", "actually", "change", "now",
    "moved", "new", "wrong", "revert", "scratch", "replace", "resched", "reassign", "ignore",
)  # fmt: skip


def _canaries(seed: int, count: int, variant: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = H.generate(seed, count, variant)["canaries"]
    return items


@functools.cache
def _sample(count: int = 24) -> tuple[tuple[dict[str, Any], ...], ...]:
    return tuple(tuple(_canaries(seed, count, v)) for seed in (0, 1, 97) for v in range(16))


def test_a_seed_reproduces_its_canaries() -> None:
    assert H.generate(11, 24, 3) == H.generate(11, 24, 3)
    source = R.CanarySource(seed=11, count=24, generator=PATH)
    assert source.for_session(3) == R.canaries_from(H.generate(11, 24, 3))
    assert H.NAME == "heldout-g"


def test_other_seeds_and_sessions_draw_other_values() -> None:
    def keeps(seed: int, variant: int) -> set[str]:
        return {k for c in _canaries(seed, 24, variant) for k in c["keep"]}

    assert keeps(11, 0).isdisjoint(keeps(12, 0))
    assert keeps(11, 0).isdisjoint(keeps(11, 1))
    texts = {c["text"] for c in _canaries(11, 24, 0)}
    assert texts.isdisjoint(c["text"] for c in _canaries(12, 24, 0))


def test_every_canary_is_well_formed() -> None:
    for canaries in [*_sample(), *_sample(8)]:
        ids = [c["id"] for c in canaries]
        assert len(ids) == len(set(ids)) == len(canaries)
        by_id = {c["id"]: c for c in canaries}
        for c in canaries:
            assert set(c) >= KEYS
            template = H.BY_NAME[c["template"]]
            assert c["kind"] == template.kind and c["kind"] in H.KINDS and c["style"] in H.STYLES
            assert 0.0 < c["at"] < 1.0
            assert len(c["keep"]) == 1 and c["keep"][0] and c["keep"][0] in c["text"]
            assert c["keep"][0].isascii() and "\n" not in c["keep"][0]
            assert "</" not in c["text"]  # nothing closes a text-protocol <output> early
            assert R.REPLACED_MARK not in c["text"] and not R._WAS.search(c["text"])
            if "supersedes" in c:
                first = by_id[c["supersedes"]]
                assert template.shape == "correction" and first["template"] == c["template"]
                assert 0.1 - 1e-9 <= c["at"] - first["at"] <= 0.35 + 1e-9
                assert c["style"] == H.PHRASINGS[template.phrasing].style
            if "coexists" in c:
                other = by_id[c["coexists"]]
                assert other["coexists"] == c["id"] and other["template"] == c["template"]
                assert template.shape == "coexist" and other["keep"] != c["keep"]
        shapes = Counter(H.BY_NAME[c["template"]].shape for c in canaries)
        firsts = sum(1 for c in canaries if c["id"] in {x.get("supersedes") for x in canaries})
        assert firsts * 2 == shapes["correction"]
        assert R.canaries_from({"canaries": list(canaries)})


def test_no_keep_string_occurs_in_another_canary() -> None:
    assert_keep_strings_apart([*_sample(), *_sample(8)])


def test_the_breadth_it_promises() -> None:
    assert len(H.TEMPLATES) >= 70 and len(H.BY_NAME) == len(H.TEMPLATES)
    shapes = Counter(t.shape for t in H.TEMPLATES)
    assert shapes["single"] >= 40 and shapes["correction"] >= 20 and shapes["coexist"] >= 8
    assert {t.kind for t in H.TEMPLATES if t.shape == "single"} == set(H.KINDS)
    assert len(H.KINDS) == 13 and "credential_name" in H.KINDS
    assert len(H.STYLES) >= 24
    seen = [c for canaries in _sample() for c in canaries]
    assert {c["style"] for c in seen} == set(H.STYLES)
    singles = {t.name for t in H.TEMPLATES if t.shape == "single"}
    assert {c["kind"] for c in seen if c["template"] in singles} == set(H.KINDS)
    # every template says its fact at least two ways
    assert all(len(t.says) >= 2 and all("{v}" in s for s in t.says) for t in H.TEMPLATES)


def test_corrections_are_written_many_ways() -> None:
    phrasings = {t.phrasing for t in H.TEMPLATES if t.shape == "correction"}
    assert phrasings == set(H.PHRASINGS) and len(phrasings) >= 14
    pairs = correction_pairs(_sample())
    later = [c for c, _ in pairs]
    used = {H.BY_NAME[c["template"]].phrasing for c in later}
    assert used == set(H.PHRASINGS)
    # some name the value they replace and some do not, neither kind dominant
    by_template = [H.PHRASINGS[t.phrasing].names_old for t in H.TEMPLATES if t.phrasing]
    assert 0.4 <= sum(by_template) / len(by_template) <= 0.6
    naming = [old["keep"][0] in c["text"] for c, old in pairs]
    assert 0.35 <= sum(naming) / len(naming) <= 0.65
    for c, names in zip(later, naming, strict=True):
        assert names == H.PHRASINGS[H.BY_NAME[c["template"]].phrasing].names_old, c["text"]
    # no marker word: none is in more than a quarter of the corrections
    for word in MARKERS:
        pattern = re.compile(rf"\b{word}", re.IGNORECASE)
        share = sum(bool(pattern.search(c["text"])) for c in later) / len(later)
        assert share <= 0.25, (word, share)


def test_registers_are_balanced() -> None:
    assert set(H.REGISTERS.values()) == {"user", "tool", "assistant"}
    firsts = [c for canaries in _sample() for c in canaries if "supersedes" not in c]
    shares = Counter(H.REGISTERS[c["style"]] for c in firsts)
    assert all(0.25 <= n / len(firsts) <= 0.42 for n in shares.values()), shares


@pytest.mark.parametrize("seed", [0, 5, 123, 2026])
def test_a_run_of_16_sessions_plants_every_template(seed: int) -> None:
    for count in (8, 24):
        sessions = [_canaries(seed, count, v) for v in range(16)]
        assert {c["template"] for canaries in sessions for c in canaries} == set(H.BY_NAME)
        assert all(len(canaries) == count for canaries in sessions)
        for canaries in sessions:  # no template twice in a session
            slots = Counter(c["template"] for c in canaries)
            assert all(n == H.BY_NAME[t].size for t, n in slots.items())


def test_no_keep_string_occurs_in_the_recorded_sessions(swebench_path: Path) -> None:
    assert_no_keep_string_recorded(_sample(), swebench_path)


def test_the_canaries_do_not_depend_on_the_recorded_file(
    swebench_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_file = [H.generate(seed, 24, v) for seed in (0, 3) for v in range(8)]
    monkeypatch.setattr(H, "_recorded", lambda: None)
    assert not H.in_recorded("anything")
    assert with_file == [H.generate(seed, 24, v) for seed in (0, 3) for v in range(8)]


def test_every_fact_lands_in_each_placement(swebench_path: Path, tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    one.write_text(swebench_path.read_text(encoding="utf-8").split("\n", 1)[0] + "\n", "utf-8")
    messages = R.load_transcripts(one)[0].messages
    canaries = R.canaries_from(H.generate(7, 24, 2))
    for placement in R.PLACEMENTS:
        seeded = R.insert_canaries(messages, canaries, placement)
        assert set(seeded.positions) == {c.id for c in canaries}
        for c in canaries:
            at = seeded.positions[c.id]
            held = seeded.messages[at]
            assert all(k in R.wire_text(held) for k in c.keep), (placement, c.id)
            if placement == "user":
                assert seeded.grown[at] is None and held.role == "user"
            elif placement == "assistant":
                assert held.role == "assistant"
            else:  # the recorded observation, grown by the canary
                assert seeded.grown[at] is not None and held.role != "assistant"


def test_a_tiny_retention_run_with_this_generator(
    swebench_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it runs and reports; its figures are not looked at here
    out = generator_run(PATH, swebench_path, capsys)
    assert "survival_after_5" in out and "survival_after_5_by_template" in out
    assert out["ambiguous_pairs"] == 0  # made-up values: none occurs in the session
