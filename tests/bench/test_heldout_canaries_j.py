"""Tests of the held-out canary generator ``bench/heldout_canaries_j.py``: reproducible per seed,
well-formed canaries in the shape ``bench/retention.py`` reads, the breadth its lab note promises
(templates, kinds, surfaces, registers, ways of correcting, the old-beside-new mix, no marker
word), corrections and coexisting pairs that hold together, facts landing in each placement
through retention.py's own insertion, every template planted in any 16 consecutive sessions, no
value in the recorded sessions, and a tiny benchmark run with it (its figures are neither
asserted nor printed: this generator measures, it is not tuned). No test here runs the
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
    EARLIER_SURFACES,
    assert_facts_land_in_each_placement,
    assert_keep_strings_apart,
    assert_no_keep_string_recorded,
    correction_pairs,
    generator_run,
    load_bench,
)

J = load_bench("heldout_canaries_j")
R = load_bench("retention")
PATH = BENCH / "heldout_canaries_j.py"
KEYS = {"id", "kind", "at", "text", "keep", "style", "template", "subject"}
# words that announce a correction: none may be in more than a quarter of the corrections
MARKERS = (
    "update", "changed", "change", "instead", "now", "actually", "correction", "corrected",
    "new", "moved", "move", "replace", "no longer", "wrong", "revert", "scratch", "ignore",
    "resched", "reassign", "fixed value", "turns out", "switch", "previous", "earlier", "mistake",
    "rather", "supersede",
)  # fmt: skip
# what earlier sets wrote their facts as (the brief's list and set I's test): no surface here
EARLIER = EARLIER_SURFACES
SEEDS = (2, 4, 61)  # never the evaluation seeds
OTHER_TEST_SEEDS = (0, 5, 6, 9, 13, 101, 2027)


def _canaries(seed: int, count: int, variant: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = J.generate(seed, count, variant)["canaries"]
    return items


@functools.cache
def _sample(count: int = 24) -> tuple[tuple[dict[str, Any], ...], ...]:
    return tuple(tuple(_canaries(seed, count, v)) for seed in SEEDS for v in range(16))


def test_the_evaluation_seeds_are_not_the_test_seeds() -> None:
    assert len(set(J.EVALUATION_SEEDS)) == 3
    assert all(10**6 <= s < 10**7 for s in J.EVALUATION_SEEDS)
    assert set(J.EVALUATION_SEEDS).isdisjoint({*SEEDS, *OTHER_TEST_SEEDS, 5})  # 5: the tiny run
    doc = J.__doc__ or ""
    assert all(str(s) in doc for s in J.EVALUATION_SEEDS)
    assert (
        ".venv/bin/python bench/retention.py --generator bench/heldout_canaries_j.py --seed" in doc
    )
    for part in ("Why", "What I read", "What I did not read", "Design", "Values", "Seeds"):
        assert f"\n{part}" in doc, part


def test_a_seed_reproduces_its_canaries() -> None:
    made = J.generate(13, 24, 3)
    assert made["name"] == J.NAME == "heldout-j"
    assert (made["seed"], made["count"], made["variant"]) == (13, 24, 3)
    assert made == J.generate(13, 24, 3)
    J._plans.cache_clear()  # not a cache artefact: planned again from nothing
    assert made == J.generate(13, 24, 3)
    source = R.CanarySource(seed=13, count=24, generator=PATH)
    assert source.for_session(3) == R.canaries_from(J.generate(13, 24, 3))
    assert len(source.for_session(3)) == 24
    # a session's plan does not depend on which sessions were asked for before it
    J._plans.cache_clear()
    direct = J.generate(13, 24, 40)
    J._plans.cache_clear()
    J.generate(13, 24, 2)
    J.generate(13, 24, 33)
    assert J.generate(13, 24, 40) == direct
    with pytest.raises(ValueError):
        J.generate(13, 0, 0)


def test_other_seeds_and_sessions_draw_other_values() -> None:
    def keeps(seed: int, variant: int) -> set[str]:
        return {k for c in _canaries(seed, 24, variant) for k in c["keep"]}

    assert keeps(13, 0).isdisjoint(keeps(101, 0))
    assert keeps(13, 0).isdisjoint(keeps(13, 1))
    for seed in SEEDS:  # a run's sessions never share a value
        seen = [keeps(seed, v) for v in range(16)]
        assert sum(map(len, seen)) == len(set().union(*seen))
    texts = {c["text"] for c in _canaries(13, 24, 0)}
    assert texts.isdisjoint(c["text"] for c in _canaries(101, 24, 0))
    assert texts.isdisjoint(c["text"] for c in _canaries(13, 24, 1))
    # another count is another plan, not a prefix of this one
    assert [c["template"] for c in _canaries(13, 8, 2)] != [
        c["template"] for c in _canaries(13, 24, 2)
    ][:8]


def test_every_canary_is_well_formed() -> None:
    for canaries in [*_sample(), *_sample(8), *_sample(7), *_sample(6)]:
        ids = [c["id"] for c in canaries]
        assert len(ids) == len(set(ids)) == len(canaries)
        assert [c["at"] for c in canaries] == sorted(c["at"] for c in canaries)
        assert len({c["at"] for c in canaries}) == len(canaries)
        for c in canaries:
            assert set(c) >= KEYS
            template = J.BY_NAME[c["template"]]
            if "supersedes" in c:
                assert c["kind"] == "correction"
            else:
                assert c["kind"] == template.kind and c["kind"] in J.FACT_KINDS
            assert c["style"] in J.STYLES
            assert 0.0 < c["at"] < 1.0
            assert len(c["keep"]) == 1 and c["keep"][0] and c["keep"][0] in c["text"]
            keep = c["keep"][0]
            assert keep.isascii() and "\n" not in keep and keep == keep.strip() and len(keep) >= 6
            assert J.shape(keep) == J.shape(J.FORMS[template.form](J.random.Random(0), 0))
            assert "</output" not in c["text"]  # nothing closes a text-protocol output early
            assert R.REPLACED_MARK not in c["text"] and not R._WAS.search(c["text"])
            if template.shape == "single":
                assert "supersedes" not in c and "coexists" not in c
        shapes = Counter(J.BY_NAME[c["template"]].shape for c in canaries)
        firsts = {x.get("supersedes") for x in canaries} - {None}
        assert len(firsts) * 2 == shapes["correction"]
        assert shapes["coexist"] % 2 == 0
        assert len(R.canaries_from({"canaries": list(canaries)})) == len(canaries)


def test_a_correction_supersedes_an_earlier_fact_of_its_subject() -> None:
    pairs = correction_pairs(_sample())
    assert len(pairs) > 150
    for c, old in pairs:
        template = J.BY_NAME[c["template"]]
        assert template.shape == "correction" and old["template"] == c["template"]
        assert old["subject"] == c["subject"] and old["kind"] == template.kind
        assert "supersedes" not in old and "coexists" not in old and "coexists" not in c
        assert old["keep"] != c["keep"]
        assert 0.1 <= c["at"] - old["at"] <= 0.4
        phrasing = J.PHRASINGS[template.phrasing]
        assert c["style"] == phrasing.style and c["phrasing"] == phrasing.name
        assert old["style"] in J.GENERIC  # the first fact is written like any other
    for canaries in _sample():  # every canary superseded is superseded once
        targets = [c["supersedes"] for c in canaries if "supersedes" in c]
        assert len(targets) == len(set(targets))


def test_a_pair_that_both_hold_has_two_subjects() -> None:
    pairs = 0
    for canaries in _sample():
        by_id = {c["id"]: c for c in canaries}
        # what the benchmark counts as replaced: the corrected facts, never one of a pair
        index = R.KeepIndex(R.canaries_from({"canaries": list(canaries)}))
        replaced = {old for old, *_ in index.stale}
        assert replaced == {c["supersedes"] for c in canaries if "supersedes" in c}
        assert not any("coexists" in by_id[old] for old in replaced)
        for c in canaries:
            if "coexists" in c:
                pairs += 1
                other = by_id[c["coexists"]]
                assert other["coexists"] == c["id"] and other["template"] == c["template"]
                assert J.BY_NAME[c["template"]].shape == "coexist"
                assert other["subject"] != c["subject"] and other["keep"] != c["keep"]
                assert other["kind"] == c["kind"] == J.BY_NAME[c["template"]].kind
                assert "supersedes" not in c
                # both hold: the second said after the first does not make it stale
                both = R.Message.user(f"{other['text']}\n\n{c['text']}")
                assert not any(s.startswith("stale:") for s in index.of(both))
    assert pairs > 60


def test_no_keep_string_occurs_in_another_canary() -> None:
    assert_keep_strings_apart([*_sample(), *_sample(8), *_sample(6)])


def test_the_two_values_of_a_pair_have_one_form() -> None:
    pairs = 0
    for canaries in _sample():
        by_id = {c["id"]: c for c in canaries}
        for c in canaries:
            other = by_id.get(c.get("supersedes") or c.get("coexists") or "")
            if other is not None:
                pairs += 1
                assert J.shape(c["keep"][0]) == J.shape(other["keep"][0]), (c, other)
    assert pairs > 200
    assert J.shape("/opt/zhoka/share/tlern_417") == J.shape("/opt/vl/share/dvo_9") == "/a/a/a/a_9"
    assert J.shape("14 Oct 2027 17:40 UTC") == "9 a 9 9:9 a"
    assert J.shape("v4.27.13") != J.shape("2027.4.131")


def test_deadlines_slip_and_versions_go_up() -> None:
    moving = 0
    for c, old in correction_pairs(_sample()):
        if J.BY_NAME[c["template"]].form in J.LATER:
            moving += 1
            assert J.order(c["keep"][0]) > J.order(old["keep"][0]), (old["keep"], c["keep"])
    assert moving > 30
    assert J.order("v4.27.13") < J.order("v4.29.20") and J.order("1 Nov 2027 09:00 UTC") > (0,)
    assert J.order("3 Jan 2028 09:00 UTC") > J.order("30 Dec 2027 18:55 UTC")


def test_the_breadth_it_promises() -> None:
    assert len(J.TEMPLATES) >= 40 and len(J.BY_NAME) == len(J.TEMPLATES) == 52
    shapes = Counter(t.shape for t in J.TEMPLATES)
    assert shapes == {"single": 24, "correction": 20, "coexist": 8}  # as the lab note says
    assert len(J.FACT_KINDS) == 12 and set(J.KINDS) == {*J.FACT_KINDS, "correction"}
    for shape in ("single", "correction"):  # every kind is planted alone and corrected
        assert {t.kind for t in J.TEMPLATES if t.shape == shape} == set(J.FACT_KINDS)
    assert all(Counter(t.kind for t in J.TEMPLATES if t.shape == "single")[k] == 2
               for k in J.FACT_KINDS)  # fmt: skip
    assert len({t.kind for t in J.TEMPLATES if t.shape == "coexist"}) == 8
    assert all(t.form in J.FORMS for t in J.TEMPLATES)
    assert all(len(t.says) == 2 and all("{v}" in s for s in t.says) for t in J.TEMPLATES)
    for t in J.TEMPLATES:
        if t.shape == "coexist":
            assert t.sides and "{s}" in t.subject and "{s}" in t.key
            assert all("{s}" in s for s in t.says)
        else:
            assert t.sides is None and "{s}" not in t.subject + t.key
    assert len(J.STYLES) == 62 and len(J.GENERIC) == 42
    assert set(J.STYLES.values()) == set(J.REGISTERS)
    generic = Counter(J.STYLES[s] for s in J.GENERIC)
    assert generic == {"user": 13, "tool": 16, "assistant": 13}
    phrasings = Counter(p.register for p in J.PHRASINGS.values())
    assert phrasings == {"user": 7, "tool": 8, "assistant": 5}
    seen = [c for canaries in _sample() for c in canaries]
    assert {c["style"] for c in seen} == set(J.STYLES)
    assert {c["kind"] for c in seen} == set(J.KINDS)
    assert {c["template"] for c in seen} == set(J.BY_NAME)
    for canaries in _sample():  # every session has facts in each register
        assert {J.STYLES[c["style"]] for c in canaries} == set(J.REGISTERS)


def test_the_surfaces_avoid_the_earlier_sets() -> None:
    for style in J.STYLES:
        assert not any(word in style for word in EARLIER), style


def test_values_are_made_up_words() -> None:
    r = J.random.Random(7)
    for _ in range(2000):
        word = J._word(r, 4, 9)
        assert 4 <= len(word) <= 9 and word.isalpha() and word.islower() and "w" not in word
        assert any(cluster in word for cluster in J._RARE_ONSETS), word


def test_corrections_are_written_many_ways() -> None:
    phrasings = {t.phrasing for t in J.TEMPLATES if t.shape == "correction"}
    assert phrasings == set(J.PHRASINGS) and len(phrasings) >= 16
    # one correction template per phrasing: a stale share by template is one by phrasing
    assert len([t for t in J.TEMPLATES if t.shape == "correction"]) == len(phrasings)
    assert all(J.PHRASINGS[p].style in J.STYLES for p in phrasings)
    assert {p.style for p in J.PHRASINGS.values()}.isdisjoint(J.GENERIC)
    pairs = correction_pairs(_sample())
    later = [c for c, _ in pairs]
    assert {c["phrasing"] for c in later} == set(J.PHRASINGS)
    # the mix the lab note states: 9 of 20 name the value they replace
    assert sum(p.names_old for p in J.PHRASINGS.values()) == 9
    for c, old in pairs:
        assert (old["keep"][0] in c["text"]) == J.PHRASINGS[c["phrasing"]].names_old, c["text"]
    # no marker word: none is in more than a quarter of the corrections
    for word in MARKERS:
        pattern = re.compile(rf"\b{word}", re.IGNORECASE)
        share = sum(bool(pattern.search(c["text"])) for c in later) / len(later)
        assert share <= 0.25, (word, share)
    # nor any other word but the commonest function words
    words = Counter[str]()
    for c in later:
        words.update({w.lower() for w in re.findall(r"[A-Za-z]+", c["text"])})
    common = {"the", "to", "i", "a", "of", "is", "it", "on", "in"}
    assert all(n / len(later) <= 0.25 for w, n in words.items() if w not in common), [
        (w, n / len(later)) for w, n in words.most_common(12)
    ]


def test_the_correction_text_alone_does_not_make_the_old_value_stale() -> None:
    for canaries in _sample()[:16]:
        parsed = R.canaries_from({"canaries": list(canaries)})
        index = R.KeepIndex(parsed)
        by_id = {c.id: c for c in parsed}
        for c in parsed:
            if c.supersedes:
                present = index.of(R.Message.user(c.text))
                assert f"stale:{c.supersedes}" not in present, c.text
                assert all(f"current:{k}" in present for k in c.keep)
                # while the old fact said again is
                again = index.of(R.Message.user(f"{by_id[c.supersedes].text}\n\n{c.text}"))
                assert f"stale:{c.supersedes}" in again, c.text


@pytest.mark.parametrize("seed", [0, 6, 101, 2027])
def test_a_run_of_16_sessions_plants_every_template(seed: int) -> None:
    for count in (8, 24):
        sessions = [_canaries(seed, count, v) for v in range(16)]
        assert {c["template"] for canaries in sessions for c in canaries} == set(J.BY_NAME)
        if count == 24:  # at the default count every surface comes up as well
            assert {c["style"] for canaries in sessions for c in canaries} == set(J.STYLES)
        assert all(len(canaries) == count for canaries in sessions)
        for canaries in sessions:  # no template twice in a session
            slots = Counter(c["template"] for c in canaries)
            assert all(n == J.BY_NAME[t].size for t, n in slots.items())
    # at the default count any 16 consecutive sessions do, not only the first
    for start in (9, 21, 47):
        window = [_canaries(seed, 24, v) for v in range(start, start + 16)]
        assert {c["template"] for canaries in window for c in canaries} == set(J.BY_NAME)


def test_no_keep_string_occurs_in_the_recorded_sessions(swebench_path: Path) -> None:
    assert_no_keep_string_recorded([*_sample(), *_sample(8)], swebench_path)


def test_every_fact_lands_in_each_placement(swebench_path: Path, tmp_path: Path) -> None:
    assert_facts_land_in_each_placement(J.generate, ((9, 2), (6, 11)), swebench_path, tmp_path)


def test_a_tiny_retention_run_with_this_generator(
    swebench_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it runs and reports; its figures are not looked at here
    out = generator_run(PATH, swebench_path, capsys)
    assert "survival_after_5" in out and "stale_share" in out
