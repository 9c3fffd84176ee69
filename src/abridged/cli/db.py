"""``abridged db upgrade``: bring a database's schema to the one this abridged needs."""

from __future__ import annotations

import asyncio

from abridged.cli.common import CliError, check_database, fail, stdout, store_url
from abridged.errors import AbridgedError


def run_upgrade(db: str | None) -> int:
    """Create or migrate the schema of ``db`` (default: ``ABRIDGED_DB``, else the user's file)."""
    from abridged.store import head_revision, upgrade  # noqa: PLC0415
    from abridged.store.connect import resolve_url, safe_url  # noqa: PLC0415

    url = store_url(db)
    try:
        check_database(url, create_folder=True)
        where = safe_url(resolve_url(url))
        done = asyncio.run(upgrade(url))
        revision = head_revision()
    except AbridgedError as exc:
        return fail(CliError(str(exc)))
    except OSError as exc:
        return fail(CliError(f"cannot open the database: {exc.strerror or exc}"))
    what = {
        "created": "schema created",
        "upgraded": "schema upgraded",
        "current": "schema already current",
    }.get(done, done)
    stdout().print(f"{where}: {what} (revision {revision})", highlight=False)
    return 0
