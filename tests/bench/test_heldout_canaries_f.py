"""Tests of the held-out canary generator ``bench/heldout_canaries_f.py``: reproducible per seed,
well-formed canaries in the shape ``bench/retention.py`` reads, the breadth it promises, every
template planted in a run of 16 sessions, and a tiny benchmark run with it (its figures are not
asserted: this generator measures, it is not tuned)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.bench.support import (
    BENCH,
    assert_no_keep_string_recorded,
    generator_run,
    load_bench,
)

H = load_bench("heldout_canaries_f")
R = load_bench("retention")
PATH = BENCH / "heldout_canaries_f.py"
KEYS = {"id", "kind", "at", "text", "keep", "style", "template"}
MARKERS = re.compile(r"correction|instead|no longer|update|actually|changed", re.IGNORECASE)


def _canaries(seed: int, count: int, variant: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = H.generate(seed, count, variant)["canaries"]
    return items


def _sample(count: int = 24) -> list[list[dict[str, Any]]]:
    return [_canaries(seed, count, v) for seed in (0, 1, 97) for v in range(16)]


def test_a_seed_reproduces_its_canaries() -> None:
    assert H.generate(11, 24, 3) == H.generate(11, 24, 3)
    source = R.CanarySource(seed=11, count=24, generator=PATH)
    assert source.for_session(3) == R.canaries_from(H.generate(11, 24, 3))


def test_other_seeds_and_sessions_draw_other_values() -> None:
    def keeps(seed: int, variant: int) -> set[str]:
        return {k for c in _canaries(seed, 24, variant) for k in c["keep"]}

    assert keeps(11, 0).isdisjoint(keeps(12, 0))
    assert keeps(11, 0).isdisjoint(keeps(11, 1))


def test_every_canary_is_well_formed() -> None:
    for canaries in _sample():
        ids = [c["id"] for c in canaries]
        assert len(ids) == len(set(ids)) == 24
        by_id = {c["id"]: c for c in canaries}
        for c in canaries:
            assert set(c) >= KEYS
            assert c["kind"] in H.KINDS and c["style"] in H.STYLES
            assert 0.0 < c["at"] < 1.0
            assert c["keep"] and all(k in c["text"] for k in c["keep"])
            if "supersedes" in c:
                first = by_id[c["supersedes"]]
                assert first["template"] == c["template"] and first["at"] < c["at"]
            if "coexists" in c:
                other = by_id[c["coexists"]]
                assert other["coexists"] == c["id"] and other["template"] == c["template"]
        assert R.canaries_from({"canaries": canaries})


def test_no_keep_string_occurs_in_another_canary() -> None:
    for canaries in [*_sample(), *_sample(8)]:
        for a in canaries:
            for b in canaries:
                if a is not b:
                    assert not any(k in b["text"] for k in a["keep"]), (a["id"], b["id"])


def test_the_breadth_it_promises() -> None:
    shapes = Counter(t.shape for t in H.TEMPLATES)
    assert shapes["single"] >= 40 and shapes["correction"] >= 20 and shapes["coexist"] >= 6
    seen = [c for canaries in _sample() for c in canaries]
    assert len({c["style"] for c in seen}) >= 12
    singles = {t.name for t in H.TEMPLATES if t.shape == "single"}
    assert {c["kind"] for c in seen if c["template"] in singles} == set(H.KINDS)
    # corrections mostly say the new value without a marker word
    later = [c for c in seen if "supersedes" in c]
    assert later and sum(bool(MARKERS.search(c["text"])) for c in later) <= len(later) / 4


@pytest.mark.parametrize("seed", [0, 5, 123, 2026])
def test_a_run_of_16_sessions_plants_every_template(seed: int) -> None:
    for count in (8, 24):
        planted = {c["template"] for v in range(16) for c in _canaries(seed, count, v)}
        assert planted == set(H.BY_NAME), count
        assert all(len(_canaries(seed, count, v)) == count for v in range(16))


def test_no_keep_string_occurs_in_the_recorded_sessions(swebench_path: Path) -> None:
    assert_no_keep_string_recorded(_sample(), swebench_path)


def test_a_tiny_retention_run_with_this_generator(
    swebench_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it runs and reports; its figures are not looked at here
    out = generator_run(PATH, swebench_path, capsys)
    assert "survival_after_5" in out and "survival_after_5_by_template" in out
    assert out["ambiguous_pairs"] == 0  # made-up values: none occurs in the session
