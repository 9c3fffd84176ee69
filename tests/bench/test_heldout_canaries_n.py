"""The held-out canary set N (``bench/heldout_canaries_n.py``): what it promises the retention
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

N = load_bench("heldout_canaries_n")
R = load_bench("retention")

SEEDS = (7, 29, 613)
OTHER_SEEDS = (52, 1999)
RUN_SEED = 47  # the tiny retention run
KEYS = {"id", "kind", "at", "text", "keep", "style", "template", "subject", "spelled"}
#: words and signs that announce a correction: none may be in more than a quarter of them
MARKERS = ("->", "→", "=>", "~~", "from ", "instead", " now", "changed", "change of", "update",
           "(not ", " was ", "new", "old", "replac", "swap", "no longer", "is in", "is out",
           "correct", "actually", "sorry", "revis", "before", "after", "moved", "?", "—",
           "confirm", "fyi", "scratch", "switch", "rather", "ignore", "disregard", "retired",
           "back to", "going forward", "from this point", "favour", "prev", "stale", "today",
           "final", "applied", "resolution", "pass this on", "adjust", "originally", "restat",
           "earlier", "above", "not ", "set to", "dropped", "use ", "override", "rev ",
           "my bad", "these days", "from here", "landed", "noted", "still")  # fmt: skip
#: the forms whose corrections may write the new value another way than the old one
WRITTEN_MANY_WAYS = (*N.NOTATIONS, "date")


@functools.cache
def _canaries(seed: int, count: int, variant: int) -> tuple[dict[str, Any], ...]:
    return tuple(N.generate(seed, count, variant)["canaries"])


@functools.cache
def _sample() -> tuple[tuple[dict[str, Any], ...], ...]:
    return tuple(_canaries(s, 24, v) for s in SEEDS for v in range(10))


def _all() -> list[dict[str, Any]]:
    return [c for session in _sample() for c in session]


def _form(c: dict[str, Any]) -> str:
    return str(N.TEMPLATE_BY_NAME[c["template"]].form)


def _made_up_words() -> set[str]:
    """The made-up words of the sample's values: their letter runs that are no form word."""
    return {
        run.lower()
        for c in _all()
        for k in c["keep"]
        for run in re.findall(r"[A-Za-z]{4,}", k)
        if run.lower() not in N.FORM_WORDS
    }


def _key_of(c: dict[str, Any]) -> str:
    t = N.TEMPLATE_BY_NAME[c["template"]]
    return str(t.keys[t.subjects.index(c["subject"])])


def test_the_evaluation_seeds_are_not_the_test_seeds() -> None:
    assert_evaluation_seeds_apart(N, {*SEEDS, *OTHER_SEEDS, RUN_SEED, 1234})


def test_a_seed_reproduces_its_canaries() -> None:
    assert_a_seed_reproduces(N, SEEDS, 7)


def test_a_seed_reproduces_its_canaries_in_another_process() -> None:
    assert_reproduced_in_another_process(N, 29)


def test_other_seeds_and_sessions_draw_other_values() -> None:
    assert_seeds_and_sessions_draw_apart(_canaries, (*SEEDS, *OTHER_SEEDS))


def test_the_values_of_a_run_are_distinct() -> None:
    for seed in SEEDS:
        keeps = [k for v in range(40) for c in _canaries(seed, 24, v) for k in c["keep"]]
        repeated = [k for k, n in Counter(keeps).items() if n > 1]
        assert not repeated, (seed, repeated)


def test_the_numbers_of_a_session_share_its_tag() -> None:
    """Numbers, dates and version patches of one session are congruent modulo ``TAGS``: what
    keeps two sessions of a run from drawing the same one."""
    for session in _sample():
        residues = set()
        for c in session:
            form, value = _form(c), c["keep"][0]
            if form in N.NOTATIONS:
                residues.add(N.magnitude(form, value) % N.TAGS)
            elif form == "date":
                residues.add((N.parse_date(value) - N.parse_date("2049-01-01")).days % N.TAGS)
            elif form == "version":
                residues.add(N.version_key(value)[-1] % N.TAGS)
        assert len(residues) == 1, residues


def test_every_canary_is_well_formed() -> None:
    for session in _sample():
        assert len(session) == 24
        assert len({c["id"] for c in session}) == 24
        assert [c["at"] for c in session] == sorted(c["at"] for c in session)
        parsed = R.canaries_from({"canaries": list(session)})
        assert [p.id for p in parsed] == [c["id"] for c in session]
        for c, p in zip(session, parsed, strict=True):
            assert KEYS <= set(c) <= KEYS | {"supersedes", "coexists"}, c
            assert c["kind"] in N.KINDS
            assert 0 < c["at"] < 1
            assert c["keep"] and all(isinstance(k, str) and len(k) >= 5 for k in c["keep"])
            assert all(k in c["text"] for k in c["keep"]), c
            assert c["style"] in N.REGISTER_OF
            assert ("supersedes" in c) == (c["style"] in N.CORRECTIONS)
            assert c["spelled"] == N.SPELLED_OF[c["style"]]
            assert N.TEMPLATE_BY_NAME[c["template"]].kind == c["kind"]
            assert c["subject"] and c["subject"] not in c["keep"]
            assert p.keep == tuple(c["keep"]) and p.style == c["style"]
            assert p.template == c["template"] and p.text == c["text"]
            assert p.supersedes == c.get("supersedes") and p.coexists == c.get("coexists")
    for count in (6, 13, 40):
        assert len(_canaries(29, count, 3)) == count
    with pytest.raises(ValueError, match="count"):
        N.generate(29, 5)


def test_a_correction_supersedes_an_earlier_fact_of_its_subject() -> None:
    pairs = correction_pairs(_sample())
    assert len(pairs) == 5 * len(_sample())
    for new, old in pairs:
        assert old["at"] + 0.25 <= new["at"], (old, new)
        assert new["subject"] == old["subject"] and new["template"] == old["template"]
        assert new["kind"] == old["kind"]
        assert N.TEMPLATE_BY_NAME[new["template"]].shape == "correction"
        assert new["style"] in N.CORRECTIONS and old["style"] in N.SURFACES
        assert "supersedes" not in old and "coexists" not in new and "coexists" not in old
        # the old and new values differ and each is where it should be
        assert new["keep"] != old["keep"]
        assert all(k in old["text"] for k in old["keep"])
        assert all(k in new["text"] for k in new["keep"])
        assert not any(k in old["text"] for k in new["keep"])
        names_old = N.CORRECTIONS[new["style"]].names_old
        assert names_old == all(k in new["text"] for k in old["keep"]), new
        assert names_old == any(k in new["text"] for k in old["keep"]), new
    for session in _sample():  # each old fact is corrected once, by its own template only
        olds = [c["supersedes"] for c in session if "supersedes" in c]
        assert len(olds) == len(set(olds))
        for c in session:
            if N.TEMPLATE_BY_NAME[c["template"]].shape == "correction":
                same = [x for x in session if x["template"] == c["template"]]
                assert len(same) == 2 and sum("supersedes" in x for x in same) == 1


def test_a_pair_that_both_hold_has_two_subjects() -> None:
    pairs = 0
    for session in _sample():
        by_id = {c["id"]: c for c in session}
        superseded = {c["supersedes"] for c in session if "supersedes" in c}
        for c in session:
            if "coexists" not in c:
                assert N.TEMPLATE_BY_NAME[c["template"]].shape != "coexist"
                continue
            other = by_id[c["coexists"]]
            assert other["coexists"] == c["id"]
            assert other["template"] == c["template"] and other["kind"] == c["kind"]
            assert other["subject"] != c["subject"] and other["keep"] != c["keep"]
            assert _key_of(other) != _key_of(c)
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
    checked = switched = 0
    for session in _sample():
        by_id = {c["id"]: c for c in session}
        for c in session:
            other = c.get("supersedes") or c.get("coexists")
            if not other:
                continue
            a, b = c["keep"][0], by_id[other]["keep"][0]
            form = _form(c)
            if form == "acct":  # letters of either case between digits
                a, b = a.lower(), b.lower()
            if form in N.NOTATIONS:  # the same quantity, if not always written the same way
                assert N.magnitude(form, a) != N.magnitude(form, b), (a, b)
            elif form == "date":
                assert N.parse_date(a) != N.parse_date(b)
            else:
                assert value_skeleton(a) == value_skeleton(b), (a, b)
            if "coexists" in c:  # both sides of a coexisting pair are written alike
                assert value_skeleton(a) == value_skeleton(b), (a, b)
            else:
                switched += value_skeleton(a) != value_skeleton(b)
            checked += 1
    assert checked == 9 * len(_sample())
    assert switched >= 25  # numbers and dates written another way (share: the next test)


def test_numbers_and_dates_are_written_many_ways() -> None:
    seen: dict[str, set[str]] = {}
    for c in _all():
        form = _form(c)
        if form in WRITTEN_MANY_WAYS:
            seen.setdefault(form, set()).add(value_skeleton(re.sub(r"[,.]", "", c["keep"][0])))
    for form, ways in N.NOTATIONS.items():  # every notation of a number form is drawn
        shapes = {
            value_skeleton(re.sub(r"[,.]", "", k))
            for c in _all()
            if _form(c) == form
            for k in c["keep"]
        }
        assert len(shapes) >= min(ways, 2), (form, shapes)
    assert len(seen["date"]) >= N.DATE_STYLES - 1
    pairs = [
        (new, old) for new, old in correction_pairs(_sample()) if _form(new) in WRITTEN_MANY_WAYS
    ]
    written_otherwise = [
        (new, old)
        for new, old in pairs
        if value_skeleton(new["keep"][0]) != value_skeleton(old["keep"][0])
    ]
    assert len(written_otherwise) >= 0.4 * len(pairs), (len(written_otherwise), len(pairs))
    for c in _all():  # a number always stands with its unit
        if _form(c) in N.NOTATIONS:
            assert re.search(r"[A-Za-z£]", c["keep"][0]), c["keep"]


def test_deadlines_slip_and_versions_go_up() -> None:
    seen = Counter[str]()
    for new, old in correction_pairs(_sample()):
        form = _form(new)
        if form == "date":
            assert N.parse_date(old["keep"][0]) < N.parse_date(new["keep"][0])
            seen["date"] += 1
        elif form == "version":
            assert N.version_key(old["keep"][0]) < N.version_key(new["keep"][0])
            seen["version"] += 1
    assert seen["date"] >= 10 and seen["version"] >= 10
    for c in _all():  # every date and version of the set reads back
        form = _form(c)
        if form == "date":
            assert N.parse_date(c["keep"][0]).year in range(2049, 2061), c["keep"]
        elif form == "version":
            assert len(N.version_key(c["keep"][0])) == 3, c["keep"]


def test_the_breadth_it_promises() -> None:
    templates = N.TEMPLATES
    assert len(templates) >= 50 and len({t.name for t in templates}) == len(templates)
    shapes = Counter(t.shape for t in templates)
    assert shapes["single"] >= 24 and shapes["correction"] >= 20 and shapes["coexist"] >= 8
    kinds = Counter(t.kind for t in templates)
    assert set(kinds) == set(N.KINDS) and len(kinds) >= 12 and min(kinds.values()) >= 3
    assert {t.kind for t in templates if t.shape == "single"} == set(N.KINDS)
    assert {t.kind for t in templates if t.shape == "correction"} == set(N.KINDS)
    assert len({t.kind for t in templates if t.shape == "coexist"}) == 8
    for t in templates:
        sides = 2 if t.shape == "coexist" else 1
        assert len(t.subjects) == len(t.keys) == len(t.says) == len(t.units) == sides
        assert all(s.count("{v}") == 1 for s in t.says)
        assert t.form in N.FORMS
    assert len(N.SURFACES) >= 40
    registers = Counter(s.register for s in N.SURFACES.values())
    assert set(registers) == set(N.REGISTERS) and min(registers.values()) >= 12
    spelled = Counter(s.spelled for s in N.SURFACES.values())
    assert spelled["key"] >= 15 and spelled["name"] >= 15 and spelled["both"] >= 1
    assert len(N.LONG) >= 15 and set(N.SURFACES) >= N.LONG
    assert len(N.CORRECTIONS) >= 20
    assert {w.register for w in N.CORRECTIONS.values()} == set(N.REGISTERS)
    assert {w.spelled for w in N.CORRECTIONS.values()} == {"key", "name"}
    naming_old = [n for n, w in N.CORRECTIONS.items() if w.names_old]
    assert len(naming_old) >= 5 and len(N.CORRECTIONS) - len(naming_old) >= 14
    assert not set(N.SURFACES) & set(N.CORRECTIONS)
    for session in _sample():  # a session of 24: 10 singles, 5 corrections, 2 pairs
        per = Counter(N.TEMPLATE_BY_NAME[c["template"]].shape for c in session)
        assert per == {"single": 10, "correction": 10, "coexist": 4}
        assert len({c["kind"] for c in session}) >= 8
    assert {c["style"] for c in _all()} == set(N.REGISTER_OF)


def test_the_surfaces_avoid_the_earlier_sets() -> None:
    earlier = set()
    for name in ("heldout_canaries_k", "heldout_canaries_l", "heldout_canaries_m"):
        earlier |= set(load_bench(name).REGISTER_OF)
    for style in N.REGISTER_OF:
        name = style.replace("_", "-")
        assert not [e for e in EARLIER_SURFACES if e in name or e in name.replace("-", "")], style
        assert style not in earlier, style


def test_keys_are_abbreviated_and_names_spelled_out() -> None:
    for t in N.TEMPLATES:
        for key, subject, says in zip(t.keys, t.subjects, t.says, strict=True):
            short = [p for p in key.split("_") if p in N.ABBREVIATIONS]
            assert short, key
            for p in short:  # the name spells the short form out and does not use it
                assert any(x in subject.lower() for x in N.ABBREVIATIONS[p]), (key, subject)
                assert not re.search(rf"\b{p}\b", subject.lower()), (key, subject)
            assert not any(s in says.lower() for s in N.key_spellings(key)), says
    keys = [k for t in N.TEMPLATES for k in t.keys]
    assert len(keys) == len(set(keys))


def test_a_text_names_its_setting_the_way_its_surface_does() -> None:
    for c in _all():
        text = c["text"].lower()
        by_key = any(s in text for s in N.key_spellings(_key_of(c)))
        assert by_key == (c["spelled"] != "name"), c
        if c["spelled"] == "key":  # the key only: the spelled-out name is not there
            assert c["subject"].lower() not in text, c
        if c["spelled"] == "both" or ("supersedes" in c and c["spelled"] == "name"):
            assert c["subject"].lower() in text, c


def test_a_correction_mostly_names_its_setting_the_other_way() -> None:
    pairs = correction_pairs(_sample())
    other_way = [n for n, o in pairs if {n["spelled"], o["spelled"]} == {"key", "name"}]
    same_way = [n for n, o in pairs if n["spelled"] == o["spelled"]]
    assert len(other_way) >= 0.6 * len(pairs) and len(same_way) >= 0.1 * len(pairs)
    for new, _ in pairs:  # the subject or its key is named: it can be told what it corrects
        text = new["text"].lower()
        named = new["subject"].lower() in text
        assert named or any(s in text for s in N.key_spellings(_key_of(new))), new


def test_a_long_output_holds_the_fact_in_its_middle() -> None:
    seen = 0
    for c in _all():
        if c["style"] not in N.LONG:
            continue
        lines = c["text"].split("\n")
        holding = [i for i, line in enumerate(lines) if any(k in line for k in c["keep"])]
        assert len([line for line in lines if line.strip()]) >= 12, c["text"]
        assert len(holding) == 1, c
        assert 0.25 * len(lines) <= holding[0] <= 0.75 * len(lines), c["text"]
        seen += 1
    assert seen >= 150


def test_identifiers_and_preferences_come_from_tools_or_the_assistant() -> None:
    facts = [c for c in _all() if c["kind"] in N.NOT_TYPED and "supersedes" not in c]
    assert len(facts) >= 50
    assert all(N.REGISTER_OF[c["style"]] in ("tool", "assistant") for c in facts)
    assert {N.REGISTER_OF[c["style"]] for c in facts} == {"tool", "assistant"}


def test_values_are_made_up() -> None:
    keeps = {k for c in _all() for k in c["keep"]}
    assert len(keeps) == len(_all())
    for c in _all():
        form = _form(c)
        for keep in c["keep"]:
            if form == "version":
                assert re.fullmatch(r"\d+\.\d+\.\d+", keep), keep
            elif form == "date":
                assert N.parse_date(keep), keep
            else:  # a number stands with its unit or with words, never bare
                assert not re.fullmatch(r"[\d.,:/ ]+", keep), keep
    words = _made_up_words()
    assert len(words) >= 500
    assert not words & N.FORM_WORDS
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
    assert len(ways) >= 20 and max(ways.values()) <= 0.1 * len(pairs)
    naming_old = [new for new, old in pairs if any(k in new["text"] for k in old["keep"])]
    assert 0.15 * len(pairs) <= len(naming_old) <= 0.5 * len(pairs)  # most name only the new
    texts = [new["text"].lower() for new, _ in pairs]
    for marker in MARKERS:
        assert sum(marker in t for t in texts) <= 0.25 * len(texts), marker
    for c in _all():  # the summarizer's own notation is not used to correct
        assert "(was " not in c["text"] and R.REPLACED_MARK not in c["text"], c


def test_the_correction_text_alone_does_not_make_the_old_value_stale() -> None:
    assert_a_quoted_correction_is_safe(
        correction_pairs(_sample()), lambda new: bool(N.CORRECTIONS[new["style"]].names_old)
    )


@pytest.mark.parametrize(("seed", "first"), [(7, 0), (613, 0), (1234, 5)])
def test_a_run_of_16_sessions_plants_every_template_surface_and_way(seed: int, first: int) -> None:
    sessions = [_canaries(seed, 24, v) for v in range(first, first + 16)]
    assert_every_template_and_style_planted(sessions, N.TEMPLATE_BY_NAME, N.REGISTER_OF)


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
    assert_facts_land_in_each_placement(N.generate, cases, swebench_path, tmp_path)


def test_a_tiny_retention_run_with_this_generator(
    swebench_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_a_tiny_run_names_its_parts(N, RUN_SEED, swebench_path, capsys)
