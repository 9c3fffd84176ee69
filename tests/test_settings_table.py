"""The README's settings tables say what the code does: every knob of ``abridged.runtime.Settings``
has its row, in order, with its engine name, its default and (checked on the code) its range;
the ``ConversationSettings`` table lists that class's own fields."""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path
from typing import Any

import pytest

from abridged.core.budget import BudgetSettings
from abridged.core.fields import describe
from abridged.engine.compaction_settings import CompactionSettings
from abridged.engine.prune import PruneSettings
from abridged.errors import SettingError
from abridged.runtime.settings import ConversationSettings, Settings

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
ENGINE = {"B": BudgetSettings, "P": PruneSettings, "C": CompactionSettings}


def table_after(heading: str) -> list[list[str]]:
    """The rows of the first table after the paragraph starting with ``heading``."""
    start = README.index(heading)
    rows: list[list[str]] = []
    for line in README[start:].splitlines():
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
        elif rows:
            break
    return rows[2:]  # the header and its rule


HINTS = typing.get_type_hints(Settings, include_extras=True)
FLAT = table_after("Compaction knobs (`abridged.runtime.Settings`)")


def literal(cell: str) -> Any:
    """A default cell as a value: ``True``, ``auto``, ``{}``, 0.85, 4,096, none."""
    text = cell.strip("`")
    if text.startswith("sized") or text.startswith("none"):
        return None
    if text in {"True", "False"}:
        return text == "True"
    if text == "{}":
        return {}
    if re.fullmatch(r"[\d,]+", text):
        return int(text.replace(",", ""))
    if re.fullmatch(r"\d+\.\d+", text):
        return float(text)
    return text


def test_every_knob_has_its_row_in_order() -> None:
    assert [row[0].strip("`") for row in FLAT] == list(Settings.names())


@pytest.mark.parametrize("row", FLAT, ids=[row[0].strip("`") for row in FLAT])
def test_each_row_states_the_default_and_the_engine_field(row: list[str]) -> None:
    name, engine, default = row[0].strip("`"), row[1], row[2]
    assert getattr(Settings(), name) == literal(default)
    kind, _, field = engine.partition(" ")
    engine_class = ENGINE[kind]
    assert field.strip("`") in {f.name for f in dataclasses.fields(engine_class)}
    # the flat knob lands in that engine field
    given = {"prune": {"bash": "keep"}, "prune_mode": "keep_none", "default_policy": "keep"}
    value = given.get(name, _changed(getattr(Settings(), name)))
    budget, compaction = Settings(**{name: value}).nested()
    holder = {"B": budget, "P": compaction.prune, "C": compaction}[kind]
    assert getattr(holder, field.strip("`")) == value


def _changed(default: Any) -> Any:
    if isinstance(default, bool):
        return not default
    if isinstance(default, float):
        return round(default - 0.05, 2)
    if isinstance(default, int):
        return default + 1
    return 9 if default is None else default  # an unset threshold, given


@pytest.mark.parametrize("row", FLAT, ids=[row[0].strip("`") for row in FLAT])
def test_the_error_states_the_range_the_code_checks(row: list[str]) -> None:
    name = row[0].strip("`")
    with pytest.raises(SettingError) as info:
        Settings(**{name: object()})
    valid = info.value.valid
    assert valid == describe(HINTS[name])
    documented = row[3]
    if "True or False" in valid:
        assert documented == "bool"
    for interval in re.findall(r"[\[(][\d.]+, [\d.]+[\])]", valid):
        assert interval in documented
    for bound in re.findall(r">= (\d+)", valid):
        assert f">= {bound}" in documented or documented.startswith(f"{bound} ..")
    for options in re.findall(r"one of ([\w, ]+)", valid):
        assert all(f"`{option}`" in documented for option in options.split(", "))


def test_the_conversation_table_lists_its_own_fields() -> None:
    rows = table_after("Conversations (`abridged.runtime.ConversationSettings`")
    documented: list[str] = []
    for row in rows:
        documented += [name.strip("` ") for name in row[0].split(",")]
    own = [f.name for f in dataclasses.fields(ConversationSettings)]
    assert documented == [n for n in own if n not in {"budget", "compaction"}]


def _default(cls: type, name: str) -> Any:
    field = next(f for f in dataclasses.fields(cls) if f.name == name)
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


@pytest.mark.parametrize("row", FLAT, ids=[row[0].strip("`") for row in FLAT])
def test_each_knob_has_its_engine_fields_range_and_default(row: list[str]) -> None:
    """The flat ``Settings`` restates each engine field (a typed surface needs its own
    declarations): the range and the default are the engine's, so the two cannot drift."""
    name, (kind, _, field) = row[0].strip("`"), row[1].partition(" ")
    engine_class, field = ENGINE[kind], field.strip("`")
    engine_hints = typing.get_type_hints(engine_class, include_extras=True)
    assert HINTS[name] == engine_hints[field]
    assert _default(Settings, name) == _default(engine_class, field)
