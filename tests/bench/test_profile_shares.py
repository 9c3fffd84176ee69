"""``bench/profile_shares.py``: a py-spy raw profile tabled by phase, and ``--under`` breaking
one frame's samples down by its callees."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.bench.support import load_bench

shares = load_bench("profile_shares")

PROFILE = "\n".join(
    [
        "run (a/runner.py:1);keep_calls (/w/src/abridged/server/calllog.py:60);"
        "entries (/w/src/abridged/server/calllog.py:37) 6",
        "run (a/runner.py:1);keep_calls (/w/src/abridged/server/calllog.py:60);"
        "record_calls (/w/src/abridged/store/calls.py:190) 3",
        "run (a/runner.py:1);keep_calls (/w/src/abridged/server/calllog.py:60) 1",
        "run (a/runner.py:1);_stream_chat (/w/src/abridged/providers/openai.py:594) 10",
    ]
)


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    path = tmp_path / "profile.txt"
    path.write_text(PROFILE + "\n")
    argv = sys.argv
    sys.argv = ["profile_shares.py", str(path), *args]
    try:
        shares.main()
    finally:
        sys.argv = argv
    return capsys.readouterr().out


def test_each_sample_goes_to_its_first_phase(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _run(tmp_path, capsys, "--kind", "service")
    assert "| call log for the inspector (keep_calls) | 50.0% |" in out
    assert "| SDK stream read + chunk assembly | 50.0% |" in out


def test_under_breaks_a_frame_down_by_its_callees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _run(tmp_path, capsys, "--under", "keep_calls")
    assert "20 samples; `keep_calls`: 50.0%" in out
    assert "| `abridged/server/calllog.py:entries` | 30.0% |" in out
    assert "| `abridged/store/calls.py:record_calls` | 15.0% |" in out
    assert "| `(self)` | 5.0% |" in out
