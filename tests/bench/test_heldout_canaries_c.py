"""Properties of the blind held-out canary generator ``bench/heldout_canaries_c.py``."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abridged.errors import SettingError
from tests.bench.support import load_bench

gen = load_bench("heldout_canaries_c")
retention = load_bench("retention")

seeds = st.integers(min_value=0, max_value=2**31)
few = settings(max_examples=5, deadline=None)


def _run(seed: int) -> list[list[dict[str, Any]]]:
    """The sets of the 16 sessions of one run of ``seed``."""
    return [gen.generate(seed, 24, variant=v) for v in range(gen.SESSIONS_PER_PLAN)]


@few
@given(seed=seeds, variant=st.integers(min_value=0, max_value=40))
def test_the_same_arguments_give_the_same_set(seed: int, variant: int) -> None:
    assert gen.generate(seed, 24, variant) == gen.generate(seed, 24, variant)


@few
@given(seed=seeds, variant=st.integers(min_value=0, max_value=40))
def test_another_seed_or_variant_gives_other_values(seed: int, variant: int) -> None:
    def values(canaries: list[dict[str, Any]]) -> set[str]:
        return {k for c in canaries for k in c["keep"]}

    here = values(gen.generate(seed, 24, variant))
    assert here != values(gen.generate(seed + 1, 24, variant))
    assert here != values(gen.generate(seed, 24, variant + 1))


@few
@given(seed=seeds, variant=st.integers(min_value=0, max_value=40), count=st.integers(6, 40))
def test_every_set_passes_check_and_loads(seed: int, variant: int, count: int) -> None:
    canaries = gen.generate(seed, count, variant)
    assert len(canaries) == count
    assert gen.check(canaries) == []
    loaded = retention.canaries_from({"canaries": canaries})
    assert [c.id for c in loaded] == [c["id"] for c in canaries]
    assert all(0 <= c.at < 1 and c.keep for c in loaded)


@settings(max_examples=2, deadline=None)
@given(seed=seeds)
def test_one_run_writes_every_kind_in_every_voice_and_uses_every_template(seed: int) -> None:
    run = _run(seed)
    written = {(c["kind"], c["voice"]) for canaries in run for c in canaries}
    assert written == {(k, v) for k in gen.KINDS for v in gen.VOICES}
    used = {c["template"] for canaries in run for c in canaries}
    assert used == set(gen.TEMPLATES)


def test_the_vocabulary_is_as_wide_as_promised() -> None:
    assert len(gen.KINDS) >= 14
    assert len(gen.BASE_TEMPLATES) >= 150
    assert len({t.style for t in gen.BASE_TEMPLATES}) >= 30
    for kind in gen.KINDS:
        voices = {t.voice for t in gen.BASE_TEMPLATES if t.fits(kind)}
        assert voices == set(gen.VOICES), kind


def test_most_correction_phrasings_do_not_announce_themselves() -> None:
    def quiet(body: str) -> bool:
        words = set(re.findall(r"[a-z]+", re.sub(r"\{\w+\}", " ", body).lower()))
        return not words & gen.ANNOUNCING

    assert len(gen.FIX_TEMPLATES) >= 40
    assert sum(quiet(t.body) for t in gen.FIX_TEMPLATES) >= 35
    assert not all(quiet(t.body) for t in gen.FIX_TEMPLATES)  # the test can tell


@few
@given(seed=seeds, variant=st.integers(min_value=0, max_value=40))
def test_corrections_carry_another_value_in_a_later_text(seed: int, variant: int) -> None:
    canaries = gen.generate(seed, 24, variant)
    by_id = {c["id"]: c for c in canaries}
    corrections = [c for c in canaries if c["supersedes"]]
    assert corrections
    for c in corrections:
        old = by_id[c["supersedes"]]
        assert c["kind"] == old["kind"] and c["at"] > old["at"]
        gone = set(old["keep"]) - set(c["keep"])
        assert gone and all(k in c["text"] for k in c["keep"])
        assert gen.TEMPLATES[c["template"]].fix


@few
@given(seed=seeds, variant=st.integers(min_value=0, max_value=40))
def test_about_a_fifth_of_a_set_are_pairs_of_one_template_and_kind(seed: int, variant: int) -> None:
    canaries = gen.generate(seed, 24, variant)
    by_id = {c["id"]: c for c in canaries}
    paired = [c for c in canaries if c["coexists"]]
    assert 4 <= len(paired) <= 6
    for c in paired:
        mate = by_id[c["coexists"]]
        assert mate["coexists"] == c["id"]
        assert (mate["kind"], mate["template"]) == (c["kind"], c["template"])
        assert mate["keep"] != c["keep"]


def test_a_small_count_is_refused() -> None:
    with pytest.raises(SettingError, match="count"):
        gen.generate(1, 5)


def _valid() -> list[dict[str, Any]]:
    canaries = gen.generate(7, 24, 3)
    assert gen.check(canaries) == []
    return copy.deepcopy(canaries)


def _first(canaries: list[dict[str, Any]], key: str) -> dict[str, Any]:
    return next(c for c in canaries if c[key])


def _break_id(cs: list[dict[str, Any]]) -> None:
    cs[1]["id"] = cs[0]["id"]


def _break_order(cs: list[dict[str, Any]]) -> None:
    fix = _first(cs, "supersedes")
    fix["at"] = 0.0


def _break_kind(cs: list[dict[str, Any]]) -> None:
    _first(cs, "supersedes")["kind"] = "something-else"


def _break_same_keep(cs: list[dict[str, Any]]) -> None:
    fix = _first(cs, "supersedes")
    old = next(c for c in cs if c["id"] == fix["supersedes"])
    fix["keep"] = list(old["keep"])
    fix["text"] += " " + " ".join(old["keep"])


def _break_mate(cs: list[dict[str, Any]]) -> None:
    mate = _first(cs, "coexists")
    next(c for c in cs if c["id"] == mate["coexists"])["coexists"] = None


def _break_leak(cs: list[dict[str, Any]]) -> None:
    single = next(c for c in cs if not c["supersedes"] and not c["coexists"])
    other = next(c for c in cs if c is not single and not c["supersedes"])
    other["text"] += "\n" + single["keep"][0]


def _break_missing(cs: list[dict[str, Any]]) -> None:
    cs[0]["keep"] = [*cs[0]["keep"], "nowhere-in-the-text"]


def _break_short(cs: list[dict[str, Any]]) -> None:
    cs[0]["keep"] = ["abc"]
    cs[0]["text"] += " abc"


def _break_voice(cs: list[dict[str, Any]]) -> None:
    cs[0]["voice"] = "narrator"


def _break_at(cs: list[dict[str, Any]]) -> None:
    cs[-1]["at"] = 1.0


def _break_unknown(cs: list[dict[str, Any]]) -> None:
    _first(cs, "supersedes")["supersedes"] = "no-such-id"


def _break_nested(cs: list[dict[str, Any]]) -> None:
    fix = _first(cs, "supersedes")
    old = next(c for c in cs if c["id"] == fix["supersedes"])
    value = old["keep"][-1]
    fix["keep"] = [*fix["keep"][:-1], f"{value}0"]
    fix["text"] += f" {value}0"


BREAKS = {
    _break_id: "duplicate id",
    _break_order: "is not later",
    _break_kind: "of another kind",
    _break_same_keep: "same keep set",
    _break_mate: "does not name it back",
    _break_leak: "occurs in the text of",
    _break_missing: "is not in its text",
    _break_short: "shorter than 4",
    _break_voice: "voice",
    _break_at: "outside [0, 1)",
    _break_unknown: "supersedes unknown",
    _break_nested: "contain one another",
}


@pytest.mark.parametrize("breaks", list(BREAKS), ids=lambda f: f.__name__)
def test_check_catches_each_broken_rule(breaks: Any) -> None:
    canaries = _valid()
    breaks(canaries)
    problems = gen.check(canaries)
    assert any(BREAKS[breaks] in p for p in problems), problems
