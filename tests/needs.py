"""What some tests need from outside the repository (the shared data, PostgreSQL, Chromium): on a
developer's machine a missing one skips its tests with one line saying what is missing; under CI
(``ABRIDGED_CI=1``, which ``.ci/run`` sets, and nothing else does) it fails them."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NoReturn

import pytest

#: The one switch that makes the shared data, PostgreSQL and Chromium required (``.ci/run``).
CI_ENV = "ABRIDGED_CI"
#: Where the shared data is, when not at ``../shared`` beside the repository.
SHARED_ENV = "ABRIDGED_SHARED"

PROJECT_ROOT = Path(__file__).resolve().parent.parent
#: What a skip for a missing need says after the need's name (``missing``).
NOT_TESTED = "NOT TESTED"


def required() -> bool:
    """Whether this run must have everything (CI): ``ABRIDGED_CI`` set to anything but 0."""
    return os.environ.get(CI_ENV, "").strip() not in ("", "0")


def missing(what: str, hint: str) -> NoReturn:
    """Skip the test saying what it needs (``hint``: how to get it), or fail under CI."""
    if required():
        pytest.fail(f"{what} missing under {CI_ENV}=1: {hint}", pytrace=False)
    pytest.skip(f"{what} {NOT_TESTED}: {hint}")


def shared_dir() -> Path:
    """The shared data: ``ABRIDGED_SHARED``, else ``../shared`` beside the repository."""
    override = os.environ.get(SHARED_ENV)
    return Path(override) if override else PROJECT_ROOT.parent / "shared"


def shared_file(relative: str) -> Path:
    """A file of the shared data, or skip (fail under CI) naming it."""
    path = shared_dir() / relative
    if not path.exists():
        missing(
            f"shared data {relative}",
            f"not found at {path} (the project's data beside the repository as ../shared, "
            f"or {SHARED_ENV}=DIR)",
        )
    return path


def skip_summary(reports: Iterable[Any]) -> list[str]:
    """One line per reason tests were skipped for, with how many it skipped: a missing need
    once however many tests needed it (the needs first, then other reasons, most first)."""
    reasons: Counter[str] = Counter()
    for report in reports:
        longrepr = getattr(report, "longrepr", None)
        if isinstance(longrepr, tuple) and len(longrepr) == 3:  # (path, line, "Skipped: why")
            reasons[str(longrepr[2]).removeprefix("Skipped: ")] += 1
    ordered = sorted(reasons.items(), key=lambda item: (NOT_TESTED not in item[0], -item[1]))
    return [f"{count:4d} skipped: {reason}" for reason, count in ordered]
