"""Replay: recorded sessions run call by call through the runtime, kept in a store.

``replay_transcripts`` replays transcripts into a store (a temporary SQLite file unless a
database is given) with a ``Replayer`` per run, and returns a ``ReplayReport``: every call, every
session with its compactions, and the totals (``abridged.runtime.replay.schema``). The CLI's
``abridged replay``, the service's ``POST /v1/replay`` and ``bench/replay.py`` all call it;
``abridged.runtime.replay.report`` renders the report as one HTML page.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from abridged.formats.transcripts import Transcript
from abridged.runtime.context_manager import ReplayStep
from abridged.runtime.replay.accounting import run_totals
from abridged.runtime.replay.replayer import Replayed, Replayer, ReplayOptions, SessionReplay
from abridged.runtime.replay.schema import ReplayReport, SessionReport, StepReport
from abridged.store import Store

__all__ = [
    "ReplayOptions",
    "ReplayReport",
    "Replayed",
    "Replayer",
    "SessionReplay",
    "count_calls",
    "replay_transcripts",
]


def count_calls(transcripts: Sequence[Transcript]) -> int:
    """How many model calls replaying ``transcripts`` makes (for a progress bar)."""
    total = 0
    for transcript in transcripts:
        messages = transcript.messages
        total += sum(
            1
            for i, m in enumerate(messages)
            if m.role == "assistant" and (i == 0 or messages[i - 1].role != "assistant")
        )
        total += 1 if messages and messages[-1].role != "assistant" else 0
    return total


async def replay_transcripts(
    transcripts: Sequence[Transcript],
    options: ReplayOptions | None = None,
    *,
    db: str | None = None,
    path: str = "",
    settings: Mapping[str, Any] | None = None,
    on_step: Callable[[ReplayStep], None] | None = None,
    on_session: Callable[[int, SessionReport], None] | None = None,
) -> ReplayReport:
    """Replay ``transcripts`` into the store at ``db`` (a temporary SQLite file when ``None``);
    the report. ``path`` names the file they came from and ``settings`` the options as the
    caller spelled them (both shown as given); ``on_step`` hears of every call and
    ``on_session`` of every finished session (its number, from 1)."""
    options = options if options is not None else ReplayOptions()
    started = time.perf_counter()
    temporary: tempfile.TemporaryDirectory[str] | None = None
    if db is None:
        temporary = tempfile.TemporaryDirectory(prefix="abridged-replay-")
        db = str(Path(temporary.name) / "replay.db")
        shown_db = None
    else:
        shown_db = db
    sessions: list[SessionReport] = []
    steps: list[StepReport] = []
    store = Store(db)
    try:
        replayer = Replayer(store, options, on_step=on_step)
        for number, transcript in enumerate(transcripts, 1):
            replayed = await replayer.replay(transcript)
            sessions.append(replayed.session)
            steps.extend(replayed.steps)
            if on_session is not None:
                on_session(number, replayed.session)
    finally:
        await store.close()
        if temporary is not None:
            temporary.cleanup()
    if shown_db is not None:
        shown_db = store.url
    return ReplayReport(
        file=path,
        format=transcripts[0].source_format if transcripts else None,
        summarizer=options.summarizer_name,
        db=shown_db,
        settings=dict(settings or {}),
        steps=steps,
        sessions=sessions,
        totals=run_totals(sessions, time.perf_counter() - started),
    )
