"""Store operations on sessions: list, new, clear, resume, finalise in the background, delete."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from sqlalchemy import delete, select, update
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from abridged.core.model import Message, message_to_dict
from abridged.errors import StoreError
from abridged.store import codec, queries
from abridged.store.connect import transaction
from abridged.store.messages import MessageOps, context_of
from abridged.store.records import (
    FinalizeRequest,
    ResumeResult,
    SessionInfo,
    SessionTotals,
    StoredSummary,
    SummaryMaker,
    TokenEstimator,
)
from abridged.store.schema import compactions, sessions, summaries

DEFAULT_RESUME_RATIO = 0.7


def rough_tokens(messages: Sequence[Message]) -> int:
    """A rough token count (4 characters a token): the fallback when no estimator is given;
    the runtime passes the core's estimator instead."""
    return sum(len(codec.dumps(message_to_dict(m))) // 4 + 4 for m in messages)


class SessionOps(MessageOps):
    """Sessions are views of a conversation; switching between them goes through the single
    writer, and finalising a session you left runs in the background."""

    async def get_session(
        self, conversation_id: str, session_id: str, *, owner: str | None = None
    ) -> SessionInfo:
        """One session with its summaries and totals."""
        await self.open()
        async with transaction(self._engine, "read", operation="get_session") as conn:
            conv = await queries.read_conversation(conn, conversation_id, owner)
            return await _session_info(conn, conv, session_id)

    async def list_sessions(
        self, conversation_id: str, *, owner: str | None = None
    ) -> list[SessionInfo]:
        """Every session of a conversation, oldest first, with summaries and totals (stored ones
        for finalised sessions, live ones otherwise)."""
        await self.open()
        async with transaction(self._engine, "read", operation="list_sessions") as conn:
            conv = await queries.read_conversation(conn, conversation_id, owner)
            rows = await queries.all_sessions(conn, conversation_id)
            srows = (
                (
                    await conn.execute(
                        select(*codec.columns(summaries)).where(
                            summaries.c.conversation_id == conversation_id
                        )
                    )
                )
                .mappings()
                .all()
            )
            live = await queries.live_totals(conn, conversation_id)
        by_id = {r["id"]: codec.summary(r) for r in srows}
        finals = {r["id"]: r["final_summary_id"] for r in rows}
        out = []
        for row in rows:
            start_id = row["start_summary_id"]
            if start_id is None and row["reason"] in ("new", "resume") and row["parent_id"]:
                start_id = finals.get(row["parent_id"])
            out.append(
                codec.session_info(
                    row,
                    start=by_id.get(start_id) if start_id else None,
                    final=by_id.get(row["final_summary_id"]) if row["final_summary_id"] else None,
                    current_id=conv["current_session_id"],
                    live=None
                    if row["message_count"] is not None
                    else live.get(row["id"], SessionTotals()),
                )
            )
        return out

    async def new_session(
        self,
        conversation_id: str,
        *,
        reason: Literal["new", "clear"] = "new",
        summarize: SummaryMaker | None = None,
        owner: str | None = None,
    ) -> SessionInfo:
        """Start a new current session at once and return it.

        ``new``: its context shows the previous session's final summary as soon as that is
        ready; ``clear``: it starts with no summary. With ``summarize``, the session left is
        finalised in the background (summary, embedding, totals); the caller never waits for it.
        """
        if reason not in ("new", "clear"):
            raise StoreError(f"reason must be 'new' or 'clear', not {reason!r}")

        async def body(conn: AsyncConnection, conv: RowMapping) -> tuple[SessionInfo, str]:
            locked = await queries.cas(conn, conversation_id, int(conv["version"]))
            start = int(locked["next_seq"])
            old = str(locked["current_session_id"])
            sid = await queries.insert_session(
                conn,
                conversation_id,
                reason=reason,
                parent_id=old,
                carry_from=start,
                start_seq=start,
            )
            await queries.set_conversation(conn, conversation_id, current_session_id=sid)
            return await read_session_info(conn, conversation_id, sid), old

        info, old = await self._write(conversation_id, owner, body, operation="new_session")
        if summarize is not None:
            self._spawn(self.finalize_session(conversation_id, old, summarize))
        return info

    async def resume(
        self,
        conversation_id: str,
        session_id: str,
        *,
        input_budget: int | None = None,
        ratio: float = DEFAULT_RESUME_RATIO,
        estimate: TokenEstimator | None = None,
        summarize: SummaryMaker | None = None,
        owner: str | None = None,
    ) -> ResumeResult:
        """Make an earlier session current again if its context fits ``ratio`` of
        ``input_budget`` (always, when no budget is given); otherwise start a new session from
        its summary. ``NotFoundError`` when the session is not one of this conversation's.

        ``estimate`` counts tokens (default: a rough 4 characters a token). With ``summarize``,
        the session left, and the resumed one when it has no final summary yet, are finalised
        in the background.
        """
        if not 0 < ratio <= 1:
            raise StoreError(f"resume ratio must be in (0, 1], got {ratio}", ratio=ratio)
        count = estimate or rough_tokens

        async def decide(
            conn: AsyncConnection, conv: RowMapping
        ) -> tuple[str, Literal["resumed", "new", "current"], int | None, str]:
            await queries.session_row(conn, conversation_id, session_id)
            old = str(conv["current_session_id"])
            if session_id == old:
                return session_id, "current", None, old
            tokens: int | None = None
            fits = True
            if input_budget is not None:
                context = await context_of(conn, conv, session_id)
                tokens = count(context.to_messages())
                fits = tokens <= ratio * input_budget
            locked = await queries.cas(conn, conversation_id, int(conv["version"]))
            if fits:
                await queries.set_conversation(conn, conversation_id, current_session_id=session_id)
                return session_id, "resumed", tokens, old
            start = int(locked["next_seq"])
            sid = await queries.insert_session(
                conn,
                conversation_id,
                reason="resume",
                parent_id=session_id,
                carry_from=start,
                start_seq=start,
            )
            await queries.set_conversation(conn, conversation_id, current_session_id=sid)
            return sid, "new", tokens, old

        async def body(conn: AsyncConnection, conv: RowMapping) -> tuple[ResumeResult, str]:
            sid, mode, tokens, old = await decide(conn, conv)
            info = await read_session_info(conn, conversation_id, sid)
            return ResumeResult(info, mode, tokens), old

        result, old = await self._write(conversation_id, owner, body, operation="resume")
        if summarize is not None and result.mode != "current":
            self._spawn(self.finalize_session(conversation_id, old, summarize))
            if result.mode == "new":
                self._spawn(self.finalize_session(conversation_id, session_id, summarize))
        return result

    async def finalize_session(
        self,
        conversation_id: str,
        session_id: str,
        summarize: SummaryMaker,
        *,
        owner: str | None = None,
    ) -> SessionInfo:
        """Give a session its final summary, embedding and totals (what the background
        finalisation runs; callable directly). Skips a session whose final summary already
        covers its context; no transaction is open while ``summarize`` runs."""
        await self.open()
        async with transaction(self._engine, "read", operation="finalize_session") as conn:
            conv = await queries.read_conversation(conn, conversation_id, owner)
            context = await context_of(conn, conv, session_id)
        covers = (
            (context.messages[-1].seq or 0) + 1 if context.messages else context.session.start_seq
        )
        final = context.session.final_summary
        if (final is not None and (final.covers_to_seq or 0) >= covers) or (
            not context.messages and context.summary is None
        ):
            return context.session
        made = await summarize(
            FinalizeRequest(
                conversation_id=conversation_id,
                session_id=session_id,
                previous=context.summary,
                messages=tuple(m.message for m in context.messages),
            )
        )
        if made is not None and (not isinstance(made, StoredSummary) or not made.text.strip()):
            raise StoreError(
                "the summary maker returned no summary; nothing was stored",
                conversation_id=conversation_id,
                session_id=session_id,
            )
        vector, embedder = (None, None) if made is None else await self._vector(made.text)

        async def body(conn: AsyncConnection, conv: RowMapping) -> SessionInfo:
            row = await queries.session_row(conn, conversation_id, session_id)
            existing = await queries.summary_by_id(conn, row["final_summary_id"])
            if existing is not None and (existing.covers_to_seq or 0) >= covers:
                return await _session_info(conn, conv, session_id)  # another finaliser covered it
            await queries.cas(conn, conversation_id, int(conv["version"]))
            summary_id = (
                None
                if made is None  # nothing to summarise: finalised with its totals alone
                else await queries.insert_summary(
                    conn,
                    conversation_id,
                    made,
                    covers_to_seq=covers,
                    vector=vector,
                    embedder=embedder,
                )
            )
            totals = (await queries.live_totals(conn, conversation_id, session_id)).get(
                session_id, SessionTotals()
            )
            await conn.execute(
                update(sessions)
                .where(sessions.c.id == session_id)
                .values(
                    final_summary_id=summary_id,
                    finalized_at=codec.now(),
                    **queries.totals_columns(totals),
                )
            )
            return await read_session_info(conn, conversation_id, session_id)

        return await self._write(conversation_id, owner, body, operation="finalize_session")

    async def finalize_pending(
        self, conversation_id: str, summarize: SummaryMaker, *, owner: str | None = None
    ) -> list[SessionInfo]:
        """Finalise every non-current session not finalised yet (for example after a crash
        interrupted a background finalisation)."""
        pending = [
            s
            for s in await self.list_sessions(conversation_id, owner=owner)
            if not s.is_current and s.final_summary is None and s.finalized_at is None
        ]
        return [
            await self.finalize_session(conversation_id, s.id, summarize, owner=owner)
            for s in pending
        ]

    async def delete_session(
        self, conversation_id: str, session_id: str, *, owner: str | None = None
    ) -> None:
        """Delete a session for real, with what hangs off it: its messages, the compaction
        children that carry them (recursively) and their compactions. Sessions that only started
        from its summary (``new``, ``resume``) keep that summary and are detached. If the current
        session goes, its parent becomes current (or a fresh session starts). Only ever on a
        person's request."""

        async def body(conn: AsyncConnection, conv: RowMapping) -> None:
            await queries.session_row(conn, conversation_id, session_id)
            rows = await queries.all_sessions(conn, conversation_id)
            by_id = {r["id"]: r for r in rows}
            doomed = {session_id}
            grew = True
            while grew:
                grew = False
                for r in rows:
                    carried = r["reason"] == "compaction" and r["parent_id"] in doomed
                    if carried and r["id"] not in doomed:
                        doomed.add(r["id"])
                        grew = True
            locked = await queries.cas(conn, conversation_id, int(conv["version"]))
            for r in rows:
                if r["id"] in doomed or r["parent_id"] not in doomed:
                    continue
                keep = r["start_summary_id"]
                if keep is None and r["reason"] in ("new", "resume"):
                    keep = by_id[r["parent_id"]]["final_summary_id"]
                await conn.execute(
                    update(sessions)
                    .where(sessions.c.id == r["id"])
                    .values(parent_id=None, start_summary_id=keep)
                )
            if locked["current_session_id"] in doomed:
                parent = by_id[session_id]["parent_id"]
                if parent is None:
                    start = int(locked["next_seq"])
                    parent = await queries.insert_session(
                        conn,
                        conversation_id,
                        reason="start",
                        parent_id=None,
                        carry_from=start,
                        start_seq=start,
                    )
                await queries.set_conversation(conn, conversation_id, current_session_id=parent)
            await conn.execute(delete(sessions).where(sessions.c.id.in_(doomed)))
            await _delete_orphan_summaries(conn, conversation_id)

        await self._write(conversation_id, owner, body, operation="delete_session")


async def read_session_info(
    conn: AsyncConnection, conversation_id: str, session_id: str
) -> SessionInfo:
    """A session as the transaction on ``conn`` sees it (in a writer: after its own changes,
    so that the operation returns what it committed without a second transaction)."""
    conv = await queries.read_conversation(conn, conversation_id, None)
    return await _session_info(conn, conv, session_id)


async def _session_info(conn: AsyncConnection, conv: RowMapping, session_id: str) -> SessionInfo:
    row = await queries.session_row(conn, conv["id"], session_id)
    live = None
    if row["message_count"] is None:
        live = (await queries.live_totals(conn, conv["id"], session_id)).get(
            session_id, SessionTotals()
        )
    return codec.session_info(
        row,
        start=await queries.start_summary(conn, row),
        final=await queries.summary_by_id(conn, row["final_summary_id"]),
        current_id=conv["current_session_id"],
        live=live,
    )


async def _delete_orphan_summaries(conn: AsyncConnection, conversation_id: str) -> None:
    s = sessions.c
    used = (
        select(s.start_summary_id.label("sid"))
        .where(s.conversation_id == conversation_id, s.start_summary_id.is_not(None))
        .union(
            select(s.final_summary_id).where(
                s.conversation_id == conversation_id, s.final_summary_id.is_not(None)
            ),
            select(compactions.c.summary_id).where(
                compactions.c.conversation_id == conversation_id,
                compactions.c.summary_id.is_not(None),
            ),
        )
        .subquery()
    )
    await conn.execute(
        delete(summaries).where(
            summaries.c.conversation_id == conversation_id,
            summaries.c.id.not_in(select(used.c.sid)),
        )
    )
