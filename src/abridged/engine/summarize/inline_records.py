"""Records written on one line of tool output, rewritten as ``owner.field: value`` lines.

Tool output often lists many things' settings one record to a line: a JSON object per line
(``jq -c``), an entry of a dict or JSON map (``"billing": {"timeout": "30s"},``), a row of an
SQL ``INSERT ... VALUES``, an XML element (``<add key="retries" value="3" />``), a logfmt log
line (``level=warn component=mailer data_dir=/srv/m``). Read as they are, such lines look like
code (dense brackets and quotes) and say their owner only by position, so the ledger took
nothing from them. Rewritten as ``owner.field: value; other: value`` they read as settings
of a named thing, keyed by it: a later record of the same owner and field replaces the value.
A line of any other shape is left as it is.

>>> rewrite_records('{"name": "mailer", "timeout": "30s"}')
'mailer.timeout: 30s'
>>> rewrite_records("INSERT INTO svc (name, region) VALUES\\n  ('mailer', 'eu-2'),")
'INSERT INTO svc (name, region) VALUES\\n  mailer.region: eu-2'
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections.abc import Mapping, Sequence

__all__ = ["rewrite_records"]

#: Longer lines are prose, a minified blob or a dump: not one record.
MAX_RECORD_CHARS = 400

Scalar = str | int | float | bool | None

#: Fields that name what a record is of (the owner of its other fields).
_OWNER_FIELDS = (
    "name",
    "service",
    "app",
    "application",
    "component",
    "svc",
    "job",
    "host",
    "module",
    "project",
    "package",
    "id",
    "key",
)
_NAME = re.compile(r"[A-Za-z][\w./@:\-]{0,60}")
_OBJECT = re.compile(r"^\s*(\{.*\})\s*,?\s*$")
_ENTRY = re.compile(r"""^(\s*)(["'])([^"'\n]{1,60})\2\s*:\s*(\{.*\})\s*,?\s*$""")
_INSERT = re.compile(
    r"^\s*INSERT\s+INTO\s+[\w.\"`\[\]]+\s*\(([^)]{1,300})\)\s*VALUES\s*(.*?)\s*$", re.IGNORECASE
)
_ROW = re.compile(r"^\s*(\(.*\))\s*[,;]?\s*$")
_SQL_WORDS = re.compile(r"\b(NULL|TRUE|FALSE)\b(?=(?:[^']*'[^']*')*[^']*$)", re.IGNORECASE)
_TAG = re.compile(
    r"^\s*<([A-Za-z_][\w.:\-]*)((?:\s+[\w:.\-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*(/?)>"
    r"(?:([^<>]*)</\1\s*>)?\s*$"
)
_CLOSE = re.compile(r"^\s*</([A-Za-z_][\w.:\-]*)\s*>\s*$")
_ATTRIBUTE = re.compile(r"([\w:.\-]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
_COMMENT = re.compile(r"^\s*<!--\s*(.*?)\s*-->\s*$")
#: Markup of a page, never a setting (a page fetched by a tool is prose, not records).
_HTML = frozenset(
    [
        "html",
        "head",
        "body",
        "div",
        "span",
        "p",
        "a",
        "li",
        "ul",
        "ol",
        "td",
        "tr",
        "th",
        "table",
        "br",
        "hr",
        "img",
        "b",
        "i",
        "em",
        "strong",
        "code",
        "pre",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "script",
        "style",
        "link",
        "meta",
        "title",
        "form",
        "input",
        "button",
        "label",
        "nav",
        "section",
    ]
)
_VALUE_ATTRIBUTES = ("value", "val", "content", "default")
#: The fields of a record that name the setting it holds (``{"setting": "log_prefix", "value":
#: "[X]"}``), first found first: the ledger reads a one-line JSON record by the same list.
KEY_ATTRIBUTES = (
    "key",
    "name",
    "setting",
    "field",
    "param",
    "parameter",
    "option",
    "variable",
    "var",
    "property",
    "id",
)
_LOGFMT = re.compile(r'(?<!\S)([A-Za-z_][\w.\-]{0,40})=("(?:[^"\\]|\\.)*"|[^\s"]+)')
_LOGFMT_START = re.compile(r"^\s*[A-Za-z_][\w.\-]{0,40}=")
#: A log line's fields that say when and how loud, not what.
_LOG_NOISE = frozenset(
    {"time", "ts", "timestamp", "t", "level", "lvl", "severity", "caller", "pid", "thread"}
)
#: A named block of a config opening (``upstream billing {``, ``resource "aws_s3" "logs" {``,
#: ``location /api {``): its keyword, then its names.
_BLOCK_OPEN = re.compile(
    r"^\s*([a-z_][\w-]*)((?:\s+(?:\"[^\"\n]{1,60}\"|[\w./:@~-]{1,60}))*)\s*\{\s*$"
)
_BLOCK_NAMES = re.compile(r"\"[^\"\n]{1,60}\"|[\w./:@~-]{1,60}")
#: Keywords that open code, not a config's block.
_CODE_BLOCKS = frozenset(
    [
        "class",
        "interface",
        "struct",
        "enum",
        "func",
        "function",
        "fn",
        "if",
        "else",
        "elif",
        "for",
        "foreach",
        "while",
        "switch",
        "try",
        "catch",
        "finally",
        "do",
        "namespace",
        "impl",
        "trait",
        "union",
        "type",
        "record",
        "match",
        "loop",
        "unsafe",
        "async",
    ]
)
#: A config block's directive: ``server 10.0.1.9:64226;`` (nginx) or ``ttl = 300`` (HCL).
_DIRECTIVE = re.compile(
    r"^(\s*)([a-z_][\w.-]{0,40})(?:\s+([^;{}=#\n]{1,200}?)\s*;|\s*=\s*([^{}\n]{1,200}))\s*$"
)
_TYPED = re.compile(
    r"^(\s*)([A-Za-z_]\w{0,60})\s*:\s*[A-Za-z_][\w.]*(?:\[[\w., |]*\])?"
    r"(?:\s*\|\s*[A-Za-z_][\w.]*)*\s*=\s*(\S.*)$"
)


def rewrite_records(text: str) -> str:
    """``text`` with each record on one line rewritten as ``owner.field: value; field: value``
    (the owner when the record names one: a ``name``/``service``/``id`` field, the key of a
    map's entry, the first value of an SQL row, an enclosing XML element's ``name``)."""
    if not any(c in text for c in "{(<=:,"):
        return text
    text = _joined_tags(text)
    out: list[str] = []
    columns: list[str] | None = None  # of the SQL ``INSERT`` whose rows follow
    owners: list[tuple[str, str | None]] = []  # open XML elements and their names
    blocks: list[str | None] = []  # open ``{`` blocks of a config and their names
    header: list[str] | None = None  # of the CSV whose rows follow
    for line in text.split("\n"):
        if len(line) > MAX_RECORD_CHARS:
            out.append(line)
            continue
        if _CSV_HEADER.match(line):
            header = line.strip().split(",")
            out.append(line)
            continue
        if header is not None:
            record = _csv_row(line, header)
            if record is not None:
                out.append(record)
                continue
            header = None
        if (insert := _INSERT.match(line)) is not None:
            columns = [c.strip().strip('"`[]') for c in insert.group(1).split(",")]
            rows = insert.group(2)
            out.append(line if not rows else line[: insert.start(2)])
            if rows:
                out.append(_sql_row(rows, columns) or rows)
            continue
        if columns is not None and (row := _ROW.match(line)) is not None:
            rewritten = _sql_row(row.group(1), columns)
            out.append(f"{_indent(line)}{rewritten}" if rewritten else line)
            if line.rstrip().endswith(";"):
                columns = None
            continue
        columns = None if line.strip() and not line.lstrip().startswith("(") else columns
        if (opened := _BLOCK_OPEN.match(line)) is not None and opened.group(1) not in _CODE_BLOCKS:
            names = _BLOCK_NAMES.findall(opened.group(2))
            blocks.append(names[-1].strip('"') if names else None)
            out.append(line)
            continue
        if line.strip() in ("}", "};") and blocks:
            blocks.pop()
            out.append(line)
            continue
        owner = next((name for name in reversed(blocks) if name), None)
        if owner is not None and (directive := _DIRECTIVE.match(line)) is not None:
            # ``server 10.0.1.9:64226;`` in ``upstream kestrel-auth {``, ``ttl = 300`` in
            # ``resource "aws_route53_record" "api" {``
            indent, key = directive.group(1, 2)
            value = (directive.group(3) or directive.group(4)).strip().strip('"')
            out.append(f"{indent}{owner}.{key}: {value}")
            continue
        out.append(_rewrite_line(line, owners))
    return "\n".join(out)


#: An XML element whose attributes go on over the next lines (``<RollingFile name="audit"``).
_OPEN_TAG = re.compile(r"^\s*<[A-Za-z_][\w.:\-]*\s+[^<>]*$")
#: The most lines one element's attributes are joined from.
MAX_TAG_LINES = 8


def _joined_tags(text: str) -> str:
    """``text`` with each element written over several lines (one attribute a line, as
    log4j, Maven and Android files are) joined onto its first line, so it is one record.

    >>> _joined_tags('<File name="a"\\n      fileName="/var/log/a.log">\\n</File>')
    '<File name="a" fileName="/var/log/a.log">\\n</File>'
    """
    if "<" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        end = _tag_end(lines, i) if _OPEN_TAG.match(lines[i]) else None
        if end is not None:
            joined = " ".join([lines[i].rstrip(), *(part.strip() for part in lines[i + 1 : end])])
            if len(joined) <= MAX_RECORD_CHARS:
                out.append(joined)
                i = end
                continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def _tag_end(lines: Sequence[str], start: int) -> int | None:
    """The index after the line that closes the element opened at ``start`` (its ``>``);
    ``None`` when another element starts first or it goes on past ``MAX_TAG_LINES``."""
    for end in range(start + 1, min(len(lines), start + MAX_TAG_LINES)):
        if "<" in lines[end]:
            return None
        if ">" in lines[end]:
            return end + 1
    return None


#: A CSV header: three or more column names, commas only (``cluster,region,cap_usd``).
_CSV_HEADER = re.compile(r"^\s*[A-Za-z_][\w.\-]{0,40}(?:,[A-Za-z_][\w.\-]{0,40}){2,}\s*$")


def _csv_row(line: str, header: Sequence[str]) -> str | None:
    """A CSV row under ``header`` as ``first.column: value; column: value`` (its first cell
    names the row, empty cells left out); ``None`` when ``line`` is not a row of it.

    >>> _csv_row("acme-us,us-east-2,4200.50,", ["cluster", "region", "cap_usd", "note"])
    'acme-us.region: us-east-2; cap_usd: 4200.50'
    """
    try:
        cells = next(csv.reader([line.strip()]))
    except (csv.Error, StopIteration):
        return None
    if len(cells) != len(header) or not cells[0].strip():
        return None
    fields = {c: v.strip() for c, v in zip(header[1:], cells[1:], strict=True) if v.strip()}
    if not fields:
        return None
    return f"{_indent(line)}{_render(cells[0].strip(), fields)}"


def _rewrite_line(line: str, owners: list[tuple[str, str | None]]) -> str:
    """One line, rewritten when it is a record; ``owners``: the open XML elements (updated)."""
    stripped = line.lstrip()
    if stripped.startswith("<"):
        return _xml(line, owners)
    if (entry := _ENTRY.match(line)) is not None:
        fields = _mapping(entry.group(4))
        if fields is not None:
            return f"{entry.group(1)}{_render(entry.group(3), fields)}"
    if (whole := _OBJECT.match(line)) is not None:
        fields = _mapping(whole.group(1))
        if fields:
            owner, rest = _owned(_without_noise(fields))
            if rest:
                return f"{_indent(line)}{_render(owner, rest)}"
    if _LOGFMT_START.match(line):
        return _logfmt(line)
    if (typed := _TYPED.match(line)) is not None:  # ``schedule: str = "8 14 * * *"``
        return f"{typed.group(1)}{typed.group(2)} = {typed.group(3)}"
    return line


def _without_noise(fields: Mapping[str, Scalar]) -> dict[str, Scalar]:
    """A log record's fields without its time, level and caller (each line has its own; none
    is what the line says), unless nothing else is left."""
    kept = {k: v for k, v in fields.items() if k.lower().lstrip("@") not in _LOG_NOISE}
    return kept or dict(fields)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _mapping(text: str) -> dict[str, Scalar] | None:
    """The fields of a flat JSON object or Python dict literal; ``None`` for anything else."""
    parsed = _literal(text)
    if not isinstance(parsed, dict) or not parsed:
        return None
    if not all(isinstance(k, str) and _scalar(v) for k, v in parsed.items()):
        return None
    return {str(k): v for k, v in parsed.items()}


def _literal(text: str) -> object:
    """JSON, else a Python literal (single quotes, tuples); ``None`` when it is neither."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None


def _owned(fields: Mapping[str, Scalar]) -> tuple[str | None, dict[str, Scalar]]:
    """The record's owner (its first owner field holding a name) and its other fields; a
    record naming one setting and its value (``{"name": "RETRY", "value": "3 s"}``, an env
    list's shape) is that setting: ``(None, {"RETRY": "3 s", ...})``."""
    lowered = {k.lower(): k for k in fields}
    named = next((lowered[k] for k in KEY_ATTRIBUTES if k in lowered), None)
    valued = next((lowered[k] for k in _VALUE_ATTRIBUTES if k in lowered), None)
    if named is not None and valued is not None and isinstance(fields[named], str):
        rest = {k: v for k, v in fields.items() if k not in (named, valued)}
        return None, {str(fields[named]): fields[valued], **rest}
    for name in _OWNER_FIELDS:
        for key, value in fields.items():
            if key.lower() == name and isinstance(value, str) and _NAME.fullmatch(value):
                return value, {k: v for k, v in fields.items() if k != key}
    return None, dict(fields)


def _shown(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def _render(owner: str | None, fields: Mapping[str, Scalar]) -> str:
    """``owner.first: value; second: value`` (the owner qualifies the first key only: the
    line's key, the ledger's subject)."""
    parts = [f"{k}: {_shown(v)}" for k, v in fields.items()]
    if owner is not None:
        parts[0] = f"{owner}.{parts[0]}"
    return "; ".join(parts)


def _sql_row(text: str, columns: Sequence[str]) -> str | None:
    """An SQL row ``('mailer', 'eu-2', 3)`` as ``mailer.region: eu-2; retries: 3``."""
    row = _literal(_SQL_WORDS.sub(lambda m: {"null": "None"}.get(m.group(1).lower(), ""), text))
    if not isinstance(row, tuple) or not row or not all(_scalar(v) for v in row):
        return None
    names = (
        list(columns) if len(columns) == len(row) else [f"column{i + 1}" for i in range(len(row))]
    )
    first = row[0]
    if len(row) > 1 and isinstance(first, str) and _NAME.fullmatch(first):
        return _render(first, dict(zip(names[1:], row[1:], strict=True)))
    return _render(None, dict(zip(names, row, strict=True)))


def _xml(line: str, owners: list[tuple[str, str | None]]) -> str:
    """An XML line: an element's setting as ``owner.key: value``, its comment as text; an
    opening element is remembered as the owner of what it holds, a closing one forgotten."""
    if (comment := _COMMENT.match(line)) is not None:
        return f"{_indent(line)}{comment.group(1)}"
    if (close := _CLOSE.match(line)) is not None:
        tags = [tag for tag, _name in owners]
        if close.group(1) in tags:
            del owners[len(tags) - 1 - tags[::-1].index(close.group(1)) :]
        return line
    tag = _TAG.match(line)
    if tag is None or tag.group(1).lower() in _HTML:
        return line
    attributes = {
        m.group(1): m.group(2) if m.group(2) is not None else m.group(3)
        for m in _ATTRIBUTE.finditer(tag.group(2))
    }
    closed = tag.group(3) == "/" or tag.group(4) is not None
    owner = next((name for _tag, name in reversed(owners) if name), None)
    if not closed:
        name = next((attributes.pop(k) for k in KEY_ATTRIBUTES if k in attributes), None)
        owners.append((tag.group(1), name))
        if not attributes:
            return line
        # (its own settings, beside what it holds: ``<RollingFile name="audit" fileName=..>``)
        return f"{_indent(line)}{_render(name or owner or tag.group(1), attributes)}"
    key = next((attributes.pop(k) for k in KEY_ATTRIBUTES if k in attributes), None)
    value = next((attributes.pop(k) for k in _VALUE_ATTRIBUTES if k in attributes), None)
    if tag.group(4) is not None and tag.group(4).strip():
        value, key = tag.group(4).strip(), key or tag.group(1)
    fields: dict[str, Scalar] = {}
    if key is not None and value is not None:
        fields[key] = value
    elif key is not None:
        owner = f"{owner}.{key}" if owner else key
    fields.update(attributes)
    if not fields:
        return line
    return f"{_indent(line)}{_render(owner, fields)}"


def _logfmt(line: str) -> str:
    """A logfmt line (``level=warn component=mailer data_dir=/srv/m``) as ``mailer.data_dir:
    /srv/m``, its time and level left out; a line of fewer than three fields is left as is."""
    pairs = [(k, v[1:-1] if v.startswith('"') else v) for k, v in _LOGFMT.findall(line)]
    covered = sum(len(k) + len(v) + 1 for k, v in pairs)
    if len(pairs) < 3 or covered < 0.6 * len(line.strip()):
        return line
    owner, rest = _owned(_without_noise(dict(pairs)))
    return f"{_indent(line)}{_render(owner, rest)}" if rest else line
