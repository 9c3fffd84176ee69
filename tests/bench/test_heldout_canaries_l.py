"""The held-out canary set L (``bench/heldout_canaries_l.py``): what it promises the retention
benchmark, checked on test seeds only (never its evaluation seeds), and a tiny run whose output
keys, not figures, are looked at."""

from __future__ import annotations

import functools
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from abridged.core.model import Message
from tests.bench.support import (
    BENCH,
    EARLIER_SURFACES,
    assert_a_seed_reproduces,
    assert_evaluation_seeds_apart,
    assert_facts_land_in_each_placement,
    assert_keep_strings_apart,
    assert_no_keep_string_recorded,
    assert_reproduced_in_another_process,
    assert_seeds_and_sessions_draw_apart,
    bench_main,
    correction_pairs,
    cut_outside,
    load_bench,
    nested_keys,
    value_skeleton,
)

L = load_bench("heldout_canaries_l")
R = load_bench("retention")
PATH = BENCH / "heldout_canaries_l.py"

SEEDS = (3, 17, 808)
OTHER_SEEDS = (41, 2024)
RUN_SEED = 31  # the tiny retention run
KEYS = {"id", "kind", "at", "text", "keep", "style", "template", "subject"}
#: words and signs that announce a correction: none may be in more than a quarter of them
MARKERS = ("->", "→", "=>", "~~", "from ", "instead", " now", "changed", "change of", "update",
           "(not ", " was ", "new", "old", "replac", "swap", "no longer", "is in", "is out",
           "correct", "actually", "sorry", "revis", "before", "after", "moved", "?", "—",
           "confirm", "fyi", "scratch", "switch")  # fmt: skip
#: words a value may hold besides made-up ones (its form's own words)
FORM_WORDS = {"release", "srv", "etc", "toml", "internal", "https", "example", "seconds",
              "rows", "req", *(m.lower() for m in L._MONTHS),
              *(g.lower() for g in L._GIVEN)}  # fmt: skip


@functools.cache
def _canaries(seed: int, count: int, variant: int) -> tuple[dict[str, Any], ...]:
    return tuple(L.generate(seed, count, variant)["canaries"])


@functools.cache
def _sample() -> tuple[tuple[dict[str, Any], ...], ...]:
    return tuple(_canaries(s, 24, v) for s in SEEDS for v in range(10))


def _all() -> list[dict[str, Any]]:
    return [c for session in _sample() for c in session]


def test_the_evaluation_seeds_are_not_the_test_seeds() -> None:
    assert_evaluation_seeds_apart(L, {*SEEDS, *OTHER_SEEDS, RUN_SEED})


def test_a_seed_reproduces_its_canaries() -> None:
    assert_a_seed_reproduces(L, SEEDS, 3)


def test_a_seed_reproduces_its_canaries_in_another_process() -> None:
    assert_reproduced_in_another_process(L, 17)


def test_other_seeds_and_sessions_draw_other_values() -> None:
    assert_seeds_and_sessions_draw_apart(_canaries, (*SEEDS, *OTHER_SEEDS))


def test_every_canary_is_well_formed() -> None:
    for session in _sample():
        assert len(session) == 24
        assert len({c["id"] for c in session}) == 24
        assert [c["at"] for c in session] == sorted(c["at"] for c in session)
        parsed = R.canaries_from({"canaries": list(session)})
        assert [p.id for p in parsed] == [c["id"] for c in session]
        for c, p in zip(session, parsed, strict=True):
            assert KEYS <= set(c) <= KEYS | {"supersedes", "coexists"}, c
            assert c["kind"] in L.KINDS
            assert 0 < c["at"] < 1
            assert c["keep"] and all(isinstance(k, str) and len(k) >= 5 for k in c["keep"])
            assert all(k in c["text"] for k in c["keep"]), c
            assert c["style"] in L.REGISTER_OF
            assert L.TEMPLATE_BY_NAME[c["template"]].kind == c["kind"]
            assert c["subject"] and c["subject"] not in c["keep"]
            assert p.keep == tuple(c["keep"]) and p.style == c["style"]
            assert p.template == c["template"] and p.text == c["text"]
            assert p.supersedes == c.get("supersedes") and p.coexists == c.get("coexists")
    for count in (6, 13, 40):
        assert len(_canaries(17, count, 3)) == count
    with pytest.raises(ValueError, match="count"):
        L.generate(17, 5)


def test_a_correction_supersedes_an_earlier_fact_of_its_subject() -> None:
    pairs = correction_pairs(_sample())
    assert len(pairs) == 5 * len(_sample())
    for new, old in pairs:
        assert old["at"] + 0.25 <= new["at"], (old, new)
        assert new["subject"] == old["subject"] and new["template"] == old["template"]
        assert new["kind"] == old["kind"]
        assert L.TEMPLATE_BY_NAME[new["template"]].shape == "correction"
        assert new["style"] in L.CORRECTIONS and old["style"] in L.SURFACES
        assert "supersedes" not in old and "coexists" not in new and "coexists" not in old
        # the old and new values differ and each is where it should be
        assert new["keep"] != old["keep"]
        assert all(k in old["text"] for k in old["keep"])
        assert all(k in new["text"] for k in new["keep"])
        assert not any(k in old["text"] for k in new["keep"])
        names_old = L.CORRECTIONS[new["style"]][1]
        assert names_old == all(k in new["text"] for k in old["keep"]), new
        assert names_old == any(k in new["text"] for k in old["keep"]), new
    for session in _sample():  # each old fact is corrected once, by its own template only
        olds = [c["supersedes"] for c in session if "supersedes" in c]
        assert len(olds) == len(set(olds))
        for c in session:
            if L.TEMPLATE_BY_NAME[c["template"]].shape == "correction":
                same = [x for x in session if x["template"] == c["template"]]
                assert len(same) == 2 and sum("supersedes" in x for x in same) == 1


def test_a_pair_that_both_hold_has_two_subjects() -> None:
    pairs = 0
    for session in _sample():
        by_id = {c["id"]: c for c in session}
        superseded = {c["supersedes"] for c in session if "supersedes" in c}
        for c in session:
            if "coexists" not in c:
                assert L.TEMPLATE_BY_NAME[c["template"]].shape != "coexist"
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
    for session in _sample()[:6]:
        for c in session:
            if "coexists" not in c or c["id"] > c["coexists"]:
                continue
            other = next(x for x in session if x["id"] == c["coexists"])
            canaries = R.canaries_from([c, other])
            index = R.KeepIndex(canaries)
            assert index.stale == []
            held = index.of_context(
                [Message.user(c["text"]), Message.user(other["text"])]
            )  # fmt: skip
            scores = R.score_context(
                held, canaries, {c["id"]: 0, other["id"]: 1}, cut=2, said_before=2
            )
            assert [s.status for s in scores] == ["kept", "kept"]
            assert not any(s.stale or s.as_replaced for s in scores)
            only_first = index.of_context([Message.user(c["text"])])
            scores = R.score_context(
                only_first, canaries, {c["id"]: 0, other["id"]: 1}, cut=2, said_before=2
            )
            assert [s.status for s in scores] == ["kept", "lost"]


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
        if new["kind"] == "deadline":
            assert L.parse_date(old["keep"][0]) < L.parse_date(new["keep"][0])
            seen["deadline"] += 1
        elif new["kind"] == "version":
            assert L.version_key(old["keep"][0]) < L.version_key(new["keep"][0])
            seen["version"] += 1
    assert seen["deadline"] >= 10 and seen["version"] >= 10


def test_the_breadth_it_promises() -> None:
    templates = L.TEMPLATES
    assert len(templates) >= 48 and len({t.name for t in templates}) == len(templates)
    shapes = Counter(t.shape for t in templates)
    assert shapes["single"] >= 20 and shapes["correction"] >= 16 and shapes["coexist"] >= 8
    kinds = Counter(t.kind for t in templates)
    assert set(kinds) == set(L.KINDS) and len(kinds) >= 12 and min(kinds.values()) >= 3
    assert {t.kind for t in templates if t.shape == "single"} == set(L.KINDS)
    assert {t.kind for t in templates if t.shape == "correction"} == set(L.KINDS)
    assert len({t.kind for t in templates if t.shape == "coexist"}) == 8
    for t in templates:
        assert len(t.subjects) == len(t.keys) == len(t.says) == (2 if t.shape == "coexist" else 1)
        assert all(s.count("{v}") == 1 for s in t.says)
        assert t.form in L.FORMS
    assert len(L.SURFACES) >= 40
    registers = Counter(reg for reg, _ in L.SURFACES.values())
    assert set(registers) == set(L.REGISTERS) and min(registers.values()) >= 10
    assert len(L.CORRECTIONS) >= 14
    assert {reg for reg, _, _ in L.CORRECTIONS.values()} == set(L.REGISTERS)
    naming_old = [n for n, (_, old, _) in L.CORRECTIONS.items() if old]
    assert len(naming_old) >= 12 and len(L.CORRECTIONS) - len(naming_old) >= 4
    assert not set(L.SURFACES) & set(L.CORRECTIONS)
    for session in _sample():  # a session of 24: 10 singles, 5 corrections, 2 pairs
        per = Counter(L.TEMPLATE_BY_NAME[c["template"]].shape for c in session)
        assert per == {"single": 10, "correction": 10, "coexist": 4}
        assert len({c["kind"] for c in session}) >= 8
    assert {c["style"] for c in _all()} == set(L.REGISTER_OF)


def test_the_surfaces_avoid_the_earlier_sets() -> None:
    for style in L.REGISTER_OF:
        name = style.replace("_", "-")
        assert not [e for e in EARLIER_SURFACES if e in name or e in name.replace("-", "")], style


def test_values_are_made_up() -> None:
    keeps = {k for c in _all() for k in c["keep"]}
    assert len(keeps) == len(_all())
    for keep in keeps:
        if re.fullmatch(r"svc_[a-z2-9]{10}", keep):
            continue
        for run in re.findall(r"[A-Za-z]{4,}", keep):
            made_up = re.search(r"aa|ii|uu", run.lower())
            ticket = re.fullmatch(r"[A-Z]{4}", run) and re.search(rf"{run}-\d{{5}}", keep)
            assert made_up or ticket or run.lower() in FORM_WORDS, (keep, run)
        # a number stands with its unit or punctuation, never bare
        assert not re.fullmatch(r"\d+", keep), keep


def test_corrections_are_written_many_ways() -> None:
    pairs = correction_pairs(_sample())
    ways = Counter(new["style"] for new, _ in pairs)
    assert len(ways) >= 14 and max(ways.values()) <= 0.1 * len(pairs)
    naming_old = [new for new, old in pairs if any(k in new["text"] for k in old["keep"])]
    assert len(naming_old) >= 0.6 * len(pairs)
    texts = [new["text"].lower() for new, _ in pairs]
    for marker in MARKERS:
        assert sum(marker in t for t in texts) <= 0.25 * len(texts), marker
    for c in _all():  # the summarizer's own notation is not used to correct
        assert "(was " not in c["text"] and R.REPLACED_MARK not in c["text"], c
    for new, _ in pairs:  # the subject or its key is named: it can be told what it corrects
        key = L.TEMPLATE_BY_NAME[new["template"]].keys[0]
        text = new["text"].lower()
        assert new["subject"].lower() in text or key.lower() in text, new


def test_the_correction_text_alone_does_not_make_the_old_value_stale() -> None:
    bites = 0
    for new, old in correction_pairs(_sample()):
        index = R.KeepIndex(R.canaries_from([old, new]))
        held = index.of(Message.user(f"Summary of the task so far:\n{new['text']}\nNext: tests."))
        assert f"stale:{old['id']}" not in held and all(k in held for k in new["keep"]), new
        # the old fact stated as it was, elsewhere, is stale
        stated = index.of(Message.user(f"{new['text']}\n\nStill: {old['text']}"))
        assert f"stale:{old['id']}" in stated, new
        # naming the old value is safe only while the correction is quoted whole: its words cut
        # anywhere would present the old value as current
        if L.CORRECTIONS[new["style"]][1]:
            assert R.presents_as_current(new["text"], old["keep"], new["keep"]), new
            cut = index.of(Message.user(cut_outside(new["text"], [*old["keep"], *new["keep"]])))
            assert f"stale:{old['id']}" in cut, new
            bites += 1
        else:
            assert not R.presents_as_current(new["text"], old["keep"], new["keep"]), new
    assert bites >= len(correction_pairs(_sample())) // 2


@pytest.mark.parametrize(("seed", "first"), [(3, 0), (808, 0), (1234, 5)])
def test_a_run_of_16_sessions_plants_every_template_surface_and_way(seed: int, first: int) -> None:
    sessions = [_canaries(seed, 24, v) for v in range(first, first + 16)]
    assert {c["template"] for s in sessions for c in s} == set(L.TEMPLATE_BY_NAME)
    assert {c["style"] for s in sessions for c in s} == set(L.REGISTER_OF)
    for s in sessions:  # no template twice in one session (a pair counts once)
        names = Counter(c["template"] for c in s)
        for t, n in names.items():
            assert n == (1 if L.TEMPLATE_BY_NAME[t].shape == "single" else 2), t


def test_no_keep_string_occurs_in_the_recorded_sessions(swebench_path: Path) -> None:
    assert_no_keep_string_recorded(_sample(), swebench_path)


def test_every_fact_lands_in_each_placement(swebench_path: Path, tmp_path: Path) -> None:
    cases = [(3, 0), (17, 6), (808, 11), (41, 15)]
    assert_facts_land_in_each_placement(L.generate, cases, swebench_path, tmp_path)


def test_a_tiny_retention_run_with_this_generator(
    swebench_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--no-results", "--json", "--data", str(swebench_path), "--generator", str(PATH)]
    args += ["--seed", str(RUN_SEED), "--limit", "2", "--placements", "user,tool,assistant"]
    out, printed = bench_main("retention", [*args, "--no-langchain", "--jobs", "1"], capsys)
    assert f"--seed {RUN_SEED}" in printed
    assert out["seed"] == RUN_SEED and out["canary_source"] == f"generated by {PATH}"
    assert out["canary_count"] == 24 and out["sessions"] == 2
    # its keys only, never its figures (nor a failure message that would print them)
    named = {
        "survival_after_5_by_template": set(L.TEMPLATE_BY_NAME),
        "survival_after_5_by_style": set(L.REGISTER_OF),
        "survival_after_5_by_kind": set(L.KINDS),
        "stale_by_correction": set(L.TEMPLATE_BY_NAME),
        "coexisting_after_5": set(),
        "by_placement": set(R.PLACEMENTS),
    }
    for key, names in named.items():
        present = key in out
        assert present, key
        found = nested_keys(out[key])
        covered = names <= found if key == "by_placement" else not names or bool(names & found)
        assert covered, key
