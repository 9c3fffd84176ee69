"""Shared test configuration: hypothesis profiles, the shared data and the PostgreSQL server of
the run. Tests needing what a fresh clone lacks skip saying so, or fail under ``ABRIDGED_CI=1``
(``tests/needs.py``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from tests.databases import Postgres, postgres_server
from tests.needs import required, shared_file, skip_summary

# CI (ABRIDGED_CI=1). The .hypothesis database is not committed, so a fresh clone has no saved
# examples: the inputs that once found a bug are explicit @examples beside their tests, run
# every time. Past those, a new random seed every run, so CI keeps looking (derandomize would
# try the same inputs forever and find nothing new); a failure prints its falsifying example
# and the blob that replays it exactly (@reproduce_failure), to be kept as one more @example.
# The CI machine is small and shared: no per-example deadline there. The database is named
# because hypothesis, seeing a CI machine's own CI variable, defaults it to None; named, what a
# CI run finds is saved and replayed first by the next run on that machine.
settings.register_profile(
    "ci",
    database=DirectoryBasedExampleDatabase(
        Path(__file__).parent.parent / ".hypothesis" / "examples"
    ),
    deadline=None,
    max_examples=100,
    print_blob=True,
    derandomize=False,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=60)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if required() else "dev"))

SWEBENCH = "data/swebench-gemini3/trajectories.jsonl"
CANARIES = "data/canaries/canaries.json"


@pytest.fixture
def swebench_path() -> Path:
    """The shared real agent sessions (skip without them, fail under CI)."""
    return shared_file(SWEBENCH)


@pytest.fixture
def canaries_path() -> Path:
    """The shared canaries planted by the retention benchmarks (skip without, fail under CI)."""
    return shared_file(CANARIES)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres | str]:
    """The PostgreSQL server of this run, or why there is none (each test using it then skips,
    or fails under CI)."""
    yield from postgres_server()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """What this run could not test: one line per missing need (and per other reason for a
    skip), however many tests it skipped; pyproject's ``-r`` leaves out the skips one by one."""
    lines = skip_summary(terminalreporter.stats.get("skipped", []))
    if lines:
        terminalreporter.section("skipped, by reason")
        for line in lines:
            terminalreporter.line(line)
