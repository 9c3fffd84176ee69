"""Held-out canary generator, set O: facts and wording written blind, for ``bench/retention.py``.

Lab note
========

Why
---
The retention benchmark plants facts ("canaries") into recorded agent sessions, compacts five
times, and checks which facts survive and whether a corrected value is still shown as current.
A summarizer tuned against one set of canaries can learn that set's words. This is the
fifteenth set, written without looking at the summarizer or at any earlier set's facts or
templates, so its templates, surfaces and ways of correcting are nobody's tuning target. Run it
with ``bench/retention.py --generator bench/heldout_canaries_o.py --seed S``.

Emphasis
--------
I started from what a long coding-agent session is made of: the code itself (a function to
call, a failing test id, an ORM model, an error constant, a commit sha from a bisect, a
migration, an entry point), the tools around it (pytest, pre-commit, tox, IPython, the agent's
own file editor, ``gh``, ``git log``, a REPL, a merge conflict) and people steering the agent in
short messages. Three things stood out as worth measuring, and this set stresses them:

(1) Compound facts and partial corrections. A fact in a coding session often has two parts
that only mean something together: a test *file* and a test *name*, a *route* and its
timeout, a *base URL* and a path, a *command* and its flag, a *package* and its pin, a
*directory* and the hook every handler in it must call. Ten templates carry two keep strings
(``compound``), and the fact survives only when both do. Five of the correction templates are
compound, and most of their corrections change one part and carry the other (same test file,
other test; same route, other timeout; same package, higher pin; same listener, other path):
the carried part is written again in the correction, and only the part that changed can go
stale (``carried`` on the canary lists what was carried).

(2) Coexisting pairs that look like corrections. Each of the ten pairs is one subject with two
scopes, said twice in a session, the second time later, with the same head noun and often a
word that usually announces a correction ("instead", "though", "and ... too"): the default
per-test timeout and the one for tests marked slow, the last good and the first bad commit of
a bisect, the branch a fix targets and the one it is cherry-picked onto, the lowest supported
version and the first excluded one, the date an endpoint starts warning and the date it is
switched off, the option and its legacy alias, the module's author and the PR's reviewer, the
repo's lint config and a plugin package's own, a retryable error code and a fatal one, the URL
clients call and the one the load balancer probes. Both values hold; neither supersedes the
other.

(3) Corrections written the way coding sessions write them, with no fixed marker word: the
user stopping the agent ("hold on, I was in the wrong checkout"), a call's outcome, a chat
message marked "(edited)", a terse "key: value pls", "make that ..." under a quoted line, the
agent's editor tool showing the edited lines, a REPL reload, a pytest failure "expected Y, got
X", a CLI refusing the old value, a merge conflict resolved to the incoming side, a CI rerun's
env block, a review thread resolved, the agent owning a misread, re-opening the file, laying
two values side by side, or just running with the new value.

Evaluation seeds
----------------
Drawn with ``python3 -c "import secrets; print([secrets.randbelow(9_000_000)+1_000_000 for _ in
range(3)])"`` before any code was written: 5607061, 2064096, 7772291 (``EVALUATION_SEEDS``). I
never ran the generator or the benchmark with them, and no test does: the tests use 3, 11, 404,
58, 2718, 917 and 61 and check that these differ from the evaluation seeds. The ``__main__`` of
this file refuses them.

What I read
-----------
- ``bench/retention.py``, the interface only: the listing of its top-level names (``grep -n
  "^def \\|^class \\|^    def \\|add_argument"``, which also showed the ``add_argument`` lines of
  ``main``), its first 60 lines (the opening of its module docstring: the usage line, the
  Canaries, Placements, Replay and Scoring paragraphs, up to "generated values are made-up
  words and long"), lines 170-275 (``Canary``, ``canaries_from``, ``load_canaries``,
  ``CanarySource``, ``_generator``, ``Seeded`` and its docstring), lines 495-620 (the tail of
  ``own_text_marks``, ``strip_replaced``, ``presents_as_current``, ``KeepIndex``, ``Score``,
  ``score_context``, the ``# -- token ruler`` heading and the first docstring line of
  ``Ruler``), ``aggregate`` whole (lines 1016-1190) and ``main`` whole (lines 1890-2023, its
  options, checks and the result it prints).
- ``bench/heldout_canaries_n.py``: its lab note (module docstring) and ``generate``, printed
  through ``ast``; nothing else of it.
- ``tests/bench/test_heldout_canaries_n.py`` whole. My test mirrors its structure and checks;
  its ``MARKERS`` list starts with N's words, followed by words of my own ways.
- The lab notes (module docstrings only, printed through ``ast``) of all the earlier sets, A to
  M, whole, to keep away from their value shapes, surfaces, correction wordings and coexisting
  pairs: no ``ABCD-12345``/``ABC#1234``/``ZUV-48213`` tickets, no ``svc_``/``acct_`` ids, no
  doubled vowels, no ``q`` without ``u``, none of J's onset clusters, no ISO-week, ordinal or
  Roman dates, no ``lts/`` branches, no ``.internal``/``.lan``/``.corp``/``.test`` hosts (hosts
  here are Kubernetes service names under ``svc.cluster.local``), no arrows, diffs,
  strike-through, "(was X)", "from X to Y", "X? no, Y", "instead of" or "rather than" in a
  correction, and none of their pairs (two services' or tenants' values, primary/replica,
  beta/GA or pilot/GA dates, connect/read timeouts, two memory limits, input/output or
  read/write places, staging/production, two tickets, two owners of two things, ...).
- ``tests/bench/support.py``: the listing of its top-level names, lines 1-175 (its helpers, to
  use them, and ``EARLIER_SURFACES``, to avoid those names) and 220-260 (``value_skeleton``,
  ``cut_outside``, ``nested_keys``); ``tests/conftest.py`` whole (the ``swebench_path``
  fixture); the ``[...]`` headers and the ruff sections of ``pyproject.toml``; one line of
  ``bench/results.py`` (``def add_output_options``, found by grep, to see where
  ``--no-results`` comes from).
- ``ls bench tests/bench`` (file names only) and ``ls -la`` of
  ``/work/shared/data/swebench-gemini3/``. The recorded sessions only by substring counts, in
  one throwaway check before writing (hit rates of random values of my candidate shapes: bare
  four-digit numbers are always there, five-digit ones one time in ten, my shapes never) and in
  the tests. I read no session text.
- The output of my own throwaway checks on test seeds (3, 11, 404): sample canaries of seed 3,
  session 0, the correction texts of one canary per way, how many attempts a session needed
  (one redraw in 30 sessions), the largest marker-word shares (none above 12%) and the count
  of partial corrections (28 of 150). And the names of my own surfaces and ways that contained
  a name of ``EARLIER_SURFACES`` (``key-value``, ``env``, ``adr``, ``side-by-side``,
  ``commit``, ``sentry``, ``sed``, ``terse``), which I renamed; the tests import sets K to N
  only to compare their surface names with mine, and I printed none of theirs. The tiny
  retention run in the tests is checked for keys only; I ran it once, when all else passed.

What I did not read
-------------------
Nothing under ``src/abridged/`` (the summarizer and its ledger included), no body of an earlier
set's generator (but N's ``generate``), not ``bench/canary_generator.py``, no canary JSON file,
not ``bench/RESULTS.md``, nothing under ``/work/shared/data/canaries/``, no git history, diff
or status, and no benchmark figure.

Scoring, as read
----------------
A canary is kept when every keep string is in the context. An old value is stale when one of
its keep strings is left after removing the correcting canary's whole text, the new value's
keep strings and the replaced-markers (``(was ...)``, lines with ``[superseded``). So a part
carried by a partial correction is one of the new value's keep strings and never makes the old
value stale; the part that changed does. A coexisting pair has no ``supersedes``: both values
are required and neither can be stale. This set writes neither replaced-marker. Placement
(user, tool, assistant) is the benchmark's choice per pass, so every text reads sensibly as a
message, a pasted output or an assistant's words.

Design
------
- 54 templates over the 12 kinds N names (constraint, prohibition, preference, identifier,
  decision, number, path, version, owner, deadline, setting, endpoint): 24 single facts, two
  per kind; 20 corrections, every kind, eight kinds twice; 10 coexisting pairs, ten kinds.
  Ten templates are compound (two keep strings).
- A session of 24 holds 8 singles, 5 corrections (10 canaries) and 3 coexisting pairs (6
  canaries); other counts scale (at least one of each, ``6 <= count <= 70``). Templates,
  surfaces and correction ways each sit in a per-seed shuffled ring that consecutive sessions
  walk, so any 16 consecutive sessions plant every one of them.
- 40 fact surfaces, 14 per register for ``tool`` and 13 each for ``user`` and ``assistant``.
  Tool: a dataclass repr printed by ``python -c``, ``tox config``, ``npm config list``,
  Django ``diffsettings``, ``gh issue view``, ``git log --format=fuller``, uvicorn boot lines,
  a CONTRIBUTING excerpt, a failing pre-commit hook runner, IPython cells, a Maven effective-POM
  properties block, a worker's log excerpt, an editor's hover card, ``make -pn`` variables.
  Assistant: next moves, found-it, edit rationale, a module-level edit, a drafted test, state
  of play, a question back, a command's rationale, a working-values grid, a note to self, a
  reply to a reviewer, a drafted changes entry, a root-cause write-up. User: a quick chat
  line, a task brief, an issue pasted, an inline review note relayed, an rc file, a
  ``setup.cfg`` section, huddle notes, rapid-fire short lines, a pasted function, a
  colleague's words, a why-question, a shell prompt transcript, an editor selection. Each
  writes the fact as a sentence (``says``) or as key/value lines (``fields``); names avoid
  ``EARLIER_SURFACES`` (substring check) and sets K to N.
- 20 correction ways (7 user, 7 tool, 6 assistant), listed under Emphasis (3). Six name the
  old value beside the new one ("make that", fat-fingered, expected/got, a CLI refusing, a
  merge conflict, two values side by side); fourteen name only the new one. Every way names
  the subject, its key or restates the fact.
- Values are drawn fresh per seed and session: made-up words of two or three syllables (their
  own onsets and codas, no doubled vowels, no ``w``, ``q``, ``x``, ``c``), inside code-shaped
  values: function names ``verb_word_noun``, test files and test names, upper-case error
  constants, ``ClassName`` models, 12-digit hex shas, branches ``handle/word-topic``, packages
  ``word-codec``, fixtures, ``[word]`` commit prefixes, feature-flag names, env var names,
  long options, module entry points, queues, cluster-local hosts and base URLs with ports,
  API routes, source, generated, data and config paths, commands, people (a given name and a
  made-up surname), GitHub teams; numbers always with their unit (``41873ms``, ``83.7%``,
  ``4173/hour``, ``3417MB``); versions with a PEP 440 suffix (``4.27.3rc2``, ``7.1.12.post3``);
  dates in 2063-2071 in five styles. A correction's new value keeps the old one's shape (a
  date may be written in another style); deadlines only move later and versions only go up,
  and the second of a version or date pair that both hold is the later one. A session is
  redrawn until every keep string is in its own text and in no other canary's (a correction
  may name the value it replaces, and carries a part it did not change), no keep string holds
  another, and each way that names only the new value leaves the old one's changed part out.

What the set cannot show
------------------------
It says whether a fact survived, not why it was lost. A compound fact with one part lost
counts as lost, like a fact with nothing left. A partial correction's carried part is a keep
string of both canaries, so a summary that keeps the old fact whole still keeps the carried
part; only the changed part can make the old value stale. A look-alike pair is scored as two
required facts: the benchmark cannot tell a summary that merged the two into one "corrected"
value from one that dropped a value for length. Each way has one register, so a way's figure
mixes the way with its voice. A way is applied to any template, so some pairings read oddly (a
policy check "refusing" a failing test's id, a CI rerun's variables holding an owner's name).
A number is written one way only (``41873ms``, never "41.9 s"), so this set does not test
notation. All values are made up, so nothing here measures facts a model
could recall from training.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

EVALUATION_SEEDS = (5607061, 2064096, 7772291)

KINDS = (
    "constraint", "prohibition", "preference", "identifier", "decision", "number", "path",
    "version", "owner", "deadline", "setting", "endpoint",
)  # fmt: skip
REGISTERS = ("user", "tool", "assistant")
SHAPES = ("single", "correction", "coexist")
#: canaries of each shape in a session of 24 (a correction and a coexisting pair take two)
PER_24 = {"single": 8, "correction": 5, "coexist": 3}
MAX_COUNT = 70

# -- made-up words --------------------------------------------------------------------------------

_ONSETS = ("b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
           "br", "dr", "gl", "kr", "pl", "sk", "sp", "st", "tr")  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u")
_CODAS = ("n", "r", "l", "s", "k", "m", "t")
#: no made-up word holds one of these (words that read as a correction, or rude ones)
_BANNED = ("new", "old", "now", "not", "use", "fix", "rev", "ass", "sex", "tit", "cum", "nig",
           "fag", "die", "kil", "pis", "dam", "hel", "sto", "set", "fin", "lat", "ago", "pre",
           "bad", "god", "nazi", "rap", "fuk", "kun")  # fmt: skip

_VERBS = ("flush", "drain", "settle", "rebuild", "stamp", "probe", "coalesce", "hydrate",
          "prune", "tally", "seal", "replay")  # fmt: skip
_NOUNS = ("slots", "ledger", "batches", "marks", "cursor", "leases", "frames", "tokens")
_CAUSES = ("LEASE_LOST", "QUOTA_SPENT", "TOKEN_REJECTED", "SHARD_BUSY", "CHECKSUM_MISMATCH",
           "SCHEMA_DRIFT", "PEER_GONE", "WINDOW_CLOSED")  # fmt: skip
_TEST_TAILS = ("roundtrip", "handles_empty_page", "rejects_overlap", "keeps_order",
               "survives_restart", "merges_duplicates", "honours_deadline")  # fmt: skip
_TOPICS = ("backfill", "retry-budget", "split-writer", "lazy-index", "cold-start",
           "batch-ack")  # fmt: skip
_PKG_TAILS = ("codec", "client", "schema", "shim", "wire")
_FIXTURE_MIDS = ("ledger", "tenant", "clock", "queue")
_FIXTURE_TAILS = ("factory", "stub", "fake")
_CLASS_MIDS = ("Ledger", "Entry", "Snapshot", "Batch", "Record")
_CLASS_TAILS = ("", "Row", "View")
_QUEUE_MIDS = ("reindex", "jobs", "work")
_ROUTE_TAILS = ("events", "batches", "hooks", "sync")
_HOST_ROLES = ("cache", "metrics", "store", "gate")
_ENV_TAILS = ("TRACE_SQL", "VERBOSE_SYNC", "DEBUG_WIRE", "LOG_FRAMES")
_FLAG_MIDS = ("streaming", "rollout", "shadow", "paged")
_OPT_TAILS = ("shards", "partitions", "split-by", "fanout")
_CMD_VERBS = ("reset", "reseed", "wipe", "truncate")
_SUBMODS = ("admin", "tools", "ops")
_TEAM_TAILS = ("reviewers", "owners", "maintainers")
_MOD_TAILS = ("cli", "entry", "console")
_GEN_TAILS = ("_gen", "_generated")
_DATA_TAILS = ("replies", "payloads")
_CFG_NAMES = ("settings", "service", "lint", "rules")
#: the fixed words inside drawn values (what is not made up)
FORM_WORDS = frozenset(
    w.lower()
    for group in (_VERBS, _NOUNS, _CAUSES, _TEST_TAILS, _TOPICS, _PKG_TAILS, _FIXTURE_MIDS,
                  _FIXTURE_TAILS, _CLASS_MIDS, _CLASS_TAILS, _QUEUE_MIDS, _ROUTE_TAILS,
                  _HOST_ROLES, _ENV_TAILS, _FLAG_MIDS, _OPT_TAILS, _CMD_VERBS, _SUBMODS,
                  _TEAM_TAILS, _MOD_TAILS, _GEN_TAILS, _DATA_TAILS, _CFG_NAMES)
    for part in group
    for w in re.findall(r"[A-Za-z]+", part)
) | frozenset(
    ("src", "tests", "test", "build", "generated", "data", "cassettes", "config", "deploy",
     "toml", "cfg", "make", "scripts", "python", "api", "http", "https", "svc", "cluster",
     "local", "example", "org", "enabled", "enable", "purge", "dev", "post", "hour")
)  # fmt: skip

GIVEN = ("Wiebke", "Ondine", "Teodor", "Halvard", "Yusra", "Cormac", "Anouk", "Birgit", "Dario",
         "Emeka", "Farrukh", "Gisela", "Hamid", "Ilse", "Jorun", "Kaito", "Liesl", "Mateus",
         "Nadia", "Orla", "Pavol", "Rasa", "Signe", "Tuomas", "Umaima", "Vesna")  # fmt: skip

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
DATE_STYLES = ("iso", "day_month", "month_day", "weekday", "dotted")
YEARS = range(2063, 2072)  # a later date may pass the years drawn
_DRAW_YEARS = range(2063, 2071)
_SUFFIXES = ("rc", "b", ".post", ".dev")
_SUFFIX_RANK = {".dev": 0, "b": 1, "rc": 2, ".post": 4}
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)(rc|b|\.post|\.dev)(\d+)")
#: the number forms and the unit each is written with
UNITS = {"ms": "ms", "pct": "%", "rate": "/hour", "mb": "MB"}


def format_date(day: dt.date, style: str) -> str:
    if style == "iso":
        return day.isoformat()
    if style == "day_month":
        return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"
    if style == "month_day":
        return f"{_MONTHS[day.month - 1]} {day.day}, {day.year}"
    if style == "weekday":
        return f"{_DAYS[day.weekday()]} {day.day} {_MONTHS[day.month - 1][:3]} {day.year}"
    return f"{day.day:02d}.{day.month:02d}.{day.year}"


_DATE_FORMATS = ("%Y-%m-%d", "%d %B %Y", "%B %d, %Y", "%a %d %b %Y", "%d.%m.%Y")


def parse_date(text: str) -> dt.date:
    """A date this set writes, in any of its styles."""
    for fmt in _DATE_FORMATS:
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    raise ValueError(f"not a date of this set: {text!r}")


def date_style(text: str) -> str:
    for style, fmt in zip(DATE_STYLES, _DATE_FORMATS, strict=True):
        try:
            dt.datetime.strptime(text, fmt)
        except ValueError:
            continue
        return style
    raise ValueError(text)


def version_key(text: str) -> tuple[int, int, int, int, int]:
    """A version of this set (``4.27.3rc2``), as a tuple that orders like PEP 440."""
    m = _VERSION.fullmatch(text)
    if m is None:
        raise ValueError(f"not a version of this set: {text!r}")
    return (int(m[1]), int(m[2]), int(m[3]), _SUFFIX_RANK[m[4]], int(m[5]))


def magnitude(form: str, text: str) -> float:
    """The number of a number form's value (``41873ms`` -> 41873)."""
    unit = UNITS[form]
    assert text.endswith(unit), (form, text)
    return float(text[: -len(unit)])


class Draw:
    """One session's value drawer: every made-up word it hands out is new in the session."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def pick(self, options: Sequence[str]) -> str:
        return self.rng.choice(options)

    def word(self, syllables: int | None = None) -> str:
        r = self.rng
        while True:
            n = syllables or r.choice((2, 2, 3))
            parts = []
            for i in range(n):
                onset = "" if i == 0 and r.random() < 0.08 else r.choice(_ONSETS)
                coda = r.choice(_CODAS) if r.random() < 0.35 else ""
                parts.append(onset + r.choice(_VOWELS) + coda)
            w = "".join(parts)
            if not 5 <= len(w) <= 10 or any(b in w for b in _BANNED) or w in FORM_WORDS:
                continue
            if any(w in u or u in w for u in self.used):
                continue
            self.used.add(w)
            return w

    def number(self, lo: int, hi: int) -> int:
        while True:
            n = self.rng.randrange(lo, hi)
            if n % 10 and n % 100 != 11:
                return n

    def value(self, form: str, style: str) -> str:
        """A fresh value of ``form`` written in ``style`` (forms without styles ignore it)."""
        r, w = self.rng, self.word
        if form == "fn":
            return f"{self.pick(_VERBS)}_{w(2)}_{self.pick(_NOUNS)}"
        if form == "pkgdir":
            return f"src/{w()}/{self.pick(('domain', 'core', 'rules'))}"
        if form == "gendir":
            if style == "build":
                return f"build/generated/{w()}/"
            return f"src/{w()}/{self.pick(_GEN_TAILS)}/"
        if form == "cmd":
            if style == "make":
                return f"make {self.pick(_CMD_VERBS)}-{w()}"
            return f"./scripts/{w()}.sh --purge"
        if form == "module_cmd":
            return f"python -m {w()}.{self.pick(_SUBMODS)}"
        if form == "srcpath":
            return f"src/{w()}/{w()}.py"
        if form == "pkg":
            return f"{w()}-{self.pick(_PKG_TAILS)}"
        if form == "fixture":
            return f"{w()}_{self.pick(_FIXTURE_MIDS)}_{self.pick(_FIXTURE_TAILS)}"
        if form == "tag":
            return f"[{w()}]"
        if form == "sha":
            while True:
                s = "".join(r.choice("0123456789abcdef") for _ in range(12))
                letters = sum(ch.isalpha() for ch in s)
                if 3 <= letters <= 9:
                    return s
        if form == "errcode":
            return f"{w().upper()}_{self.pick(_CAUSES)}"
        if form == "testfile":
            return f"tests/{w()}/test_{w()}.py"
        if form == "testname":
            return f"test_{w()}_{self.pick(_TEST_TAILS)}"
        if form == "klass":
            return f"{w().capitalize()}{self.pick(_CLASS_MIDS)}{self.pick(_CLASS_TAILS)}"
        if form == "queue":
            return f"{w()}.{self.pick(_QUEUE_MIDS)}.v{r.randrange(2, 9)}"
        if form == "branch":
            return f"{self.pick(GIVEN).lower()}/{w()}-{self.pick(_TOPICS)}"
        if form == "route":
            return f"/api/v{r.randrange(2, 9)}/{w()}/{self.pick(_ROUTE_TAILS)}"
        if form == "datadir":
            if style == "cassettes":
                return f"tests/cassettes/{w()}/"
            return f"tests/data/{w()}-{self.pick(_DATA_TAILS)}/"
        if form == "module":
            return f"{w()}.{self.pick(_MOD_TAILS)}"
        if form == "cfgpath":
            if style == "toml":
                return f"config/{w()}/{self.pick(_CFG_NAMES)}.toml"
            return f"deploy/{w()}/{w()}.cfg"
        if form == "person":
            return f"{self.pick(GIVEN)} {w().capitalize()}"
        if form == "team":
            return f"@{w()}/{w()}-{self.pick(_TEAM_TAILS)}"
        if form == "envvar":
            return f"{w().upper()}_{self.pick(_ENV_TAILS)}"
        if form == "flagname":
            return f"{w()}_{self.pick(_FLAG_MIDS)}_enabled"
        if form == "cliflag":
            return f"--{w()}-{self.pick(_OPT_TAILS)}"
        if form == "host":
            return f"{w()}-{self.pick(_HOST_ROLES)}.{w()}.svc.cluster.local"
        if form == "base":
            if style == "cluster":
                host = f"{w()}-{self.pick(_HOST_ROLES)}.{w()}.svc.cluster.local"
                return f"http://{host}:{self.number(1030, 9990)}"
            return f"https://{w()}.{w()}.example.org"
        if form == "ms":
            return f"{self.number(10007, 89993)}ms"
        if form == "pct":
            return f"{r.randrange(61, 98)}.{r.randrange(1, 10)}%"
        if form == "rate":
            return f"{self.number(1000, 9999)}/hour"
        if form == "mb":
            return f"{self.number(1000, 9999)}MB"
        if form == "version":
            release = f"{r.randrange(1, 10)}.{r.randrange(0, 40)}.{r.randrange(0, 20)}"
            return f"{release}{style}{r.randrange(1, 10)}"
        if form == "date":
            day = dt.date(r.choice(_DRAW_YEARS), 1, 1) + dt.timedelta(days=r.randrange(0, 365))
            return format_date(day, style)
        raise KeyError(form)

    def later(self, form: str, old: str, style: str) -> str:
        """A value of ``form`` that comes after ``old`` (a later date, a higher version)."""
        r = self.rng
        if form == "date":
            return format_date(parse_date(old) + dt.timedelta(days=r.randrange(3, 75)), style)
        major, minor, patch, _, _ = version_key(old)
        step = r.choice(("patch", "minor", "major"))
        if step == "patch":
            patch += r.randrange(1, 6)
        elif step == "minor":
            minor, patch = minor + r.randrange(1, 4), r.randrange(0, 10)
        else:
            major, minor, patch = major + 1, r.randrange(0, 12), r.randrange(0, 10)
        return f"{major}.{minor}.{patch}{style}{r.randrange(1, 10)}"


#: the styles a form's values are written in (shared by the two values of a pair)
FORM_STYLES: dict[str, tuple[str, ...]] = {
    "gendir": ("build", "src"),
    "cmd": ("make", "script"),
    "datadir": ("cassettes", "data"),
    "cfgpath": ("toml", "cfg"),
    "base": ("cluster", "public"),
    "version": _SUFFIXES,
    "date": DATE_STYLES,
}
NUMBER_FORMS = tuple(UNITS)

# -- templates ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Template:
    """One fact about one subject (two for a coexisting pair). ``parts`` are the forms of its
    value: one (written ``{v}``) or two (``{a}``, ``{b}``: a compound fact, two keep strings).
    ``says`` states it in a sentence, ``fields`` as key/value lines (a key suffix and what the
    line holds), ``inline`` in one piece; ``modes`` are which parts a correction may change."""

    name: str
    kind: str
    shape: str
    parts: tuple[str, ...]
    subjects: tuple[str, ...]
    keys: tuple[str, ...]
    says: tuple[str, ...]
    inline: str = "{v}"
    fields: tuple[tuple[str, str], ...] = (("", "{v}"),)
    modes: tuple[str, ...] = ("whole",)
    later: bool = False  # a correction's value (or a pair's second) comes after the first

    @property
    def slots(self) -> tuple[str, ...]:
        return ("v",) if len(self.parts) == 1 else ("a", "b")

    @property
    def compound(self) -> bool:
        return len(self.parts) == 2

    @property
    def form(self) -> str:
        """The form of the part a pair's two values differ in (the last one)."""
        return self.parts[-1]


def _t(  # noqa: PLR0917
    name: str,
    kind: str,
    shape: str,
    parts: tuple[str, ...],
    subjects: tuple[str, ...] | str,
    keys: tuple[str, ...] | str,
    says: tuple[str, ...] | str,
    **extra: Any,
) -> Template:
    def many(x: tuple[str, ...] | str) -> tuple[str, ...]:
        return (x,) if isinstance(x, str) else x

    return Template(name, kind, shape, parts, many(subjects), many(keys), many(says), **extra)


_TWO = {"fields": (("", "{a}{b}"),), "inline": "{a}{b}"}

TEMPLATES: tuple[Template, ...] = (
    # -- constraint
    _t("handler_exit_hook", "constraint", "single", ("pkgdir", "fn"),
       "the call every handler must make before it returns", "required_exit_hook",
       "every handler under `{a}` has to call `{b}()` before it returns",
       inline="{b}() for handlers under {a}", fields=(("_scope", "{a}"), ("", "{b}"))),
    _t("framework_free_package", "constraint", "single", ("pkgdir",),
       "the package that must stay free of web-framework imports", "framework_free_package",
       "code in `{v}` must stay free of web-framework imports, so it can run in the batch jobs"),
    _t("coverage_floor", "constraint", "correction", ("pct",),
       "the coverage floor", "fail_under",
       "coverage has to stay at or above {v} on this repo"),
    _t("retryable_codes", "constraint", "coexist", ("errcode",),
       ("the error code the client retries", "the error code the client must never retry"),
       ("retryable_error", "fatal_error"),
       ("`{v}` is retryable: the client backs off and sends the request again",
        "`{v}` is the one the client must never retry though; it goes straight back to "
        "the caller")),
    # -- prohibition
    _t("generated_dir", "prohibition", "single", ("gendir",),
       "the directory of generated code", "generated_code_dir",
       "don't hand-edit anything in `{v}`, it's regenerated from the schema on every build"),
    _t("forbidden_command", "prohibition", "single", ("cmd",),
       "the command never to run against the shared database", "forbidden_command",
       "never run `{v}` against the shared staging database"),
    _t("frozen_module", "prohibition", "correction", ("srcpath",),
       "the module another team is rewriting", "frozen_module",
       "leave `{v}` untouched: another team is halfway through rewriting it"),
    _t("banned_dependency", "prohibition", "correction", ("pkg",),
       "the dependency nobody may add", "banned_dependency",
       "keep `{v}` out of the dependency list: legal hasn't cleared its licence"),
    # -- preference
    _t("preferred_fixture", "preference", "single", ("fixture",),
       "the fixture tests should use", "preferred_fixture",
       "I'd like tests to use the `{v}` fixture rather than hand-rolled mocks"),
    _t("diagnostic_helper", "preference", "single", ("fn",),
       "the helper for diagnostic output", "diagnostic_logger",
       "for anything diagnostic, reach for `{v}()` and leave print() out of it"),
    _t("subject_prefix", "preference", "correction", ("tag",),
       "the prefix for commit subjects", "commit_subject_prefix",
       "commit subjects in this repo start with `{v}`"),
    # -- identifier
    _t("regression_commit", "identifier", "single", ("sha",),
       "the commit that introduced the regression", "regression_commit",
       "the regression came in with commit {v}"),
    _t("crash_code", "identifier", "single", ("errcode",),
       "the error code in the crash reports", "crash_error_code",
       "every crash report from the field carries `{v}`"),
    _t("failing_test", "identifier", "correction", ("testfile", "testname"),
       "the test that keeps failing in CI", "failing_test",
       "the test that keeps failing in CI is `{a}::{b}`",
       inline="{a}::{b}", fields=(("", "{a}::{b}"),), modes=("b", "b", "whole")),
    _t("export_model", "identifier", "correction", ("klass",),
       "the ORM model the export is built on", "export_model",
       "the export is built on the `{v}` model"),
    _t("bisect_bounds", "identifier", "coexist", ("sha",),
       ("the last good commit of the bisect", "the first bad commit of the bisect"),
       ("last_good_commit", "first_bad_commit"),
       ("bisect so far: {v} is the last good commit",
        "and {v} is the first bad one, so the culprit sits between the two")),
    # -- decision
    _t("retry_decorator", "decision", "single", ("srcpath", "fn"),
       "the decorator that will wrap the retries", "retry_decorator",
       "we agreed to wrap the retries in a decorator, `{b}`, living in `{a}`",
       inline="{b} in {a}", fields=(("_module", "{a}"), ("", "{b}"))),
    _t("reindex_queue", "decision", "single", ("queue",),
       "the queue the reindex jobs go on", "reindex_queue",
       "the reindex jobs will go on the `{v}` queue"),
    _t("pr_target", "decision", "correction", ("branch",),
       "the branch the pull request targets", "pr_base_branch",
       "open the pull request against `{v}`"),
    _t("payload_codec", "decision", "correction", ("pkg",),
       "the library for the payload schema", "payload_codec",
       "we're doing the payload schema with `{v}`"),
    _t("base_and_backport", "decision", "coexist", ("branch",),
       ("the branch the fix targets", "the branch the fix is cherry-picked onto"),
       ("fix_base_branch", "backport_branch"),
       ("the fix PR targets `{v}`",
        "once it's merged, cherry-pick it onto `{v}` too; both branches ship it")),
    # -- number
    _t("flush_interval", "number", "single", ("ms",),
       "the buffer flush interval", "flush_interval",
       "the writer flushes its buffer every {v}"),
    _t("vendor_rate", "number", "single", ("rate",),
       "the vendor API rate limit", "vendor_rate_limit",
       "the vendor API lets us make {v} before it answers 429"),
    _t("route_timeout", "number", "correction", ("route", "ms"),
       "the request timeout of the sync route", "route_timeout",
       "requests to `{a}` give up at {b}",
       inline="{b} on {a}", fields=(("_route", "{a}"), ("", "{b}")), modes=("b", "b", "whole")),
    _t("artifact_cache_cap", "number", "correction", ("mb",),
       "the artifact cache cap", "artifact_cache_cap",
       "the artifact cache is capped at {v}"),
    _t("test_timeouts", "number", "coexist", ("ms",),
       ("the default per-test timeout", "the timeout for tests marked slow"),
       ("test_timeout", "slow_test_timeout"),
       ("the default per-test timeout is {v}",
        "tests marked `slow` get {v} instead of the default")),
    # -- path
    _t("cassette_dir", "path", "single", ("datadir",),
       "where the recorded HTTP responses live", "recorded_responses_dir",
       "the recorded HTTP responses live in `{v}`"),
    _t("cli_entry", "path", "single", ("module", "fn"),
       "the CLI entry point", "cli_entry_point",
       "the console script points at `{a}:{b}`",
       inline="{a}:{b}", fields=(("", "{a}:{b}"),)),
    _t("settings_file", "path", "correction", ("cfgpath",),
       "the settings file the service loads", "settings_path",
       "the service reads its settings out of `{v}`"),
    _t("lint_configs", "path", "coexist", ("cfgpath",),
       ("the lint config of the repo", "the lint config of the plugin package"),
       ("lint_config", "plugin_lint_config"),
       ("lint settings come from `{v}`",
        "the plugin package reads `{v}` instead, it has its own rules")),
    # -- version
    _t("engine_pin", "version", "single", ("version",),
       "the pinned engine version", "engine_version",
       "we're pinned to engine {v} until the upgrade lands"),
    _t("wire_schema", "version", "single", ("version",),
       "the wire schema version", "wire_schema_version",
       "the wire schema is at {v}"),
    _t("client_pin", "version", "correction", ("pkg", "version"),
       "the pinned client SDK", "client_pin",
       "pin the client SDK as `{a}=={b}`",
       inline="{a}=={b}", fields=(("", "{a}=={b}"),), modes=("b",), later=True),
    _t("pin_bounds", "version", "coexist", ("version",),
       ("the oldest engine version we support", "the first engine version we exclude"),
       ("min_supported_engine", "first_excluded_engine"),
       ("we support the engine from {v} on",
        "anything at or past {v} breaks us, so keep the engine below it"),
       later=True),
    # -- owner
    _t("ledger_author", "owner", "single", ("person",),
       "who wrote the ledger code", "ledger_author",
       "ask {v} about the ledger code, they wrote most of it"),
    _t("billing_reviewers", "owner", "single", ("team",),
       "the team that approves billing changes", "billing_review_team",
       "anything touching billing needs an approval from `{v}`"),
    _t("sync_oncall", "owner", "correction", ("person",),
       "who is on call for the sync service", "sync_oncall",
       "on call for the sync service this week: {v}"),
    _t("schema_approver", "owner", "correction", ("person",),
       "who signs off on schema changes", "schema_approver",
       "schema changes get signed off by {v}"),
    _t("author_reviewer", "owner", "coexist", ("person",),
       ("who wrote the retry module", "who is reviewing this PR"),
       ("retry_module_author", "retry_pr_reviewer"),
       ("the retry module was written by {v}",
        "the review on this PR is with {v} though; the author isn't reviewing it")),
    # -- deadline
    _t("customer_demo", "deadline", "single", ("date",),
       "the customer demo", "customer_demo",
       "the customer demo is on {v}"),
    _t("cert_expiry", "deadline", "single", ("date",),
       "when the signing certificate expires", "signing_cert_expiry",
       "the signing certificate expires on {v}"),
    _t("merge_deadline", "deadline", "correction", ("date",),
       "the merge deadline", "merge_deadline",
       "this has to be merged by {v}", later=True),
    _t("code_freeze", "deadline", "correction", ("date",),
       "the start of the code freeze", "code_freeze",
       "code freeze begins {v}", later=True),
    _t("sunset_dates", "deadline", "coexist", ("date",),
       ("when the v1 endpoint starts warning", "when the v1 endpoint is switched off"),
       ("v1_deprecation_warning", "v1_shutdown"),
       ("the v1 endpoint starts sending deprecation warnings on {v}",
        "the v1 endpoint goes away for good on {v}"),
       later=True),
    # -- setting
    _t("verbose_switch", "setting", "single", ("envvar",),
       "the switch for verbose sync logs", "verbose_switch",
       "set `{v}=1` to get the verbose sync logs"),
    _t("exporter_flag", "setting", "single", ("flagname",),
       "the flag the streaming exporter sits behind", "exporter_toggle",
       "the streaming exporter sits behind the `{v}` feature flag"),
    _t("integration_invocation", "setting", "correction", ("module_cmd", "cliflag"),
       "how to start the integration run", "integration_invocation",
       "start the integration run with `{a} {b}`",
       inline="{a} {b}", fields=(("", "{a} {b}"),), modes=("b", "b", "whole")),
    _t("rollout_toggle", "setting", "correction", ("flagname",),
       "the rollout toggle", "rollout_toggle",
       "the rollout is gated on the `{v}` toggle"),
    _t("option_alias", "setting", "coexist", ("cliflag",),
       ("the sharding option", "the legacy spelling of the sharding option"),
       ("shard_option", "shard_option_alias"),
       ("the sharding option is spelled `{v}`",
        "`{v}` keeps working too, as a hidden alias for older scripts")),
    # -- endpoint
    _t("ingest_url", "endpoint", "single", ("base", "route"),
       "where events are posted", "ingest_url",
       "events get posted to `{a}{b}`", **_TWO),
    _t("metrics_host", "endpoint", "single", ("host",),
       "the metrics host", "metrics_host",
       "metrics are scraped off `{v}`"),
    _t("webhook_callback", "endpoint", "correction", ("base", "route"),
       "the webhook callback URL", "webhook_callback",
       "the webhook callback is `{a}{b}`", modes=("a", "b", "whole"), **_TWO),
    _t("cache_host", "endpoint", "correction", ("host",),
       "the read-through cache host", "cache_host",
       "the read-through cache is at `{v}`"),
    _t("public_and_probe", "endpoint", "coexist", ("base", "route"),
       ("the URL clients call", "the URL the load balancer probes"),
       ("public_url", "probe_url"),
       ("clients call `{a}{b}`",
        "the load balancer probes `{a}{b}` instead, a separate listener"), **_TWO),
)  # fmt: skip
TEMPLATE_BY_NAME = {t.name: t for t in TEMPLATES}

# -- surfaces -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ctx:
    """What a surface or a correction way writes: a fact's key, subject, sentence, key/value
    lines and one-piece value; a correction naming the old value gets that too."""

    rng: random.Random
    key: str
    subject: str
    says: str
    fields: tuple[tuple[str, str], ...]
    inline: str
    old_inline: str = ""
    old_fields: tuple[tuple[str, str], ...] = ()


def cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text[:1].islower() else text


def upper(key: str) -> str:
    return key.upper()


def camel(key: str) -> str:
    first, *rest = key.split("_")
    return first + "".join(p.capitalize() for p in rest)


def kebab(key: str) -> str:
    return key.replace("_", "-")


def dotted(key: str) -> str:
    return key.replace("_", ".")


def key_spellings(key: str) -> tuple[str, ...]:
    return (key, upper(key), camel(key), kebab(key), dotted(key))


_FILES = ("src/app/conf.py", "app/settings.py", "service/config.py", "worker/runtime.py")
_CONF_FILES = ("pyproject.toml", "config/app.toml", "setup.cfg")


def _clock(r: random.Random) -> str:
    return f"{r.randrange(8, 19):02d}:{r.randrange(0, 60):02d}"


# tool


def _dataclass_repr(c: Ctx) -> str:
    r = c.rng
    pre = r.choice(("debug=False", "workers=4", "region='eu-central-1'"))
    post = r.choice(("log_format='plain'", "dry_run=False", "max_body=1048576"))
    inner = ", ".join([pre, *(f"{k}='{v}'" for k, v in c.fields), post])
    mod = r.choice(("app", "service", "worker"))
    return f'$ python -c "from {mod}.settings import load; print(load())"\nSettings({inner})'


def _tox_config_show(c: Ctx) -> str:
    env = c.rng.choice(("integration", "py312", "functional"))
    keys = " ".join(k for k, _ in c.fields)
    lines = "\n".join(f"{k} = {v}" for k, v in c.fields)
    return f"$ tox config -e {env} -k {keys}\n[testenv:{env}]\n{lines}"


def _npm_config_list(c: Ctx) -> str:
    lines = "\n".join(f'{kebab(k)} = "{v}"' for k, v in c.fields)
    return (
        '$ npm config list\n; "project" config from /home/dev/src/app/.npmrc\n\n'
        f"fund = false\n{lines}\nsave-exact = true\n\n"
        "; node bin location = /usr/local/bin/node\n; cwd = /home/dev/src/app\n"
        '; Run "npm config ls -l" to show all defaults.'
    )


def _django_settings_dump(c: Ctx) -> str:
    lines = [
        "ALLOWED_HOSTS = ['localhost']  ###",
        "DATABASES = {'default': {...}}  ###",
        "DEBUG = True  ###",
        "ROOT_URLCONF = 'app.urls'  ###",
        "USE_TZ = True",
        *(f"{upper(k)} = '{v}'  ###" for k, v in c.fields),
    ]
    return "$ python manage.py diffsettings\n" + "\n".join(sorted(lines))


def _gh_issue_view(c: Ctx) -> str:
    r = c.rng
    n = r.randrange(120, 980)
    who = r.choice(GIVEN).lower()
    title = r.choice(
        ("Sync worker stalls after deploy", "Export job retries forever", "Flaky run on main")
    )
    return (
        f"$ gh issue view {n}\n{title} #{n}\n"
        f"Open • {who} opened about {r.randrange(2, 9)} days ago • {r.randrange(2, 7)} comments\n"
        "Labels: area/sync, triage\n\n"
        f"  {cap(c.says)}.\n\n  Happy to pair on this if it helps.\n\n"
        f"View this issue on GitHub: https://github.com/acme/app/issues/{n}"
    )


def _git_log_fuller(c: Ctx) -> str:
    r = c.rng
    sha = "".join(r.choice("0123456789abcdef") for _ in range(40))
    who = r.choice(GIVEN)
    mail = f"{who.lower()}@dev.example"
    stamp = f"Tue Mar {r.randrange(3, 28)} {_clock(r)}:09 2031 +0100"
    title = r.choice(("Document the sync defaults", "Note the worker contract", "Explain setup"))
    return (
        f"$ git log -1 --format=fuller\ncommit {sha}\nAuthor:     {who} <{mail}>\n"
        f"AuthorDate: {stamp}\nCommit:     {who} <{mail}>\nCommitDate: {stamp}\n\n"
        f"    {title}\n\n    {cap(c.says)}.\n"
    )


def _asgi_boot_lines(c: Ctx) -> str:
    lines = "\n".join(f"INFO:     config {k}={v}" for k, v in c.fields)
    return (
        f"INFO:     Started server process [{c.rng.randrange(300, 9000)}]\n"
        f"INFO:     Waiting for application startup.\n{lines}\n"
        "INFO:     Application startup complete.\n"
        "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)"
    )


def _contributing_md_cat(c: Ctx) -> str:
    a = c.rng.randrange(20, 60)
    heading = c.rng.choice(
        ("Working on the sync worker", "Before you change things", "House rules")
    )
    return (
        f"$ sed -n '{a},{a + 8}p' CONTRIBUTING.md\n## {heading}\n\n{cap(c.says)}.\n\n"
        "Run `make check` before you push; CI runs the same target.\n"
    )


def _hook_runner_failure(c: Ctx) -> str:
    hook = c.rng.choice(("repo-policy", "project-rules", "house-style"))
    return (
        "$ pre-commit run --all-files\n"
        f"{'trim trailing whitespace':.<73}Passed\n{'check toml':.<73}Passed\n"
        f"{hook:.<73}Failed\n- hook id: {hook}\n- exit code: 1\n\n{cap(c.says)}.\n"
    )


def _ipython_cells(c: Ctx) -> str:
    n = c.rng.randrange(3, 20)
    out = [f"In [{n}]: from app.conf import settings", ""]
    for i, (k, v) in enumerate(c.fields, start=1):
        out += [f"In [{n + i}]: settings.{k}", f"Out[{n + i}]: '{v}'", ""]
    return "\n".join(out).rstrip()


def _effective_pom(c: Ctx) -> str:
    props = "\n".join(f"    <{dotted(k)}>{v}</{dotted(k)}>" for k, v in c.fields)
    return (
        "$ mvn -q help:effective-pom | sed -n '/<properties>/,/<\\/properties>/p'\n"
        f"  <properties>\n    <java.version>21</java.version>\n{props}\n"
        "    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>\n  </properties>"
    )


def _worker_log_excerpt(c: Ctx) -> str:
    r = c.rng
    ts = f"2031-0{r.randrange(1, 10)}-{r.randrange(10, 29)} {_clock(r)}"
    lines = [f"{ts}:07,312 INFO  [worker-2] sync.runner: cycle starting"]
    lines += [
        f"{ts}:07,{318 + i} INFO  [worker-2] sync.runner: effective {k}={v}"
        for i, (k, v) in enumerate(c.fields)
    ]
    lines.append(f"{ts}:08,004 INFO  [worker-2] sync.runner: 0 pending batches")
    return "\n".join(lines)


def _lsp_hover_card(c: Ctx) -> str:
    r = c.rng
    where = f"{r.choice(_FILES)}:{r.randrange(12, 90)}:5"
    decls = "\n".join(f'(variable) {upper(k)}: Final[str] = "{v}"' for k, v in c.fields)
    return f"hover {where}\n{decls}\n───\n{cap(c.subject)}."


def _make_p_variables(c: Ctx) -> str:
    r = c.rng
    lines = "\n".join(
        f"# makefile (from 'Makefile', line {r.randrange(5, 60)})\n{upper(k)} := {v}"
        for k, v in c.fields
    )
    return (
        "$ make -pn | grep -A1 '^# makefile'\n# makefile (from 'Makefile', line 3)\n"
        f"SHELL := /bin/bash\n{lines}\n# makefile (from 'Makefile', line 71)\nPYTEST_ARGS := -q -x"
    )


# assistant


def _next_moves(c: Ctx) -> str:
    first = c.rng.choice(
        (
            "Reproduce the failure with the smallest input I can find.",
            "Read the worker's start-up path end to end.",
            "Write a failing test for the reported case.",
        )
    )
    return (
        f"Here's how I'll go about it:\n\n1. {first}\n2. Keep in mind that {c.says}.\n"
        "3. Run the targeted tests, then the whole suite."
    )


def _found_it_note(c: Ctx) -> str:
    tail = c.rng.choice(
        (
            "That explains the odd retries in the log.",
            "That's why the local run behaves differently.",
            "Nothing else in the config looks relevant.",
        )
    )
    return f"Found it. {cap(c.says)}. {tail}"


def _edit_rationale(c: Ctx) -> str:
    return (
        f"I'm editing `{c.rng.choice(_FILES)}` next. One thing to keep straight while I do: "
        f"{c.says}."
    )


def _module_level_edit(c: Ctx) -> str:
    lines = "\n".join(f'{upper(k)} = "{v}"' for k, v in c.fields)
    return (
        f"I'll add this near the top of `{c.rng.choice(_FILES)}`:\n\n```python\n"
        f"# {c.subject}\n{lines}\n```"
    )


def _drafted_test(c: Ctx) -> str:
    checks = "\n".join(f'    assert settings.{k} == "{v}"' for k, v in c.fields)
    return (
        "Here's a test that pins it down:\n\n```python\n"
        f"def test_{c.key}_matches_spec(settings):\n{checks}\n```"
    )


def _state_of_play(c: Ctx) -> str:
    return (
        "Where this stands: the parser change is in and two tests are red. "
        f"{cap(c.says)}. Next I'll look at the fixtures."
    )


def _question_back(c: Ctx) -> str:
    return (
        f"Before I touch the migration, let me make sure I have this right: {c.says}. "
        "I'll proceed on that basis unless you say otherwise."
    )


def _command_rationale(c: Ctx) -> str:
    return (
        f"Running the integration job against what the ticket says ({c.says}).\n\n"
        "```\n$ make integration\n```"
    )


def _working_values_grid(c: Ctx) -> str:
    rows = "\n".join(f"| {c.subject} | `{k}` | `{v}` |" for k, v in c.fields)
    return (
        "What I'm working from:\n\n| what | key | value |\n|---|---|---|\n"
        f"| log level | `log_level` | `info` |\n{rows}\n| worker count | `workers` | `4` |"
    )


def _note_to_self(c: Ctx) -> str:
    return f"Noting this for later in the session: {c.says}."


def _reviewer_reply(c: Ctx) -> str:
    return f"> could you double-check {c.subject}?\n\nDone: {c.says}."


def _changes_file_draft(c: Ctx) -> str:
    return (
        "Draft for CHANGES.md:\n\n### Unreleased\n\n"
        f"- {cap(c.says)}.\n- The retry shim is gone; callers get the plain client.\n"
    )


def _root_cause_writeup(c: Ctx) -> str:
    return (
        "Root cause: the worker read its defaults from a cached copy of the config. "
        f"For the record, {c.says}. With that in place the failing case passes locally."
    )


# user


def _quick_chat_line(c: Ctx) -> str:
    return c.rng.choice((f"btw {c.says}", f"oh and {c.says}", f"{c.says} btw"))


def _task_brief(c: Ctx) -> str:
    return (
        "Task: make the nightly export resumable.\n\nContext:\n"
        f"- it runs inside the worker, there's no cron job\n- {c.says}\n"
        "- ignore the admin UI for this one\n\nStart with a failing test please."
    )


def _issue_body_paste(c: Ctx) -> str:
    env = "\n".join(f"- {k}: `{v}`" for k, v in c.fields)
    return (
        "pasting the issue:\n\n### What happened\n"
        "The sync worker stops picking up batches after a deploy.\n\n"
        f"### Environment\n- python: 3.12\n{env}\n- os: debian 12\n\n"
        "### Expected\nBatches keep flowing."
    )


def _inline_review_note(c: Ctx) -> str:
    r = c.rng
    return (
        f"comment from {r.choice(GIVEN)} on `{r.choice(_FILES)}` line {r.randrange(20, 300)}:\n"
        f"> {cap(c.says)}.\ncan you handle that in this PR too"
    )


def _rc_file_paste(c: Ctx) -> str:
    lines = "\n".join(f"{k} = {v}" for k, v in c.fields)
    return (
        "my ~/.apprc in case it matters:\n```\n[defaults]\ncolor = auto\n"
        f"{lines}\npager = less\n```"
    )


def _setup_cfg_paste(c: Ctx) -> str:
    section = c.rng.choice(("app", "worker", "sync"))
    lines = "\n".join(f"{k} = {v}" for k, v in c.fields)
    return f"from setup.cfg:\n```\n[tool:{section}]\n{lines}\nstrict = true\n```"


def _huddle_notes(c: Ctx) -> str:
    return (
        f"notes from the huddle just now:\n- export first, UI later\n- {c.says}\n"
        f"- {c.rng.choice(GIVEN)} is looking at the flaky CI job"
    )


def _rapid_fire_lines(c: Ctx) -> str:
    return f"ok\nlooked again\n{c.says}\nthx"


def _pasted_function(c: Ctx) -> str:
    items = ", ".join(f'"{k}": "{v}"' for k, v in c.fields)
    return (
        f"this is what's in {c.rng.choice(_FILES)} right now:\n```python\n"
        f'def _defaults() -> dict[str, str]:\n    return {{{items}, "mode": "batch"}}\n```'
    )


def _colleague_words(c: Ctx) -> str:
    return f'{c.rng.choice(GIVEN)} wanted me to pass this along: "{cap(c.says)}."'


def _why_question(c: Ctx) -> str:
    return f"why does the sync job hang on start-up? {cap(c.says)}, if that matters."


def _prompt_transcript(c: Ctx) -> str:
    exports = "\n".join(f"~/src/app (main) $ export {upper(k)}='{v}'" for k, v in c.fields)
    return f"```\n{exports}\n~/src/app (main) $ make run\nstarting worker... ok\n```"


def _editor_selection(c: Ctx) -> str:
    r = c.rng
    a = r.randrange(20, 80)
    body = "\n".join(f'    {k}: str = "{v}"' for k, v in c.fields)
    return (
        f"selected in my editor ({r.choice(_FILES)}, lines {a}-{a + 3}):\n```python\n"
        f"class Settings(BaseSettings):\n    # {c.subject}\n{body}\n```"
    )


@dataclass(frozen=True, slots=True)
class Surface:
    register: str
    write: Callable[[Ctx], str]
    uses: str  # "says": the fact's sentence; "fields": its key/value lines


def _surfaces(register: str, says: Sequence[Callable[[Ctx], str]],
              fields: Sequence[Callable[[Ctx], str]]) -> dict[str, Surface]:  # fmt: skip
    out = {f.__name__.lstrip("_"): Surface(register, f, "says") for f in says}
    out |= {f.__name__.lstrip("_"): Surface(register, f, "fields") for f in fields}
    return out


SURFACES: dict[str, Surface] = {
    **_surfaces(
        "tool",
        (_gh_issue_view, _git_log_fuller, _contributing_md_cat, _hook_runner_failure),
        (_dataclass_repr, _tox_config_show, _npm_config_list, _django_settings_dump,
         _asgi_boot_lines, _ipython_cells, _effective_pom, _worker_log_excerpt, _lsp_hover_card,
         _make_p_variables),
    ),
    **_surfaces(
        "assistant",
        (_next_moves, _found_it_note, _edit_rationale, _state_of_play, _question_back,
         _command_rationale, _note_to_self, _reviewer_reply, _changes_file_draft,
         _root_cause_writeup),
        (_module_level_edit, _drafted_test, _working_values_grid),
    ),
    **_surfaces(
        "user",
        (_quick_chat_line, _task_brief, _inline_review_note, _huddle_notes, _rapid_fire_lines,
         _colleague_words, _why_question),
        (_issue_body_paste, _rc_file_paste, _setup_cfg_paste, _pasted_function,
         _prompt_transcript, _editor_selection),
    ),
}  # fmt: skip

# -- correction ways ------------------------------------------------------------------------------


# user


def _hold_on_wrong_checkout(c: Ctx) -> str:
    return f"hold on, I was in the wrong checkout. {cap(c.says)}."


def _outcome_of_a_call(c: Ctx) -> str:
    return f"just off a call with {c.rng.choice(GIVEN)}: {c.says}."


def _make_that(c: Ctx) -> str:
    return f"> {cap(c.subject)}: {c.old_inline}\n\nmake that {c.inline}"


def _slept_on_it(c: Ctx) -> str:
    return f"slept on it. {cap(c.says)}, let's do that."


def _chat_message_edited(c: Ctx) -> str:
    r = c.rng
    return f"[{_clock(r)}] {r.choice(GIVEN)}: {c.says} (edited)"


def _bare_pls_line(c: Ctx) -> str:
    return f"{c.key}: {c.inline} pls"


def _fat_fingered(c: Ctx) -> str:
    return f"fat-fingered that one. {c.key}: {c.old_inline} should read {c.inline}"


# tool


def _editor_tool_result(c: Ctx) -> str:
    r = c.rng
    path = f"/repo/{r.choice(_CONF_FILES)}"
    n = r.randrange(12, 80)
    lines = [f"{n:6}\t[tool.app]"]
    lines += [f'{n + i:6}\t{k} = "{v}"' for i, (k, v) in enumerate(c.fields, start=1)]
    lines.append(f"{n + len(c.fields) + 1:6}\tstrict = true")
    body = "\n".join(lines)
    return (
        f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet "
        f"of {path}:\n{body}\nReview the changes and make sure they are as expected. "
        "Edit the file again if necessary."
    )


def _repl_reload(c: Ctx) -> str:
    lines = [">>> importlib.reload(conf)", "<module 'app.conf' at 0x7f3a2c1d9e40>"]
    for k, v in c.fields:
        lines += [f">>> conf.{upper(k)}", f"'{v}'"]
    return "\n".join(lines)


def _expected_got(c: Ctx) -> str:
    r = c.rng
    return (
        f"FAILED tests/test_contract.py::test_{c.key} - AssertionError\n"
        f"E       AssertionError: {c.key}: expected '{c.inline}', got '{c.old_inline}'\n"
        "E       (contract fixtures regenerated for this milestone)\n"
        f"1 failed, {r.randrange(90, 400)} passed in {r.randrange(3, 40)}.{r.randrange(10, 99)}s"
    )


def _cli_refuses_value(c: Ctx) -> str:
    return (
        f"$ app check --config app.toml\nerror: {c.key} = '{c.old_inline}' rejected by project "
        f"policy\n  allowed: {c.inline}\n  see docs/policy.md"
    )


def _conflict_taken_theirs(c: Ctx) -> str:
    ours = "\n".join(f'{k} = "{v}"' for k, v in c.old_fields)
    theirs = "\n".join(f'{k} = "{v}"' for k, v in c.fields)
    return (
        "$ git status --short\nUU config/app.toml\n$ sed -n '10,16p' config/app.toml\n"
        f"<<<<<<< HEAD\n{ours}\n=======\n{theirs}\n>>>>>>> origin/main\n"
        "$ git checkout --theirs config/app.toml && git add config/app.toml"
    )


def _ci_rerun_vars(c: Ctx) -> str:
    r = c.rng
    env = "\n".join(f"    {upper(k)}: {v}" for k, v in c.fields)
    return (
        f"✓ integration (py3.12) in {r.randrange(2, 9)}m{r.randrange(10, 59)}s\n"
        "Run make integration\n  make integration\n  shell: /usr/bin/bash -e {0}\n"
        f"  env:\n{env}\ncollected {r.randrange(120, 400)} items\nall green"
    )


def _review_conversation_done(c: Ctx) -> str:
    who = c.rng.choice(GIVEN)
    return (
        f"{who} resolved a conversation on {c.rng.choice(_FILES)}\n  {who}: {c.says}\n  ✔ Resolved"
    )


# assistant


def _misread_owned(c: Ctx) -> str:
    return f"My mistake: I read the wrong line of the config. {cap(c.says)}."


def _reopened_the_file(c: Ctx) -> str:
    return f"Opened the file itself to be sure: {c.says}."


def _two_values_laid_out(c: Ctx) -> str:
    return (
        f"Two different values for {c.subject} came up in this conversation, {c.old_inline} "
        f"and {c.inline}. Your later message has {c.inline}, so I'm building on that one."
    )


def _runs_with_it(c: Ctx) -> str:
    args = " ".join(f"{upper(k)}='{v}'" for k, v in c.fields)
    return f"Running it with that:\n\n```\n$ make integration {args}\n```"


def _plan_redone(c: Ctx) -> str:
    return (
        "Plan, revised:\n\n1. Keep the parser change as it is.\n"
        f"2. {cap(c.says)}.\n3. Re-run the integration suite."
    )


def _test_expectation_edited(c: Ctx) -> str:
    checks = "\n".join(f'assert settings.{k} == "{v}"' for k, v in c.fields)
    return f"I changed the expectation in the test to match:\n\n```python\n{checks}\n```"


@dataclass(frozen=True, slots=True)
class Way:
    register: str
    write: Callable[[Ctx], str]
    names_old: bool


def _ways(register: str, new_only: Sequence[Callable[[Ctx], str]],
          naming_old: Sequence[Callable[[Ctx], str]]) -> dict[str, Way]:  # fmt: skip
    out = {f.__name__.lstrip("_"): Way(register, f, False) for f in new_only}
    out |= {f.__name__.lstrip("_"): Way(register, f, True) for f in naming_old}
    return out


CORRECTIONS: dict[str, Way] = {
    **_ways(
        "user",
        (_hold_on_wrong_checkout, _outcome_of_a_call, _slept_on_it, _chat_message_edited,
         _bare_pls_line),
        (_make_that, _fat_fingered),
    ),
    **_ways(
        "tool",
        (_editor_tool_result, _repl_reload, _ci_rerun_vars, _review_conversation_done),
        (_expected_got, _cli_refuses_value, _conflict_taken_theirs),
    ),
    **_ways(
        "assistant",
        (_misread_owned, _reopened_the_file, _runs_with_it, _plan_redone,
         _test_expectation_edited),
        (_two_values_laid_out,),
    ),
}  # fmt: skip
REGISTER_OF = {n: s.register for n, s in SURFACES.items()} | {
    n: w.register for n, w in CORRECTIONS.items()
}

# -- a session ------------------------------------------------------------------------------------


def shape_counts(count: int) -> dict[str, int]:
    """How many templates of each shape a session of ``count`` canaries takes."""
    correction = max(1, round(count * PER_24["correction"] / 24))
    coexist = max(1, round(count * PER_24["coexist"] / 24))
    return {"single": count - 2 * correction - 2 * coexist, "correction": correction,
            "coexist": coexist}  # fmt: skip


def _ring(rng: random.Random, names: Sequence[str]) -> list[str]:
    out = list(names)
    rng.shuffle(out)
    return out


def _window(ring: Sequence[str], variant: int, size: int) -> list[str]:
    """Session ``variant``'s ``size`` items of ``ring``: sessions walk the ring in turn."""
    start = variant * size
    return [ring[(start + i) % len(ring)] for i in range(size)]


@dataclass(frozen=True, slots=True)
class _Plan:
    templates: dict[str, list[str]]
    surfaces: list[str]
    ways: list[str]


def _plan(seed: int, count: int, variant: int) -> _Plan:
    rng = random.Random(f"heldout-o:plan:{seed}")
    counts = shape_counts(count)
    templates = {}
    for shape in SHAPES:
        ring = _ring(rng, [t.name for t in TEMPLATES if t.shape == shape])
        templates[shape] = _window(ring, variant, counts[shape])
    facts = counts["single"] + counts["correction"] + 2 * counts["coexist"]
    surfaces = _window(_ring(rng, list(SURFACES)), variant, facts)
    ways = _window(_ring(rng, list(CORRECTIONS)), variant, counts["correction"])
    return _Plan(templates, surfaces, ways)


def _fill(text: str, values: dict[str, str]) -> str:
    return text.format(**values)


def _render(t: Template, side: int, values: dict[str, str], rng: random.Random) -> tuple[str, Ctx]:
    key = t.keys[side]
    fields = tuple((key + suffix, _fill(fmt, values)) for suffix, fmt in t.fields)
    ctx = Ctx(rng, key, t.subjects[side], _fill(t.says[side], values), fields,
              _fill(t.inline, values))  # fmt: skip
    return key, ctx


def _draw_values(
    t: Template, draw: Draw, styles: dict[str, str], before: dict[str, str] | None = None,
    change: Sequence[str] = (),
) -> dict[str, str]:  # fmt: skip
    """Values for ``t``'s parts; with ``before``, the parts in ``change`` are drawn again
    (later than before when the template says so) and the rest carried."""
    out = {}
    for slot, form in zip(t.slots, t.parts, strict=True):
        if before is not None and slot not in change:
            out[slot] = before[slot]
        elif before is not None and t.later and form in ("date", "version"):
            out[slot] = draw.later(form, before[slot], styles[slot])
        else:
            while True:
                value = draw.value(form, styles[slot])
                if before is None or value != before[slot]:
                    break
            out[slot] = value
    return out


def _styles(t: Template, rng: random.Random) -> dict[str, str]:
    return {
        slot: rng.choice(FORM_STYLES.get(form, ("",)))
        for slot, form in zip(t.slots, t.parts, strict=True)
    }


def _session(seed: int, count: int, variant: int, attempt: int) -> list[dict[str, Any]]:
    plan = _plan(seed, count, variant)
    rng = random.Random(f"heldout-o:values:{seed}:{count}:{variant}:{attempt}")
    draw = Draw(rng)
    surfaces = list(plan.surfaces)
    rng.shuffle(surfaces)
    out: list[dict[str, Any]] = []

    def fact(t: Template, side: int, values: dict[str, str], at: float) -> dict[str, Any]:
        style = surfaces.pop()
        _, ctx = _render(t, side, values, rng)
        return {
            "kind": t.kind, "at": round(at, 4), "text": SURFACES[style].write(ctx),
            "keep": [values[s] for s in t.slots], "style": style, "template": t.name,
            "subject": t.subjects[side],
        }  # fmt: skip

    for name in plan.templates["single"]:
        t = TEMPLATE_BY_NAME[name]
        out.append(fact(t, 0, _draw_values(t, draw, _styles(t, rng)), rng.uniform(0.03, 0.95)))
    for n, name in enumerate(plan.templates["coexist"]):
        t = TEMPLATE_BY_NAME[name]
        styles = _styles(t, rng)
        first = _draw_values(t, draw, styles)
        if t.later:
            second = _draw_values(t, draw, styles, before=first, change=t.slots)
        else:
            second = _draw_values(t, draw, styles)
        at = rng.uniform(0.03, 0.6)
        a, b = fact(t, 0, first, at), fact(t, 1, second, at + rng.uniform(0.1, 0.33))
        a["_pair"], b["_pair"] = f"x{n}", f"x{n}"
        out += [a, b]
    for n, (name, way_name) in enumerate(zip(plan.templates["correction"], plan.ways, strict=True)):
        t = TEMPLATE_BY_NAME[name]
        styles = _styles(t, rng)
        old = _draw_values(t, draw, styles)
        mode = rng.choice(t.modes)
        change = t.slots if mode == "whole" else (mode,)
        new_styles = dict(styles)
        for slot, form in zip(t.slots, t.parts, strict=True):
            if form == "date" and rng.random() < 0.5:  # people write dates many ways
                new_styles[slot] = rng.choice(DATE_STYLES)
        new = _draw_values(t, draw, new_styles, before=old, change=change)
        at = rng.uniform(0.03, 0.55)
        first = fact(t, 0, old, at)
        _, ctx = _render(t, 0, new, rng)
        _, old_ctx = _render(t, 0, old, rng)
        way = CORRECTIONS[way_name]
        if way.names_old:
            ctx = Ctx(ctx.rng, ctx.key, ctx.subject, ctx.says, ctx.fields, ctx.inline,
                      old_ctx.inline, old_ctx.fields)  # fmt: skip
        second = {
            "kind": t.kind, "at": round(at + rng.uniform(0.22, 0.38), 4),
            "text": way.write(ctx), "keep": [new[s] for s in t.slots], "style": way_name,
            "template": t.name, "subject": t.subjects[0],
        }  # fmt: skip
        carried = [old[s] for s in t.slots if s not in change]
        if carried:
            second["carried"] = carried
        first["_pair"], second["_pair"] = f"c{n}", f"c{n}"
        second["_corrects"] = True
        out += [first, second]
    out.sort(key=lambda c: c["at"])
    for i, c in enumerate(out, start=1):
        c["id"] = f"o{i:02d}"
    by_pair: dict[str, list[dict[str, Any]]] = {}
    for c in out:
        if "_pair" in c:
            by_pair.setdefault(c.pop("_pair"), []).append(c)
    for pair in by_pair.values():
        a, b = pair
        if b.pop("_corrects", False):
            b["supersedes"] = a["id"]
        else:
            a["coexists"], b["coexists"] = b["id"], a["id"]
    order = ("id", "kind", "at", "text", "keep", "style", "template", "subject", "supersedes",
             "coexists", "carried")  # fmt: skip
    return [{k: c[k] for k in order if k in c} for c in out]


def _sound(canaries: Sequence[dict[str, Any]]) -> bool:
    """Every keep string in its own text and in no other canary's (a correction may name the
    value it replaces, and the part it carries), none holding another, and a way naming only
    the new value leaving the old one's changed part out."""
    by_id = {c["id"]: c for c in canaries}
    strings = {k for c in canaries for k in c["keep"]}
    if any(len(k) < 5 for k in strings):
        return False
    if any(a != b and a in b for a in strings for b in strings):
        return False
    for c in canaries:
        if not all(k in c["text"] for k in c["keep"]):
            return False
        if "(was " in c["text"] or "[superseded" in c["text"]:
            return False
        old = by_id.get(c.get("supersedes", ""))
        if old is not None:
            changed = [k for k in old["keep"] if k not in c["keep"]]
            if not changed or set(c["keep"]) == set(old["keep"]):
                return False
            if CORRECTIONS[c["style"]].names_old:
                if not all(k in c["text"] for k in changed):
                    return False
            elif any(k in c["text"] for k in changed):
                return False
    for a in canaries:
        for b in canaries:
            if a is b:
                continue
            pair = b.get("supersedes") == a["id"] or a.get("supersedes") == b["id"]
            for k in a["keep"]:
                if k not in b["text"]:
                    continue
                if pair and k in b["keep"]:  # the part a partial correction carries
                    continue
                if b.get("supersedes") == a["id"] and CORRECTIONS[b["style"]].names_old:
                    continue
                return False
    return True


def generate(seed: int, count: int = 24, variant: int = 0) -> dict[str, Any]:
    """``count`` canaries for session ``variant`` of a run seeded ``seed``, in the shape
    ``bench/retention.py`` reads (``{"canaries": [...]}``)."""
    if count < 6:
        raise ValueError(f"count must be at least 6, not {count}")
    if count > MAX_COUNT:
        raise ValueError(f"count must be at most {MAX_COUNT}, not {count}")
    for attempt in range(300):
        canaries = _session(seed, count, variant, attempt)
        if _sound(canaries):
            return {"generator": "heldout-o", "seed": seed, "variant": variant,
                    "canaries": canaries}  # fmt: skip
    raise RuntimeError(f"no sound draw for seed {seed}, session {variant}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Held-out canaries, set O, as JSON.")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, default=24)
    parser.add_argument("--variant", type=int, default=0)
    args = parser.parse_args(argv)
    if args.seed in EVALUATION_SEEDS:
        parser.error("that is an evaluation seed: run it through bench/retention.py only")
    json.dump(generate(args.seed, args.count, args.variant), sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
