"""Waiting for a server started as a subprocess (``abridged serve``, ``abridged proxy``) to
answer its health check, failing with its stderr if it exits first."""

from __future__ import annotations

import subprocess
import time

import httpx


def wait_until_healthy(proc: subprocess.Popen[str], base: str, *, within: float = 60) -> None:
    """Poll ``base + "/healthz"`` until it answers 200; fail if ``proc`` exits or ``within``
    seconds pass (a generous bound: the point is to stop a hung test, not to time it)."""
    deadline = time.monotonic() + within
    while True:
        assert proc.poll() is None, proc.communicate()[1]
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "it did not start"
        time.sleep(0.1)
