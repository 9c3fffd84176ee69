"""Tests of the held-out canary generator ``bench/heldout_canaries_h.py``: reproducible per seed,
well-formed canaries in the shape ``bench/retention.py`` reads, the breadth its lab note promises
(templates, kinds, styles, registers, ways of correcting, no marker word), facts landing in each
placement through retention.py's own insertion, every template planted in a run of 16 sessions,
no value in the recorded sessions, and a tiny benchmark run with it (its figures are neither
asserted nor printed: this generator measures, it is not tuned). None of these tests runs the
evaluation seeds of the lab note."""

from __future__ import annotations

import functools
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.bench.support import (
    BENCH,
    assert_facts_land_in_each_placement,
    assert_keep_strings_apart,
    assert_no_keep_string_recorded,
    correction_pairs,
    generator_run,
    load_bench,
)

H = load_bench("heldout_canaries_h")
R = load_bench("retention")
PATH = BENCH / "heldout_canaries_h.py"
KEYS = {"id", "kind", "at", "text", "keep", "style", "template"}
# words that announce a correction (the benchmark issue's and more): none may be in more than a
# quarter of the corrections
MARKERS = (
    "update", "changed", "change", "instead", "now", "correction", "corrected", "actually",
    "new", "moved", "replace", "no longer", "wrong", "revert", "scratch", "ignore", "resched",
    "reassign", "fixed value", "turns out",
)  # fmt: skip
SEEDS = (0, 1, 97)  # never the evaluation seeds


def _canaries(seed: int, count: int, variant: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = H.generate(seed, count, variant)["canaries"]
    return items


@functools.cache
def _sample(count: int = 24) -> tuple[tuple[dict[str, Any], ...], ...]:
    return tuple(tuple(_canaries(seed, count, v)) for seed in SEEDS for v in range(16))


def test_the_evaluation_seeds_are_not_the_test_seeds() -> None:
    assert len(set(H.EVALUATION_SEEDS)) == 3
    assert all(10**6 <= s < 10**7 for s in H.EVALUATION_SEEDS)
    assert set(H.EVALUATION_SEEDS).isdisjoint({*SEEDS, 5, 7, 11, 12, 123, 2026})
    assert all(str(s) in (H.__doc__ or "") for s in H.EVALUATION_SEEDS)


def test_a_seed_reproduces_its_canaries() -> None:
    assert H.NAME == "heldout-h"
    assert H.generate(11, 24, 3) == H.generate(11, 24, 3)
    H._plan.cache_clear()  # not a cache artefact: drawn again from nothing
    assert H.generate(11, 24, 3) == H.generate(11, 24, 3)
    source = R.CanarySource(seed=11, count=24, generator=PATH)
    assert source.for_session(3) == R.canaries_from(H.generate(11, 24, 3))
    assert len(source.for_session(3)) == 24


def test_other_seeds_and_sessions_draw_other_values() -> None:
    def keeps(seed: int, variant: int) -> set[str]:
        return {k for c in _canaries(seed, 24, variant) for k in c["keep"]}

    assert keeps(11, 0).isdisjoint(keeps(12, 0))
    assert keeps(11, 0).isdisjoint(keeps(11, 1))
    texts = {c["text"] for c in _canaries(11, 24, 0)}
    assert texts.isdisjoint(c["text"] for c in _canaries(12, 24, 0))
    assert texts.isdisjoint(c["text"] for c in _canaries(11, 24, 1))
    # another count is another plan, not a prefix of this one
    assert [c["template"] for c in _canaries(11, 8, 2)] != [
        c["template"] for c in _canaries(11, 24, 2)
    ][:8]


def test_every_canary_is_well_formed() -> None:
    for canaries in [*_sample(), *_sample(8)]:
        ids = [c["id"] for c in canaries]
        assert len(ids) == len(set(ids)) == len(canaries)
        assert [c["at"] for c in canaries] == sorted(c["at"] for c in canaries)
        by_id = {c["id"]: c for c in canaries}
        for c in canaries:
            assert set(c) >= KEYS
            template = H.BY_NAME[c["template"]]
            if "supersedes" in c:
                assert c["kind"] == "correction"
            else:
                assert c["kind"] == template.kind and c["kind"] in H.FACT_KINDS
            assert c["style"] in H.STYLES
            assert 0.0 < c["at"] < 1.0
            assert len(c["keep"]) == 1 and c["keep"][0] and c["keep"][0] in c["text"]
            assert c["keep"][0].isascii() and "\n" not in c["keep"][0]
            assert c["keep"][0] == c["keep"][0].strip()
            assert "</output" not in c["text"]  # nothing closes a text-protocol output early
            assert R.REPLACED_MARK not in c["text"] and not R._WAS.search(c["text"])
            if "supersedes" in c:
                first = by_id[c["supersedes"]]
                assert template.shape == "correction" and first["template"] == c["template"]
                assert "supersedes" not in first and "coexists" not in first
                assert 0.12 - 1e-9 <= c["at"] - first["at"] <= 0.38 + 1e-9
                phrasing = H.PHRASINGS[template.phrasing]
                assert c["style"] == phrasing.style and c["phrasing"] == phrasing.name
            if "coexists" in c:
                other = by_id[c["coexists"]]
                assert other["coexists"] == c["id"] and other["template"] == c["template"]
                assert template.shape == "coexist" and other["keep"] != c["keep"]
                assert other["kind"] == c["kind"] == template.kind
            if template.shape == "single":
                assert "supersedes" not in c and "coexists" not in c
        shapes = Counter(H.BY_NAME[c["template"]].shape for c in canaries)
        firsts = {x.get("supersedes") for x in canaries} - {None}
        assert len(firsts) * 2 == shapes["correction"]
        assert shapes["coexist"] % 2 == 0
        assert R.canaries_from({"canaries": list(canaries)})


def test_no_keep_string_occurs_in_another_canary() -> None:
    assert_keep_strings_apart([*_sample(), *_sample(8)])


def test_the_two_values_of_a_pair_have_one_form() -> None:
    pairs = 0
    for canaries in _sample():
        by_id = {c["id"]: c for c in canaries}
        for c in canaries:
            other = by_id.get(c.get("supersedes") or c.get("coexists") or "")
            if other is not None:
                pairs += 1
                assert H.shape(c["keep"][0]) == H.shape(other["keep"][0]), (c, other)
    assert pairs > 100
    # the shape blurs runs of digits and letters and keeps the rest
    assert H.shape("/srv/kelvo/dra-12") == H.shape("/srv/zu/pira-4071") == "/a/a/a-9"
    assert H.shape("/srv/kelvo/dra-12") != H.shape("/var/lib/kelvo/dra")
    assert H.shape("KELVO_DRA_API_KEY") != H.shape("KELVO_DRA_TOKEN")


def test_the_breadth_it_promises() -> None:
    assert len(H.TEMPLATES) >= 60 and len(H.BY_NAME) == len(H.TEMPLATES)
    shapes = Counter(t.shape for t in H.TEMPLATES)
    assert shapes["single"] > shapes["correction"] > shapes["coexist"] >= 6
    assert 0.28 <= shapes["correction"] / len(H.TEMPLATES) <= 0.40  # about a third
    assert len(H.FACT_KINDS) == 12 and set(H.KINDS) == {*H.FACT_KINDS, "correction"}
    for shape in ("single", "correction"):
        assert {t.kind for t in H.TEMPLATES if t.shape == shape} == set(H.FACT_KINDS)
    assert {t.kind for t in H.TEMPLATES} <= set(H.FACT_KINDS)
    assert len(H.STYLES) >= 30 and len(H.GENERIC) >= 30
    assert set(H.STYLES.values()) == set(H.REGISTERS)
    for register in H.REGISTERS:  # each register renders any fact in many ways
        assert sum(1 for s in H.GENERIC if H.STYLES[s] == register) >= 10
    seen = [c for canaries in _sample() for c in canaries]
    assert {c["style"] for c in seen} == set(H.STYLES)
    assert {c["kind"] for c in seen} == set(H.KINDS)
    assert {c["template"] for c in seen} == set(H.BY_NAME)
    # every template says its fact at least two ways, each with its value
    assert all(len(t.says) >= 2 and all("{v}" in s for s in t.says) for t in H.TEMPLATES)
    assert all("{s}" in t.key and "{s}" in t.label for t in H.TEMPLATES if t.shape == "coexist")
    assert all(t.form in H.FORMS for t in H.TEMPLATES)
    assert len({t.form for t in H.TEMPLATES}) >= 30


def test_the_styles_avoid_the_previous_blind_set() -> None:
    previous = (
        "helm", "terraform", "hcl", "docker-compose", "compose", "nginx", "systemd", "psql",
        "jupyter", "grafana", "kubectl-describe", "describe", "grep", "logfmt", "traceback",
        "ansible", "oneline", "lint", "etcd", "slack", "linear", "calendar", "adr", "rfc",
        "postmortem", "gherkin", "wiki", "whiteboard", "forum", "video", "headed", "plan",
        "recap", "findings", "narrated", "checklist", "short-answer", "code-edit", "caveat",
    )  # fmt: skip
    for style in H.STYLES:
        assert not any(word in style for word in previous), style


def test_corrections_are_written_many_ways() -> None:
    phrasings = {t.phrasing for t in H.TEMPLATES if t.shape == "correction"}
    assert phrasings == set(H.PHRASINGS) and len(phrasings) >= 20
    assert all(H.PHRASINGS[p].style in H.STYLES for p in phrasings)
    pairs = correction_pairs(_sample())
    later = [c for c, _ in pairs]
    assert len(later) > 150
    assert {c["phrasing"] for c in later} == set(H.PHRASINGS)
    # some name the value they replace and some do not, neither kind dominant
    naming_phrasings = [p.names_old for p in H.PHRASINGS.values()]
    assert 0.4 <= sum(naming_phrasings) / len(naming_phrasings) <= 0.6
    naming = [old["keep"][0] in c["text"] for c, old in pairs]
    assert 0.35 <= sum(naming) / len(naming) <= 0.65
    for c, names in zip(later, naming, strict=True):
        assert names == H.PHRASINGS[c["phrasing"]].names_old, c["text"]
    # no marker word: none is in more than a quarter of the corrections
    for word in MARKERS:
        pattern = re.compile(rf"\b{word}", re.IGNORECASE)
        share = sum(bool(pattern.search(c["text"])) for c in later) / len(later)
        assert share <= 0.25, (word, share)


def test_a_file_shown_again_differs_in_its_one_field() -> None:
    again = {"config-shown-again", "csv-reexported"}
    seen = Counter[str]()
    for c, old in correction_pairs(_sample()):
        if c["phrasing"] in again:
            seen[c["phrasing"]] += 1
            assert old["style"] == c["style"]
            before = old["text"].split("\n", 1)[1]
            after = c["text"].split("\n", 1)[1]
            assert before.replace(old["keep"][0], c["keep"][0]) == after, (old, c)
    assert set(seen) == again


def test_registers_are_balanced() -> None:
    seen = [c for canaries in _sample() for c in canaries]
    for group in (
        [c for c in seen if "supersedes" not in c],  # the facts as first said
        seen,  # and with the corrections
    ):
        shares = Counter(H.STYLES[c["style"]] for c in group)
        assert set(shares) == set(H.REGISTERS)
        assert all(0.28 <= n / len(group) <= 0.39 for n in shares.values()), shares
    by_phrasing = Counter(H.STYLES[p.style] for p in H.PHRASINGS.values())
    assert all(n >= len(H.PHRASINGS) // 4 for n in by_phrasing.values()), by_phrasing
    for canaries in _sample():  # and in every session, not only over the run
        firsts = Counter(H.STYLES[c["style"]] for c in canaries if "supersedes" not in c)
        assert set(firsts) == set(H.REGISTERS)


@pytest.mark.parametrize("seed", [0, 5, 123, 2026])
def test_a_run_of_16_sessions_plants_every_template(seed: int) -> None:
    for count in (8, 24):
        sessions = [_canaries(seed, count, v) for v in range(16)]
        assert {c["template"] for canaries in sessions for c in canaries} == set(H.BY_NAME)
        if count == 24:  # at the default count every surface comes up as well
            assert {c["style"] for canaries in sessions for c in canaries} == set(H.STYLES)
        assert all(len(canaries) == count for canaries in sessions)
        for canaries in sessions:  # no template twice in a session
            slots = Counter(c["template"] for c in canaries)
            assert all(n == H.BY_NAME[t].size for t, n in slots.items())
    # at the default count any 16 consecutive sessions do, not only the first
    later = [_canaries(seed, 24, v) for v in range(21, 37)]
    assert {c["template"] for canaries in later for c in canaries} == set(H.BY_NAME)


def test_no_keep_string_occurs_in_the_recorded_sessions(swebench_path: Path) -> None:
    recorded = swebench_path.read_text(encoding="utf-8")
    first_line = recorded.split("\n", 1)[0]
    assert H.in_recorded(first_line[40:90])  # the generator searches that very file
    assert_no_keep_string_recorded([*_sample(), *_sample(8)], swebench_path)


def test_the_canaries_do_not_depend_on_the_recorded_file(
    swebench_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_file = [H.generate(seed, 24, v) for seed in (0, 3) for v in range(8)]
    monkeypatch.setattr(H, "_recorded", lambda: None)
    assert not H.in_recorded("anything")
    assert with_file == [H.generate(seed, 24, v) for seed in (0, 3) for v in range(8)]


def test_every_fact_lands_in_each_placement(swebench_path: Path, tmp_path: Path) -> None:
    assert_facts_land_in_each_placement(H.generate, ((7, 2), (8, 9)), swebench_path, tmp_path)
    # the correction's own text does not make the value it replaces stale
    for seed, variant in ((7, 2), (8, 9)):
        canaries = R.canaries_from(H.generate(seed, 24, variant))
        index = R.KeepIndex(canaries)
        for c in canaries:
            if c.supersedes:
                present = index.of(R.Message.user(c.text))
                assert f"stale:{c.supersedes}" not in present, c.text


def test_a_tiny_retention_run_with_this_generator(
    swebench_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it runs and reports; its figures are not looked at here
    out = generator_run(PATH, swebench_path, capsys)
    assert "survival_after_5" in out and "survival_after_5_by_template" in out
    assert out["ambiguous_pairs"] == 0  # made-up values: none occurs in the session
