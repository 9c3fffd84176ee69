"""``scripts/install-system-deps.sh``, which ``make test`` and ``.ci/run`` both call: nothing to do
when everything is there; without root a missing package is one line and a skip, and under
``ABRIDGED_CI=1`` an error. (Installing is not tested here: it would change this machine.)"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "install-system-deps.sh"


def _run(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The script as a user who is not root (``nobody`` when the tests run as root)."""
    command = ["bash", str(SCRIPT)]
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: cannot run the script as another user")
        command = ["runuser", "-u", "nobody", "--", "env", *[f"{k}={v}" for k, v in env.items()]]
        command += ["bash", str(SCRIPT)]
    base = {k: v for k, v in os.environ.items() if k not in ("ABRIDGED_CI", "ABRIDGED_CHROMIUM")}
    return subprocess.run(
        command, env={**base, **env}, cwd=tmp_path, capture_output=True, text=True, check=False,
        timeout=60,
    )  # fmt: skip


def test_a_missing_package_without_root_is_one_line_and_its_tests_skip(tmp_path: Path) -> None:
    done = _run({"ABRIDGED_CHROMIUM": str(tmp_path / "no-chromium")}, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and "chromium missing, their tests will skip" in lines[0]
    assert "not root" in lines[0] or "no apt-get" in lines[0]


def test_under_ci_a_missing_package_is_an_error(tmp_path: Path) -> None:
    env = {"ABRIDGED_CHROMIUM": str(tmp_path / "no-chromium"), "ABRIDGED_CI": "1"}
    done = _run(env, tmp_path)
    assert done.returncode == 1
    assert "chromium missing under ABRIDGED_CI=1" in done.stderr


def test_nothing_is_done_when_everything_is_there(tmp_path: Path) -> None:
    chromium = "/bin/sh"  # any executable the user can reach stands for the browser here
    # a PostgreSQL "server" given by URL counts as present (the tests then use it)
    env = {"ABRIDGED_CHROMIUM": chromium, "ABRIDGED_TEST_PG_URL": "postgresql://x/y"}
    done = _run({**env, "ABRIDGED_CI": "1"}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "system packages: PostgreSQL and Chromium present\n"


def test_a_failing_apt_get_is_reported_not_a_bare_exit(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the script runs apt-get only as root")
    # A stand-in apt-get that fails as one without network does (the real one, as root, would
    # change this machine): the script must still say what is missing and why.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "apt-get").write_text("#!/bin/sh\necho 'E: no network' >&2\nexit 100\n")
    (fake / "apt-get").chmod(0o755)
    base = {k: v for k, v in os.environ.items() if k not in ("ABRIDGED_CI", "ABRIDGED_CHROMIUM")}
    env = {
        **base,
        "PATH": f"{fake}:{os.environ['PATH']}",
        "ABRIDGED_CHROMIUM": str(tmp_path / "no-chromium"),
        "ABRIDGED_CI": "1",
    }
    done = subprocess.run(
        ["bash", str(SCRIPT)], env=env, cwd=tmp_path, capture_output=True, text=True,
        check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "E: no network" in done.stderr  # apt-get's own message is kept
    assert "chromium missing under ABRIDGED_CI=1: apt-get failed" in done.stderr
