"""Summaries: carried messages and file operations as columns (they were in ``meta``)."""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def _summaries() -> sa.TableClause:
    return sa.table(
        "summaries",
        sa.column("id", sa.String()),
        sa.column("meta", sa.Text()),
        sa.column("carried_seqs", sa.Text()),
        sa.column("file_ops", sa.Text()),
    )


def _object(text: str | None) -> dict[str, object] | None:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return None  # a corrupt row is reported when it is read, not here
    return value if isinstance(value, dict) else None


def upgrade() -> None:
    """Add ``summaries.carried_seqs`` and ``summaries.file_ops``, filled from each row's meta."""
    op.add_column(
        "summaries", sa.Column("carried_seqs", sa.Text(), nullable=False, server_default="[]")
    )
    op.add_column(
        "summaries", sa.Column("file_ops", sa.Text(), nullable=False, server_default="{}")
    )
    conn = op.get_bind()
    table = _summaries()
    for row in conn.execute(sa.select(table.c.id, table.c.meta)).mappings().all():
        meta = _object(row["meta"])
        if meta is None:
            continue
        carried = meta.pop("carried_seqs", None) or []
        ops = meta.pop("file_ops", None) or {}
        if carried or ops:
            conn.execute(
                table.update()
                .where(table.c.id == row["id"])
                .values(
                    meta=json.dumps(meta),
                    carried_seqs=json.dumps(carried),
                    file_ops=json.dumps(ops),
                )
            )


def downgrade() -> None:
    """Put the two columns back into ``meta``, then drop them."""
    conn = op.get_bind()
    table = _summaries()
    rows = conn.execute(
        sa.select(table.c.id, table.c.meta, table.c.carried_seqs, table.c.file_ops)
    ).mappings()
    for row in rows.all():
        meta = _object(row["meta"])
        if meta is None:
            continue
        meta["carried_seqs"] = json.loads(row["carried_seqs"] or "[]")
        meta["file_ops"] = json.loads(row["file_ops"] or "{}")
        conn.execute(table.update().where(table.c.id == row["id"]).values(meta=json.dumps(meta)))
    with op.batch_alter_table("summaries") as batch:
        batch.drop_column("file_ops")
        batch.drop_column("carried_seqs")
