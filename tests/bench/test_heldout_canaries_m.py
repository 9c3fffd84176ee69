"""The held-out canary set M (``bench/heldout_canaries_m.py``): what it promises the retention
benchmark, checked on test seeds only (never its evaluation seeds), and a tiny run whose output
keys, not figures, are looked at."""

from __future__ import annotations

import functools
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.bench.support import (
    EARLIER_SURFACES,
    assert_a_quoted_correction_is_safe,
    assert_a_seed_reproduces,
    assert_a_tiny_run_names_its_parts,
    assert_coexisting_pairs_scored_apart,
    assert_evaluation_seeds_apart,
    assert_every_template_and_style_planted,
    assert_facts_land_in_each_placement,
    assert_keep_strings_apart,
    assert_no_keep_string_recorded,
    assert_reproduced_in_another_process,
    assert_seeds_and_sessions_draw_apart,
    correction_pairs,
    load_bench,
    value_skeleton,
)

M = load_bench("heldout_canaries_m")
R = load_bench("retention")

SEEDS = (7, 29, 613)
OTHER_SEEDS = (52, 1999)
RUN_SEED = 47  # the tiny retention run
KEYS = {"id", "kind", "at", "text", "keep", "style", "template", "subject"}
#: words and signs that announce a correction: none may be in more than a quarter of them
MARKERS = ("->", "→", "=>", "~~", "from ", "instead", " now", "changed", "change of", "update",
           "(not ", " was ", "new", "old", "replac", "swap", "no longer", "is in", "is out",
           "correct", "actually", "sorry", "revis", "before", "after", "moved", "?", "—",
           "confirm", "fyi", "scratch", "switch", "rather", "ignore", "disregard", "retired",
           "back to", "going forward", "from this point", "favour", "prev", "stale", "today",
           "final", "applied", "resolution", "pass this on", "adjust", "originally", "restat",
           "earlier", "above", "not ", "set to", "dropped", "use ")  # fmt: skip
#: how a rule is announced as one: the rules of this set are said in passing instead
ANNOUNCED = ("rule", "must", "policy", "constraint", "prohibit", "mandatory", "required",
             "important", "note:", "do not")  # fmt: skip


@functools.cache
def _canaries(seed: int, count: int, variant: int) -> tuple[dict[str, Any], ...]:
    return tuple(M.generate(seed, count, variant)["canaries"])


@functools.cache
def _sample() -> tuple[tuple[dict[str, Any], ...], ...]:
    return tuple(_canaries(s, 24, v) for s in SEEDS for v in range(10))


def _all() -> list[dict[str, Any]]:
    return [c for session in _sample() for c in session]


def _made_up_words() -> set[str]:
    """The made-up words of the sample's values: their letter runs that are no form word."""
    return {
        run.lower()
        for c in _all()
        for k in c["keep"]
        for run in re.findall(r"[A-Za-z]{4,}", k)
        if run.lower() not in M.FORM_WORDS
    }


def test_the_evaluation_seeds_are_not_the_test_seeds() -> None:
    assert_evaluation_seeds_apart(M, {*SEEDS, *OTHER_SEEDS, RUN_SEED, 1234})


def test_a_seed_reproduces_its_canaries() -> None:
    assert_a_seed_reproduces(M, SEEDS, 7)


def test_a_seed_reproduces_its_canaries_in_another_process() -> None:
    assert_reproduced_in_another_process(M, 29)


def test_other_seeds_and_sessions_draw_other_values() -> None:
    assert_seeds_and_sessions_draw_apart(_canaries, (*SEEDS, *OTHER_SEEDS))


def test_the_values_of_a_run_are_distinct() -> None:
    for seed in SEEDS:
        keeps = [k for v in range(40) for c in _canaries(seed, 24, v) for k in c["keep"]]
        repeated = [k for k, n in Counter(keeps).items() if n > 1]
        assert not repeated, (seed, repeated)


def test_every_canary_is_well_formed() -> None:
    for session in _sample():
        assert len(session) == 24
        assert len({c["id"] for c in session}) == 24
        assert [c["at"] for c in session] == sorted(c["at"] for c in session)
        parsed = R.canaries_from({"canaries": list(session)})
        assert [p.id for p in parsed] == [c["id"] for c in session]
        for c, p in zip(session, parsed, strict=True):
            assert KEYS <= set(c) <= KEYS | {"supersedes", "coexists"}, c
            assert c["kind"] in M.KINDS
            assert 0 < c["at"] < 1
            assert c["keep"] and all(isinstance(k, str) and len(k) >= 5 for k in c["keep"])
            assert all(k in c["text"] for k in c["keep"]), c
            assert c["style"] in M.REGISTER_OF
            assert M.TEMPLATE_BY_NAME[c["template"]].kind == c["kind"]
            assert c["subject"] and c["subject"] not in c["keep"]
            assert p.keep == tuple(c["keep"]) and p.style == c["style"]
            assert p.template == c["template"] and p.text == c["text"]
            assert p.supersedes == c.get("supersedes") and p.coexists == c.get("coexists")
    for count in (6, 13, 40):
        assert len(_canaries(29, count, 3)) == count
    with pytest.raises(ValueError, match="count"):
        M.generate(29, 5)


def test_a_correction_supersedes_an_earlier_fact_of_its_subject() -> None:
    pairs = correction_pairs(_sample())
    assert len(pairs) == 5 * len(_sample())
    for new, old in pairs:
        assert old["at"] + 0.25 <= new["at"], (old, new)
        assert new["subject"] == old["subject"] and new["template"] == old["template"]
        assert new["kind"] == old["kind"]
        assert M.TEMPLATE_BY_NAME[new["template"]].shape == "correction"
        assert new["style"] in M.CORRECTIONS and old["style"] in M.SURFACES
        assert "supersedes" not in old and "coexists" not in new and "coexists" not in old
        # the old and new values differ and each is where it should be
        assert new["keep"] != old["keep"]
        assert all(k in old["text"] for k in old["keep"])
        assert all(k in new["text"] for k in new["keep"])
        assert not any(k in old["text"] for k in new["keep"])
        names_old = M.CORRECTIONS[new["style"]][1]
        assert names_old == all(k in new["text"] for k in old["keep"]), new
        assert names_old == any(k in new["text"] for k in old["keep"]), new
    for session in _sample():  # each old fact is corrected once, by its own template only
        olds = [c["supersedes"] for c in session if "supersedes" in c]
        assert len(olds) == len(set(olds))
        for c in session:
            if M.TEMPLATE_BY_NAME[c["template"]].shape == "correction":
                same = [x for x in session if x["template"] == c["template"]]
                assert len(same) == 2 and sum("supersedes" in x for x in same) == 1


def test_a_pair_that_both_hold_has_two_subjects() -> None:
    pairs = 0
    for session in _sample():
        by_id = {c["id"]: c for c in session}
        superseded = {c["supersedes"] for c in session if "supersedes" in c}
        for c in session:
            if "coexists" not in c:
                assert M.TEMPLATE_BY_NAME[c["template"]].shape != "coexist"
                continue
            other = by_id[c["coexists"]]
            assert other["coexists"] == c["id"]
            assert other["template"] == c["template"] and other["kind"] == c["kind"]
            assert other["subject"] != c["subject"] and other["keep"] != c["keep"]
            assert c["id"] not in superseded and "supersedes" not in c
            assert not any(k in c["text"] for k in other["keep"])
            pairs += 1
    assert pairs == 2 * 2 * len(_sample())


def test_a_pair_that_both_hold_is_not_scored_as_a_correction() -> None:
    assert assert_coexisting_pairs_scored_apart(_sample()[:8]) == 2 * 8


def test_no_keep_string_occurs_in_another_canary() -> None:
    assert_keep_strings_apart(_sample())
    for session in _sample():
        keeps = [k for c in session for k in c["keep"]]
        assert not [(a, b) for a in keeps for b in keeps if a != b and a in b]


def test_the_two_values_of_a_pair_have_one_form() -> None:
    checked = 0
    for session in _sample():
        by_id = {c["id"]: c for c in session}
        for c in session:
            other = c.get("supersedes") or c.get("coexists")
            if other:
                a, b = c["keep"][0], by_id[other]["keep"][0]
                assert value_skeleton(a) == value_skeleton(b), (a, b)
                checked += 1
    assert checked == 9 * len(_sample())


def test_deadlines_slip_and_versions_go_up() -> None:
    seen = Counter[str]()
    for new, old in correction_pairs(_sample()):
        form = M.TEMPLATE_BY_NAME[new["template"]].form
        if form == "date":
            assert M.parse_date(old["keep"][0]) < M.parse_date(new["keep"][0])
            seen["date"] += 1
        elif form == "version":
            assert M.version_key(old["keep"][0]) < M.version_key(new["keep"][0])
            seen["version"] += 1
    assert seen["date"] >= 10 and seen["version"] >= 10
    for c in _all():  # every date and version of the set reads back
        form = M.TEMPLATE_BY_NAME[c["template"]].form
        if form == "date":
            assert M.parse_date(c["keep"][0]).year in range(2039, 2049), c["keep"]
        elif form == "version":
            assert len(M.version_key(c["keep"][0])) in (3, 4), c["keep"]


def test_the_breadth_it_promises() -> None:
    templates = M.TEMPLATES
    assert len(templates) >= 48 and len({t.name for t in templates}) == len(templates)
    shapes = Counter(t.shape for t in templates)
    assert shapes["single"] >= 22 and shapes["correction"] >= 18 and shapes["coexist"] >= 8
    kinds = Counter(t.kind for t in templates)
    assert set(kinds) == set(M.KINDS) and len(kinds) >= 12 and min(kinds.values()) >= 3
    assert {t.kind for t in templates if t.shape == "single"} == set(M.KINDS)
    assert {t.kind for t in templates if t.shape == "correction"} == set(M.KINDS)
    assert len({t.kind for t in templates if t.shape == "coexist"}) == 8
    for t in templates:
        assert len(t.subjects) == len(t.keys) == len(t.says) == (2 if t.shape == "coexist" else 1)
        assert all(s.count("{v}") == 1 for s in t.says)
        assert t.form in M.FORMS
    assert len(M.SURFACES) >= 40
    registers = Counter(reg for reg, _ in M.SURFACES.values())
    assert set(registers) == set(M.REGISTERS) and min(registers.values()) >= 12
    assert len(M.CORRECTIONS) >= 14
    assert {reg for reg, _, _ in M.CORRECTIONS.values()} == set(M.REGISTERS)
    naming_old = [n for n, (_, old, _) in M.CORRECTIONS.items() if old]
    assert len(naming_old) >= 4 and len(M.CORRECTIONS) - len(naming_old) >= 12
    assert not set(M.SURFACES) & set(M.CORRECTIONS)
    assert M.PASTED.issubset(M.SURFACES) and len(M.PASTED) >= 8
    assert all(M.SURFACES[name][0] == "user" for name in M.PASTED)
    for session in _sample():  # a session of 24: 10 singles, 5 corrections, 2 pairs
        per = Counter(M.TEMPLATE_BY_NAME[c["template"]].shape for c in session)
        assert per == {"single": 10, "correction": 10, "coexist": 4}
        assert len({c["kind"] for c in session}) >= 8
    assert {c["style"] for c in _all()} == set(M.REGISTER_OF)


def test_the_surfaces_avoid_the_earlier_sets() -> None:
    earlier = (
        load_bench("heldout_canaries_k").SURFACES.keys()
        | load_bench("heldout_canaries_l").SURFACES.keys()
    )
    for style in M.REGISTER_OF:
        name = style.replace("_", "-")
        assert not [e for e in EARLIER_SURFACES if e in name or e in name.replace("-", "")], style
        assert style not in earlier, style


def test_rules_are_said_in_passing() -> None:
    rules = [t for t in M.TEMPLATES if t.kind in ("constraint", "prohibition")]
    assert len(rules) >= 8
    for t in rules:
        for says in t.says:
            assert not [w for w in ANNOUNCED if w in says.lower()], says


def test_a_pasted_chunk_holds_the_fact_on_one_of_its_lines() -> None:
    seen = 0
    for c in _all():
        if c["style"] not in M.PASTED:
            continue
        lines = c["text"].split("\n")
        holding = [line for line in lines if any(k in line for k in c["keep"])]
        assert len([line for line in lines if line.strip()]) >= 5, c["text"]
        assert 1 <= len(holding) <= min(2, len(lines) / 4), c
        assert lines[0] not in holding and lines[-1] not in holding, c
        seen += 1
    assert seen >= 50


def test_values_are_made_up() -> None:
    keeps = {k for c in _all() for k in c["keep"]}
    assert len(keeps) == len(_all())
    for c in _all():
        form = M.TEMPLATE_BY_NAME[c["template"]].form
        for keep in c["keep"]:
            if form == "version":
                assert re.fullmatch(r"\d+(\.\d+){2,3}", keep), keep
            elif form == "date":
                assert M.parse_date(keep), keep
            else:  # a number stands with its unit or with words, never bare
                assert not re.fullmatch(r"[\d.,:/ ]+", keep), keep
    words = _made_up_words()
    assert len(words) >= 500
    assert not words & M.FORM_WORDS
    # they do not share one visible mark: no letter pair in a quarter of them, many openings
    # and lengths, not the doubled vowels of an earlier set
    pairs = Counter(p for w in words for p in {w[i : i + 2] for i in range(len(w) - 1)})
    assert max(pairs.values()) <= 0.25 * len(words), pairs.most_common(3)
    assert len({w[0] for w in words}) >= 18
    assert len({len(w) for w in words}) >= 5
    assert not [w for w in words if re.search(r"aa|ii|uu", w)]


def test_corrections_are_written_many_ways() -> None:
    pairs = correction_pairs(_sample())
    ways = Counter(new["style"] for new, _ in pairs)
    assert len(ways) >= 14 and max(ways.values()) <= 0.1 * len(pairs)
    naming_old = [new for new, old in pairs if any(k in new["text"] for k in old["keep"])]
    assert 0.15 * len(pairs) <= len(naming_old) <= 0.5 * len(pairs)  # most name only the new
    texts = [new["text"].lower() for new, _ in pairs]
    for marker in MARKERS:
        assert sum(marker in t for t in texts) <= 0.25 * len(texts), marker
    for c in _all():  # the summarizer's own notation is not used to correct
        assert "(was " not in c["text"] and R.REPLACED_MARK not in c["text"], c
    for new, _ in pairs:  # the subject or its key is named: it can be told what it corrects
        key = M.TEMPLATE_BY_NAME[new["template"]].keys[0]
        text = new["text"].lower()
        assert new["subject"].lower() in text or key.lower() in text, new


def test_the_correction_text_alone_does_not_make_the_old_value_stale() -> None:
    assert_a_quoted_correction_is_safe(
        correction_pairs(_sample()), lambda new: bool(M.CORRECTIONS[new["style"]][1])
    )


@pytest.mark.parametrize(("seed", "first"), [(7, 0), (613, 0), (1234, 5)])
def test_a_run_of_16_sessions_plants_every_template_surface_and_way(seed: int, first: int) -> None:
    sessions = [_canaries(seed, 24, v) for v in range(first, first + 16)]
    assert_every_template_and_style_planted(sessions, M.TEMPLATE_BY_NAME, M.REGISTER_OF)


def test_no_keep_string_occurs_in_the_recorded_sessions(swebench_path: Path) -> None:
    assert_no_keep_string_recorded(_sample(), swebench_path)


def test_made_up_words_are_not_words_of_the_recorded_sessions(swebench_path: Path) -> None:
    recorded = swebench_path.read_text(encoding="utf-8").lower()
    long_words = {w for w in _made_up_words() if len(w) >= 6}
    assert len(long_words) >= 300
    found = [w for w in long_words if w in recorded]
    assert len(found) <= 0.02 * len(long_words), found


def test_every_fact_lands_in_each_placement(swebench_path: Path, tmp_path: Path) -> None:
    cases = [(7, 0), (29, 6), (613, 11), (52, 15)]
    assert_facts_land_in_each_placement(M.generate, cases, swebench_path, tmp_path)


def test_a_tiny_retention_run_with_this_generator(
    swebench_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_a_tiny_run_names_its_parts(M, RUN_SEED, swebench_path, capsys)
