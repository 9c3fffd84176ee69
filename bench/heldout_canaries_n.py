r"""Held-out canary generator, set N: facts and wording written blind, for ``bench/retention.py``.

Lab note
========

Why
---
The retention benchmark plants facts ("canaries") into recorded agent sessions, compacts five
times, and checks which facts survive and whether a corrected value is still shown as current.
A summarizer tuned against one set of canaries can learn that set's words. This is the
fourteenth set, written without looking at the summarizer or at any earlier set's facts, so its
templates, surfaces and ways of correcting are nobody's tuning target. Run it with
``bench/retention.py --generator bench/heldout_canaries_n.py --seed S``.

Emphasis
--------
(1) One setting, two spellings. Real sessions name a setting by its abbreviated key in config,
env files, logs and code (``db_pool_max``, ``DB_POOL_MAX``, ``db.pool.max``, ``dbPoolMax``,
``--db-pool-max``), and by its name spelled out in chat and prose ("the database connection
pool limit"). Every template has both: a key holding at least one abbreviation
(``ABBREVIATIONS``: db, cfg, max, tmo, sz, dt, ver, ...) and a name that spells each
abbreviation out and never uses it. Each surface and each correction way writes the key, the
name, or (two surfaces) both. In three corrections out of four, the fact and its correction
name the setting in opposite spellings: the key first and the name later, or the name first
and the key later. In the fourth, both use the same spelling, as a control. (2) Numbers with
units written different ways: a duration is ``12,473 ms``, ``12473ms``, ``12.473 s`` or
``12473 milliseconds``; a long one ``17h 41m``, ``17 h 41 min``, ``1061 minutes`` or ``17 hours
41 minutes``; a size ``41,274 MB``, ``41.274 GB`` or ``41274MB``; a rate, money and dates
several ways too. The new value of a correction is drawn in a fresh notation, so about half of
the number and date corrections write the new value differently from the old one. (3) Facts in
the middle of long outputs: 20 of the 45 fact surfaces are 12 lines or more (a
``pg_settings`` query, a boot banner, ``pprint`` of a settings dict, JSON container logs, a
DuckDB box table, a config over ``ssh``, Spring actuator JSON, an agent's ``cat -n`` view, a
preflight script, an app log tail, a docs file, pasted config, vars, a design doc, a team chat,
a multi-ask message, ...), with the fact on one line in their middle half. (4) Identifiers and
preferences said by tools or the assistant: a fact of those two kinds is never typed by the user
(``NOT_TYPED``); only their corrections may come from anyone.

Evaluation seeds
----------------
Drawn with ``python3 -c "import secrets; print([secrets.randbelow(9_000_000)+1_000_000 for _
in range(3)])"`` before any code was written: 3201362, 8094083, 6911798 (``EVALUATION_SEEDS``).
I never ran the generator or the benchmark with them, and no test does: the tests use 7, 29,
613, 52, 1999, 1234 and 47, and check that these differ from the evaluation seeds. The
``__main__`` of this file also refuses them.

What I read
-----------
- ``bench/retention.py``, the interface only. The listing of its top-level names and constants
  (``grep -n "^def \|^class \|^[A-Z_]* ="``), which also shows values such as ``WINDOW =
  16_384``, ``CYCLES = 5``, ``TARGET = 0.95``, ``PLACEMENTS``, ``METHODS``, ``DEFAULT_DATA``.
  Lines 170-275: ``Canary``, ``canaries_from``, ``load_canaries``, ``CanarySource``,
  ``_generator``, and ``Seeded`` with its docstring. Lines 460-620: the tail of ``wire_text``,
  ``REPLACED_MARK`` / ``_WAS``, ``own_text_marks``, ``strip_replaced``,
  ``presents_as_current``, ``KeepIndex``, ``Score`` and ``score_context``; the range ran on
  into the ``# -- token ruler`` heading and the first docstring line of ``class Ruler``.
  ``aggregate`` whole (lines 1016-1186). Lines 1892-1945 of ``main``: its option list (the
  ``add_argument`` lines with the lines between them, including the ``--ablate`` help "rank the
  ledger without these signals", whose signal names I did not look up) and its first two
  ``parser.error`` checks.
- ``bench/heldout_canaries_m.py``: its lab note (module docstring), ``generate``, and lines
  181-196 (``KINDS``, ``REGISTERS``, ``SHAPES``), to use the same kind names. The listing of its
  top-level names by the same grep showed the names of its helper, surface and correction
  functions, and the one-line constants that match the pattern: ``_BAD``, ``_WEEKDAYS``,
  ``_TLDS``, ``_ROOTS``, ``_EXTS``, ``_FLAG_PREFIX``, ``_BRANCH_PREFIX``, ``_AREAS``, ``TAGS =
  128``, ``_EPOCH``, ``_SPAN``, ``_FILLER_NAMES``, ``_FILLER_SERVICES``, ``_FILES``,
  ``_CHAT_OPENER`` and ``_CHAT_CLOSER``. I kept away from all of these: other host suffixes,
  roots, branch prefixes, services and people, and dates in 2049-2060. The idea of congruent
  tags that keep the values of a run distinct comes from M's lab note, and I used it here too
  (``TAGS``).
- ``tests/bench/test_heldout_canaries_m.py`` whole. Mine mirrors its structure and checks, and
  its ``MARKERS`` list starts with M's words, followed by a few of my own.
- The lab notes (module docstrings only, read as strings) of all the earlier sets: the first
  3,500 characters of each (the first 40 lines as printed), and the "Design" sections of J, K
  and L, to see what they stressed. What I took from them: avoid L's doubled vowels and
  ``ABCD-12345`` tickets, M's ``ABC#1234`` tickets and ``@word.word`` handles, K's week and
  ordinal dates and ``1h14m07s`` durations, and their "(was X)", arrow, diff and strike-through
  corrections; also avoid the coexisting pairs they used (two memory limits, primary and
  replica hosts, beta and GA dates, connect and read timeouts, ...).
- The surface names of sets K, L and M: I imported the modules and printed the style names
  their generated canaries carry, on seeds 1-3 only, and the sizes and first five keys of
  their ``SURFACES``, ``CORRECTIONS`` and ``REGISTER_OF``. Also ``EARLIER_SURFACES`` in
  ``tests/bench/support.py``.
- ``tests/bench/support.py`` whole, ``tests/conftest.py``, ``tests/needs.py``, and
  ``pyproject.toml`` whole.
- ``ls bench tests tests/bench`` (file names only) and ``ls -la`` of
  ``/work/shared/data/swebench-gemini3/``. The recorded sessions only by substring search, in
  the tests and in one throwaway check: no keep string of six test seeds (12 sessions each)
  occurs there, and none of their 1,554 made-up words does either. I read no session text.
- The output of my own throwaway checks on test seeds (7, 29, 613, 52, 1999, 1234): sample
  texts of seeds 7 and 29, the spelling-mismatch share (0.75), notation switches, the shares of
  marker words in corrections (none above 0.2), coverage in 16 sessions, and repeats in a run of
  40. The tiny retention run in the tests is checked for keys only; no figure was printed.
- By accident: a read-only ``git status --short`` at the start showed the names of other
  people's uncommitted files: ``src/abridged/engine/summarize/ledger.py``, ``references.py``,
  a new ``short_forms.py``, and ``tests/engine/summarize/test_references.py`` and
  ``test_supersession.py``. I opened none of them. The name ``short_forms.py`` suggests that
  someone is working on abbreviations in the summarizer right now. My first emphasis (keys
  against spelled-out names) was the brief's suggestion, and I had chosen it before I saw that
  name. Still, a reader should know that the two coincide, and that this set measures that
  work on facts it was not written against.

What I did not read
-------------------
Nothing under ``src/abridged/`` (the summarizer, ledger and references included). No template
or surface body of any earlier set, and not ``bench/canary_generator.py``. No canary JSON file,
not ``bench/RESULTS.md``, no README, no issue notes, no git log or diff, and no benchmark figure.
Of ``retention.py``, nothing beyond the ranges above (its module docstring included).

Scoring, as read
----------------
A value is kept when every one of its keep strings is in the context. An old value is stale
when one of its keep strings is left after removing three things: the correcting canary's whole
text, the new value's keep strings, and the lines with ``[superseded`` and the ``(was ...)``
parentheticals. A coexisting pair has no ``supersedes``, so both of its values are required and
neither can be stale. A correction that names only the new value cannot make the old one stale
by itself. One that names the old value is fine while it is quoted whole, but a summary that
rewrites it and keeps the old value shows that value as current. This set writes neither
marker. Canaries are placed verbatim in a user message, an observation or an assistant
message, one placement per pass, so no text depends on its placement. Tool output also reads
as a paste by the user or as an output the assistant quotes.

Design
------
- 52 templates over 12 kinds (constraint, prohibition, preference, identifier, decision,
  number, path, version, owner, deadline, setting, endpoint). 24 single facts, two per kind; 20
  correction pairs, with every kind corrected and eight kinds corrected twice; and 8 coexisting
  pairs of one value form, each with two subjects and two keys: two teams' budgets, payment and
  refund webhooks, a penetration test and a recovery drill, minimum iOS and Android app
  versions, dashboard and alerting owners, a server key and certificate path, invoice and
  reminder batch windows, staging and production accounts. Each canary also carries
  ``subject`` (the spelled-out name) and ``spelled`` (key, name or both), besides what
  ``canaries_from`` reads.
- A session of 24 holds 10 singles, 5 corrections (10 canaries) and 2 coexisting pairs (4
  canaries); other counts scale, with at least one of each and ``count >= 6``. Templates,
  surfaces and correction ways each sit in a shuffled ring per seed, which consecutive sessions
  walk through, so any 16 consecutive sessions plant every one of them. Within a session, the
  facts are matched to the surfaces of its window by a bipartite matching that honours the
  constraints above: spellings, and no user surface for identifiers and preferences. A
  correction comes 0.26-0.36 of the session after the fact it replaces.
- 45 fact surfaces, each writing the key (22), the name (21) or both (2). ``tool`` (19):
  ``pg_settings`` via psql, an effective-config boot banner, ``tofu output``, ``docker exec
  printenv``, ``node -p`` of a config object, ``pprint`` of a settings dict, a
  ``[tool.x]`` table of ``pyproject.toml``, JSON container logs, a DuckDB box table, ``yq``, a
  conf file over ``ssh``, ``rg -n`` hits, Spring actuator env JSON, an agent's ``cat -n`` file
  view, ``--help`` with defaults, a preflight script, an app log tail, ``doctor`` notes, and an
  operations doc. ``assistant`` (12): found in config, next-steps plan, findings summary,
  snippet proposal, setting explainer, short answer, merge request blurb, markdown settings
  grid, verified claim, heads-up aside, about-to-run, hand-back note. ``user`` (14): quick ping,
  pasted conf block, takeaways, user story, vars file, design doc excerpt, terminal scrollback,
  short reminder, team chat, context in a question, intranet page, multi-ask message, startup
  log, forwarded chat bubble. The names avoid ``EARLIER_SURFACES`` (substring check, with and
  without dashes) and the names of sets K, L and M.
- 20 correction ways. 14 name only the new value: config reload log line, ``config get``
  read-back, boot banner re-rendered, applied overrides, ``--flag=`` dry-run, chatops bot
  reply, board field set, casual heads-up, second-hand word, ops sync outcome, channel topic,
  assistant adopting it, assistant re-reading the source, plan restated. 6 name the old value
  too: ``config explain`` with the value it overrides, runbook rev 4 vs rev 3, a ``config
  history`` of two revisions, "the X I gave you is the staging one", README vs deployed, and a
  Q/A ("still X? no, Y"). None of them uses an arrow, a diff, strike-through, "(was X)", "instead
  of", "rather than" or "back to". No marker word of the test's list is in more than a quarter
  of the corrections.
- Values are drawn fresh for each seed and session, in 23 forms: made-up words of three
  syllables (no doubled vowels; no letter pair in a quarter of them) in kebab and snake pairs,
  branches ``lts/word-NNN``, channels, project ids, ``CHG``/``INC`` + 7 digits,
  payment-provider-like ``acct_`` ids (letter pairs between digits), people (given name +
  made-up surname), e-mail addresses on ``.example``, files and directories under ``/etc``,
  ``/run``, ``/scratch``, ``~/.config`` and more, hosts on ``.internal``/``.home.arpa``/``.test``/
  ``.localdomain``, https, amqp and redis URLs with ports, three-part versions ``NN.NN.NNN``,
  dates in 2049-2060 in five styles, and numbers always with their unit, in the notations
  above. Every number, date and version patch of a session is congruent to the session's index
  (shifted per seed) modulo ``TAGS``, so no two sessions of a run draw the same value.
  Deadlines only move later and versions only go up. A session is redrawn until every keep
  string is in its own text and in no other canary's (a correction names the value it replaces
  exactly when its way says it does), and no keep string holds another.

What the set cannot show
------------------------
It does not say why a value was lost, only that it was. It cannot tell an abbreviation that a
summarizer failed to link to its spelled-out name from a fact that was dropped for length;
``spelled`` is recorded on each canary so that survival and staleness can be split by spelling
afterwards, but the benchmark's own tables group only by kind, style and template. Each
correction way has one register and one spelling, so a way's figure mixes the way with its
spelling. The numbers are made up and unround, while real settings are often round, so a
summary that rounds ``12,473 ms`` to "about 12 s" counts as lost. Placement is chosen by the
benchmark, so a chat line can end up inside a tool observation. All values are made up, so
this set says nothing about facts that a model could recall from training.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

#: Drawn with ``secrets.randbelow(9_000_000) + 1_000_000`` before any code was written. Never
#: run by the author nor by a test.
EVALUATION_SEEDS = (3201362, 8094083, 6911798)

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
#: how a text names the setting a fact is about: by its abbreviated key (``db_pool_max``,
#: ``DB_POOL_MAX``, ``db.pool.max``, ``dbPoolMax``), by its name spelled out in prose ("the
#: database connection pool limit"), or both
SPELLINGS = ("key", "name", "both")

#: the abbreviations of the keys, with what they stand for in prose: every template's key holds
#: at least one, and its spelled-out name holds the expansion, never the short form
ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "acct": ("account",),
    "addr": ("address",),
    "alrt": ("alerting",),
    "am": ("americas",),
    "andr": ("android",),
    "auth": ("authentication",),
    "bdgt": ("budget",),
    "bill": ("billing",),
    "bkt": ("bucket",),
    "bld": ("build",),
    "br": ("branch",),
    "ca": ("certificate authority",),
    "cert": ("certificate",),
    "cfg": ("configuration",),
    "chan": ("channel",),
    "chg": ("change",),
    "cli": ("client",),
    "col": ("column",),
    "conc": ("concurrency",),
    "conn": ("connection",),
    "crt": ("certificate",),
    "dash": ("dashboard",),
    "db": ("database",),
    "dir": ("directory",),
    "dr": ("disaster recovery",),
    "dt": ("date",),
    "eol": ("end of life",),
    "eu": ("europe",),
    "exp": ("expiry",),
    "fmt": ("formatter",),
    "frz": ("freeze",),
    "hook": ("webhook",),
    "id": ("identifier",),
    "img": ("image",),
    "inc": ("incident",),
    "inv": ("invoice",),
    "iss": ("issuer",),
    "lat": ("latency",),
    "len": ("length",),
    "lyt": ("layout",),
    "max": ("maximum", "limit"),
    "mgr": ("manager",),
    "mig": ("migration",),
    "min": ("minimum",),
    "mo": ("monthly",),
    "mq": ("message queue",),
    "own": ("owner",),
    "pay": ("payments",),
    "pen": ("penetration",),
    "pkg": ("package",),
    "pmt": ("payment",),
    "prd": ("production",),
    "pref": ("preferred",),
    "priv": ("private",),
    "proj": ("project",),
    "prot": ("protected",),
    "pub": ("public",),
    "ref": ("reference",),
    "req": ("request",),
    "rfnd": ("refund",),
    "rmd": ("reminder",),
    "ro": ("read-only",),
    "rt": ("runtime",),
    "rvw": ("review",),
    "sec": ("security",),
    "sess": ("session",),
    "sock": ("socket",),
    "srv": ("server",),
    "stg": ("staging",),
    "svc": ("service",),
    "sz": ("size",),
    "tgt": ("target",),
    "tmo": ("timeout",),
    "tmp": ("temporary",),
    "tput": ("throughput",),
    "upstr": ("upstream",),
    "vend": ("vendored",),
    "vndr": ("vendor",),
    "ver": ("version",),
    "win": ("window",),
    "wkr": ("worker",),
}


# -- made-up values ------------------------------------------------------------------------------

_ONSETS = (
    "b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "h", "j", "w",
    "br", "dr", "gr", "kr", "tr", "st", "sk", "pl", "fl", "sn", "vl", "gl",
)  # fmt: skip
_VOWELS = "aeiou"
_CODAS = ("", "", "", "n", "r", "l", "s", "k", "m")
_LAST_CODAS = ("", "", "n", "r", "l", "s", "k", "m", "t")
_BAD = re.compile(r"(.)\1\1|aa|ee|ii|oo|uu")

_GIVEN = (
    "Aurelio", "Bongani", "Chidi", "Dagny", "Eero", "Fiorella", "Gunnar", "Halima", "Ismo",
    "Juniper", "Kenji", "Ludmila", "Matteo", "Nkechi", "Orla", "Pavlo", "Rosalind", "Sefa",
    "Thiago", "Ulla", "Vesna", "Wendell", "Xiomara", "Yusuf", "Zdenka", "Anouk",
)  # fmt: skip
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_HOST_TLDS = ("internal", "home.arpa", "test", "localdomain")
_WEB_TLDS = ("dev", "cloud", "app")
_WEB_PATHS = ("push", "hooks", "oauth2", "ingest")
_FILE_ROOTS = ("/etc", "/usr/local/share", "/run", "~/.config", "./deploy")
_DIR_ROOTS = ("/scratch", "/home/ci/work", "/tmp", "~/.cache", "./build")
_BRANCH_PREFIX = ("lts", "hotfix", "stable", "ops")

#: words of the value forms (units, domains, roots, months, given names): the other letter runs
#: of a keep string are made-up words
FORM_WORDS = frozenset(
    {g.lower() for g in _GIVEN}
    | {m.lower() for m in _MONTHS}
    | {
        "acct", "example", "internal", "home", "arpa", "test", "localdomain", "https", "amqp",
        "redis", "cloud", "push", "hooks", "oauth", "ingest", "local", "share", "config",
        "deploy", "scratch", "work", "cache", "build", "toml", "sock", "json", "hotfix",
        "stable", "workers", "connections", "events", "minute", "minutes", "hours",
        "milliseconds",
    }
)  # fmt: skip

TAGS = 128  # every number, date and version of session i is congruent to i (shifted) modulo this


def _word(r: random.Random) -> str:
    """A made-up word of three syllables, six letters or more."""
    while True:
        parts = []
        for i in range(3):
            onset = "" if i == 0 and r.random() < 0.18 else r.choice(_ONSETS)
            coda = r.choice(_CODAS if i < 2 else _LAST_CODAS)
            parts.append(onset + r.choice(_VOWELS) + coda)
        word = "".join(parts)
        if 6 <= len(word) <= 11 and not _BAD.search(word) and word not in FORM_WORDS:
            return word


def _tagged(r: random.Random, low: int, high: int, tag: int) -> int:
    """A number in ``[low, high]`` congruent to ``tag`` modulo ``TAGS``."""
    base = low + (tag - low) % TAGS
    return base + TAGS * r.randrange((high - base) // TAGS + 1)


def _latency(n: int, pick: int) -> str:  # n milliseconds
    return (f"{n:,} ms", f"{n}ms", f"{n // 1000}.{n % 1000:03d} s", f"{n} milliseconds")[pick % 4]


def _span(n: int, pick: int) -> str:  # n minutes
    h, m = divmod(n, 60)
    return (f"{h}h {m:02d}m", f"{h} h {m} min", f"{n} minutes", f"{h} hours {m} minutes")[pick % 4]


def _size(n: int, pick: int, unit: str) -> str:  # n KB or MB
    bigger = {"KB": "MB", "MB": "GB"}[unit]
    return (f"{n:,} {unit}", f"{n // 1000}.{n % 1000:03d} {bigger}", f"{n}{unit}")[pick % 3]


def _rate(n: int, pick: int, unit: str) -> str:  # n per minute
    return (f"{n:,} {unit}/min", f"{n:,} {unit} per minute", f"{n} {unit} a minute")[pick % 3]


def _money(n: int, pick: int) -> str:
    return (f"£{n:,}", f"{n:,} GBP", f"GBP {n:,}")[pick % 3]


#: the forms whose value is a number with a unit, and how many ways each is written
NOTATIONS = {"latency": 4, "span": 4, "size": 3, "rate": 3, "money": 3, "count": 1}
DATE_STYLES = 5

_EPOCH = dt.date(2049, 1, 1)
_DATE_SPAN = 3650  # days: dates fall in 2049-2059


def _date(day: int, pick: int) -> str:
    d = _EPOCH + dt.timedelta(days=day)
    return (
        d.isoformat(),
        f"{d.day} {d:%B} {d.year}",
        f"{d:%a} {d.day:02d} {d:%b} {d.year}",
        f"{d:%B} {d.day}, {d.year}",
        f"{d.day:02d}.{d.month:02d}.{d.year}",
    )[pick % DATE_STYLES]


_DATE_FORMATS = ("%Y-%m-%d", "%d %B %Y", "%a %d %b %Y", "%B %d, %Y", "%d.%m.%Y")


def parse_date(value: str) -> dt.date:
    """The date a value of the ``date`` form says, in any of its styles.

    >>> parse_date("March 4, 2052") == parse_date("04.03.2052") == dt.date(2052, 3, 4)
    True
    """
    for fmt in _DATE_FORMATS:
        try:
            return dt.datetime.strptime(value, fmt).date()
        except ValueError:
            continue
    raise ValueError(f"not a date of this set: {value!r}")


_SPAN = re.compile(r"(\d+)h (\d+)m|(\d+) h (\d+) min|(\d+) hours (\d+) minutes")


def magnitude(form: str, value: str) -> int:
    """The number a value of a number form says, in the form's base unit (milliseconds,
    minutes, KB or MB, per minute, pounds, a count), whichever way it is written.

    >>> [magnitude("latency", v) for v in ("12,473 ms", "12473ms", "12.473 s")]
    [12473, 12473, 12473]
    >>> [magnitude("span", v) for v in ("17h 41m", "17 hours 41 minutes", "1061 minutes")]
    [1061, 1061, 1061]
    """
    number = re.sub(r"[^\d.]", "", value).strip(".")
    if form == "span":
        m = _SPAN.fullmatch(value)
        if m:
            h, mins = (int(g) for g in m.groups() if g is not None)
            return h * 60 + mins
        return int(number)
    if form in ("latency", "size") and "." in number:
        whole, part = number.split(".")
        return int(whole) * 1000 + int(part)
    if form not in NOTATIONS:
        raise ValueError(form)
    return int(number)


def version_key(value: str) -> tuple[int, ...]:
    return tuple(int(p) for p in value.split("."))


def _version(r: random.Random, tag: int) -> str:
    return f"{r.randint(11, 48)}.{r.randint(10, 99)}.{_tagged(r, 100, 999, tag)}"


def _higher_version(old: str, r: random.Random, tag: int) -> str:
    major, minor, patch = version_key(old)
    way = r.randrange(3)
    if way == 0 and patch + TAGS <= 999:
        return f"{major}.{minor}.{patch + TAGS * r.randint(1, (999 - patch) // TAGS)}"
    if way <= 1 and minor < 96:
        return f"{major}.{minor + r.randint(1, 3)}.{_tagged(r, 100, 999, tag)}"
    return f"{major + 1}.{r.randint(10, 99)}.{_tagged(r, 100, 999, tag)}"


def _acct(r: random.Random) -> str:
    """A made-up account id in the shape of a payment provider's: letter pairs between digits."""
    chars = []
    for i in range(12):
        pool = string.digits if i % 3 == 2 else string.ascii_letters
        chars.append(r.choice(pool))
    return "acct_" + "".join(chars)


def _person(r: random.Random) -> str:
    return f"{r.choice(_GIVEN)} {_word(r).capitalize()}"


def draw(form: str, r: random.Random, pick: int, tag: int, unit: str) -> str:
    """A fresh value of ``form``; ``pick`` chooses its notation or structure."""
    w = _word
    if form == "kebab2":
        return f"{w(r)}-{w(r)}"
    if form == "snake2":
        return f"{w(r)}_{w(r)}"
    if form == "branch":
        return f"{_BRANCH_PREFIX[pick % 4]}/{w(r)}-{_tagged(r, 100, 999, tag)}"
    if form == "channel":
        return f"#{w(r)}-{w(r)}"
    if form == "project":
        return f"{w(r)}-{w(r)}-{_tagged(r, 1000, 9999, tag)}"
    if form == "ticket":
        return f"{unit}{_tagged(r, 10_000, 999_999, tag):07d}"
    if form == "acct":
        return _acct(r)
    if form == "person":
        return _person(r)
    if form == "email":
        return f"{r.choice(_GIVEN).lower()}.{w(r)}@{w(r)}.example"
    if form == "file":
        return f"{_FILE_ROOTS[pick % 5]}/{w(r)}/{w(r)}.{unit}"
    if form == "dir":
        return f"{_DIR_ROOTS[pick % 5]}/{w(r)}/{w(r)}"
    if form == "host":
        return f"{w(r)}-{_tagged(r, 100, 999, tag)}.{w(r)}.{_HOST_TLDS[pick % 4]}"
    if form == "https":
        port = _tagged(r, 2000, 9999, tag)
        return f"https://{w(r)}.{w(r)}.{_WEB_TLDS[pick % 3]}:{port}/{_WEB_PATHS[pick % 4]}"
    if form == "amqp":
        return f"amqp://{w(r)}.{w(r)}.internal:{_tagged(r, 2000, 9999, tag)}/{w(r)}"
    if form == "redis":
        return f"redis://{w(r)}.{w(r)}.internal:{_tagged(r, 2000, 9999, tag)}/{pick % 16}"
    if form == "version":
        return _version(r, tag)
    if form == "date":
        return _date(_tagged(r, 0, _DATE_SPAN - 3 * TAGS, tag), pick)
    if form == "latency":
        return _latency(_tagged(r, 1100, 59_000, tag), pick)
    if form == "span":
        while True:
            n = _tagged(r, 130, 5900, tag)
            if n % 60 >= 2:
                return _span(n, pick)
    if form == "size":
        return _size(_tagged(r, 1100, 95_000, tag), pick, unit)
    if form == "rate":
        return _rate(_tagged(r, 1100, 95_000, tag), pick, unit)
    if form == "money":
        return _money(_tagged(r, 1100, 95_000, tag), pick)
    if form == "count":
        return f"{_tagged(r, 130, 990, tag)} {unit}"
    raise ValueError(form)


FORMS = (
    "kebab2", "snake2", "branch", "channel", "project", "ticket", "acct", "person", "email",
    "file", "dir", "host", "https", "amqp", "redis", "version", "date", *NOTATIONS,
)  # fmt: skip


def replacement(form: str, old: str, r: random.Random, *, pick: int, tag: int, unit: str) -> str:
    """A value that replaces ``old``: the same form (numbers and dates possibly written another
    way: ``pick`` is drawn afresh for them), a later date, a higher version."""
    for _ in range(100):
        if form == "date":
            day = (parse_date(old) - _EPOCH).days + TAGS * r.randint(1, 3)
            new = _date(day, pick)
        elif form == "version":
            new = _higher_version(old, r, tag)
        else:
            new = draw(form, r, pick, tag, unit)
        if new != old and new not in old and old not in new:
            return new
    raise RuntimeError(f"no replacement for {old!r}")  # pragma: no cover


# -- templates ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Template:
    """A fact about one setting (two for a coexisting pair): its abbreviated key, its name
    spelled out, and the sentence that says it in prose (``{v}``: the value)."""

    name: str
    kind: str
    shape: str
    form: str
    keys: tuple[str, ...]
    subjects: tuple[str, ...]
    says: tuple[str, ...]
    units: tuple[str, ...]


def _one(name: str, kind: str, form: str, spec: tuple[str, str, str], unit: str = "") -> Template:
    key, subject, says = spec
    return Template(name, kind, "single", form, (key,), (subject,), (says,), (unit,))


def _fix(name: str, kind: str, form: str, spec: tuple[str, str, str], unit: str = "") -> Template:
    key, subject, says = spec
    return Template(name, kind, "correction", form, (key,), (subject,), (says,), (unit,))


def _two(
    name: str, kind: str, form: str, specs: Sequence[tuple[str, str, str]], units: str = "|"
) -> Template:
    keys, subjects, says = zip(*specs, strict=True)
    left, right = units.split("|")
    return Template(name, kind, "coexist", form, keys, subjects, says, (left, right))


TEMPLATES = (
    # -- single facts: two of each kind
    _one("session-cutoff", "constraint", "span", (
        "max_sess_len", "maximum session length",
        "Interactive sessions are cut off after {v}, however busy the user is.")),
    _one("upload-ceiling", "constraint", "size", (
        "max_upload_sz", "maximum upload size",
        "Uploads larger than {v} are turned away at the edge, so anything bigger gets chunked."),
        "MB"),
    _one("frozen-schema", "prohibition", "snake2", (
        "db_schema_ro", "read-only database schema",
        "Nobody writes to the {v} schema from application code; only the replication job "
        "feeds it.")),
    _one("guarded-branch", "prohibition", "branch", (
        "prot_br", "protected branch",
        "Never force-push to {v}; the release tooling tags from it.")),
    _one("formatter-profile", "preference", "kebab2", (
        "fmt_profile", "formatter profile",
        "Formatting runs with the {v} profile on this team; the stock one reflows our "
        "docstrings.")),
    _one("review-room", "preference", "channel", (
        "rvw_chan", "review channel",
        "Review requests go to {v} rather than to people directly, please.")),
    _one("change-number", "identifier", "ticket", (
        "chg_req_ref", "change request reference",
        "Everything in this rollout is tracked under change request {v}."), "CHG"),
    _one("billing-sandbox", "identifier", "acct", (
        "bill_acct_id", "billing account identifier",
        "Test charges go against billing account {v}, never the live one.")),
    _one("vendored-parser", "decision", "kebab2", (
        "vend_pkg_name", "vendored package name",
        "We agreed to vendor the parser under the name {v} and drop the upstream dependency.")),
    _one("cache-shape", "decision", "snake2", (
        "cache_lyt", "cache layout",
        "The design review settled on the {v} cache layout for the read path.")),
    _one("tail-latency", "number", "latency", (
        "p99_lat_budget", "99th percentile latency budget",
        "The 99th percentile latency budget for checkout is {v}.")),
    _one("sandbox-spend", "number", "money", (
        "mo_spend_cap", "monthly spending cap",
        "Cloud spending on the sandbox account is capped at {v} a month.")),
    _one("trust-bundle", "path", "file", (
        "tls_ca_path", "certificate authority bundle path",
        "The internal certificate authority bundle lives at {v}."), "crt"),
    _one("scratch-space", "path", "dir", (
        "tmp_dir", "temporary directory",
        "Build scratch files go under {v}, which is wiped on every boot.")),
    _one("interpreter-pin", "version", "version", (
        "rt_ver", "runtime version",
        "The interpreter on the build hosts is pinned to {v}.")),
    _one("sdk-floor", "version", "version", (
        "min_sdk_ver", "minimum SDK version",
        "Clients older than SDK {v} are refused by the gateway.")),
    _one("payments-oncall", "owner", "person", (
        "pay_svc_oncall", "on-call owner of the payments service",
        "{v} owns the payments service this quarter; page them first.")),
    _one("security-inbox", "owner", "email", (
        "sec_contact", "security contact",
        "Vulnerability reports for this repository go to {v}.")),
    _one("cluster-cutover", "deadline", "date", (
        "cutover_dt", "cutover date",
        "The cutover to the new cluster happens on {v}.")),
    _one("wildcard-expiry", "deadline", "date", (
        "cert_exp", "certificate expiry",
        "The wildcard certificate expires on {v}, and the renewal has to land before that.")),
    _one("ingest-workers", "setting", "count", (
        "wkr_conc", "worker concurrency",
        "The ingest service runs {v} in parallel."), "workers"),
    _one("idle-cutoff", "setting", "latency", (
        "conn_idle_tmo", "idle connection timeout",
        "Idle connections are dropped after {v}.")),
    _one("metrics-gateway", "endpoint", "https", (
        "metrics_push_addr", "metrics push address",
        "Metrics are pushed to {v}.")),
    _one("staging-broker", "endpoint", "amqp", (
        "mq_broker_addr", "message queue broker address",
        "The message queue broker for staging is {v}.")),
    # -- corrections: a fact, then the same setting given another value
    _fix("body-ceiling", "constraint", "size", (
        "max_req_body", "maximum request body size",
        "Request bodies above {v} are rejected by the API."), "KB"),
    _fix("legal-hold-bucket", "prohibition", "kebab2", (
        "ro_bkt", "read-only bucket",
        "Don't write to the {v} bucket; it holds the legal hold copy.")),
    _fix("base-image", "preference", "kebab2", (
        "pref_base_img", "preferred base image",
        "For new services the team prefers the {v} base image.")),
    _fix("cloud-project", "identifier", "project", (
        "gcp_proj_id", "cloud project identifier",
        "The staging resources live in cloud project {v}.")),
    _fix("outage-ref", "identifier", "ticket", (
        "inc_ref", "incident reference",
        "This outage is being handled as incident {v}."), "INC"),
    _fix("shard-column", "decision", "snake2", (
        "shard_key_col", "shard key column",
        "We picked {v} as the column to shard the orders table on.")),
    _fix("ingest-target", "number", "rate", (
        "ingest_tput_tgt", "ingest throughput target",
        "The ingest path has to sustain {v}."), "events"),
    _fix("build-cache", "number", "size", (
        "bld_cache_sz", "build cache size",
        "The shared build cache may grow to {v}."), "MB"),
    _fix("db-socket", "path", "file", (
        "db_sock", "database socket path",
        "The local database listens on {v}."), "sock"),
    _fix("config-location", "path", "file", (
        "cfg_path", "configuration file path",
        "The service reads its configuration from {v}."), "toml"),
    _fix("db-engine", "version", "version", (
        "db_ver", "database engine version",
        "Production runs database engine version {v}.")),
    _fix("http-client-pin", "version", "version", (
        "http_cli_pin", "pinned HTTP client version",
        "The HTTP client package stays pinned at {v}.")),
    _fix("migration-driver", "owner", "person", (
        "mig_own", "owner of the data migration",
        "{v} is driving the data migration.")),
    _fix("release-manager", "owner", "email", (
        "rel_mgr", "release manager",
        "The release manager for this cycle is {v}.")),
    _fix("code-freeze", "deadline", "date", (
        "code_frz_dt", "code freeze date",
        "Code freeze for the release is {v}.")),
    _fix("vendor-eol", "deadline", "date", (
        "vndr_eol", "vendor end of life date",
        "The vendor stops supporting the old API on {v}.")),
    _fix("db-pool", "setting", "count", (
        "db_pool_max", "database connection pool limit",
        "The database connection pool is limited to {v}."), "connections"),
    _fix("upstream-timeout", "setting", "latency", (
        "upstr_req_tmo", "upstream request timeout",
        "Upstream requests give up after {v}.")),
    _fix("token-issuer", "endpoint", "https", (
        "auth_iss_url", "authentication token issuer",
        "Tokens are issued by {v}.")),
    _fix("cache-server", "endpoint", "redis", (
        "cache_srv_addr", "cache server address",
        "The cache server is reachable at {v}.")),
    # -- coexisting pairs: one form, two settings, both hold
    _two("team-budgets", "number", "money", (
        ("eu_team_bdgt", "Europe team budget",
         "The Europe team's monthly cloud budget is {v}."),
        ("am_team_bdgt", "Americas team budget",
         "The Americas team's monthly cloud budget is {v}."))),
    _two("webhook-receivers", "endpoint", "https", (
        ("pmt_hook_url", "payment webhook receiver", "Payment events are delivered to {v}."),
        ("rfnd_hook_url", "refund webhook receiver", "Refund events are delivered to {v}."))),
    _two("drill-dates", "deadline", "date", (
        ("pen_test_dt", "penetration test date", "The external penetration test starts on {v}."),
        ("dr_drill_dt", "disaster recovery drill date",
         "The disaster recovery drill is scheduled for {v}."))),
    _two("app-floors", "version", "version", (
        ("ios_min_ver", "minimum iOS app version",
         "The iOS app has to be at least {v} to log in."),
        ("andr_min_ver", "minimum Android app version",
         "The Android app has to be at least {v} to log in."))),
    _two("dashboard-owners", "owner", "person", (
        ("dash_own", "billing dashboard owner", "{v} owns the billing dashboard."),
        ("alrt_rules_own", "alerting rules owner", "{v} looks after the alerting rules."))),
    _two("server-keypair", "path", "file", (
        ("srv_priv_key", "server private key path",
         "The server's private key is read from {v}."),
        ("srv_pub_crt", "server public certificate path",
         "The server's public certificate is read from {v}.")), "key|crt"),
    _two("batch-windows", "setting", "span", (
        ("inv_batch_win", "invoice batch window", "Invoices are batched over a window of {v}."),
        ("rmd_batch_win", "reminder batch window",
         "Reminders are batched over a window of {v}."))),
    _two("billing-accounts", "identifier", "acct", (
        ("stg_acct_id", "staging account identifier", "Staging charges post to account {v}."),
        ("prd_acct_id", "production account identifier",
         "Production charges post to account {v}."))),
)  # fmt: skip
TEMPLATE_BY_NAME = {t.name: t for t in TEMPLATES}


# -- how a fact is written ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fact:
    """One side of a template with its value."""

    template: Template
    side: int
    value: str

    @property
    def key(self) -> str:
        return self.template.keys[self.side]

    @property
    def subject(self) -> str:
        return self.template.subjects[self.side]

    @property
    def says(self) -> str:
        return self.template.says[self.side].replace("{v}", self.value)

    @property
    def upper(self) -> str:
        return self.key.upper()

    @property
    def dotted(self) -> str:
        return self.key.replace("_", ".")

    @property
    def kebab(self) -> str:
        return self.key.replace("_", "-")

    @property
    def camel(self) -> str:
        head, *rest = self.key.split("_")
        return head + "".join(p.capitalize() for p in rest)

    @property
    def says_lc(self) -> str:
        """The sentence with its first letter lowered, to follow other words (not when it opens
        with the value or an acronym)."""
        text = self.says
        if text.startswith(self.value) or text[:2].isupper():
            return text
        return text[0].lower() + text[1:]


def key_spellings(key: str) -> tuple[str, ...]:
    """The ways a key is written in the texts, lower-cased: ``db_pool_max``, ``db.pool.max``,
    ``db-pool-max``, ``dbpoolmax`` (camel case, lowered)."""
    return (key, key.replace("_", "."), key.replace("_", "-"), key.replace("_", ""))


_SERVICES = ("ledgerd", "tally-api", "pricer", "gatekeeper", "shipwright", "courier")
_PEOPLE = ("maren", "tobi", "sasha", "nour", "bex", "kai", "rhea", "oleg")
_FILLER_SETTINGS = (
    ("log_level", "info"), ("http_port", "8080"), ("metrics_enabled", "true"), ("tz", "UTC"),
    ("locale", "en_GB"), ("worker_class", "gthread"), ("retry_backoff", "exponential"),
    ("cors_origins", "*"), ("trace_sample", "0.05"), ("gzip_enabled", "true"),
    ("health_path", "/healthz"), ("shutdown_grace", "30"), ("static_root", "/static"),
    ("smtp_port", "587"), ("default_lang", "en"), ("json_logs", "false"), ("keepalive", "75"),
    ("maintenance_mode", "off"), ("admin_path", "/admin"), ("page_size", "50"),
    ("feature_dark_mode", "false"), ("cookie_secure", "true"), ("queue_prefix", "jobs"),
    ("error_reporting", "sampled"), ("asset_version", "hash"), ("rate_limit_enabled", "true"),
)  # fmt: skip
_FILLER_NOTES = (
    "The flaky checkout test only fails on the second run.",
    "Staging was redeployed this morning without incident.",
    "The lint job takes about four minutes on a cold runner.",
    "Search results are still paginated on the server.",
    "Nobody has touched the export scripts since spring.",
    "The mobile team ships on Thursdays.",
    "The old dashboard link redirects to the new one.",
    "Feature flags are read once at startup.",
    "The fixtures were regenerated last sprint.",
    "Most alerts last week were disk warnings on the build agents.",
    "The integration suite needs Docker running locally.",
    "The API docs are generated from the route decorators.",
    "Error pages are served from the edge.",
    "We still owe support a write-up on retries.",
    "Translations are synced by a nightly job.",
    "The on-call handbook was reorganised last month.",
    "Screenshots in the onboarding guide are out of date.",
    "Load tests run against the perf environment, not staging.",
    "The billing emails use the shared template library.",
    "Half of the warnings in the build log come from one vendored module.",
)


def _svc(r: random.Random) -> str:
    return r.choice(_SERVICES)


def _clock(r: random.Random) -> str:
    return f"{r.randint(6, 22):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"


_T = "\x00"  # where a time goes, filled in order by ``_timed``


def _timed(
    r: random.Random, lines: Sequence[str], seconds: bool = True, span: int = 4 * 3600
) -> list[str]:
    """``lines`` with their time marks filled by increasing times within ``span`` seconds of
    one morning."""
    n = sum(line.count(_T) for line in lines)
    start = r.randint(7 * 3600, 10 * 3600)
    times = iter(sorted(r.sample(range(start, start + span), n)))
    out = []
    for line in lines:
        pieces = line.split(_T)
        for k in range(1, len(pieces)):
            t = next(times)
            stamp = f"{t // 3600:02d}:{t // 60 % 60:02d}"
            pieces[k] = (f"{stamp}:{t % 60:02d}" if seconds else stamp) + pieces[k]
        out.append("".join(pieces))
    return out


def _settings(r: random.Random, n: int) -> list[tuple[str, str]]:
    return r.sample(_FILLER_SETTINGS, n)


def _notes(r: random.Random, n: int) -> list[str]:
    return r.sample(_FILLER_NOTES, n)


def _around(r: random.Random, fact: str, fill: Sequence[str]) -> list[str]:
    """``fill`` split in two halves (±1) with ``fact`` between: a fact in the middle."""
    half = len(fill) // 2 + r.choice((-1, 0, 0, 1)) * (len(fill) >= 8)
    return [*fill[:half], fact, *fill[half:]]


# -- tool output


def _pg_settings_query(f: Fact, r: random.Random) -> str:
    rows = r.sample(_PG_ROWS, 11)
    rows = [*rows[:5], (f"app.{f.key}", f.value), *rows[5:10]]
    w1 = max(len(a) for a, _ in rows) + 1
    w2 = max(len(b) for _, b in rows) + 1
    lines = [
        f"{_svc(r)}=> SELECT name, setting FROM pg_settings"
        " WHERE name LIKE 'app.%' OR context = 'user' LIMIT 11;",
        f" {'name'.ljust(w1)}| setting",
        f"{'-' * (w1 + 1)}+{'-' * (w2 + 1)}",
        *(f" {a.ljust(w1)}| {b}" for a, b in rows),
        f"({len(rows)} rows)",
    ]
    return "\n".join(lines)


_PG_ROWS = (
    ("client_encoding", "UTF8"), ("DateStyle", "ISO, MDY"),
    ("default_transaction_isolation", "read committed"), ("statement_timeout", "0"),
    ("lock_timeout", "0"), ("search_path", '"$user", public'), ("TimeZone", "UTC"),
    ("extra_float_digits", "1"), ("bytea_output", "hex"), ("xmloption", "content"),
    ("app.tenant_mode", "shared"), ("app.audit_enabled", "on"), ("row_security", "on"),
    ("default_text_search_config", "pg_catalog.english"), ("check_function_bodies", "on"),
    ("client_min_messages", "notice"),
)  # fmt: skip


def _effective_config_banner(f: Fact, r: random.Random) -> str:
    svc = _svc(r)
    fill = [f"  {k} {'.' * (24 - len(k))} {v}" for k, v in _settings(r, 10)]
    fact = f"  {f.key} {'.' * max(2, 24 - len(f.key))} {f.value}"
    return "\n".join([
        f"[boot] {svc} 4.{r.randint(2, 9)}.{r.randint(0, 9)} starting (pid {r.randint(900, 9999)})",
        f"[boot] layers: defaults < /etc/{svc}/base.yml < process environment",
        "[boot] effective configuration:",
        *_around(r, fact, fill),
        f"[boot] ready in {r.randint(200, 990)} ms",
    ])  # fmt: skip


def _tofu_outputs(f: Fact, r: random.Random) -> str:
    pairs = [(k, v) for k, v in _settings(r, 4)]
    lines = [f'{k} = "{v}"' for k, v in pairs]
    lines.insert(r.randint(1, 3), f'{f.key} = "{f.value}"')
    return "$ tofu output\n" + "\n".join(lines)


def _container_exec_vars(f: Fact, r: random.Random) -> str:
    base = [
        "PATH=/usr/local/bin:/usr/bin:/bin", f"HOSTNAME={r.randrange(16**12):012x}",
        "LANG=C.UTF-8", "PYTHONUNBUFFERED=1", "HOME=/app",
    ]  # fmt: skip
    more = [f"{k.upper()}={v}" for k, v in _settings(r, 4)]
    lines = [*base, *_around(r, f'{f.upper}="{f.value}"', more)]
    return f"$ docker exec {_svc(r)} printenv\n" + "\n".join(lines)


def _node_print_object(f: Fact, r: random.Random) -> str:
    fill = [f"  {_camel(k)}: '{v}'," for k, v in _settings(r, 5)]
    return "\n".join([
        "$ node -p \"require('./config/default.js')\"",
        "{",
        *_around(r, f"  {f.camel}: '{f.value}',", fill),
        "}",
    ])  # fmt: skip


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p.capitalize() for p in rest)


def _pprint_settings_dict(f: Fact, r: random.Random) -> str:
    lines = [f" '{k}': '{v}'," for k, v in _settings(r, 12)]
    lines = _around(r, f" '{f.key}': '{f.value}',", lines)
    lines[0] = "{" + lines[0][1:]
    lines[-1] = lines[-1][:-1] + "}"
    return (
        '$ python -c "import pprint, app.settings as s; '
        'pprint.pprint(s.as_dict(), sort_dicts=False)"\n' + "\n".join(lines)
    )


def _pyproject_tool_section(f: Fact, r: random.Random) -> str:
    svc = _svc(r).replace("-", "_")
    fill = [f'{k} = "{v}"' for k, v in _settings(r, 4)]
    return "\n".join([
        f"$ sed -n '/^\\[tool.{svc}\\]/,/^$/p' pyproject.toml",
        f"[tool.{svc}]",
        *_around(r, f'{f.key} = "{f.value}"', fill),
    ])  # fmt: skip


def _structured_log_tail(f: Fact, r: random.Random) -> str:
    svc = _svc(r)
    msgs = ("listening", "worker booted", "cache warmed", "migrations up to date",
            "scheduler tick", "health check ok", "connected to queue", "loaded templates",
            "gc pause", "request served", "flushed metrics", "token refreshed")  # fmt: skip
    fill = [
        f'{{"ts":"{_T}.{r.randint(100, 999)}","level":"info","msg":"{m}"}}'
        for m in r.sample(msgs, 12)
    ]
    fact = (
        f'{{"ts":"{_T}.{r.randint(100, 999)}","level":"info","msg":"config value",'
        f'"key":"{f.dotted}","value":"{f.value}"}}'
    )
    return f"$ docker logs --tail 13 {svc}\n" + "\n".join(_timed(r, _around(r, fact, fill)))


def _duckdb_box_result(f: Fact, r: random.Random) -> str:
    rows = [*_settings(r, 12)]
    rows.insert(6 + r.choice((-1, 0, 1)), (f.key, f.value))
    w1 = max(len(a) for a, _ in rows)
    w2 = max(len(b) for _, b in rows)
    lines = [
        "D SELECT key, value FROM settings ORDER BY updated_at DESC LIMIT 13;",
        f"┌─{'─' * w1}─┬─{'─' * w2}─┐",
        f"│ {'key'.center(w1)} │ {'value'.center(w2)} │",
        f"│ {'varchar'.center(w1)} │ {'varchar'.center(w2)} │",
        f"├─{'─' * w1}─┼─{'─' * w2}─┤",
        *(f"│ {a.ljust(w1)} │ {b.ljust(w2)} │" for a, b in rows),
        f"└─{'─' * w1}─┴─{'─' * w2}─┘",
    ]
    return "\n".join(lines)


def _yq_query_out(f: Fact, r: random.Random) -> str:
    svc = _svc(r)
    fill = [f'{k}: "{v}"' for k, v in _settings(r, 4)]
    lines = _around(r, f'{f.key}: "{f.value}"', fill)
    return f"$ yq '.{svc.replace('-', '_')}' deploy/values.yaml\n" + "\n".join(lines)


def _remote_conf_cat(f: Fact, r: random.Random) -> str:
    svc = _svc(r)
    pairs = _settings(r, 12)
    first = [f"{k} = {v}" for k, v in pairs[:6]]
    second = [f"{k} = {v}" for k, v in pairs[6:]]
    body = ["[server]", *first[:5], "", "[runtime]", *second[:5]]
    body = _around(r, f"{f.key} = {f.value}", body)
    return "\n".join([
        f"$ ssh ops@bastion-2 'cat /etc/{svc}/{svc}.conf'",
        f"# {svc}.conf -- managed by config management, local edits are overwritten",
        *body,
    ])  # fmt: skip


def _rg_search_hits(f: Fact, r: random.Random) -> str:
    svc = _svc(r).replace("-", "_")
    return "\n".join([
        f"$ rg -n -i {f.key}",
        f"{svc}/settings.py:{r.randint(20, 80)}:{f.upper} = \"{f.value}\"",
        f"{svc}/clients.py:{r.randint(10, 200)}:    limit = settings.{f.upper}",
        f"tests/test_settings.py:{r.randint(5, 90)}:def test_{f.key}_is_read_once(monkeypatch):",
    ])  # fmt: skip


def _actuator_configprops(f: Fact, r: random.Random) -> str:
    def prop(name: str, value: str) -> list[str]:
        return [
            f'  "{name}": {{',
            f'    "value": "{value}",',
            f'    "origin": "class path resource [application.yml] - {r.randint(2, 60)}:'
            f'{r.randint(3, 20)}"',
            "  },",
        ]

    blocks = [prop(f"app.{k.replace('_', '-')}", v) for k, v in _settings(r, 6)]
    blocks.insert(3, prop(f"app.{f.kebab}", f.value))
    body = [line for b in blocks for line in b]
    body[-1] = "  }"
    return (
        "$ curl -s localhost:8081/actuator/env | jq '.propertySources[0].properties'\n{\n"
        + "\n".join(body)
        + "\n}"
    )


def _numbered_file_view(f: Fact, r: random.Random) -> str:
    svc = _svc(r).replace("-", "_")
    code = [
        "import os", "", "BASE_DIR = os.path.dirname(__file__)",
        'DEBUG = os.environ.get("DEBUG") == "1"', 'ALLOWED_HOSTS = ["*"]', "",
        *(f'{k.upper()} = "{v}"' for k, v in _settings(r, 8)), "", "USE_TZ = True",
    ]  # fmt: skip
    code = _around(r, f'{f.upper} = "{f.value}"', code)
    start = r.randint(1, 40)
    numbered = [f"{start + i:6d}\t{line}" for i, line in enumerate(code)]
    return f"Here's the result of running `cat -n` on /repo/{svc}/settings.py:\n" + "\n".join(
        numbered
    )


def _cli_help_defaults(f: Fact, r: random.Random) -> str:
    svc = _svc(r)
    opts = [
        ("--host TEXT", "bind address  [default: 0.0.0.0]"),
        ("--port INTEGER", "listen port  [default: 8080]"),
        ("--reload / --no-reload", "restart on code changes  [default: no-reload]"),
        (f"--{f.kebab} TEXT", f"{f.subject}  [default: {f.value}]"),
        ("--help", "Show this message and exit."),
    ]
    w = max(len(a) for a, _ in opts) + 2
    return "\n".join([
        f"$ {svc} serve --help", f"Usage: {svc} serve [OPTIONS]", "",
        "  Run the HTTP server.", "", "Options:",
        *(f"  {a.ljust(w)}{b}" for a, b in opts),
    ])  # fmt: skip


def _preflight_checker(f: Fact, r: random.Random) -> str:
    checks = [
        f"disk space on /var: {r.randint(20, 80)}% free", "clock skew: within bounds",
        "outbound proxy reachable", "schema migrations applied", "secrets mounted",
        "feature flag service reachable", "queue backlog below alert level",
        "license file present", "log shipping enabled", "time zone is UTC",
        "no pending restarts", "backups completed last night",
    ]  # fmt: skip
    fill = [f" ✔ {c}" for c in r.sample(checks, 10)]
    return "\n".join([
        "$ ./scripts/preflight --env production",
        "preflight: 11 checks",
        *_around(r, f" ✔ {f.subject}: {f.value}", fill),
        "preflight: all checks passed",
    ])  # fmt: skip


def _log_file_tail(f: Fact, r: random.Random) -> str:
    svc = _svc(r)
    msgs = ("accepted connection from 10.0.4.17", "worker 3 ready", "reloading templates",
            "cache hit ratio 0.91", "job export-daily queued", "job export-daily done",
            "closing idle socket", "heartbeat sent", "scheduler woke up", "worker 5 ready",
            "request id propagated to downstream", "flushing 212 metrics")  # fmt: skip
    fill = [f"{_T} INFO  {m}" for m in r.sample(msgs, 12)]
    fact = f"{_T} INFO  startup note: {f.says}"
    return f"$ tail -n 13 /var/log/{svc}/app.log\n" + "\n".join(_timed(r, _around(r, fact, fill)))


def _doctor_command_report(f: Fact, r: random.Random) -> str:
    svc = _svc(r)
    return "\n".join([
        f"$ {svc} doctor",
        "Checking installation ........ ok",
        "Checking credentials ......... ok",
        "Checking plugins ............. 3 found",
        f"Notes from the operator profile:\n  • {f.says}",
        "Everything looks good.",
    ])  # fmt: skip


def _readme_cat_section(f: Fact, r: random.Random) -> str:
    fill = [f"- {n}" for n in _notes(r, 10)]
    return "\n".join([
        "$ cat docs/OPERATIONS.md",
        "# Operations",
        "",
        "Things worth knowing before you change anything in production:",
        "",
        *_around(r, f"- {f.says}", fill),
        "",
        "Questions go to the platform channel.",
    ])  # fmt: skip


# -- assistant


def _found_in_config(f: Fact, r: random.Random) -> str:
    svc = _svc(r).replace("-", "_")
    return (
        f"Found where it's set: `{f.upper}` in `{svc}/settings/base.py` is `{f.value}`. "
        "Nothing overrides it at runtime, so that's the value the service actually uses."
    )


def _next_steps_plan(f: Fact, r: random.Random) -> str:
    return "\n".join([
        "Next steps:",
        "1. Reproduce the failure locally with the recorded fixture data.",
        f"2. Leave the {f.subject} at {f.value} while I test; it's not part of this change.",
        "3. Add a regression test for the empty-payload case.",
        "4. Run the full suite and open the pull request.",
    ])  # fmt: skip


def _findings_summary(f: Fact, r: random.Random) -> str:
    fill = [f"- {n}" for n in _notes(r, 10)]
    return "\n".join([
        "Here's what I found so far:",
        "",
        *_around(r, f"- {f.says}", fill),
        "",
        "I'll dig into the first point next.",
    ])  # fmt: skip


def _snippet_proposal(f: Fact, r: random.Random) -> str:
    return (
        "I'd put it in the shared settings module so both entry points read the same value:\n\n"
        f'```python\n{f.upper} = "{f.value}"\n```\n\n'
        "The loader already picks up module-level constants, so nothing else needs to change."
    )


def _setting_explainer(f: Fact, r: random.Random) -> str:
    return (
        f"`{f.key}` is the {f.subject}; in this deployment it's {f.value}. "
        "It's read once at startup, so a change needs a restart."
    )


def _short_answer(f: Fact, r: random.Random) -> str:
    return f"Short answer: {f.says} The rest of the configuration doesn't touch it."


def _merge_request_blurb(f: Fact, r: random.Random) -> str:
    return "\n".join([
        "**What this changes**",
        "",
        "Routes the export job through the shared HTTP client and drops the ad-hoc retry loop.",
        "",
        "**Worth knowing for reviewers**",
        "",
        f"{f.says} No schema changes.",
    ])  # fmt: skip


def _markdown_settings_grid(f: Fact, r: random.Random) -> str:
    rows = [f"| `{k}` | `{v}` | default |" for k, v in _settings(r, 3)]
    rows.insert(r.randint(0, 3), f"| `{f.key}` | `{f.value}` | ops override |")
    return "\n".join([
        "What the running config resolves to:",
        "",
        "| key | value | source |",
        "|---|---|---|",
        *rows,
    ])  # fmt: skip


def _verified_claim(f: Fact, r: random.Random) -> str:
    return f"Verified against the running instance: {f.says_lc} That matches what you described."


def _heads_up_aside(f: Fact, r: random.Random) -> str:
    return (
        "One thing worth flagging before I continue with the refactor: "
        f"{f.says_lc} I'll keep that in mind for the next steps."
    )


def _about_to_run(f: Fact, r: random.Random) -> str:
    return (
        f"I'll start the soak test with `--{f.kebab}='{f.value}'` so it matches what is "
        "deployed, then compare the error rates with yesterday's run."
    )


def _handback_note(f: Fact, r: random.Random) -> str:
    return (
        "Handing this back for now. Where things stand: the patch is on the branch, the tests "
        f"pass locally, and {f.says_lc} I haven't touched the deploy manifests."
    )


# -- user


def _quick_ping(f: Fact, r: random.Random) -> str:
    return f"hey, quick one before you carry on: {f.says_lc}"


def _pasted_conf_block(f: Fact, r: random.Random) -> str:
    svc = _svc(r).replace("-", "_")
    fill = [f'  {k}: "{v}"' for k, v in _settings(r, 12)]
    return "\n".join([
        "this is what's on the prod box right now:",
        "",
        "```",
        f"{svc}:",
        *_around(r, f'  {f.key}: "{f.value}"', fill),
        "```",
    ])  # fmt: skip


def _takeaways_list(f: Fact, r: random.Random) -> str:
    notes = _notes(r, 2)
    return "\n".join([
        "Takeaways from this morning's call:",
        f"- {notes[0]}",
        f"- {f.says}",
        f"- {notes[1]}",
    ])  # fmt: skip


def _story_description(f: Fact, r: random.Random) -> str:
    fill = [f"- {n}" for n in _notes(r, 8)]
    return "\n".join([
        "As an operator I want the nightly export to finish before the business day starts,",
        "so that the morning reports are complete.",
        "",
        "Background",
        *_around(r, f"- {f.says}", fill),
        "",
        "Done when",
        "- the export finishes before 06:00 three nights in a row",
    ])  # fmt: skip


def _vars_file_paste(f: Fact, r: random.Random) -> str:
    fill = [f"{k.upper()}={v}" for k, v in _settings(r, 12)]
    return "\n".join([
        "here's our production vars file (secrets blanked):",
        "```",
        "NODE_ENV=production",
        *_around(r, f'{f.upper}="{f.value}"', fill),
        "SECRET_KEY=***",
        "```",
    ])  # fmt: skip


def _design_doc_excerpt(f: Fact, r: random.Random) -> str:
    fill = [f"> {n}" for n in _notes(r, 10)]
    return "\n".join([
        "From the design doc, section 4:",
        "",
        "> 4.2 Operating assumptions",
        ">",
        *_around(r, f"> {f.says}", fill),
        "",
        "is that still how you read it?",
    ])  # fmt: skip


def _scrollback_paste(f: Fact, r: random.Random) -> str:
    return "\n".join([
        "from my terminal:",
        "```",
        f"$ echo ${f.upper}",
        f.value,
        "$ echo $LOG_LEVEL",
        "info",
        "```",
    ])  # fmt: skip


def _short_reminder(f: Fact, r: random.Random) -> str:
    return f"reminder: {f.says_lc}"


def _team_chat_excerpt(f: Fact, r: random.Random) -> str:
    people = r.sample(_PEOPLE, 4)
    said = [
        "morning", "is the build green again?", "yes, since the revert", "ok thanks",
        "who has the release notes?", "me, almost done", "standup in 5",
        "can someone look at the flaky test", "on it", "lunch?", "ten minutes",
        "the docs build is slow again",
    ]  # fmt: skip
    fill = [f"[{_T}] {people[i % 4]}: {s}" for i, s in enumerate(r.sample(said, 12))]
    fact = f"[{_T}] {people[1]}: {f.says_lc}"
    lines = _timed(r, _around(r, fact, fill), seconds=False)
    return "pasting from the team channel:\n" + "\n".join(lines)


def _context_in_question(f: Fact, r: random.Random) -> str:
    return f"Why does the nightly job keep stalling on the export step? For context, {f.says_lc}"


def _intranet_page_copy(f: Fact, r: random.Random) -> str:
    fill = _notes(r, 10)
    return "\n".join([
        "copied from the intranet page 'Service facts':",
        "",
        f"Last edited by {r.choice(_PEOPLE)}",
        "",
        *_around(r, f.says, fill),
        "",
        "(page owner: platform team)",
    ])  # fmt: skip


def _multi_ask_message(f: Fact, r: random.Random) -> str:
    asks = [
        "rename the helper to something clearer",
        "drop the commented-out block in the importer",
        "add a docstring to the retry wrapper",
        "check the test names still match what they test",
        "keep the public function signatures as they are",
        "split the long module if it gets past 500 lines",
        "make the error message say which file failed",
        "don't reformat unrelated files",
        "leave the changelog to me",
        "run the slow tests once at the end",
    ]
    fill = [f"{i + 1}. {a}" for i, a in enumerate(r.sample(asks, 10))]
    lines = _around(r, f"- also, {f.says_lc}", fill)
    return "A few things while you're in there:\n" + "\n".join(lines) + "\nthanks!"


def _startup_log_paste(f: Fact, r: random.Random) -> str:
    msgs = ("starting", "loaded plugins", "opened store", "listening on :8080",
            "registered routes", "warming cache", "cache warm", "ready", "scheduler started",
            "metrics exporter up", "tracer started", "queue consumer started")  # fmt: skip
    fill = [f'time={_T} level=info msg="{m}"' for m in r.sample(msgs, 12)]
    fact = f'time={_T} level=info msg="config" key={f.dotted} value="{f.value}"'
    return (
        "this is the startup output from staging:\n```\n"
        + "\n".join(_timed(r, _around(r, fact, fill)))
        + "\n```"
    )


def _forwarded_chat_bubble(f: Fact, r: random.Random) -> str:
    who = r.choice(_PEOPLE).capitalize()
    return f"Forwarded from {who}:\n> {f.says}\n\ncan you take that into account?"


class Surface(NamedTuple):
    register: str
    spelled: str
    long: bool
    render: Callable[[Fact, random.Random], str]


SURFACES: dict[str, Surface] = {
    "pg-settings-query": Surface("tool", "key", True, _pg_settings_query),
    "effective-config-banner": Surface("tool", "key", True, _effective_config_banner),
    "tofu-outputs": Surface("tool", "key", False, _tofu_outputs),
    "container-exec-vars": Surface("tool", "key", False, _container_exec_vars),
    "node-print-object": Surface("tool", "key", False, _node_print_object),
    "pprint-settings-dict": Surface("tool", "key", True, _pprint_settings_dict),
    "pyproject-tool-section": Surface("tool", "key", False, _pyproject_tool_section),
    "structured-log-tail": Surface("tool", "key", True, _structured_log_tail),
    "duckdb-box-result": Surface("tool", "key", True, _duckdb_box_result),
    "yq-query-out": Surface("tool", "key", False, _yq_query_out),
    "remote-conf-cat": Surface("tool", "key", True, _remote_conf_cat),
    "rg-search-hits": Surface("tool", "key", False, _rg_search_hits),
    "actuator-configprops": Surface("tool", "key", True, _actuator_configprops),
    "numbered-file-view": Surface("tool", "key", True, _numbered_file_view),
    "cli-help-defaults": Surface("tool", "both", False, _cli_help_defaults),
    "preflight-checker": Surface("tool", "name", True, _preflight_checker),
    "log-file-tail": Surface("tool", "name", True, _log_file_tail),
    "doctor-command-report": Surface("tool", "name", False, _doctor_command_report),
    "readme-cat-section": Surface("tool", "name", True, _readme_cat_section),
    "found-in-config": Surface("assistant", "key", False, _found_in_config),
    "next-steps-plan": Surface("assistant", "name", False, _next_steps_plan),
    "findings-summary": Surface("assistant", "name", True, _findings_summary),
    "snippet-proposal": Surface("assistant", "key", False, _snippet_proposal),
    "setting-explainer": Surface("assistant", "both", False, _setting_explainer),
    "short-answer": Surface("assistant", "name", False, _short_answer),
    "merge-request-blurb": Surface("assistant", "name", False, _merge_request_blurb),
    "markdown-settings-grid": Surface("assistant", "key", False, _markdown_settings_grid),
    "verified-claim": Surface("assistant", "name", False, _verified_claim),
    "heads-up-aside": Surface("assistant", "name", False, _heads_up_aside),
    "about-to-run": Surface("assistant", "key", False, _about_to_run),
    "handback-note": Surface("assistant", "name", False, _handback_note),
    "quick-ping": Surface("user", "name", False, _quick_ping),
    "pasted-conf-block": Surface("user", "key", True, _pasted_conf_block),
    "takeaways-list": Surface("user", "name", False, _takeaways_list),
    "story-description": Surface("user", "name", True, _story_description),
    "vars-file-paste": Surface("user", "key", True, _vars_file_paste),
    "design-doc-excerpt": Surface("user", "name", True, _design_doc_excerpt),
    "scrollback-paste": Surface("user", "key", False, _scrollback_paste),
    "short-reminder": Surface("user", "name", False, _short_reminder),
    "team-chat-excerpt": Surface("user", "name", True, _team_chat_excerpt),
    "context-in-question": Surface("user", "name", False, _context_in_question),
    "intranet-page-copy": Surface("user", "name", True, _intranet_page_copy),
    "multi-ask-message": Surface("user", "name", True, _multi_ask_message),
    "startup-log-paste": Surface("user", "key", True, _startup_log_paste),
    "forwarded-chat-bubble": Surface("user", "name", False, _forwarded_chat_bubble),
}
#: the surfaces whose fact is one line in the middle of a long output or paste
LONG = frozenset(name for name, s in SURFACES.items() if s.long)


# -- corrections ----------------------------------------------------------------------------------
# Each is written (f: the new fact, old: the value it replaces, r). The only-new ones do not
# name the old value; none uses a "(was ...)" note or a "[superseded" tag.


def _config_reloaded_line(f: Fact, old: str, r: random.Random) -> str:
    svc = _svc(r)
    return "\n".join(_timed(r, [
        f"{_T} INFO  [config] reloaded from /etc/{svc}/overrides.d/50-ops.conf",
        f"{_T} INFO  [config]   {f.dotted} = {f.value}",
        f"{_T} INFO  [config] 1 key applied, 0 rejected",
    ], span=9))  # fmt: skip


def _getter_readback(f: Fact, old: str, r: random.Random) -> str:
    return f"$ {_svc(r)} config get {f.dotted}\n{f.value}"


def _settings_rerender(f: Fact, old: str, r: random.Random) -> str:
    svc = _svc(r)
    fill = [f"  {k:<24} {v}" for k, v in _settings(r, 12)]
    return "\n".join([
        f"[boot] {svc} restart requested by deploy hook",
        "[boot] effective configuration:",
        *_around(r, f"  {f.key:<24} {f.value}", fill),
        "[boot] ready",
    ])  # fmt: skip


def _applied_overrides(f: Fact, old: str, r: random.Random) -> str:
    k, v = _settings(r, 1)[0]
    return "\n".join([
        "Applying overrides for env=production",
        f"  ✓ {f.key}: {f.value}",
        f"  ✓ {k}: {v}",
        f"Done: 2 overrides applied in 0.{r.randint(1, 9)} s",
    ])  # fmt: skip


def _casual_heads_up(f: Fact, old: str, r: random.Random) -> str:
    return f"fyi the {f.subject} is {f.value} these days, ops sorted it out last week"


def _secondhand_word(f: Fact, old: str, r: random.Random) -> str:
    who = r.choice(_PEOPLE).capitalize()
    return f"{who} just pinged me: the {f.subject} is {f.value}. Go with that."


def _assistant_adopts(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"Noted. I'm treating {f.value} as the {f.subject} in everything I run from here on, "
        "including the test fixtures."
    )


def _meeting_outcome(f: Fact, old: str, r: random.Random) -> str:
    return f"Outcome of the ops sync: the {f.subject} is {f.value}. Notes to follow."


def _channel_topic_line(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"#ops-{_svc(r)} topic: {f.subject}: {f.value} | rota in the pinned doc | "
        "no deploys after 16:00"
    )


def _reread_source(f: Fact, old: str, r: random.Random) -> str:
    svc = _svc(r).replace("-", "_")
    return (
        f"I re-read `{svc}/settings/base.py` on the current branch: `{f.upper}` is "
        f"`{f.value}` there, so that's what the code sees."
    )


def _flag_rerun(f: Fact, old: str, r: random.Random) -> str:
    svc = _svc(r)
    return "\n".join([
        f"$ {svc} run --{f.kebab}='{f.value}' --dry-run",
        f"using {f.kebab}={f.value}",
        "dry run finished: 0 errors, 0 warnings",
    ])  # fmt: skip


def _chatops_bot_reply(f: Fact, old: str, r: random.Random) -> str:
    return f"deploybot: the {f.subject} for production is {f.value} (via chatops, {_clock(r)})"


def _plan_restated(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"To restate where we landed: the {f.subject} is {f.value}, and everything else in the "
        "plan stands."
    )


def _ticket_field_set(f: Fact, old: str, r: random.Random) -> str:
    who = r.choice(_PEOPLE)
    return f'OPS board, card {r.randint(100, 999)}: field "{f.subject}" set to {f.value} by {who}'


def _overridden_by(f: Fact, old: str, r: random.Random) -> str:
    svc = _svc(r)
    return "\n".join([
        f"$ {svc} config explain {f.dotted}",
        f"{f.dotted} = {f.value}",
        f"  from: /etc/{svc}/prod.toml (layer 3)",
        f"  overrides: {old} from defaults.toml (layer 1)",
    ])  # fmt: skip


def _doc_revision_note(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"Rev 4 of the runbook is out. The {f.subject} there reads {f.value}; rev 3 had "
        f"{old}, a leftover from the pilot."
    )


def _config_history_log(f: Fact, old: str, r: random.Random) -> str:
    a, b = r.sample(_PEOPLE, 2)
    return "\n".join([
        f"$ {_svc(r)} config history {f.dotted} --limit 2",
        *reversed(_timed(r, [f"rev 1  {_T}  {b:<6} {old}", f"rev 2  {_T}  {a:<6} {f.value}"])),
    ])  # fmt: skip


def _wrong_stage_mixup(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"The {old} I gave you for the {f.subject} is the staging one, my bad. "
        f"Production uses {f.value}."
    )


def _readme_vs_deployed(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"The README still says {old} for `{f.key}`, but the deployed config has "
        f"`{f.key}: {f.value}`. I'll go by the deployed one."
    )


def _asked_and_answered(f: Fact, old: str, r: random.Random) -> str:
    return f"Q: is the {f.subject} still {old}?\nA: no, {f.value}. The wiki table is out of date."


class Way(NamedTuple):
    register: str
    names_old: bool
    spelled: str
    render: Callable[[Fact, str, random.Random], str]


CORRECTIONS: dict[str, Way] = {
    "config-reloaded-line": Way("tool", False, "key", _config_reloaded_line),
    "getter-readback": Way("tool", False, "key", _getter_readback),
    "settings-rerender": Way("tool", False, "key", _settings_rerender),
    "applied-overrides": Way("tool", False, "key", _applied_overrides),
    "flag-rerun": Way("tool", False, "key", _flag_rerun),
    "chatops-bot-reply": Way("tool", False, "name", _chatops_bot_reply),
    "ticket-field-set": Way("tool", False, "name", _ticket_field_set),
    "casual-heads-up": Way("user", False, "name", _casual_heads_up),
    "secondhand-word": Way("user", False, "name", _secondhand_word),
    "meeting-outcome": Way("user", False, "name", _meeting_outcome),
    "channel-topic-line": Way("user", False, "name", _channel_topic_line),
    "assistant-adopts": Way("assistant", False, "name", _assistant_adopts),
    "reread-source": Way("assistant", False, "key", _reread_source),
    "plan-restated": Way("assistant", False, "name", _plan_restated),
    "overridden-by": Way("tool", True, "key", _overridden_by),
    "config-history-log": Way("tool", True, "key", _config_history_log),
    "doc-revision-note": Way("user", True, "name", _doc_revision_note),
    "wrong-stage-mixup": Way("user", True, "name", _wrong_stage_mixup),
    "asked-and-answered": Way("user", True, "name", _asked_and_answered),
    "readme-vs-deployed": Way("assistant", True, "key", _readme_vs_deployed),
}
REGISTER_OF = {
    **{name: s.register for name, s in SURFACES.items()},
    **{name: w.register for name, w in CORRECTIONS.items()},
}
SPELLED_OF = {
    **{name: s.spelled for name, s in SURFACES.items()},
    **{name: w.spelled for name, w in CORRECTIONS.items()},
}
#: kinds whose facts are said only in tool output or by the assistant (never typed by the user)
NOT_TYPED = ("identifier", "preference")


# -- a session ------------------------------------------------------------------------------------


def _mix(count: int) -> tuple[int, int, int]:
    """How many singles, corrections and coexisting pairs ``count`` canaries hold."""
    pairs = max(1, round(count / 12))
    fixes = max(1, round(count * 5 / 24))
    return count - 2 * fixes - 2 * pairs, fixes, pairs


def _ring(seed: int, label: str, items: Sequence[Any], variant: int, n: int) -> list[Any]:
    """``n`` items of a per-seed shuffled ring, session ``variant`` taking the next ``n``."""
    order = list(items)
    random.Random(f"heldout-n:{label}:{seed}").shuffle(order)
    start = (variant * n) % len(order)
    return [order[(start + i) % len(order)] for i in range(n)]


def _match(allowed: list[list[int]], size: int) -> list[int] | None:
    """A perfect matching of slots to surfaces (``allowed[slot]``: the surfaces it may take),
    by augmenting paths; ``None`` when there is none."""
    owner = [-1] * size

    def place(slot: int, seen: set[int]) -> bool:
        for s in allowed[slot]:
            if s in seen:
                continue
            seen.add(s)
            if owner[s] < 0 or place(owner[s], seen):
                owner[s] = slot
                return True
        return False

    for slot in range(len(allowed)):
        if not place(slot, set()):
            return None
    out = [-1] * len(allowed)
    for s, slot in enumerate(owner):
        if slot >= 0:
            out[slot] = s
    return out


@dataclass(frozen=True, slots=True)
class _Slot:
    template: Template
    side: int
    role: str  # single, old (of a correction) or pair
    way: str | None = None  # the correction way (role old)
    opposite: bool = True  # a correction's old fact written in the other spelling


def _assign(slots: list[_Slot], surfaces: list[str], seed: int, variant: int) -> list[str]:
    """Each slot's surface, every one of ``surfaces`` used once: identifiers and preferences not
    typed by the user; a corrected fact spelled the other way from its correction (or the same
    way, one in four), as far as the surfaces allow."""
    shuffle = random.Random(f"heldout-n:assign:{seed}:{variant}")

    def ok(slot: _Slot, name: str, strict: int) -> bool:
        s = SURFACES[name]
        if strict >= 1 and slot.template.kind in NOT_TYPED and s.register == "user":
            return False
        if strict >= 2 and slot.role == "old" and slot.way is not None:
            way = CORRECTIONS[slot.way].spelled
            want = ({"key", "name"} - {way}).pop() if slot.opposite else way
            return s.spelled == want
        return True

    for strict in (2, 1, 0):
        allowed = []
        for slot in slots:
            options = [i for i, name in enumerate(surfaces) if ok(slot, name, strict)]
            shuffle.shuffle(options)
            allowed.append(options)
        found = _match(allowed, len(surfaces))
        if found is not None:
            return [surfaces[i] for i in found]
    raise AssertionError("unreachable: with no constraint any order matches")  # pragma: no cover


def _session(seed: int, count: int, variant: int, attempt: int) -> list[dict[str, Any]]:
    r = random.Random(f"heldout-n:values:{seed}:{count}:{variant}:{attempt}")
    tag = (variant + random.Random(f"heldout-n:tag:{seed}").randrange(TAGS)) % TAGS
    n_single, n_fix, n_pair = _mix(count)
    shaped = {shape: [t for t in TEMPLATES if t.shape == shape] for shape in SHAPES}
    singles = _ring(seed, "single", shaped["single"], variant, n_single)
    fixes = _ring(seed, "correction", shaped["correction"], variant, n_fix)
    pairs = _ring(seed, "coexist", shaped["coexist"], variant, n_pair)
    ways = _ring(seed, "way", list(CORRECTIONS), variant, n_fix)
    slots = [_Slot(t, 0, "single") for t in singles]
    slots += [
        _Slot(t, 0, "old", way, (variant * n_fix + j) % 4 != 3)
        for j, (t, way) in enumerate(zip(fixes, ways, strict=True))
    ]
    slots += [_Slot(t, side, "pair") for t in pairs for side in (0, 1)]
    surfaces = _assign(slots, _ring(seed, "surface", list(SURFACES), variant, len(slots)), seed,
                       variant)  # fmt: skip

    made: list[dict[str, Any]] = []
    picks: dict[str, int] = {}
    for slot, surface in zip(slots, surfaces, strict=True):
        t = slot.template
        pick = picks.setdefault(t.name, r.randrange(1 << 16))
        value = draw(t.form, r, pick, tag, t.units[slot.side])
        fact = Fact(t, slot.side, value)
        at = r.uniform(0.03, 0.6) if slot.role == "old" else r.uniform(0.02, 0.98)
        c: dict[str, Any] = {
            "id": f"{t.name}/{slot.side}",
            "kind": t.kind,
            "at": at,
            "text": SURFACES[surface].render(fact, r),
            "keep": [value],
            "style": surface,
            "template": t.name,
            "subject": fact.subject,
            "spelled": SURFACES[surface].spelled,
        }
        if slot.role == "pair":
            c["coexists"] = f"{t.name}/{1 - slot.side}"
        made.append(c)
        if slot.role == "old":
            assert slot.way is not None
            new_pick = pick if t.form not in (*NOTATIONS, "date") else r.randrange(1 << 16)
            new = Fact(t, 0, replacement(t.form, value, r, pick=new_pick, tag=tag, unit=t.units[0]))
            made.append({
                "id": f"{t.name}/fix",
                "kind": t.kind,
                "at": at + r.uniform(0.26, 0.36),
                "text": CORRECTIONS[slot.way].render(new, value, r),
                "keep": [new.value],
                "supersedes": c["id"],
                "style": slot.way,
                "template": t.name,
                "subject": new.subject,
                "spelled": CORRECTIONS[slot.way].spelled,
            })  # fmt: skip
    made.sort(key=lambda c: c["at"])
    ids = {c["id"]: f"n{i + 1:02d}" for i, c in enumerate(made)}
    for c in made:
        c["id"] = ids[c["id"]]
        c["at"] = round(c["at"], 4)
        for link in ("supersedes", "coexists"):
            if link in c:
                c[link] = ids[c[link]]
    return made


def _sound(canaries: list[dict[str, Any]]) -> bool:
    """Every keep string in its own text and in no other canary's (a correction may name the
    value it replaces, and then must when its way names the old value); no keep string holds
    another; ``at`` strictly increasing."""
    keeps = [k for c in canaries for k in c["keep"]]
    if len(set(keeps)) != len(keeps) or any(len(k) < 5 for k in keeps):
        return False
    if any(a != b and a in b for a in keeps for b in keeps):
        return False
    ats = [c["at"] for c in canaries]
    if len(set(ats)) != len(ats):
        return False
    for c in canaries:
        if not all(k in c["text"] for k in c["keep"]):
            return False
        for other in canaries:
            if other is c:
                continue
            named = any(k in other["text"] for k in c["keep"])
            if other.get("supersedes") == c["id"]:
                if named != CORRECTIONS[other["style"]].names_old:
                    return False
            elif named:
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
            return {"generator": "heldout-n", "seed": seed, "variant": variant,
                    "canaries": canaries}  # fmt: skip
    raise RuntimeError(f"no sound draw for seed {seed}, session {variant}")  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    import argparse
    import json

    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, default=24)
    parser.add_argument("--variant", type=int, default=0)
    args = parser.parse_args()
    if args.seed in EVALUATION_SEEDS:
        parser.error("an evaluation seed: run it only through bench/retention.py")
    print(json.dumps(generate(args.seed, args.count, args.variant), indent=2))
