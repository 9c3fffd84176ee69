"""A worker process after ``tune_gc_for_serving`` and ``shorten_gil_switch`` (in a child
process: the settings are the whole process's)."""

from __future__ import annotations

import json
import subprocess
import sys

from abridged.server.process import SWITCH_INTERVAL, YOUNG_THRESHOLD


def _tuned(argument: str) -> tuple[list[int], list[int], int]:
    script = (
        "import gc, json\n"
        "before = gc.get_threshold()\n"
        "from abridged.server.process import tune_gc_for_serving\n"
        f"tune_gc_for_serving({argument})\n"
        "print(json.dumps([before, gc.get_threshold(), gc.get_freeze_count()]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    before, after, frozen = json.loads(out)
    return before, after, frozen


def test_a_service_worker_freezes_startup_objects_and_collects_young_ones_less_often() -> None:
    before, after, frozen = _tuned(str(YOUNG_THRESHOLD))
    assert after == [YOUNG_THRESHOLD, before[1], before[2]]
    assert before[0] < YOUNG_THRESHOLD
    assert frozen > 1_000  # the imported modules' objects at least


def test_the_proxy_freezes_startup_objects_and_keeps_the_thresholds() -> None:
    before, after, frozen = _tuned("")
    assert after == before
    assert frozen > 1_000


def test_a_service_worker_switches_threads_every_millisecond() -> None:
    script = (
        "import sys\n"
        "before = sys.getswitchinterval()\n"
        "from abridged.server.process import shorten_gil_switch\n"
        "shorten_gil_switch()\n"
        "print(before, sys.getswitchinterval())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    before, after = (float(x) for x in out.split())
    assert after == SWITCH_INTERVAL < before
