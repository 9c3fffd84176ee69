"""Alembic environment: runs on the connection ``abridged.store.migrate`` hands it (no ini file)."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from abridged.store.schema import Base


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        transaction_per_migration=False,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):  # pragma: no cover - only misuse reaches this
    raise RuntimeError("abridged migrations run through abridged.store.migrate.upgrade(url)")
_run(connection)
