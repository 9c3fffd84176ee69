"""A worker process's garbage collector after ``tune_gc_for_serving`` (in a child process: the
settings are the whole process's)."""

from __future__ import annotations

import json
import subprocess
import sys

from abridged.server.process import YOUNG_THRESHOLD


def test_startup_objects_are_frozen_and_young_collections_are_rarer() -> None:
    script = (
        "import gc, json\n"
        "before = gc.get_threshold()\n"
        "from abridged.server.process import tune_gc_for_serving\n"
        "tune_gc_for_serving()\n"
        "print(json.dumps([before, gc.get_threshold(), gc.get_freeze_count()]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    before, after, frozen = json.loads(out)
    assert after == [YOUNG_THRESHOLD, before[1], before[2]]
    assert before[0] < YOUNG_THRESHOLD
    assert frozen > 1_000  # the imported modules' objects at least
