"""Transcript files read into ``Transcript``s, with the format told from the content.

Detection order (``detect_format``, used by ``load_transcripts`` when no format is given):

1. **JSON Lines** when the first non-blank line is a JSON object on its own and another non-blank
   line follows. The first object decides: a ``messages`` list means one session per line
   (``swebench-jsonl``); a ``role`` means one message per line, ``abridged-jsonl`` when it has
   ``parts``, else ``openai-chat-jsonl``; a ``{"type", "payload"}`` record of a Codex rollout
   (``codex``, see ``codex``); an entry of a Claude Code project session (``claude-code``: a
   ``type`` and one of ``sessionId``, ``uuid``, ``leafUuid``..., see ``claude_code``). A file of
   one such line is read the same way.
2. Otherwise the whole file is **one JSON document**:
   - a list of messages: ``abridged`` if the first has ``parts``, ``anthropic-messages`` if any
     content block is Anthropic-only (``tool_use``, ``tool_result``, ``thinking``,
     ``redacted_thinking``, an image or document with a ``source``), else ``openai-chat``;
   - an object with a ``messages`` list, in this order: ``abridged`` (``"format": "abridged"`` or
     messages with ``parts``), ``mini-swe-agent-traj`` (``trajectory_format`` or ``info``),
     ``anthropic-messages`` (a top-level ``system`` or Anthropic-only blocks), ``swebench-jsonl``
     (a single flattened session: ``instance_id`` or ``exit_status``), else ``openai-chat``.

Every problem is a ``FormatError`` naming the format, the path, the 1-based line where one is
known (always for JSON Lines), the message index, and what was expected. A missing file raises
the usual ``OSError``. In JSON Lines, ``strict=False`` skips a line that cannot be read and
records its number in ``LoaderStats.skipped_lines``.

mini-swe-agent sessions (``swebench-jsonl``, ``mini-swe-agent-traj``) go through the text
protocol (see ``text_protocol``); a session whose messages already carry native tool calls
(``tool_calls`` / role ``tool``, mini-swe-agent 2's tool-calling mode) goes through the OpenAI
converter instead. ``meta["tool_protocol"]`` says which (``"text"`` or ``"native"``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from abridged.core.model import message_to_dict
from abridged.errors import FormatError
from abridged.formats.transcripts.claude_code import load_claude_code
from abridged.formats.transcripts.codex import load_codex
from abridged.formats.transcripts.detect import Detected, detect
from abridged.formats.transcripts.reading import jsonl_objects, read_json
from abridged.formats.transcripts.records import (
    ABRIDGED_JSON,
    ABRIDGED_JSONL,
    ANTHROPIC_MESSAGES,
    CLAUDE_CODE,
    CODEX,
    FORMATS,
    MINI_SWE_AGENT_TRAJ,
    OPENAI_CHAT,
    OPENAI_CHAT_JSONL,
    SWEBENCH_JSONL,
    Transcript,
)
from abridged.formats.transcripts.shapes import (
    DOC_LOADERS,
    abridged_transcript,
    anthropic_transcript,
    message_jsonl,
    openai_transcript,
    swebench_session,
    traj_transcript,
)

PathLike = str | os.PathLike[str]


def detect_format(path: PathLike) -> str:
    """The transcript format of a file, told from its content (see the module docstring)."""
    return detect(Path(path)).format


def load_swebench_jsonl(
    path: PathLike, *, strict: bool = True, start: int = 0
) -> Iterator[Transcript]:
    """The sessions of a flattened mini-swe-agent JSONL file, one per line, read lazily
    (one line ahead when ``strict=False``, to know where trailing bad lines go). ``start``:
    the sessions (lines) to pass over unread first (a repeated id there is not noticed).

    Each line is ``{"instance_id", "model", "exit_status", "messages": [...]}`` with the usage
    report beside each assistant message; the transcript's id is the instance id (``@line`` added
    when an id repeats), its meta the line's other keys plus ``path`` and ``line``. With
    ``strict=False`` a line that cannot be read is skipped and recorded in the ``skipped_lines``
    of the next transcript (of the last one for trailing lines).
    """
    p = Path(path)
    skipped: list[int] = []  # filled by jsonl_objects too
    seen: set[str] = set()
    held: Transcript | None = None  # non-strict: held back until trailing bad lines are known
    for lineno, obj in jsonl_objects(p, SWEBENCH_JSONL, strict, skipped, skip=start):
        try:
            transcript = swebench_session(obj, p, lineno, seen)
        except FormatError:
            if strict:
                raise
            skipped.append(lineno)
            continue
        if strict:
            yield transcript
            continue
        if skipped:
            transcript = replace(transcript, stats=transcript.stats.with_skipped(skipped))
            skipped.clear()
        if held is not None:
            yield held
        held = transcript
    if held is not None:
        if skipped:
            held = replace(held, stats=held.stats.with_skipped(skipped))
        yield held


def load_traj_json(path: PathLike) -> Transcript:
    """One mini-swe-agent ``.traj.json`` (``{"info", "messages", "trajectory_format"}``), with
    each assistant message's usage read from ``extra.response.usage``."""
    p = Path(path)
    return traj_transcript(read_json(p, MINI_SWE_AGENT_TRAJ), p)


def load_openai_chat(path: PathLike) -> Transcript:
    """OpenAI Chat Completions messages: a JSON list, or an object with a ``messages`` list."""
    p = Path(path)
    return openai_transcript(read_json(p, OPENAI_CHAT), p)


def load_openai_chat_jsonl(path: PathLike, *, strict: bool = True) -> Transcript:
    """OpenAI Chat Completions messages, one per line (``strict=False`` skips unreadable lines)."""
    return message_jsonl(Path(path), OPENAI_CHAT_JSONL, strict)


def load_anthropic_messages(path: PathLike) -> Transcript:
    """Anthropic Messages: ``{"system": ..., "messages": [...]}`` (or a bare list of messages)."""
    p = Path(path)
    return anthropic_transcript(read_json(p, ANTHROPIC_MESSAGES), p)


def load_abridged(path: PathLike) -> Transcript:
    """abridged's own JSON (``transcript_to_dict``'s form, or a bare list of message dicts)."""
    p = Path(path)
    return abridged_transcript(read_json(p, ABRIDGED_JSON), p)


def load_transcripts(
    path: PathLike, format: str | None = None, *, strict: bool = True
) -> list[Transcript]:
    """Every transcript in a file, in the given format or the one detected from the content.

    ``format`` is one of ``FORMATS``; ``strict=False`` skips unreadable lines of JSON Lines files
    (recorded in ``LoaderStats.skipped_lines``). Raises ``FormatError`` naming the line and what
    was expected when the file cannot be read.
    """
    p = Path(path)
    if format is None:
        detected = detect(p, strict)
    elif isinstance(format, str) and format in FORMATS:
        detected = Detected(format)
    else:
        raise FormatError(
            f"unknown transcript format {format!r}",
            format=format,
            path=str(p),
            expected="one of " + ", ".join(FORMATS),
        )
    fmt = detected.format
    return _with_messages(_load(p, detected, strict), p, fmt, given=format is not None)


def load_session(
    path: PathLike, number: int, format: str | None = None, *, strict: bool = True
) -> Transcript | None:
    """The ``number``-th session of a file (from 1), read without the sessions after it (and,
    in a mini-swe-agent JSONL file, without parsing the lines before it); ``None`` when the
    file holds fewer. ``FormatError`` as ``load_transcripts``.
    """
    if number < 1:
        return None
    p = Path(path)
    detected = detect(p, strict) if format is None else Detected(format)
    if detected.format == SWEBENCH_JSONL and detected.doc is None:
        return next(load_swebench_jsonl(p, strict=strict, start=number - 1), None)
    transcripts = load_transcripts(p, detected.format, strict=strict)
    return transcripts[number - 1] if number <= len(transcripts) else None


def _load(p: Path, detected: Detected, strict: bool) -> list[Transcript]:
    fmt = detected.format
    if fmt == SWEBENCH_JSONL:
        if detected.doc is not None:
            return [swebench_session(detected.doc, p, detected.line, set())]
        return list(load_swebench_jsonl(p, strict=strict))
    if fmt in (OPENAI_CHAT_JSONL, ABRIDGED_JSONL):
        return [message_jsonl(p, fmt, strict)]
    if fmt == CLAUDE_CODE:
        return [load_claude_code(p, strict=strict)]
    if fmt == CODEX:
        return [load_codex(p, strict=strict)]
    doc = detected.doc if detected.doc is not None else read_json(p, fmt)
    return [DOC_LOADERS[fmt](doc, p)]


def _with_messages(
    transcripts: list[Transcript], p: Path, fmt: str, given: bool
) -> list[Transcript]:
    """The transcripts, or ``FormatError`` when the file yields no message at all (a file of
    bookkeeping only, or a format that does not fit the content): never a silent empty load."""
    if any(t.messages for t in transcripts):
        return transcripts
    hint = ""
    if given:
        try:
            found = detect(p).format
        except FormatError:
            found = None
        if found is not None and found != fmt:
            hint = f"; the content looks like {found}"
    raise FormatError(
        f"no message in the file read as {fmt}{hint}",
        format=fmt,
        path=str(p),
        sessions=len(transcripts),
        expected="at least one message the model saw",
    )


def transcript_to_dict(transcript: Transcript) -> dict[str, Any]:
    """A transcript in abridged's own JSON form (what ``load_abridged`` reads back)."""
    return {
        "format": ABRIDGED_JSON,
        "id": transcript.id,
        "source_format": transcript.source_format,
        "meta": dict(transcript.meta),
        "messages": [message_to_dict(m) for m in transcript.messages],
    }
