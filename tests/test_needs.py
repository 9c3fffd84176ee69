"""A fresh clone has no shared data: its tests skip saying what they need, and only
``ABRIDGED_CI=1`` (set by ``.ci/run``) turns the skips into failures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis.database import InMemoryExampleDatabase

from tests.needs import CI_ENV, PROJECT_ROOT, SHARED_ENV, missing, shared_file, skip_summary

# Tests reading the shared data in different ways: a fixture, a benchmark run as a subprocess
# (it failed with FileNotFoundError without ../shared), a README command reading ../shared.
SHARED_TESTS = [
    "tests/formats/test_transcripts.py::test_shared_every_session_loads",
    "tests/bench/test_frameworks_bench.py::test_a_tiny_run_of_every_framework_reports_its_figures",
    "tests/test_readme.py::test_console_example_runs",
]


def _pytest(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in (CI_ENV, "CI")}
    clean["COLUMNS"] = "400"  # the summary's lines whole
    # only the README commands that read ../shared: the others need no shared data
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
         "-rsfE", "-k", "not console_example_runs or shared", *SHARED_TESTS],
        cwd=PROJECT_ROOT, env={**clean, SHARED_ENV: str(tmp_path / "nowhere"), **env},
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


def test_without_the_shared_data_its_tests_skip_saying_what_they_need(tmp_path: Path) -> None:
    done = _pytest(tmp_path, {"CI": "true"})  # a CI machine's own variable changes nothing
    assert done.returncode == 0, done.stdout[-3000:]
    assert "failed" not in done.stdout and " passed" not in done.stdout
    skips = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skips and all("shared data" in s and "NOT TESTED" in s for s in skips), skips
    assert any("trajectories.jsonl" in s for s in skips)
    # and in the run's summary one line per missing need, however many tests it skipped
    needs = [line for line in done.stdout.splitlines() if " skipped: shared data " in line]
    assert len(needs) == len(set(needs)) == 2, needs  # the sessions and the canaries
    one_by_one = [s for s in skips if " shared data " in s]  # "SKIPPED [N] where: why"
    assert sum(int(line.split()[0]) for line in needs) == sum(
        int(s.split("[")[1].split("]")[0]) for s in one_by_one
    )


def test_the_summary_says_each_missing_need_once_with_its_count() -> None:
    def skipped(reason: str) -> SimpleNamespace:
        return SimpleNamespace(longrepr=("tests/x.py", 1, f"Skipped: {reason}"))

    postgres = "PostgreSQL NOT TESTED: no binaries"
    reports = [skipped("needs an extra"), skipped(postgres), skipped(postgres)]
    assert skip_summary([*reports, SimpleNamespace(longrepr=None)]) == [
        "   2 skipped: PostgreSQL NOT TESTED: no binaries",  # the needs first
        "   1 skipped: needs an extra",
    ]


def test_under_ci_missing_shared_data_fails_every_such_test(tmp_path: Path) -> None:
    done = _pytest(tmp_path, {CI_ENV: "1"})
    assert done.returncode == 1, done.stdout[-3000:]
    # a fixture that fails makes an error of its test, a test that fails a failure
    failed = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert len(failed) == 4 and all(f"missing under {CI_ENV}=1" in f for f in failed), failed
    assert "skipped" not in done.stdout


def test_missing_skips_with_the_hint_or_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CI_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="Chromium NOT TESTED: no /usr/bin/x"):
        missing("Chromium", "no /usr/bin/x")
    for off in ("", "0"):
        monkeypatch.setenv(CI_ENV, off)
        with pytest.raises(pytest.skip.Exception):
            missing("Chromium", "no /usr/bin/x")
    monkeypatch.setenv(CI_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="Chromium missing under ABRIDGED_CI=1"):
        missing("Chromium", "no /usr/bin/x")


def test_shared_data_is_found_where_the_variable_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv(SHARED_ENV, str(tmp_path))
    monkeypatch.delenv(CI_ENV, raising=False)
    assert shared_file("data/x.json") == tmp_path / "data" / "x.json"
    with pytest.raises(pytest.skip.Exception, match=r"shared data data/y.json NOT TESTED"):
        shared_file("data/y.json")


def test_ci_searches_afresh_and_prints_how_to_replay_a_failure() -> None:
    ci = settings.get_profile("ci")
    assert ci.print_blob and not ci.derandomize and ci.database is not None
    assert settings.get_profile("dev").deadline is None


def test_ci_replays_a_saved_failing_example_before_searching() -> None:
    """What a run found is tried first by the next (the database and its ``reuse`` phase):
    a failure found once cannot hide behind a lucky seed (issue 31)."""
    ci = settings.get_profile("ci")
    assert Phase.reuse in ci.phases
    tried: list[int] = []

    @settings(ci, database=InMemoryExampleDatabase(), max_examples=500)
    @given(st.integers(0, 10_000))
    def rarely_fails(n: int) -> None:
        tried.append(n)
        assert n < 9_000

    for _ in range(2):
        tried.clear()
        with pytest.raises(AssertionError):
            rarely_fails()
    assert tried[0] == 9_000  # the saved, shrunk example, before any new draw
