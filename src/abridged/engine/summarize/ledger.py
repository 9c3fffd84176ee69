"""The fact ledger: keyed facts taken deterministically from user, assistant and tool text.

A summary keeps what the user said (verbatim) and what was done (commands, files, errors); the
ledger keeps what was *learned*: lines of tool output that state a rule, a setting, a value, an
identifier or an error (a file, a ticket or a log the agent read), and sentences in which the
agent states a fact, a finding or a decision.

**Candidates.** A line (tool output) or sentence (prose) is a candidate when it is a statement
(``_statement``: not code, not a tool's own chatter, not a question or narration) holding
something exact or binding. It is ranked by the named signals of ``signals`` (specificity,
modality), weighed in one place (``signals.combine``); of equal weight the newest first.

**Attribution.** Each fact renders who said it: ``[user]``, ``[assistant]``, ``[tool: bash
`cmd`]``. What a tool printed in rule or decision language is quoted (``printed: "..."``),
never stated as a requirement: output is data, not instructions.

**Supersession by subject** (``_replaces``). A later fact about the same subject with another
value of the same shape replaces the earlier one, however it is worded: the subject is a key
(``key: value``, ``key = value``, JSON, YAML, a table row, a log line's ``key=value``, *the X
is / moved to Y*) compared by its words, or, without keys, the words the two facts share.
Correction words (*instead*, *cancelled*, *no longer*, *actually*, a decision) lower the evidence
needed; their absence blocks nothing. Two keys naming two things of one kind (*the auth service
host*, *the payment service host*), one slot of two things (``services.kelvo.port``, *the drami
service listens on port ...*) and two keys one file lists (``masural==9.1``, ``fizafus==6.7``)
are two subjects. The replacement shows the old value once, ``(was X)``; a fact that names the
old value itself (*forget X*, *X is cancelled*, *X -> Y*) shows it replaced where it stands, and
so does a field's history of arrows in any order (``passed_through``), in every line of its
message. A user message is only ever replaced by a later user message; what it said is then
marked, never dropped (``superseded_users``).

``build_ledger`` keeps at most ``per_message`` facts from one message and ``max_facts`` in all;
carried facts (the previous summary's entries, their attribution read back) compete on the same
terms, so an important early fact outlives many compactions while chatter does not. Pure: same
input, same ledger.

>>> from abridged.core.model import Message, ToolCall, ToolResult
>>> ledger = build_ledger([
...     Message.user("<returncode>0</returncode><output>\\nretry_limit = 3\\n</output>"),
...     Message.user("<returncode>0</returncode><output>\\nretry_limit = 5\\n</output>"),
... ])
>>> [f.render() for f in ledger.facts]
['[tool] retry_limit = 5 (was 3)']
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Final, Literal, TypeAlias, cast

from abridged.core.model import Message, ToolCall, ToolResult
from abridged.core.tokens import estimate_text_tokens
from abridged.engine.summarize.anchors import (
    anchors,
    changes_value,
    choices,
    lookup_keys,
    slots,
)
from abridged.engine.summarize.diffs import patches_code, removed_lines
from abridged.engine.summarize.fileops import shell_command
from abridged.engine.summarize.inline_records import KEY_ATTRIBUTES, rewrite_records
from abridged.engine.summarize.lookups import rewrite_lookups
from abridged.engine.summarize.redact import redact
from abridged.engine.summarize.references import (
    STRONG_KINDS,
    observation_texts,
    reference_kinds,
    setting_file,
    strip_code,
    user_request_text,
)
from abridged.engine.summarize.short_forms import SHORT_FORMS
from abridged.engine.summarize.signals import (
    CODE_SPAN,
    PERSON,
    WEIGHTS,
    combine,
    is_rule,
    modality,
    persons,
    specificity,
)
from abridged.engine.summarize.signals import (
    DECISION as _DECISION,
)
from abridged.engine.summarize.transcript import truncate_tokens

#: The arrows of one character a line may set a new value with (``X → Y``, ``X ⇒ Y``), besides
#: ``->`` and ``=>``: every rule that reads an arrow reads these.
_ARROWS = "→⇒➜➔⟶"


def _words(text: str) -> frozenset[str]:
    """The words of ``text``, for word lists written as one string."""
    return frozenset(text.split())


Source = Literal["user", "assistant", "tool", "carried"]
FactKind = Literal["rule", "decision", "finding", "error", "value"]

#: A fact shown in a summary holds at most this many tokens.
FACT_TOKENS = 60
#: A candidate is a fact when its specificity and modality add up to at least this much (one
#: exact reference, or rule language, is enough; a code name alone is not).
MIN_CONTENT = 0.4
#: How much more a new fact must weigh to take the place of one a summary already kept: a
#: hysteresis, so that facts are not traded for others of about their worth at every
#: compaction (the newest-first tie-break alone let each compaction's fresh facts push the
#: older ones out; chosen on generated canaries, see bench/RESULTS.md), and consecutive
#: summaries keep their facts (the prompt cache, a reader's trust).
CARRIED_MARGIN = 1.0
#: Words too common to say two facts are about the same thing.
_TOPIC_STOP = _words(
    "this that with from have will would should could been being were they them their there "
    "here what when where which while also just only instead correction changed moved "
    "update updated now from earlier later before after please used using need make made "
    "like about into over more less than then since until "
    # (a negation says how, not what about: *do not load ...*, *will not backport ...*)
    "not don doesn didn won isn aren wasn"
)
#: At most this many facts are listed from one message (a long output cannot flood the ledger;
#: the rest still replace by key or value).
PER_MESSAGE = 8
#: A line or sentence is read up to this many characters (regexes stay linear on huge lines).
MAX_UNIT_CHARS = 1_000
#: A line that occurs this many times in one output (numbers aside) is noise.
REPEATED_LINE = 3
#: The text that marks a replaced user message in a summary.
SUPERSEDED_MARK = "[superseded by a later message]"

# -- shapes ---------------------------------------------------------------------------------------

_ERROR_LINE = re.compile(
    r"^\s*(?:E\s+)?\w*(?:Error|Exception)\b|^\s*(?:error|fatal|ERROR|FATAL|FAILED)\b:?|"
    r"\b\w+(?:Error|Exception): "
)
#: Output that is about the tools, not the task: listings, installers, test-runner headers,
#: licence boilerplate.
_NOISE = re.compile(
    r"^\s*(?:[d\-l][rwxsStT\-]{9}[.@+]?\s|total \d+$|Successfully (?:installed|built)|"
    r"Requirement already satisfied|Collecting |Downloading |Installing collected|"
    r"Using cached|platform \w+ -- Python|rootdir:|cachedir:|plugins:|collected \d+ items?|"
    r"=+ .* in [\d.]+s =+$)|SPDX-License-Identifier|@license\b|Copyright \(c\)|"
    r"Licensed under|https?://(?:files\.pythonhosted\.org|pypi\.org/simple)",
    re.IGNORECASE,
)
_NARRATION = re.compile(
    r"^(?:let me|let's (?:check|look|see|run|try|start|verify|examine|first)|now,? (?:i|let)|"
    r"next,? i|first,? i|i'll (?:check|look|run|start|try|examine|verify|create|see|search|"
    r"inspect|read|open|list|view)|i will (?:check|look|run|start|try|examine|verify|create|"
    r"see|search|inspect|read|open|list|view)|i need to|i want to|i am going to|i'm going to|"
    r"i should|ok|okay|great|good|perfect|hmm|wait)\b",
    re.IGNORECASE,
)
_CODE = re.compile(
    r"^\s*(?:def |class |import |from \S+ import|return\b|if .*:$|elif |else:|for .* in .*:$|"
    r"while .*:$|try:|except\b|finally:|with .*:$|@\w|#include|public |private |protected |"
    r"function |const |let |var |raise |assert |yield |await |async |lambda\b|print\(|self\.|"
    r"[}{\])]|>>>|\.\.\.|\$ )"
)
#: Subjects too general to key a fact by (``the issue is ...``, ``the output is ...``).
_GENERIC_SUBJECTS = _words(
    "issue problem error fix output result results test tests file files value values code "
    "function method class change changes thing question answer solution cause reason "
    "approach idea goal task bug behavior behaviour case example difference point step "
    "command script line lines part way one first last next current default type name"
)
_CODE_ASSIGN = re.compile(r"^\s*[A-Za-z_][\w.\[\]'\"]*\s*(?:[-+*/|&]?=)\s*(?!=)")
_LINE_NUMBER = re.compile(r"^\s*\d+[:\t]|^\S+:\d+:|^\s*\d+\s{2,}")
_TRACE = re.compile(r'^\s*File "|^\s*at \S+\(|^\s+\^+\s*$')
#: A quoted line of a reply (``> ...``, e-mail's and chat's quote), what it quotes.
_QUOTE_LINE = re.compile(r"^\s*>+\s?(\S.*)$")
#: A Python traceback's frame: its file, line and function.
_FRAME = re.compile(r'^\s*File "([^"\n]+)", line (\d+)(?:, in ([\w.<>]+))?')
_WORD = re.compile(r"[A-Za-z][a-z]+(?:'[a-z]+)?")
_SYMBOLS = re.compile(r"[(){}\[\]=<>;|\\*&$]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])|\n")
#: A name's initial right before a split (*Evander F.* of *Evander F. Banennas*): no end.
_INITIAL_BEFORE = re.compile(r"\b[A-Z][a-z]+ [A-Z]\.\Z")


def split_statements(pattern: re.Pattern[str], text: str) -> list[str]:
    """``pattern.split(text)``, but not after a name's middle initial on one line (*Evander
    F. Banennas is company manager*: one sentence; *We picked option B. The deadline ...*:
    two).

    >>> split_statements(_SENTENCE_END, "Ann B. Lee owns it. We chose plan B. Go.")
    ['Ann B. Lee owns it.', 'We chose plan B.', 'Go.']
    """
    out: list[str] = []
    start = 0
    for found in pattern.finditer(text):
        if found.start() == found.end():
            continue
        if "\n" not in found.group() and _INITIAL_BEFORE.search(
            text, max(start, found.start() - 40), found.start()
        ):
            continue
        out.append(text[start : found.start()])
        start = found.end()
    out.append(text[start:])
    return out


_LABEL = re.compile(r"^\s*(?:[-*>#]+\s*)?([A-Za-z][\w .()/-]{0,40}?)\s*:\s+(?=\S)")
# (a key may hold a path: ``paths./services/billing.timeout``, under an OpenAPI ``paths:``)
#: ``key = value`` and its kin: a shell's ``export``, Make's ``override`` and its ``?=``,
#: ``:=``, ``::=`` (``override TOOLCHAIN_IMAGE := img:2`` sets what ``TOOLCHAIN_IMAGE ?=
#: img:1`` did; ``+=`` appends, it replaces nothing).
_ASSIGN = re.compile(
    r"^\s*(?:(?:export|override)\s+)?([A-Za-z_][\w.\-]{0,60}(?:/[\w.\-]{1,60}){0,6})\s*"
    r"(?:=|:=|::=|\?=|:)\s*(\S.{0,200})$"
)
_COPULA = re.compile(
    r"\b(?:is|are|was|were|will be|has to be|must be|should be|equals|becomes|became|"
    r"is set to|was set to|has been set to|has been|have been|set to|stays at|stays|remains|"
    r"ended up as|ended up at|defaults to|points to|lives|live|sits)\b",
    re.IGNORECASE,
)
_CHANGE = re.compile(
    r"\b(?:changed|moved|has changed|was changed|switched|was renamed|is renamed|has been "
    r"updated|was updated|is now|are now|now is|now are|no longer)\b",
    re.IGNORECASE,
)
#: Words (and arrows) that say a value replaced another: they let a correction through on less
#: evidence of its subject; their absence blocks nothing (``_replaces``).
_CORRECTION = re.compile(
    r"\b(?:correction|corrected|instead|changed|moved|switched|renamed|updated|no longer|now|"
    r"actually|rather|replaces?|replaced|not the|slipped|postponed|delayed|rescheduled|bumped|"
    r"raised|lowered|increased|decreased|went (?:up|down)|from here on|going forward|"
    r"cancel(?:l?ed|s)?|scratch|scrap(?:ped)?|ditch(?:ed)?|forget|drop(?:ped)?|change of plan|"
    r"new|anymore|any more|"
    r"tak(?:es|ing|en) over|took over|reassigned|handed over|hands over|obsolete|void|"
    r"retired|withdrawn|revert(?:ed)?|superseded|overrides?|pushed|is off|is out|ignore|"
    r"disregard|earlier|previous(?:ly)?|wrong|mistaken?|typo|nvm|never mind|dead|gone|"
    r"swap(?:ped)?)\b|->|[" + _ARROWS + r"]|=>",
    re.IGNORECASE,
)
#: An assignment inside a line (``... now reads request_timeout_ms: 7000 ...``): a name that
#: looks like a setting (an underscore, a dot or upper case), then ``:`` or ``=`` and a value.
_EMBEDDED_ASSIGN = re.compile(
    r"(?<![\w./])([A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+|(?<!\d\s)[A-Z][A-Z0-9_]{2,})\s*(?:=|:)"
    r"\s*[\w\"'/.-]"
)
#: What marks a line of a diff, a list, a quote or a comment before its content.
_LINE_MARK = re.compile(r"^\s*(?:[-+*>•]\s*|#+\s+|//+\s*|--\s+|;+\s*)+")
#: A JSON record naming its field (``{"name": "FOO", "value": "bar"}``, as env lists and
#: settings dumps write them).
_JSON_NAMED = re.compile(rf'"(?:{"|".join(KEY_ATTRIBUTES)})"\s*:\s*"([^"]{{1,60}})"')
_JSON_MEMBER = re.compile(
    # (or a Python dict's, as ``pprint`` prints it: ``'region': 'eu-1',``)
    r"""^\{?\s*(["'])([A-Za-z_][\w.\-/]{0,60})\1\s*:\s*("[^"]{1,120}"|'[^']{1,120}'|[^\s"'{}\[\],]+),?\s*\}?$"""
)
_JSON_VALUE = re.compile(r'"value"\s*:\s*("[^"]{0,120}"|[^,}\s]+)')
_JSON_PAIR = re.compile(r'"([A-Za-z_][\w.\-]{0,60})"\s*:\s*("[^"]{0,120}"|[^,}\s]+)')
_TABLE_ROW = re.compile(r"^\s*\|([^|]{1,60})\|([^|]{1,120})\|")
#: A literal a line of code gives a name, which the code then holds as a setting: an assertion
#: (``assert settings.host == "db-2"``), an annotated constant as source or an editor's hover
#: shows it (``(variable) V1_SHUTDOWN: Final[str] = "April 20, 2063"``).
_CODE_LITERAL = re.compile(
    r"^(?:assert\s+([A-Za-z_][\w.]{0,60})\s*==\s*"
    r"|(?:\(\w+\)\s+)?([A-Za-z_][\w.]{0,60})\s*:\s*[A-Za-z_][\w.\[\], |]{0,60}?\s*=\s*)"
    r"(\"[^\"\n]{1,120}\"|'[^'\n]{1,120}'|-?\d[\w.]*)\s*$"
)
#: A function returning a literal dict (``return {"engine": "7.1.0"}``): the dict is the data.
_RETURNED = re.compile(r"^return\s+(?=\{)")


@functools.lru_cache(maxsize=16_384)  # the verbatim tail is read again at every compaction
def structured(line: str) -> tuple[str, str] | None:
    """``(key, value)`` of a line whose shape names both: ``key = value``, ``key: value``
    (YAML, a header, an env file; after a diff, list or comment mark), a JSON field or a JSON
    record naming its field, a table row (its first cell the key), a ``key=value`` inside a
    log line, code that gives a name a literal (an assertion, an annotated constant, a
    returned dict). ``None`` for anything else.

    >>> structured('+  retry_limit: 5'), structured('| owner | Ann Lee | since May |')
    (('retry_limit', '5'), ('owner', 'Ann Lee'))
    """
    body = _LINE_MARK.sub("", line, count=1).strip()
    literal = _CODE_LITERAL.match(body)
    if literal is not None:
        return literal.group(1) or literal.group(2), literal.group(3).strip("\"'")
    body = _RETURNED.sub("", body, count=1)
    named = _JSON_NAMED.search(body)
    if named is not None:
        given = _JSON_VALUE.search(body)
        if given is not None:
            return named.group(1), given.group(1).strip('"')
    member = _JSON_MEMBER.match(body)
    if body.startswith("{") and (member is None or member.group(1) == '"'):
        pairs = [(k, v.strip('"')) for k, v in _JSON_PAIR.findall(body)]
        return _held_pair(pairs) if pairs else None
    if member is not None:  # one member of a pretty-printed object: ``"region": "eu-1",``
        return member.group(2), member.group(3).strip("\"'")
    # A listing's dot leaders (``cfg_path ....... ~/.config/app.toml``) or a psql row without
    # outer bars (``app.db_sock  | ./run/db.sock``), when it names a setting or holds data
    # (not a progress line's *Loading .... done*, not a pipeline's ``ls | wc``).
    listed = _DOT_LEADER.match(body) or _BARE_ROW.match(body)
    if (
        listed is not None
        and (any(c in listed.group(1) for c in "_.") or _exact(listed.group(2)))
        # (``name | upload_bug`` then ``value | SHE#4083``: a record's fields, not settings)
        and listed.group(1).lower() not in _RECORD_FIELDS
    ):
        return listed.group(1), listed.group(2).strip()
    if _TABLE_ROW.match(body):
        cells = [c.strip() for c in body.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0] or set(cells[0]) <= set("-: "):
            return None
        return _row_pair(cells)
    assign = _ASSIGN.match(body)
    if assign is not None and assign.group(1).lower() not in _GENERIC_LABELS:
        return assign.group(1), assign.group(2).split(" #")[0].strip()
    labeled = _LABELED.match(body)
    if labeled is not None and labeled.group(1).split()[0].lower() not in _GENERIC_LABELS:
        return labeled.group(1), labeled.group(2).strip()
    record = (
        _FIELD_TAG.match(body)
        or _PAIR_TUPLE.match(body)
        or _SEGMENT_FIELD.match(body)
        or _NUMBERED_FIELD.match(body)
        or _spaced_field(body)
    )
    if record is not None:  # ``[po_number] X``, ``('Channel plan', 'X')``, ``REF*ZZ*KEY*X~``
        return record.group("key"), record.group("value").strip()
    flag = _FLAG_VALUE.search(body)
    if flag is not None:  # a command's option and its value: a setting of the run
        return flag.group(1), next(g for g in flag.group(2, 3, 4) if g)
    for embedded in _EMBEDDED_KEY_VALUE.finditer(body):
        key, value = embedded.group(1, 2) if embedded.group(1) else embedded.group(3, 4)
        if _RECORD_ID.fullmatch(key) and body[embedded.end(1) :].lstrip().startswith(":"):
            continue  # (a record's id, *event EV6794: wrote key=X*, names no setting)
        if key.lower() not in _GENERIC_LABELS:  # ``NOTE: Heads up`` sets nothing
            # inside prose the value ends where its code span or its sentence does
            # (*the config has `owner: a@b.example`.*)
            return key, _PROSE_TAIL.sub("", value) or value
    arrow = _ARROW_PAIR.match(body)
    if arrow is not None:  # ``the test class name -> TestB``: what the left side names
        return arrow.group(1), arrow.group(2)
    return None


def _spaced_field(body: str) -> re.Match[str] | None:
    """``_SPACED_FIELD``'s match of ``body``, unless its value reads as words of a sentence
    (*show_hidden_initial -- Boolean that specifies if*)."""
    field = _SPACED_FIELD.match(body)
    if field is None:
        return None
    words = {w.strip(".,;:!?").lower() for w in field.group("value").split()}
    return None if words & _SENTENCE_WORDS else field


def _exact(value: str) -> bool:
    """Whether ``value`` is exact data: it holds a reference or a digit, or is a person's
    name (what a record's other fields, plain words, only qualify)."""
    person = PERSON.search(f" {value}")
    return (
        bool(reference_kinds(value))
        or any(c.isdigit() for c in value)
        or (person is not None and person.group() == value)
    )


def _held_pair(pairs: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """The ``(key, value)`` a JSON record holds: its first field with an exact value, its key
    qualified by the record's fields that hold one plain word (``{"service": "broker",
    "queue_name": "q_7"}`` -> ``broker queue_name``: the queue of the broker, not of another
    service); its first field when none is exact.

    >>> _held_pair([("service", "broker"), ("queue_name", "q_7")])
    ('broker queue_name', 'q_7')
    """
    held = next((p for p in pairs if _exact(p[1])), pairs[0])
    qualifiers = [
        v for k, v in pairs if (k, v) != held and k in _OWNER_FIELDS and _PLAIN_WORD.fullmatch(v)
    ][:2]
    return " ".join([*qualifiers, held[0]]), held[1]


def _row_pair(cells: Sequence[str]) -> tuple[str, str] | None:
    """The ``(key, value)`` of a table row's cells: the first cell after the first with an
    exact value (else the second), keyed by the cells before it (``| mailer | base image |
    m:1.2 |`` -> ``mailer base image``); cells after it are notes.

    >>> _row_pair(["mailer", "base image", "m:1.2", "per ops"]), _row_pair(["owner", "Ann Lee"])
    (('mailer base image', 'm:1.2'), ('owner', 'Ann Lee'))
    """
    at = next((i for i, c in enumerate(cells) if i > 0 and c and _exact(c)), 1)
    key = " ".join(c for c in cells[:at] if c)
    value = cells[at]
    return (key, value) if key and value else None


_PLAIN_WORD = re.compile(r"[a-z][a-z-]{1,30}")
#: A record's fields that name what its setting belongs to (not where it came from).
_OWNER_FIELDS = _words(
    "service app application host component system module team project repo cluster env "
    "environment job node target name"
)


#: ``name of a few words -> value``: a mapping as chat and notes write it.
_ARROW_PAIR = re.compile(r"^([A-Za-z][\w ]{0,60}?)\s+(?:->|[" + _ARROWS + r"]|=>)\s+(\S+)")


#: ``name of two or three words: value`` (a header, a form, terse chat: ``gateway oncall: Ann``).
_LABELED = re.compile(r"^([A-Za-z][\w.\-]*(?: [A-Za-z][\w.\-]*){1,2})\s*:\s+(\S.{0,200})$")


#: What a value that is code holds (``self.root / name``, ``f(x)``, ``a + b``).
_EXPRESSION = re.compile(r"[()\[\]{}]|\bself\.|\s[-+*/%<>]=?\s|^(?:not|lambda|await)\b|[:,]$")


def is_setting(line: str) -> bool:
    """Whether ``line`` sets a name to a value (``structured``) rather than to an expression of
    code: the value is short and holds no call, index, operator or ``self.``.

    >>> is_setting("commit_prefix = NN-68211"), is_setting("path = self.root / name")
    (True, False)
    >>> is_setting("LOG_LEVEL=debug"), is_setting("level = debug")
    (True, False)
    """
    pair = structured(line)
    if pair is None or pair[0].startswith(("self.", "this.")):
        return False
    if _QUOTED.fullmatch(pair[1].strip()):
        return True  # a string literal whole is data, whatever it holds (``"8 14 * * *"``)
    value = pair[1].strip().strip("\"'")
    refs = reference_kinds(value)
    if refs and refs[0][0] == value and refs[0][1] not in _NOT_VALUES:
        return True  # an exact reference whole (``[RELEASE]``, ``OPS-12``) is data
    if not value or len(value.split()) > 6 or _EXPRESSION.search(value):
        return False
    if _ENV_ASSIGN.match(line):
        return True  # ``LOG_LEVEL=debug``: an env file's, a shell's or a log's setting
    # A bare lower-case name (``x = root``) is a variable; data has a digit, a quote, a capital,
    # a separator, several words, or is a literal.
    return bool(_DATA.search(value)) or value.lower() in _LITERALS or " " in value


_DATA = re.compile(r"[\d\"'A-Z/@:._\-]")
#: ``NAME=value`` with no space around the sign: how env files, shells and logs set a value
#: (code spaces it, ``x = root``, or passes a keyword inside a call).
_ENV_ASSIGN = re.compile(r"^\s*[A-Za-z_][\w.]*=[^\s=]+$")
_QUOTED = re.compile(r'"[^"\n]{1,120}"|\'[^\'\n]{1,120}\'|`[^`\n]{1,120}`')
_LITERALS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "none", "nil"})


#: A record's id in capitals and digits (``EV6794``, ``INC42``): what a log line is about, no
#: setting's name.
_RECORD_ID = re.compile(r"[A-Z]{1,6}\d{2,}")
_EMBEDDED_KEY_VALUE = re.compile(
    # (a capitalised word right after a number is its unit or zone, ``09:55 UTC: ...``)
    # (not a URL's host before its port: ``redis://cache.internal:6379``)
    r"(?<![\w./])([A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+|(?<!\d\s)[A-Z][A-Z0-9_]{2,})\s*(?:=|:)\s*"
    r"([$£€]\d[\d,.'’]*\d|[\w\"'/.@-][^\s,;]*)"
    # or a log line's ``key=value`` (no spaces around the sign)
    r"|(?<=\s)([a-z][a-z0-9]{2,})=([$£€]\d[\d,.'’]*\d|[\w\"'/.@-][^\s,;]*)"
)
#: A name, dot leaders, a value (``cfg_path ....... ~/.config/app.toml``).
_DOT_LEADER = re.compile(r"^([A-Za-z_][\w.\-]{0,60}?)\s*\.{4,}\s*(\S.{0,200})$")
#: A row of a psql table, which has no outer bars: a name, a bar, a value (more cells may follow).
_BARE_ROW = re.compile(r"^([A-Za-z_][\w.\-]{0,60})\s+\|\s*([^|\s][^|]{0,120}?)\s*(?:\|.*)?$")
#: A long option given a value (``--mig-own='Sefa Lee'``, ``--pool-max=40``).
_FLAG_VALUE = re.compile(
    r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)+)=(?:'([^'\n]{1,80})'|\"([^\"\n]{1,80})\"|([^\s,;'\"`]+))"
)
#: A form's field tag before its value (``[enclosure_po] PO 4578970756``): a setting's name,
#: with ``_ . -`` in it (``[INFO]``, ``[notes]`` are a log's level and a plain word).
_FIELD_TAG = re.compile(
    r"^\[(?P<key>[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)+)\]\s+(?P<value>\S.{0,200})$"
)
#: A REPL's pair of strings, a label and its value (``('Channel plan', 'Svegekirn')``).
_PAIR_TUPLE = re.compile(
    r"^\(\s*(?P<q>['\"])(?P<key>[A-Za-z][\w .-]{0,60})(?P=q)\s*,\s*"
    r"(?P<r>['\"])(?P<value>[^'\"\n]{1,120})(?P=r)\s*\)$"
)
#: An EDI segment (X12, EDIFACT): elements apart by ``*`` or ``+``, a qualifier that names a
#: setting (``REF*ZZ*CONTRACT_RETENTION*477 days~``), its value in the element after it.
_SEGMENT_FIELD = re.compile(
    r"^[A-Z][A-Z0-9]{1,2}(?:[*+][^*+~'\n]*)*?[*+](?P<key>[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"
    r"[*+](?P<value>[^*+~'\n]+)[~']?$"
)
#: An order's numbered line, its field's name and value in columns (``10  setup_src  X``).
_NUMBERED_FIELD = re.compile(
    r"^\d{1,4}\s{2,}(?P<key>[a-z][a-z0-9]*(?:[_.-][a-z0-9]+)+)\s{2,}(?P<value>\S.{0,200})$"
)
#: A setting's name with ``_`` in it, then its value after spaces or a dash (``panel_room --
#: Skebru Building``, ``ENROLMENT_GOAL 2,380 participants``): a report's line, a dump's column.
#: The value opens as data does (a capital, a digit, a quote, a path, a currency, or a word
#: with a digit or separator in it) and runs a few words (``_spaced_field``): a sentence
#: whose subject is a name (*lars_path called with ...*, *MAX_ENTRIES is 3.*) sets nothing.
_SPACED_FIELD = re.compile(
    r"^(?P<key>[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)(?:\s+[-–—]{1,2}\s+|\s+)"
    r"(?P<value>(?:[A-Z0-9\"'/~$£€@]|[a-z]+(?:\d|[._/@:-](?=\S)))\S*(?: \S+){0,5})$"
)
#: What ends a value written inside prose: a closing code span or quote, a sentence's stop.
_PROSE_TAIL = re.compile(r"[`'\"]?[.,;:!?]*$")
#: Reference shapes that name code or files, not values: never a value that can be replaced.
_NOT_VALUES = frozenset({"code", "file"})
_STOP = _words(
    "a an the this that these those my our your their its his her some any every each one "
    "all also and or but so then just very really new old current"
)
_PRONOUNS = _words(
    "it this that there which what who he she they we i you them us here these those"
)
#: Labels that say what kind of statement follows, not what it is about.
_GENERIC_LABELS = _words(
    "note notes rule rules warning important correction update decision info error fatal "
    "todo fixme tip hint reminder also ps nb summary result output thought answer reason "
    "because example usage agreed decided done fyi context background status plan fix "
    "confirmed found heads btw psa change changes actually forget ignore nvm timeline recap tldr "
    "noted ok okay sure thanks understood"
)
#: Pronouns a speaker's label holds (*Maren just pinged me:*, *he told us:*).
_SPEAKER_WORDS = _PRONOUNS | _words("me him her my our your")
#: Names of a record's generic fields (``name``, ``value``, ``note``): no setting's key.
_RECORD_FIELDS = _GENERIC_SUBJECTS | _GENERIC_LABELS
#: A chat line's speaker: an emphasised name (``*mateo*``, ``**ops**``), a name after a clock
#: (``[21:55] Kenji Ndiaye``), a handle before one (``felix 10:29``); a quote mark before it.
_SPEAKER = re.compile(
    r"^\s*(?:>\s*)?(?:\*{1,2}@?[\w.\-]{1,30}\*{1,2}(?:\s+\d{1,2}:\d{2})?"
    r"|\[\d{1,2}:\d{2}(?::\d{2})?\]\s*@?[A-Za-z][\w.\-]*(?: [A-Z][\w.\-]*)?"
    r"|@?[a-z][\w.\-]{1,30}\s+\d{1,2}:\d{2})\s*:\s+"
)
#: Where a subject's clause ends (its qualifiers, ``for the auth service``, stay in the key).
_PREPOSITION = re.compile(
    r"\s+(?:that|which|who|when|where|if|because|so|and|or|but)\b.*$", re.IGNORECASE
)
#: Small words left out of keys and topics.
_FUNCTION_WORDS = _words(
    "for of in on at to with from by under over about as into onto via per than then"
)

#: Words that make a value a sentence's: small words, and verbs a sentence states with.
_SENTENCE_WORDS = (
    _STOP | _FUNCTION_WORDS | _words("is are was were be been has have had must should will can")
)
#: Words that make a subject a clause, not the name of a thing.
_NOT_A_NAME = _words(
    "not do does don't doesn't will would can could should must to be been have has had "
    "need needs if when"
)
_DIGITS = re.compile(r"\d+")
_WAS = re.compile(r"\s*\(was ([^()\n]*)\)\s*$")


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact: ``text`` as shown, ``key`` (what it is about, or ``None``), where it came from
    (``source``, and ``origin``: ``user``, ``assistant``, ``tool: bash `cmd```), its ``kind``
    and ``weight``, ``order`` (larger is newer) and the value it replaced."""

    text: str
    key: str | None
    source: Source
    kind: FactKind
    weight: float
    order: int
    was: str | None = None
    message: int = -1  # index in the summarized messages (-1: carried or later)
    values: tuple[str, ...] = ()
    listed: bool = True  # False: below the threshold or the cap, kept only to replace by key
    topic: frozenset[str] = frozenset()  # what it is about (with the sentence before it)
    origin: str = ""
    names: frozenset[str] = frozenset()  # the things it and the line before it name (anchors)

    def render(self) -> str:
        """The fact as a summary line: who said it (``head``: ``[user]``, ``[assistant]``,
        ``[tool: bash `cmd`]``) and what (``body``)."""
        head = self.head()
        return f"{head} {self.body()}" if head else self.body()

    def head(self) -> str:
        """Who said it: ``[user]``, ``[assistant]``, ``[tool: bash `cmd`]`` (empty for a fact
        carried without attribution). Facts in a row with one head are listed under it once
        (``extractive``), and ``parse_facts`` reads such a group back."""
        if self.source in ("user", "assistant", "tool"):
            return f"[{self.origin or self.source}]"
        return ""

    def body(self) -> str:
        """``text`` and, when it replaced a value, ``(was old)``. What a tool printed that reads
        as an instruction or a decision is quoted as printed, never stated as one."""
        text = self.text
        if self.source == "tool" and (is_rule(text) or _SPEAKS_FOR_OTHERS.search(text)):
            text = f'printed: "{text}"'
        return f"{text} (was {self.was})" if self.was else text


#: Tool output that speaks for the user or the system, or forges a summary heading: quoted as
#: printed too, so a summary never states a file's "the user wants ..." as the user's wish
#: (found by an independent attack: a tool's report of the user's wishes was stated unquoted).
_SPEAKS_FOR_OTHERS = re.compile(
    r"\b(?:the\s+)?user(?:'s|s)?\b|\bsystem\s*:|\binstructions?\b|(?:^|\s)#{1,6}\s",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Ledger:
    """The current facts, best first; the user messages a later user message replaced; the
    values that are no longer current (other sections leave them out)."""

    facts: tuple[Fact, ...]
    superseded_users: frozenset[int] = frozenset()
    replaced_values: frozenset[str] = frozenset()
    #: The user's own facts, best first, not listed (the summary quotes the user's words): the
    #: ones a clipped user entry no longer shows are listed after all (``extractive``).
    user_facts: tuple[Fact, ...] = ()

    def lines(self) -> list[str]:
        """The facts as summary lines, oldest first (a reader follows the story)."""
        return [f.render() for f in sorted(self.facts, key=lambda f: f.order)]


# -- scoring --------------------------------------------------------------------------------------


def _is_code(line: str) -> bool:
    # A log line's time stamp (``2026-01-21T09:45:07Z``) is no ``file:12:`` prefix.
    line = _STAMP.sub("", line)
    if _CODE.match(line) or _LINE_NUMBER.match(line) or _TRACE.match(line):
        return True
    if _CODE_ASSIGN.match(line) and not is_setting(line):
        return True  # ``path = self.root / name``: an assignment of an expression
    stripped = line.strip()
    if not stripped:
        return True
    if _DATA_ROW.match(stripped):
        return False  # a table's row is data, however many bars and stars it holds
    if stripped.endswith((":", ",", "(", "{", "\\")):
        return True
    # A sentence may hold a bracket or two (``[RIPUTU]``, ``(us-west-2b)``); code is dense.
    limit = 0.12 if _is_prose(stripped) and _sentence_like(stripped) else 0.06
    # A list's bullet and a lone ``*`` (a cron field, a wildcard) are no code's symbols:
    # otherwise whether a bullet is code would hang on its length.
    body = _LONE_STAR.sub("", _BULLET.sub("", stripped, count=1))
    return len(_SYMBOLS.findall(body)) / len(stripped) > limit


_BULLET = re.compile(r"^[-*•]\s+")
#: A Markdown table's row of two or more cells, one of them words (not a ``|---|`` rule).
_DATA_ROW = re.compile(r"^\|(?=[^|\n]*[A-Za-z])[^|\n]+(?:\|[^|\n]+)+\|$")
_LONE_STAR = re.compile(r"(?<!\S)\*(?!\S)")


def _sentence_like(line: str, *, lenient: bool = False) -> bool:
    """Whether ``line`` reads as a whole statement: it opens like one (or, ``lenient``, for
    what people type: it is a long one) and does not stop mid-clause."""
    first = line.lstrip("-*>#• \t")[:1]
    opens = first.isupper() or first.isdigit() or first in "\"'`@/["
    if lenient and not opens:
        opens = len(line.split()) >= 8
    return opens and not line.rstrip().endswith((",", ";", " a", " the", " of", " to", " and"))


def _is_prose(text: str) -> bool:
    words = _WORD.findall(text)
    if len(words) < 4:
        return False
    letters = sum(len(w) for w in words)
    return letters / max(1, len(text.strip())) >= 0.45


def _speaks(label: str) -> bool:
    """Whether a label speaks (*Maren just pinged me:*, *I'm going by the signed PDF:*,
    *Looping you in:*): it says who told, not what about."""
    return any(w.lower().split("'")[0] in _SPEAKER_WORDS for w in label.split())


def _states_itself(rest: str) -> bool:
    """Whether ``rest`` (what follows a label) is a sentence of its own: it opens with a capital,
    runs five words or more, and says what is what (a copula, a change, a modal verb)."""
    words = rest.split()
    if len(words) < 5 or not rest[:1].isupper():
        return False
    return bool(_COPULA.search(rest) or _CHANGE.search(rest) or _STATES.search(rest))


#: What may stand before a sentence's subject: a comma, a label's colon, *that*.
_SUBJECT_OPENS = re.compile(r",|:\s|\bthat\s")
#: Words by which a sentence says what is what (besides ``_COPULA`` and ``_CHANGE``).
_STATES = re.compile(r"\b(?:must|should|shall|needs?|never|always|only|prefer|get|gets|are|is)\b")


@functools.lru_cache(maxsize=16_384)  # the verbatim tail is read again at every compaction
def key_of(text: str) -> str | None:
    """What a fact is about, when its shape says: the left side of ``key = value`` or
    ``key: value``, the subject of ``the key is value`` or ``the key changed``; ``None``
    otherwise. Lower case, without articles; a generic label (*Note:*, *Correction:*) is skipped.

    >>> key_of("The release branch for this fix is release/2026-q4."), key_of("TIMEOUT=30")
    ('release branch fix', 'timeout')
    """
    # Who said a chat line (``> *mateo*:``, ``[21:55] Kenji Ndiaye:``) is not what it is about.
    line = _SPEAKER.sub("", text.strip(), count=1)
    pair = structured(line)
    if pair is not None and pair[0].lower() not in _GENERIC_LABELS:
        said = line[: max(0, line.find(pair[0]))] + pair[0]  # (who reads it out, if anyone)
        if not (_speaks(said) or _states_itself(pair[1])):
            return _normal(pair[0]) or None
    line = _DISCOURSE.sub("", _LINE_MARK.sub("", line, count=1))
    # Labels that say what kind of statement follows (*NOTE: Heads up:*) are read past.
    while (label := _LABEL.match(line)) is not None:
        name = _normal(label.group(1))
        first = label.group(1).split()[0].lower()
        # (a label that speaks, *Maren just pinged me:*, says who told, not what about; a
        # label before a sentence of its own, *Image note: The boards are assembled by X.*,
        # says where the statement was found: the sentence names its own subject)
        if (
            name
            and first not in _GENERIC_LABELS
            and len(name.split()) <= 3
            and not _speaks(label.group(1))
            and not _states_itself(line[label.end() :])
        ):
            return name
        line = line[label.end() :]
    embedded = _EMBEDDED_ASSIGN.search(line)
    if (
        embedded is not None
        and embedded.group(1).lower() not in _GENERIC_LABELS
        # (a word in capitals someone reads a value off, *I'm going by the PDF: X*, is no
        # setting's name; ``RETRY_MAX`` is, whoever says it)
        and not (embedded.group(1).isalpha() and _speaks(line[: embedded.end(1)]))
    ):
        return _normal(embedded.group(1))
    for pattern in (_CHANGE, _COPULA, _MAPS_TO):
        m2 = pattern.search(line)
        if m2 is None:
            continue
        subject = line[: m2.start()]
        # (what a label, a comma or *that* sets before it says who or where, not what)
        subject = _SUBJECT_OPENS.split(subject)[-1]
        if pattern is _COPULA and value_kind(subject.strip()) == "person":
            # *Ann Lee is the release manager*: the person is the value, the role the key
            role = _role_after(line[m2.end() :])
            if role is not None:
                return role
        subject = _PREPOSITION.sub("", subject)
        name = _normal(subject)
        words = name.split()
        clause = any(w in _NOT_A_NAME for w in words)
        generic = len(words) == 1 and words[0] in _GENERIC_SUBJECTS
        # (a subject without a letter, gdb's ``$1 =``, names nothing)
        named = any(c.isalpha() for c in name)
        short = bool(words) and len(words) <= 5 and words[0] not in _PRONOUNS
        if short and named and not clause and not generic:
            return name
    return None


#: A role said after a copula: a short noun phrase up to the clause's end (*the release
#: manager*; *company manager; contracts go through them*).
_ROLE = re.compile(r"^\s*(the |our |their )?([a-z][a-z' -]{2,40}?)\s*(?:[.;,:(]|$)")
#: The last word of a role said without an article: one who does something (*company manager*,
#: *production electrician*, *fight director*), not how one is (*busy today*).
_ROLE_NOUN = re.compile(
    r"(?:er|or|ist|ian|ant|ent|ee|man|woman|person|chair|head|lead|owner|contact)\Z"
)


def _role_after(predicate: str) -> str | None:
    """The role ``predicate`` names, as a key (``release manager``): a noun phrase of one to
    four words after *the*, *our* or *their* (a role one person holds; *a senior engineer* is
    one of many), or of two to four without, ending as a role does (``_ROLE_NOUN``: not *busy
    today*); none a pronoun or a word a clause opens with."""
    found = _ROLE.match(predicate)
    if found is None:
        return None
    words = found.group(2).split()
    bare = found.group(1) is None
    if bare and not _ROLE_NOUN.search(words[-1] if words else ""):
        return None
    if not (2 if bare else 1) <= len(words) <= 4 or any(
        w in _PRONOUNS or w in _NOT_A_NAME or w in _STOP or w in _TOPIC_STOP for w in words
    ):
        return None
    return _normal(found.group(2)) or None


_ASKED = re.compile(
    r"^\s*(?:>\s*)*(?:(?:what|which|who)(?:'s| is| are)?\s+)?(?:the\s+)?"
    r"([A-Za-z][\w./\-]*(?:\s+[A-Za-z][\w./\-]*){0,3}?)(?:\s+(?:now|then|again))?\s*\?\s*$",
    re.IGNORECASE,
)


#: A name typed at a REPL's prompt (``In [5]: settings.frozen_module``, ``>>> conf.host``),
#: and the prompt of the value it shows (``Out[5]:``).
_REPL_IN = re.compile(r"^\s*(?:In \[\d+\]:|>>>)\s*([A-Za-z_][\w.]{0,60})\s*$")
_REPL_OUT = re.compile(r"^\s*Out\[\d+\]:\s*")


def asked_key(question: str) -> str | None:
    """What a short question asks for (``> The coverage floor?`` -> ``coverage floor``), the
    key of the value that answers it; ``None`` for anything but a question of a few words.

    >>> asked_key("> what's the catalog-api prod version now?"), asked_key("why?")
    ('catalog-api prod version', None)
    """
    shown = _REPL_IN.match(question)
    if shown is not None:  # a REPL shows the value of the name typed before it
        return _normal(shown.group(1)) or None
    m = _ASKED.match(question)
    if m is None:
        return None
    name = _normal(m.group(1))
    words = name.split()
    if not words or (len(words) < 2 and "-" not in name and "_" not in name):
        return None  # one plain word (*why?*, *really?*) asks for no value
    if any(w in _NOT_A_NAME or w in _PRONOUNS for w in words):
        return None
    return name


def _normal(text: str) -> str:
    text = _CAMEL_HUMP.sub("_", text)  # ``cutoverDay`` is ``cutover_day``
    text = _POSSESSIVE.sub("", text)  # *resolver's port* is the resolver port
    words = [
        w
        for w in re.findall(r"[A-Za-z0-9_.\-/]+", text.lower())
        if w not in _STOP and w not in _FUNCTION_WORDS
    ]
    words = [w.strip(".-/") for w in words if w.strip(".-/")]
    # Discourse words that open a clause name nothing (*fyi*, *actually*, *heads up*).
    while len(words) > 1 and (words[0] in _GENERIC_LABELS or words[0] in _KEY_FILLER):
        words = words[1:]
    if words and words[0] in _PRONOUNS:
        return ""
    return " ".join(words[:5])


_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z][a-z])")
_POSSESSIVE = re.compile(r"(?<=\w)'s\b")
#: ``subject -> value``: what the left side of an arrow names.
_MAPS_TO = re.compile(r"\s(?:->|[" + _ARROWS + r"]|=>|=)\s")


@dataclass(frozen=True, slots=True)
class _Candidate:
    text: str
    kind: FactKind
    signals: dict[str, float]
    values: tuple[str, ...]


def _statement(line: str, source: Source) -> bool:
    """Whether ``line`` can state a fact at all: not code, not a tool's own chatter (listings,
    installers, test-runner headers), not a question, not narration of what the agent is about
    to do. A gate, not a weight: what passes is ranked by the signals alone."""
    if len(line) < 6 or line.endswith("?"):
        return False
    if _NAME_COMMENT.match(line) or _REPL_IN.match(line):
        # a title alone (``# billing-api``) names what follows, it states nothing; so does a
        # name typed at a REPL's prompt (the line after shows its value)
        return False
    if len(_WORD_CHARS.findall(line)) < 0.5 * len(line):
        return False  # mostly punctuation: a progress bar, a rule, a drawing
    if source == "tool" and (_NOISE.search(line) or (_is_code(line) and not is_setting(line))):
        return False
    if source == "tool" and _listed_file(line):
        return False
    # (A comment is no code: it states a fact when it holds something exact, see ``_weigh``.)
    # Narration (let me, now I will, ...) is the agent's work in progress, unless it decides.
    # (What people type opens with a discourse word, *ok so the port is ...*: read past it.)
    body = _DISCOURSE.sub("", line)
    return not _NARRATION.match(body) or (is_rule(line) and bool(_DECISION.search(line)))


_FILE_ENTRY = re.compile(r"^[\w./-]*[\w-]\.[a-z]{1,5}\d?$")


def _listed_file(line: str) -> bool:
    """Whether ``line`` is one file name alone (``_compiler.c``, ``src/a.py``): an entry of a
    listing (``ls``, ``find``, ``git ls-files``), which says only that the file exists; a
    host alone (``db-2.eu.internal``) is no file.

    >>> _listed_file("setup_package.py"), _listed_file("db-2.eu.internal"), _listed_file("a b.py")
    (True, False, False)
    """
    if not _FILE_ENTRY.match(line):
        return False
    return not any(kind in ("host", "url", "email") for _v, kind in reference_kinds(line))


#: Discourse words that open a typed line and say nothing (*ok so*, *fyi*, *heads up,*).
_DISCOURSE = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|so|well|fyi|btw|heads up|also|hey|right|alright)\b[,:]?\s*)+(?=\S)",
    re.IGNORECASE,
)


def _kind(line: str, source: Source, modal: float) -> FactKind:
    if source == "tool" and _ERROR_LINE.search(line):
        return "error"
    if _DECISION.search(line):
        return "decision"
    if modal >= 1.0:
        return "rule"
    return "finding" if modal > 0 else "value"


def _weigh(
    text: str,
    source: Source,
    seen_in: int = 1,
    *,
    names: Mapping[str, int] | None = None,
) -> _Candidate | None:
    """The fact ``text`` states from ``source``: its kind, its content signals (``specificity``
    and ``modality``; ``reuse``, ``recency`` and ``source`` are added by the caller, who knows
    the conversation; ``seen_in``: how many messages hold the same line) and its values;
    ``None`` when it is no statement (``_statement``) or states nothing exact or binding
    (content below ``MIN_CONTENT``). ``names``: how many messages
    name each code name (``_name_counts``); one named in a single message is rare
    (``signals.specificity``); ``None``: every code name counts as rare."""
    # Secrets never become facts, values or "(was ...)" notes; a huge line is read in part.
    line = redact(text[:MAX_UNIT_CHARS]).strip()
    if not _statement(line, source):
        return None
    refs = reference_kinds(line)
    if source != "tool" and not _is_prose(line) and not refs and not _KEYED_LINE.match(line):
        return None  # a fragment of prose without anything exact
    # A code span counts only when it is a name the conversation holds nowhere else (a
    # branch, an error constant, a flag said once), and the only one of its line: the code
    # the agent works on shows up again in its reads, edits and commands, and a line relating
    # two spans (*`Sum` returns `Coalesce`*) is reasoning about code; both stay worth nothing.
    spans = [v for v, k in refs if k == "code"]
    spans = spans if len(spans) == 1 and _span_name(spans[0]) else []
    rare = frozenset(
        v
        for v in [v for v, k in refs if k == "identifier"]
        + _OTHER_CODE_NAME.findall(CODE_SPAN.sub(" ", line))
        + kebab_names(CODE_SPAN.sub(" ", line))
        if names is None or names.get(v, 0) <= 1
    ) | frozenset(v for v in spans if names is None or _rare_span(v, names))
    rare |= _rare_proper_value(line, names)
    listed = {v for v, _k in refs}
    named = [
        *((v, "identifier" if k == "code" and v in rare else k) for v, k in refs),
        *((v, "identifier") for v in sorted(rare) if v not in listed),
    ]
    spec = specificity(named, line, rare=rare)
    # (A long statement typed in lower case, as people chat, is no fragment.)
    fragment = _COMMENT.match(line) or not _sentence_like(line, lenient=True)
    if source == "tool" and spec < STRONG and fragment and not is_setting(line):
        # A comment or a fragment of prose in output (a source file's, a wrapped docstring's)
        # states a fact only when it holds something exact.
        return None
    modal = modality(line, source) if _is_prose(line) or source != "tool" else 0.0
    if source != "user" and spec == 0:
        # Binding words from the agent or a tool about nothing exact are mostly its own plan
        # or what code does (*run the script to update the FAQ*, *use it if it is set*).
        modal /= 2
    if spec + modal < MIN_CONTENT:
        return None
    spec /= max(1, seen_in)
    values = _values(line, refs)
    return _Candidate(
        line, _kind(line, source, modal), {"specificity": spec, "modality": modal}, values
    )


#: A value that is a proper name: a capitalised word or two (``Thigin``, ``Bleida Hall``).
_PROPER_VALUE = re.compile(r"[A-Z][a-z]{2,}(?:[ -][A-Z][a-z]{2,})?")


def _rare_proper_value(line: str, names: Mapping[str, int] | None) -> frozenset[str]:
    """The value of a setting line (``structured``) when it is a proper name no other message
    holds (``Channel plan: Thigin``): a name the conversation does not rebuild, as rare a
    value as a code name said once. A name the session keeps using is its subject matter."""
    pair = structured(line)
    # (code's ``name="Foo"`` and ``check=True`` name no setting; a table's row of capitalised
    # words is as often its header, ``| Item | Detail |``, as data)
    code = _is_code(line) and _PAIR_TUPLE.match(line.strip()) is None
    if pair is None or code or "|" in line:
        return frozenset()
    value = pair[1].strip().strip("\"'").rstrip(".")
    if _PROPER_VALUE.fullmatch(value) is None or value.lower() in _LITERALS:
        return frozenset()
    if names is not None and any(names.get(w, 0) > 1 for w in re.split(r"[ -]", value)):
        return frozenset()
    return frozenset({value})


_WORD_CHARS = re.compile(r"[\w\s]")
#: The specificity of one strong reference (``signals.specificity``).
STRONG = 0.6
_COMMENT = re.compile(r"^\s*(?:#|//|/\*|\*|--|;)")
_KEYED_LINE = re.compile(r"^\s*[-+*>#|•\s]*\"?[A-Za-z_][\w .\-]{0,40}\"?\s*(?:=|:)\s*\S")


def _values(line: str, refs: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """What can be replaced in ``line``: its exact references that are values (not code or
    file names), a person's name, and the value of a ``structured`` line when no reference
    covers it (``owner: Ann Lee``, ``| helper | _role_x |``)."""
    line = _WAS_ANYWHERE.sub(" ", line)  # a value already marked replaced is no value
    line = _STAMP.sub("", line)  # a log line's time is when it was said, not what it says
    pair = structured(line)
    # A line that corrects names files as values too (*swap 0042_a.py for 0043_b.py*).
    correcting = _corrects(line)
    found: list[str] = []
    for v, k in refs:
        if (
            (k not in _NOT_VALUES or setting_file(v, k) or (k == "file" and correcting))
            and (k in STRONG_KINDS or k in ("path", "file") or any(c in "0123456789_" for c in v))
            and v in line
            and (pair is None or v not in pair[0].split())
        ):
            named = v
            if k == "version" and " " in v and _CORRECTION.fullmatch(v.split()[0]):
                named = v.split(" ", 1)[1]  # *Forget 6.13.845*: a word, then the version
            for whole in _whole_tokens(line, named):
                if whole not in found:
                    found.append(whole)
    for m in _CAMEL.finditer(line):  # a class or type name (``TestUploadRetry``)
        if m.group() not in found and (pair is None or m.group() not in pair[0].split()):
            found.append(m.group())
    for m in _FLAG.finditer(line):
        if m.group() not in found and (pair is None or m.group() not in pair[0].split()):
            found.append(m.group())
    for name in persons(line):
        if name not in found:
            found.append(name)
    if pair is not None:
        right = pair[1].strip().strip("\"',").strip()
        if right and len(right.split()) <= 4 and not any(v in right for v in found):
            found.append(right)
    for m in _STATED_NUMBER.finditer(line):
        if not any(m.group(1) in v for v in found):
            found.append(m.group(1))
    return tuple(found)


#: A bare number a statement gives its subject (*the value of X is 4362*, *X -> 6668*, *X at
#: 9234*): the value of the statement, as the right side of ``X = 4362`` is.
_STATED_NUMBER = re.compile(
    r"(?:\b(?:is|are|was|now|becomes|equals|to|at)|->|["
    + _ARROWS
    + r"]|=>)\s+(\d[\d_,]*(?:\.\d+)?)(?![\w/:@%-]|\.\w)",  # (a full stop may end it)
    re.IGNORECASE,
)


#: A name in CamelCase of two humps or more (``TestUploadRetry``): a value a setting may hold.
_CAMEL = re.compile(r"(?<![\w.])[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b(?!\(|\.\w)")
#: A command-line flag (``--dry-run``): a value a setting may hold.
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*\b")
_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.+/@#")


def _whole_tokens(line: str, value: str) -> list[str]:
    """Each whole token ``value`` is part of in ``line`` (``_whole_token``), in order: a
    reference names a shared prefix once (``quorin-4`` of ``quorin-4.12.207 quorin-4.19.002``),
    and each token it starts is a value."""
    if " " in value:
        return [value]
    out: list[str] = []
    at = line.find(value)
    while at != -1:
        whole = _whole_token(line, value, at)
        if whole not in out:
            out.append(whole)
        at = line.find(value, at + len(value))
    return out or [value]


def _whole_token(line: str, value: str, at: int | None = None) -> str:
    """``value`` grown to the whole token it is part of in ``line`` (``17.55.441-rc3-rukix``
    for the version ``17.55.441-rc3``), at its first occurrence or at ``at``: a value is
    replaced, and marked, whole. A value with a space (``30 seconds``) is kept as it is."""
    at = line.find(value) if at is None else at
    if at < 0 or " " in value:
        return value
    start, end = at, at + len(value)
    while start > 0 and line[start - 1] in _TOKEN_CHARS and line[start - 1] not in "./":
        start -= 1
    while end < len(line) and line[end] in _TOKEN_CHARS:
        end += 1
    return line[start:end].rstrip(".-+/") or value


_WAS_ANYWHERE = re.compile(r"\(was [^()\n]*\)")
_WAS_INLINE = re.compile(r"\(was ([^()\n]*)\)")
_STAMP = re.compile(
    r"^\s*\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\]?"
    # or a clock alone, as dbt, make and many tools stamp their lines (``10:33:46  Done.``)
    r"|^\s*\[?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]?(?=\s)"
)


# -- candidates -----------------------------------------------------------------------------------


#: A YAML section's header alone on its line (``resolver:``), and a ``key: value`` line.
_SECTION = re.compile(r"^(\s*)(/?[A-Za-z_][\w./\-]{0,60}):\s*$")
_NESTED_PAIR = re.compile(r"^(\s+)(?:-\s+)?([A-Za-z_][\w.\-]{0,60}):\s+\S")
#: Headers of code blocks, never sections of data.
_BLOCK_WORDS = _words("try else finally except do default case then begin")
#: A comment that is one name alone (``# billing-api``): the title of the lines under it.
_NAME_COMMENT = re.compile(r"^\s*(?:#|//|;)\s*([A-Za-z][\w]*(?:[-.][\w]+)+)\s*$")
#: An INI or TOML table header (``[billing-api]``, ``[services.mailer]``, ``[[package]]``),
#: a git config's section with its subsection (``[branch "release/7.2"]``).
_TABLE_HEADER = re.compile(
    r"^\s*\[{1,2}\s*([A-Za-z_\"][\w.\-\" ]{0,60}?(?:\s+\"[^\"\n]{1,80}\")?)\s*\]{1,2}\s*$"
)
_SUBSECTION = re.compile(r"^([\w.\-]+)\s+\"([^\"]+)\"$")


def _table_name(header: str) -> str:
    """The name a table header gives the keys under it: git's ``section.subsection`` for a
    quoted subsection (what ``git config branch.release/7.2.protected`` calls it).

    >>> _table_name('branch "release/7.2"'), _table_name('"services.mailer"')
    ('branch.release/7.2', 'services.mailer')
    """
    sub = _SUBSECTION.match(header.strip())
    return f"{sub.group(1)}.{sub.group(2)}" if sub else header.strip('" ')


#: A record's own name (``Name:  billing-api``, ``"name": "billing-api",``, ``name =
#: "vetchkit"``, ``name | billing-api``): the thing the keys beside it are of.
_RECORD_NAME = re.compile(
    r"^(\s*(?:-\s+)?)[\"']?(?:name|Name|NAME)[\"']?\s*(?::|=|\|)\s*[\"']?"
    r"([A-Za-z/][\w./\-]{0,60}?\w)[\"']?\s*,?\s*$"
)
#: ``key: value``, ``key = value``, ``"key": value`` or ``key | value`` (a key of a record).
_RECORD_PAIR = re.compile(r"^(\s*(?:-\s+)?)([\"']?)([A-Za-z_][\w.\-/]{0,60})\2\s*(?::|=|\|)\s*\S")


def with_sections(text: str) -> str:
    """``text`` with each key of a block named by what the block is of, so that a line read
    alone still says whose setting it is and two services' settings of one name stay two
    facts: an indented ``key: value`` line under a YAML section header gets the header's
    path (``resolver:`` / ``  cutover: 2027-09-08`` -> ``  resolver.cutover: ...``), a key
    under an INI or TOML table header the table's name, a key beside a record's own name
    (``Name:``, a JSON ``"name"``, a ``name =`` line, a ``name |`` row) that name.

    >>> with_sections("resolver:\\n  port: 80\\nmailer:\\n  port: 81")
    'resolver:\\n  resolver.port: 80\\nmailer:\\n  mailer.port: 81'
    >>> with_sections('[mailer]\\nport = 81')
    '[mailer]\\nmailer.port = 81'
    >>> with_sections('{\\n  "name": "fennel-api",\\n  "style": "no ORM"\\n}')
    '{\\n  "name": "fennel-api",\\n  "fennel-api.style": "no ORM"\\n}'
    """
    if not _MAY_HAVE_BLOCKS.search(text):
        return text
    out: list[str] = []
    stack: list[tuple[int, str]] = []
    table: str | None = None
    titled_table = False  # the table's name came from a comment title (it ends at a blank line)
    record: tuple[int, str] | None = None  # (its indentation, its name)
    for line in text.split("\n"):
        if not line.strip():
            record = None  # a blank line ends a record (``poetry.lock``, ``kubectl describe``)
            table = None if titled_table else table
            out.append(line)
            continue
        indent = len(line) - len(line.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        body = len(line) - len(line.lstrip(" \t-"))
        if record is not None and body < record[0]:
            record = None
        if (found := _TABLE_HEADER.match(line)) is not None:
            table, record, stack = _table_name(found.group(1)), None, []
            titled_table = False
            out.append(line)
            continue
        if (titled := _NAME_COMMENT.match(line)) is not None and not stack:
            # ``# billing-api`` over an env file's block: the name of the keys under it
            table, record, titled_table = titled.group(1), None, True
            out.append(line)
            continue
        if (named := _RECORD_NAME.match(line)) is not None:
            record = (body, named.group(2))
            out.append(line)
            continue
        header = _SECTION.match(line)
        if header is not None and header.group(2).lower() not in _BLOCK_WORDS:
            stack.append((indent, header.group(2)))
            out.append(line)
            continue
        owners = [
            *([table] if table and not stack else []),
            *(name for _i, name in stack),
            *([record[1]] if record is not None else []),
        ]
        pair = _RECORD_PAIR.match(line) if owners else None
        if pair is not None and (stack or record is not None or "=" in line[pair.end(3) :][:3]):
            at = pair.start(3)
            prefix = ".".join(owners)
            if not pair.group(3).startswith(f"{prefix}."):
                out.append(f"{line[:at]}{prefix}.{line[at:]}")
                continue
        out.append(line)
    return "\n".join(out)


_MAY_HAVE_BLOCKS = re.compile(
    r":\s*$|^\s*\[|(?:name|Name|NAME)[\"']?\s*(?::|=|\|)|^\s*(?:#|//|;)\s*[A-Za-z]\w*(?:[-.]\w+)+\s*$",
    re.MULTILINE,
)


#: A JSON member (``"region": "eu-1",``) or a call's keyword argument written one per line
#: (``region="eu-1",``): the comma only separates it from the next, and without it the line
#: states what it holds (and no code ends so).
_SEPARATING_COMMA = re.compile(
    r'^(\s*(?:"[^"\n]{1,80}"\s*:\s*(?:"[^"\n]*"|[\w.+-]+)'
    r"""|[A-Za-z_]\w*\s*=\s*(?:"[^"\n]*"|'[^'\n]*'|-?\d[\w.]*))),[ \t]*$""",
    re.MULTILINE,
)


def _units(text: str, source: Source, command: str | None = None) -> Iterable[str]:
    """The lines (tool output) or sentences (prose) of ``text`` that may each be one fact;
    ``command``: the shell command whose output ``text`` is (a value it read alone is named by
    what it read, ``lookups``; a terminal pasted into a message is read so too)."""
    text = with_sections(rewrite_records(rewrite_lookups(text, command=command)))
    if source == "tool":
        # (a member's or a keyword argument's comma only separates it from the next)
        for line in _SEPARATING_COMMA.sub(r"\1", text).split("\n"):
            if len(line) > 600:
                yield from (s for s in split_statements(_SENTENCE_END, line) if s)
            elif line.strip() and not line.lstrip().startswith("<"):
                yield line
            elif line.strip().startswith("<") and ">" in line and not line.strip().endswith(">"):
                # an output tag glued to the first line (``<output>text``)
                yield line[line.index(">") + 1 :]
        return
    for piece in split_statements(_SENTENCE_END, text):
        if piece and piece.strip():
            yield piece


#: A command shown in a tool fact's attribution is clipped to this many characters.
ORIGIN_CHARS = 32


def _tool_origin(call: ToolCall | None) -> str:
    """``tool: name `command``` for a fact a tool printed: which tool, and the command it ran
    (first line, clipped), so a reader can tell it from what the user asked."""
    if call is None:
        return "tool"
    command = shell_command(call)
    if command is None:
        return f"tool: {call.name}"[: ORIGIN_CHARS + 8]
    first = " ".join(command.strip().split("\n")[0].split())
    first = first.replace("`", "'").replace("[", "(").replace("]", ")")
    if len(first) > ORIGIN_CHARS:
        first = first[: ORIGIN_CHARS - 1] + "…"
    return f"tool: {call.name} `{first}`"


def _message_units(
    message: Message,
    calls: Mapping[str, ToolCall],
    last_call: ToolCall | None,
    previous: Message | None = None,
) -> list[tuple[Source, str, str, str | None]]:
    """Each text of ``message`` that may hold facts: its source, the text, its origin
    (``user``, ``assistant``, ``tool: bash `cmd```) and the shell command that printed it.
    ``previous`` (the message before) tells more text-protocol observations from user
    requests (``user_request_text``)."""
    request = user_request_text(message, previous)
    if request is not None:
        return [("user", request, "user", None)]
    if message.role == "assistant" and message.text.strip():
        return [("assistant", strip_code(message.text, keep_line=holds_literal), "assistant", None)]
    results = [p for p in message.parts if isinstance(p, ToolResult) and p.text]
    if results:
        return [
            ("tool", r.text, _tool_origin(call), shell_command(call) if call else None)
            for r in results
            for call in [calls.get(r.call_id)]
        ]
    return [
        ("tool", text, _tool_origin(last_call), None)
        for text in observation_texts(message, previous)
    ]


def holds_literal(line: str) -> bool:
    """Whether a line of code holds a setting's value: a module constant or an annotated name
    given a literal, an assertion that a name holds one, a returned dict literal, an
    environment variable set at a terminal's prompt. What an assistant's code block holds so
    is kept from it as a fact (``strip_code``); a local variable's value, an expression and
    the rest of the code are not.

    >>> holds_literal('    assert conf.host == "db-2"'), holds_literal("~/app (main) $ export N=4")
    (True, True)
    >>> holds_literal("MAX_ROWS = 40  # per page"), holds_literal("max_rows = 40")
    (True, False)
    >>> holds_literal("RETRIES = compute(cfg)"), holds_literal("for row in rows:")
    (False, False)
    """
    body = _PROMPT.sub("", line, count=1).strip()
    if _CODE_LITERAL.match(body) or _CONSTANT.match(body):
        return True
    if _RETURNED.match(body):
        return structured(body) is not None
    return body != line.strip() and _PROMPT_SETTING.search(body) is not None


#: A terminal's prompt before a command (``$ ``, ``~/src/app (main) $ ``).
_PROMPT = re.compile(r"^\s*(?:[~/\w.@:-]*(?: \([^()\n]{1,40}\))? )?[$%] ")
#: A module constant given a literal (``MAX_ROWS = 40``, ``HOST = "db-2"``), a comment after.
_CONSTANT = re.compile(
    r"^[A-Z][A-Z0-9_]*\s*=\s*(?:\"[^\"\n]{1,120}\"|'[^'\n]{1,120}'|-?\d[\w.]*)\s*(?:#.*)?$"
)
#: An environment variable a command sets (``export REGION=eu-1``, ``make run MODEL='X'``).
_PROMPT_SETTING = re.compile(r"(?<![\w-])[A-Z][A-Z0-9_]*=(?:'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"]+)")


_CODE_NAME = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+\b")
#: Code names ``reference_kinds`` does not list (no digit or underscore inside): a CamelCase
#: name of two words or more (``TestZeroNade``), a private name (``_lubizis_vipo``), a long
#: option (``--govilir-vedus``). Counted only when rare (``_weigh``).
_OTHER_CODE_NAME = re.compile(
    r"(?<![\w-])(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+|_[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*|"
    r"--[a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?![\w-])"
)

#: A name as a code span may hold it, joined by ``_ - . / :`` (``tuomas/retry-budget``,
#: ``jobs.v6``, ``app.cli:main``, ``E_SHARD_BUSY``, ``--fan-out``), not one plain word.
_SPAN_NAME = re.compile(  # (word runs and separator runs alternate: no backtracking blow-up)
    r"(?<![\w./:-])-{0,2}[A-Za-z0-9]+(?:[-_./:]+[A-Za-z0-9]+)+(?![\w-]|[./:]\w)"
)
#: What a code span adds around a name: a call's ``()``, a folder's ``/``, a setting's ``=1``.
_SPAN_DRESS = re.compile(r"(?:\(\)|/|=[^\s=]*)$")


def _span_name(span: str) -> str | None:
    """The name a code span holds (``_SPAN_NAME`` or a CamelCase name), without a call's
    parentheses, a folder's slash or an assigned value; ``None`` for code that is no one name.

    >>> _span_name("flush_leases()"), _span_name("tests/data/"), _span_name("LOG_FRAMES=1")
    ('flush_leases', 'tests/data', 'LOG_FRAMES')
    >>> _span_name("IromusEntryRow"), _span_name("settings"), _span_name("a + b")
    ('IromusEntryRow', None, None)
    """
    name = _SPAN_DRESS.sub("", span)
    if _SPAN_NAME.fullmatch(name) or _OTHER_CODE_NAME.fullmatch(name):
        return name
    return None


def _rare_span(span: str, names: Mapping[str, int]) -> bool:
    """Whether a code span names something the conversation names nowhere else: one of its
    words is in one message only. ``Widget.subwidgets`` is no rare name when the source the
    agent read holds both words; ``hotfix/ledger-rounding`` is, when nothing else says
    *ledger*."""
    name = _span_name(span)
    return name is not None and any(names.get(w, 0) <= 1 for w in _NAME_WORD.findall(name))


#: A word of three characters or more, as ``_name_counts`` counts them for code spans.
_NAME_WORD = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9_]{2,}")


#: A name of lower-case words joined by hyphens (``billing-api``, ``nightly-rollup``): what
#: services, jobs, branches and packages are called.
_KEBAB = re.compile(r"(?<![\w./-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w/-])")
#: Words that make an English compound (``read-only``, ``follow-up``, ``up-to-date``,
#: ``self-hosted``), not a name.
_COMPOUND_PARTS = _words(
    "up to in on off out by of non pre re co self multi well so one two all low high top end "
    "long short half built read real third full open un sub over under per"
)


def kebab_names(line: str) -> list[str]:
    """The hyphenated names in ``line`` that are no English compound.

    >>> kebab_names("the balancer for jute-audit is a read-only one")
    ['jute-audit']
    """
    return [
        name
        for name in _KEBAB.findall(line)
        if not any(part in _COMPOUND_PARTS for part in name.split("-"))
    ]


def _name_counts(messages: Sequence[Message]) -> dict[str, int]:
    """For each code name (``reference_kinds``' identifier shape), how many of ``messages``
    name it: in their text, their tool calls' arguments (a command that uses the name) or
    their tool results, up to ``MAX_SCAN_CHARS`` of each."""
    counts: dict[str, int] = {}
    for message in messages:
        texts = [message.text, *(c.arguments for c in message.tool_calls)]
        texts.extend(r.text for r in message.tool_results)
        found = {
            n
            for text in texts
            for pattern in (_CODE_NAME, _OTHER_CODE_NAME, _NAME_WORD)
            for n in pattern.findall(text[:MAX_SCAN_CHARS])
        }
        for name in found:
            counts[name] = counts.get(name, 0) + 1
    return counts


#: How much of one message is read for its code names.
MAX_SCAN_CHARS = 200_000


def _line_repeats(messages: Sequence[Message]) -> dict[int, int]:
    """For each line of tool output (its hash, numbers aside), how many messages print it, when
    more than one does (a test runner's header, a banner): such a line is no rare fact."""
    counts: dict[int, int] = {}
    for message in messages:
        shapes = {
            hash(_DIGITS.sub("#", line.strip()))
            for text in observation_texts(message)
            for line in text.split("\n")
            if len(line) < 600 and line.strip()
        }
        for shape in shapes:
            counts[shape] = counts.get(shape, 0) + 1
    return {shape: n for shape, n in counts.items() if n > 1}


def extract_facts(
    messages: Sequence[Message],
    *,
    per_message: int = PER_MESSAGE,
    start_order: int = 0,
    weights: Mapping[str, float] = WEIGHTS,
) -> list[Fact]:
    """Candidate facts of ``messages``, oldest first: at most ``per_message`` from each message
    (the heaviest), user messages included (they are needed to key corrections)."""
    return list(
        _iter_facts(messages, per_message=per_message, start_order=start_order, weights=weights)
    )


def _iter_facts(
    messages: Sequence[Message],
    *,
    per_message: int,
    start_order: int,
    weights: Mapping[str, float] = WEIGHTS,
    names: Mapping[str, int] | None = None,
) -> Iterator[Fact]:
    """``extract_facts``, one message at a time: ``build_ledger`` resolves each fact as it
    comes, so the candidates of a long conversation are never all alive at once. ``names``:
    ``_name_counts(messages)``, when the caller has it."""
    repeats = _line_repeats(messages)
    names = _name_counts(messages) if names is None else names
    order = start_order
    calls: dict[str, ToolCall] = {}
    last_call: ToolCall | None = None
    # Every line said so far (hashed): a reply that quotes one (``> the cutover is at 05:50``)
    # says it again as the earlier message's, not as its own.
    said_before: set[int] = set()
    for index, message in enumerate(messages):
        said_now: set[int] = set()
        found: list[Fact] = []
        previous = messages[index - 1] if index > 0 else None
        for source, text, origin, command in _message_units(message, calls, last_call, previous):
            units = list(_units(text, source, command))
            # A line repeated with only its numbers changed is a log's noise, not a fact.
            shapes: dict[str, int] = {}
            for unit in units:
                shape = _DIGITS.sub("#", unit.strip())
                shapes[shape] = shapes.get(shape, 0) + 1
            seen: set[str] = set()
            # A diff's removed lines are no longer current: kept only to replace what they
            # restate, their values not added back shown as replaced.
            removed = removed_lines(units)
            added = "\n".join(u for u in units if u.startswith("+")) if removed else ""
            # What a patch to source code removes is code, not a value that stopped holding.
            of_code = bool(removed) and patches_code(units)
            # The block's own name (``Name: billing-api``): the owner of the keys after it.
            owner: str | None = None
            # The innermost frame of a traceback: where the error after it was raised.
            frame: str | None = None
            for position, unit in enumerate(units):
                named_block = _BLOCK_NAME.match(unit)
                if named_block is not None:
                    owner = named_block.group(1).lower()
                if source == "tool" and (found_frame := _FRAME.match(unit)) is not None:
                    frame = ":".join(found_frame.group(1, 2)) + (
                        f" in {found_frame.group(3)}" if found_frame.group(3) else ""
                    )
                    continue
                if shapes[_DIGITS.sub("#", unit.strip())] >= REPEATED_LINE or unit in seen:
                    continue
                seen.add(unit)
                said_now.add(hash(" ".join(unit.split())))
                quoted = _QUOTE_LINE.match(unit)
                if quoted is not None and hash(" ".join(quoted.group(1).split())) in said_before:
                    continue
                # The sentence before says what a short one is about ("Correction on the
                # staging host: ... Point everything at ip-10-42-9-58.").
                before = units[position - 1] if position and source != "tool" else ""
                # The line before may name what this one's value is of (a command, a heading,
                # a question: ``> the billing-api timeout?`` then ``3750``).
                context = units[position - 1] if position else ""
                seen_in = repeats.get(hash(_DIGITS.sub("#", unit.strip())), 1)
                # An answer to the short question before it is a value of what was asked
                # (``> the default region?`` then ``mx-central-1, checked with Radek``).
                asked = asked_key(context) if context and key_of(unit) is None else None
                said = unit if asked is None else f"{asked}: {_REPL_OUT.sub('', unit).strip()}"
                located = None
                if frame is not None and _ERROR_LINE.match(unit):
                    # ``KeyError: 'x'`` alone does not say where: the frame it ends does (shown
                    # and weighed with it; its values stay the error's own).
                    located, frame = f"{unit.strip()} (at {frame})", None
                candidate = _weigh(
                    located or said, source, seen_in if source == "tool" else 1, names=names
                )
                if candidate is not None and located is not None:
                    own = redact(said[:MAX_UNIT_CHARS]).strip()
                    candidate = replace(candidate, values=_values(own, reference_kinds(own)))
                worth = candidate is not None
                if candidate is None:
                    line = redact(said[:MAX_UNIT_CHARS]).strip()
                    settles = is_setting(line) or (_is_prose(line) and not _is_code(line))
                    # A correction's values take part too (*scratch that: it's x_y*), and
                    # the user's (what they said is marked when a later message replaces it).
                    keyed = key_of(line) is not None or (
                        (source == "user" or _corrects(line))
                        and bool(_values(line, reference_kinds(line)))
                    )
                    # A value said of a named thing may correct what was said of it (*swapped
                    # billing-api on-call with Ann*), however short or unlike prose.
                    named = (
                        not _is_code(line)
                        and bool(anchors(line) or anchors(context))
                        and bool(slots(line))
                    )
                    # Two values of one form in a line may show one replaced in place
                    # (``~~6.89%~~ 4.20%``, ``[-"14 GiB"-]{+"22 GiB"+}``), prose or not.
                    if not ((settles and keyed) or named or _two_of_a_form(line)):
                        continue
                    # Not worth listing, but a later value of its key must still replace an
                    # earlier one (``timeout: 5s`` after ``timeout: 30 seconds``).
                    candidate = _Candidate(line, "value", {}, _values(line, reference_kinds(line)))
                weight = combine(candidate.signals, weights)
                shown = truncate_tokens(" ".join(candidate.text.split()), FACT_TOKENS)
                values = candidate.values
                dropped = declared_old(shown, (*values, *_loose_values(shown, values)))
                if position in removed:
                    if not (of_code or _is_code(unit[1:])):
                        dropped = [*dropped, *(v for v in values if v not in added)]
                    worth = False
                if dropped:
                    # It says itself which value is no longer current: shown so where it stands.
                    shown = mark_values(shown, dropped)
                    values = tuple(v for v in values if v not in dropped)
                order += 1
                found.append(
                    Fact(
                        text=shown,
                        key=_owned_key(key_of(candidate.text), owner),
                        source=source,
                        kind=candidate.kind,
                        weight=weight if worth else -1.0,
                        order=order,
                        message=index,
                        values=values,
                        listed=worth,
                        topic=_topic_words(f"{before} {candidate.text}", candidate.values),
                        origin=origin,
                        names=anchors(candidate.text) | anchors(context),
                    )
                )
        said_before |= said_now
        for call in message.tool_calls:
            calls[call.id] = call
            last_call = call
        found.sort(key=lambda f: (-f.weight, -f.order))
        listed = [f for f in found if f.listed][:per_message]
        # The rest still take part in replacing (by key, or as a corrected value, or by the
        # values they show replaced), unlisted.
        shadows = [
            replace(f, listed=False)
            for f in found
            if f not in listed and (f.key or f.values or f.names or _WAS_INLINE.search(f.text))
        ]
        yield from sorted([*listed, *shadows], key=lambda f: f.order)


#: A line naming the block it opens (``Name:  billing-api``, ``name: gostex``): a
#: ``kubectl describe``, a manifest, a package's metadata.
_BLOCK_NAME = re.compile(r"^\s*(?:name|Name|NAME)\s*[:=]\s*\"?([A-Za-z][\w.-]*\w)\"?\s*$")


def _owned_key(key: str | None, owner: str | None) -> str | None:
    """``key`` qualified by the block it stands in (``billing-api.namespace``): two outputs
    listing the same generic keys (``Name``, ``Namespace``, ``Replicas``) about two things
    are two sets of facts, one output of the same thing again replaces the first.

    >>> _owned_key("namespace", "billing-api"), _owned_key("namespace", None)
    ('billing-api.namespace', 'namespace')
    """
    if key is None or owner is None or key.startswith(f"{owner}."):
        return key
    return f"{owner}.{key}"


_ATTRIBUTION = re.compile(r"^\[(user|assistant|tool)((?::[^\]]*)?)\]\s+")
#: A group's head alone on its line (``[tool: bash `cmd`]``), its facts as bullets below it.
_HEAD_LINE = re.compile(r"^\[(?:user|assistant|tool)(?::[^\]]*)?\]$")
_SUB_BULLET = re.compile(r"^\s*[-*]\s+(.*)$")


def ungrouped_facts(entries: Iterable[str]) -> Iterator[str]:
    """Each entry as one fact line: a group (a head line, then its facts as bullets, as
    ``Fact.head`` groups them) becomes one line per fact, the head before each."""
    for entry in entries:
        head, _, rest = entry.strip().partition("\n")
        if not rest or not _HEAD_LINE.match(head.strip()):
            yield entry
            continue
        for line in rest.split("\n"):
            bullet = _SUB_BULLET.match(line)
            if bullet is not None and bullet.group(1).strip():
                yield f"{head.strip()} {bullet.group(1).strip()}"


_PRINTED = re.compile(r'^printed: "(.*)"$')


def parse_facts(
    lines: Iterable[str],
    *,
    start_order: int = 0,
    weights: Mapping[str, float] = WEIGHTS,
    names: Mapping[str, int] | None = None,
) -> list[Fact]:
    """Facts carried from a previous summary's entries, oldest first: their attribution
    (``[tool: bash `cmd`] printed: "..."``) read back into source and origin, their ``(was
    ...)`` kept; weighed again (``names``: how many entries and messages name each code name,
    ``None``: each is rare), never below ``MIN_CONTENT`` (they were facts once), and
    ``CARRIED_MARGIN`` more when they hold something exact or binding (``_held``): a new fact
    takes such a kept one's place only when it weighs more."""
    out: list[Fact] = []
    order = start_order
    for raw in ungrouped_facts(lines):
        line = truncate_tokens(" ".join(raw.split()), 2 * FACT_TOKENS)
        if not line or line.startswith("(was"):
            continue
        was = None
        m = _WAS.search(line)
        if m:
            was, line = m.group(1), line[: m.start()]
        source: Source = "carried"
        origin = ""
        attribution = _ATTRIBUTION.match(line)
        if attribution is not None:
            source = cast(Source, attribution.group(1))
            origin = f"{source}{attribution.group(2)}"
            line = line[attribution.end() :]
            printed = _PRINTED.match(line)
            if printed is not None:
                line = printed.group(1)
        if not line:
            continue
        candidate = _weigh(line, "assistant" if source == "carried" else source, names=names)
        refs = reference_kinds(line)
        content = dict(candidate.signals) if candidate else {}
        content["specificity"] = max(content.get("specificity", 0.0), MIN_CONTENT)
        order += 1
        out.append(
            Fact(
                text=line,
                key=key_of(line),
                source=source,
                kind=candidate.kind if candidate else "value",
                weight=combine(content, weights) + (CARRIED_MARGIN * _held(refs, content)),
                order=order,
                was=was,
                values=candidate.values if candidate else _values(line, refs),
                origin=origin,
                # What it names still ties a later correction to it (``_anchored_slot``): a
                # carried fact is corrected by name as it was before the compaction.
                names=anchors(line),
            )
        )
    return out


def _held(refs: Sequence[tuple[str, str]], content: Mapping[str, float]) -> bool:
    """Whether a carried fact keeps its place by ``CARRIED_MARGIN``: one holding an exact
    reference of a strong shape (a host, a version, a ticket, a path, ...) or binding words. A
    code name's value (``scratch_counter_7 = 7``) gives way to newer ones of its worth, so
    that a long task's latest state replaces its oldest."""
    if content.get("modality", 0.0) >= 1.0:
        return True
    return any(k in STRONG_KINDS or k == "path" for _v, k in refs)


# -- replacing ------------------------------------------------------------------------------------


_SEPARATORS = "/-_.:"


def _stem(value: str) -> str:
    """What a value is a variant of: the part before its last separator."""
    cut = max(value.rfind(c) for c in _SEPARATORS)
    return value[: cut + 1] if cut > 0 else value


def _prefixes(value: str) -> list[str]:
    """``value`` cut at each of its separators (``release/2026-q4`` -> ``release``,
    ``release/2026``), and whole: what a variant of it may share."""
    return [value[:i] for i, c in enumerate(value) if c in _SEPARATORS and i >= 3] + [value]


def _variants(new: str, old: str) -> bool:
    """Whether ``new`` and ``old`` are variants of one value: one extends the other at a
    separator (``release/x``, ``release/x-hotfix``), or they share a prefix ending at a
    separator that is at least half the shorter one (``2026-04-14``, ``2026-04-28``;
    ``ip-10-42-7-193``, ``ip-10-42-9-58``), of three characters or more.

    >>> _variants("release/2026-q4-hotfix", "release/2026-q4"), _variants("a/b.py", "c/d.py")
    (True, False)
    """
    if new == old:
        return False
    if new.startswith(old) and new[len(old)] in _SEPARATORS:
        return True
    if old.startswith(new) and old[len(new)] in _SEPARATORS:
        return True
    shared = 0
    for i, (a, b) in enumerate(zip(new, old, strict=False)):
        if a != b:
            break
        if a in _SEPARATORS:
            shared = i + 1
    return shared >= 3 and 2 * shared > min(len(new), len(old))


@lru_cache(maxsize=8192)
def value_kind(value: str) -> str:
    """The shape of a value (``reference_kinds``'s, ``person`` for a name, ``text`` else): a
    new value replaces an old one of the same shape, never a ticket a date.

    >>> value_kind("OPS-1"), value_kind("2026-04-14"), value_kind("Maren Lindqvist")
    ('ticket', 'date', 'person')
    """
    person = PERSON.search(f" {value}")
    if person is not None and person.group() == value:
        return "person"
    if _CAMEL.fullmatch(value):
        return "name"
    kinds = reference_kinds(value)
    # (A value read as its whole token may go on past the reference: ``1.2.3-rc1-teal``.)
    if (
        kinds
        and value.startswith(kinds[0][0])
        and _SUFFIX_TAIL.fullmatch(value[len(kinds[0][0]) :])
    ):
        kind = kinds[0][1]
        return "version" if kind in ("version", "number", "quantity") and "." in value else kind
    return "text"


_SUFFIX_TAIL = re.compile(r"(?:[-.+_][A-Za-z0-9]+)*")


def _changed(new: Fact, old: Fact) -> list[tuple[str, str]]:
    """The pairs ``(new value, old value)`` of one shape where ``old``'s value is not ``new``'s:
    what a correction would change. An old value that ``new`` names beside a new one of its
    shape (``2026-05-01 is cancelled, 2026-05-08 instead``) counts."""
    fresh = [a for a in new.values if a not in old.values]
    return [(a, b) for b in old.values for a in fresh if value_kind(a) == value_kind(b)]


def _stems(words: Iterable[str]) -> frozenset[str]:
    return frozenset(_word_stem(w) for w in words)


_SUFFIX = re.compile(r"(?:ership|ments?|ings?|ed|ers?|es|s|ions?|e)$")


@functools.lru_cache(maxsize=65_536)  # a pure function asked about the same words all session
def _word_stem(word: str) -> str:
    """``word`` without a common ending (``owner``, ``owns``, ``ownership`` -> ``own``)."""
    cut = _SUFFIX.sub("", word)
    return cut if len(cut) >= 3 else word


_KEY_WORDS = re.compile(r"[\s_.\-/]+")


def _diff_pair(old: Fact, new: Fact) -> bool:
    """``-key: old`` then ``+key: new`` in one diff: the ``+`` line replaces the ``-`` line."""
    return old.text.startswith("-") and new.text.startswith("+")


def _replaces(new: Fact, old: Fact, entities: Collection[str] = frozenset()) -> bool:
    """Whether ``new`` (later) replaces ``old``: a fact about the same subject with another
    value of the same shape, however it is worded.

    The subject is the same when the texts are, when the keys (``key_of``) have the same words
    (``feature_flag``, *the feature flag*) or one's lie within the other's; when the new fact
    says it corrects (``_corrects``) and names the old value beside a new one, or its key names
    the same thing first (*grpcio version*, *the grpcio pin*); when a key is missing, by what
    the two talk about (``_topic``): enough shared words, fewer when it says it corrects or
    its value is a variant of the old one (a shared prefix). Keys that differ otherwise are two
    subjects (*the auth service host*, *the payment service host*), whatever the words.
    """
    if not _may_replace(new, old):
        return False
    if new.text == old.text:
        return True
    if _other_entities(new, old, entities):
        return False  # one setting of two services (hosts, files): both hold
    if new.key is not None and old.key is not None and _same_key(new.key, old.key):
        return True
    if set(_dropped(new)) & set(old.values):
        return True  # it names the old value and declares it dropped (``declared_old``)
    changed = _changed(new, old)
    # A clause read as a key (``X is Y``) that holds the value it changes (*nobody pushes to
    # hotfix/a.42 while husum is in freeze*) names no subject: the two are compared by what
    # they talk about.
    if _clause_key(new.key, [a for a, _b in changed]):
        new = replace(new, key=None)
    if _clause_key(old.key, [b for _a, b in changed]):
        old = replace(old, key=None)
    if not changed:
        # The same value restated under the same subject (``- archiver.port: 8019`` after
        # *the port of archiver = 8019*): one fact, the newer statement of it.
        return _restates(new, old)
    if _same_frame(new, old):
        return True  # the same sentence again, another value in it
    marked = _corrects(new.text)
    if marked and any(b in new.values for _a, b in changed):
        return True  # it names the old value beside a new one, and says it changed
    # One names its subject by a key whose every word the other states (``fd_limit=29194 file
    # handles``, *the file handle limit moved to 61607 file handles*; ``max_upload``, *the
    # maximum upload size*): the same slot, however the other is worded.
    if _named_in(new.key, old) or _named_in(old.key, new):
        return True
    # A key the other does not state, while the other names something this one does not: two
    # things of one kind (``audit_log``, *metrics logs*), whatever words they share.
    if _rivals(new, old) or _rivals(old, new):
        return False
    if new.key is not None and old.key is not None:
        a, b = _key_words(new.key), _key_words(old.key)
        prose = " " in new.key or " " in old.key  # names (``build_id``, ``build_id_b``) differ
        if prose and (set(a) <= set(b) or set(b) <= set(a)):
            return True
        # A correction whose key holds the thing the other key names first (*the backport
        # target*, ``backport_line``); not two things of one kind (*auth* and *payment host*).
        return marked and (a[0] in b or b[0] in a)
    if not marked and (_thing_unnamed(new.key, old) or _thing_unnamed(old.key, new)):
        return False  # the same slot of another thing (*the drami service ... port*)
    new_topic, old_topic = _value_topic(new), _value_topic(old)
    shared = new_topic & old_topic
    if not shared:
        return False  # a date or a host alike, but about something else
    if len(shared) < 2:
        # a key's word the other's words spell out counts (``cache.srv.addr``, *the cache
        # server*); prose is not read for abbreviations (*cut* is no short *contribute*)
        shared = shared | frozenset(
            w
            for fact, other in ((new, old_topic), (old, new_topic))
            for w in _key_words(fact.key or "")
            if w in new_topic | old_topic and _has_word(other, w)
        )
    if marked and any(_variants(a, b) for a, b in changed):
        return True
    overlap = len(shared) / max(1, min(len(new_topic), len(old_topic)))
    if marked:
        return overlap >= 0.3
    return (
        len(shared) >= 2
        and overlap >= 0.6
        and not _another_named_thing(new, old, changed)
        and not _qualified_apart(new, old)
        and not _adds(new)
    )


#: A numbered line of printed output (``nl``, ``grep -n``, a listing): ``118 checks_class = X``.
_NUMBERED = re.compile(r"^\s*(\d{1,7})(?:[:\t]|\s+(?=\S))")


def _clause_key(key: str | None, values: Sequence[str]) -> bool:
    """Whether ``key`` is a clause of three words or more that holds one of ``values``."""
    if key is None or key.count(" ") < 2:
        return False
    return any(v.lower() in key.lower() for v in values)


def _listing_places(new: Fact, old: Fact) -> bool:
    """Whether ``new`` and ``old`` are two numbered lines of printed output with different
    numbers: two places of a file, never one setting corrected (the same number read again
    after an edit is one place).

    >>> a = Fact("118 checks_class = A", "checks_class", "tool", "decision", 1.0, 0)
    >>> _listing_places(replace(a, text="572 checks_class = B"), a)
    True
    """
    if new.source not in _PRINTED_SOURCES or old.source not in _PRINTED_SOURCES:
        return False
    a, b = _NUMBERED.match(new.text), _NUMBERED.match(old.text)
    return a is not None and b is not None and a.group(1) != b.group(1)


_PRINTED_SOURCES = frozenset({"tool", "carried"})


def _slot_pair(new: Fact, old: Fact) -> bool:
    """Whether ``new`` replaced ``old`` by a named slot (keys with the same words, or a key the
    other states whole), or by naming the old value dropped: then what the old one held is
    the old value of that slot (``was``). Two statements that only talk about the same things
    give no old value to show."""
    if set(_dropped(new)) & set(old.values):
        return True
    if new.key is None or old.key is None:
        return False
    return _same_key(new.key, old.key) or _named_in(new.key, old) or _named_in(old.key, new)


def _another_named_thing(new: Fact, old: Fact, changed: Sequence[tuple[str, str]]) -> bool:
    """Whether ``new`` says of another named thing what ``old`` said of its own: the name it is
    about changed (a value that is one of its ``names``) and so did more of its text
    (``aaaa_aaaa tops out at 4711``, ``nnnn_nnnn tops out at 9123``). A rename changes the name
    alone; a correction that says so is caught before (``_corrects``). The name need not be
    a value (``aaaa-aaaa tops out at 11``, ``nnnn-nnnn tops out at 12``): each names one
    thing the other does not.

    >>> a = Fact("aaaa-aaaa tops out at 11", None, "tool", "decision", 1.0, 0, values=("11",),
    ...          names=frozenset({"aaaa-aaaa"}))
    >>> b = replace(a, text="nnnn-nnnn tops out at 12", values=("12",),
    ...             names=frozenset({"nnnn-nnnn"}))
    >>> _another_named_thing(b, a, [("12", "11")])
    True
    """
    for fresh, former in changed:
        if former.lower() in old.names and fresh.lower() in new.names:
            others_old = old.names - {former.lower()}
            others_new = new.names - {fresh.lower()}
            if len(changed) > 1 or (others_old - others_new and others_new - others_old):
                return True  # the name and another value or name: another thing's
            # (what frames the clause, *A (accepted):* or *where things stand:*, is no thing)
            said = _clause(old.text, former).replace(former.lower(), fresh.lower())
            return said != _clause(new.text, fresh)
    only_old, only_new = old.names - new.names, new.names - old.names
    if changed and len(only_old) == 1 and len(only_new) == 1:
        (former,), (fresh,) = only_old, only_new
        return old.text.lower().replace(former, fresh) != new.text.lower()
    return False


#: Where a clause ends: a sentence's end, a label's colon, a cell's or a field's separator.
_CLAUSE_END = re.compile(r"(?<=[.!?])\s+|:\s+|\s+\|\s+|;\s+")


def _clause(text: str, value: str) -> str:
    """The clause of ``text`` that names ``value``, lower case, without its closing
    punctuation (the whole text when no one clause names it).

    >>> _clause("A (accepted): Data has to stay in eu-9. On the page too.", "eu-9")
    'data has to stay in eu-9'
    """
    for part in split_statements(_CLAUSE_END, text):
        if value in part:
            return part.strip().rstrip(".!?;,").lower()
    return text.lower()


#: Where a text names what a setting belongs to: ``for X``, ``X's``, ``(X)``, a section
#: (``X.key``), a log line's logger (``INFO X``), a record's plain-word field, a row's first cell.
_QUALIFIER = re.compile(
    r"\b(?:for|of|on|in|at)\s+(?:the\s+)?([a-z][a-z0-9-]{2,})"
    r"(?=\s*(?:[,.;:)=|]|->|$)|\s+(?:is|are|was|goes|uses|stays|ended|becomes|service|host|"
    r"server|team|cluster|job|repo|module|env|environment|node|db|database|queue|app)\b)|"
    r"\b([a-z][a-z0-9-]{2,})'s\b|\(([a-z][a-z0-9-]{2,})\)|^[\W\d]*([a-z][a-z0-9-]{2,})\.[a-z]|"
    r"\b(?:info|warn|warning|error|debug)\s+\[?([a-z][a-z0-9-]{2,})\b|"
    r'"(?:service|app|application|host|component|system|module|team|project|repo|cluster|'
    r'env|environment|job|node|target|name)"\s*:\s*"([a-z][a-z-]{2,30})"|'
    r"^\W*\|\s*([a-z][a-z0-9-]{2,})\s*\|[^|]+\|[^|]+\|",
    re.IGNORECASE | re.MULTILINE,
)
#: Words a qualifier pattern also catches that name no thing (*for now*, *in place*).
_NOT_ENTITIES = _words(
    "now later example instance place time today tomorrow while good real review reference "
    "default production prod staging all both each every most some any none more less "
    "server client config configuration settings"  # (*on the server*, a ``[config]`` logger)
)


def qualifiers(text: str) -> set[str]:
    """The words ``text`` names as what its setting belongs to (``_QUALIFIER``: a service, a
    host, a file), lower case.

    >>> sorted(qualifiers("For webhooks, the reviewer is Ann Lee.")), qualifiers("x: 5")
    (['webhooks'], set())
    """
    found = set()
    for m in _QUALIFIER.finditer(text):
        word = next(g for g in m.groups() if g).lower()
        if not (
            word in _STOP
            or word in _FUNCTION_WORDS
            or word in _TOPIC_STOP
            or word in _NOT_ENTITIES
            or word in _GENERIC_SUBJECTS
            or word in _KEY_FILLER
        ):
            found.add(word)
    return found


def _named_entities(fact: Fact, entities: Collection[str]) -> set[str]:
    """The words of ``fact`` (its values aside) that name something ``entities`` holds."""
    return {w for w in _words_beside_values(fact.text, fact.values) if w in entities}


@functools.lru_cache(maxsize=8_192)  # asked once per pair of facts: the same facts many times
def _words_beside_values(text: str, values: tuple[str, ...]) -> frozenset[str]:
    """The name-like words of ``text`` once its ``values`` are taken out."""
    text = _SPEAKER.sub("", text.strip(), count=1).lower()  # who spoke is not the topic
    for value in values:
        text = text.replace(value.lower(), " ")
    return frozenset(re.findall(r"[a-z][a-z0-9-]{2,}", text))


def _other_entities(new: Fact, old: Fact, entities: Collection[str]) -> bool:
    """Whether ``new`` and ``old`` each name a thing (of ``entities``: what the conversation
    names as a setting's owner, ``qualifiers``) and no thing in common: the same setting of
    two services, two hosts, two files."""
    if not entities:
        return False
    mine, theirs = _named_entities(new, entities), _named_entities(old, entities)
    return bool(mine) and bool(theirs) and not (mine & theirs)


def _restates(new: Fact, old: Fact) -> bool:
    """Whether ``new`` states exactly ``old``'s values about a subject named by a key the other
    states whole (``_named_in``), with no rival key."""
    if not new.values or set(new.values) != set(old.values):
        return False
    if _rivals(new, old) or _rivals(old, new):
        return False
    return _named_in(new.key, old) or _named_in(old.key, new)


def _text_stems(fact: Fact) -> frozenset[str]:
    """Every word of ``fact``'s text (its values' and units' too, split at their separators),
    stemmed: where another fact's key is looked for."""
    text = fact.text.lower()
    # (a hyphenated word is also one word: *on-call* states ``oncall``)
    joined = [w.replace("-", "") for w in re.findall(r"[a-z]+(?:-[a-z]+)+", text)]
    words = re.findall(r"[a-z]{2,}", text)
    # (each word whole too: a contraction is of the word, ``srv`` of *server*, not ``serv``)
    return _stems([*words, *joined]) | frozenset(words)


def _has_word(stems: frozenset[str], word: str) -> bool:
    """Whether ``word`` (a stem) is among ``stems``, or abbreviates one or is abbreviated by one:
    as a prefix of three letters or more (``min`` and ``minimum``, ``config`` and
    ``configuration``) or as a known short form (``db`` and ``database``, ``short_forms``)."""
    if word in stems:
        return True
    if not _other_spellings().get(word, frozenset()).isdisjoint(stems):
        return True  # ``db`` and ``database``: a short form that is no prefix
    return len(word) >= 3 and any(
        len(s) >= 3 and (s.startswith(word) or word.startswith(s) or contracts(word, s))
        for s in stems
    )


def contracts(a: str, b: str) -> bool:
    """Whether one of two words is a contraction of the other: three letters or more, its
    first letter the other's and its others in order within the other, which is longer
    (``mgr``, *manager*; ``vndr``, *vendor*; ``tmo``, *timeout*; ``srv``, ``serv``: a stem).

    >>> contracts("mgr", "manager"), contracts("tmo", "timeout"), contracts("tmo", "time")
    (True, True, False)
    """
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) < 3 or len(long) <= len(short) or short[0] != long[0]:
        return False
    rest = iter(long[1:])
    return all(c in rest for c in short[1:])


@functools.cache  # built on first use, not at import
def _other_spellings() -> dict[str, frozenset[str]]:
    """Each stem's other spellings, stemmed (``short_forms``): ``db`` <-> ``databas``."""
    spellings: dict[str, set[str]] = {}
    for short, words in SHORT_FORMS.items():
        for word in words:
            a, b = _word_stem(short), _word_stem(word)
            spellings.setdefault(a, set()).add(b)
            spellings.setdefault(b, set()).add(a)
    return {stem: frozenset(others) for stem, others in spellings.items()}


def _named_in(key: str | None, other: Fact) -> bool:
    """Whether ``other`` states every word of ``key`` (stemmed, abbreviations matched), and
    ``key`` is more than one generic word."""
    if key is None:
        return False
    words = [w for w in _key_words(key) if w not in _KEY_FILLER]
    if not words or all(w in _GENERIC_SUBJECTS for w in words):
        return False
    stems = _text_stems(other)
    if all(_has_word(stems, w) for w in words):
        return True
    # A section's name (``git.last_good_commit``) qualifies the key: a fact in prose that
    # names no section may still state the rest, when the rest is more than one word (a fact
    # naming another section's thing is ruled out before, ``_other_entities``); a key of
    # one token (``MAILER_TRACKING_TICKET``) names its own owner.
    if other.key is not None and " " not in other.key:
        return False
    section = _SECTIONED.match(key)
    rest = [w for w in _key_words(key[section.end() :]) if w not in _KEY_FILLER] if section else []
    if len(rest) >= 2 and all(_has_word(stems, w) for w in rest):
        return True
    slot = _slot_words(key)
    return len(slot) >= 2 and all(_has_word(stems, w) for w in slot)


def _key_parts(key: str) -> list[str]:
    """A dotted or slashed key's parts, without the generic ones it ends on (``.default``,
    ``.value``): the last part left names the slot, the one before it the slot's thing."""
    parts = [p for p in re.split(r"[./]", key) if p]
    while parts and all(w in _GENERIC_SUBJECTS for w in _key_words(parts[-1])):
        parts.pop()
    return parts


def _slot_words(key: str) -> list[str]:
    """The words of the slot a dotted key ends on: its last part that names something
    (``x-settings.placement.primary_zone.default``: *primary zone*), with the part before it
    when it is one word (``services.geisexkrem.port``: *geisexkrem port*, whose thing is named).

    >>> _slot_words("x-settings.placement.primary_zone.default")
    ['primary', 'zon']
    >>> _slot_words("services.geisexkrem.port")
    ['geisexkrem', 'port']
    """
    parts = _key_parts(key)
    if not parts:
        return []
    words = [w for w in _key_words(parts[-1]) if w not in _KEY_FILLER]
    if len(words) < 2 and len(parts) > 1:
        words = [*_key_words(parts[-2]), *words]
    return words


def _thing_unnamed(key: str | None, other: Fact) -> bool:
    """Whether ``key`` is a dotted key naming its thing before a one-word slot
    (``services.kelvo.port``: the port of *kelvo*) and ``other`` does not name that thing: a
    statement of the same slot about another thing (*the drami service listens on port
    39325*), both hold.

    >>> a = Fact("The drami service listens on port 39325", None, "user", "value", 1.0, 0)
    >>> _thing_unnamed("services.kelvo.port", a), _thing_unnamed("services.drami.port", a)
    (True, False)
    """
    if key is None:
        return False
    parts = _key_parts(key)
    if len(parts) < 2 or len([w for w in _key_words(parts[-1]) if w not in _KEY_FILLER]) != 1:
        return False
    thing = [w for w in _key_words(parts[-2]) if w not in _KEY_FILLER]
    if not thing or all(w in _GENERIC_SUBJECTS for w in thing):
        return False
    stems = _text_stems(other)
    return not all(_has_word(stems, w) for w in thing)


_SECTIONED = re.compile(r"^[a-z][a-z0-9-]*\.(?=[a-z])")


def _rivals(fact: Fact, other: Fact) -> bool:
    """Whether ``fact``'s key has a word ``other`` does not state while ``other``'s key has a
    word ``fact`` does not state: two things of one kind (``audit_log``, *metrics logs*)."""
    if fact.key is None or other.key is None or _named_in(fact.key, other):
        return False
    mine = _text_stems(fact)
    return any(not _has_word(mine, w) for w in _key_words(other.key) if w not in _KEY_FILLER)


#: Words a key may hold that name nothing (a copula or an adverb left in by ``key_of``).
_KEY_FILLER = _words(
    "is are was be actually now just really up earlier previous previously ok okay so well "
    "hey btw fyi heads"
)


#: A conjunction that sets one clause against another (*X says A, but Y has B*).
_CONTRAST = re.compile(r"\b(?:but|however|whereas|though|although)\b", re.IGNORECASE)


#: How many words a sentence's frame (``_frame``) needs before two facts in it are one slot.
FRAME_WORDS = 5


def _same_frame(new: Fact, old: Fact) -> bool:
    """Whether ``new`` says ``old``'s sentence again with one value changed: each names one
    value the other does not, and the words of one (that value taken out) run, in order and
    unbroken, within the other's, ``FRAME_WORDS`` of them or more (*the v1 API gets switched
    off on X*, *... since this morning's plan: the v1 API gets switched off on Y*). Not when a
    value opens the sentence (*RQ-1 is blocked by the flaky test*, *RQ-2 is blocked by the
    flaky test*: two things, one said of each), nor when more than one value differs (*the
    queue_1 limit is 1 ms*, *the queue_2 limit is 2 ms*: two queues), nor of rules (*don't
    deploy anything to host-a*, then *... to host-b*: both forbidden).

    >>> a = Fact("the v1 API gets switched off on 2045-04-01", None, "user", "value", 1.0, 1,
    ...          values=("2045-04-01",))
    >>> b = replace(a, text="Small change: the v1 API gets switched off on 2045-05-21.",
    ...             values=("2045-05-21",))
    >>> c = replace(a, text="RQ-1 is blocked by the same flaky test", values=("RQ-1",))
    >>> d = replace(c, text="RQ-2 is blocked by the same flaky test", values=("RQ-2",))
    >>> _same_frame(b, a), _same_frame(d, c)
    (True, False)
    """
    if "rule" in (new.kind, old.kind):
        return False
    fresh = [v for v in new.values if v not in old.values]
    gone = [v for v in old.values if v not in new.values]
    if len(fresh) != 1 or len(gone) != 1:
        return False
    a, b = _frame(new.text, fresh[0]), _frame(old.text, gone[0])
    if a is None or b is None:
        return False
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) < FRAME_WORDS:
        return False
    return any(long[i : i + len(short)] == short for i in range(len(long) - len(short) + 1))


def _frame(text: str, value: str) -> tuple[str, ...] | None:
    """The words of ``text`` around ``value`` (taken out), lower case; ``None`` when a value
    opens it."""
    text = text.lower()
    at = text.find(value.lower())
    if at < 0 or not re.search(r"[a-z]{2,}", text[:at]):
        return None
    return tuple(re.findall(r"[a-z]+", text.replace(value.lower(), " ")))


def _contrasts(fact: Fact, olds: Collection[str]) -> bool:
    """Whether ``fact`` names one of ``olds``, then a contrasting conjunction, then its subject
    (its key) again with a new value: *the README still says A for ``rel_mgr``, but the deployed
    config has ``rel_mgr: B``*. What follows the *but* is what holds. Not when the clause after
    it is about another thing (*the API is at A, but the docs are at B*), nor a list (*A and
    B*).

    >>> f = Fact("the doc says 40 for pool_max, but the config has pool_max: 64", "pool_max",
    ...          "user", "value", 1.0, 1, values=("40", "64"))
    >>> _contrasts(f, {"40"}), _contrasts(replace(f, text="40 for pool_max, but docs: 64"), {"40"})
    (True, False)
    """
    if fact.key is None:
        return False
    words = [w for w in _key_words(fact.key) if w not in _KEY_FILLER]
    text = fact.text
    for old in olds:
        start = text.find(old)
        if start < 0:
            continue
        for new in fact.values:
            at = text.find(new, start + len(old)) if new not in olds else -1
            but = _CONTRAST.search(text, start + len(old), at) if at > 0 else None
            if but is None:
                continue
            clause = _stems(re.findall(r"[a-z]{2,}", text[but.end() : at].lower()))
            if words and all(_has_word(clause, w) for w in words):
                return True
    return False


def _dropped(fact: Fact) -> list[str]:
    """The values ``fact`` shows replaced in its own text (``(was X)``)."""
    return [m.group(1) for m in _WAS_INLINE.finditer(fact.text)]


def _same_key(a: str, b: str) -> bool:
    """Whether keys ``a`` and ``b`` have the same words, in any order (``metrics port of
    archiver``, ``archiver.metrics_port``)."""
    return set(_key_words(a)) == set(_key_words(b))


def _key_words(key: str) -> tuple[str, ...]:
    """A key's words, stemmed, whatever separates them (``feature_flag``, ``feature flag``),
    each once (a section's name its key repeats: ``oncall.oncall_billing``)."""
    return tuple(dict.fromkeys(_word_stem(w) for w in _KEY_WORDS.split(key) if w))


@functools.lru_cache(maxsize=8_192)  # asked once per pair of facts: the same texts many times
def _corrects(text: str) -> bool:
    """Whether ``text`` says it corrects or settles something: a correction word
    (``_CORRECTION``) or a decision (*we settled on*, *going with*)."""
    return bool(_CORRECTION.search(text) or _DECISION.search(text))


def _topic(fact: Fact) -> frozenset[str]:
    """What a fact talks about (``Fact.topic``, else the words of its text)."""
    return fact.topic or _topic_words(fact.text, fact.values)


#: Where a statement's own words start or stop: a sentence's end, a semicolon, a label's colon.
_STATEMENT_END = re.compile(r"(?<=[.!?;])\s+(?=\S)|:\s+(?=[A-Z])")


def _value_topic(fact: Fact) -> frozenset[str]:
    """What ``fact`` says its values are, stemmed: the words of the statements of its text that
    hold a value (a sentence, a clause after a label), not of the ones around them (*The
    countersigned copy came back. The contract manufacturer: X.*); its whole topic when no
    statement holds one."""
    held = _value_statements(fact)
    if held == fact.text:
        return _stems(_topic(fact))
    return _stems(_topic_words(held, fact.values))


def _value_statements(fact: Fact) -> str:
    """The statements of ``fact``'s text that hold one of its values (a statement that is
    little more than the value, *X.* after *the owner of the search service:*, with the one
    before it); its whole text when none does."""
    return _statements_holding(fact.text, fact.values)


@functools.lru_cache(maxsize=8_192)  # asked once per pair of facts: the same facts many times
def _statements_holding(text: str, values: tuple[str, ...]) -> str:
    pieces = split_statements(_STATEMENT_END, text)
    held: list[str] = []
    for at, piece in enumerate(pieces):
        if any(v in piece for v in values):
            rest = piece
            for value in values:
                rest = rest.replace(value, " ")
            if at and len(re.findall(r"[a-z]{3,}", rest.lower())) < 2:
                held.append(pieces[at - 1])
            held.append(piece)
    return " ".join(dict.fromkeys(held)) or text


def _topic_words(text: str, values: Sequence[str]) -> frozenset[str]:
    """The longer words of ``text``, its values and small words aside."""
    text = _SPEAKER.sub("", text.strip(), count=1).lower()  # who spoke is not the topic
    for value in values:
        text = text.replace(value.lower(), " ")
    return frozenset(
        w
        for w in re.findall(r"[a-z]{3,}", text)
        if w not in _STOP and w not in _FUNCTION_WORDS and w not in _TOPIC_STOP
    )


def mark_replaced(text: str, value: str) -> str:
    """``text`` with ``value`` (a replaced one it still names) shown as ``(was value)`` in
    place, wherever it stands, unless it is only part of a longer value (``release/x`` in
    ``release/x-hotfix``) or marked already.

    >>> mark_replaced("2026-05-01 is cancelled, ship 2026-05-08", "2026-05-01")
    '(was 2026-05-01) is cancelled, ship 2026-05-08'
    >>> mark_replaced("mv a/x.ts b/y.ts; R (was a/x.ts) -> b/y.ts; a/x.ts", "a/x.ts")
    'mv (was a/x.ts) b/y.ts; R (was a/x.ts) -> b/y.ts; (was a/x.ts)'
    """
    before = _VALUE_POSITION if _PLAIN_LOWER.fullmatch(value) else r"(?<![\w./@-])"
    # every place it stands (a pasted log names it twice), none already marked
    pattern = re.compile(rf"(?<!\(was ){before}{re.escape(value)}(?![\w/@-]|[.-]\w)")
    return pattern.sub(lambda m: f"(was {m.group()})", text)


#: A lowercase plain word is English as often as it is a value (``Restart=always`` replaced must
#: not turn *please always answer* into *please (was always) answer*): it is marked only where it
#: stands as a value, right after ``=``, ``:``, an arrow or a quote.
_PLAIN_LOWER = re.compile(r"[a-z]+")
_VALUE_POSITION = r"(?:(?<==)|(?<==\s)|(?<=:)|(?<=:\s)|(?<=->\s)|(?<=[\"'`]))"


#: Words around a value that declare it no longer current (*forget X*, *X is cancelled*).
_DROPS_BEFORE = (
    r"(?:forget|scratch|scrap|ditch|drop|dropping|ignore|disregard|no longer|instead of|"
    r"rather than|replace|replacing|swap|swapping|cancel|retire|abandon|revert)"
)
_DROPS_AFTER = (
    r"(?:(?:is|are|was|has been|got)\s+)?(?:dead|cancell?ed|gone|obsolete|retired|out|off|"
    r"wrong|void|withdrawn|replaced|dropped|scrapped|ditched|abandoned|history|no longer\b|"
    r"superseded|closed|reverted|rolled back|deprecated)"
    # a whole word: ``OFF-1000`` and ``output`` declare nothing
    r"(?![\w-])"
)


# The words around a value, compiled once: the text before an occurrence must end with one of
# the ``*_TAIL`` forms, the text after it must start with a ``*_HEAD`` form. (Building one pattern
# per value cost a compile per fact and value, most of a long session's summary.)
_DROP_TAIL = re.compile(rf"\b{_DROPS_BEFORE}\s+(?:the\s+|to\s+)?\Z", re.IGNORECASE)
_DROP_HEAD = re.compile(rf"[\s,;:)]*(?:{_DROPS_AFTER})", re.IGNORECASE)
# ``X -> Y`` drops X only for a Y of X's shape: ``OPS-1 -> OPS-2`` replaces a ticket, while
# ``the value of POOL_MAX -> 6668`` sets a key, which stays current.
_ARROW_HEAD = re.compile(r"[\s,;:)]*(?:->|[" + _ARROWS + r"]|=>)\s*[\"'`]?([\w./@:+-]+)")
#: A value asked back and denied (*6847 ms? no, 4043 ms*, *@ann? nope — @bo*).
_DOUBTED_HEAD = re.compile(r"\?\s*(?:no|nope|nah|wrong)\b", re.IGNORECASE)
_FROM_TAIL = re.compile(r"\bfrom\s+\Z", re.IGNORECASE)  # *moved from X to Y*
_TO_HEAD = re.compile(r"\s+(?:to|->|[" + _ARROWS + r"])\s", re.IGNORECASE)
_NOT_TAIL = re.compile(r"\bnot\s+(?:the\s+)?\Z", re.IGNORECASE)  # *is not X anymore*
_ANYMORE_HEAD = re.compile(r"\s*,?\s*(?:anymore|any more|any longer)\b", re.IGNORECASE)
_NO_MORE_TAIL = re.compile(r"\bno more\s+\Z", re.IGNORECASE)  # *no more X*
#: git's title of a revert commit: what the quoted title set is undone (*Revert "Bump x to 2.1.0"*).
_REVERT_TITLE = re.compile(r'\bRevert\s+"([^"\n]*)"')
_COMMA_NOT_TAIL = re.compile(r"\w[,;]\s*not\s+(?:the\s+)?\Z", re.IGNORECASE)  # *Y, not X*
#: A sentence that opens on *Not X,* (*Use @b for it. Not @a, that one's stale.*).
_OPENING_NOT_TAIL = re.compile(r"(?:^|[.!?]\s+)not\s+(?:the\s+)?\Z", re.IGNORECASE)
_VALUE_CHAR = re.compile(r"[\w/.-]")
_PATH_CHAR = re.compile(r"[\w/-]")
_TAIL_REACH = 24  # past the spacing before a value: the longest tail word, and its boundary


def _occurrences(text: str, value: str) -> Iterator[tuple[int, int]]:
    """Where ``value`` stands in ``text``, ignoring case, overlapping occurrences too (``aa``
    in ``aaa``), as a search for each form would find them."""
    lowered, wanted = text.lower(), value.lower()
    if len(lowered) != len(text) or len(wanted) != len(value) or not value:
        # a letter whose lower case is longer (``İ``) would shift every index: ask ``re``
        for found in re.finditer(f"(?=({re.escape(value)}))", text, re.IGNORECASE):
            yield found.span(1)
        return
    start = lowered.find(wanted)
    while start != -1:
        yield start, start + len(value)
        start = lowered.find(wanted, start + 1)


def _tail_reach(text: str, start: int) -> int:
    """Where a tail form ending at ``start`` can begin: back over the spacing, one optional
    word (*the*, *to*) and its spacing, then ``_TAIL_REACH`` characters."""
    end = start
    while end > 0 and text[end - 1].isspace():
        end -= 1
    word = end
    while word > 0 and text[word - 1].isalpha():
        word -= 1
    while word > 0 and text[word - 1].isspace():
        word -= 1
    return max(0, min(end, word) - _TAIL_REACH)


def _declared_dropped(text: str, value: str) -> bool:
    """Whether one occurrence of ``value`` in ``text`` stands where ``declared_old`` reads a
    value declared no longer current."""
    # (what a revert undoes is the number it set, not the name of what it was set on)
    numeric = any(c.isdigit() for c in value)
    reverted = [m.span(1) for m in _REVERT_TITLE.finditer(text)] if numeric else []
    for start, end in _occurrences(text, value):
        if any(a <= start and end <= b for a, b in reverted):
            return True
        reach = _tail_reach(text, start)
        before_ok = start == 0 or not _VALUE_CHAR.match(text[start - 1])
        next_char = text[end : end + 1]
        if _DROP_TAIL.search(text, reach, start) and not _PATH_CHAR.match(next_char):
            return True
        if before_ok and (_DROP_HEAD.match(text, end) or _DOUBTED_HEAD.match(text, end)):
            return True
        arrow = _ARROW_HEAD.match(text, end) if before_ok else None
        if arrow is not None and value_kind(arrow.group(1).rstrip(".,;:")) == value_kind(value):
            return True
        if _FROM_TAIL.search(text, reach, start) and _TO_HEAD.match(text, end):
            return True
        if _NOT_TAIL.search(text, reach, start) and _ANYMORE_HEAD.match(text, end):
            return True
        if _NO_MORE_TAIL.search(text, reach, start):
            return True
        if _COMMA_NOT_TAIL.search(text, reach, start) and not _PATH_CHAR.match(next_char):
            return True
        if _OPENING_NOT_TAIL.search(text, reach, start) and next_char in (",", ";", "."):
            return True
    return False


def _loose_values(text: str, values: Sequence[str]) -> list[str]:
    """Tokens of ``text`` shaped like values that ``values`` (its references) misses: a digit,
    an inner separator or a hyphenated name (``lopulu.events.v6``, ``4190``, ``perf-shadow``;
    not ``read-only``). A text that declares one dropped (*no longer lopulu.events.v6*, *4190
    is dead*) names what it replaces, whatever its shape.

    >>> _loose_values("forget perf-shadow and the read-only 4190 of a.b.v6, OPS-1", ["OPS-1"])
    ['perf-shadow', '4190', 'a.b.v6']
    """
    out: list[str] = [
        name for name in kebab_names(text) if not any(name in v or v in name for v in values)
    ]
    for found in _TOKEN.findall(text):
        token = found.rstrip(".,;:-")
        if (
            len(token) >= 3
            and (any(c.isdigit() for c in token) or _INNER_SEPARATOR.search(token))
            and not any(token in v or v in token for v in values)
            and token not in out
        ):
            out.append(token)
    return out


_INNER_SEPARATOR = re.compile(r"\w[._/@#:]\w")


def declared_old(text: str, values: Sequence[str]) -> list[str]:
    """The values ``text`` itself declares no longer current: right after *forget*, *instead
    of*, *swap*, *Y, not*, ... or right before *is cancelled*, *is dead*, *? no*, an arrow to a
    value of its shape. (Not after a bare *not*: *do not push X* forbids X, it does not replace it.)

    >>> declared_old("swap RGTX-42 for CA-97 pls", ["RGTX-42", "CA-97"])
    ['RGTX-42']
    >>> declared_old("OPS-1 is cancelled; ship OPS-2", ["OPS-1", "OPS-2"])
    ['OPS-1']
    >>> declared_old("the port is 5433, not 5432", ["5433", "5432"])
    ['5432']
    >>> declared_old("Use @b_two for it. Not @a_one, that one's stale.", ["@b_two", "@a_one"])
    ['@a_one']
    >>> declared_old("6847 ms? no — 4043 ms, checked", ["6847 ms", "4043 ms"])
    ['6847 ms']
    >>> declared_old("the value of POOL_MAX -> 6668", ["POOL_MAX", "6668"])
    []
    """
    out = [value for value in values if _declared_dropped(text, value)]
    if len(out) == len(values) and len(values) > 1:
        return []  # every value dropped: not a correction the words can place
    return out


#: Words that void what a line names wherever they stand in it (*CAB pulled the X slot, ...;
#: that window is cancelled*): the passive and adjective forms only, never a verb that acts on
#: a thing (*drop*, *revert*), which a rule forbids as often as a correction performs.
_VOIDED = re.compile(
    r"\b(?:cancell?ed|called off|void(?:ed)?|obsolete|withdrawn|scrapped|superseded|"
    r"abandoned|rolled back|no longer (?:valid|applies|current|in effect|needed|used))\b",
    re.IGNORECASE,
)
#: A denial just before a voiding word (*is not cancelled*, *never withdrawn*).
_DENIED = re.compile(r"\b(?:not|n't|never|nothing|nobody|none)\W+(?:\w+\W+){0,2}\Z", re.IGNORECASE)
#: What may stand between an old value and the new one of its form in one line for the two to
#: read as *old, new* (a field history's cells, ``old | new``, ``old => new``): cell spacing or a
#: separator, never a word that lists (*X and Y*, *X, Y*).
_CELL_GAP = re.compile(r"[\s|:;=>" + _ARROWS + r"-]*")
#: Markup that may stand between an old value and its new one in one line, besides cell spacing
#: (``_CELL_GAP``): a strike-through, a word diff's brackets, quotes; at least one of the marks
#: (``_GAP_MARK``): quotes and spaces alone separate two arguments (``cp "X" "Y"``).
_MARKUP_GAP = re.compile(r"[\s|:;=>" + _ARROWS + r"~*_`'\"\[\]{}+-]*")
_GAP_MARK = re.compile(r"[|=>" + _ARROWS + r"~\[\]{}]")
#: The key a value follows in a line (``dir = "``, ``path: ``): the key it may repeat before the
#: new value (``dir = "X" | dir = "Y"``).
_KEY_BEFORE = re.compile(r"([A-Za-z_][\w.-]*)\s*[:=]\s*[\"'`]?$")


def superseded_in_line(text: str, values: Sequence[str], earlier: Collection[str]) -> list[str]:
    """The values a line shows are no longer current by how it is laid out, given the values
    ``earlier`` messages stated: an earlier value followed in the line by a value of its form
    that no earlier message stated (a field history's *Fix Version/s 1.2.3 1.4.0*), or the one
    earlier value of its form in a line that declares something void (*CAB pulled the X slot;
    that window is cancelled*). Values stated by the line's own message are never earlier:
    one message's facts stand side by side.

    >>> superseded_in_line("Fix Version/s app-1.2.3 app-1.4.0", ["app-1.2.3", "app-1.4.0"],
    ...                    {"app-1.2.3"})
    ['app-1.2.3']
    >>> superseded_in_line("OPS-1 and OPS-2 are open", ["OPS-1", "OPS-2"], {"OPS-1"})
    []
    """
    old = [v for v in values if v in earlier]
    if not old:
        return []
    out: list[str] = []
    voided = _voids(text)
    for value in old:
        form = value_form(value)
        if form is None:
            continue
        same = [v for v in values if v != value and value_form(v) == form]
        if any(v in earlier for v in same):
            continue  # two earlier values of one form: which one the line drops is not said
        if voided or any(_follows_in_cells(text, value, v) for v in same):
            out.append(value)
    return out


def _voids(text: str) -> bool:
    """Whether ``text`` declares something void, undenied (``_VOIDED``, ``_DENIED``)."""
    return any(
        _DENIED.search(text, max(0, m.start() - 40), m.start()) is None
        for m in _VOIDED.finditer(text)
    )


def _follows_in_cells(text: str, old: str, new: str) -> bool:
    """Whether ``new`` comes right after ``old`` in ``text``, only cell spacing, markup or the
    key ``old`` stands under between: a cell, an arrow, a strike-through (``~~X~~ Y``), a word
    diff (``[-"X"-]{+"Y"+}``), a substitution (``s|X|Y|``), two sides of one setting
    (``dir = "X" | dir = "Y"``). A comma, a word of its own, a bracket or quotes alone (*X, Y*;
    *X and Y*; *X (Y)*; ``cp "X" "Y"``) say the two stand side by side.

    >>> _follows_in_cells('dir = "/srv/a"  |  dir = "/srv/b"', "/srv/a", "/srv/b")
    True
    >>> _follows_in_cells("ports /srv/a and /srv/b", "/srv/a", "/srv/b")
    False
    """
    at = text.find(old)
    if at == -1:
        return False
    later = text.find(new, at + len(old))
    if later == -1:
        return False
    gap = text[at + len(old) : later]
    if _CELL_GAP.fullmatch(gap) is not None:
        return True
    key = _KEY_BEFORE.search(text, 0, at)
    if key is not None:  # the key said again before the new value: two sides of one setting
        gap = re.sub(rf"(?<![\w.-]){re.escape(key.group(1))}\s*[:=]", "=", gap, count=1)
    return _MARKUP_GAP.fullmatch(gap) is not None and _GAP_MARK.search(gap) is not None


def mark_values(text: str, values: Iterable[str]) -> str:
    """``text`` with each of ``values`` it names (no longer current: ``Ledger.replaced_values``)
    shown as ``(was value)`` where it stands (``mark_replaced``), longest first."""
    for value in sorted(values, key=len, reverse=True):
        if value in text:
            text = mark_replaced(text, value)
    return text


#: How many of the newest facts sharing a value's prefix a correction is checked against.
SHAPE_FANOUT = 32
#: How many of the newest facts sharing a word and a value shape (or a key word) are checked.
TOPIC_FANOUT = 8


#: A fact as ``_Index`` holds it: a flat tuple of ``Fact``'s fields, the values and the topic
#: words last (``count`` says how many of them are values). A long conversation has tens of
#: thousands of current facts, and each ``Fact`` (and its topic's frozenset) stays tracked by the
#: garbage collector: enough survivors to set off full collections, which stop every thread (the
#: caller's event loop too) for a time that grows with the caller's heap. CPython stops tracking
#: a tuple of strings and numbers at its first collection; it has to be flat, because that
#: collection may reach an inner tuple only after the outer one (still tracked then).
_Row: TypeAlias = tuple[
    str,
    str | None,
    Source,
    FactKind,
    float,
    int,
    str | None,
    int,
    bool,
    str,
    str,
    int,
    *tuple[str, ...],
]
#: The fields of a ``_Row`` read without making a ``Fact`` of it.
_TEXT: Final = 0
_KEY: Final = 1
_SOURCE: Final = 2
_WEIGHT: Final = 4
_ORDER: Final = 5
_MESSAGE: Final = 7
_LISTED: Final = 8


def _row(fact: Fact) -> _Row:
    return (
        fact.text,
        fact.key,
        fact.source,
        fact.kind,
        fact.weight,
        fact.order,
        fact.was,
        fact.message,
        fact.listed,
        fact.origin,
        "\n".join(sorted(fact.names)),
        len(fact.values),
        *(fact.values + tuple(fact.topic)),
    )


def _fact(row: _Row) -> Fact:
    text, key, source, kind, weight, order, was, message, listed, origin, names, count, *words = row
    values, topic = tuple(words[:count]), frozenset(words[count:])
    named = frozenset(names.split("\n")) if names else frozenset()
    return Fact(
        text, key, source, kind, weight, order, was, message, values, listed, topic, origin, named
    )


def _with(numbers: tuple[int, ...], number: int) -> tuple[int, ...]:
    return (*numbers, number)


def _without(numbers: tuple[int, ...], number: int) -> tuple[int, ...]:
    return tuple(n for n in numbers if n != number)


class _Index:
    """The current facts, found by text, key, value prefix, key word and (word, value shape), so
    that resolving n facts is linear in n: a key or a text has one current fact (each new one
    replaces the last), and a prefix or a word lists only its newest few facts
    (``SHAPE_FANOUT``, ``TOPIC_FANOUT``). Facts are held as ``_Row`` and numbers in tuples
    (untracked by the garbage collector, see ``_Row``), never as sets or deques."""

    def __init__(self) -> None:
        self.facts: dict[int, _Row] = {}
        self.by_text: dict[str, tuple[int, ...]] = {}
        self.by_key: dict[str, tuple[int, ...]] = {}
        self.by_shape: dict[str, tuple[int, ...]] = {}
        self.by_word: dict[str, tuple[int, ...]] = {}
        self.by_anchor: dict[str, tuple[int, ...]] = {}

    @staticmethod
    def _shapes(fact: Fact) -> list[str]:
        shapes = {p for v in fact.values for p in _prefixes(v)}
        shapes.update(f"form:{f}" for v in fact.values if (f := value_form(v)) is not None)
        return sorted(shapes)

    def newest_of_form(self, form: str) -> list[int]:
        """The current facts holding a value of ``form`` (``value_form``), newest first."""
        found = sorted(n for n in self.by_shape.get(f"form:{form}", ()) if n in self.facts)
        return found[::-1]

    @staticmethod
    def _words(fact: Fact, topic: frozenset[str] | None = None) -> list[str]:
        """``k:stem`` for each word of its key, ``kind:stem`` for each word of its topic
        (``topic``: its stems, when the caller has them) and each shape of its values."""
        words = {f"k:{w}" for w in _key_words(fact.key or "")}
        kinds = {value_kind(v) for v in fact.values}
        stems = topic if topic is not None else _stems(_topic(fact))
        words.update(f"{kind}:{w}" for kind in kinds for w in stems)
        return sorted(words)

    def add(self, number: int, fact: Fact) -> None:
        self.facts[number] = _row(fact)
        self.by_text[fact.text] = _with(self.by_text.get(fact.text, ()), number)
        if fact.key is not None:
            self.by_key[fact.key] = _with(self.by_key.get(fact.key, ()), number)
        for shape in self._shapes(fact):
            newest = _with(self.by_shape.get(shape, ()), number)
            self.by_shape[shape] = newest[-SHAPE_FANOUT:]
        for word in self._words(fact):
            newest = _with(self.by_word.get(word, ()), number)
            self.by_word[word] = newest[-TOPIC_FANOUT:]
        for key in {k for name in fact.names for k in lookup_keys(name)}:
            newest = _with(self.by_anchor.get(key, ()), number)
            self.by_anchor[key] = newest[-TOPIC_FANOUT:]

    def newest_anchored(self, names: Iterable[str]) -> list[int]:
        """The current facts naming one of ``names`` (``anchors``), newest first."""
        keys = {k for name in names for k in lookup_keys(name)}
        found = {n for key in keys for n in self.by_anchor.get(key, ()) if n in self.facts}
        return sorted(found, reverse=True)

    def get(self, number: int) -> Fact:
        return _fact(self.facts[number])

    def remove(self, number: int) -> None:
        row = self.facts.pop(number)
        text, key = row[_TEXT], row[_KEY]
        self.by_text[text] = _without(self.by_text[text], number)
        if key is not None:
            self.by_key[key] = _without(self.by_key[key], number)
        # by_shape and by_word keep the number: a removed fact is skipped by ``candidates``.

    def candidates(self, fact: Fact) -> list[int]:
        found = set(self.by_text.get(fact.text, ()))
        if fact.key is not None:
            found.update(self.by_key.get(fact.key, ()))
        for value in _dropped(fact):
            found.update(self.by_shape.get(value, ()))
        if fact.values:
            for shape in self._shapes(fact):
                found.update(self.by_shape.get(shape, ()))
            topic = _stems(_topic(fact))
            for word in self._words(fact, topic):
                found.update(self.by_word.get(word, ()))
            # a fact whose key this one's words name (``vndr_eol``, *`VNDR_EOL` is ...*)
            for stem in topic:
                found.update(self.by_word.get(f"k:{stem}", ()))
        return sorted(n for n in found if n in self.facts)


def _slot_of(index: _Index, fact: Fact, entities: Collection[str] = frozenset()) -> int | None:
    """The fact ``fact`` replaces by position when no subject says so: the newest current fact
    holding a value of the same form (``value_form``: ``CVE-9-9``, ``9 MiB``), another one,
    when ``fact`` restates a slot (a ``key: value`` line) or says it corrects in so many words
    (``strongly_corrects``: *ignore the earlier advisory*, *moved to*), and the two share a
    word of what they are about (its key, its topic, a unit). A correction in so many words
    needs no shared word when its subject is that value's, and no rival key says otherwise.
    Without either, the one fact of its form so far, when the two are about one thing
    (``_takes_the_slot``). ``None`` when no fact is that one."""
    # Only a correction of one value can be placed by form: with several, the word may be
    # about any of them (*... rides along instead of a 5.0.x patch*).
    strong = strongly_corrects(fact.text) and len(fact.values) == 1
    restated = fact.key is not None and structured(fact.text) is not None
    if not fact.values:
        return None
    mine = _subject_stems(fact) if strong or restated else frozenset()
    for value in fact.values:
        form = value_form(value)
        if form is None:
            continue
        held = index.newest_of_form(form)
        # The one fact of its form so far, about a thing this one names too: the same slot,
        # however the two are worded (*the 3V3 rail must stay below X*, *the ceiling on the
        # 3V3 rail: Y*). Two of a form are two things until a word says which one changed.
        if len(held) == 1 and len(fact.values) == 1 and not (strong or restated):
            if _takes_the_slot(fact, index.get(held[0]), entities):
                return held[0]
            continue
        if not (strong or restated):
            continue
        for rank, number in enumerate(held[:SLOT_FANOUT]):
            old = index.get(number)
            if (
                value in old.values
                or not _may_replace(fact, old)
                or _other_entities(fact, old, entities)
            ):
                continue
            common = mine & _subject_stems(old)
            keys = {*_key_words(fact.key or ""), *_key_words(old.key or "")}
            shared = bool(common)
            if strong and (len(common) >= 2 or bool(common & keys)):
                return number
            if strong and rank == 0 and not _rivals(fact, old) and not _rivals(old, fact):
                return number
            # A ``key: value`` line restates a slot whose subject shares two words of its key
            # (``diff_coverage_min = 82.78%``, *the diff coverage floor: 74.96%*).
            if (
                restated
                and len(common & set(_key_words(fact.key or ""))) >= 2
                and not (_rivals(fact, old) or _rivals(old, fact))
            ):
                return number
            # A ``key: value`` line alone restates a slot when its value is a variant of the
            # old one (``tests/api_x``, ``tests/api_y``) and they share a word of their subject.
            if (
                restated
                and shared
                and any(_variants(value, v) for v in old.values)
                and not (_rivals(fact, old) or _rivals(old, fact))
            ):
                return number
    return None


#: How many words of what they are about the one fact of a form and a later one share before
#: the later one takes its slot unasked (``_slot_of``).
SLOT_WORDS = 2

#: A word and the word after it (overlapping: *the hot tier holds* gives *hot tier*, *tier
#: holds*), apart by spacing or a key's separators (``api_memory_limit``).
_MODIFIED = re.compile(r"(?<![a-z0-9])([a-z0-9]+)[\s_.-]+(?=([a-z]{3,})(?![a-z]))")


def _modifiers(fact: Fact) -> dict[str, set[str]]:
    """Each word of ``fact``'s statements that hold a value, stemmed, with the words right
    before it that say which one (*hot* of *the hot tier*, *api* of *API pods*)."""
    return _statement_modifiers(_value_statements(fact), *fact.values)


def _statement_modifiers(text: str, *values: str) -> dict[str, set[str]]:
    """``_modifiers`` of ``text``, its ``values`` aside."""
    for value in values:
        text = text.replace(value, " ; ")
    found: dict[str, set[str]] = {}
    for m in _MODIFIED.finditer(text.lower()):
        word, head = m.group(1), m.group(2)
        if word in _STOP or word in _FUNCTION_WORDS or word in _TOPIC_STOP or word in _PRONOUNS:
            continue
        found.setdefault(_word_stem(head), set()).add(_word_stem(word))
    return found


#: Words that say a statement adds to what holds rather than replacing it (*Y runs in shadow
#: next to it, too*).
_ADDS = re.compile(r"\b(?:too|also|as well|in addition|additionally|besides)\b", re.IGNORECASE)


def _adds(fact: Fact) -> bool:
    """Whether the statement of ``fact`` that holds its value says it adds to what holds."""
    return _ADDS.search(_value_statements(fact)) is not None


def _qualified_apart(new: Fact, old: Fact) -> bool:
    """Whether the two name one kind of thing each with its own qualifier and none in common:
    *the hot tier* and *the archive tier*, *API pods* and *worker pods*, two things."""
    return _apart(_modifiers(new), _modifiers(old))


def _apart(a: Mapping[str, set[str]], b: Mapping[str, set[str]]) -> bool:
    """Whether modifiers ``a`` and ``b`` (``_modifiers``) name one head word with qualifiers
    and none in common: two things."""
    return any(a[head] and b[head] and not (a[head] & b[head]) for head in a.keys() & b.keys())


def _takes_the_slot(new: Fact, old: Fact, entities: Collection[str]) -> bool:
    """Whether ``new``, of one value, takes the slot of ``old``, the one fact of that value's
    form so far, unasked: its own words (not only the line before it) and ``old``'s share
    ``SLOT_WORDS`` words of what they are about (a unit both values carry aside), no key,
    named thing or qualifier of one is missing from the other, and ``new`` does not say it
    adds."""
    if new.values[0] in old.values or not _may_replace(new, old):
        return False
    own = _topic_words(new.text, new.values)
    if not own or _other_entities(new, old, entities) or _rivals(new, old) or _rivals(old, new):
        return False
    common = _about(new) & _about(old)
    return len(common) >= SLOT_WORDS and not (
        _qualified_apart(new, old)
        or _adds(new)
        or _another_named_thing(new, old, _changed(new, old))
        or _thing_unnamed(new.key, old)
        or _thing_unnamed(old.key, new)
    )


def _about(fact: Fact) -> frozenset[str]:
    """The words of ``fact``'s key and of its statements that hold a value, stemmed."""
    words = set(_key_words(fact.key or "")) | _value_topic(fact)
    return frozenset(w for w in words if w not in _KEY_FILLER and len(w) >= 2)


#: The most facts a name may be shared by and still tie a correction to what it corrects.
RARE_ANCHOR = 6


def _anchored_slot(
    index: _Index,
    fact: Fact,
    counts: Mapping[str, int],
    entities: Collection[str],
) -> int | None:
    """The newest current fact that ``fact`` corrects by naming the same thing and another
    value of one shape (``anchors.changes_value``), when neither key nor wording ties them;
    ``None`` when no fact is that one."""
    rare = {name for name in fact.names if counts.get(name, 0) <= RARE_ANCHOR}
    if not rare:
        return None
    mine = slots(fact.text)
    if not mine:
        return None
    for number in index.newest_anchored(rare):
        old = index.get(number)
        if not _may_replace(fact, old) or _other_entities(fact, old, entities):
            continue
        if _keyed_in_one_file(fact, old, rare):
            continue  # two things one file lists (``masural==9.1``, ``fizafus==6.7``)
        theirs = slots(old.text)
        if not changes_value(fact.names, mine, old.names, theirs, rare):
            continue
        # Two picks for one thing may be for two roles (a cache and a store of billing-api):
        # a changed pick alone replaces only when the two say what it is for in one word.
        picked_only = not changes_value(
            fact.names, _without_choice(mine), old.names, _without_choice(theirs), rare
        )
        if picked_only and not _shared_role(fact, old):
            continue
        return number
    return None


def _keyed_in_one_file(new: Fact, old: Fact, rare: Collection[str]) -> bool:
    """Whether the only names ``new`` and ``old`` share are files, and each has its own key
    (``masural==9.11.579``, ``fizafus==6.76.306`` under ``# requirements/base.txt``): two
    settings one file holds, each with its own value, never one corrected."""
    if new.key is None or old.key is None or _same_key(new.key, old.key):
        return False
    shared = [name for name in rare if name in old.names]
    return bool(shared) and all(value_kind(name) == "file" for name in shared)


def _without_choice(found: Mapping[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    return {shape: values for shape, values in found.items() if shape != "choice"}


def _shared_role(new: Fact, old: Fact) -> bool:
    """Whether two facts share a word of what they talk about besides the names they state
    and the picks they make (``node pool`` in *jobs run on the X node pool* and *use Y for
    the node pool*)."""
    named = " ".join([*new.names, *old.names, *choices(new.text), *choices(old.text)])
    aside = _stems(re.findall(r"[a-z]{3,}", named.lower()))
    return bool((_stems(_topic(new)) & _stems(_topic(old))) - aside)


#: How many of the newest facts of a value's form a correction that names no old value is
#: checked against (the newest alone when they share no word).
SLOT_FANOUT = 3


def _may_replace(new: Fact, old: Fact) -> bool:
    """What no subject overrides: the user is replaced only by the user, one message's facts
    stand side by side, and so do two numbered lines of a listing (``_listing_places``)."""
    if old.source == "user" and new.source != "user":
        return False  # what the user said is replaced only by the user
    if new.message == old.message and new.message != -1 and not _diff_pair(old, new):
        return False  # one message lists things side by side (two services, two hosts)
    return not _listing_places(new, old)


def _subject_stems(fact: Fact) -> frozenset[str]:
    """What ``fact`` is about, stemmed: its key's words, its topic, the units of its values."""
    words = set(_key_words(fact.key or "")) | _stems(_topic(fact))
    for value in fact.values:
        if value_kind(value) == "quantity":
            words |= _stems(re.findall(r"[a-z]{2,}", value.lower()))
    return frozenset(w for w in words if w not in _KEY_FILLER and len(w) >= 2)


def value_form(value: str) -> str | None:
    """The form of a value, what two values of one slot share: its shape (``value_kind``) and
    its characters, digits as ``9`` and letter runs as ``a`` / ``A`` (a quantity keeps its
    unit). ``None`` for free text, which has no form.

    >>> value_form("CVE-2028-93322"), value_form("6527 MiB"), value_form("Ann Lee")
    ('name:A-9-9', 'quantity:9 MiB', 'person')
    """
    kind = value_kind(value)
    if kind == "person":
        return kind
    if kind == "text":
        return None
    shape = re.sub(r"\d+", "9", value)
    if kind != "quantity":
        shape = re.sub(r"[a-z]+", "a", re.sub(r"[A-Z]+", "A", shape))
    return f"{kind}:{shape}"


#: Correction words too common to say, alone, that a value was corrected.
_WEAK_CORRECTION = _words("now new update updated rather typo -> =>") | frozenset(_ARROWS)


def strongly_corrects(text: str) -> bool:
    """Whether ``text`` says in so many words that an earlier value is void: a correction word
    (``_CORRECTION``) other than the common *now*, *new*, *rather*, *typo* (a kind of bug as
    often as a correction) or an arrow. A decision settles, it does not say what was wrong.

    >>> strongly_corrects("Ignore the earlier advisory"), strongly_corrects("the new test")
    (True, False)
    """
    return any(m.group().lower() not in _WEAK_CORRECTION for m in _CORRECTION.finditer(text))


def _old_value(
    new: Fact, old: Fact, worked_on: Callable[[str], bool] = lambda _value: False
) -> str | None:
    """What ``old`` said that ``new`` does not: its values missing from ``new``, else the right
    side of its key; ``None`` when they say the same, or when what differs is only things the
    conversation works on (``_worked_on``: a class, ``None``), or when neither has a key to
    say the rest of the old text was its value.

    >>> old = Fact("retry_limit = 3", "retry_limit", "tool", "decision", 1.0, 0, values=("3",))
    >>> _old_value(replace(old, text="retry_limit = 5", values=("5",)), old)
    '3'
    """
    changed = [b for b in old.values if any(_variants(a, b) for a in new.values)]
    # (a diff's removed line shows its own values replaced: ``-mode = "(was eager)"``)
    marked = [m.group(1) for m in _WAS_INLINE.finditer(old.text)]
    missing = changed or [v for v in old.values if v not in new.values] or marked
    if missing and all(worked_on(v) for v in missing):
        return None
    if not missing and old.values:
        return None  # it states every value the old one held: the same, said again
    missing = [v for v in missing if not worked_on(v)]
    if not missing and (new.key is None or old.key is None or new.source == "assistant"):
        # Two statements without a slot, or the agent thinking aloud (*`obj` is None* after
        # *`obj` is the parent instance*: two cases, not a correction): no value to show.
        return None
    assign = _ASSIGN.match(old.text)
    copula = _COPULA.search(old.text)
    label = _LABEL.match(old.text)
    if missing:
        value = ", ".join(missing[:2])
    elif assign is not None:
        value = assign.group(2).split(" #")[0]
    elif copula is not None:
        value = old.text[copula.end() :]
    elif label is not None:
        value = old.text[label.end() :]
    else:
        value = old.text
    value = re.sub(r"[()]", "", value).strip().rstrip(".")
    if not value or value in new.text:
        return None  # the new text names it (marked in place, or unchanged)
    return truncate_tokens(value, 16)


@dataclass(frozen=True, slots=True)
class Resolved:
    """What ``resolve`` found: the current facts (oldest first), the user messages a later user
    message replaced, and the values that are no longer current."""

    facts: list[Fact]
    superseded_users: frozenset[int]
    replaced_values: frozenset[str]


def resolve(facts: Sequence[Fact]) -> Resolved:
    """``facts`` (oldest first) with every replaced fact dropped and its replacement showing the
    old value; the indexes of user messages whose every keyed fact a later user message
    replaced; the values replaced facts held that their replacements do not. Linear in the
    number of facts (``_Index``)."""
    current, users, values = _resolve_rows(facts)
    return Resolved([_fact(row) for row in current], users, values)


def _resolve_rows(
    facts: Iterable[Fact], texts: MessageTexts | None = None
) -> tuple[list[_Row], frozenset[int], frozenset[str]]:
    """``resolve``, its current facts as ``_Row`` (oldest first); ``facts`` may be a generator:
    each is resolved as it comes and only the current ones are kept. ``texts`` are the
    messages' whole texts: how many name a value, and which named it first (a value an
    earlier message names in a line no fact was drawn from is an earlier value all the same)."""
    texts = texts if texts is not None else MessageTexts(())
    index = _Index()
    replaced_users: dict[int, int] = {}
    keyed_users: dict[int, int] = {}
    # Each value no longer current, and the number of the newest fact that replaced it; those
    # whose replacement is certain (declared, or the only value of the fact replaced) are
    # marked in older facts too (``_restale``).
    replaced_at: dict[str, int] = {}
    certain_at: dict[str, int] = {}
    # The values a fact shows replaced in its own text (declared, or a replacement's ``(was X)``):
    # named, they are marked in older facts even when short (``4190 is dead``).
    declared: set[str] = set()
    # What the facts so far name as a setting's owner (``qualifiers``): two facts naming two
    # of them and none in common are about two things.
    entities: set[str] = set()
    # How many facts so far name each thing (``anchors``): a name many facts share (a source
    # file every traceback prints) says nothing of which of them a later one corrects.
    anchor_counts: dict[str, int] = {}

    def replaced(values: Iterable[str], number: int, certain: bool = True) -> None:
        for value in values:
            if worked_on(value):
                continue
            for form in _pinned_forms(value):
                replaced_at[form] = number
                if certain:
                    certain_at[form] = number

    # The message that first stated each value: a later message naming it is naming an earlier
    # value (``superseded_in_line``).
    stated: dict[str, int] = {}
    # How many messages hold each value, and the last one: what many messages name is a thing
    # the conversation works on (``_worked_on``), never shown replaced outside the fact that
    # replaced it.
    naming: dict[str, int] = {}
    last_naming: dict[str, int] = {}

    def worked_on(value: str) -> bool:
        held = naming.get(value, 0)
        return _worked_on(
            value, held if held >= WORKED_ON_MESSAGES else max(held, texts.mentions(value))
        )

    def is_earlier(value: str, message: int) -> bool:
        """Whether a message before ``message`` named ``value``: a fact of it, or its text (a
        line no fact was drawn from), when the value may be a setting's (asked only of
        values beside another of their form: the text is read from the start)."""
        if stated.get(value, message) != message:
            return True
        if _setting_form(value) is None:
            return False
        first = texts.first(value)
        return first is not None and first < message

    # The facts of the message read last, with their numbers: a message naming an earlier value
    # beside a new one of its form ends on the current one (``ended_on``). Carried facts (-1)
    # come from many messages: they end nothing.
    this_message: list[tuple[int, Fact]] = []

    def message_ends() -> None:
        message = this_message[-1][1].message
        for value, number in ended_on(
            this_message,
            lambda v: is_earlier(v, message),
            in_code=lambda: texts.holds_code(message),
        ):
            replaced([value], number)
        last = this_message[-1][0]
        # Values a later revision replaced in this message are shown replaced in its lines too.
        said = [f for _n, f in this_message]
        revised = [
            v for v in revised_away(said, lambda v: is_earlier(v, message)) if not worked_on(v)
        ]
        if revised:
            replaced(revised, last)
            for n, _f in this_message:
                show_replaced(n, revised)
        # What the message passed through (a field's arrows), and what one of its lines
        # declares dropped (*Revert "bump to X"*): no longer current in any of its lines,
        # newest first as ``git log`` lists them (*bump to X* below the revert) or not.
        gone = [
            *passed_through(said),
            *(v for f in said for v in [*_dropped(f), *history_in_line(f)]),
        ]
        passed = [v for v in dict.fromkeys(gone) if not worked_on(v)]
        if passed:
            replaced(passed, last)
            show_replaced(last, passed)  # (its last line too: *(empty) -> X* under *X -> Y*)
        this_message.clear()

    def show_replaced(number: int, values: Sequence[str]) -> None:
        """Fact ``number``, if still current, with those of ``values`` it holds as ``(was X)``."""
        if number in index.facts:
            fact = index.get(number)
            held = [v for v in values if v in fact.values]
            if held:
                index.remove(number)
                index.add(number, _with_superseded(fact, held))

    for number, given in enumerate(facts):
        if this_message and this_message[-1][1].message != given.message:
            message_ends()
        if given.source == "user":
            keyed_users[given.message] = keyed_users.get(given.message, 0) + 1
        paired = _paired_forms(given.values)
        earlier = {
            v
            for v in given.values
            if stated.get(v, given.message) != given.message
            or (_setting_form(v) in paired and is_earlier(v, given.message))
        }
        if given.message != -1:
            this_message.append((number, given))
        for value in given.values:
            stated.setdefault(value, given.message)
            if last_naming.get(value) != given.message or given.message == -1:
                naming[value] = naming.get(value, 0) + 1
                last_naming[value] = given.message
        fact = given
        if earlier:
            shown = superseded_in_line(given.text, given.values, earlier)
            fact = _with_superseded(given, [v for v in shown if not worked_on(v)])
        was = fact.was
        newest = fact
        marked = [m.group(1) for m in _WAS_INLINE.finditer(fact.text)]
        declared.update(marked)
        replaced(marked, number)
        entities.update(qualifiers(fact.text))
        olds = [n for n in index.candidates(fact) if _replaces(fact, index.get(n), entities)]
        for name in fact.names:
            anchor_counts[name] = anchor_counts.get(name, 0) + 1
        if not olds:
            slot = _slot_of(index, fact, entities)
            if slot is None:
                slot = _anchored_slot(index, fact, anchor_counts, entities)
            olds = [slot] if slot is not None else []
        for other in olds:
            old = index.get(other)
            # (a later message that states every value the user's did, beside others, restates
            # it: the user's words stay current, *the API is at X* after *served at X*)
            restated = bool(old.values) and set(old.values) <= set(fact.values)
            if old.source == "user" and old.message != -1 and not restated:
                replaced_users[old.message] = replaced_users.get(old.message, 0) + 1
            # Of an old fact with several values, which one changed is not certain.
            replaced((v for v in old.values if v not in fact.values), number, len(old.values) == 1)
            # An old value the new fact still names beside its new one (``2026-05-01 is
            # cancelled, ship 2026-05-08``) is shown replaced where it stands.
            named = {
                b for _a, b in _changed(newest, old) if b in newest.values and not worked_on(b)
            }
            if named and (_corrects(newest.text) or _contrasts(newest, named)):
                text = newest.text
                for value in sorted(named, key=len, reverse=True):
                    text = mark_replaced(text, value)
                replaced(named, number)
                values = tuple(v for v in newest.values if v not in named)
                newest = replace(newest, text=text, values=values)
            if was is None and _slot_pair(newest, old):
                was = _old_value(newest, old, worked_on) or old.was
            # The new value of a fact worth keeping is worth keeping: it takes the old one's
            # weight, and its place in the list, when it had less.
            newest = replace(
                newest,
                weight=max(newest.weight, old.weight),
                listed=newest.listed or old.listed,
            )
            index.remove(other)
        index.add(number, replace(newest, was=was))
    if this_message:
        message_ends()
    users = frozenset(m for m, n in replaced_users.items() if n >= keyed_users.get(m, 0))
    # (a value named by more messages after it was replaced is a thing all the same)
    for value in [v for v in replaced_at if worked_on(v)]:
        del replaced_at[value]
        certain_at.pop(value, None)
    current = [_restale(n, index.facts[n], certain_at, declared) for n in sorted(index.facts)]
    # A value stated again after it was replaced is current again.
    for number, row in zip(sorted(index.facts), current, strict=True):
        for value in _fact(row).values:
            if replaced_at.get(value, number) < number:
                del replaced_at[value]
    return current, users, frozenset(replaced_at)


#: Value kinds of the code a session works on (a function or variable, a file): an agent names
#: an earlier one beside a new one all the time, and that replaces nothing. So does a class
#: (a ``name`` in CamelCase); a kebab-case name (``eu-north-4b``) may be a setting's.
_CODE_KINDS = frozenset({"identifier", "file"})


@functools.lru_cache(maxsize=16_384)  # asked of every value of every fact, most of them often
def _setting_form(value: str) -> str | None:
    """The form of ``value`` (``value_form``) when it may be a setting's: not code's
    (``_CODE_KINDS``, a class).

    >>> _setting_form("eu-north-4b"), _setting_form("FooHandler"), _setting_form("app/io.py")
    ('name:a-a-9a', None, None)
    """
    form = value_form(value)
    if form is None:
        return None
    kind = form.split(":", 1)[0]
    if kind in _CODE_KINDS or (kind == "name" and not value.islower()):
        return None
    return form


def _two_of_a_form(line: str) -> bool:
    """Whether ``line`` names two values of one setting form (``_paired_forms``); read only in
    lines with two runs of digits, where such pairs stand."""
    if len(_DIGITS.findall(line)) < 2:
        return False
    return bool(_paired_forms(_values(line, reference_kinds(line))))


def _paired_forms(values: Iterable[str]) -> set[str]:
    """The setting forms (``_setting_form``) two or more of ``values`` share."""
    forms = [f for f in map(_setting_form, values) if f is not None]
    return {f for f in forms if forms.count(f) > 1}


def ended_on(
    facts: Sequence[tuple[int, Fact]],
    earlier: Callable[[str], bool],
    *,
    in_code: Callable[[], bool] = lambda: False,
) -> list[tuple[str, int]]:
    """The earlier values one message shows replaced by how it ends, with its last fact's
    number. Of each value form (``_setting_form``): the one earlier value ``X`` the message
    names beside values of that form no earlier message named, when the last of them it names
    is a new one, ``Y``, and the message sets ``Y`` over ``X`` by its layout:

    - a closing line that names ``Y`` alone of the form, after lines naming ``X`` and ``Y``
      (two candidates in a table, then *Final: 22 GiB*; a poll, then its result);
    - ``X`` and ``Y`` under the keys of one field's history (*previous_value: X* then *value:
      Y*; *Original: X* then *Updated: Y*; ``_history_pair``);
    - of any form but code's and a person's, ``X`` in a statement of its own and ``Y`` given
      after it as what a source says (``_given_after``).

    No word that says it corrects is asked for. A message naming two earlier values of one
    form, or ending on the old one, replaces nothing; nor does one naming things side by side
    (*numpy 1.26.4 works with pandas 2.2.1, and pandas 2.2.1 is the newest*: one line; ``auth:
    X`` and ``billing: Y``: two keys); nor one naming code. ``facts`` are the message's facts
    with their numbers; ``earlier`` says whether an earlier message named a value; ``in_code``
    whether the message holds code (``_given_after``; asked only of two lines of one key, so
    the message's text is scanned only then).

    >>> old = Fact("previous_value: s3://kelp-07", "previous_value", "tool", "decision", 1.0, 1,
    ...            values=("s3://kelp-07",))
    >>> new = replace(old, text="value: s3://kelp-12", key="value", order=2,
    ...               values=("s3://kelp-12",))
    >>> ended_on([(1, old), (2, new)], lambda value: value == "s3://kelp-07")
    [('s3://kelp-07', 2)]
    """
    # each form's values where the message names them: (fact's place, value, fact)
    seen: dict[str, list[tuple[int, str, Fact]]] = {}
    for place, (_number, fact) in enumerate(facts):
        for value in fact.values:
            form = _setting_form(value)
            if form is not None:
                seen.setdefault(form, []).append((place, value, fact))
    out: list[tuple[str, int]] = []
    for named in seen.values():
        if len({value for _place, value, _fact in named}) < 2:
            continue  # one value: nothing beside it (most forms of most messages)
        olds = [n for n in named if earlier(n[1])]
        if len({value for _place, value, _fact in olds}) != 1:
            continue
        last, new, new_fact = max(named, key=lambda n: n[0])
        if earlier(new):
            continue
        first_old, old, old_fact = min(olds, key=lambda n: n[0])
        closing = (
            all(value == new for place, value, _fact in named if place == last)
            and any(value == new for place, value, _fact in named if place < last)
            and first_old < last
        )
        if closing or (
            new_fact is not old_fact and _history_pair(_label(old_fact), _label(new_fact))
        ):
            out.append((old, facts[-1][0]))
    ended = {old for old, _number in out}
    for old, _new in _given_after(facts, earlier, in_code=in_code):
        if old not in ended:
            out.append((old, facts[-1][0]))
    return out


def _given_form(value: str) -> str | None:
    """The form (``value_form``) of a value a message may go back to and replace: any but
    code's (``_CODE_KINDS``, a class in CamelCase) and a person's (*Ann reviewed it. Bob will
    merge.*: two people, two roles)."""
    form = value_form(value)
    if form is None or form == "person" or _CAMEL.fullmatch(value):
        return None
    return None if form.split(":", 1)[0] in _CODE_KINDS else form


def _given_after(
    facts: Sequence[tuple[int, Fact]],
    earlier: Callable[[str], bool],
    *,
    in_code: Callable[[], bool] = lambda: False,
) -> list[tuple[str, str]]:
    """The earlier values a message names in statements of their own and then replaces, with
    the value that replaces each: a message that names two values of one form
    (``_given_form``), an earlier one first and a new one in a later statement that does not
    name the old (*Your notes say X for the rotor; the signed form says Y*; *The X I quoted
    came from a cached copy. Reloaded, it shows Y*; *In the article as printed it appears as
    X. It is Y.*), or a later line of the same key (``cap = "1532MB"`` below ``cap =
    "3866MB"``). No word that says it corrects is asked for: the message goes back to a value
    to give another. Lines of a listing or of code name values side by side (``ls -l``'s
    times): only prose and lines of one key (in a message that holds no code, ``in_code``)
    count. Not when the new value's statement says it adds (*also*, *too*), sets it beside the
    old (*whereas*, *while*) or names another of a thing the old one's names (*the web tier*,
    *the batch tier*: ``_modifiers``)."""
    # each statement, whether its line is prose (a listing's or code's lines name values side
    # by side: ``ls -l``'s times, a doctest's units), and its fact's key
    forms: dict[str, set[str]] = {}
    for _number, fact in facts:
        for value in fact.values:
            form = _given_form(value)
            if form is not None:
                forms.setdefault(form, set()).add(value)
    if not any(len(values) == 2 for values in forms.values()):
        return []  # (most messages)
    statements = [
        (piece, _reads_as_prose(fact.text), fact.key)
        for _n, fact in facts
        for piece in split_statements(_STATEMENT_END, fact.text)
    ]
    out: list[tuple[str, str]] = []
    for values in forms.values():
        if len(values) != 2:
            continue
        olds = [v for v in values if earlier(v)]
        if len(olds) != 1:
            continue
        (old,) = olds
        (new,) = values - {old}
        at_old = [at for at, (piece, *_rest) in enumerate(statements) if _names(piece, old)]
        at_new = [at for at, (piece, *_rest) in enumerate(statements) if _names(piece, new)]
        if not at_old or not at_new or max(at_old) >= min(at_new):
            continue
        said, prose, key = statements[min(at_new)]
        before, old_prose, old_key = statements[max(at_old)]
        # (two lines of one key, the later one's value is the one that holds)
        # (not in code: two functions may give one name two values)
        laid_out = (
            key is not None and old_key is not None and _same_key(key, old_key) and not in_code()
        )
        if not ((prose and old_prose) or laid_out) or _ADDS.search(said) or _BESIDE.search(said):
            continue
        if _apart(*(_things_named(text, value) for text, value in ((said, new), (before, old)))):
            continue
        # (prose gives the new value as what a source says or as the old one's again: it
        # refers back, *It is Y*, or reports, *the signed form says Y*; two statements of one
        # frame but a word, *hours start at X* / *hours end at Y*, are two things)
        if not laid_out and (
            not _GOES_ON.search(said.replace(new, " ")) or _parallel(before, old, said, new)
        ):
            continue
        out.append((old, new))
    return out


def _parallel(first: str, value: str, second: str, other: str) -> bool:
    """Whether two statements say the same but a word or two, their values aside (*The
    dashboard shows the median at X* and *It shows the worst at Y*): two things side by
    side."""
    a = re.findall(r"[a-z0-9]+", first.replace(value, " ").lower())
    b = re.findall(r"[a-z0-9]+", second.replace(other, " ").lower())
    shared = sum((Counter(a) & Counter(b)).values())
    return shared >= 2 and max(len(a), len(b)) - shared <= 3


def _reads_as_prose(line: str) -> bool:
    """Whether ``line`` is prose: words, not code, not an assignment (``path = "/srv"``)."""
    return _is_prose(line) and not _is_code(line) and not _CODE_ASSIGN.match(line)


#: Verbs that frame a value, saying nothing of what it is about (*the worker has X*).
_FRAME_VERBS = _words("has have had are was were get gets got will would")


def _things_named(statement: str, value: str) -> dict[str, set[str]]:
    """The qualified words of ``statement`` (``_statement_modifiers``), but verbs that frame
    or report a value (*the signed order says*: no *order* kind of saying)."""
    found = _statement_modifiers(statement, value)
    return {head: words for head, words in found.items() if head not in _FRAMING}


#: A statement that goes on about what the one before named: it refers back to it (*It is
#: Y*) or says what a source gives (*the signed form says Y*, *it shows Y*).
_GOES_ON = re.compile(
    r"^\W*(?:it|that|this)\b|\b(?:says?|said|shows?|showed|reads|gives?|gave|lists|states|"
    r"puts|carries|records)\b",
    re.IGNORECASE,
)

#: The stems of verbs that frame or report a value (``_FRAME_VERBS``, ``_GOES_ON``'s).
_FRAMING = frozenset(
    map(_word_stem, _FRAME_VERBS | _words("says said shows showed reads gives gave lists states"))
)

#: Words that set a value beside another, not in its place.
_BESIDE = re.compile(r"\b(?:whereas|while|alongside|besides|beside|apart from)\b", re.IGNORECASE)


def _names(text: str, value: str) -> bool:
    """Whether ``text`` names ``value`` as a whole token (not ``v1.0`` in ``v1.0.1``; a
    sentence's full stop after it is no part of it)."""
    for start, end in _occurrences(text, value):
        before = text[start - 1] if start else " "
        after = text[end : end + 2]
        if _VALUE_CHAR.match(before):
            continue
        if after and _PATH_CHAR.match(after[0]):
            continue
        if after[:1] == "." and len(after) > 1 and _VALUE_CHAR.match(after[1]):
            continue
        return True
    return False


#: A revision's number, after the name of what it revises when one stands right before it
#: (*runbook rev 4*, ``rev 2  12:32:54  maren  34.20.422``).
_REVISION = re.compile(
    r"(?:\b([A-Za-z][\w-]*)\s+)?\b(?:rev|revision)\.?\s*#?(\d{1,5})\b", re.IGNORECASE
)


def revised_away(facts: Sequence[Fact], earlier: Callable[[str], bool]) -> list[str]:
    """The earlier values one message's ``facts`` state under an older revision than a new
    value of their kind, of the same document (``_revisions``): a document's or a setting's
    history by revision number, in any order (``rev 2 ... 34.20.422`` above ``rev 1 ...
    34.19.294``; *Runbook rev 4 is out. The date there reads X; rev 3 had Y*). Values under no
    revision number are not judged, nor revisions of two documents (*design doc rev 3*, *the
    runbook rev 2*).

    >>> a = Fact("rev 2 12:32 ann 4.2.1", None, "tool", "value", 1.0, 1, values=("4.2.1",))
    >>> b = replace(a, text="rev 1 10:18 bo 4.1.9", values=("4.1.9",))
    >>> revised_away([a, b], lambda v: v == "4.1.9"), revised_away([b, a], lambda v: False)
    (['4.1.9'], [])
    """
    revisions = _revisions(facts)
    if len({number for _name, number in revisions.values()}) < 2:
        return []  # (most messages name no revision)
    # of one kind (``value_kind``), whatever the notation: a revision may write a date anew
    stated = [
        (value, value_kind(value), name, number, earlier(value))
        for value, (name, number) in revisions.items()
        if _setting_form(value) is not None
    ]
    fresh = [(kind, name, number) for _v, kind, name, number, old in stated if not old]
    return [
        value
        for value, kind, name, number, old in stated
        if old
        and any(
            k == kind and n > number and (name is None or other is None or name == other)
            for k, other, n in fresh
        )
    ]


def _revisions(facts: Sequence[Fact]) -> dict[str, tuple[str | None, int]]:
    """For each value of one message's ``facts``, the revision it is stated under: the last
    revision named before it in its line, else in the message's lines before (*Rev 4 is out.
    The date there reads X; rev 3 had Y*: X under 4, Y under 3), with the name of the document
    when one stands before the number (lower case; ``None`` for none). A value under no
    revision is left out; a value stated twice keeps its first."""
    out: dict[str, tuple[str | None, int]] = {}
    carried: tuple[str | None, int] | None = None
    for fact in facts:
        marks = [(m.start(), _revision_of(m)) for m in _REVISION.finditer(fact.text)]
        for value in fact.values:
            at = fact.text.find(value)
            before = [mark for start, mark in marks if start < at]
            revision = before[-1] if before else carried
            if revision is not None and value not in out:
                out[value] = revision
        if marks:
            carried = marks[-1][1]
    return out


def _revision_of(match: re.Match[str]) -> tuple[str | None, int]:
    name = (match.group(1) or "").lower()
    named = name and name not in _STOP and name not in _FUNCTION_WORDS and name not in _PRONOUNS
    return (name if named else None), int(match.group(2))


#: An arrow right before a value (``-> X``, ``=> "X"``, ``→ X``) and right after one.
_ARROW_BEFORE = re.compile(r"(?:-+>|=>|[" + _ARROWS + r"])\s*[\"'`]?$")
_ARROW_AFTER = re.compile(r"^\)?[\"'`]?\s*(?:-+>|=>|[" + _ARROWS + r"])")
_ANY_ARROW = re.compile(r"->|=>|[" + _ARROWS + r"]")


def passed_through(facts: Iterable[Fact]) -> list[str]:
    """The values one message shows changed to and changed from, each by an arrow (``A -> B``
    and ``(empty) -> A``, a field's history in any order): a value the field passed through,
    no longer current whichever line comes last. Only values that may be a setting's
    (``_setting_form``: an arrow between code names is code).

    >>> a = Fact("x: OPS-12 -> OPS-34", "x", "tool", "value", 1.0, 1, values=("OPS-12", "OPS-34"))
    >>> b = replace(a, text="x: (empty) -> OPS-12", values=("OPS-12",))
    >>> passed_through([a, b]), passed_through([a])
    (['OPS-12'], [])
    """
    sources: set[str] = set()
    targets: set[str] = set()
    for fact in facts:
        if _ANY_ARROW.search(fact.text) is None:
            continue  # (most lines of most messages)
        # (an arrow's old side may be marked already: ``(was A) -> B``)
        for value in dict.fromkeys([*fact.values, *_dropped(fact)]):
            if _setting_form(value) is None:
                continue
            for m in re.finditer(re.escape(value), fact.text):
                if _ARROW_BEFORE.search(fact.text, 0, m.start()):
                    targets.add(value)
                if _ARROW_AFTER.match(fact.text[m.end() :]):
                    sources.add(value)
    return sorted(sources & targets)


#: Words a field's history labels its old and new value with (*previous_value*, *Original*,
#: *Updated*, *From*, *To*), stemmed: two keys that differ by these alone are one field.
#: The keys a field's history gives its old value and its new one (*previous_value*, *Updated*),
#: stemmed; ``from`` and ``to`` only as the labels of two lines (``_history_pair``), never of one
#: line's record (``history_in_line``: *copy from=a to=b* copies).
_OLD_SIDE = frozenset(map(_word_stem, _words("previous prev old original orig before was")))
_NEW_SIDE = frozenset(map(_word_stem, _words("new updated after now current curr")))
_HISTORY_WORDS = (_OLD_SIDE | _NEW_SIDE | frozenset(map(_word_stem, _words("from to")))) - {
    "curr"  # (read in a record's line only)
}


#: A key and its value in a one-line record (``prev=X``, ``current: Y``).
_INLINE_PAIR = re.compile(r"(?<![\w.-])([A-Za-z]+)\s*[=:]\s*\"?([^\s\",;]+)")


def history_in_line(fact: Fact) -> list[str]:
    """The values one line gives as a field's old value beside its new one, under the keys of a
    record (``event=setting.rotated prev=stab/a-44 current=stab/b-78``, ``old: 40 new: 64``):
    no longer current. Only values of ``fact`` and of one form on both sides.

    >>> f = Fact("key=branch prev=st/a-4 current=st/b-7", "key", "tool", "value", 1.0, 1,
    ...          values=("st/a-4", "st/b-7"))
    >>> history_in_line(f), history_in_line(replace(f, text="from=st/a-4 to=st/b-7"))
    (['st/a-4'], [])
    """
    if len(fact.values) < 2:
        return []
    olds, news = [], []
    for key, value in _INLINE_PAIR.findall(fact.text):
        stem = _word_stem(key.lower())
        if value in fact.values and (form := _setting_form(value)) is not None:
            if stem in _OLD_SIDE:
                olds.append((value, form))
            elif stem in _NEW_SIDE:
                news.append((value, form))
    return [v for v, form in olds if any(f == form and n != v for n, f in news)]


def _label(fact: Fact) -> str | None:
    """``fact``'s key, or the label its line opens with (``New:``, which keys nothing)."""
    if fact.key is not None:
        return fact.key
    label = _LABEL.match(fact.text)
    return label.group(1) if label is not None else None


def _history_pair(old: str | None, new: str | None) -> bool:
    """Whether keys ``old`` and ``new`` label one field's old and new value: their words other
    than history words (``_HISTORY_WORDS``) are the same, and one of them has one.

    >>> _history_pair("previous_value", "value"), _history_pair("Original", "Updated")
    (True, True)
    >>> _history_pair("path", "log_path"), _history_pair("auth", "billing")
    (False, False)
    """
    if not old or not new:
        return False
    a, b = set(_key_words(old.lower())), set(_key_words(new.lower()))
    return a - _HISTORY_WORDS == b - _HISTORY_WORDS and bool((a | b) & _HISTORY_WORDS)


def _with_superseded(fact: Fact, values: Sequence[str]) -> Fact:
    """``fact`` with ``values`` shown as ``(was value)`` where they stand and no longer among
    its values (the ``(was ...)`` marks are read back as replaced by ``_resolve_rows``)."""
    if not values:
        return fact
    text = mark_values(fact.text, values)
    kept = tuple(v for v in fact.values if f"(was {v})" not in text)
    return replace(fact, text=text, values=kept)


#: A pin of a package or an image: ``name@1.2.3``, ``name==1.2.3``, ``image:1.4.2``.
_PIN = re.compile(r"^[\w./-]+(?:@|==|:)(v?\d[\w.+-]*)$")


def _pinned_forms(value: str) -> tuple[str, ...]:
    """``value``, and the version it pins when it is a pin (``pkg@15.86.286``): a replaced pin
    replaces its version wherever that is named alone (*Bump pkg to 15.86.286*).

    >>> _pinned_forms("pkg@15.86.286"), _pinned_forms("OPS-1")
    (('pkg@15.86.286', '15.86.286'), ('OPS-1',))
    """
    pin = _PIN.match(value)
    if pin is None or not _distinctive(pin.group(1)):
        return (value,)
    return (value, pin.group(1))


def _restale(
    number: int, row: _Row, replaced_at: Mapping[str, int], declared: Collection[str] = ()
) -> _Row:
    """``row`` (fact ``number``) with the values a newer fact replaced shown as replaced: a fact
    no later fact replaced by subject may still state a value that one replaced elsewhere (the
    prose that set it, beside the ``key = value`` line a diff replaced); a superseded value is
    never shown as current. Only distinctive values (``_distinctive``): a bare ``3`` replaced
    in one setting says nothing of another ``3``."""
    fact = _fact(row)
    named = {*fact.values, *(t.rstrip(".,;:)") for t in _TOKEN.findall(fact.text))}
    stale = [
        v
        for v in named
        if _replaced_after(replaced_at, v) > number
        and (_distinctive(v) or (v in declared and len(v) >= 3))
        and f"(was {v}" not in fact.text
    ]
    if not stale:
        return row
    text = mark_values(fact.text, stale)
    values = tuple(v for v in fact.values if v not in stale)
    return _row(replace(fact, text=text, values=values))


_TOKEN = re.compile(r"[\w./@#+-]+")

#: How many messages may name a value before it is a thing the conversation works on (a class
#: the agent keeps reading, a file, a function) rather than one setting's value: a correction
#: names its old value once, beside the statement it corrects.
WORKED_ON_MESSAGES = 3


def _worked_on(value: str, messages: int) -> bool:
    """Whether ``value``, held by facts of ``messages`` messages, is a thing the conversation
    works on rather than a value one fact replaces: named by many messages (a class, a file),
    or a literal (``None``, ``true``) that means something only beside its own key. Its fact
    may still be replaced; the value is never marked ``(was ...)`` in any text: marked in every
    line that named it, it turned *if `x` is `None`* into *if `x` is `(was None)`*.

    >>> _worked_on("ModelAdmin", 5), _worked_on("None", 1), _worked_on("eu-west-3", 2)
    (True, True, False)
    """
    return messages >= WORKED_ON_MESSAGES or value.lower() in _LITERALS


def _replaced_after(replaced_at: Mapping[str, int], value: str) -> int:
    """When ``value`` was replaced (-1: never), also when it was named capitalised, as a
    sentence opens (*Ligax_on is cancelled* replaces ``ligax_on``)."""
    return max(replaced_at.get(value, -1), replaced_at.get(value[:1].upper() + value[1:], -1))


def _distinctive(value: str) -> bool:
    """Whether ``value`` names one thing wherever it stands: not a short number. A version of
    three parts (``15.86.286``) or a number of five digits or more (a port, an id) is one.

    >>> _distinctive("3"), _distinctive("2026"), _distinctive("15.86.286"), _distinctive("61334")
    (False, False, True, True)
    """
    if len(value) < 5:
        return False
    if not re.fullmatch(r"[\d.,\s]+", value):
        return True
    return value.count(".") >= 2 or sum(c.isdigit() for c in value) >= 5


# -- the ledger -----------------------------------------------------------------------------------


def build_ledger(
    messages: Sequence[Message],
    *,
    previous: Iterable[str] = (),
    users: Sequence[str] = (),
    later: Sequence[Message] = (),
    max_facts: int = 60,
    per_message: int = PER_MESSAGE,
    sources: frozenset[Source] = frozenset({"assistant", "tool", "carried"}),
    weights: Mapping[str, float] = WEIGHTS,
) -> Ledger:
    """The ledger of ``messages``: ``previous`` summary entries carried in, ``later`` messages
    (the verbatim tail that follows the summary) read only for what they replace, at most
    ``max_facts`` facts of ``sources`` ranked by the signals (``signals.combine`` with
    ``weights``; ``signals.without`` removes some, for an ablation).

    User facts are not listed by default (the summary quotes the user's words); they still key
    corrections, and ``superseded_users`` names the user messages a later one replaced: their
    index in ``messages``, or ``-2 - i`` for the i-th of ``users`` (the user entries a previous
    summary carried; those already marked are skipped).
    """
    said: list[Fact] = []
    for i, entry in enumerate(users):
        if entry.startswith(SUPERSEDED_MARK):
            continue
        for fact in extract_facts([Message.user(entry)], per_message=per_message, weights=weights):
            said.append(replace(fact, message=-2 - i, order=len(said)))
    previous_entries = list(previous)
    # A code name is rare when one carried entry or message names it: a name that several
    # entries or the new messages repeat is the code at hand, however rare it was once.
    names = _name_counts(messages)
    in_entries = _name_counts([Message.assistant(e) for e in previous_entries])
    carried = [
        replace(f, order=len(said) + f.order)
        for f in parse_facts(
            previous_entries,
            weights=weights,
            names={n: names.get(n, 0) + in_entries.get(n, 0) for n in {*names, *in_entries}},
        )
    ]
    carried = [*said, *carried]
    current, superseded, replaced_values = _resolve_rows(
        _candidates(
            carried, messages, later, per_message=per_message, weights=weights, names=names
        ),
        MessageTexts([*messages, *later], [*previous_entries, *users]),
    )
    # Ranked as rows: only the ``max_facts`` best become ``Fact`` objects (see ``_Row``); a
    # carried user entry's facts count too (``message`` -2 - i).
    listed = [row for row in current if row[_LISTED] and row[_MESSAGE] < len(messages)]

    def best(rows: Iterable[_Row]) -> tuple[Fact, ...]:
        # of equal weight, the newest first
        ranked = sorted(rows, key=lambda row: (row[_WEIGHT], row[_ORDER]), reverse=True)
        return tuple(_fact(row) for row in ranked[:max_facts])

    # The user's own facts, unless listed already: those a clipped entry no longer shows.
    user_facts = best(r for r in listed if r[_SOURCE] == "user") if "user" not in sources else ()
    return Ledger(
        best(r for r in listed if r[_SOURCE] in sources),
        superseded,
        frozenset(v for v in replaced_values if _names_one_thing(v)),
        user_facts,
    )


#: A line of a program (a definition, a block's opening or closing brace, a return): not of a
#: settings file, a shell session or a REPL.
_PROGRAM_LINE = re.compile(
    r"^[ \t]*(?:(?:async )?def |class |function |func |fn |public |private |protected |return\b"
    r"|(?:if|for|while) .*:$|[{}][ \t]*$)",
    re.MULTILINE,
)
#: A line that opens a section or a file of its own (``[prod]``, ``# staging``, ``==> a <==``):
#: two lines of one key on either side of it are two places.
_SECTION_LINE = re.compile(r"^[ \t]*(?:\[[^\]\n]+\][ \t]*$|#|==>|---)", re.MULTILINE)


class MessageTexts:
    """What ``messages`` say (text and tool results, up to ``MAX_SCAN_CHARS`` of each), after
    carried summary ``entries`` (each a text of its own): how many name a value, counting tool
    calls' arguments too (``mentions``, up to ``WORKED_ON_MESSAGES``), and which message first
    names it as a whole token, not counting commands (``first``: a command names what it is
    about to read, which is no earlier statement of it). Read on the first question, each answer
    kept.

    >>> texts = MessageTexts([Message.user("use ModelAdmin"), Message.user("ModelAdmin?")])
    >>> texts.mentions("ModelAdmin"), texts.mentions("eu-west-3"), texts.first("ModelAdmin")
    (2, 0, 0)
    >>> MessageTexts([Message.user("keep 14 GiB")]).first("4 GiB") is None
    True
    """

    def __init__(self, messages: Sequence[Message], entries: Sequence[str] = ()) -> None:
        self._messages = messages
        self._entries = entries
        self._said: list[str] = []  # the entries, then each message's text and results
        self._calls: list[str] = []  # each text's tool calls' arguments
        self._mentions: dict[str, int] = {}
        self._first: dict[str, int | None] = {}

    def _read(self) -> None:
        if self._said or not (self._entries or self._messages):
            return
        self._said.extend(self._entries)
        self._calls.extend("" for _ in self._entries)
        for m in self._messages:
            self._said.append(
                "\n".join([m.text, *(r.text for r in m.tool_results)])[:MAX_SCAN_CHARS]
            )
            self._calls.append("\n".join(c.arguments for c in m.tool_calls)[:MAX_SCAN_CHARS])

    def mentions(self, value: str) -> int:
        """How many texts name ``value`` (their tool calls too), up to ``WORKED_ON_MESSAGES``."""
        found = self._mentions.get(value)
        if found is None:
            self._read()
            found = 0
            for said, calls in zip(self._said, self._calls, strict=True):
                found += value in said or value in calls
                if found >= WORKED_ON_MESSAGES:
                    break  # enough to call it a thing the conversation works on
            self._mentions[value] = found
        return found

    def holds_code(self, message: int) -> bool:
        """Whether message ``message``'s text has a line of a program (``_PROGRAM_LINE``) or
        opens sections (``_SECTION_LINE``): its lines of one name are code's, or of two
        places, not one settings file's."""
        self._read()
        at = len(self._entries) + message
        if message < 0 or not 0 <= at < len(self._said):
            return False  # (carried entries are read one by one: no layout across them)
        said = self._said[at]
        return _PROGRAM_LINE.search(said) is not None or _SECTION_LINE.search(said) is not None

    def first(self, value: str) -> int | None:
        """The index of the first message whose text names ``value`` as a whole token (-1: the
        carried entries, which come before every message and every carried user entry), or
        ``None``."""
        if value not in self._first:
            self._read()
            whole = re.compile(rf"(?<![\w.@/-]){re.escape(value)}(?![\w@/-]|\.\w)")
            carried = len(self._entries)
            self._first[value] = next(
                (
                    max(-1, k - carried)
                    for k, said in enumerate(self._said)
                    if value in said and whole.search(said) is not None
                ),
                None,
            )
        return self._first[value]


def _names_one_thing(value: str) -> bool:
    """Whether ``value`` can be shown replaced in any text it stands in: not a number of one to
    three digits or a token of one or two characters (a replaced ``1`` would be marked in *1 to
    change* and in *1 line omitted*).

    >>> [_names_one_thing(v) for v in ("1", "443", "8443", "eu-1", "eu")]
    [False, False, True, True, False]
    """
    return (len(value) >= 3 and not value.isdigit()) or len(value) >= 4


def _candidates(
    carried: Sequence[Fact],
    messages: Sequence[Message],
    later: Sequence[Message],
    *,
    per_message: int,
    weights: Mapping[str, float],
    names: Mapping[str, int] | None = None,
) -> Iterator[Fact]:
    """Every candidate fact in order: ``carried``, then those of ``messages`` (``names``: their
    ``_name_counts``), then those of ``later`` (their ``message`` past the end of
    ``messages``), numbered on from one another; one message at a time, so that the caller
    holds only the facts it keeps."""
    yield from carried
    fresh = 0
    for fact in _iter_facts(
        messages, per_message=per_message, start_order=len(carried), weights=weights, names=names
    ):
        fresh += 1
        yield fact
    start = len(carried) + fresh
    for fact in _iter_facts(later, per_message=per_message, start_order=start, weights=weights):
        yield replace(fact, message=len(messages) + fact.message)


def fit_ledger(ledger: Ledger, max_tokens: int) -> list[str]:
    """The ledger's lines (oldest first) within about ``max_tokens``: the lowest-ranked facts
    are left out first."""
    chosen: list[Fact] = []
    used = 0
    for fact in ledger.facts:  # best first
        cost = estimate_text_tokens(fact.render()) + 2
        if used + cost > max_tokens:
            continue
        chosen.append(fact)
        used += cost
    return [f.render() for f in sorted(chosen, key=lambda f: f.order)]


#: The share of a model summary's ceiling kept for the ledger attached to it.
LEDGER_SHARE = 0.2


__all__ = [
    "CARRIED_MARGIN",
    "FACT_TOKENS",
    "LEDGER_SHARE",
    "MIN_CONTENT",
    "SUPERSEDED_MARK",
    "Fact",
    "Ledger",
    "Resolved",
    "build_ledger",
    "declared_old",
    "extract_facts",
    "fit_ledger",
    "key_of",
    "mark_replaced",
    "mark_values",
    "parse_facts",
    "resolve",
    "superseded_in_line",
    "ungrouped_facts",
    "value_kind",
]
