"""Reading transcript files: decoding, JSON and JSON Lines, and errors that name the line."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abridged.core.model import Message, Usage
from abridged.errors import AbridgedError, FormatError
from abridged.formats.transcripts.text_protocol import usage_report

NON_SPACE = re.compile(r"\S")
OPENAI_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
ANTHROPIC_ROLES = ("user", "assistant")
ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"}
)
# Keys of raw messages that belong to the recorder, not to the wire format.
FOREIGN_KEYS = frozenset({"extra", "usage"})
EXPECT_JSONL = "one JSON object per line"
EXPECT_MESSAGES = "an object with a 'messages' list"


def parse_json(text: str) -> Any:
    """``json.loads``, with nesting too deep for the parser reported as a ``JSONDecodeError``
    (what every caller already turns into a ``FormatError`` naming the line)."""
    try:
        return json.loads(text)
    except RecursionError as e:
        raise json.JSONDecodeError("nested too deeply", text, 0) from e


def kind_of(obj: Mapping[str, Any], key: str = "type") -> str | None:
    """``obj[key]`` when it is a string, else ``None`` (a list must not reach a set lookup)."""
    value = obj.get(key)
    return value if isinstance(value, str) else None


def reject_line(error: FormatError, *, strict: bool, skipped: list[int]) -> None:
    """Raise ``error`` when reading strictly; otherwise record its line as skipped."""
    if strict:
        raise error
    if error.line is not None:
        skipped.append(error.line)


@dataclass(frozen=True, slots=True)
class LineRejecter:
    """Rejects lines of one transcript file (``reject_line``): each a ``FormatError`` naming the
    format, the file, the line, the field and what was expected."""

    fmt: str
    path: Path
    strict: bool
    skipped: list[int]

    def __call__(self, line: int, problem: str, *, expected: str, field: str | None = None) -> None:
        """Reject ``line`` for ``problem`` (raised when reading strictly, else skipped)."""
        error = FormatError(
            f"line {line}: {problem}",
            format=self.fmt,
            path=str(self.path),
            line=line,
            field=field,
            expected=expected,
        )
        reject_line(error, strict=self.strict, skipped=self.skipped)


def decode(data: bytes, fmt: str, path: str, line: int | None = None) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        at = line if line is not None else data.count(b"\n", 0, e.start) + 1
        raise FormatError(
            "the file is not UTF-8 text", format=fmt, path=path, line=at, expected="UTF-8 text"
        ) from e


def read_json(path: Path, fmt: str) -> Any:
    text = decode(path.read_bytes(), fmt, str(path))
    try:
        return parse_json(text)
    except json.JSONDecodeError as e:
        raise FormatError(
            f"invalid JSON: {e.msg}",
            format=fmt,
            path=str(path),
            line=e.lineno,
            column=e.colno,
            expected="a JSON document",
        ) from e


def jsonl_objects(
    path: Path, fmt: str, strict: bool, skipped: list[int], *, skip: int = 0
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; bad lines raise or land in ``skipped``.
    The first ``skip`` non-blank lines are passed over unread (not even decoded)."""
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            if skip > 0:
                skip -= 1
                continue
            try:
                text = decode(raw, fmt, str(path), lineno)
                try:
                    obj = parse_json(text)
                except json.JSONDecodeError as e:
                    raise FormatError(
                        f"line {lineno}: invalid JSON: {e.msg}",
                        format=fmt,
                        path=str(path),
                        line=lineno,
                        column=e.colno,
                        expected=EXPECT_JSONL,
                    ) from e
                if not isinstance(obj, dict):
                    raise FormatError(
                        f"line {lineno}: not a JSON object",
                        format=fmt,
                        path=str(path),
                        line=lineno,
                        expected=EXPECT_JSONL,
                    )
            except FormatError:
                if strict:
                    raise
                skipped.append(lineno)
                continue
            yield lineno, obj


def messages_of(obj: Any, fmt: str, path: str, line: int | None) -> list[Any]:
    messages = obj.get("messages") if isinstance(obj, Mapping) else None
    if not isinstance(messages, list):
        what = "no 'messages' list" if messages is None else "'messages' is not a list"
        raise FormatError(
            what if line is None else f"line {line}: {what}",
            format=fmt,
            path=path,
            line=line,
            field="messages",
            expected=EXPECT_MESSAGES,
        )
    return messages


def check_roles(
    items: Sequence[Any],
    roles: Sequence[str],
    *,
    fmt: str,
    path: str,
    line: int | None = None,
    lines: Sequence[int] | None = None,
    start: int = 0,
) -> None:
    """Every item is an object with one of ``roles`` (``start`` offsets the reported index)."""
    for position, item in enumerate(items):
        index = start + position
        at = lines[position] if lines is not None else line
        if not isinstance(item, Mapping):
            raise FormatError(
                f"message {index} is not an object",
                format=fmt,
                path=path,
                line=at,
                index=index,
                expected="a message object",
            )
        if item.get("role") not in roles:
            raise FormatError(
                f"message {index}: unknown role {item.get('role')!r}",
                format=fmt,
                path=path,
                line=at,
                index=index,
                field="role",
                expected="role one of " + ", ".join(repr(r) for r in roles),
            )


def convert_messages(
    convert: Callable[[], Sequence[Message]],
    fmt: str,
    path: str,
    line: int | None,
    lines: Sequence[int] | None = None,
) -> list[Message]:
    """Run another converter, turning its errors into a ``FormatError`` that names the file."""
    try:
        return list(convert())
    except AbridgedError as e:
        index = getattr(e, "index", None)
        at = lines[index] if lines is not None and isinstance(index, int) else line
        raise FormatError(
            e.message,
            format=fmt,
            path=path,
            line=at,
            index=index,
            expected=getattr(e, "expected", None),
        ) from e
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise FormatError(
            f"cannot read the {fmt} messages: {e!r}", format=fmt, path=path, line=line
        ) from e


def attach_usage(
    messages: list[Message],
    items: Sequence[Mapping[str, Any]],
    normalise: Callable[[Mapping[str, Any] | None], Usage | None],
) -> list[Message]:
    """Give assistant messages the usage reported beside their raw message, when the converter
    did not (matched in order; left alone when the counts differ)."""
    reports = [usage_report(item) for item in items if item.get("role") == "assistant"]
    positions = [k for k, m in enumerate(messages) if m.role == "assistant"]
    if len(reports) != len(positions) or not any(reports):
        return messages
    out = list(messages)
    for k, report in zip(positions, reports, strict=True):
        message = out[k]
        if message.usage is None and report:
            derived = message.id == "m" + message.fingerprint[:20]
            out[k] = message.replace(usage=normalise(report), id="" if derived else message.id)
    return out


def file_stem(path: Path) -> str:
    name = path.name
    for suffix in (".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return name.removesuffix(".traj") or path.name
