"""The events' old module paths (``abridged.engine.events``, ``abridged.runtime.events``) give the
same objects as ``abridged.events`` and warn with the new path, at the caller's line."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from types import ModuleType

import pytest

import abridged.events.engine as engine_events
import abridged.events.runtime as runtime_events

MOVES = [
    ("abridged.engine.events", engine_events),
    ("abridged.runtime.events", runtime_events),
]


def _names(old: str) -> list[str]:
    names: list[str] = importlib.import_module(old).__all__
    return names


@pytest.mark.parametrize(("old", "new"), MOVES, ids=[old for old, _ in MOVES])
def test_every_old_name_is_the_new_object_and_warns(old: str, new: ModuleType) -> None:
    module = importlib.import_module(old)
    for name in _names(old):
        with pytest.warns(DeprecationWarning, match=rf"{old} moved to {new.__name__}") as caught:
            value = getattr(module, name)
        assert value is getattr(new, name)
        assert caught[0].filename == __file__, "the warning names the caller's line"


def test_the_old_modules_names_are_all_still_there() -> None:
    engine = {"Event", "EndStatus", "CompactionEnded", "Pruned", "notifications"}
    runtime = {"ConversationEvent", "Notice", "Retrying", "TurnResult", "TextDelta"}
    assert engine <= set(_names("abridged.engine.events"))
    assert runtime <= set(_names("abridged.runtime.events"))


def test_a_from_import_warns_at_the_importing_line() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from abridged.engine.events import CompactionEnded
        from abridged.runtime.events import TurnResult
    assert CompactionEnded is engine_events.CompactionEnded
    assert TurnResult is runtime_events.TurnResult
    assert [(w.category, w.filename) for w in caught] == [(DeprecationWarning, __file__)] * 2
    assert "import CompactionEnded from there" in str(caught[0].message)


def test_an_unknown_name_is_an_attribute_error() -> None:
    module = importlib.import_module("abridged.engine.events")
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        module.Nope  # noqa: B018


def test_importing_an_old_module_alone_does_not_warn() -> None:
    """A collector or an IDE that imports every module stays quiet; a name used warns."""
    for old in ("abridged.engine.events", "abridged.runtime.events"):
        quiet = subprocess.run(
            [sys.executable, "-W", "error::DeprecationWarning", "-c", f"import {old}"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert quiet.returncode == 0, quiet.stderr
    used = subprocess.run(
        [sys.executable, "-c", "from abridged.engine.events import Pruned"],
        capture_output=True,
        text=True,
        check=True,
    )
    # Python's default filters show a DeprecationWarning raised in __main__: this one is.
    assert "DeprecationWarning: abridged.engine.events moved" in used.stderr
