"""Shared test configuration: hypothesis profiles and paths to the shared data."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.databases import Postgres, postgres_server

# The CI machine is small and shared: no per-example deadline there.
settings.register_profile(
    "ci", deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, max_examples=60)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED = PROJECT_ROOT.parent / "shared"
SWEBENCH = SHARED / "data" / "swebench-gemini3" / "trajectories.jsonl"
CANARIES = SHARED / "data" / "canaries" / "canaries.json"


@pytest.fixture
def swebench_path() -> Path:
    """The shared real agent sessions; a missing file is a failure under CI, a skip elsewhere."""
    if not SWEBENCH.exists():
        if os.environ.get("CI"):
            pytest.fail(f"shared data missing: {SWEBENCH}")
        pytest.skip(f"shared data not found at {SWEBENCH}")
    return SWEBENCH


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres | str]:
    """The PostgreSQL server of this run, or why there is none (each test using it then skips,
    or fails under CI)."""
    yield from postgres_server()
