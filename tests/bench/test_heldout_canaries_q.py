"""The held-out canary set QSET (``bench/heldout_canaries_q.py``): what it promises the retention
benchmark, checked on test seeds only (never its evaluation seeds), and a tiny run whose output
keys, not figures, are looked at."""

from __future__ import annotations

import functools
import random
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.bench.support import (
    EARLIER_SURFACES,
    assert_a_quoted_correction_is_safe,
    assert_a_seed_reproduces,
    assert_a_tiny_run_names_its_parts,
    assert_canaries_well_formed,
    assert_coexisting_pairs_scored_apart,
    assert_corrections_supersede_their_subject,
    assert_evaluation_seeds_apart,
    assert_every_template_and_style_planted,
    assert_facts_land_in_each_placement,
    assert_keep_strings_apart,
    assert_main_refuses_the_evaluation_seeds,
    assert_no_keep_string_recorded,
    assert_reproduced_in_another_process,
    assert_seeds_and_sessions_draw_apart,
    correction_pairs,
    load_bench,
    value_skeleton,
)

QSET = load_bench("heldout_canaries_q")
R = load_bench("retention")

SEEDS = (19, 523, 9091)
OTHER_SEEDS = (88, 2024)
RUN_SEED = 43  # the tiny retention run
RING_SEED = 7007  # a run of 16 sessions from session 5
KEYS = {"id", "kind", "at", "text", "keep", "style", "template", "subject"}
#: words and signs that announce a correction: none may be in more than a quarter of them (set
#: P's test list first, then words of this set's own ways)
MARKERS = ("->", "→", "=>", "~~", "from ", "instead", " now", "changed", "change of", "update",
           "(not ", " was ", "new", "old", "replac", "swap", "no longer", "is in", "is out",
           "correct", "actually", "sorry", "revis", "before", "after", "moved", "?", "—",
           "confirm", "fyi", "scratch", "switch", "rather", "ignore", "disregard", "retired",
           "back to", "going forward", "from this point", "favour", "prev", "stale", "today",
           "final", "applied", "resolution", "pass this on", "adjust", "originally", "restat",
           "earlier", "above", "not ", "set to", "dropped", "use ", "override", "rev ",
           "my bad", "these days", "from here", "landed", "noted", "still",
           "hold on", "wait", "wrong", "typo", "mistake", "edited", "resolved", "expected",
           "make that", "should read", "rejected", "theirs", "slept", "two different", "pls",
           "to be sure", "running it with", "call with",
           "heard back", "made the call", "registry", "receipt", "submitted", "effective",
           "digest", "written as", "card", "source", "amend", "row above", "predates",
           "came second", "sandbox", "other one", "go with", "listed as", "taking",
           "printed copy", "go by", "countersigned", "this morning", "last year", "this year",
           "asked me", "autofill", "saved entry", "looping", "wrote to the supplier", "completed",
           "signed by", "*855*", "alteration", "master record", "origin", "target",
           "aligned", "scrape", "executed", "binds", "locale", "parsed", "disagree",
           "going by", "photo", "comparing", "difference", "signed one", "ready to submit",
           "as we discussed")  # fmt: skip
#: words that make the second value of a look-alike pair read like a correction
LOOK_ALIKE = ("instead", "though", "too", "then", "after", "but", "also")


@functools.cache
def _canaries(seed: int, count: int, variant: int) -> tuple[dict[str, Any], ...]:
    return tuple(QSET.generate(seed, count, variant)["canaries"])


@functools.cache
def _sample() -> tuple[tuple[dict[str, Any], ...], ...]:
    return tuple(_canaries(s, 24, v) for s in SEEDS for v in range(10))


def _all() -> list[dict[str, Any]]:
    return [c for session in _sample() for c in session]


def _template(c: Mapping[str, Any]) -> Any:
    return QSET.TEMPLATE_BY_NAME[c["template"]]


def _side(c: Mapping[str, Any]) -> int:
    return int(_template(c).subjects.index(c["subject"]))


def _key_of(c: Mapping[str, Any]) -> str:
    return str(_template(c).keys[_side(c)])


def _made_up_words() -> set[str]:
    """The made-up words of the sample's values: their letter runs that are no form word and no
    given name."""
    given = {g.lower() for g in QSET.GIVEN}
    return {
        run.lower()
        for c in _all()
        for k in c["keep"]
        for run in re.findall(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+", k)  # CamelCase split
        if len(run) >= 4 and run.lower() not in QSET.FORM_WORDS and run.lower() not in given
    }


def _shape(value: str) -> str:
    """``value_skeleton`` with a run of joined words (``a_a``, ``a-a``) as one word, a flash
    offset as one sign and a booking reference as one sign."""
    value = re.sub(r"0x[0-9A-F]{8}", "0xH", value)
    value = re.sub(r"^[A-Z0-9]{6}$", "P", value)
    return re.sub(r"a([_-]a)+", "a", value_skeleton(value))


def test_the_evaluation_seeds_are_not_the_test_seeds() -> None:
    assert_evaluation_seeds_apart(QSET, {*SEEDS, *OTHER_SEEDS, RUN_SEED, RING_SEED})


def test_main_refuses_the_evaluation_seeds(capsys: pytest.CaptureFixture[str]) -> None:
    assert_main_refuses_the_evaluation_seeds(QSET, 523, capsys)


def test_a_seed_reproduces_its_canaries() -> None:
    assert_a_seed_reproduces(QSET, SEEDS, 19)


def test_a_seed_reproduces_its_canaries_in_another_process() -> None:
    assert_reproduced_in_another_process(QSET, 523)


def test_other_seeds_and_sessions_draw_other_values() -> None:
    assert_seeds_and_sessions_draw_apart(_canaries, (*SEEDS, *OTHER_SEEDS))


def test_every_canary_is_well_formed() -> None:
    assert_canaries_well_formed(QSET, _sample(), KEYS, _canaries, 523)


def test_a_correction_supersedes_an_earlier_fact_of_its_subject() -> None:
    assert_corrections_supersede_their_subject(QSET, _sample(), 5)


def test_corrections_come_from_every_voice() -> None:
    """Each register corrects: the user from paper, a relayed message or an own slip, a tool's
    output (an e-signature, an EDI acknowledgement, a sync, a scraper, a GDS, a QA check) and
    the assistant from what it read or compared."""
    pairs = correction_pairs(_sample())
    by_register = Counter(QSET.CORRECTIONS[new["style"]].register for new, _ in pairs)
    assert set(by_register) == set(QSET.REGISTERS)
    assert min(by_register.values()) >= 0.2 * len(pairs)
    ways = Counter(w.register for w in QSET.CORRECTIONS.values())
    assert min(ways.values()) >= 5
    # a way that names the old value says it first, as people and tools do (UN before TK, last
    # year's tab before this year's, v2 before v3)
    naming = [(new, old) for new, old in pairs if QSET.CORRECTIONS[new["style"]].names_old]
    assert naming
    for new, old in naming:
        assert new["text"].index(old["keep"][0]) < new["text"].index(new["keep"][0]), new


def test_a_pair_that_both_hold_has_two_subjects() -> None:
    pairs = 0
    for session in _sample():
        by_id = {c["id"]: c for c in session}
        superseded = {c["supersedes"] for c in session if "supersedes" in c}
        for c in session:
            if "coexists" not in c:
                assert _template(c).shape != "coexist"
                continue
            other = by_id[c["coexists"]]
            assert other["coexists"] == c["id"]
            assert other["template"] == c["template"] and other["kind"] == c["kind"]
            assert other["subject"] != c["subject"] and other["keep"] != c["keep"]
            assert _key_of(other) != _key_of(c)
            assert c["id"] not in superseded and "supersedes" not in c
            assert not any(k in c["text"] for k in other["keep"])
            pairs += 1
    assert pairs == 2 * 3 * len(_sample())


def test_a_pair_that_both_hold_looks_like_a_correction() -> None:
    """The two sides share a head word in their keys, the second is said later, and its sentence
    has a word that usually announces a correction."""
    for t in QSET.TEMPLATES:
        if t.shape != "coexist":
            continue
        first, second = (set(k.split("_")) for k in t.keys)
        assert first & second, t.keys
        assert any(w in t.says[1] for w in LOOK_ALIKE), t.says[1]
    for session in _sample():
        for c in session:
            if "coexists" in c and _side(c) == 1:
                other = next(x for x in session if x["id"] == c["coexists"])
                assert other["at"] + 0.1 <= c["at"]


def test_a_pair_that_both_hold_is_not_scored_as_a_correction() -> None:
    assert assert_coexisting_pairs_scored_apart(_sample()[:8]) == 3 * 8


def test_no_keep_string_occurs_in_another_canary() -> None:
    assert_keep_strings_apart(_sample())
    for session in _sample():
        keeps = [k for c in session for k in c["keep"]]
        assert len(set(keeps)) == len(keeps)
        assert not [(a, b) for a in keeps for b in keeps if a != b and a in b]
        for c in session:  # only a correction of its way names the value it corrects
            for other in session:
                if other is not c and c["keep"][0] in other["text"]:
                    assert other.get("supersedes") == c["id"]
                    assert QSET.CORRECTIONS[other["style"]].names_old


def test_the_two_values_of_a_pair_have_one_form() -> None:
    checked = restyled = 0
    for session in _sample():
        by_id = {c["id"]: c for c in session}
        for c in session:
            other = c.get("supersedes") or c.get("coexists")
            if not other:
                continue
            (a,), (b,) = c["keep"], by_id[other]["keep"]
            if _template(c).form == "date":
                assert QSET.parse_date(a) != QSET.parse_date(b)
                if "coexists" in c:
                    assert QSET.date_style(a) == QSET.date_style(b)
                else:
                    restyled += QSET.date_style(a) != QSET.date_style(b)
            else:
                assert _shape(a) == _shape(b), (a, b)
            if _template(c).form == "company":  # a company keeps its legal suffix
                assert a.split(" ", 1)[1] == b.split(" ", 1)[1], (a, b)
            checked += 1
    assert checked == (5 + 3 * 2) * len(_sample())
    assert restyled >= 1  # a later date is sometimes written another way


def test_deadlines_slip_versions_go_up_and_pairs_keep_their_order() -> None:
    seen = Counter[str]()
    for session in _sample():
        by_id = {c["id"]: c for c in session}
        for c in session:
            t = _template(c)
            if "supersedes" in c:
                first = by_id[c["supersedes"]]
            elif "coexists" in c and t.order and _side(c) == 1:
                first = by_id[c["coexists"]]
            else:
                continue
            (a,), (b,) = first["keep"], c["keep"]
            if t.form == "date":
                assert QSET.parse_date(a) < QSET.parse_date(b), (a, b)
                seen["date"] += 1
            elif t.form == "appver" and t.order:
                assert QSET.version_key(a) < QSET.version_key(b), (a, b)
                seen["version"] += 1
            elif t.order and "coexists" in c:
                up = QSET.magnitude(t.form, a) < QSET.magnitude(t.form, b)
                assert up == (t.order == "up"), (t.name, a, b)
                seen[t.order] += 1
    assert seen["date"] >= 10 and seen["version"] >= 5
    assert seen["up"] >= 5 and seen["down"] >= 5
    for c in _all():  # every date and version of the set reads back
        form, (value,) = _template(c).form, c["keep"]
        if form == "date":
            assert QSET.parse_date(value).year in QSET.YEARS, value
        elif form == "appver":
            assert len(QSET.version_key(value)) == 3, value


def test_ordered_values_never_run_out() -> None:
    """A second value above or below the first is found even when the first is drawn near the
    end of its range (a version ``9.98 (…)``, a count near 9999), and many sessions of other
    seeds, at the smallest, default and largest counts, all draw."""
    ordered = {(t.form, t.order) for t in QSET.TEMPLATES if t.order and t.form != "date"}
    assert {o for _, o in ordered} == {"up", "down"}
    for form, order in sorted(ordered):
        for i in range(1500):
            a, b = QSET.Draw(random.Random(f"two:{form}:{i}")).two(form, order, False)
            if form == "appver":
                up = QSET.version_key(a) < QSET.version_key(b)
            else:
                up = QSET.magnitude(form, a) < QSET.magnitude(form, b)
            assert a != b and up == (order == "up"), (form, a, b)
    for seed in range(300, 330):
        assert seed not in QSET.EVALUATION_SEEDS
        for variant in range(16):
            for count in (6, 24, QSET.MAX_COUNT) if variant == 0 else (24,):
                for c in QSET.generate(seed, count, variant)["canaries"]:
                    if _template(c).form == "date":
                        assert QSET.parse_date(c["keep"][0]).year in QSET.YEARS, c["keep"]


def test_the_breadth_it_promises() -> None:
    templates = QSET.TEMPLATES
    assert len(templates) >= 54 and len({t.name for t in templates}) == len(templates)
    shapes = Counter(t.shape for t in templates)
    assert shapes["single"] >= 24 and shapes["correction"] >= 19 and shapes["coexist"] >= 11
    kinds = Counter(t.kind for t in templates)
    assert set(kinds) == set(QSET.KINDS) and len(kinds) == 12 and min(kinds.values()) >= 3
    assert {t.kind for t in templates if t.shape == "single"} == set(QSET.KINDS)
    assert {t.kind for t in templates if t.shape == "correction"} == set(QSET.KINDS)
    assert len({t.kind for t in templates if t.shape == "coexist"}) >= 10
    for t in templates:
        sides = 2 if t.shape == "coexist" else 1
        assert len(t.subjects) == len(t.keys) == len(t.says) == sides
        assert all(s.count("{v}") == 1 for s in t.says)
        assert t.order in {"", "up", "down"}
    assert len({t.form for t in templates}) >= 20  # many value forms
    assert len(QSET.SURFACES) >= 37
    registers = Counter(s.register for s in QSET.SURFACES.values())
    assert set(registers) == set(QSET.REGISTERS) and min(registers.values()) >= 12
    uses = Counter(s.uses for s in QSET.SURFACES.values())
    assert uses["says"] >= 18 and uses["fields"] >= 18
    assert len(QSET.CORRECTIONS) >= 18
    assert {w.register for w in QSET.CORRECTIONS.values()} == set(QSET.REGISTERS)
    naming_old = [n for n, w in QSET.CORRECTIONS.items() if w.names_old]
    assert len(naming_old) >= 5 and len(QSET.CORRECTIONS) - len(naming_old) >= 12
    assert not set(QSET.SURFACES) & set(QSET.CORRECTIONS)
    for session in _sample():  # a session of 24: 8 singles, 5 corrections, 3 pairs
        per = Counter(_template(c).shape for c in session)
        assert per == {"single": 8, "correction": 10, "coexist": 6}
        assert len({c["kind"] for c in session}) >= 6
        assert {QSET.REGISTER_OF[c["style"]] for c in session} == set(QSET.REGISTERS)
    assert {c["style"] for c in _all()} == set(QSET.REGISTER_OF)


def test_the_surfaces_avoid_the_earlier_sets() -> None:
    earlier = set()
    for name in ("heldout_canaries_k", "heldout_canaries_l", "heldout_canaries_m",
                 "heldout_canaries_n", "heldout_canaries_o", "heldout_canaries_p"):  # fmt: skip
        earlier |= set(load_bench(name).REGISTER_OF)
    for style in QSET.REGISTER_OF:
        name = style.replace("_", "-")
        assert not [e for e in EARLIER_SURFACES if e in name or e in name.replace("-", "")], style
        assert style not in earlier, style


def test_a_text_holds_its_fact_the_way_its_surface_writes_it() -> None:
    for c in _all():
        if "supersedes" in c:
            continue
        t, side, (value,) = _template(c), _side(c), c["keep"]
        text = c["text"]
        if QSET.SURFACES[c["style"]].uses == "says":
            assert t.says[side].format(v=value).lower() in text.lower(), c
        else:
            lines = text.split("\n")
            at = next(i for i, x in enumerate(lines) if value in x)
            near = "\n".join(lines[max(0, at - 1) : at + 1])  # a grid: the header line before
            assert any(s in near for s in QSET.key_spellings(t.keys[side])), (c["style"], near)


def test_a_correction_names_what_it_corrects() -> None:
    for new, _ in correction_pairs(_sample()):
        t = _template(new)
        text = new["text"].lower()
        spellings = [s.lower() for s in QSET.key_spellings(t.keys[0])]
        assert new["subject"].lower() in text or any(s in text for s in spellings), new


def test_values_are_made_up() -> None:
    forms = {
        "appver": r"\d\.\d\d \(\d{5}\)",
        "person": r"[A-Z][a-z]+ [A-Z]\. [A-Z][a-z]+",
        "flight": r"[A-Z]{2} \d{4}",
        "pnr": r"(?=.*\d)(?=(?:.*[A-Z]){3})[A-Z0-9]{6}",
        "po": r"PO 45\d{8}",
        "tracking": r"[A-Z]{2}\d{9}[A-Z]{2}",
        "hexaddr": r"0x[0-9A-F]{6}00",
        "cfgsym": r"CONFIG_[A-Z]+_[A-Z]+",
        "company": r"[A-Z][a-z]+ [A-Za-z.]+",
        "term": r"[A-Z][a-z]{4,9}",
    }
    for c in _all():
        form, (keep,) = _template(c).form, c["keep"]
        if form == "date":
            assert QSET.parse_date(keep), keep
        elif form in QSET.UNITS:  # a number stands with its unit
            assert keep.endswith(QSET.UNITS[form]) and QSET.magnitude(form, keep) > 0, keep
        elif form in forms:
            assert re.fullmatch(forms[form], keep), (form, keep)
        else:
            assert not re.fullmatch(r"[\d.,:/ ]+", keep), keep
    words = _made_up_words()
    assert len(words) >= 500
    assert not words & QSET.FORM_WORDS
    # they do not share one visible mark: no letter pair in a quarter of them, many openings
    # and lengths, not the doubled vowels, q or w of earlier sets
    pairs = Counter(p for w in words for p in {w[i : i + 2] for i in range(len(w) - 1)})
    assert max(pairs.values()) <= 0.25 * len(words), pairs.most_common(3)
    assert len({w[0] for w in words}) >= 18
    assert len({len(w) for w in words}) >= 5
    assert not [w for w in words if re.search(r"aa|ee|ii|oo|uu|q|w", w)]


def test_corrections_are_written_many_ways() -> None:
    pairs = correction_pairs(_sample())
    ways = Counter(new["style"] for new, _ in pairs)
    assert len(ways) >= 18 and max(ways.values()) <= 0.1 * len(pairs)
    naming_old = [new for new, old in pairs if old["keep"][0] in new["text"]]
    assert 0.15 * len(pairs) <= len(naming_old) <= 0.5 * len(pairs)  # most name only the new
    texts = [new["text"].lower() for new, _ in pairs]
    for marker in MARKERS:
        assert sum(marker in t for t in texts) <= 0.25 * len(texts), marker
    # no marker word is in more than a quarter of the ways either
    for marker in MARKERS:
        using = {new["style"] for new, _ in pairs if marker in new["text"].lower()}
        assert len(using) <= 0.25 * len(QSET.CORRECTIONS), (marker, using)
    for c in _all():  # the summarizer's own notation is not used to correct
        assert "(was " not in c["text"] and R.REPLACED_MARK not in c["text"], c


def test_the_correction_text_alone_does_not_make_the_old_value_stale() -> None:
    assert_a_quoted_correction_is_safe(
        correction_pairs(_sample()), lambda new: bool(QSET.CORRECTIONS[new["style"]].names_old)
    )


@pytest.mark.parametrize(("seed", "first"), [(19, 0), (9091, 0), (RING_SEED, 5)])
def test_a_run_of_16_sessions_plants_every_template_surface_and_way(seed: int, first: int) -> None:
    sessions = [_canaries(seed, 24, v) for v in range(first, first + 16)]
    assert_every_template_and_style_planted(sessions, QSET.TEMPLATE_BY_NAME, QSET.REGISTER_OF)


def test_no_keep_string_occurs_in_the_recorded_sessions(swebench_path: Path) -> None:
    assert_no_keep_string_recorded(_sample(), swebench_path)


def test_made_up_words_are_not_words_of_the_recorded_sessions(swebench_path: Path) -> None:
    recorded = swebench_path.read_text(encoding="utf-8").lower()
    long_words = {w for w in _made_up_words() if len(w) >= 6}
    assert len(long_words) >= 300
    found = [w for w in long_words if w in recorded]
    assert len(found) <= 0.02 * len(long_words), found


def test_every_fact_lands_in_each_placement(swebench_path: Path, tmp_path: Path) -> None:
    cases = [(19, 0), (523, 6), (9091, 11), (88, 15)]
    assert_facts_land_in_each_placement(QSET.generate, cases, swebench_path, tmp_path)


def test_a_tiny_retention_run_with_this_generator(
    swebench_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_a_tiny_run_names_its_parts(QSET, RUN_SEED, swebench_path, capsys)
