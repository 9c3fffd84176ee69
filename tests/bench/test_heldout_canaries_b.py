"""Tests of ``bench/heldout_canaries_b.py``: reproducible sets that pass the retention contract,
every kind in every voice, corrections that carry another value, and enough templates."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bench.support import load_bench

G = load_bench("heldout_canaries_b")
R = load_bench("retention")

seeds = st.integers(min_value=0, max_value=2**32)


@settings(max_examples=20, deadline=None)
@given(seeds, st.integers(min_value=6, max_value=40), st.integers(min_value=0, max_value=50))
def test_the_same_arguments_give_the_same_canaries(seed: int, count: int, variant: int) -> None:
    first = G.generate(seed, count, variant)
    assert first == G.generate(seed, count, variant)
    assert len(first) == count
    assert G.generate(seed + 1, count, variant) != first
    assert G.generate(seed, count, variant + 1) != first


@settings(max_examples=20, deadline=None)
@given(seeds, st.integers(min_value=6, max_value=40), st.integers(min_value=0, max_value=50))
def test_every_set_passes_the_contract(seed: int, count: int, variant: int) -> None:
    canaries = G.generate(seed, count, variant)
    assert G.check(canaries) == []
    loaded = R.canaries_from({"canaries": canaries})  # the benchmark reads them
    assert [c.id for c in loaded] == [c["id"] for c in canaries]
    for c in loaded:
        assert all(k in c.text for k in c.keep)
        assert c.style is not None and c.template is not None


@settings(max_examples=5, deadline=None)
@given(seeds)
def test_a_run_covers_every_kind_in_every_voice(seed: int) -> None:
    sets = [G.generate(seed, 24, v) for v in range(16)]
    seen = {(c["kind"], c["voice"]) for s in sets for c in s}
    assert seen == {(k, v) for k in G.KINDS for v in G.VOICES}
    # every template is used somewhere in a run of 16 sessions
    used = {c["template"] for s in sets for c in s}
    assert {t.name for t in G.FACTS} <= used
    assert {t.name for t in G.CORRECTIONS} <= used


@settings(max_examples=20, deadline=None)
@given(seeds, st.integers(min_value=0, max_value=50))
def test_corrections_carry_a_different_value(seed: int, variant: int) -> None:
    canaries = G.generate(seed, 24, variant)
    by_id = {c["id"]: c for c in canaries}
    fixes = [c for c in canaries if c["supersedes"]]
    assert fixes
    for new in fixes:
        old = by_id[new["supersedes"]]
        assert old["at"] < new["at"] and old["kind"] == new["kind"]
        replaced = set(old["keep"]) - set(new["keep"])
        assert replaced  # at least one old string is no longer current
        assert not any(s in k for s in replaced for k in new["keep"])
    pairs = [c for c in canaries if c["coexists"]]
    assert pairs
    for c in pairs:
        partner = by_id[c["coexists"]]
        assert partner["template"] == c["template"] and set(partner["keep"]).isdisjoint(c["keep"])


def test_check_finds_what_breaks_the_contract() -> None:
    canaries = G.generate(7, 12, 0)
    fix = next(c for c in canaries if c["supersedes"])
    chain = (fix["id"], fix["supersedes"])
    other = next(c for c in canaries if c["id"] not in chain and not c["supersedes"])
    broken = [{**c, "keep": [*c["keep"], "absent-string"]} if c is other else c for c in canaries]
    assert any("not verbatim" in p for p in G.check(broken))
    leaked = [
        {**c, "text": c["text"] + " " + fix["keep"][-1]} if c is other else c for c in canaries
    ]
    assert any("also in" in p for p in G.check(leaked))
    assert G.check(canaries) == []


def test_template_and_style_floors() -> None:
    templates = [*G.FACTS, *G.CORRECTIONS]
    assert len({t.name for t in templates}) == len(templates) >= 150
    assert len({t.style for t in templates}) >= 20
    per_kind = Counter((t.kind, t.voice) for t in G.FACTS)
    assert all(per_kind[(k, v)] >= 2 for k in G.KINDS for v in G.VOICES)
    # most corrections do not announce themselves
    words = ("correction", "update", "instead", "changed")
    plain = [t for t in G.CORRECTIONS if not any(w in t.text.lower() for w in words)]
    assert len(plain) >= 0.8 * len(G.CORRECTIONS)
    assert len(G.CORRECTIONS) >= 30
