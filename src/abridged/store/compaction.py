"""The single writer's commits: compactions, the prune boundary, and the loser's re-read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from sqlalchemy import insert, select, update
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from abridged.core.model import Message
from abridged.errors import ConflictError, ContentionError, StoreError
from abridged.store import codec, lineage, queries
from abridged.store.connect import transaction
from abridged.store.records import (
    CompactionOutcome,
    CompactionRecord,
    Compactor,
    ConversationInfo,
    SessionInfo,
    SessionTotals,
    StoredCompaction,
)
from abridged.store.schema import compactions, pruned_outputs, sessions
from abridged.store.sessions import SessionOps, read_session_info


def _file_ops(value: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    return {str(k): [str(p) for p in v] for k, v in value.items()}


class CompactionOps(SessionOps):
    """Every change of compaction state is one compare-and-swap on ``conversations.version``;
    no transaction is open while a model runs."""

    async def commit_compaction(
        self,
        conversation_id: str,
        compaction: CompactionRecord | Compactor,
        *,
        version: int | None = None,
        session_id: str | None = None,
        on_conflict: Literal["reread", "raise"] = "reread",
        owner: str | None = None,
    ) -> CompactionOutcome:
        """Commit a compaction through the single writer: the one entry point for every caller.

        ``compaction`` is a record already made on the context read at ``version`` in session
        ``session_id`` (the runtime's path: the summary was made in the background), or a
        compactor: the store reads the context, calls it (the model call: no transaction is
        open) and commits the record it returns against the version read; ``None`` from it
        means nothing to do. A commit is one transaction: store the summary once, finalise the
        current session (final summary, embedding, totals), start its child from the summary
        carrying messages from ``record.cut_seq`` on, record the compaction, and make the child
        current.

        ``on_conflict="reread"`` (the design's loser): a lost compare-and-swap re-reads, and
        skips when the winner covered the work (the current session carries from at or after
        the cut) or, for a record, moved the conversation to another session (``/new``,
        ``/resume``); otherwise a compactor plans again, a record is committed again at the
        version re-read, and a second loss raises ``ContentionError``. ``"raise"``: a lost
        compare-and-swap raises ``ConflictError`` at once, for a caller that handles the loss
        itself. Either way a loser writes nothing.
        """
        if isinstance(compaction, CompactionRecord):
            if version is None or session_id is None:
                raise StoreError(
                    "a compaction record needs the version and session it was planned on",
                    conversation_id=conversation_id,
                )
            record, compactor = compaction, None
        else:
            if version is not None or session_id is not None:
                raise StoreError(
                    "a compactor plans on the context the store reads: give no version or session",
                    conversation_id=conversation_id,
                )
            context = await self.load_context(conversation_id, owner=owner)
            planned = await compaction(context)
            if planned is None:
                return CompactionOutcome("nothing", attempts=1)
            record, compactor = planned, compaction
            version, session_id = context.version, context.session.id
        try:
            session = await self._commit_once(conversation_id, record, version, owner)
        except ConflictError:
            if on_conflict == "raise":
                raise
        else:
            return CompactionOutcome(
                "committed", attempts=1, session=session, record=record, version=version + 1
            )
        return await self._after_loss(conversation_id, record, session_id, owner, compactor)

    async def _after_loss(
        self,
        conversation_id: str,
        record: CompactionRecord,
        session_id: str,
        owner: str | None,
        compactor: Compactor | None,
    ) -> CompactionOutcome:
        """The loser's re-read: skip, or plan (or take the record) again and commit once more."""
        context = await self.load_context(conversation_id, owner=owner)
        current = context.session
        if current.carry_from >= record.cut_seq:
            return CompactionOutcome(
                "skipped", attempts=1, session=current, version=context.version
            )
        if compactor is not None:
            again = await compactor(context)
            if again is None:
                return CompactionOutcome("nothing", attempts=2, version=context.version)
            record = again
        elif not _same_lineage(current, session_id):
            return CompactionOutcome(
                "skipped", attempts=1, session=current, version=context.version
            )
        try:
            session = await self._commit_once(conversation_id, record, context.version, owner)
        except ConflictError as exc:
            raise ContentionError(
                "compaction lost the compare-and-swap twice; try again later",
                conversation_id=conversation_id,
                expected_version=context.version,
            ) from exc
        return CompactionOutcome(
            "committed", attempts=2, session=session, record=record, version=context.version + 1
        )

    async def _commit_once(
        self, conversation_id: str, record: CompactionRecord, version: int, owner: str | None
    ) -> SessionInfo:
        """One compare-and-swap at ``version``: ``ConflictError`` (nothing written) on a loss."""
        if not record.summary.text.strip():
            raise StoreError(
                "a compaction needs a non-empty summary; nothing was stored",
                conversation_id=conversation_id,
            )
        vector, embedder = await self._vector(record.summary.text)

        async def body(conn: AsyncConnection, conv: RowMapping) -> SessionInfo:
            locked = await queries.cas(conn, conversation_id, version)
            next_seq = int(locked["next_seq"])
            cut = record.cut_seq
            parent = await queries.session_row(conn, conversation_id, locked["current_session_id"])
            if not 1 <= cut <= next_seq:
                raise StoreError(
                    "the cut is outside the conversation's messages",
                    conversation_id=conversation_id,
                    cut_seq=cut,
                    next_seq=next_seq,
                )
            segments = lineage.child_segments(
                queries.node(parent), queries.segments_of(parent), cut, next_seq
            )
            if segments is None:
                segments = await _walk_back(conn, conversation_id, parent, cut, next_seq)
            summary_id = await queries.insert_summary(
                conn,
                conversation_id,
                record.summary,
                covers_to_seq=cut,
                vector=vector,
                embedder=embedder,
            )
            totals = (await queries.live_totals(conn, conversation_id, parent["id"])).get(
                parent["id"], SessionTotals()
            )
            await conn.execute(
                update(sessions)
                .where(sessions.c.id == parent["id"])
                .values(
                    final_summary_id=summary_id,
                    finalized_at=codec.now(),
                    **queries.totals_columns(totals),
                )
            )
            child = await queries.insert_session(
                conn,
                conversation_id,
                reason="compaction",
                parent_id=parent["id"],
                carry_from=cut,
                start_seq=next_seq,
                segments=segments,
                start_summary_id=summary_id,
            )
            await conn.execute(
                compactions.insert().values(
                    id=queries.new_id(),
                    conversation_id=conversation_id,
                    session_id=parent["id"],
                    child_session_id=child,
                    summary_id=summary_id,
                    trigger=record.trigger,
                    tokens_before=record.tokens_before,
                    tokens_after=record.tokens_after,
                    cut_seq=cut,
                    file_ops=codec.dumps(_file_ops(record.file_ops)),
                    duration_ms=record.duration_ms,
                    summarizer=record.summarizer,
                    version=int(locked["version"]),
                    created_at=codec.now(),
                )
            )
            values: dict[str, Any] = {"current_session_id": child}
            mark = locked["resummarize_from"]
            if (
                mark is not None
                and record.resummarized_from is not None
                and record.resummarized_from <= int(mark)
            ):
                values["resummarize_from"] = None
            await queries.set_conversation(conn, conversation_id, **values)
            return await read_session_info(conn, conversation_id, child)

        return await self._write(
            conversation_id, owner, body, operation="commit_compaction", attempts=1
        )

    async def compactions(
        self, conversation_id: str, *, owner: str | None = None
    ) -> list[StoredCompaction]:
        """The committed compactions of a conversation, oldest first."""
        await self.open()
        async with transaction(self._engine, "read", operation="compactions") as conn:
            await queries.read_conversation(conn, conversation_id, owner)
            rows = (
                (
                    await conn.execute(
                        select(*codec.columns(compactions))
                        .where(compactions.c.conversation_id == conversation_id)
                        .order_by(compactions.c.version)
                    )
                )
                .mappings()
                .all()
            )
            out = []
            for row in rows:
                summary = await queries.summary_by_id(conn, row["summary_id"])
                out.append(codec.stored_compaction(row, summary))
        return out

    async def set_prune_boundary(
        self,
        conversation_id: str,
        seq: int,
        *,
        pruned: Mapping[int, Message] | None = None,
        owner: str | None = None,
    ) -> ConversationInfo:
        """Move the prune boundary forward to ``seq`` through the single writer, and store the
        pruned form of messages (``pruned``: sequence number -> the message as sent, its bulky
        tool outputs replaced by placeholders) so that a restart sends the same bytes
        (``Context.pruned``). A boundary at or beyond ``seq`` already covers it: it never moves
        back; a message already stored in pruned form keeps its first one (forward only)."""
        given = dict(pruned or {})

        async def body(conn: AsyncConnection, conv: RowMapping) -> RowMapping:
            known: set[int] = set()
            if given:
                known = set(
                    (
                        await conn.execute(
                            select(pruned_outputs.c.seq).where(
                                pruned_outputs.c.conversation_id == conversation_id,
                                pruned_outputs.c.seq.in_(sorted(given)),
                            )
                        )
                    )
                    .scalars()
                    .all()
                )
            fresh = {k: m for k, m in given.items() if k not in known}
            if seq <= int(conv["prune_boundary"]) and not fresh:
                return conv
            boundary = max(seq, int(conv["prune_boundary"]))
            await queries.cas(conn, conversation_id, int(conv["version"]), prune_boundary=boundary)
            if fresh:
                stamp = codec.now()
                await conn.execute(
                    insert(pruned_outputs),
                    [
                        {
                            "conversation_id": conversation_id,
                            "seq": k,
                            "call_ids": codec.dumps([r.call_id for r in m.tool_results]),
                            "created_at": stamp,
                            **codec.pruned_columns(m),
                        }
                        for k, m in sorted(fresh.items())
                    ],
                )
            return await queries.read_conversation(conn, conversation_id, None)

        return codec.conversation_info(
            await self._write(conversation_id, owner, body, operation="set_prune_boundary")
        )


def _same_lineage(current: SessionInfo, planned_session_id: str) -> bool:
    """Whether a record made in session ``planned_session_id`` still applies to ``current``:
    the same session (the winner changed something else), or a compaction child of it (the
    winner compacted less: the record's summary covers everything the winner's does)."""
    if current.id == planned_session_id:
        return True
    return current.reason == "compaction" and current.parent_id == planned_session_id


async def _walk_back(
    conn: AsyncConnection, conversation_id: str, parent: RowMapping, cut: int, next_seq: int
) -> list[lineage.Segment]:
    """Segments for a cut before the parent's carry-from (the summarised boundary moving back
    after an edit): walk up the compaction chain as far as the cut reaches."""
    chain = [queries.node(parent)]
    while chain[-1].reason == "compaction" and chain[-1].start_seq > cut and chain[-1].parent_id:
        row = await queries.session_row(conn, conversation_id, chain[-1].parent_id)
        chain.append(queries.node(row))
    if cut < lineage.floor(chain):
        raise StoreError(
            "the cut is before the first message of the session's lineage",
            conversation_id=conversation_id,
            cut_seq=cut,
            lineage_starts_at=lineage.floor(chain),
        )
    return lineage.walk(chain, cut, next_seq)
