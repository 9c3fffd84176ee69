"""``bench/llm_summary.py`` without a real model: the local test provider's facts-free summary
(headings, nothing under them) with the safety net under it, against the extractive path, on a
real shared session with generated canaries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.bench.support import load_bench


def _one_session(source: Path, target: Path) -> Path:
    first = next(ln for ln in source.read_text(encoding="utf-8").splitlines() if ln.strip())
    target.write_text(first + "\n", encoding="utf-8")
    return target


def _run(data: Path, *args: str) -> dict[str, Any]:
    bench = load_bench("llm_summary")
    out: dict[str, Any] = bench.main(
        ["--data", str(data), "--limit", "1", "--compactions", "2", "--seed", "41", *args]
    )
    return out


@pytest.mark.parametrize("placement", ["user", "tool"])
def test_a_facts_free_model_summary_keeps_what_the_extractive_path_keeps(
    swebench_path: Path, tmp_path: Path, placement: str
) -> None:
    data = _one_session(swebench_path, tmp_path / "one.jsonl")
    free = _run(data, "--facts-free", "--placement", placement)
    extractive = _run(data, "--extractive", "--placement", placement)
    assert free["compactions"] >= 1 and free["model_summaries"] == free["compactions"]
    assert free["over_window"] == 0 and not free["call_errors"]
    assert free["canaries"].startswith("generated, seed 41")
    assert extractive["model_summaries"] == 0 and extractive["survival_fallback"] is not None
    # the net under an empty model summary keeps about what the extractive path keeps
    assert free["survival_model"] >= extractive["survival_fallback"] - 0.1
    json.dumps(free)  # the --json line is plain data
