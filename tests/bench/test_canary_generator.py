"""Tests of ``bench/canary_generator.py``: generated canary sets are reproducible per seed, fresh
across seeds, varied in template, style and correction phrasing, and well formed for
``bench/retention.py``."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.bench.support import BENCH, load_bench

G = load_bench("canary_generator")

SEEDS = range(1, 31)


def _sets(seeds: range = SEEDS) -> list[dict[str, Any]]:
    return [G.generate(seed) for seed in seeds]


def _by_id(canaries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in canaries}


def test_the_same_seed_gives_the_same_set() -> None:
    assert G.generate(17) == G.generate(17)
    assert G.generate(17, 30, variant=4) == G.generate(17, 30, variant=4)
    # the printed form is the same too (what retention.py and a saved file see)
    assert json.dumps(G.generate(5)) == json.dumps(G.generate(5))


def test_values_differ_across_seeds_and_variants() -> None:
    keeps = {seed: {k for c in G.generate(seed)["canaries"] for k in c["keep"]} for seed in SEEDS}
    for a, b in itertools.combinations(SEEDS, 2):
        assert not keeps[a] & keeps[b], (a, b)
    # the sessions of one run (variants) carry different values as well
    one = {k for c in G.generate(3, variant=0)["canaries"] for k in c["keep"]}
    other = {k for c in G.generate(3, variant=1)["canaries"] for k in c["keep"]}
    assert not one & other
    # and the texts themselves differ
    texts = [tuple(c["text"] for c in s["canaries"]) for s in _sets(range(1, 6))]
    assert len(set(texts)) == 5


def test_enough_templates_styles_and_kinds() -> None:
    assert len(G.TEMPLATES) >= 40
    assert len({t.name for t in G.TEMPLATES}) == len(G.TEMPLATES)
    assert {t.kind for t in G.TEMPLATES} == set(G.KINDS) - {"correction"}
    assert len(G.STYLES) >= 8
    used = Counter(c["style"] for s in _sets() for c in s["canaries"])
    assert set(used) == set(G.STYLES)
    assert min(used.values()) >= 0.5 * max(used.values())  # spread, not one style mostly
    templates = {c["template"] for s in _sets() for c in s["canaries"]}
    assert {t.name for t in G.TEMPLATES} <= templates  # every template is exercised
    # every kind in every set of the default size
    for s in _sets(range(1, 11)):
        assert {c["kind"] for c in s["canaries"]} == set(G.KINDS)


def _corrections() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    out = []
    for s in _sets():
        ids = _by_id(s["canaries"])
        out += [(ids[c["supersedes"]], c) for c in s["canaries"] if "supersedes" in c]
    return out


def test_corrections_have_many_phrasings_and_no_marker_word() -> None:
    pairs = _corrections()
    phrasings = Counter(new["template"] for _, new in pairs)
    assert len(phrasings) >= 12, phrasings
    assert len(G.CORRECTIONS) + len(G.CHAT_CORRECTIONS) >= 12
    # a word that would mark corrections: left once the values and subject are removed
    words: list[set[str]] = []
    for old, new in pairs:
        text = new["text"].lower()
        for value in (*old["keep"], *new["keep"], old["subject"].lower()):
            text = text.replace(value.lower(), " ")
        words.append(set(re.findall(r"[a-z]+", text)))
    shares = Counter(w for ws in words for w in ws)
    assert not set.intersection(*words)
    # a content word in more than a quarter of them would be a marker a ledger could key on
    function_words = {"is", "the", "a", "an", "it", "its", "to", "for", "of", "so", "and"}
    common = {
        w: n / len(words)
        for w, n in shares.items()
        if n / len(words) > 0.25 and w not in function_words
    }
    assert not common, common
    # some name the old value, some only the new one
    naming_old = sum(any(k in new["text"] for k in old["keep"]) for old, new in pairs)
    assert 0.2 * len(pairs) < naming_old < 0.8 * len(pairs)


def test_every_keep_string_is_in_its_own_text_and_no_other() -> None:
    for s in _sets():
        canaries = s["canaries"]
        for c in canaries:
            assert c["keep"] and all(k in c["text"] for k in c["keep"])
            assert all(len(k) >= 6 for k in c["keep"])  # values, not common words
            assert 0.0 < c["at"] < 0.9
            for other in canaries:
                if other is not c and other.get("supersedes") != c["id"]:
                    assert not any(k in other["text"] for k in c["keep"]), (c, other)
        G.check(canaries)


def test_supersedes_points_at_an_earlier_canary_of_the_same_subject() -> None:
    pairs = _corrections()
    assert len(pairs) >= 3 * len(SEEDS)
    for old, new in pairs:
        assert new["kind"] == "correction" and old["kind"] != "correction"
        assert old["subject"] == new["subject"]
        assert old["at"] < new["at"]
        assert new["keep"] != old["keep"]
        assert not any(k in n for k in old["keep"] for n in new["keep"])


def test_coexisting_pairs_are_not_corrections() -> None:
    seen = 0
    for s in _sets():
        ids = _by_id(s["canaries"])
        for c in s["canaries"]:
            if "coexists" not in c:
                continue
            seen += 1
            other = ids[c["coexists"]]
            assert other["coexists"] == c["id"]
            assert "supersedes" not in c and "supersedes" not in other
            assert not any(x.get("supersedes") in (c["id"], other["id"]) for x in s["canaries"])
            assert c["template"] == other["template"] and c["kind"] == other["kind"]
            assert c["subject"] != other["subject"] and c["keep"] != other["keep"]
    assert seen >= 4 * len(SEEDS)


def test_check_refuses_a_broken_set() -> None:
    good = G.generate(2)["canaries"]
    broken = [dict(c) for c in good]
    broken[0]["keep"] = ["not in the text at all"]
    with pytest.raises(ValueError, match="not in its text"):
        G.check(broken)
    later = [dict(c) for c in good]
    fix = next(c for c in later if "supersedes" in c)
    fix["supersedes"] = later[-1]["id"]
    with pytest.raises(ValueError, match="supersedes"):
        G.check(later)


@given(seed=st.integers(min_value=0, max_value=2**62), count=st.integers(6, 60))
def test_any_seed_and_count_make_a_valid_set(seed: int, count: int) -> None:
    s = G.generate(seed, count)
    canaries = s["canaries"]
    assert len(canaries) == count
    assert len({c["id"] for c in canaries}) == count
    assert [c["at"] for c in canaries] == sorted(c["at"] for c in canaries)
    G.check(canaries)  # raises on any broken invariant


def test_a_count_below_six_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 6"):
        G.generate(1, 5)


def test_the_script_prints_a_set_retention_can_load() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "canary_generator.py"), "--seed", "9", "--count", "12"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    data = json.loads(done.stdout)
    assert data == G.generate(9, 12)
    retention = load_bench("retention")
    canaries = retention.canaries_from(data)
    assert len(canaries) == 12 and all(c.style in G.STYLES for c in canaries)
    assert any(c.supersedes for c in canaries) and any(c.coexists for c in canaries)
