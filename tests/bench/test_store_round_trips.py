"""Tests of ``bench/store_round_trips.py``: what a turn and a proxied request send the database
(statements, transactions, commits) stays at or under what the hot path was cut to, on SQLite
and PostgreSQL. Counts, not time: the same on every machine, so a statement or a transaction
added to a turn fails here."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.bench.support import load_bench
from tests.databases import BACKENDS, Postgres, database_url

rt = load_bench("store_round_trips")

#: (statements, transactions) at most, per backend and path: the counts the hot path was cut
#: to (``bench/RESULTS.md``, ``## store round trips``). Before the cut a service turn was 31
#: statements in 11 transactions on SQLite (12 on PostgreSQL); before a send's message was
#: stored with its lease taken (issue 30), 24 in 10 (11). On PostgreSQL an append of a reply or
#: a tool result, the look-up of a conversation's name, the announcement of a change, the lease
#: given back and the proxy's request line are one statement each, outside any transaction
#: (before: a service turn 23 in 10, a library turn 16 in 7, a proxied request 6 in 4), and so
#: is the lease given back with the turn's calls numbered (before: 18 in 3).
LIMITS = {
    ("sqlite", "service turn"): (23, 9),
    ("postgresql", "service turn"): (16, 2),
    ("sqlite", "library turn"): (16, 7),
    ("postgresql", "library turn"): (10, 1),
    ("sqlite", "proxied request"): (6, 4),
    ("postgresql", "proxied request"): (5, 1),
}
#: The history a service turn is counted at (``--history``), and the others' (a shorter
#: history: their counts do not depend on it, and the proxy's requests cost more a step).
SERVICE_HISTORY = 100
HISTORY = 25


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("path", rt.PATHS)
def test_a_turn_sends_no_more_than_it_was_cut_to(
    backend: str, path: str, tmp_path: Path, postgres: Postgres | str
) -> None:
    url = database_url(backend, tmp_path, postgres)
    history = SERVICE_HISTORY if path == "service turn" else HISTORY
    result = asyncio.run(rt.run_path(path, url, history, 2))
    statements, transactions = LIMITS[(backend, path)]
    for counts in result.turns:
        assert counts.statements <= statements, rt.statements_of([result])
        assert counts.transactions <= transactions, rt.statements_of([result])
        # every transaction of a turn commits: none is begun and abandoned
        assert counts.commits == counts.transactions
        assert counts.rollbacks == 0
    # the same work each turn: nothing grows with the history
    assert len({(c.statements, c.transactions) for c in result.turns}) == 1
    # each counted turn is timed, and on PostgreSQL the time inside its statements is a part of
    # it (on SQLite only partly timed: its prebuilt statements' cursor tells listeners the send)
    wall, inside = result.median_ms()
    assert all(c.seconds > 0 for c in result.turns)
    if backend == "postgresql":
        assert 0 < inside < wall
