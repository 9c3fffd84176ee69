"""Exact references in text, and which text of a message is a request, an observation or prose.

Shared by the extractive summarizer and the fact ledger: ``harvest_references`` finds the exact
strings a hand-off must copy character for character (ids, paths, URLs, versions, numbers with
units, ...), ``reference_kinds`` says which shape each one has, ``user_request_text`` tells a
user's request from a tool observation of the text protocol, ``observation_text`` gives what a
tool said, and ``strip_code`` the prose of an assistant message.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

from abridged.core.model import File, Image, Message, ToolResult
from abridged.core.turns import is_user_message
from abridged.engine.summarize.redact import CACHED_CHARS

#: A rate: any unit per a unit of time (``req/min``, ``MB/s``, ``jobs/day``), not a path.
_RATE = (
    r"[A-Za-z]{1,12}/(?:s|secs?|seconds?|min|mins|minutes?|h|hrs?|hours?|d|days?|wk|weeks?|"
    r"mo|months?|yr|years?)"
)
#: A rate unit alone (``req/min``): a unit, never a name or a path.
RATE_UNIT = re.compile(_RATE)
_UNITS = (
    _RATE
    + r"|ms|s|sec|secs|seconds?|µs|us|microseconds?|ns|nanoseconds?|milliseconds?|minutes?|mins?|"
    r"hours?|hrs?|h|days?|weeks?|months?|years?|[kKMGTP]i?B|bytes?|[kKMG]|%|percent|tokens?|"
    r"elements?|items?|rows?|lines?|files?|requests?|req/s|rps|qps|users?|px|[kMG]?Hz|cores?|"
    r"CPUs?|GPUs?|workers?|threads?|retries|records?|calls?|steps?|x|"
    # physical units and counts of things (``62.0 °C``, ``366.1 kg``, ``2114 mV``, ``4298 pcs``)
    r"°[CF]|kg|mg|lbs?|oz|[mk]?[VAW]h?|MW|mAh|kWh|Ω|[mck]m|pcs|pieces|units|words|pages|"
    # force, pressure and energy (``3.09 kN``, ``7.5 kN/m²``, ``350 kPa``, ``40 psi``, ``12 kJ``)
    r"[kMG]N(?:/m[²2])?|N·?m|[khMG]?Pa|psi|[kMG]J|lux|lm|"
    # levels in decibels (``-20.2 dBFS``, ``3 dBm``) and counts of people (``297 students``)
    r"dB(?:FS|m|A|i)?|students?|participants?|attendees?|people|seats?"
)
#: An amount with its currency's ISO code or sign, before or after it, its thousands grouped
#: by commas, spaces, dots or apostrophes (``11 514 SEK``, ``EUR 1.250,00``, ``CHF 3,613.85``,
#: ``CHF 20'708.00`` as Switzerland writes it).
_CURRENCY = r"(?:USD|EUR|GBP|CHF|SEK|NOK|DKK|ISK|PLN|CZK|HUF|JPY|CNY|INR|AUD|CAD|NZD|ZAR|BRL|[€£¥])"
_AMOUNT = r"\d{1,3}(?:[ \u00a0\u202f.,'\u2019]\d{3})*(?:[.,]\d{1,2})?"
#: A dollar amount only when grouped or with cents (``$31,406``, ``$5.00``): a bare ``$1`` is
#: a shell's argument, an awk field, a debugger's value history.
_DOLLARS = r"\$(?:\d{1,3}(?:,\d{3})+(?:\.\d{2})?|\d+\.\d{2})(?!\d|[.,]\d)"

#: A time of day and its half of the day (``08:55``, ``8:45 pm``).
_CLOCK = r"\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp]\.?[Mm]\.?\b)?"
#: A time zone named after a time (``08:55 UTC``).
_ZONE_NAME = r"\s?(?:UTC|GMT|CET|CEST|EST|EDT|PST|PDT)\b"
_ZONE = f"(?:{_ZONE_NAME})?"
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\b\.?"
)
#: A date, ISO or written with its month's name and a year (``2029-05-04``, ``4 May 2029``,
#: ``May 4th, 2029``), with slashes year first (``2029/05/04``) or dots day first
#: (``04.05.2029``), with the time of day when one follows (``4 May 2029 08:55``): one value,
#: so a deadline that moves is one value replaced, not a time of day beside a date. (Not its
#: zone: a correction often names the old time without it.)
DATE = re.compile(
    r"\b(?:(?:\d{4}-\d{2}-\d{2}|\d{4}/\d{2}/\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2})?Z?)?"
    r"|(?:0?[1-9]|[12]\d|3[01])\.(?:0?[1-9]|1[0-2])\.(?:19|20)\d{2}\b(?!\.\d)"
    r"|(?<![\d/])(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])/(?:19|20)\d{2}\b(?!/)"
    r"|(?:\d{1,2}(?:st|nd|rd|th)?\s" + _MONTH + r"|" + _MONTH + r"\s\d{1,2}(?:st|nd|rd|th)?)"
    r",?\s\d{4}\b(?:,?\s(?:at\s)?" + _CLOCK + r")?)"
)

#: Each reference shape: its name and pattern (a group, when present, is the value).
_REFERENCE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "url",
        # (any scheme: ``redis://``, ``postgresql+psycopg://``, ``amqps://``)
        re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s<>\"'`)\]]+[^\s<>\"'`)\].,;:!?]"),
    ),
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b")),
    # a handle, dotted ones too (``@ana.lopez``: a sentence's full stop is not in it), or a
    # team's (``@acme/data-plumbing``)
    (
        "handle",
        re.compile(r"(?<![\w.@/])@[A-Za-z0-9_](?:[\w.-]*\w)?(?:/[A-Za-z0-9_](?:[\w-]*\w)?)?"),
    ),
    ("uuid", re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")),
    ("code", re.compile(r"`([^`\n]{2,80})`")),
    ("path", re.compile(r"(?<![\w/:.@-])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*\w")),
    # a Windows share (``\\files-2\finance\q3``)
    ("path", re.compile(r"(?<![\w\\])\\\\[\w.$-]+(?:\\[\w.$-]*[\w$-])+")),
    (
        "file",
        re.compile(
            r"\b[\w-]+(?:\.[\w-]+)*\.(?:py|pyi|js|mjs|ts|tsx|jsx|json|ya?ml|toml|md|rst|txt|cfg|"
            r"ini|c|h|cc|cpp|hpp|rs|go|java|kt|rb|php|sh|sql|html|css|lock|csv|xml|proto|ipynb|"
            r"env|conf|log)\b"
        ),
    ),
    # a host by its domain (``db-2.eu.internal``), an image or a host with its tag or port
    # (``ruko:9.19-ti``, ``cache-1:6379``)
    (
        "host",
        re.compile(
            r"\b[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:internal|local|lan|corp|intra|svc|cluster|"
            r"com|net|org|io|dev|cloud|example)\b(?:\:\d{2,5}\b)?"
        ),
    ),
    ("image", re.compile(r"(?<![\w./:@-])[a-z][a-z0-9_-]*(?:/[a-z0-9_.-]+)*:v?\d[\w.-]*\w")),
    # a port named as one (``port 8443``, ``port: 8443``)
    ("number", re.compile(r"(?i)\bports?\b[^\d\n.;]{0,30}?(?<![\w.-])(\d{2,5})\b(?![.,]\d)")),
    ("number", re.compile(r"(?i)(?<![\w.,-])(\d{2,5})\b(?![.,:]\d)(?=[^\d\n.;]{0,30}?\bports?\b)")),
    ("version", re.compile(r"\b[A-Z][A-Za-z]+ \d+\.\d+(?:\.\d+)*\b")),
    # (a PEP 440 pre- or post-release is one version: ``6.1.14b7``, ``2.0.0rc1``, ``1.4.2.dev3``)
    (
        "version",
        re.compile(r"\b[vV]?\d+\.\d+\.\d+(?:(?:a|b|rc|c|dev|post)\d+)?(?:[-.+][\w.]+)?\b"),
    ),
    ("version", re.compile(r"\b[vV]?\d+(?:\.\d+)*\.x\b")),  # a release line: 6.x, 16.40.x
    # an app's version with its build number, as stores print it (``1.24 (53008)``)
    ("version", re.compile(r"\b(?:[A-Z][A-Za-z]+ )?\d+\.\d+(?:\.\d+)?\s\(\d{3,}\)")),
    # a postal item's number (UPU S10: ``CN408487704YN``)
    ("ticket", re.compile(r"\b[A-Z]{2}\d{9}[A-Z]{2}\b")),
    # a company by its legal form (``Prabiath GmbH``, ``Graki ApS``, ``Mauhoheild s.r.o.``)
    (
        "name",
        re.compile(
            r"\b[A-Z][\w&'-]+(?:\s[A-Z][\w&'-]+){0,3}\s(?:GmbH|AG|BV|B\.V\.|NV|SA|SAS|SARL|"
            r"SpA|Srl|S\.r\.l\.|ApS|A/S|AB|ASA|Oy|Oyj|Ltd\.?|LLC|LLP|Inc\.?|Corp\.?|plc|PLC|"
            r"s\.r\.o\.|a\.s\.|Kft\.?|KK|Pty\sLtd)(?![\w/])"
        ),
    ),
    # a reverse-domain id (``com.jaudu.smusvau``: an app bundle, a Java package)
    ("name", re.compile(r"\b(?:com|org|net|io|dev|app|de|uk)\.[a-z][\w-]*(?:\.[a-z][\w-]*)+\b")),
    ("ticket", re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d+\b")),
    ("ticket", re.compile(r"(?<![\w&])#\d{2,}\b")),
    # a record number with its letters and no hyphen (``INC552043``, ``CHG0012345``)
    # (six digits or more: ``ISO8601``, ``ES2017``, ``RFC7231`` name standards, not records)
    ("ticket", re.compile(r"\b[A-Z]{2,6}\d{6,}\b")),
    # a log line's prefix (``[RELEASE]``), not its level
    (
        "tag",
        re.compile(
            r"\[(?!(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|NOTE|TODO)\])[A-Z][A-Z0-9_-]{2,}\]"
        ),
    ),
    ("channel", re.compile(r"(?<![\w&#/])#[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+\b")),
    ("date", DATE),
    # a window of the day, one value (``18:45-21:40 UTC``): its ends are no two times
    ("time", re.compile(r"\b" + _CLOCK + r"\s?[-–]\s?" + _CLOCK + _ZONE)),
    ("time", re.compile(r"\b(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\s+)?" + _CLOCK + _ZONE)),
    # a cron schedule's five fields, one at least a star (``16 10 * * 1``, ``*/5 * * * *``)
    (
        "schedule",
        re.compile(
            r"(?<![\w*/,-])(?=[\d*/,-]*\*|(?:\S+\s){1,4}[\d/,-]*\*)"
            r"[\d*][\d*/,-]*(?:\s[\d*][\d*/,-]*){4}(?![\w*/,-])"
        ),
    ),
    # (a sign before it is the value's: ``-20.2 dBFS``, ``-18 °C``; not a range's dash)
    ("quantity", re.compile(r"(?:(?<![\w.-])-)?\b\d+(?:[.,]\d+)*\s?(?:" + _UNITS + r")(?![\w/])")),
    # (thousands grouped by commas, or by apostrophes as Switzerland writes them: ``72'685``)
    ("quantity", re.compile(r"\b\d{1,3}(?:(?:,\d{3})+|(?:['\u2019]\d{3})+)(?:\.\d+)?\b")),
    ("quantity", re.compile(r"(?<![\w.,])" + _CURRENCY + r"\s?" + _AMOUNT + r"(?![\d])")),
    ("quantity", re.compile(r"(?<![\w.,$])" + _DOLLARS)),
    ("quantity", re.compile(r"(?<![\w.,])" + _AMOUNT + r"\s?" + _CURRENCY + r"(?![\w])")),
    # a number written in hexadecimal (``0x001DE800``: an offset, a register, an address)
    ("hex", re.compile(r"\b0x[0-9A-Fa-f]{4,10}\b")),
    ("hex", re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")),
    # (not the digits of a word: ``INC552043`` is one reference, ``a12345`` none)
    ("number", re.compile(r"(?<![\w.,])\d{5,}(?![\d]|[.,]\d)")),
    # (a private name may open with underscores: ``_parse_row``. Not a dotted one as one name:
    # ``self.from_state.models`` in code output, rarer than its parts, outranked facts.)
    ("identifier", re.compile(r"\b_*[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+\b(?<=\w)")),
)
_IDENTIFIER_NEEDS = re.compile(r"\d|_")
_LONG_RUN = re.compile(r"\S{200,}")

#: Shapes that name one thing outside the code at hand (a ticket, a person, a version, a
#: quantity): the strongest sign that a sentence states a fact worth keeping.
STRONG_KINDS = frozenset(
    {
        "url",
        "email",
        "handle",
        "uuid",
        "version",
        "ticket",
        "channel",
        "tag",
        "date",
        "time",
        "quantity",
        "hex",
        "number",
        "name",
        "host",
        "image",
        "schedule",
    }
)

#: At most this many references are listed from one message.
REFERENCES_PER_MESSAGE = 12


#: Shapes a code span keeps its ``code`` kind for when it holds one of them whole.
_CODE_SHAPES = frozenset({"code", "identifier", "file", "path"})


def reference_kinds(text: str) -> list[tuple[str, str]]:
    """``(value, kind)`` of each exact reference in ``text``, in order of appearance, each value
    once; where shapes overlap the longest match wins. A path ending in a source file's
    extension is a ``file``; an identifier with a hyphen and a digit (``ip-10-42-9-58``,
    ``CVE-2026-1187``) is a ``name``.

    >>> reference_kinds("Ticket OPS-481 ships in 7.14.2; see kv/infra/db and src/a.py.")
    [('OPS-481', 'ticket'), ('7.14.2', 'version'), ('kv/infra/db', 'path'), ('src/a.py', 'file')]
    >>> reference_kinds("capped at 396 req/min, 40 MB/s")
    [('396 req/min', 'quantity'), ('40 MB/s', 'quantity')]
    """
    if len(text) > CACHED_CHARS:
        return list(_reference_kinds(text))
    return list(_cached_reference_kinds(text))


@functools.lru_cache(maxsize=16_384)
def _cached_reference_kinds(text: str) -> tuple[tuple[str, str], ...]:
    return _reference_kinds(text)


def _reference_kinds(text: str) -> tuple[tuple[str, str], ...]:
    # A run of 200+ characters without a space (a token, a base64 blob, a minified line) is no
    # reference, and the patterns would backtrack on it for seconds: blank it, keeping offsets.
    text = _LONG_RUN.sub(lambda m: " " * len(m.group()), text)
    found: list[tuple[int, int, str, str]] = []
    for kind, pattern in _REFERENCE_PATTERNS:
        for m in pattern.finditer(text):
            value = m.group(1) if m.re.groups else m.group(0)
            start, end = m.span()
            if kind == "identifier" and not _IDENTIFIER_NEEDS.search(value):
                continue
            found.append((start, end, value.strip(), kind))
    # A code span that is wholly one value of another shape (`` `6 November 2056` ``) is that
    # value: the backticks mark it as exact, not as code. (A code name, a file or a path stays
    # code: what an agent names in backticks is mostly the code it works on.)
    spans = {(start, end) for start, end, _v, kind in found if kind not in _CODE_SHAPES}
    found = [f for f in found if f[3] != "code" or (f[0] + 1, f[1] - 1) not in spans]
    # (of two shapes of one span, a date wins: ``04.05.2029`` is no version)
    found.sort(key=lambda f: (f[0], -(f[1] - f[0]), f[3] != "date"))
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    covered_until = -1
    for start, end, value, kind in found:
        if start < covered_until or not value:
            continue
        covered_until = end
        if value in seen:
            continue
        seen.add(value)
        if kind == "path" and _SOURCE_FILE.search(value):
            kind = "file"  # noqa: PLW2901 - the shape, refined
        elif kind == "identifier" and "-" in value and _IDENTIFIER_NEEDS.search(value):
            kind = "name"  # noqa: PLW2901 - a host, a job, an advisory: not a code name
        out.append((value, kind))
    return tuple(out)


_SOURCE_FILE = re.compile(r"\.[A-Za-z]{1,5}$")


def harvest_references(text: str) -> list[str]:
    """Exact references in ``text``, in order of appearance, each once: URLs, e-mails, handles,
    UUIDs, backticked code, paths, file names, versions, ticket ids, issue numbers, numbers with
    units, long numbers, commit-like hex ids and identifiers with digits or underscores.

    A value marked replaced, ``(was X)``, is none: it is no longer current.

    >>> harvest_references("Ticket OPS-481 ships in 7.14.2; ping @ana, see kv/infra/db.")
    ['OPS-481', '7.14.2', '@ana', 'kv/infra/db']
    >>> harvest_references("Deploy from release/7.2-hotfix (was release/7.2).")
    ['release/7.2-hotfix']
    """
    text = _REPLACED.sub(" ", text)
    return [
        _with_zone(value, text) if kind == "date" else value
        for value, kind in reference_kinds(text)
        if not (kind == "code" and is_plain_word(value))
    ]


_ZONE_NAMED = re.compile(_ZONE_NAME)
_ZONE_AT_END = re.compile(_ZONE_NAME + "$")


def without_zone(reference: str) -> str:
    """``reference`` without the time zone ``harvest_references`` gave it: the value a ledger
    compares (``reference_kinds``).

    >>> without_zone("4 May 2029 08:55 UTC"), without_zone("OPS-12")
    ('4 May 2029 08:55', 'OPS-12')
    """
    return _ZONE_AT_END.sub("", reference)


def _with_zone(date: str, text: str) -> str:
    """``date`` with the time zone that follows it in ``text``: the exact reference is the
    whole of ``4 May 2029 08:55 UTC``, while the value a correction names is often without it
    (``reference_kinds``)."""
    at = text.find(date)
    zone = _ZONE_NAMED.match(text, at + len(date)) if at != -1 and ":" in date else None
    return date + zone.group() if zone is not None else date


_REPLACED = re.compile(r"\(was [^()\n]*\)")
_PLAIN_WORD = re.compile(r"[A-Za-z][a-z]*")


def is_plain_word(value: str) -> bool:
    """Whether ``value`` is one plain word (``mask``, ``None``, ``sed``): backticked, it is code
    a reader rebuilds from the conversation, not an exact reference to copy (``handle_mask``,
    ``NDData``, ``np.bitwise_or`` are).

    >>> is_plain_word("elif"), is_plain_word("None"), is_plain_word("NDData")
    (True, True, False)
    """
    return _PLAIN_WORD.fullmatch(value) is not None


# -- which text is what ---------------------------------------------------------------------------

_FENCE = re.compile(r"```[^\n]*\n.*?(?:```|$)", re.DOTALL)
_THOUGHT = re.compile(r"^\s*THOUGHT:\s*", re.IGNORECASE | re.MULTILINE)
#: What only a text-protocol observation starts with: mini-swe-agent's tags (``<returncode>``,
#: ``<output>``, a leading ``<exception>``) or its timeout notice.
_OBSERVATION_START = re.compile(
    r"^\s*(?:<exception>.*?</exception>\s*)?<(?:returncode|output|output_head|warning)>"
    r"|^\s*The last command <command>",
    re.DOTALL,
)
#: An observation's tags anywhere, or a leading ``Observation:``: an observation only right after
#: an action of the text protocol (a user may write these too).
_OBSERVATION_MARK = re.compile(
    r"</?(?:returncode|output|output_head|output_tail|warning|exception)>|^\s*observation\s*:",
    re.IGNORECASE,
)
#: A fenced shell block: the action of an agent that runs its commands through its text.
_FENCED_ACTION = re.compile(r"```(?:bash|sh|shell|console|zsh|mswea_bash_command)[ \t]*\n")


#: Notations of settings, not code: a fenced block in one of them states values.
SETTINGS_NOTATIONS = frozenset(
    {"ini", "toml", "yaml", "yml", "json", "jsonc", "json5", "properties", "env", "dotenv"}
    | {"conf", "cfg", "config", "hcl", "tfvars", "xml", "nginx", "systemd", "editorconfig"}
)
#: A file named right before a fence, as its caption (``tox.ini:``, ``from `deploy/a.toml```).
_CAPTION_FILE = re.compile(r"\.([A-Za-z0-9]+)`?\s*:?\s*$")
#: How much of the text before a fence is read for its caption.
_CAPTION_CHARS = 200
#: A quoted block of settings is a snippet; a longer one is a file being written (code).
SETTINGS_BLOCK_LINES = 12
#: A JSON object that calls a tool (``{"action": ...}``, ``{"name": ..., "arguments": ...}``):
#: an action in a text protocol, not settings.
_JSON_ACTION = re.compile(r'^\s*\{\s*"(?:action|tool|arguments|function|tool_name)"', re.MULTILINE)


#: An INI file's lines: a section header, a setting (``name = value``), a comment.
_INI_HEADER = re.compile(r"\[[\w.\- ]{1,60}\]")
_INI_LINE = re.compile(r"[#;].*|[\w.\-]{1,60}[ \t]*=.*|\[[\w.\- ]{1,60}\]")


def _ini_text(body: str) -> bool:
    """Whether ``body`` (a fenced block's text) is an INI file's: a section header first, then
    only settings, headers and comments."""
    lines = [line.strip() for line in body.removesuffix("```").split("\n") if line.strip()]
    return (
        bool(lines)
        and _INI_HEADER.fullmatch(lines[0]) is not None
        and all(_INI_LINE.fullmatch(line) for line in lines[1:])
    )


def _settings_block(block: re.Match[str], text: str) -> bool:
    """Whether the fenced ``block`` of ``text`` shows settings: a short block (at most
    ``SETTINGS_BLOCK_LINES`` lines, no tool call) whose notation says so, or under a line that
    names a file in one (``tox.ini:``)."""
    head, _, body = block.group().partition("\n")
    if body.count("\n") > SETTINGS_BLOCK_LINES or _JSON_ACTION.search(body):
        return False
    info = head[3:].strip().lower()
    if info:
        return info.split()[0] in SETTINGS_NOTATIONS
    if _ini_text(body.rstrip()):
        return True  # an INI file's section and its settings, whatever its name
    window = text[max(0, block.start() - _CAPTION_CHARS) : block.start()].rstrip()
    caption = _CAPTION_FILE.search(window[window.rfind("\n") + 1 :])
    return caption is not None and caption.group(1).lower() in SETTINGS_NOTATIONS


def strip_code(text: str, keep_line: Callable[[str], bool] | None = None) -> str:
    """``text`` without fenced code blocks and ``THOUGHT:`` labels: the prose of a message.
    A block of settings (``ini``, ``toml``, ``yaml``, ``json``, ...; or a block under a line
    naming such a file) is no code: the values it shows stay, without their fences. Of other
    blocks (not a shell action's), the lines ``keep_line`` accepts stay too.

    >>> strip_code("THOUGHT: Look.\\n\\n```bash\\nls\\n```")
    'Look.'
    >>> strip_code("tox.ini:\\n```\\n[jobs]\\nmax_attempts = 85\\n```")
    'tox.ini:\\n[jobs]\\nmax_attempts = 85'
    """

    def kept(block: re.Match[str]) -> str:
        body = block.group().split("\n", 1)[1] if "\n" in block.group() else ""
        body = body[:-3].rstrip() if body.rstrip().endswith("```") else body.rstrip()
        if _settings_block(block, text):
            return body
        if keep_line is None or _FENCED_ACTION.match(block.group()):
            return " "
        return "\n".join(line for line in body.split("\n") if keep_line(line)) or " "

    return _THOUGHT.sub("", _FENCE.sub(kept, text)).strip()


def _attachments(message: Message) -> str:
    notes = []
    for part in message.parts:
        if isinstance(part, Image):
            notes.append("[image]")
        elif isinstance(part, File):
            notes.append(f"[file {part.filename or part.file_id or ''}]".replace(" ]", "]"))
    return " ".join(notes)


def is_text_protocol_action(message: Message) -> bool:
    """Whether ``message`` is an assistant step of the text protocol: marked
    ``meta["text_protocol"]``, or a fenced shell block in its text and no native tool call."""
    if message.role != "assistant":
        return False
    if message.meta.get("text_protocol"):
        return True
    return not message.tool_calls and bool(_FENCED_ACTION.search(message.text))


def user_request_text(message: Message, previous: Message | None = None) -> str | None:
    """The text of a user message that is a request (not a tool observation, not a summary),
    or ``None``. Observations of the text protocol that stayed user messages are not requests
    (see ``is_observation``; ``previous``, the message before, tells more of them apart)."""
    if not is_user_message(message) or message.is_summary:
        return None
    if is_observation(message, previous):
        return None
    text = message.text
    extra = _attachments(message)
    text = f"{text}\n{extra}" if extra and text else text or extra
    return text if text.strip() else None


def is_observation(message: Message, previous: Message | None = None) -> bool:
    """Whether a user message is a tool observation of the text protocol: marked
    ``meta["text_protocol"]``; or starting with ``<returncode>``, ``<output>``, ``<warning>``
    (mini-swe-agent) or its timeout notice; or, right after an action of the text protocol
    (``previous``, see ``is_text_protocol_action``), holding an observation tag anywhere or
    starting with ``Observation:``. What a tool printed is never taken for the user's words."""
    if not is_user_message(message) or message.is_summary:
        return False
    if message.meta.get("text_protocol") or _OBSERVATION_START.match(message.text):
        return True
    return (
        previous is not None
        and is_text_protocol_action(previous)
        and bool(_OBSERVATION_MARK.search(message.text))
    )


def observation_texts(message: Message, previous: Message | None = None) -> Sequence[str]:
    """What tools said in ``message``: the text of each tool result, or the whole text of a
    text-protocol observation; nothing for other messages."""
    if is_observation(message, previous):
        return (message.text,)
    return tuple(p.text for p in message.parts if isinstance(p, ToolResult) and p.text)


#: Extensions of source code: such a file is the code at hand (the files section's subject), not
#: a setting's value or a fact.
SOURCE_EXTENSIONS = frozenset(
    {"py", "pyi", "js", "mjs", "ts", "tsx", "jsx", "c", "h", "cc", "cpp", "hpp", "rs", "go"}
    | {"java", "kt", "rb", "php", "sh", "swift", "scala", "cs", "m", "mm"}
)


def is_source_file(path: str) -> bool:
    """Whether ``path`` names source code by its extension.

    >>> is_source_file("src/app/main.py"), is_source_file("config/app.yaml")
    (True, False)
    """
    return path.rsplit(".", 1)[-1] in SOURCE_EXTENSIONS


def setting_file(value: str, kind: str) -> bool:
    """Whether a ``file`` reference is a setting's value rather than a file of the code at hand:
    it has a directory and is no source code (``config/billing/a.yaml``, ``/run/x/api.sock``,
    ``/var/log/x/a.log``), so a later one in its place replaces it, and it is as exact as any
    path.

    >>> setting_file("/var/log/api/a.log", "file"), setting_file("src/app/main.py", "file")
    (True, False)
    """
    return kind == "file" and "/" in value and not is_source_file(value)


__all__ = [
    "DATE",
    "RATE_UNIT",
    "REFERENCES_PER_MESSAGE",
    "SETTINGS_BLOCK_LINES",
    "SETTINGS_NOTATIONS",
    "SOURCE_EXTENSIONS",
    "STRONG_KINDS",
    "harvest_references",
    "is_observation",
    "is_plain_word",
    "is_source_file",
    "is_text_protocol_action",
    "observation_texts",
    "reference_kinds",
    "setting_file",
    "strip_code",
    "user_request_text",
    "without_zone",
]
