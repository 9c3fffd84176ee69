"""Values a command printed for one named setting, rewritten as ``name: value`` lines.

A command that reads one setting prints its value alone: ``npm pkg get config.queueAdapter``
prints ``"kafka"``, ``printenv LOG_LEVEL`` prints ``debug``. Read alone, such a line says
nothing of what it is the value of, and a plain word is nothing exact, so the ledger took
nothing from it. A key-value store's detailed read (``consul kv get -detailed``, SQLite's
``.mode line``, a parameter store's JSON) prints the name and the value on two lines
(``Key  config/db/pool`` then ``Value  40``): the value line alone is "value is 40".

``rewrite_lookups`` names such a value by what was read (``config.queueAdapter: "kafka"``,
``config.db.pool: 40``), so it reads as the setting it is, and a later value of the same
setting replaces it. Anything else is left as it is.

>>> rewrite_lookups('$ npm pkg get config.queueAdapter\\n"kafka"')
'$ npm pkg get config.queueAdapter\\nconfig.queueAdapter: "kafka"'
>>> rewrite_lookups("debug", command="printenv LOG_LEVEL")
'LOG_LEVEL: debug'
>>> rewrite_lookups("Key    config/db/pool\\nValue  40")
'Key    config/db/pool\\nconfig.db.pool: 40'

A field's history printed under the field's name (``field history (panel_room)``, ``JOURNAL
panel_room``), one stamped row a value, oldest first, reads as that many values of the field,
the last the one that holds:

>>> rewrite_lookups("history (panel_room)\\n  09:12  Ann  Room 4\\n  10:40  Bo   Room 7  [current]")
'history (panel_room)\\npanel_room: Room 4\\npanel_room: Room 7'
"""

from __future__ import annotations

import re

from abridged.engine.summarize.fileops import simple_command_words

__all__ = ["looked_up_name", "rewrite_lookups"]

#: A value longer than this is no single setting's value.
MAX_VALUE_CHARS = 160

#: A shell prompt in output that shows the command it ran (``$ cmd``, ``user@host:~/x$ cmd``).
_PROMPT = re.compile(r"^\s*(?:\$|[\w.-]+@[\w.-]+:[^\s$#]*[$#])\s+(\S.*)$")
#: Words of a command that read a named value: ``get`` and its spellings (``pillar.get``,
#: ``get-parameter``), ``show``, ``read``, ``access``, ``echo``, ``printenv``, ...
_READ_VERB = re.compile(r"^(?:[\w-]+[.:])?(?:get|get-\w+|show|read|access|lookup|value)$")
#: Tools that print what a filter reads from a JSON or YAML file (``jq``, ``yq``).
_QUERY_TOOLS = frozenset({"jq", "yq", "gojq", "jaq"})
#: A filter that reads one path (``.production.desk_model``, ``.spec.replicas``).
_FILTER_PATH = re.compile(r"^\.[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*$")
#: Words that print a variable: only a variable's name follows them (``echo done`` reads none).
_PRINT_VERB = frozenset({"echo", "printenv", "getenv", "printf"})
#: An option that names what to read (``--secret=db-pass``, ``--name /app/pool``).
_NAMING_OPTION = re.compile(r"^--?(?:name|key|secret|parameter|param|field|setting|var)(?:=(.+))?$")
#: A variable expanded by ``echo`` (``$LOG_LEVEL``, ``"${LOG_LEVEL}"``).
_EXPANDED = re.compile(r"^\$\{?([A-Za-z_]\w*)\}?$")
#: What a setting's name looks like: a word with a separator, a capital or a digit in it
#: (``config.queueAdapter``, ``app:beta_cut``, ``NO_RESTART``, ``config/db/pool``); a plain
#: lower-case word (``configmap``, ``latest``) is a sub-command or a kind, not a name.
_NAME_SHAPE = re.compile(r"^(?=.*[A-Za-z])[\w.:/@-]*(?:[._:/A-Z0-9-])[\w.:/@-]*$")
#: A line that already names its value (``key: value``, ``KEY=value``).
_KEYED = re.compile(r"^\s*[\"']?[A-Za-z_][\w.\- ]{0,60}[\"']?\s*(?:=\s*\S|:\s+\S)")
#: A variable's name (``printenv LOG_LEVEL``).
_VARIABLE = re.compile(r"^[A-Za-z_]\w*$")
#: A field of a record printed one field to a line: ``Key  x``, ``key = x``, ``"Name": "x",``.
_FIELD = re.compile(
    r"^\s*[\"']?([A-Za-z]\w{0,20})[\"']?\s*(?:[=:]|\s{2,})\s*[\"']?(.*?)[\"']?,?\s*$"
)
#: Cheap tests that a text may hold a prompt line or a record's value field at all.
_MAY_PROMPT = re.compile(r"^[ \t]*(?:\$|[\w.-]+@[\w.-]+:)", re.MULTILINE)
_MAY_RECORD = re.compile(r"\b(?:value|val|Value|VALUE)\b")
#: An output's own tag (``</output>``), no line of it.
_TAG = re.compile(r"^\s*</?[A-Za-z_][\w-]*>\s*$")
_NAME_FIELDS = frozenset({"key", "name", "setting", "parameter", "param", "field", "variable"})
_VALUE_FIELDS = frozenset({"value", "val"})
#: The head of a field's history: a word that says it is one (*history*, *journal*, *audit*,
#: *revisions*), then the field's name (a word joined by ``_``), bare or in brackets, at the
#: line's end (``ELN > field history (panel_room)``, ``JOURNAL lx_plot``).
_HISTORY_HEAD = re.compile(
    r"^(?=\S).*?\b(?:history|journal|audit|revisions|changes|changelog)\b.*?"
    r"\s\(?(?P<name>[a-z][a-z0-9]*(?:_[a-z0-9]+)+)\)?:?[ \t]*$",
    re.IGNORECASE,
)
#: A row of a field's history: indented, a time with or without a day, who (one word before
#: two spaces, or no one), then the rest: the value and a mark of the current one or none.
_HISTORY_ROW = re.compile(
    r"^[ \t]+(?P<day>\d{1,4}[/.-]\d{1,2}(?:[/.-]\d{1,4})?[ \t]+)?"
    r"(?P<time>\d{1,2}:\d{2}(?::\d{2})?)[ \t]+(?:[^\s\d]\S*[ \t]{2,})?(?P<rest>\S.*)$"
)
#: The mark of the row that holds, at a row's end (``[current]``, ``(latest)``).
_CURRENT_MARK = re.compile(r"[\[(](?:current|now|latest)[\])]\Z")
_MAY_HISTORY = re.compile(r"^[ \t]+(?:\d{1,4}[/.-]\d{1,2}\S*[ \t]+)?\d{1,2}:\d{2}\b", re.MULTILINE)
#: How many lines after a record's name its value may come (a store prints flags between).
RECORD_REACH = 4


def looked_up_name(command: str) -> str | None:
    """The name of the setting ``command`` reads, when it reads one: the first name-shaped
    argument after a reading word (``get``, ``pillar.get``, ``echo``, ...), or the value of an
    option that names it.

    >>> looked_up_name("doppler secrets get NO_RESTART_ARCHIVE --plain")
    'NO_RESTART_ARCHIVE'
    >>> looked_up_name('echo "$LOG_LEVEL"'), looked_up_name("ls -la src/")
    ('LOG_LEVEL', None)
    """
    line = command.strip().split("\n")[0]
    words = simple_command_words(line) if len(line) <= 300 else None
    if words is None:
        return None  # a pipeline or a script prints what its last part makes of the value
    if words and words[0] in _QUERY_TOOLS:
        return _filter_path(words[1:])
    verb = ""
    for at, word in enumerate(words):
        if not verb:
            verb = word if word in _PRINT_VERB or _READ_VERB.match(word) else ""
            continue
        if (option := _NAMING_OPTION.match(word)) is not None:
            # (only after a reading word: ``docker run --name web`` names what it starts)
            named = option.group(1) or (words[at + 1] if at + 1 < len(words) else "")
            if named and not named.startswith("-"):
                return named
        if word.startswith("-") or "=" in word:
            continue
        if verb in _PRINT_VERB:
            expanded = _EXPANDED.match(word)
            if expanded is not None:
                return expanded.group(1)
            return word if verb != "echo" and _VARIABLE.match(word) else None
        if " " in word.strip() or _NAME_SHAPE.match(word):
            return word.strip()
    return None


def _filter_path(words: list[str]) -> str | None:
    """The one path a ``jq``/``yq`` filter reads (``jq -r '.production.desk_model' f.json``:
    ``production.desk_model``): the filter is the first word that is no option nor an
    option's argument; ``None`` when it is anything but a path (``.``, a pipe, a function)."""
    skip = 0
    for word in words:
        if skip:
            skip -= 1
        elif word in _TWO_ARGUMENTS:
            skip = 2
        elif word in ("-f", "--from-file"):
            return None  # (the filter is in a file)
        elif not word.startswith("-"):
            return word[1:] if _FILTER_PATH.match(word) else None
    return None


#: ``jq`` options followed by a name and a value (``--arg v .x``).
_TWO_ARGUMENTS = frozenset({"--arg", "--argjson", "--slurpfile", "--rawfile"})


def rewrite_lookups(text: str, *, command: str | None = None) -> str:
    """``text`` with a lone value printed for a named setting shown as ``name: value``:
    after a prompt line (``$ cmd``) or, for the output's first lines, after ``command`` (the
    command the tool ran) when it reads one setting and prints one line (under a header at
    most); and a record's ``value`` field named by its ``key``/``name`` field above it."""
    if command is None and not (
        _MAY_PROMPT.search(text) or _MAY_RECORD.search(text) or _MAY_HISTORY.search(text)
    ):
        return text  # (most texts: read once, not line by line)
    lines = text.split("\n")
    out = list(lines)
    starts = [(i + 1, m.group(1)) for i, line in enumerate(lines) if (m := _PROMPT.match(line))]
    if command is not None:
        starts.insert(0, (0, command))
    ends = [i - 1 for i, _c in starts[1:]] + [len(lines)] if starts else []
    for (start, ran), end in zip(starts, ends, strict=True):
        name = looked_up_name(ran)
        if name is not None:
            _name_value(out, start, end, name)
    _name_record_values(out)
    _name_history_rows(out)
    return "\n".join(out)


def _name_value(lines: list[str], start: int, end: int, name: str) -> None:
    """Name the value printed in ``lines[start:end]`` (one short output) by ``name``."""
    printed = [i for i in range(start, end) if lines[i].strip() and not _TAG.match(lines[i])]
    # One line, or one under the header of whose value it is (``salt``'s ``minion-7:``).
    headed = len(printed) == 2 and lines[printed[0]].rstrip().endswith(":")
    if len(printed) != 1 and not headed:
        return
    last = printed[-1]
    value = lines[last].strip()
    if len(value) > MAX_VALUE_CHARS or _KEYED.match(value) or value.endswith(":"):
        return
    indent = lines[last][: len(lines[last]) - len(lines[last].lstrip())]
    lines[last] = f"{indent}{_as_key(name)}: {value}"


def _name_record_values(lines: list[str]) -> None:
    """Name each record's ``value`` field by the ``key``/``name`` field a few lines above."""
    named: tuple[int, str] | None = None
    for i, line in enumerate(lines):
        field = _FIELD.match(line)
        if field is None:
            continue
        label, value = field.group(1).lower(), field.group(2).strip()
        if label in _NAME_FIELDS and value and _NAME_SHAPE.match(value):
            named = (i, value)
        elif label in _VALUE_FIELDS and value and named is not None:
            if i - named[0] <= RECORD_REACH:
                lines[i] = f"{_as_key(named[1])}: {value}"
            named = None


def _name_history_rows(lines: list[str]) -> None:
    """Name each stamped row under a field's name (``_HISTORY_HEAD``) by that name: two rows
    or more, each a time (a day before it or not), who wrote it (a name alone, or none) and a
    value; a mark that says which one holds (``[current]``) is left off."""
    at = 0
    while at < len(lines):
        head = _HISTORY_HEAD.match(lines[at])
        rows = []
        if head is not None:
            end = at + 1
            while end < len(lines) and (row := _HISTORY_ROW.match(lines[end])) is not None:
                rest = row.group("rest").rstrip()
                mark = _CURRENT_MARK.search(rest)
                value = rest[: mark.start()].rstrip() if mark is not None else rest
                clock = tuple(int(part) for part in row.group("time").split(":"))
                rows.append(
                    (end, value, mark is not None, ((row.group("day") or "").strip(), clock))
                )
                end += 1
        marked = [r for r in rows if r[2]]
        stamps = [r[3] for r in rows]
        # (oldest first, or the holding row marked: a newest-first listing without a mark,
        # or rows out of order, says nothing of which one holds)
        in_order = stamps == sorted(stamps)
        if (
            head is None
            or len(rows) < 2
            or len(marked) > 1
            or (not marked and not in_order)
            or any(len(r[1]) > MAX_VALUE_CHARS or not r[1] for r in rows)
        ):
            at += 1
            continue
        # (the row marked as the one that holds goes last, wherever the listing put it)
        values = [r[1] for r in rows if not r[2]] + [r[1] for r in marked]
        for (i, *_row), value in zip(rows, values, strict=True):
            lines[i] = f"{head.group('name')}: {value}"
        at = rows[-1][0] + 1


def _as_key(name: str) -> str:
    """A setting's name as a key: path separators read as the dots of one (``app:x`` ->
    ``app.x``), a quoted phrase as it is."""
    if " " in name:
        return name
    return re.sub(r"[:/]+", ".", name).strip(".")
