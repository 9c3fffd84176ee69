"""A throwaway PostgreSQL cluster for tests and benchmarks, started from the local binaries.

PostgreSQL refuses to run as root, so as root every server command runs as the ``postgres`` user
(``runuser -u postgres --``) in a ``mkdtemp`` directory given to that user, with its own socket
directory and a free port on 127.0.0.1. As any other user the commands run as that user.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

BIN_GLOB = "/usr/lib/postgresql/*/bin"
ENV_BIN = "ABRIDGED_PG_BIN"


def find_bin_dir() -> Path | None:
    """The newest PostgreSQL server binaries: ``ABRIDGED_PG_BIN``, else Debian's
    ``/usr/lib/postgresql/<version>/bin``, else ``initdb`` on the PATH; ``None`` if none."""
    override = os.environ.get(ENV_BIN)
    if override:
        return Path(override) if (Path(override) / "initdb").exists() else None
    found = [Path(p) for p in glob.glob(BIN_GLOB) if (Path(p) / "initdb").exists()]
    if found:

        def version(p: Path) -> tuple[int, ...]:
            return tuple(int(x) for x in p.parent.name.split(".") if x.isdigit())

        return max(found, key=version)
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresCluster:
    """``initdb`` + ``pg_ctl start`` in a fresh directory; ``stop()`` removes it all.

    ``fast`` turns off fsync and synchronous commit (for tests; benchmarks keep durability).
    """

    def __init__(self, bin_dir: Path, *, fast: bool = True) -> None:
        self.bin_dir = bin_dir
        self.fast = fast
        self.base: Path | None = None
        self.port: int | None = None
        self._as_postgres = os.geteuid() == 0

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        prefix = ["runuser", "-u", "postgres", "--"] if self._as_postgres else []
        return subprocess.run(
            [*prefix, *args], capture_output=True, text=True, check=check, timeout=120
        )

    @property
    def url(self) -> str:
        """The URL of the ``postgres`` database (user ``postgres``, trust auth)."""
        return self.database_url("postgres")

    def database_url(self, name: str) -> str:
        """The URL of a database of this cluster."""
        if self.port is None:
            raise RuntimeError("the cluster is not running")
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{name}"

    def start(self) -> str:
        """Create and start the cluster; returns its URL. Raises ``RuntimeError`` with the
        server's log when it does not start."""
        base = Path(tempfile.mkdtemp(prefix="abridged-pg-"))
        self.base = base
        (base / "sock").mkdir()
        if self._as_postgres:
            user = pwd.getpwnam("postgres")
            for path in (base, base / "sock"):
                os.chown(path, user.pw_uid, user.pw_gid)
        atexit.register(self.stop)
        initdb = [str(self.bin_dir / "initdb"), "-D", str(base / "data"), "-U", "postgres"]
        done = self._run(*initdb, "--auth=trust", "-E", "UTF8", "--no-sync", check=False)
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {done.stderr.strip() or done.stdout.strip()}")
        options = f"-c listen_addresses=127.0.0.1 -k {base / 'sock'} -c max_connections=200"
        if self.fast:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        last = ""
        for _ in range(5):
            port = free_port()
            started = self._run(
                str(self.bin_dir / "pg_ctl"),
                "-D",
                str(base / "data"),
                "-l",
                str(base / "server.log"),
                "-o",
                f"{options} -p {port}",
                "-w",
                "-t",
                "60",
                "start",
                check=False,
            )
            if started.returncode == 0:
                self.port = port
                return self.url
            last = self.log()
        raise RuntimeError(f"PostgreSQL did not start: {last[-2000:]}")

    def log(self) -> str:
        """The server's log so far."""
        if self.base is None:
            return ""
        with contextlib.suppress(OSError):
            return (self.base / "server.log").read_text(errors="replace")
        return ""

    def sql(self, statement: str, database: str = "postgres") -> str:
        """Run one SQL statement with ``psql`` (for setup: CREATE DATABASE and the like)."""
        if self.port is None:
            raise RuntimeError("the cluster is not running")
        done = subprocess.run(
            [
                str(self.bin_dir / "psql"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                database,
                "-v",
                "ON_ERROR_STOP=1",
                "-Atc",
                statement,
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        if done.returncode != 0:
            raise RuntimeError(f"psql failed: {done.stderr.strip()}")
        return done.stdout

    def stop(self) -> None:
        """Stop the server (immediately) and remove its directory; safe to call twice."""
        base, self.base = self.base, None
        if base is None:
            return
        if self.port is not None:
            self._run(
                str(self.bin_dir / "pg_ctl"),
                "-D",
                str(base / "data"),
                "-m",
                "immediate",
                "stop",
                check=False,
            )
            self.port = None
        shutil.rmtree(base, ignore_errors=True)
