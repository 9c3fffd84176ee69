"""The held-out canary set OSET (``bench/heldout_canaries_o.py``): what it promises the retention
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
    EARLIER_SURFACES,
    assert_a_quoted_correction_is_safe,
    assert_a_seed_reproduces,
    assert_a_tiny_run_names_its_parts,
    assert_coexisting_pairs_scored_apart,
    assert_evaluation_seeds_apart,
    assert_every_template_and_style_planted,
    assert_facts_land_in_each_placement,
    assert_main_refuses_the_evaluation_seeds,
    assert_no_keep_string_recorded,
    assert_reproduced_in_another_process,
    assert_seeds_and_sessions_draw_apart,
    correction_pairs,
    load_bench,
    value_skeleton,
)

OSET = load_bench("heldout_canaries_o")
R = load_bench("retention")

SEEDS = (3, 11, 404)
OTHER_SEEDS = (58, 2718)
RUN_SEED = 61  # the tiny retention run
KEYS = {"id", "kind", "at", "text", "keep", "style", "template", "subject"}
#: words and signs that announce a correction: none may be in more than a quarter of them (set
#: N's list first, then words of this set's own ways)
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
           "to be sure", "running it with", "call with")  # fmt: skip
#: words that make the second value of a look-alike pair read like a correction
LOOK_ALIKE = ("instead", "though", "too", "and ", "past", "for good")


@functools.cache
def _canaries(seed: int, count: int, variant: int) -> tuple[dict[str, Any], ...]:
    return tuple(OSET.generate(seed, count, variant)["canaries"])


@functools.cache
def _sample() -> tuple[tuple[dict[str, Any], ...], ...]:
    return tuple(_canaries(s, 24, v) for s in SEEDS for v in range(10))


def _all() -> list[dict[str, Any]]:
    return [c for session in _sample() for c in session]


def _template(c: dict[str, Any]) -> Any:
    return OSET.TEMPLATE_BY_NAME[c["template"]]


def _form(c: dict[str, Any]) -> str:
    return str(_template(c).form)


def _side(c: dict[str, Any]) -> int:
    return int(_template(c).subjects.index(c["subject"]))


def _key_of(c: dict[str, Any]) -> str:
    return str(_template(c).keys[_side(c)])


def _changed(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    """The old value's keep strings a correction does not carry."""
    return [k for k in old["keep"] if k not in new["keep"]]


def _made_up_words() -> set[str]:
    """The made-up words of the sample's values: their letter runs that are no form word, no
    given name and no part of a hex sha."""
    given = {g.lower() for g in OSET.GIVEN}
    return {
        run.lower()
        for c in _all()
        if _form(c) != "sha"
        for k in c["keep"]
        for run in re.findall(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+", k)  # CamelCase split
        if len(run) >= 4 and run.lower() not in OSET.FORM_WORDS and run.lower() not in given
    }


def _shape(value: str) -> str:
    """``value_skeleton`` with a run of joined words (``a_a_a``, ``AaAa``) as one word: a form's
    fixed words vary in number (``test_x_roundtrip``, ``test_x_handles_empty_page``)."""
    out = re.sub(r"a([_-]a)+", "a", value_skeleton(value))
    return re.sub(r"(Aa)+", "Aa", out)


def test_the_evaluation_seeds_are_not_the_test_seeds() -> None:
    assert_evaluation_seeds_apart(OSET, {*SEEDS, *OTHER_SEEDS, RUN_SEED, 917})


def test_main_refuses_the_evaluation_seeds(capsys: pytest.CaptureFixture[str]) -> None:
    assert_main_refuses_the_evaluation_seeds(OSET, 11, capsys)


def test_a_seed_reproduces_its_canaries() -> None:
    assert_a_seed_reproduces(OSET, SEEDS, 3)


def test_a_seed_reproduces_its_canaries_in_another_process() -> None:
    assert_reproduced_in_another_process(OSET, 11)


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
            assert KEYS <= set(c) <= KEYS | {"supersedes", "coexists", "carried"}, c
            assert c["kind"] in OSET.KINDS
            assert 0 < c["at"] < 1
            assert c["keep"] and all(isinstance(k, str) and len(k) >= 5 for k in c["keep"])
            assert all(k in c["text"] for k in c["keep"]), c
            assert len(c["keep"]) == len(_template(c).parts)
            assert c["style"] in OSET.REGISTER_OF
            assert ("supersedes" in c) == (c["style"] in OSET.CORRECTIONS)
            assert "carried" not in c or "supersedes" in c
            assert _template(c).kind == c["kind"]
            assert c["subject"] and c["subject"] not in c["keep"]
            assert p.keep == tuple(c["keep"]) and p.style == c["style"]
            assert p.template == c["template"] and p.text == c["text"]
            assert p.supersedes == c.get("supersedes") and p.coexists == c.get("coexists")
    for count in (6, 7, 13, 40, OSET.MAX_COUNT):
        session = _canaries(11, count, 3)
        assert len(session) == count
        shapes = Counter(_template(c).shape for c in session)
        assert shapes["single"] >= 1 and shapes["correction"] >= 2 and shapes["coexist"] >= 2
    for bad in (5, OSET.MAX_COUNT + 1):
        with pytest.raises(ValueError, match="count"):
            OSET.generate(11, bad)


def test_a_correction_supersedes_an_earlier_fact_of_its_subject() -> None:
    pairs = correction_pairs(_sample())
    assert len(pairs) == 5 * len(_sample())
    for new, old in pairs:
        assert old["at"] + 0.2 <= new["at"], (old, new)
        assert new["subject"] == old["subject"] and new["template"] == old["template"]
        assert new["kind"] == old["kind"]
        assert _template(new).shape == "correction"
        assert new["style"] in OSET.CORRECTIONS and old["style"] in OSET.SURFACES
        assert "supersedes" not in old and "coexists" not in new and "coexists" not in old
        # the old and new values differ in at least one part, and each is where it should be
        changed = _changed(new, old)
        assert changed and new["keep"] != old["keep"]
        assert new.get("carried", []) == [k for k in new["keep"] if k in old["keep"]]
        assert all(k in old["text"] for k in old["keep"])
        assert all(k in new["text"] for k in new["keep"])
        assert not any(k in old["text"] for k in new["keep"] if k not in old["keep"])
        names_old = OSET.CORRECTIONS[new["style"]].names_old
        assert names_old == all(k in new["text"] for k in changed), new
        assert names_old == any(k in new["text"] for k in changed), new
    for session in _sample():  # each old fact is corrected once, by its own template only
        olds = [c["supersedes"] for c in session if "supersedes" in c]
        assert len(olds) == len(set(olds))
        for c in session:
            if _template(c).shape == "correction":
                same = [x for x in session if x["template"] == c["template"]]
                assert len(same) == 2 and sum("supersedes" in x for x in same) == 1


def test_a_compound_fact_needs_both_of_its_parts() -> None:
    compound = [c for c in _all() if _template(c).compound]
    assert len(compound) >= 80
    assert sum(t.compound for t in OSET.TEMPLATES) >= 10
    for c in compound[:40]:
        assert len(c["keep"]) == 2 and c["keep"][0] != c["keep"][1]
        canaries = R.canaries_from([c])
        index = R.KeepIndex(canaries)
        for part in c["keep"]:  # only one part left: the fact is lost
            held = index.of_context([Message.user(f"Notes so far: {part}.")])
            scores = R.score_context(held, canaries, {c["id"]: 0}, cut=1, said_before=1)
            assert [s.status for s in scores] == ["lost"]
        held = index.of_context([Message.user(c["text"])])
        scores = R.score_context(held, canaries, {c["id"]: 0}, cut=1, said_before=1)
        assert [s.status for s in scores] == ["kept"]


def test_a_partial_correction_carries_the_part_it_does_not_change() -> None:
    pairs = [(n, o) for n, o in correction_pairs(_sample()) if _template(n).compound]
    partial = [(n, o) for n, o in pairs if n.get("carried")]
    assert len(pairs) >= 20 and len(partial) >= 0.5 * len(pairs)
    assert len({n["template"] for n, _ in partial}) >= 4
    for new, old in partial:
        (carried,) = new["carried"]
        assert carried in old["keep"] and carried in new["keep"]
        assert carried in old["text"] and carried in new["text"]
        (changed,) = _changed(new, old)
        index = R.KeepIndex(R.canaries_from([old, new]))
        # the correction alone, or a summary holding the new value whole, is not stale: the
        # carried part is the new value's too
        summary = f"Current: {new['subject']}: "
        summary += " / ".join(new["keep"])
        held = index.of(Message.user(summary))
        assert f"stale:{old['id']}" not in held
        # the changed part said as current is
        held = index.of(Message.user(f"{summary}; also {changed}"))
        assert f"stale:{old['id']}" in held


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
    for t in OSET.TEMPLATES:
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
    """As ``support.assert_keep_strings_apart``, but a partial correction and the fact it
    corrects share the part it carries."""
    for session in _sample():
        for a in session:
            for b in session:
                if a is b:
                    continue
                pair = b.get("supersedes") == a["id"] or a.get("supersedes") == b["id"]
                for k in a["keep"]:
                    if k not in b["text"]:
                        continue
                    carried = pair and k in b["keep"]
                    named_old = b.get("supersedes") == a["id"] and (
                        OSET.CORRECTIONS[b["style"]].names_old
                    )
                    assert carried or named_old, (a["id"], b["id"], k)
        keeps = {k for c in session for k in c["keep"]}
        assert not [(a, b) for a in keeps for b in keeps if a != b and a in b]


def test_the_two_values_of_a_pair_have_one_form() -> None:
    checked = restyled = 0
    for session in _sample():
        by_id = {c["id"]: c for c in session}
        for c in session:
            other = c.get("supersedes") or c.get("coexists")
            if not other:
                continue
            for a, b, form in zip(c["keep"], by_id[other]["keep"], _template(c).parts, strict=True):
                if form == "date":
                    assert OSET.parse_date(a) != OSET.parse_date(b) or a == b
                    if "coexists" in c:
                        assert OSET.date_style(a) == OSET.date_style(b)
                    else:
                        restyled += OSET.date_style(a) != OSET.date_style(b)
                elif form == "sha":
                    assert re.fullmatch(r"[0-9a-f]{12}", a) and re.fullmatch(r"[0-9a-f]{12}", b)
                else:
                    assert _shape(a) == _shape(b), (a, b)
            checked += 1
    assert checked == (5 + 3 * 2) * len(_sample())
    assert restyled >= 1  # a later date is sometimes written another way


def test_deadlines_slip_and_versions_go_up() -> None:
    seen = Counter[str]()
    for session in _sample():
        by_id = {c["id"]: c for c in session}
        for c in session:
            t = _template(c)
            if "supersedes" in c:
                first = by_id[c["supersedes"]]
            elif "coexists" in c and t.later and _side(c) == 1:
                first = by_id[c["coexists"]]
            else:
                continue
            for form, a, b in zip(t.parts, first["keep"], c["keep"], strict=True):
                if form == "date":
                    assert OSET.parse_date(a) < OSET.parse_date(b), (a, b)
                    seen["date"] += 1
                elif form == "version" and a != b:
                    assert OSET.version_key(a) < OSET.version_key(b), (a, b)
                    seen["version"] += 1
    assert seen["date"] >= 10 and seen["version"] >= 10
    for c in _all():  # every date and version of the set reads back
        for form, value in zip(_template(c).parts, c["keep"], strict=True):
            if form == "date":
                assert OSET.parse_date(value).year in OSET.YEARS, value
            elif form == "version":
                assert len(OSET.version_key(value)) == 5, value


def test_the_breadth_it_promises() -> None:
    templates = OSET.TEMPLATES
    assert len(templates) >= 50 and len({t.name for t in templates}) == len(templates)
    shapes = Counter(t.shape for t in templates)
    assert shapes["single"] >= 24 and shapes["correction"] >= 20 and shapes["coexist"] >= 10
    kinds = Counter(t.kind for t in templates)
    assert set(kinds) == set(OSET.KINDS) and len(kinds) == 12 and min(kinds.values()) >= 3
    assert {t.kind for t in templates if t.shape == "single"} == set(OSET.KINDS)
    assert {t.kind for t in templates if t.shape == "correction"} == set(OSET.KINDS)
    assert len({t.kind for t in templates if t.shape == "coexist"}) >= 10
    for t in templates:
        sides = 2 if t.shape == "coexist" else 1
        assert len(t.subjects) == len(t.keys) == len(t.says) == sides
        slots = {"{" + s + "}" for s in t.slots}
        assert all(all(s.count(p) == 1 for p in slots) for s in t.says)
        assert all(p in t.inline for p in slots)
        assert all(p in "".join(fmt for _, fmt in t.fields) for p in slots)
        assert set(t.modes) <= {"whole", *t.slots}
    assert len(OSET.SURFACES) >= 40
    registers = Counter(s.register for s in OSET.SURFACES.values())
    assert set(registers) == set(OSET.REGISTERS) and min(registers.values()) >= 12
    uses = Counter(s.uses for s in OSET.SURFACES.values())
    assert uses["says"] >= 15 and uses["fields"] >= 15
    assert len(OSET.CORRECTIONS) >= 20
    assert {w.register for w in OSET.CORRECTIONS.values()} == set(OSET.REGISTERS)
    naming_old = [n for n, w in OSET.CORRECTIONS.items() if w.names_old]
    assert len(naming_old) >= 5 and len(OSET.CORRECTIONS) - len(naming_old) >= 12
    assert not set(OSET.SURFACES) & set(OSET.CORRECTIONS)
    for session in _sample():  # a session of 24: 8 singles, 5 corrections, 3 pairs
        per = Counter(_template(c).shape for c in session)
        assert per == {"single": 8, "correction": 10, "coexist": 6}
        assert len({c["kind"] for c in session}) >= 6
        assert {OSET.REGISTER_OF[c["style"]] for c in session} == set(OSET.REGISTERS)
    assert {c["style"] for c in _all()} == set(OSET.REGISTER_OF)


def test_the_surfaces_avoid_the_earlier_sets() -> None:
    earlier = set()
    for name in ("heldout_canaries_k", "heldout_canaries_l", "heldout_canaries_m",
                 "heldout_canaries_n"):  # fmt: skip
        earlier |= set(load_bench(name).REGISTER_OF)
    for style in OSET.REGISTER_OF:
        name = style.replace("_", "-")
        assert not [e for e in EARLIER_SURFACES if e in name or e in name.replace("-", "")], style
        assert style not in earlier, style


def test_a_text_holds_its_fact_the_way_its_surface_writes_it() -> None:
    for c in _all():
        if "supersedes" in c:
            continue
        t, side = _template(c), _side(c)
        values = dict(zip(t.slots, c["keep"], strict=True))
        text = c["text"]
        if OSET.SURFACES[c["style"]].uses == "says":
            assert t.says[side].format(**values).lower() in text.lower(), c
        else:
            for suffix, fmt in t.fields:
                key = t.keys[side] + suffix
                lines = text.split("\n")
                at = next(i for i, x in enumerate(lines) if fmt.format(**values) in x)
                near = "\n".join(lines[max(0, at - 1) : at + 1])  # IPython: the line before
                assert any(s in near for s in OSET.key_spellings(key)), (key, near)


def test_a_correction_names_what_it_corrects() -> None:
    for new, _ in correction_pairs(_sample()):
        t = _template(new)
        text = new["text"].lower()
        keys = [t.keys[0] + suffix for suffix, _ in t.fields]
        spellings = [s.lower() for k in keys for s in OSET.key_spellings(k)]
        named = new["subject"].lower() in text or any(s in text for s in spellings)
        restated = t.says[0].format(**dict(zip(t.slots, new["keep"], strict=True))).lower()
        assert named or restated in text, new


def test_values_are_made_up() -> None:
    for session in _sample():  # only a carried part is said twice in a session
        keeps = [k for c in session for k in c["keep"]]
        carried = sum(len(c.get("carried", [])) for c in session)
        assert len(set(keeps)) == len(keeps) - carried
    for c in _all():
        for form, keep in zip(_template(c).parts, c["keep"], strict=True):
            if form == "version":
                assert re.fullmatch(r"\d+\.\d+\.\d+(rc|b|\.post|\.dev)\d", keep), keep
            elif form == "date":
                assert OSET.parse_date(keep), keep
            elif form in OSET.UNITS:  # a number stands with its unit
                assert keep.endswith(OSET.UNITS[form]) and OSET.magnitude(form, keep) > 0, keep
            else:
                assert not re.fullmatch(r"[\d.,:/ ]+", keep), keep
    words = _made_up_words()
    assert len(words) >= 500
    assert not words & OSET.FORM_WORDS
    # they do not share one visible mark: no letter pair in a quarter of them, many openings
    # and lengths, not the doubled vowels or the q of earlier sets
    pairs = Counter(p for w in words for p in {w[i : i + 2] for i in range(len(w) - 1)})
    assert max(pairs.values()) <= 0.25 * len(words), pairs.most_common(3)
    assert len({w[0] for w in words}) >= 18
    assert len({len(w) for w in words}) >= 5
    assert not [w for w in words if re.search(r"aa|ee|ii|oo|uu|q|w", w)]


def test_corrections_are_written_many_ways() -> None:
    pairs = correction_pairs(_sample())
    ways = Counter(new["style"] for new, _ in pairs)
    assert len(ways) >= 20 and max(ways.values()) <= 0.1 * len(pairs)
    naming_old = [new for new, old in pairs if any(k in new["text"] for k in _changed(new, old))]
    assert 0.15 * len(pairs) <= len(naming_old) <= 0.5 * len(pairs)  # most name only the new
    texts = [new["text"].lower() for new, _ in pairs]
    for marker in MARKERS:
        assert sum(marker in t for t in texts) <= 0.25 * len(texts), marker
    for c in _all():  # the summarizer's own notation is not used to correct
        assert "(was " not in c["text"] and R.REPLACED_MARK not in c["text"], c


def test_the_correction_text_alone_does_not_make_the_old_value_stale() -> None:
    assert_a_quoted_correction_is_safe(
        correction_pairs(_sample()), lambda new: bool(OSET.CORRECTIONS[new["style"]].names_old)
    )


@pytest.mark.parametrize(("seed", "first"), [(3, 0), (404, 0), (917, 5)])
def test_a_run_of_16_sessions_plants_every_template_surface_and_way(seed: int, first: int) -> None:
    sessions = [_canaries(seed, 24, v) for v in range(first, first + 16)]
    assert_every_template_and_style_planted(sessions, OSET.TEMPLATE_BY_NAME, OSET.REGISTER_OF)


def test_no_keep_string_occurs_in_the_recorded_sessions(swebench_path: Path) -> None:
    assert_no_keep_string_recorded(_sample(), swebench_path)


def test_made_up_words_are_not_words_of_the_recorded_sessions(swebench_path: Path) -> None:
    recorded = swebench_path.read_text(encoding="utf-8").lower()
    long_words = {w for w in _made_up_words() if len(w) >= 6}
    assert len(long_words) >= 300
    found = [w for w in long_words if w in recorded]
    assert len(found) <= 0.02 * len(long_words), found


def test_every_fact_lands_in_each_placement(swebench_path: Path, tmp_path: Path) -> None:
    cases = [(3, 0), (11, 6), (404, 11), (58, 15)]
    assert_facts_land_in_each_placement(OSET.generate, cases, swebench_path, tmp_path)


def test_a_tiny_retention_run_with_this_generator(
    swebench_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_a_tiny_run_names_its_parts(OSET, RUN_SEED, swebench_path, capsys)
