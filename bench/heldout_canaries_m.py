r"""Held-out canary generator, set M: facts and wording written blind, for ``bench/retention.py``.

Lab note
========

Why
---
The retention benchmark plants facts ("canaries") into recorded agent sessions, compacts five
times and checks which facts survive and whether a corrected value is still shown as current.
A summarizer tuned against one set of canaries can learn that set's words. This is the
thirteenth set, written without looking at the summarizer or at any earlier set's facts, so its
templates, surfaces and ways of correcting are nobody's tuning target. Its emphasis: (1) rules
said in passing (a prohibition dropped as "oh and don't touch ...", a rule in a review comment,
in a pasted procedure step, in an error message's hint); (2) facts inside long pasted user
content (a mail thread, a log, a stack trace, a config, a transcript), one line among many;
(3) corrections that name only the new value (a change of plan, a later state line, a message
relayed by someone else, a later config dump, a revert "back to", a bare restatement, "ignore
my earlier message"), with some that name the old value too. Run it with
``bench/retention.py --generator bench/heldout_canaries_m.py --seed S``.

Evaluation seeds
----------------
Drawn with ``secrets.randbelow(9_000_000) + 1_000_000`` before any code was written: 4898541,
6107962, 1728116 (``EVALUATION_SEEDS``). I never ran the generator or the benchmark with them;
no test does (the tests use 7, 29, 613, 52, 1999, 1234 and 47, and check they differ).

What I read
-----------
- ``bench/retention.py``, the interface only: the listing of its top-level names and constants
  (``grep -n "^def \|^class \|^[A-Z_]* ="``, which shows lines such as ``DEFAULT_DATA``,
  ``WINDOW = 16_384``, ``CYCLES = 5``, ``TARGET = 0.95``, ``PLACEMENTS``, ``METHODS``, ``SHORT``);
  lines 170-470 (``Canary`` to ``REPLACED_MARK`` / ``_WAS`` / ``_WAS_VALUE``); lines 500-620
  (``strip_replaced``, ``presents_as_current``, ``KeepIndex``, ``Score``, ``score_context``;
  the range ran on into the ``# -- token ruler`` heading and the first docstring line of
  ``class Ruler``, "The independent size of a context: the local provider's o200k count of the
  context as"); lines 1016-1100, the first half of ``aggregate`` (kinds, styles and templates
  tallied as they come, staleness tallied by the correcting canary's template, ``r.ambiguous``
  counted); from ``main`` (lines 1892-2000) only the lines matching ``add_argument`` or
  ``parser.error`` (a grep), which show the single-line options (``--data``, ``--limit``,
  ``--jobs``, ``--no-langchain``), the opening of the multi-line ones, and the error texts
  ("--limit must be >= 1", "--canary-count must be >= 6", "--seed generates the canaries: not
  with --canaries", "--generator makes the canaries: not with --canaries", "--generator ...: no
  such file").
- ``bench/heldout_canaries_l.py``: its module docstring (lab note) only, read as a string; the
  listing of its top-level names (same grep), which also shows one-line constant values because
  they match the pattern: ``_ONSETS`` (its first line), ``_PLAIN``, ``_DOUBLE = ("aa", "ii",
  "uu")``, ``_CODAS``, the first line of ``_MONTHS`` and of ``_GIVEN`` (Ines, Tobiah,
  Marguerite, Oskar, Leontyne, Ravi, Solveig, Kwame) and of ``_NAMES`` (Priya, Tomasz, Hana,
  Diego, Femi, Lena, Arjun, Mei, Jonas, Zara), ``_SERVICES`` and ``_FILES``; the body of
  ``generate`` (the last nine lines). Its lab note told me set L's value forms and correction
  ways in outline; I kept away from them: no doubled-vowel words (a test checks), tickets
  ``ABC#1234`` not ``ABCD-12345``, no ``svc_`` accounts, no cron lines or UTC windows, dates in
  2039-2047 with a time of day, different given names, services and file names, and the ways
  that name the old value use none of its arrows, diff hunks, strike-through, "(not X)", "was X,
  now Y" or old/new columns. My first draft of two filler file names resembled L's
  ``_FILES`` entry ``app/core/limits.ts``; I renamed them.
- The surface names (keys only) of sets K and L, printed by the command the brief gives; and
  ``EARLIER_SURFACES`` in ``tests/bench/support.py``.
- ``tests/bench/support.py`` whole, ``tests/conftest.py``, ``tests/needs.py``, the ``[...]``
  header lines of ``pyproject.toml`` and its pytest, ruff and mypy sections (lines 87-118).
- ``tests/bench/test_heldout_canaries_l.py`` whole. My test mirrors its structure and kinds of
  checks and reuses its three small helpers (``_skeleton``, ``_cut``, ``_keys``) as written;
  its ``MARKERS`` list opens with the 32 marker words and signs of the L test (so the quarter
  rule is at least as strict as L's) followed by 24 of my own. No other data of it is used.
- ``/work/shared/data/swebench-gemini3/README.md`` and a directory listing of that folder. The
  recorded sessions only by counts (no session text read): none of 11,904 values drawn with
  62 test seeds (1-59, 613, 1999, 1234; 8 sessions each) occurs in ``trajectories.jsonl``; for
  my value shapes, regex counts of 0 each (``NNNN ms``, ``NNNN MiB``, ``concurrent
  connections``, ``NNN attempts``, ``NNNNsec``, ``ABC#NNNN``, ``€NN``, the three date styles
  with a time, both version shapes, the IAM role ARN shape and my four host suffixes); the
  handle shape ``@word.word`` is common there (decorators), the handles themselves are not. An
  earlier draft's shapes ``ABC-1234`` (16 matches), ``NNNNs`` (12) and ``NN.NN.NN`` (21) were
  changed because of those counts. Of 9,060 made-up words of six letters or more, 2 occur as
  substrings of the sessions (shorter ones more often, as fragments of longer words); a test
  bounds that share.
- The output of my own throwaway checks: samples of canaries of the test seed 7 (session 0),
  the reasons drafts were redrawn, marker-word shares of my corrections on test seeds, and the
  pass line of the tiny retention run (its figures never printed: the run is checked for keys
  only and each of its assertions is on a plain local).
- By accident: ``git status --short`` at the start (to see the state of the checkout) listed
  other people's uncommitted file names: ``src/abridged/engine/summarize/ledger.py``,
  ``src/abridged/engine/summarize/lookups.py``, ``src/abridged/store/calls.py``,
  ``src/abridged/store/leases.py`` and tests beside them (``tests/engine/summarize/
  test_ledger.py``, ``test_lookups.py``, ``tests/store/test_leases.py``,
  ``tests/bench/test_store_round_trips.py``); ``git log --oneline -3`` showed three commit
  subjects ("Review: one reservation statement, one zone list, references read once",
  "RESULTS, README: held-out K, this stop's retention and round trips", "References: a dotted
  name is not one identifier again"); ``ls bench tests/bench`` listed file names (among them
  the earlier sets, ``canary_generator.py``, ``canaries-second-set.json`` and ``RESULTS.md``).
  Names only; none of them opened. Also ``ls .venv/bin`` filtered for ruff, mypy and pytest.

What I did not read
-------------------
Nothing under ``src/abridged/`` (no summarizer, ledger, references, anchors or lookups), no other
``bench/heldout_canaries*.py`` body (set K only imported, for its surface names), not
``bench/canary_generator.py``, no canary JSON file, not ``bench/RESULTS.md``, no README, no
issue notes, no benchmark figures, and the rest of ``retention.py`` (its module docstring
included).

Scoring, as read
----------------
An old value is stale in a message when one of its keep strings is left after removing (1) the
correcting canary's whole text, (2) the new value's keep strings, (3) lines holding
``[superseded`` and ``(was ...)`` parentheticals. A coexisting pair has no ``supersedes``, so it
is never in ``KeepIndex.stale``: both values are required. Every text here is inserted verbatim
by ``insert_canaries`` in each placement (the tests check that it lands whole). A correction
that names only the new value leaves nothing stale by itself; one that names the old value is
fair while quoted whole, and a summary that rewrites it and keeps the old value outside those
two marks shows it as current. This set uses neither mark.

Design
------
- 50 templates over 12 kinds (constraint, prohibition, preference, identifier, decision,
  number, path, version, owner, deadline, setting, endpoint): 24 single facts (two per kind),
  18 correction pairs (every kind; constraint, prohibition, version, owner, deadline and
  setting twice) and 8 coexisting pairs of one value form and two subjects (two bug tickets,
  the owners of two things, an input and an output directory, a write and a read host, a pilot
  and a GA date, agent and server builds, two pods' memory, two feature gates). Per kind:
  constraint 4, prohibition 4, preference 3, identifier 4, decision 3, number 4, path 4,
  version 5, owner 5, deadline 5, setting 5, endpoint 4. The eight constraint and prohibition
  templates are said in passing ("whatever you do, the schema migration stays behind the X flag
  until ops flips it", "oh and don't touch the X bucket, it's the legal hold copy", "btw nobody
  writes to X by hand", "keep your hands off X; the vendor rebases onto it"), never announced
  as a rule (a test checks their words).
- A session of 24 canaries holds 10 singles, 5 corrections (10 canaries) and 2 coexisting
  pairs (4); other counts scale (at least one of each, count >= 6). Templates, surfaces and
  correction ways each sit in a per-seed shuffled ring that consecutive sessions walk, so a run
  of 16 sessions plants every template, surface and way. A correction comes 0.26-0.35 of the
  session after the fact it replaces.
- 43 fact surfaces: 17 ``tool`` (npm build output, cargo test failure, ``go test -v``,
  ``docker inspect`` labels, ``aws`` tagging JSON, ``helm get values``, ``psql \x`` expanded
  row, ``git blame``, ``journalctl -u``, ``ruff check`` with a help line, response headers from
  ``curl -sI``, a Django migration refused with a HINT, ``mypy`` error plus note, gradle
  warnings, ``kubectl get events``, ``gh run view --log``, a jest failure), 12 ``assistant``
  (numbered approach, step wrap-up, PR description draft, review remark, constraints I hold to,
  before-I-edit, test plan, open questions answered, my understanding, repro notes, changeset
  blurb, sanity pass) and 14 ``user``, ten of them long pastes with the fact on one inner line
  (``PASTED``: a forwarded mail thread, an ops procedure, an application log, a Python trace,
  a deployed config, a call transcript, a review thread, an incident timeline, a policy doc
  excerpt, a vendor notice) and four chat registers (typo-ridden chat, dictation without
  punctuation, a long brief with the fact in the middle, an afterthought). Names avoid
  ``EARLIER_SURFACES`` (substring check, with and without dashes) and sets K and L.
- 19 correction ways: 13 name only the new value (plan shift, later state line, relayed by a
  colleague, later config dump, back to a value, bare restatement, "ignore my earlier message",
  "disregard the line above", a ``helm upgrade`` revision dump, an assistant's "understood,
  I'll use", "final word on", a resolved ticket, a phone-call outcome) and 6 name the old one
  ("Y rather than X", "X is retired ...; Y takes its place", an event ``prev=X current=Y``, "Use
  Y. Not X, that one's stale", a last-week/today grid, "we dropped X in favour of Y"). On the
  test seeds 30% of corrections name the old value, and no marker word or sign of the test's
  list is in more than 10% of correction texts (the test allows a quarter); each correction
  names the subject or its key.
- Values are drawn fresh per seed and session from 26 forms: made-up words from four
  syllable inventories (no doubled vowels, no shared letter pair in a quarter of them), used
  in buckets, schema tables, regions, feature flags, product names, channels, IAM role ARNs,
  project ids, branches, presets, absolute and relative paths, hosts on ``.lan``/``.corp``/
  ``.priv``/``.intra``, HTTPS and gRPC endpoints, tickets ``ABC#1234``, people (a given name
  and a made-up surname) and handles; numbers always with a unit (``23417 ms``, ``€41,230``,
  ``4211 MiB``, ``1797 concurrent connections``, ``2693 attempts``, ``4213sec``); versions of
  three (``NN.NN.NNNN``) or four parts; dates with a time of day in three styles. Every number,
  date and version is congruent to the session's index (shifted per seed) modulo ``TAGS``
  (128), so no two sessions of a run draw the same one; words make the rest distinct. A
  correction's new value has the old one's form; deadlines only move later and versions only
  go up. A session is redrawn until every keep string is in its own text and in no other
  canary's (a correction may name the value it replaces), no keep string holds another, and
  the ways that name only the new value do not name the old one.
- The text does not depend on the placement: ``bench/retention.py`` places each canary in a
  user message, an observation or an assistant message per pass.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

EVALUATION_SEEDS = (4898541, 6107962, 1728116)

KINDS = (
    "constraint",
    "prohibition",
    "preference",
    "identifier",
    "decision",
    "number",
    "path",
    "version",
    "owner",
    "deadline",
    "setting",
    "endpoint",
)
REGISTERS = ("tool", "assistant", "user")
SHAPES = ("single", "correction", "coexist")

# -- made-up words --------------------------------------------------------------------------------
# Four inventories (onsets, nuclei, codas), one picked per word, so the words do not share one
# visible mark (no doubled vowel everywhere, no common letter, no fixed length).
_GRAMMARS: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (
        ("b", "d", "g", "k", "m", "n", "p", "r", "s", "t", "v", "z", "st", "tr", "kr"),
        ("a", "e", "i", "o", "u"),
        ("n", "r", "l", "s", "k", "m"),
    ),
    (
        ("h", "j", "l", "sh", "th", "w", "y", "ch", "m"),
        ("ae", "ei", "o", "y", "ea", "ou", "a"),
        ("n", "th", "sh", "ck", "x", "r"),
    ),
    (
        ("f", "gl", "pl", "sk", "sn", "dr", "br", "c", "g"),
        ("a", "e", "o", "u", "ay", "ow", "i"),
        ("ff", "ld", "nt", "st", "rp", "ng", "lk"),
    ),
    (
        ("q", "x", "v", "z", "qu", "ts", "p", "k"),
        ("i", "e", "a", "o", "ue"),
        ("z", "x", "v", "nd", "rn", "t"),
    ),
)
_BAD = re.compile(r"aa|ii|uu|ee|oo|(.)\1\1|yy|ww|hh|jj|qq|xx|q[^u]")


def _word(r: random.Random) -> str:
    """A made-up lower-case word of 5 to 10 letters."""
    while True:
        onsets, nuclei, codas = r.choice(_GRAMMARS)
        n = r.choice((2, 2, 3))
        out = ""
        for i in range(n):
            out += r.choice(onsets) + r.choice(nuclei)
            if i == n - 1 or r.random() < 0.35:
                out += r.choice(codas)
        if 5 <= len(out) <= 10 and not _BAD.search(out):
            return out


def _short(r: random.Random) -> str:
    """A made-up word cut to 3-5 letters (for compounds)."""
    return _word(r)[: r.choice((4, 4, 5))]


def _digits(r: random.Random, n: int) -> str:
    return str(r.randint(10 ** (n - 1), 10**n - 1))


_GIVEN = (
    "Odalys", "Bertrand", "Yusra", "Caspian", "Wilhelmina", "Thandiwe", "Anselm", "Ngozi",
    "Leopold", "Fenella", "Iskander", "Rosalind", "Teodora", "Mattias", "Aurelie", "Cosmin",
)  # fmt: skip
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_TLDS = ("lan", "corp", "priv", "intra")
_ROOTS = ("opt", "var/lib", "data", "mnt/store")
_EXTS = ("pem", "cfg", "lock", "sqlite", "conf", "yml")
_FLAG_PREFIX = ("ff", "gate", "use", "kill")
_BRANCH_PREFIX = ("train", "cut", "maint", "stab")
_AREAS = ("eu", "ap", "us", "sa", "me")

#: words a value may hold besides made-up ones (its form's own words)
FORM_WORDS = frozenset(
    {
        *(g.lower() for g in _GIVEN),
        *(m.lower() for m in _MONTHS),
        *(m[:3].lower() for m in _MONTHS),
        *(w.lower() for w in _WEEKDAYS),
        *_TLDS,
        "opt", "var", "lib", "data", "mnt", "store", *_EXTS, *_FLAG_PREFIX, *_BRANCH_PREFIX,
        "concurrent", "connections", "attempts", "https", "hooks", "grpc", "role", "arn", "aws",
        "iam", "sec",
    }
)  # fmt: skip


#: the numbers in values are congruent to the session's index (shifted per seed) modulo this, so
#: no two sessions of a run (up to this many) draw the same number, date or version
TAGS = 128


def _tagged(r: random.Random, low: int, high: int, tag: int) -> int:
    """A number in ``low..high`` congruent to ``tag`` modulo ``TAGS``."""
    first = low + (tag - low) % TAGS
    return first + TAGS * r.randrange((high - first) // TAGS + 1)


_EPOCH = dt.datetime(2039, 1, 1)
_SPAN = 9 * 365 * 24 * 60  # minutes: dates fall in 2039-2047


def _date(r: random.Random, tag: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(minutes=_tagged(r, 0, _SPAN, tag))


def _later(old: dt.datetime, r: random.Random) -> dt.datetime:
    """3 to 75 days after ``old``, the same number of minutes modulo ``TAGS`` after the epoch."""
    steps = r.randint(3 * 24 * 60 // TAGS + 1, 75 * 24 * 60 // TAGS)
    return old + dt.timedelta(minutes=TAGS * steps)


def _fmt_date(when: dt.datetime, pick: int) -> str:
    style = pick % 3
    clock = f"{when.hour:02d}:{when.minute:02d}"
    if style == 0:
        month = _MONTHS[when.month - 1][:3]
        return f"{_WEEKDAYS[when.weekday()]} {when.day} {month} {when.year} {clock}"
    if style == 1:
        return f"{when.year}/{when.month:02d}/{when.day:02d} {clock}"
    day = when.day
    suffix = "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{clock} on {_MONTHS[when.month - 1]} {day}{suffix}, {when.year}"


def parse_date(value: str) -> dt.datetime:
    """The moment a date of this set names (any of its three styles)."""
    m = re.fullmatch(r"(\d{4})/(\d\d)/(\d\d) (\d\d):(\d\d)", value)
    if m:
        return dt.datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]))
    m = re.fullmatch(r"[A-Z][a-z]{2} (\d{1,2}) ([A-Z][a-z]{2}) (\d{4}) (\d\d):(\d\d)", value)
    if m:
        month = [x[:3] for x in _MONTHS].index(m[2]) + 1
        return dt.datetime(int(m[3]), month, int(m[1]), int(m[4]), int(m[5]))
    m = re.fullmatch(r"(\d\d):(\d\d) on ([A-Z][a-z]+) (\d{1,2})(?:st|nd|rd|th), (\d{4})", value)
    if m:
        month = _MONTHS.index(m[3]) + 1
        return dt.datetime(int(m[5]), month, int(m[4]), int(m[1]), int(m[2]))
    raise ValueError(f"not a date of this set: {value!r}")


def version_key(value: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", value))


def _version(r: random.Random, pick: int, tag: int) -> str:
    if pick % 2 == 0:
        return f"{r.randint(11, 58)}.{r.randint(10, 89)}.{_tagged(r, 1000, 6999, tag)}"
    return f"{r.randint(3, 9)}.{r.randint(10, 59)}.{r.randint(10, 99)}.{_tagged(r, 100, 699, tag)}"


def _higher_version(old: str, r: random.Random, tag: int) -> str:
    parts = list(version_key(old))
    if r.random() < 0.5:
        parts[-1] += TAGS * r.randint(1, 2)  # a later build of the same line
    else:
        parts[-2] += r.randint(1, 7)
        low, high = (100, 699) if len(parts) == 4 else (1000, 6999)
        parts[-1] = _tagged(r, low, high, tag)
    return ".".join(str(p) for p in parts)


def _host(r: random.Random, pick: int, tag: int) -> str:
    return f"{_word(r)}-{_digits(r, 2)}.{_word(r)}.{_TLDS[pick % 4]}"


def _url(r: random.Random, pick: int, tag: int) -> str:
    if pick % 2 == 0:
        return f"https://{_word(r)}.{_word(r)}.{_TLDS[pick % 4]}/hooks/{_word(r)}"
    return f"https://{_short(r)}-{_word(r)}.{_TLDS[pick % 4]}/v{r.randint(2, 9)}/{_word(r)}"


def _grpc(r: random.Random, pick: int, tag: int) -> str:
    return f"{_word(r)}-{_short(r)}.{_TLDS[pick % 4]}:{_tagged(r, 20011, 39989, tag)}"


def _ticket(r: random.Random, pick: int, tag: int) -> str:
    return f"{_word(r)[:3].upper()}#{_tagged(r, 1001, 9899, tag)}"


def _person(r: random.Random, pick: int, tag: int) -> str:
    return f"{r.choice(_GIVEN)} {_word(r).capitalize()}"


def _handle(r: random.Random, pick: int, tag: int) -> str:
    if pick % 2 == 0:
        return f"@{_word(r)}.{_short(r)}"
    return f"@{_short(r)}_{_word(r)}"


_FORMS: dict[str, Callable[[random.Random, int, int], str]] = {
    "bucket": lambda r, p, t: f"{_word(r)}-{_word(r)}-{_digits(r, 2)}",
    "table": lambda r, p, t: f"{_word(r)}.{_short(r)}_{_word(r)}",
    "region": lambda r, p, t: f"{_AREAS[p % 5]}-{_word(r)}-{r.randint(2, 9)}",
    "flag": lambda r, p, t: f"{_FLAG_PREFIX[p % 4]}_{_word(r)}_{_short(r)}",
    "product": lambda r, p, t: _word(r).capitalize() + ("" if p % 2 else _short(r)[:2]),
    "channel": lambda r, p, t: f"#{_short(r)}-{_word(r)}",
    "role_arn": lambda r, p, t: f"arn:aws:iam::{_digits(r, 12)}:role/{_word(r)}-{_short(r)}",
    "project_id": lambda r, p, t: f"{_word(r)}-{_short(r)}-{_digits(r, 6)}",
    "branch": lambda r, p, t: f"{_BRANCH_PREFIX[p % 4]}/{_word(r)}-{_digits(r, 2)}",
    "preset": lambda r, p, t: f"{_word(r)}-{_short(r)}",
    "millis": lambda r, p, t: f"{_tagged(r, 1003, 59997, t)} ms",
    "money": lambda r, p, t: f"€{_tagged(r, 10_013, 98_987, t):,}",
    "mib": lambda r, p, t: f"{_tagged(r, 1025, 63999, t)} MiB",
    "connections": lambda r, p, t: f"{_tagged(r, 101, 4999, t)} concurrent connections",
    "attempts": lambda r, p, t: f"{_tagged(r, 101, 4999, t)} attempts",
    "ttl": lambda r, p, t: f"{_tagged(r, 1013, 9973, t)}sec",
    "path": lambda r, p, t: f"/{_ROOTS[p % 4]}/{_word(r)}/{_word(r)}.{_EXTS[p % 6]}",
    "reldir": lambda r, p, t: f"{_word(r)}/{_short(r)}/{_word(r)}/",
    "version": _version,
    "date": lambda r, p, t: _fmt_date(_date(r, t), p),
    "host": _host,
    "url": _url,
    "grpc": _grpc,
    "ticket": _ticket,
    "person": _person,
    "handle": _handle,
}
FORMS = tuple(_FORMS)


def _draw(form: str, r: random.Random, pick: int, tag: int) -> str:
    return _FORMS[form](r, pick, tag)


def _replacement(form: str, old: str, r: random.Random, pick: int, tag: int) -> str:
    """A new value of ``form`` for a correction: later for a date, higher for a version."""
    while True:
        if form == "date":
            new = _fmt_date(_later(parse_date(old), r), pick)
        elif form == "version":
            new = _higher_version(old, r, tag)
        else:
            new = _draw(form, r, pick, tag)
        if new not in old and old not in new:
            return new


# -- templates ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Template:
    name: str
    kind: str
    shape: str
    form: str
    subjects: tuple[str, ...]
    keys: tuple[str, ...]
    says: tuple[str, ...]  # each with one ``{v}``


def _one(name: str, kind: str, form: str, subject: str, key: str, says: str) -> Template:  # noqa: PLR0917
    return Template(name, kind, "single", form, (subject,), (key,), (says,))


def _fix(name: str, kind: str, form: str, subject: str, key: str, says: str) -> Template:  # noqa: PLR0917
    return Template(name, kind, "correction", form, (subject,), (key,), (says,))


def _two(
    name: str, kind: str, form: str, a: tuple[str, str, str], b: tuple[str, str, str]
) -> Template:
    return Template(name, kind, "coexist", form, (a[0], b[0]), (a[1], b[1]), (a[2], b[2]))


TEMPLATES: tuple[Template, ...] = (
    # single facts: two per kind; the rules are said in passing, not announced as rules
    _one("gate-behind-flag", "constraint", "flag", "schema migration flag", "migration_gate",
         "whatever you do, the schema migration stays behind the {v} flag until ops flips it"),
    _one("exports-stay-in-region", "constraint", "region", "export region", "export_region",
         "customer exports only ever get written in {v}, the contract pins them there"),
    _one("hands-off-legal-copy", "prohibition", "bucket", "legal-hold bucket",
         "legal_hold_bucket", "oh and don't touch the {v} bucket, it's the legal hold copy"),
    _one("no-hand-writes-table", "prohibition", "table", "reconciliation table",
         "reconcile_table", "btw nobody writes to {v} by hand, finance reconciles off it nightly"),
    _one("integration-runner", "preference", "product", "integration test runner",
         "integration_runner", "I'd rather we keep {v} for the integration suite, people know it"),
    _one("page-the-channel", "preference", "channel", "alert channel", "alert_channel",
         "when something breaks, ping {v} and not individual people"),
    _one("deploy-role", "identifier", "role_arn", "deploy role", "deploy_role_arn",
         "the deploy pipeline assumes {v}"),
    _one("analytics-project", "identifier", "project_id", "analytics project",
         "analytics_project", "the analytics jobs bill to the project {v}"),
    _one("queue-library", "decision", "product", "job queue library", "queue_library",
         "we settled on {v} for the job queue after the spike"),
    _one("ship-branch", "decision", "branch", "fix branch", "ship_branch",
         "we agreed the fix ships off {v}, not main"),
    _one("upstream-timeout", "number", "millis", "upstream timeout", "upstream_timeout",
         "the upstream call gives up after {v}"),
    _one("cloud-budget", "number", "money", "monthly cloud budget", "cloud_budget",
         "the monthly cloud budget for this project is capped at {v}"),
    _one("signing-key", "path", "path", "signing key file", "signing_key_path",
         "the signing key lives at {v}, mounted read-only, never copy it out of the container"),
    _one("golden-fixtures", "path", "reldir", "golden fixtures directory", "fixtures_dir",
         "golden fixtures are read out of {v} and regenerated only by CI"),
    _one("runtime-pin", "version", "version", "pinned runtime", "runtime_version",
         "the build image pins the runtime at {v}"),
    _one("protocol-level", "version", "version", "wire protocol level", "protocol_level",
         "both peers speak protocol {v}, anything else is rejected at handshake"),
    _one("billing-owner", "owner", "person", "billing service owner", "billing_owner",
         "{v} owns the billing service, route design questions there"),
    _one("on-call-handle", "owner", "handle", "on-call engineer", "oncall",
         "{v} is on call this week for anything in prod"),
    _one("code-freeze", "deadline", "date", "code freeze", "code_freeze",
         "the code freeze starts {v}"),
    _one("partner-cert", "deadline", "date", "partner certificate expiry", "cert_not_after",
         "the partner certificate expires {v}, renew it a week ahead"),
    _one("tls-preset", "setting", "preset", "TLS preset", "tls_preset",
         "the ingress uses the {v} TLS preset"),
    _one("cache-ttl", "setting", "ttl", "cache TTL", "cache_ttl",
         "the edge cache TTL is set to {v}"),
    _one("webhook-target", "endpoint", "url", "webhook receiver", "webhook_url",
         "the webhook posts to {v}"),
    _one("pricing-backend", "endpoint", "grpc", "pricing backend", "pricing_addr",
         "the pricing backend answers on {v}"),
    # correction pairs: a later fact of the same subject replaces the first
    _fix("rollout-guard", "constraint", "flag", "rollout guard flag", "rollout_guard",
         "whatever happens, the payment rollout stays behind {v}"),
    _fix("staging-parallel-cap", "constraint", "connections", "staging load cap",
         "staging_max_workers", "never hit the staging database with more than {v}"),
    _fix("finance-box", "prohibition", "host", "finance reporting box", "no_deploy_host",
         "don't deploy anything to {v}, finance runs its reports on that box"),
    _fix("vendor-branch", "prohibition", "branch", "vendor branch", "vendor_branch",
         "keep your hands off {v}; the vendor rebases onto it"),
    _fix("formatter-choice", "preference", "product", "code formatter", "formatter",
         "for formatting we'd like {v}"),
    _fix("billing-project", "identifier", "project_id", "billing export project",
         "billing_project", "billing exports land in the project {v}"),
    _fix("session-store", "decision", "product", "session store", "session_store",
         "we're going with {v} as the session store"),
    _fix("retry-budget", "number", "attempts", "retry budget", "retry_budget",
         "the importer gives up after {v}"),
    _fix("nightly-dump", "path", "path", "nightly dump file", "dump_path",
         "the nightly dump is written to {v}"),
    _fix("client-pin", "version", "version", "client library pin", "client_version",
         "the client library is pinned at {v}"),
    _fix("base-image-tag", "version", "version", "base image tag", "base_image_tag",
         "the service builds on base image {v}"),
    _fix("payments-signoff", "owner", "person", "payments reviewer", "payments_reviewer",
         "{v} signs off on anything touching payments"),
    _fix("search-contact", "owner", "handle", "search cluster contact", "search_contact",
         "{v} is the contact for the search cluster"),
    _fix("launch-day", "deadline", "date", "launch date", "launch_date",
         "the public launch is set for {v}"),
    _fix("v1-shutoff", "deadline", "date", "v1 API shutoff", "v1_shutoff",
         "the v1 API gets switched off on {v}"),
    _fix("pool-mode", "setting", "preset", "connection pool mode", "pool_mode",
         "the connection pool runs in {v} mode"),
    _fix("sampling-preset", "setting", "preset", "trace sampling profile", "sampling_profile",
         "tracing uses the {v} sampling profile"),
    _fix("staging-base", "endpoint", "url", "staging API base", "staging_api_base",
         "the staging API base is {v}"),
    # coexisting pairs: two subjects, two values, both hold
    _two("two-bug-tickets", "identifier", "ticket",
         ("upload bug", "upload_bug", "the upload bug is tracked as {v}"),
         ("export bug", "export_bug", "the report export bug is tracked as {v}")),
    _two("two-owners", "owner", "person",
         ("ingest workers owner", "ingest_owner", "{v} owns the ingest workers"),
         ("dashboards owner", "dashboards_owner", "{v} owns the reporting dashboards")),
    _two("input-output-dirs", "path", "reldir",
         ("raw input directory", "raw_dir", "raw inputs are read out of {v}"),
         ("processed output directory", "out_dir", "processed outputs go to {v}")),
    _two("write-read-hosts", "endpoint", "host",
         ("write host", "write_host", "writes go to {v}"),
         ("read host", "read_host", "read-only queries go to {v}")),
    _two("pilot-and-ga", "deadline", "date",
         ("pilot opening", "pilot_opens", "the pilot opens {v}"),
         ("general availability", "ga_date", "general availability is {v}")),
    _two("agent-and-server", "version", "version",
         ("agent build", "agent_version", "the agent ships as {v}"),
         ("control server build", "server_version", "the control server runs {v}")),
    _two("pod-memory", "number", "mib",
         ("worker pod memory", "worker_memory", "each worker pod gets {v} of memory"),
         ("scheduler pod memory", "scheduler_memory", "the scheduler pod gets {v} of memory")),
    _two("two-gates", "setting", "flag",
         ("checkout gate", "checkout_gate", "{v} gates the reworked checkout"),
         ("ranking gate", "ranking_gate", "{v} gates the search ranking experiment")),
)  # fmt: skip
TEMPLATE_BY_NAME = {t.name: t for t in TEMPLATES}


@dataclass(frozen=True, slots=True)
class Fact:
    template: Template
    which: int
    value: str

    @property
    def subject(self) -> str:
        return self.template.subjects[self.which]

    @property
    def key(self) -> str:
        return self.template.keys[self.which]

    @property
    def says(self) -> str:
        return self.template.says[self.which].format(v=self.value)


# -- filler ---------------------------------------------------------------------------------------

_FILLER_NAMES = ("Dana", "Kofi", "Mirela", "Sven", "Paloma", "Hiro", "Agnes", "Tariq", "Ilse")
_FILLER_SERVICES = ("orders-api", "thumbnailer", "scheduler", "auth-proxy", "mailer", "geo-lookup")
_FILES = ("app/settings.py", "src/config/load.ts", "pkg/conf/conf.go", "config/runtime.rb")


def _cap(text: str) -> str:
    """``text`` with a capital first letter when it starts with a plain word (not a value)."""
    return text[:1].upper() + text[1:] if re.match(r"[a-z]+[ ,']", text) else text


def _hex(r: random.Random, n: int) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def _clock(r: random.Random) -> str:
    return f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"


def _stamp(r: random.Random) -> str:
    return f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{_clock(r)}Z"


def _upper(key: str) -> str:
    return key.upper()


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p.capitalize() for p in rest)


def _log_noise(r: random.Random, n: int) -> list[str]:
    lines = (
        "GET /healthz 200 {ms}ms",
        "worker {i} picked up batch {h}",
        "cache warm: {i} keys in {ms}ms",
        "retrying connection to {svc} (attempt {i})",
        "flushed {i} spans",
        "request {h} finished status=200 duration={ms}ms",
        "gc pause {ms}ms heap={i}MB",
        "lease renewed for {svc}",
        "queue depth {i}",
    )
    out = []
    for _ in range(n):
        line = r.choice(lines).format(
            ms=r.randint(2, 900), i=r.randint(1, 400), h=_hex(r, 8), svc=r.choice(_FILLER_SERVICES)
        )
        out.append(f"{_stamp(r)} INFO {line}")
    return out


# -- surfaces: how a fact is written, in three registers ------------------------------------------
# tool: output an agent reads back from a command


def _npm_warn_output(f: Fact, r: random.Random) -> str:
    pkg = r.choice(_FILLER_SERVICES)
    return (
        f"$ npm run build\n\n> {pkg}@{r.randint(1, 6)}.{r.randint(0, 20)}.0 build\n"
        f"> tsc -p tsconfig.build.json && node scripts/check-config.mjs\n\n"
        f"npm warn deprecated inflight@1.0.6: This module is not supported\n"
        f"[check-config] {f.key} = {f.value}\n"
        f"[check-config] note: {f.says}\n"
        f"npm notice run `npm fund` for details"
    )


def _cargo_test_out(f: Fact, r: random.Random) -> str:
    n = r.randint(8, 40)
    return (
        f"running {n} tests\n"
        f"test settings::tests::{f.key} ... FAILED\n\n"
        f"failures:\n\n---- settings::tests::{f.key} stdout ----\n"
        f"thread 'settings::tests::{f.key}' panicked at src/settings.rs:{r.randint(20, 300)}:9:\n"
        f"expected the configured value: {f.says}\n"
        f'  left: "{f.value}"\n right: "<unset>"\n\n'
        f"test result: FAILED. {n - 1} passed; 1 failed; 0 ignored"
    )


def _go_test_verbose(f: Fact, r: random.Random) -> str:
    name = "".join(p.capitalize() for p in f.key.split("_"))
    return (
        f"=== RUN   TestConfig\n=== RUN   TestConfig/{name}\n"
        f"    config_test.go:{r.randint(30, 200)}: fixture says: {f.says}\n"
        f"--- PASS: TestConfig/{name} (0.00s)\n--- PASS: TestConfig (0.0{r.randint(1, 9)}s)\n"
        f"PASS\nok  \texample.local/{r.choice(_FILLER_SERVICES)}/config\t0.{r.randint(10, 99)}1s"
    )


def _docker_inspect_labels(f: Fact, r: random.Random) -> str:
    return (
        f"$ docker inspect --format '{{{{json .Config.Labels}}}}' {r.choice(_FILLER_SERVICES)}\n"
        f'{{"maintainer": "platform", "ops.{f.key}": "{f.value}", '
        f'"ops.note": "{f.says}", "org.opencontainers.image.revision": "{_hex(r, 12)}"}}'
    )


def _aws_tag_listing(f: Fact, r: random.Random) -> str:
    return (
        "$ aws resourcegroupstaggingapi get-resources --tag-filters Key=team\n"
        '{\n    "ResourceTagMappingList": [\n        {\n'
        f'            "ResourceARN": "arn:aws:s3:::tmp-{_hex(r, 10)}",\n'
        '            "Tags": [\n'
        '                {"Key": "team", "Value": "platform"},\n'
        f'                {{"Key": "{f.key}", "Value": "{f.value}"}},\n'
        f'                {{"Key": "ops-note", "Value": "{f.says}"}}\n'
        "            ]\n        }\n    ]\n}"
    )


def _chart_values_dump(f: Fact, r: random.Random) -> str:
    svc = r.choice(_FILLER_SERVICES)
    return (
        f"$ helm get values {svc} -n prod\nUSER-SUPPLIED VALUES:\n"
        f"replicaCount: {r.randint(2, 9)}\nimage:\n  tag: {_hex(r, 7)}\n"
        f"# {f.says}\n{_camel(f.key)}: {f.value}\nresources: {{}}"
    )


def _pg_expanded_row(f: Fact, r: random.Random) -> str:
    return (
        "app=> \\x\nExpanded display is on.\n"
        f"app=> select * from ops_settings where name = '{f.key}';\n"
        "-[ RECORD 1 ]-------------------------------\n"
        f"name       | {f.key}\n"
        f"value      | {f.value}\n"
        f"comment    | {f.says}\n"
        f"set_by     | {r.choice(_FILLER_NAMES).lower()}\n"
        f"set_at     | 2026-0{r.randint(1, 9)}-1{r.randint(0, 9)} 0{r.randint(0, 9)}:12:44+00"
    )


def _git_blame_lines(f: Fact, r: random.Random) -> str:
    who = r.choice(_FILLER_NAMES)
    line = r.randint(10, 90)
    return (
        f"$ git blame -L {line},{line + 2} {r.choice(_FILES)}\n"
        f"{_hex(r, 8)} ({who:<8} 2026-02-1{r.randint(0, 9)} {line}) # {f.says}\n"
        f"{_hex(r, 8)} ({who:<8} 2026-02-1{r.randint(0, 9)} {line + 1}) {_upper(f.key)} = "
        f'"{f.value}"\n'
        f"{_hex(r, 8)} (Agnes    2025-11-0{r.randint(1, 9)} {line + 2}) "
    )


def _unit_log_since(f: Fact, r: random.Random) -> str:
    svc = r.choice(_FILLER_SERVICES)
    pid = r.randint(1000, 65000)
    day = f"Mar 0{r.randint(1, 9)}"
    return (
        f"$ journalctl -u {svc} --since '1 hour ago' --no-pager\n"
        f"{day} 10:2{r.randint(0, 9)}:31 node-{r.randint(1, 9)} {svc}[{pid}]: starting\n"
        f"{day} 10:2{r.randint(0, 9)}:32 node-{r.randint(1, 9)} {svc}[{pid}]: loaded "
        f"{f.key}={f.value}\n"
        f"{day} 10:2{r.randint(0, 9)}:32 node-{r.randint(1, 9)} {svc}[{pid}]: policy: {f.says}\n"
        f"{day} 10:2{r.randint(0, 9)}:33 node-{r.randint(1, 9)} {svc}[{pid}]: ready"
    )


def _ruff_check_hint(f: Fact, r: random.Random) -> str:
    file = r.choice((_FILES[0], "app/jobs/export.py", "app/jobs/quota.py"))
    line = r.randint(12, 140)
    return (
        f"$ ruff check {file}\n{file}:{line}:5: PLW0603 Using the global statement to update "
        f"`{_upper(f.key)}` is discouraged\n    |\n{line:>3} |     {_upper(f.key)} = "
        f'"{f.value}"\n    |     ^^^^^^\n    |\n    = help: project rule: {f.says}\n\n'
        "Found 1 error."
    )


def _response_headers(f: Fact, r: random.Random) -> str:
    return (
        f"$ curl -sI https://{r.choice(_FILLER_SERVICES)}.example.test/ready\n"
        "HTTP/2 409\ncontent-type: application/problem+json\n"
        f"x-request-id: {_hex(r, 16)}\n"
        f"x-ops-{f.key.replace('_', '-')}: {f.value}\n"
        f"x-ops-hint: {f.says}\nserver: envoy"
    )


def _db_migrate_refusal(f: Fact, r: random.Random) -> str:
    n = r.randint(40, 260)
    return (
        f"$ ./manage.py migrate\nOperations to perform:\n  Apply all migrations: core, "
        f"billing\nRunning migrations:\n  Applying core.0{n}_{f.key}...\n"
        f"CommandError: migration core.0{n} stopped by a guard\n"
        f"HINT: {f.says}. Check the runbook before retrying."
    )


def _mypy_error_note(f: Fact, r: random.Random) -> str:
    file = r.choice((_FILES[0], "app/billing/rates.py", "app/deploy/targets.py"))
    line = r.randint(8, 120)
    return (
        f"$ mypy {file}\n{file}:{line}: error: Incompatible types in assignment "
        f'(expression has type "int", variable has type "str")  [assignment]\n'
        f'{file}:{line}: note: {_upper(f.key)} must stay "{f.value}"; {f.says}\n'
        "Found 1 error in 1 file (checked 1 source file)"
    )


def _gradle_build_out(f: Fact, r: random.Random) -> str:
    return (
        "$ ./gradlew :app:checkConfig\n> Task :app:compileKotlin UP-TO-DATE\n"
        f"> Task :app:checkConfig\nw: {f.key} resolved to {f.value}\n"
        f"w: reminder in build.gradle.kts: {f.says}\n\n"
        f"BUILD SUCCESSFUL in {r.randint(2, 40)}s\n{r.randint(3, 12)} actionable tasks: "
        "1 executed, 2 up-to-date"
    )


def _pod_events_table(f: Fact, r: random.Random) -> str:
    svc = r.choice(_FILLER_SERVICES)
    return (
        f"$ kubectl get events -n prod --field-selector involvedObject.name={svc}\n"
        "LAST SEEN   TYPE      REASON      OBJECT                MESSAGE\n"
        f"{r.randint(2, 9)}m          Normal    Pulled      pod/{svc}-{_hex(r, 5)}   "
        "Container image already present on machine\n"
        f"{r.randint(1, 5)}m          Warning   PolicyNote  pod/{svc}-{_hex(r, 5)}   "
        f"{_cap(f.says)} ({f.key}={f.value})"
    )


def _gh_run_view(f: Fact, r: random.Random) -> str:
    return (
        f"$ gh run view {r.randint(10**9, 10**10)} --log | tail -4\n"
        f"build\tSet up job\t{_stamp(r)} Runner Image: ubuntu-24.04\n"
        f"build\tCheck config\t{_stamp(r)} ##[notice]{f.key}={f.value}\n"
        f"build\tCheck config\t{_stamp(r)} ##[warning]{_cap(f.says)}\n"
        f"build\tComplete job\t{_stamp(r)} Cleaning up orphan processes"
    )


def _jest_snapshot_out(f: Fact, r: random.Random) -> str:
    return (
        "$ npx jest config\n FAIL  src/config.test.ts\n"
        f"  ● config › {f.key}\n\n    {_cap(f.says)}\n\n"
        f'    Expected: "{f.value}"\n    Received: undefined\n\n'
        f"Tests:       1 failed, {r.randint(4, 30)} passed"
    )


# assistant: what the agent writes


def _numbered_approach(f: Fact, r: random.Random) -> str:
    return (
        "Here's how I'll go about it:\n1. Reproduce the failing case locally.\n"
        f"2. Keep in mind that {f.says}.\n3. Patch `{r.choice(_FILES)}` and rerun the suite."
    )


def _step_wrapup(f: Fact, r: random.Random) -> str:
    return (
        f"Finished step {r.randint(2, 6)}. Picked up along the way: {f.says}. "
        "I'll carry on with the parser next."
    )


def _pr_description_draft(f: Fact, r: random.Random) -> str:
    return (
        "Draft PR description:\n\n## Summary\nFixes the config loader so missing keys fail "
        f"loudly.\n\n## Notes for reviewers\n- {_cap(f.says)}.\n- No schema changes."
    )


def _review_remark(f: Fact, r: random.Random) -> str:
    return (
        f"Review of `{r.choice(_FILES)}`, line {r.randint(10, 200)}: the early return is fine. "
        f"One thing the original author left in a comment and that still binds us: {f.says}."
    )


def _noted_constraints(f: Fact, r: random.Random) -> str:
    return (
        "What I'm holding myself to while editing:\n- keep the diff small\n"
        f"- {f.says}\n- no new dependencies"
    )


def _before_i_edit(f: Fact, r: random.Random) -> str:
    return f"Before I touch `{r.choice(_FILES)}`: {f.says}, so I'll leave that part alone."


def _test_plan_outline(f: Fact, r: random.Random) -> str:
    return (
        "Test plan:\n  * unit: the loader rejects unknown keys\n"
        f"  * config: {f.key} = {f.value} ({f.subject})\n  * smoke: one request end to end"
    )


def _open_questions_answered(f: Fact, r: random.Random) -> str:
    return (
        "Open questions, answered from the thread:\n"
        f"Q: what is the {f.subject}?\nA: {f.value}. ({_cap(f.says)}.)\n"
        "Q: do we need a migration?\nA: no."
    )


def _my_understanding(f: Fact, r: random.Random) -> str:
    return f"My understanding so far: {f.says}. Tell me if that's off."


def _repro_notes(f: Fact, r: random.Random) -> str:
    return (
        f"Repro notes\n- python 3.{r.randint(10, 13)}, fresh venv\n- {f.key}: {f.value}\n"
        f"- {f.says}\n- fails on the second request only"
    )


def _changeset_blurb(f: Fact, r: random.Random) -> str:
    return f"changeset: tighten config loading\n\n{_cap(f.says)}. The loader now checks it."


def _quick_sanity_pass(f: Fact, r: random.Random) -> str:
    return (
        "Quick sanity pass before running the tests:\n"
        f"- {f.key} = {f.value} ✓\n- fixtures present ✓\n- lockfile unchanged ✓"
    )


# user: what the person at the keyboard writes or pastes


def _mail_chain_paste(f: Fact, r: random.Random) -> str:
    a, b = r.sample(_FILLER_NAMES, 2)
    dom = f"{_short(r)}works.example"
    return (
        "pasting the thread so you have the context:\n\n"
        f"---------- Forwarded thread ----------\nFrom: {a} <{a.lower()}@{dom}>\n"
        f"Subject: Re: contractor onboarding\n\n{a}: Thanks, that works. I'll line the "
        f"rest up on Thursday.\n\n> {b} wrote:\n> Quick notes from our side:\n"
        "> - the staging smoke run is green again\n"
        f"> - {f.says}\n"
        "> - VPN access goes through the usual form\n>\n"
        f">> {a} wrote:\n>> Can you send over what the contractor needs to know before "
        "they start?\n>> Nothing formal, just the things people trip over."
    )


def _ops_procedure_paste(f: Fact, r: random.Random) -> str:
    svc = r.choice(_FILLER_SERVICES)
    return (
        f"this is the procedure we follow for {svc}, copied from the ops page:\n\n"
        f"3.1 Drain the node: `kubectl drain node-{r.randint(1, 9)} --ignore-daemonsets`\n"
        f"3.2 Wait for the queue depth to fall under {r.randint(50, 500)}.\n"
        f"3.3 {_cap(f.says)}.\n"
        f"3.4 Apply the change and watch the error rate for {r.randint(5, 30)} minutes.\n"
        "3.5 Uncordon the node and close the ops ticket."
    )


def _app_log_dump(f: Fact, r: random.Random) -> str:
    before = _log_noise(r, r.randint(5, 9))
    after = _log_noise(r, r.randint(4, 8))
    line = f"{_stamp(r)} WARN config: {f.says}"
    return "here's the log from the last run, not sure what matters:\n\n" + "\n".join(
        [*before, line, *after]
    )


def _exception_paste(f: Fact, r: random.Random) -> str:
    mod = r.choice(("loader", "deploy", "exporter", "jobs"))
    return (
        "got this when I ran it, full trace:\n\n"
        "Traceback (most recent call last):\n"
        f'  File "/app/{mod}/main.py", line {r.randint(20, 200)}, in <module>\n    run()\n'
        f'  File "/app/{mod}/main.py", line {r.randint(20, 200)}, in run\n'
        "    settings.validate()\n"
        f'  File "/app/{mod}/settings.py", line {r.randint(20, 200)}, in validate\n'
        "    raise GuardError(msg)\n"
        f"{mod}.errors.GuardError: guard tripped for {f.key}: {f.says}\n\n"
        f"(venv) $ echo $?\n1\n\nno idea why, it ran fine on {r.choice(_WEEKDAYS)}"
    )


def _config_blob_paste(f: Fact, r: random.Random) -> str:
    return (
        "the current config, as deployed:\n\n"
        f"service: {r.choice(_FILLER_SERVICES)}\nreplicas: {r.randint(2, 9)}\n"
        f"log_format: json\nmetrics_port: {r.randint(9000, 9999)}\n"
        f"# {f.says}\n{f.key}: {f.value}\n"
        f"request_timeout: {r.randint(2, 60)}s\nfeature_probe: false\nregion_hint: auto"
    )


def _typo(word: str, r: random.Random) -> str:
    if len(word) < 4:
        return word
    i = r.randint(1, len(word) - 3)
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


_CHAT_OPENER = ("ok", "so", "quick", "thing", "before", "you", "continue")
_CHAT_CLOSER = ("sorry", "typing", "on", "my", "phone")


def _typo_chat(f: Fact, r: random.Random) -> str:
    opener = " ".join(_typo(w, r) for w in _CHAT_OPENER)
    closer = " ".join(_typo(w, r) for w in _CHAT_CLOSER)
    return f"{opener}, {f.says} .. {closer}"


def _dictation_text(f: Fact, r: random.Random) -> str:
    return (
        "okay so um dictating this while I walk the thing to remember is "
        f"{f.says} period and then carry on with the tests like before thanks"
    )


def _long_brief_middle(f: Fact, r: random.Random) -> str:
    return (
        "Longer brief for the next part. First get the failing test green without touching "
        "the public interface; if you need a helper, put it next to the code that uses it. "
        "Keep the commit small and explain in the message why the old behaviour was wrong. "
        f"{_cap(f.says)}. After that, run the whole suite twice, because the flaky network "
        "test sometimes passes by luck. If anything in the docs is out of date, list it "
        "rather than rewriting it, and leave the changelog to me."
    )


def _afterthought(f: Fact, r: random.Random) -> str:
    return f"one more thing I forgot to mention: {f.says}. carry on"


def _transcript_excerpt(f: Fact, r: random.Random) -> str:
    a, b, c = r.sample(_FILLER_NAMES, 3)
    return (
        "transcript from the call, the relevant bit:\n\n"
        f"[00:{r.randint(10, 40)}:0{r.randint(1, 9)}] {a}: can we get the patch out this week\n"
        f"[00:{r.randint(10, 40)}:1{r.randint(1, 9)}] {b}: probably, one thing though, "
        f"{f.says}\n"
        f"[00:{r.randint(10, 40)}:2{r.randint(1, 9)}] {c}: yep, noted\n"
        f"[00:{r.randint(10, 40)}:3{r.randint(1, 9)}] {a}: great, let's move on to hiring"
    )


def _review_thread_paste(f: Fact, r: random.Random) -> str:
    a, b = r.sample(_FILLER_NAMES, 2)
    file = r.choice(_FILES)
    return (
        f"copying the review thread on `{file}`:\n\n"
        f"{a.lower()} commented on line {r.randint(10, 90)}:\n  nit: this name is a bit vague\n"
        f"{b.lower()} commented on line {r.randint(91, 180)}:\n  {f.says}. please keep that\n"
        f"{a.lower()}:\n  agreed, LGTM once the nit is sorted"
    )


def _incident_timeline_paste(f: Fact, r: random.Random) -> str:
    return (
        "pasting the incident timeline, read it before you start:\n\n"
        f"{_clock(r)[:5]}  alert fired, p95 latency over budget\n"
        f"{_clock(r)[:5]}  rolled the canary back\n"
        f"{_clock(r)[:5]}  root cause found in the retry loop\n"
        f"{_clock(r)[:5]}  follow-up agreed: {f.says}\n"
        f"{_clock(r)[:5]}  incident closed"
    )


def _policy_doc_excerpt(f: Fact, r: random.Random) -> str:
    return (
        "from the engineering policy doc, section 4:\n\n"
        "4.1 Every service has a named owner in the catalogue.\n"
        "4.2 Changes to shared infrastructure need a second reviewer.\n"
        f"4.3 {_cap(f.says)}.\n"
        "4.4 Exceptions are granted by the platform lead in writing."
    )


def _vendor_notice_paste(f: Fact, r: random.Random) -> str:
    return (
        "the vendor sent this, fyi:\n\n"
        "Dear customer,\nthank you for your continued trust. As part of our scheduled "
        f"maintenance programme please note: {f.says}. Our support team remains available "
        f"under the usual number.\nKind regards,\nCustomer Operations ({_short(r).capitalize()} "
        "Systems)"
    )


SURFACES: dict[str, tuple[str, Callable[[Fact, random.Random], str]]] = {
    "npm-warn-output": ("tool", _npm_warn_output),
    "cargo-test-out": ("tool", _cargo_test_out),
    "go-test-verbose": ("tool", _go_test_verbose),
    "docker-inspect-labels": ("tool", _docker_inspect_labels),
    "aws-tag-listing": ("tool", _aws_tag_listing),
    "chart-values-dump": ("tool", _chart_values_dump),
    "pg-expanded-row": ("tool", _pg_expanded_row),
    "git-blame-lines": ("tool", _git_blame_lines),
    "unit-log-since": ("tool", _unit_log_since),
    "ruff-check-hint": ("tool", _ruff_check_hint),
    "response-headers": ("tool", _response_headers),
    "db-migrate-refusal": ("tool", _db_migrate_refusal),
    "mypy-error-note": ("tool", _mypy_error_note),
    "gradle-build-out": ("tool", _gradle_build_out),
    "pod-events-table": ("tool", _pod_events_table),
    "gh-run-view": ("tool", _gh_run_view),
    "jest-snapshot-out": ("tool", _jest_snapshot_out),
    "numbered-approach": ("assistant", _numbered_approach),
    "step-wrapup": ("assistant", _step_wrapup),
    "pr-description-draft": ("assistant", _pr_description_draft),
    "review-remark": ("assistant", _review_remark),
    "noted-constraints": ("assistant", _noted_constraints),
    "before-i-edit": ("assistant", _before_i_edit),
    "test-plan-outline": ("assistant", _test_plan_outline),
    "open-questions-answered": ("assistant", _open_questions_answered),
    "my-understanding": ("assistant", _my_understanding),
    "repro-notes": ("assistant", _repro_notes),
    "changeset-blurb": ("assistant", _changeset_blurb),
    "quick-sanity-pass": ("assistant", _quick_sanity_pass),
    "mail-chain-paste": ("user", _mail_chain_paste),
    "ops-procedure-paste": ("user", _ops_procedure_paste),
    "app-log-dump": ("user", _app_log_dump),
    "exception-paste": ("user", _exception_paste),
    "config-blob-paste": ("user", _config_blob_paste),
    "typo-chat": ("user", _typo_chat),
    "dictation-text": ("user", _dictation_text),
    "long-brief-middle": ("user", _long_brief_middle),
    "afterthought": ("user", _afterthought),
    "transcript-excerpt": ("user", _transcript_excerpt),
    "review-thread-paste": ("user", _review_thread_paste),
    "incident-timeline-paste": ("user", _incident_timeline_paste),
    "policy-doc-excerpt": ("user", _policy_doc_excerpt),
    "vendor-notice-paste": ("user", _vendor_notice_paste),
}

#: the user surfaces that paste a long chunk (a thread, a log, a trace, a config...) holding the
#: fact on one of its lines
PASTED = frozenset(
    {
        "mail-chain-paste", "ops-procedure-paste", "app-log-dump", "exception-paste",
        "config-blob-paste", "transcript-excerpt", "review-thread-paste",
        "incident-timeline-paste", "policy-doc-excerpt", "vendor-notice-paste",
    }
)  # fmt: skip


# -- corrections: how a later value replaces the first --------------------------------------------
# Most name only the later value (the emphasis of this set); some name the earlier one too.


def _plan_shift_note(f: Fact, old: str, r: random.Random) -> str:
    return f"Small adjustment on the {f.subject} since this morning's plan: {f.says}."


def _later_state_line(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"{_stamp(r)} {r.choice(_FILLER_SERVICES)} state: {f.key}={f.value} "
        f"applied by {r.choice(_FILLER_NAMES).lower()}"
    )


def _relayed_by_colleague(f: Fact, old: str, r: random.Random) -> str:
    who = r.choice(_FILLER_NAMES)
    return f"{who} asked me to pass this on: the {f.subject} is {f.value} going forward."


def _later_config_dump(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"$ cat /etc/{r.choice(_FILLER_SERVICES)}/effective.yaml\n"
        f"# rendered {_stamp(r)}\nreplicas: {r.randint(2, 9)}\n{f.key}: {f.value}\n"
        f"log_format: json\nmetrics_port: {r.randint(9000, 9999)}"
    )


def _back_to_value(f: Fact, old: str, r: random.Random) -> str:
    return f"Let's go back to {f.value} for the {f.subject}, same as we had originally."


def _bare_restatement(f: Fact, old: str, r: random.Random) -> str:
    return f"Restating just the part that moved, so it's in one place: {f.key} = {f.value}."


def _earlier_note_void(f: Fact, old: str, r: random.Random) -> str:
    return f"Ignore my earlier message about the {f.subject}. {_cap(f.says)}."


def _disregard_line(f: Fact, old: str, r: random.Random) -> str:
    return f"please disregard the {f.subject} line above; {f.says}"


def _rollout_revision_out(f: Fact, old: str, r: random.Random) -> str:
    svc = r.choice(_FILLER_SERVICES)
    return (
        f'Release "{svc}" has been upgraded. Happy Helming!\nNAME: {svc}\n'
        f"NAMESPACE: prod\nSTATUS: deployed\nREVISION: {r.randint(4, 40)}\n"
        f"USER-SUPPLIED VALUES:\n{f.key}: {f.value}"
    )


def _ack_and_apply(f: Fact, old: str, r: random.Random) -> str:
    return f"Understood. I'll use {f.value} for the {f.subject} from this point on."


def _final_word(f: Fact, old: str, r: random.Random) -> str:
    return f"final word on the {f.subject}: {f.value}. please dont reopen it lol"


def _ticket_resolution(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"OPS-{r.randint(100, 999)} resolved\nResolution: {f.subject} set to {f.value}.\n"
        f"Closed by {r.choice(_FILLER_NAMES)} at {_clock(r)[:5]}."
    )


def _call_outcome(f: Fact, old: str, r: random.Random) -> str:
    who = r.choice(_FILLER_NAMES)
    return (
        f"just got off the phone with {who} and the {f.subject} is {f.value} "
        "they were very clear about it"
    )


def _rather_than(f: Fact, old: str, r: random.Random) -> str:
    return f"For the {f.subject}: {f.value} rather than {old}."


def _retired_value(f: Fact, old: str, r: random.Random) -> str:
    return f"{old} is retired as the {f.subject}; {f.value} takes its place."


def _prev_current_event(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"{_stamp(r)} event=setting.rotated key={f.key} prev={old} current={f.value} "
        f"actor={r.choice(_FILLER_NAMES).lower()}"
    )


def _not_that_one(f: Fact, old: str, r: random.Random) -> str:
    return f"Use {f.value} for the {f.subject}. Not {old}, that one's stale."


def _then_today_table(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"Where the {f.subject} stands:\n\n| key | last week | today |\n|---|---|---|\n"
        f"| {f.key} | {old} | {f.value} |"
    )


def _dropped_in_favour(f: Fact, old: str, r: random.Random) -> str:
    return f"We dropped {old} in favour of {f.value} for the {f.subject}."


#: name: (register, whether it names the old value, how it is written)
CORRECTIONS: dict[str, tuple[str, bool, Callable[[Fact, str, random.Random], str]]] = {
    "plan-shift-note": ("user", False, _plan_shift_note),
    "later-state-line": ("tool", False, _later_state_line),
    "relayed-by-colleague": ("user", False, _relayed_by_colleague),
    "later-config-dump": ("tool", False, _later_config_dump),
    "back-to-value": ("user", False, _back_to_value),
    "bare-restatement": ("assistant", False, _bare_restatement),
    "earlier-note-void": ("user", False, _earlier_note_void),
    "disregard-line": ("user", False, _disregard_line),
    "rollout-revision-out": ("tool", False, _rollout_revision_out),
    "ack-and-apply": ("assistant", False, _ack_and_apply),
    "final-word": ("user", False, _final_word),
    "ticket-resolution": ("tool", False, _ticket_resolution),
    "phoned-in-outcome": ("user", False, _call_outcome),
    "rather-than": ("user", True, _rather_than),
    "retired-value": ("assistant", True, _retired_value),
    "prev-current-event": ("tool", True, _prev_current_event),
    "not-that-one": ("user", True, _not_that_one),
    "then-today-grid": ("assistant", True, _then_today_table),
    "dropped-in-favour": ("user", True, _dropped_in_favour),
}

REGISTER_OF: dict[str, str] = {
    **{name: reg for name, (reg, _) in SURFACES.items()},
    **{name: reg for name, (reg, _, _) in CORRECTIONS.items()},
}


# -- sessions -------------------------------------------------------------------------------------


def _mix(count: int) -> tuple[int, int, int]:
    """How many singles, correction pairs and coexisting pairs a session of ``count`` holds."""
    corrections = max(1, round(count * 5 / 24))
    pairs = max(1, round(count * 2 / 24))
    return count - 2 * corrections - 2 * pairs, corrections, pairs


def _ring(seed: int, label: str, items: list[Any], variant: int, n: int) -> list[Any]:
    """``n`` items of a per-seed shuffled ring, starting where session ``variant - 1`` stopped."""
    order = list(items)
    random.Random(f"heldout-m|{seed}|{label}").shuffle(order)
    return [order[(variant * n + i) % len(order)] for i in range(n)]


def _at(r: random.Random, low: float, high: float) -> float:
    return round(r.uniform(low, high), 4)


def _session(seed: int, count: int, variant: int, attempt: int) -> list[dict[str, Any]]:
    n_single, n_fix, n_two = _mix(count)
    r = random.Random(f"heldout-m|{seed}|{variant}|{attempt}")
    tag = (variant + random.Random(f"heldout-m|{seed}|tag").randrange(TAGS)) % TAGS
    by_shape = {s: [t for t in TEMPLATES if t.shape == s] for s in SHAPES}
    singles = _ring(seed, "single", by_shape["single"], variant, n_single)
    fixes = _ring(seed, "correction", by_shape["correction"], variant, n_fix)
    twos = _ring(seed, "coexist", by_shape["coexist"], variant, n_two)
    surfaces = iter(_ring(seed, "surface", list(SURFACES), variant, n_single + n_fix + 2 * n_two))
    ways = iter(_ring(seed, "way", list(CORRECTIONS), variant, n_fix))
    drawn: list[dict[str, Any]] = []

    def plant(t: Template, which: int, value: str, at: float, **extra: Any) -> dict[str, Any]:
        fact = Fact(t, which, value)
        old = extra.pop("old", None)
        if old is None:
            style = next(surfaces)
            text = SURFACES[style][1](fact, r)
        else:
            style = next(ways)
            text = CORRECTIONS[style][2](fact, old, r)
        item = {"kind": t.kind, "at": at, "text": text, "keep": [value], "style": style,
                "template": t.name, "subject": fact.subject, **extra}  # fmt: skip
        drawn.append(item)
        return item

    for t in singles:
        plant(t, 0, _draw(t.form, r, r.randrange(60), tag), _at(r, 0.03, 0.95))
    for n, t in enumerate(fixes):
        pick = r.randrange(60)
        old = _draw(t.form, r, pick, tag)
        new = _replacement(t.form, old, r, pick, tag)
        first = _at(r, 0.03, 0.6)
        plant(t, 0, old, first, ref=f"fix{n}")
        plant(t, 0, new, round(first + r.uniform(0.26, 0.35), 4), old=old, to=f"fix{n}")
    for n, t in enumerate(twos):
        pick = r.randrange(60)
        a = _draw(t.form, r, pick, tag)
        b = _draw(t.form, r, pick, tag)
        plant(t, 0, a, _at(r, 0.03, 0.95), ref=f"two{n}a", pair=f"two{n}b")
        plant(t, 1, b, _at(r, 0.03, 0.95), ref=f"two{n}b", pair=f"two{n}a")
    drawn.sort(key=lambda c: c["at"])
    ids = {c["ref"]: f"m{i:02d}" for i, c in enumerate(drawn) if "ref" in c}
    out = []
    for i, c in enumerate(drawn):
        item = {"id": f"m{i:02d}", **{k: v for k, v in c.items() if k not in ("ref", "to", "pair")}}
        if "to" in c:
            item["supersedes"] = ids[c["to"]]
        if "pair" in c:
            item["coexists"] = ids[c["pair"]]
        out.append(item)
    return out


def _sound(canaries: list[dict[str, Any]]) -> bool:
    """Every keep string is in its own text and in no other canary's (a correction naming the
    value it replaces aside); no keep string holds another; the ways that name only the later
    value do not name the earlier one; no two canaries share a moment."""
    keeps = [k for c in canaries for k in c["keep"]]
    if len(set(keeps)) != len(keeps) or any(len(k) < 5 for k in keeps):
        return False
    if any(a != b and a in b for a in keeps for b in keeps):
        return False
    if len({c["at"] for c in canaries}) != len(canaries):
        return False
    by_id = {c["id"]: c for c in canaries}
    for c in canaries:
        if not all(k in c["text"] for k in c["keep"]):
            return False
        if "(was " in c["text"] or "[superseded" in c["text"] or not 0 < c["at"] < 1:
            return False
        for o in canaries:
            if o is c or c.get("supersedes") == o["id"]:
                continue
            if any(k in c["text"] for k in o["keep"]):
                return False
        if "supersedes" in c:
            old = by_id[c["supersedes"]]
            names_old = CORRECTIONS[c["style"]][1]
            if names_old != all(k in c["text"] for k in old["keep"]):
                return False
    return True


def generate(seed: int, count: int = 24, variant: int = 0) -> dict[str, Any]:
    """``count`` canaries for session ``variant`` of a run seeded ``seed``, in the shape
    ``bench/retention.py`` reads (``{"canaries": [...]}``)."""
    if count < 6:
        raise ValueError(f"count must be at least 6, not {count}")
    for attempt in range(200):
        canaries = _session(seed, count, variant, attempt)
        if _sound(canaries):
            return {"generator": "heldout-m", "seed": seed, "variant": variant,
                    "canaries": canaries}  # fmt: skip
    raise RuntimeError(f"no sound draw for seed {seed}, session {variant}")  # pragma: no cover
