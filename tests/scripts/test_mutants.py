"""Tests of ``scripts/mutants.py``: every mutant still applies to the source, and a real run
in a copy tells a caught fault from a missed one."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "mutants.py"


@pytest.fixture(scope="module")
def mutants() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutants", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutants"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_every_mutant_applies_to_the_source_and_compiles(mutants: ModuleType) -> None:
    assert mutants.check(ROOT, mutants.MUTANTS) == []
    assert len({m.name for m in mutants.MUTANTS}) == len(mutants.MUTANTS)


def test_a_mutant_whose_text_moved_is_refused(mutants: ModuleType) -> None:
    gone = mutants.Mutant("gone", "store/queries.py", "no such text", "x", (), "")
    twice = mutants.Mutant("twice", "x.py", "a", "b", (), "")
    with pytest.raises(ValueError, match="occurs 0 times"):
        mutants.apply("source", gone)
    with pytest.raises(ValueError, match="occurs 2 times"):
        mutants.apply("a a", twice)
    assert mutants.check(ROOT, [gone]) != []


def test_a_run_kills_a_planted_fault_and_reports_an_equivalent_one_as_surviving(
    mutants: ModuleType,
) -> None:
    # run on the one test of its file that catches it: the whole file, run three times here
    # (baseline, fault, no-op) in fresh processes, made this the suite's second slowest test
    planted = dataclasses.replace(
        next(m for m in mutants.MUTANTS if m.name == "scrub-keeps-secret"),
        tests=(
            "tests/providers/test_overflow.py::test_scrub_removes_given_secrets_and_key_shapes",
        ),
    )
    # The same text in, the same text out: no fault, so the tests must pass (a survivor).
    equivalent = mutants.Mutant(
        "no-op", planted.path, planted.find, planted.find, planted.tests, "nothing"
    )
    outcomes = mutants.run(ROOT, [planted, equivalent], timeout=300)
    assert [(o.name, o.killed) for o in outcomes] == [
        ("scrub-keeps-secret", True),
        ("no-op", False),
    ]
    table = mutants.table(outcomes)
    assert "1 of 2 mutants killed" in table
    assert table.index("no-op") < table.index("scrub-keeps-secret")  # survivors first
