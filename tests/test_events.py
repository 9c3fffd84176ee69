"""Tests for abridged.events: every event class is importable from one place, and is the very
class its defining module and the package export give."""

from __future__ import annotations

import typing

import abridged
import abridged.events.engine as engine_events
import abridged.events.runtime as runtime_events
from abridged import events


def test_every_event_class_is_in_abridged_events() -> None:
    engine = set(typing.get_args(engine_events.Event))
    conversation = set(typing.get_args(runtime_events.ConversationEvent))
    exported = {getattr(events, name) for name in events.__all__}
    assert engine | conversation <= exported
    assert {cls.__name__ for cls in engine | conversation} <= set(events.__all__)


def test_the_defining_modules_give_the_same_classes() -> None:
    for name in events.__all__:
        defined = getattr(engine_events, name, None) or getattr(runtime_events, name, None)
        if defined is None:  # the stream's deltas, from the core
            continue
        assert getattr(events, name) is defined
        if name in abridged.__all__:
            assert getattr(abridged, name) is defined
