"""A pasted config, table or log clipped to its most specific lines, gaps marked and merged."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abridged.core.tokens import estimate_text_tokens
from abridged.engine.summarize.line_clip import (
    MIN_LINES,
    clip_to_lines,
    dropped_a_better_line,
    lines_marker,
    without_markers,
)
from abridged.engine.summarize.transcript import clip_middle

_COUNT = re.compile(r"^\[\.\.\. (\d[\d,]*) lines? omitted \.\.\.\]$")

UNIT = "\n".join(
    [
        "Here is the unit file we run in production, please keep it in mind:",
        "[Unit]",
        "Description=Ingest worker",
        "After=network.target",
        "",
        "[Service]",
        "Type=simple",
        "WorkingDirectory=/srv/app",
        "User=svc-ingest-04",
        "Environment=QUEUE=q-7731",
        "Restart=on-failure",
        "RestartSec=5",
        "LimitNOFILE=65536",
        "StandardOutput=journal",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "That's all of it.",
    ]
)


def _size(text: str) -> int:
    return estimate_text_tokens(text)


def _lines_accounted(original: str, clipped: str) -> int:
    """The original lines ``clipped`` stands for: its own lines plus its markers' counts."""
    total = 0
    for line in clipped.split("\n"):
        m = _COUNT.match(line)
        total += int(m.group(1).replace(",", "")) if m else 1
    return total


def test_the_value_lines_of_a_paste_survive_where_head_and_tail_drop_them() -> None:
    budget = _size(UNIT) * 3 // 5
    clipped = clip_to_lines(UNIT, budget, _size)
    assert clipped is not None and _size(clipped) <= budget
    for value in ("svc-ingest-04", "q-7731"):
        assert value in clipped
        # the head-and-tail clip the summary used before keeps the boilerplate instead
        assert value not in clip_middle(UNIT, budget)
    # what the paste is (its first line) is kept, and the lines stay in their order
    assert clipped.split("\n")[0] == UNIT.split("\n")[0]
    kept = [line for line in clipped.split("\n") if not _COUNT.match(line)]
    positions = [UNIT.split("\n").index(line) for line in kept]
    assert positions == sorted(positions)


#: A log pasted whole: heartbeats of a few shapes, numbers and stamps changing, and one line
#: unlike the others.
LOG = "\n".join(
    [
        "here's the log from the last run, not sure what matters:",
        "2026-11-14T17:20:21Z INFO GET /healthz 200 96ms",
        "2026-05-21T03:14:40Z INFO lease renewed for orders-api",
        "2026-11-01T18:33:01Z INFO gc pause 476ms heap=169MB",
        "2026-01-28T00:28:51Z INFO gc pause 409ms heap=113MB",
        "2026-04-22T16:37:29Z INFO GET /healthz 200 554ms",
        "2026-02-10T04:28:05Z WARN config: the scheduler pod gets 41722 MiB of memory",
        "2026-11-03T09:12:44Z INFO lease renewed for orders-api",
        "2026-06-04T16:31:33Z INFO worker 96 picked up batch 074c4874",
        "2026-06-04T16:32:10Z INFO worker 12 picked up batch 9b1e0a2f",
        "2026-03-12T06:38:42Z INFO queue depth 338",
        "2026-01-02T08:27:36Z INFO queue depth 292",
    ]
)


@pytest.mark.parametrize("lines", [2, 3, 4])
def test_the_line_unlike_the_others_outranks_routine_lines(lines: int) -> None:
    """A line whose shape others repeat with other numbers (a heartbeat) says what its
    siblings say; the one line of its own shape is kept first, whatever numbers the others
    carry."""
    first = LOG.split("\n")[0]
    budget = (
        _size(first) + 1 + _size(LOG.split("\n")[6]) + 1 + 2 * _size("[... 10 lines omitted ...]")
    )
    budget += (lines - 2) * (_size(LOG.split("\n")[1]) + 1)
    clipped = clip_to_lines(LOG, budget, _size)
    assert clipped is not None and _size(clipped) <= budget
    assert "41722 MiB" in clipped, clipped


def test_a_paste_of_one_shape_throughout_is_ranked_as_before() -> None:
    """Where every line shares one shape, none is the news: the clip keeps its best lines."""
    rows = "\n".join(
        ["sizes:", *(f"2026-01-0{d}T00:00:00Z shard {d} holds {d * 7} GB" for d in range(1, 9))]
    )
    clipped = clip_to_lines(rows, _size(rows) // 2, _size)
    assert clipped is not None and "sizes:" in clipped and "holds" in clipped


def test_a_clip_of_a_clip_merges_its_markers_and_keeps_the_count() -> None:
    once = clip_to_lines(UNIT, _size(UNIT) * 2 // 3, _size)
    assert once is not None
    twice = clip_to_lines(once, _size(once) * 2 // 3, _size)
    assert twice is not None and twice != once
    lines = twice.split("\n")
    # no two markers side by side: a run of dropped lines is one marker
    assert not any(_COUNT.match(a) and _COUNT.match(b) for a, b in itertools.pairwise(lines))
    assert _lines_accounted(UNIT, twice) == len(UNIT.split("\n"))


def test_prose_and_short_entries_are_left_to_the_prose_clip() -> None:
    prose = "Please migrate the schema carefully and keep every public signature. " * 30
    assert clip_to_lines(prose, 20, _size) is None
    three = "a=1\nb=2\nc=3"
    assert len(three.split("\n")) < MIN_LINES
    assert clip_to_lines(three, 2, _size) is None
    # nothing fits, not even the best line: the caller clips by characters
    assert clip_to_lines(UNIT, 1, _size) is None


def test_markers_are_no_references() -> None:
    text = "User=svc-ingest-04\n" + lines_marker(79) + "\nRestart=on-failure"
    assert "79" not in without_markers(text)
    assert "svc-ingest-04" in without_markers(text)


_LINE = st.one_of(
    st.just(""),
    st.from_regex(r"[A-Za-z]{2,10}=[a-z0-9./-]{1,20}", fullmatch=True),
    st.from_regex(r"\| [a-z]{2,8} \| [A-Z][a-z]{2,8} \| [0-9]{1,5} MB \|", fullmatch=True),
    st.text(alphabet="abcdefgh ijk", min_size=1, max_size=60),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=30), st.integers(min_value=1, max_value=120))
def test_a_clip_fits_keeps_lines_in_order_and_accounts_for_every_line(
    lines: list[str], budget: int
) -> None:
    text = "\n".join(lines)
    clipped = clip_to_lines(text, budget, _size)
    if clipped is None:
        return
    assert _size(clipped) <= budget
    assert _lines_accounted(text, clipped) == len(lines)
    kept = iter(lines)
    # every kept line is an original line, in the original order (a subsequence)
    assert all(
        any(line == original for original in kept)
        for line in clipped.split("\n")
        if not _COUNT.match(line)
    )


def test_a_subheading_does_not_outrank_the_line_it_heads() -> None:
    adr = (
        "# ADR-0003: Kreskhom import batch size\n\nStatus: Accepted\n\n## Context\n"
        "The kreskhom import batch size kept coming up in reviews of kreskhom.\n\n## Decision\n"
        "Kreskhom imports go in batches of 43885 rows.\n\n## Consequences\n"
        "Dashboards and runbooks for kreskhom follow this."
    )
    clipped = clip_to_lines(adr, 40, estimate_text_tokens)
    assert clipped is not None
    assert "43885 rows" in clipped
    assert "## Decision" not in clipped


#: A paste whose first line only labels it: what it states is in its body.
_LABELLED = "\n".join(
    [
        "$ vault kv get -format=table kv/payments/settle",
        "====== Metadata ======",
        "version          4",
        "====== Data ======",
        "Key              Value",
        "---              -----",
        "settle_window    48 hours",
        "ledger_account   acct_9f3e21c7",
    ]
)


def _room_for_one_of(label: str, best: str) -> int:
    """A size where ``label`` or ``best`` fits with its markers, never both."""
    marker = _size(lines_marker(9)) + 1
    alone = max(_size(label) + 1 + marker, _size(best) + 1 + 2 * marker)
    assert _size(label) + _size(best) + 2 + marker > alone  # both never fit
    return alone


def test_a_label_gives_way_to_the_statement_when_only_one_fits() -> None:
    label, best = _LABELLED.split("\n")[0], "settle_window    48 hours"
    clipped = clip_to_lines(_LABELLED, _room_for_one_of(label, best), _size)
    assert clipped is not None and best in clipped
    assert label not in clipped
    # With room for both, the label stays, in its place.
    roomy = clip_to_lines(_LABELLED, _size(label) + _size(best) + 40, _size)
    assert roomy is not None
    assert roomy.index(label) < roomy.index(best)


@pytest.mark.parametrize(
    "request_line",
    [
        "Never rotate this account without asking the payments team:",
        "Why does the settle job skip the accounts it was given yesterday?",
    ],
)
def test_a_first_line_that_binds_or_asks_is_the_request_and_stays(request_line: str) -> None:
    text = "\n".join([request_line, *_LABELLED.split("\n")[1:]])
    best = "settle_window    48 hours"
    clipped = clip_to_lines(text, _room_for_one_of(request_line, best), _size)
    assert clipped is not None and clipped.startswith(request_line)


def test_a_first_line_lends_a_comment_its_rank_not_its_bonus() -> None:
    notes = "\n".join(
        [
            "# Notes from the rollout",
            "Some intro text about the deploy.",
            "row 1: nothing of note",
            "row 2: nothing of note",
            "owner: Imre Taskovic",
            "row 3: nothing of note",
        ]
    )
    room = _size("owner: Imre Taskovic") + 2 * _size(lines_marker(9)) + 4
    clipped = clip_to_lines(notes, room, _size)
    assert clipped is not None and "Imre Taskovic" in clipped
    assert "intro text" not in clipped


def test_the_line_a_comment_explains_is_kept_before_the_comment() -> None:
    unit = "\n".join(
        [
            "[Service]",
            "Type=notify",
            "# must never run as root: it writes to the shared export",
            "User=svc-tallow",
            "Group=svc-tallow",
            "Restart=always",
            "Nice=5",
        ]
    )
    room = _size("User=svc-tallow") + 1 + 2 * (_size(lines_marker(9)) + 1)
    clipped = clip_to_lines(unit, room, _size)
    assert clipped is not None and "User=svc-tallow" in clipped
    assert "never run as root" not in clipped  # it does not fit beside it


def test_at_a_small_size_the_dropped_lines_are_counted_once_at_the_end() -> None:
    # Two facts far apart: marked in place they need three markers, gathered one.
    lines = ["Inventory export, Tuesday", *[f"row {i}: nothing of note" for i in range(6)]]
    lines[2] = "owner of the export: Imre Taskovic"
    lines[5] = "export bucket: s3://exp-7731/inventory"
    text = "\n".join(lines)
    facts = _size(lines[0]) + _size(lines[2]) + _size(lines[5]) + 3
    marker = _size(lines_marker(9))
    clipped = clip_to_lines(text, facts + marker + 4, _size)
    assert clipped is not None
    assert "Imre Taskovic" in clipped and "s3://exp-7731/inventory" in clipped
    assert clipped.split("\n")[-1] == lines_marker(4)
    assert _lines_accounted(text, clipped) == len(lines)
    # With room for the markers in place, they stay in place.
    roomy = clip_to_lines(text, facts + 3 * (marker + 1) + 1, _size)
    assert roomy is not None
    assert any(_COUNT.match(line) for line in roomy.split("\n")[:-1])


def test_a_clip_that_kept_its_statement_dropped_no_better_line() -> None:
    # The decision is kept; the heading's date is not: a note of that date must not take the
    # decision's room (it did, and a correction's new owner was lost at every compaction).
    minutes = "\n".join(
        [
            "Minutes: platform weekly, 2026-01-22",
            "Present: Femi, Priya, Keiko",
            "",
            "Decisions",
            "1. The owner of the parser: Tomsa Skiduk. Agreed without objection.",
            "",
            "Actions",
            "- none beyond the above",
        ]
    )
    clipped = clip_to_lines(minutes, _size(minutes.split("\n")[4]) + 12, _size)
    assert clipped is not None and "Tomsa Skiduk" in clipped
    assert not dropped_a_better_line(minutes, clipped, ["2026-01-22"])
