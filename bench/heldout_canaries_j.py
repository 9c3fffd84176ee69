"""Held-out canary set J: facts written blind, for ``bench/retention.py --generator``.

Lab note
========

Why
---
``bench/retention.py`` plants facts ("canaries") into recorded agent sessions, compacts them five
times and checks which facts survive, and whether a corrected value is still shown as current.
The summarizer's memory was tuned on the wording of earlier canary generators, so figures taken
on those generators say little about facts nobody tuned for. This is the tenth blind set (J): it
was written by someone who has seen neither the summarizer nor any earlier generator, so what it
measures is memory of facts in wording and on surfaces the summarizer has not met.

What I read
-----------
- ``bench/retention.py``, only the interface: ``Canary``, ``canaries_from``, ``load_canaries``,
  ``CanarySource``, ``_generator``, ``Seeded``, ``insertion_step``, the observation helpers
  (``insert_in_output``, ``observation_index``, ``add_to_observation``), ``add_to_assistant``,
  ``_holder``, ``insert_canaries``, ``wire_text``, ``REPLACED_MARK``/``_WAS``,
  ``own_text_marks``, ``strip_replaced``, ``presents_as_current``, ``KeepIndex``, ``Score``,
  ``score_context``, the first half of ``aggregate`` (how kinds, styles, templates and pairs
  are tallied) and the options of ``main``. Seen with them: their docstrings' examples (a
  branch ``v1``, a ``release/2026-q4`` branch, a port 5432/5433 pair), and in ``main`` an
  ``--ablate`` option that ranks "the ledger" without some signals (its signal names were not
  looked up). Its list of definitions (names and line numbers) showed in passing; its module
  docstring and the rest of its code were not read.
- ``tests/bench/support.py``, ``tests/conftest.py``, ``tests/needs.py``, the ruff and pytest
  parts of ``pyproject.toml``, the test lines of the ``Makefile``, the first sixty lines of
  ``tests/test_docstrings.py`` (it scans ``src/`` only),
  ``/work/shared/data/swebench-gemini3/README.md``, and the names in ``bench/``,
  ``tests/bench/`` and ``/work/shared/data/``.
- ``tests/bench/test_heldout_canaries_i.py``, for the shape of a test file. Seen there, more
  than the shape: the names of the surfaces the earlier sets used (its "earlier" list, which
  this set avoids as well), set I's counts (templates per shape, styles per register,
  phrasings per register), and a handful of its example values (a ``/srv/...`` path, an ISO
  date with a time, a euro amount, a per-minute rate, a three-part version). To keep away from
  what the summarizer may have been tuned on, set J draws none of those value forms: its
  dates, rates, money-like amounts, paths and versions are written differently (below).
- The recorded sessions ``/work/shared/data/swebench-gemini3/trajectories.jsonl``, only by
  substring search for drawn values (the tests do the same).
- By accident, at the end: ``git status`` (run to check only the two new files were mine)
  named two files someone else has modified, a ``ledger.py`` under the summarizer and a
  supersession test beside it. Only their names were seen; neither was opened.

What I did not read
-------------------
Nothing under ``src/abridged/engine/summarize/``, no facts, ledger or reference code under
``src/abridged/core/``, no other ``bench/heldout_canaries*.py``, not ``bench/canary_generator.py``,
no canary JSON, not ``bench/RESULTS.md``, no git log message, no issue note and no benchmark
figure. This generator's own figures were not looked at either: its tiny test run checks only
that the benchmark runs with it.

Design
------
52 templates over 12 fact kinds (``FACT_KINDS``: constraint, prohibition, preference,
identifier, decision, quantity (a number with a unit), path, version, owner, deadline, endpoint,
limit) in three shapes:

- 24 ``single``: one fact, two templates of each kind;
- 20 ``correction``: a fact, then (0.12 to 0.38 of the session later) the same subject with
  another value of the same form, kind ``correction``, ``supersedes`` the first; every kind has
  at least one;
- 8 ``coexist``: one subject written for two sides (the audit and the billing bucket, the beta
  and the GA milestone, ...), two values that both hold: ``coexists`` names the other, neither
  corrects the other.

Surfaces (``STYLES``): 62, none of them a surface an earlier set used (plain sentences, chat,
key/value, YAML, JSON, logs, tables, diffs, comments, bullets, trackers, e-mail, minutes,
calendars, nginx, systemd, psql, kubectl, Terraform, crontab, CSV, INI, .env, Makefiles,
Dockerfiles, GraphQL, OpenAPI, HTTP, pytest runs, voice, stack traces, ... are all left out).
42 ``GENERIC`` ones carry singles, pair members and the first half of a correction:

- user (13): an IRC log paste, text copied out of a PDF (page header and footer around it), a
  spreadsheet cell note, auto-generated SRT captions of a recording, a vCard, an org-mode
  heading with a property drawer, a reStructuredText admonition, the answers given to a setup
  wizard's prompts, a PagerDuty incident note, a heredoc the user ran, OCR text of a pasted
  screenshot, shell history, a colleague's message through a translate button;
- tool (16): an HAProxy backend, ``docker inspect`` labels, ``strace`` writes, ``ldapsearch``
  LDIF, a ``dig`` TXT answer, ``git blame --porcelain``, an ssh config block, ``git config
  --get-regexp``, PowerShell ``Format-List``, gdb prints, a Python REPL, a Kconfig entry, a
  Nagios plugin line, a man page's NOTES, a Bazel BUILD rule, ``cmake -LH``;
- assistant (13): a pytest fixture, a SQL check, a TypeScript interface with JSDoc, a
  ``typing.Literal`` alias, a markdown footnote, an argparse option, a pydantic field, an HTML
  ``<details>`` block, a ``warnings.warn`` guard, a gettext catalog entry with a translator
  note, a blockquote of the user, a box-drawing frame, a Graphviz node.

Dropped while writing, as too near an earlier surface: a Trello card and a Figma comment
(tracker and review comments), a numbered engineering-standard clause (shall-requirements),
a ``StrEnum`` member with a comment (constants).

Corrections are written 20 ways (``PHRASINGS``), one correction template each (so a figure by
template is one by phrasing), each its own surface:

- user 7: a P.S. under an unrelated ask, a resolved Google Docs thread accepting an edit, a
  standup bot post, owning up to a typo, a struck-through line in a notes app, a staff
  directory entry, a form response;
- tool 8: ``pip install`` replacing a package, a ``dig`` CNAME answer, CODEOWNERS at
  ``origin/main``, a HISTORY.rst entry, a login banner, ``git notes``, an internal quota CLI, a
  ``cdk diff`` tree;
- assistant 5: reconciling two values seen in the thread, a brief for a subagent, a ``jq``
  edit, a read-back, a question to confirm.

Five of them (the P.S., the typo, reconciling, the read-back, the question) are prose by nature:
what sets them apart is how they correct, not where they are written.

The mix of naming the replaced value, decided from what people and tools do: 9 of 20 name the
old value beside the new (45%: tools that print both, ``pip``, ``cdk diff``, a changelog, the
quota CLI; and people who own up to a typo, strike a value out, accept an edit, reconcile or ask
back), 11 give only the new value (55%: most people simply restate the fact, and most tools
show only what is there now). No phrasing writes a word that announces a correction (update,
change, instead, now, actually, correction, new, moved, replace, no longer, wrong, switch,
previous, earlier, ...) and none writes the benchmark's replaced markers (a parenthetical
was-note or a superseded bracket).

Values
------
Drawn fresh for each (seed, count, variant) from ``random.Random(
"heldout-j:values:{seed}:{count}:{variant}")``; where each canary goes and the noise around it
from ``random.Random("heldout-j:layout:...")`` keyed the same way, and which templates a session
gets from ``random.Random("heldout-j:plan:{seed}:{count}")``. Values are made-up words (two or
three syllables, each word with a syllable starting in a cluster no English word starts with:
zh, vr, dv, tv, kv, tl, zr, vl; never a w, so no value reads as "new" or "now"), and forms built
of them: CIDRs, regions, image references, KMS aliases, hosts under ``.internal``, paths under
``/opt`` ``/run`` ``/mnt`` ``/etc``, release branches, schema-qualified tables, queues, slugs,
tenant and ticket ids, project ids, flag keys, datasets, vendors, amounts with units (MiB, KiB,
rows, workers, seconds, rps, GPU-hours), versions with a leading v and calendar versions,
person names, e-mail addresses, GitHub handles, dates written ``14 Oct 2027 17:40 UTC``, and
``https`` URLs. The drawn number of a value with one (a date's day, a version's last part, the
number in a host, path, id or amount) is congruent to ``variant`` modulo 17, so no two of a
run's first 17 sessions draw the same such value. The two values of a pair share one form
(``shape``); deadlines of a correction slip later and versions go up; neither value contains the
other, and no value is in any other canary's text of its session (but a correction may name the
value it replaces). The tests check a sample against the recorded sessions.

Which templates a session gets: the templates are dealt from a queue of shuffled decks, each
session taking the first ones that fit (a pair needs two places) and are not yet in it; the
generic styles are dealt the same way from decks that alternate the three registers. So every
16 consecutive sessions at the default count (and the first 16 at count 8) plant every
template, and at the default count every session has facts in all three registers. A session's
plan depends on (seed, count, variant) only, not on which sessions were asked for before.

Seeds and command
-----------------
Evaluation seeds (drawn with ``random.SystemRandom().randrange(1_000_000, 10_000_000)`` before
any code was written; no test runs them): 2990642, 9068858, 5770174. Run one with::

    .venv/bin/python bench/retention.py --generator bench/heldout_canaries_j.py --seed 2990642
"""

from __future__ import annotations

import datetime as dt
import functools
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

NAME = "heldout-j"
EVALUATION_SEEDS = (2990642, 9068858, 5770174)

REGISTERS = ("user", "tool", "assistant")
FACT_KINDS = (
    "constraint", "prohibition", "preference", "identifier", "decision", "quantity", "path",
    "version", "owner", "deadline", "endpoint", "limit",
)  # fmt: skip
KINDS = (*FACT_KINDS, "correction")
SHAPES = ("single", "correction", "coexist")
SPREAD = 17  # numbers of session v are congruent to v modulo this


# -- values ---------------------------------------------------------------------------------------

_ONSETS = (
    "b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "gr", "kr",
    "tr", "sk", "st", "th", "pl", "kl", "gl", "sn",
)  # fmt: skip
_RARE_ONSETS = ("zh", "vr", "dv", "tv", "kv", "tl", "zr", "vl")
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ae", "ei", "y")
_CODAS = ("n", "r", "l", "s", "k", "x", "rn", "sk", "lv", "lt", "rk", "nd", "m", "")


def _word(r: random.Random, low: int = 5, high: int = 8) -> str:
    """A made-up lowercase word of ``low`` to ``high`` letters, one syllable of it starting with
    a cluster English words do not start a syllable with."""
    while True:
        n = r.choice((2, 2, 3))
        rare = r.randrange(n)
        syllables = [
            (r.choice(_RARE_ONSETS) if i == rare else r.choice(_ONSETS)) + r.choice(_VOWELS)
            for i in range(n)
        ]
        word = "".join(syllables) + r.choice(_CODAS)
        if low <= len(word) <= high:
            return word


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _n(r: random.Random, low: int, high: int, variant: int) -> int:
    """A number in ``[low, high)`` congruent to ``variant`` modulo ``SPREAD``."""
    n = r.randrange(low, high)
    n += variant % SPREAD - n % SPREAD
    if n < low:
        n += SPREAD
    if n >= high:
        n -= SPREAD
    return n


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_DAY0 = dt.date(2027, 1, 4)


def _when(day: dt.date, r: random.Random) -> str:
    hour, minute = r.randrange(8, 19), r.randrange(0, 60, 5)
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year} {hour:02d}:{minute:02d} UTC"


def _date(r: random.Random, v: int) -> str:
    return _when(_DAY0 + dt.timedelta(days=_n(r, 0, 900, v)), r)


def _parse_date(value: str) -> dt.datetime:
    day, month, year, clock, _ = value.split(" ")
    hour, minute = clock.split(":")
    return dt.datetime(int(year), _MONTHS.index(month) + 1, int(day), int(hour), int(minute))


def _later_date(old: str, r: random.Random, v: int) -> str:
    day = _parse_date(old).date() + dt.timedelta(days=SPREAD * r.randrange(1, 3))
    return _when(day, r)


def _semver(r: random.Random, v: int) -> str:
    return f"v{r.randrange(2, 10)}.{r.randrange(10, 60)}.{_n(r, 20, 99, v)}"


def _higher_semver(old: str, r: random.Random, v: int) -> str:
    major, minor, _ = old[1:].split(".")
    return f"v{major}.{int(minor) + r.randrange(1, 4)}.{_n(r, 20, 99, v)}"


def _calver(r: random.Random, v: int) -> str:
    return f"{r.randrange(2026, 2029)}.{r.randrange(1, 10)}.{_n(r, 100, 999, v)}"


def _higher_calver(old: str, r: random.Random, v: int) -> str:
    year, month, _ = old.split(".")
    return f"{year}.{int(month) + r.randrange(1, 4)}.{_n(r, 100, 999, v)}"


def _ticket(r: random.Random, v: int) -> str:
    letters = "".join(r.choice("BCDFGHJKLMNPQRSTVXZ") for _ in range(3))
    return f"{letters}-{_n(r, 10_000, 99_999, v)}"


Form = Callable[[random.Random, int], str]

FORMS: dict[str, Form] = {
    "cidr": lambda r, v: f"10.{_n(r, 100, 250, v)}.{r.randrange(16, 250)}.0/{r.randrange(22, 25)}",
    "region": lambda r, v: (
        f"{r.choice(('eu', 'ap', 'us', 'sa'))}-{_word(r, 4, 7)}-{r.randrange(2, 10)}"
    ),
    "image": lambda r, v: (
        f"registry.corp.example/base/{_word(r)}:{_n(r, 10, 99, v)}.{r.randrange(10, 99)}"
    ),
    "codename": lambda r, v: _word(r, 6, 9),
    "kms-alias": lambda r, v: f"alias/{_word(r, 4, 7)}-{_word(r, 4, 7)}",
    "host": lambda r, v: f"{_word(r, 4, 7)}-{_n(r, 10, 99, v)}.{_word(r, 4, 7)}.internal",
    "opt-path": lambda r, v: f"/opt/{_word(r, 4, 7)}/share/{_word(r, 4, 7)}_{_n(r, 100, 999, v)}",
    "socket": lambda r, v: f"/run/{_word(r, 4, 7)}/{_word(r, 4, 7)}.sock",
    "dump-path": lambda r, v: f"/mnt/{_word(r, 4, 7)}/dumps/{_word(r, 4, 7)}",
    "tls-path": lambda r, v: f"/etc/{_word(r, 4, 7)}/tls/{_word(r, 4, 7)}",
    "branch": lambda r, v: f"release/{_word(r, 4, 7)}-{_n(r, 10, 99, v)}",
    "table": lambda r, v: (
        f"{_word(r, 4, 6)}.{_word(r, 4, 6)}_{r.choice(('entries', 'events', 'journal', 'outbox'))}"
    ),
    "queue": lambda r, v: f"{_word(r, 4, 7)}.{_word(r, 4, 7)}.q{r.randrange(2, 10)}",
    "slug": lambda r, v: f"{_word(r, 4, 7)}-{_word(r, 4, 7)}",
    "tenant": lambda r, v: f"tn_{_word(r, 4, 6)}{_n(r, 100, 999, v)}",
    "ticket": _ticket,
    "project": lambda r, v: f"{_word(r, 5, 8)}-{_n(r, 1000, 9999, v)}",
    "flag-key": lambda r, v: f"ff.{_word(r, 4, 7)}_{_word(r, 4, 7)}",
    "dataset": lambda r, v: f"ds_{_word(r, 4, 7)}_{_n(r, 10, 99, v)}",
    "vendor": lambda r, v: f"{_cap(_word(r))} {r.choice(('Networks', 'Telecom', 'Systems'))}",
    "mib": lambda r, v: f"{_n(r, 1100, 9900, v)} MiB",
    "kib": lambda r, v: f"{_n(r, 1100, 9900, v)} KiB",
    "gpu-hours": lambda r, v: f"{_n(r, 1100, 9900, v)} GPU-hours",
    "rows": lambda r, v: f"{_n(r, 1100, 9900, v)} rows",
    "rps": lambda r, v: f"{_n(r, 110, 990, v)} rps",
    "workers": lambda r, v: f"{_n(r, 110, 990, v)} workers",
    "seconds": lambda r, v: f"{_n(r, 1100, 9900, v)} seconds",
    "semver": _semver,
    "calver": _calver,
    "person": lambda r, v: f"{_cap(_word(r, 4, 7))} {_cap(_word(r, 5, 8))}",
    "email": lambda r, v: f"{_word(r, 4, 6)}.{_word(r, 4, 7)}@{_word(r, 4, 7)}.io",
    "handle": lambda r, v: f"@{_word(r, 4, 6)}-{_word(r, 4, 7)}",
    "date": _date,
    "url": lambda r, v: (
        f"https://{_word(r, 4, 7)}.{_word(r, 4, 7)}.dev/{_word(r, 4, 7)}/v{r.randrange(2, 10)}"
    ),
}
# a correction of these goes the way such values go: a deadline slips, a version goes up
LATER: dict[str, Callable[[str, random.Random, int], str]] = {
    "date": _later_date,
    "semver": _higher_semver,
    "calver": _higher_calver,
}


def shape(value: str) -> str:
    """The form of a value: runs of letters as ``a``, runs of digits as ``9``.

    >>> shape("/opt/zhoka/share/tlern_417"), shape("14 Oct 2027 17:40 UTC")
    ('/a/a/a/a_9', '9 a 9 9:9 a')
    """
    return re.sub(r"[0-9]+", "9", re.sub(r"[A-Za-z]+", "a", value))


def order(value: str) -> tuple[int, ...]:
    """What grows when a deadline slips or a version goes up: the date's minutes since the epoch
    of ``datetime``, else the value's numbers in order."""
    if value.endswith(" UTC"):
        return (int(_parse_date(value).timestamp() // 60),)
    return tuple(int(n) for n in re.findall(r"[0-9]+", value))


# -- templates ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Template:
    """One way a fact is planted: its kind, shape, the form of its value, its subject (``{s}``:
    the side, for a coexisting pair), a key naming it in configuration-like surfaces, and two
    sentences that state it (``{v}``: the value). ``phrasing`` writes a correction's second
    fact; ``label`` is a fixed name some phrasings show (a package, a DNS name, a path)."""

    name: str
    kind: str
    shape: str
    form: str
    subject: str
    key: str
    says: tuple[str, str]
    phrasing: str | None = None
    sides: tuple[str, str] | None = None
    label: str = ""

    @property
    def size(self) -> int:
        return 1 if self.shape == "single" else 2


def _single(name: str, kind: str, form: str, subject: str, key: str, *says: str) -> Template:
    assert len(says) == 2
    return Template(name, kind, "single", form, subject, key, (says[0], says[1]))


def _correction(  # noqa: PLR0917
    name: str,
    kind: str,
    form: str,
    phrasing: str,
    subject: str,
    key: str,
    *says: str,
    label: str = "",
) -> Template:
    assert len(says) == 2
    return Template(
        name, kind, "correction", form, subject, key, (says[0], says[1]), phrasing, label=label
    )


def _coexist(  # noqa: PLR0917
    name: str, kind: str, form: str, sides: tuple[str, str], subject: str, key: str, *says: str
) -> Template:
    assert len(says) == 2
    return Template(name, kind, "coexist", form, subject, key, (says[0], says[1]), sides=sides)


TEMPLATES: tuple[Template, ...] = (
    # constraint
    _single("ingress-cidr", "constraint", "cidr",
            "the only network the staging ingress accepts", "ingress_allow_cidr",
            "Staging ingress must only accept traffic from {v}.",
            "Nothing outside {v} may reach the staging ingress."),
    _single("export-region", "constraint", "region",
            "the region customer exports must stay in", "export_region",
            "Customer exports have to stay inside {v}.",
            "Every customer export must be written in {v} and nowhere else."),
    _correction("base-image", "constraint", "image", "standup-bot",
                "the base image every service image must build FROM", "base_image",
                "Every service image must build FROM {v}.",
                "Service images are required to start from {v}."),
    _correction("tls-profile", "constraint", "codename", "subagent-brief",
                "the TLS profile public listeners must use", "tls_profile",
                "Public listeners must use the TLS profile {v}.",
                "Any public listener is required to run the {v} TLS profile."),
    _coexist("bucket-kms", "constraint", "kms-alias", ("audit", "billing"),
             "the KMS key the {s} bucket must be encrypted with", "{s}_bucket_kms_alias",
             "The {s} bucket must be encrypted with {v}.",
             "Objects in the {s} bucket have to use the KMS key {v}."),
    # prohibition
    _single("no-migrate-host", "prohibition", "host",
            "the host nobody may run migrations against", "no_migrations_host",
            "Never run migrations against {v}.",
            "Migrations must not be pointed at {v}, ever."),
    _single("no-delete-path", "prohibition", "opt-path",
            "the directory nothing may be deleted from", "never_delete_under",
            "Do not delete anything under {v}.",
            "Nothing under {v} gets removed, not even temp files."),
    _correction("frozen-branch", "prohibition", "branch", "motd-banner",
                "the branch nobody may force-push to", "no_force_push_branch",
                "Nobody force-pushes to {v}.",
                "Force-pushing to {v} is not allowed."),
    _correction("never-truncate", "prohibition", "table", "confirm-question",
                "the table that must never be truncated", "never_truncate_table",
                "Never truncate {v}, not even in staging.",
                "Do not truncate {v} under any circumstances."),
    # preference
    _single("job-queue", "preference", "queue",
            "the queue background jobs should go on", "preferred_job_queue",
            "We'd like background jobs to go on {v}.",
            "Please prefer the {v} queue for background jobs."),
    _single("commit-scope", "preference", "slug",
            "the scope tag commit subjects should start with", "commit_scope",
            "I prefer commit subjects to start with the scope {v}.",
            "Start commit subjects with {v}, that's the team habit."),
    _correction("fixture-profile", "preference", "codename", "ps-aside",
                "the fixture profile for local test runs", "fixture_profile",
                "For local test runs we prefer the fixture profile {v}.",
                "Use the {v} fixture profile when running tests locally, please."),
    # identifier
    _single("pilot-tenant", "identifier", "tenant",
            "the pilot customer's tenant id", "pilot_tenant_id",
            "The pilot customer's tenant id is {v}.",
            "Pilot traffic is tagged with tenant {v}."),
    _single("tracking-ticket", "identifier", "ticket",
            "the ticket this work is tracked under", "tracking_ticket",
            "This work is tracked under {v}.",
            "Please reference {v} in the PR title."),
    _correction("sandbox-project", "identifier", "project", "typo-admission",
                "the sandbox cloud project", "sandbox_project",
                "The sandbox cloud project is {v}.",
                "Deploy previews go into the cloud project {v}."),
    _correction("rollout-flag", "identifier", "flag-key", "cdk-resource-tree",
                "the feature flag the rollout sits behind", "rollout_flag",
                "The rollout sits behind the feature flag {v}.",
                "Gate the importer path with the flag {v}."),
    _coexist("pipeline-dataset", "identifier", "dataset", ("nightly", "hourly"),
             "the dataset the {s} pipeline writes to", "{s}_dataset",
             "The {s} pipeline writes to the dataset {v}.",
             "Output of the {s} pipeline lands in {v}."),
    # decision
    _single("scheduler-codename", "decision", "codename",
            "the codename of the scheduler rewrite", "scheduler_codename",
            "We settled on {v} as the codename of the scheduler rewrite.",
            "The scheduler rewrite goes by the codename {v}."),
    _single("sms-vendor", "decision", "vendor",
            "the vendor picked for outbound SMS", "sms_vendor",
            "We're going with {v} for outbound SMS.",
            "Outbound SMS goes through {v}; that's decided."),
    _correction("event-bus-cluster", "decision", "slug", "git-notes",
                "the broker cluster chosen for the event bus", "event_bus_cluster",
                "We chose the {v} cluster for the event bus.",
                "The event bus runs on the {v} broker cluster."),
    # quantity
    _single("indexer-memory", "quantity", "mib",
            "the indexer's memory request", "indexer_memory",
            "The indexer's memory request is {v}.",
            "Give the indexer {v} of memory."),
    _single("gpu-budget", "quantity", "gpu-hours",
            "the quarterly GPU budget", "gpu_budget",
            "Our GPU budget for the quarter is {v}.",
            "We have {v} of GPU time this quarter."),
    _correction("export-batch", "quantity", "rows", "history-rst",
                "the export job's batch size", "export_batch_size",
                "The export job writes {v} per batch.",
                "Batches in the export job are {v} each."),
    _correction("launch-peak", "quantity", "rps", "form-response",
                "the expected peak traffic for launch week", "launch_peak",
                "Expect peak traffic of {v} during launch week.",
                "Launch week should peak around {v}."),
    _coexist("pool-size", "quantity", "workers", ("thumbnail", "transcode"),
             "the size of the {s} worker pool", "{s}_pool_size",
             "The {s} pool runs {v}.",
             "Size the {s} pool at {v}."),
    # path
    _single("fixture-dir", "path", "opt-path",
            "where generated fixtures go", "fixture_dir",
            "Put generated fixtures under {v}.",
            "Generated fixtures belong in {v}."),
    _single("sidecar-socket", "path", "socket",
            "the socket the sidecar listens on", "sidecar_socket",
            "The sidecar listens on {v}.",
            "Talk to the sidecar through {v}."),
    _correction("golden-dir", "path", "opt-path", "reconcile",
                "the directory holding the golden files", "golden_dir",
                "Golden files live in {v}.",
                "Keep the golden files in {v}."),
    _correction("dump-dir", "path", "dump-path", "strikethrough-note",
                "where the nightly dump is written", "nightly_dump_dir",
                "The nightly dump is written to {v}.",
                "Nightly dumps go to {v}."),
    _coexist("cert-dir", "path", "tls-path", ("internal", "partner"),
             "where the {s} certificates are kept", "{s}_cert_dir",
             "The {s} certificates are kept in {v}.",
             "Look for the {s} certificates under {v}."),
    # version
    _single("min-sdk", "version", "semver",
            "the minimum supported client SDK", "min_client_sdk",
            "The minimum supported client SDK is {v}.",
            "Clients older than {v} are not supported."),
    _single("billing-lib", "version", "semver",
            "the version the billing client library is pinned to", "billing_client_pin",
            "The billing client library is pinned to {v}.",
            "Keep the billing client library at {v}."),
    _correction("corvane-pin", "version", "calver", "pip-reinstall",
                "the pinned version of corvane-client", "corvane_client_pin",
                "Pin corvane-client to {v}.",
                "corvane-client has to stay on {v}.",
                label="corvane-client"),
    _coexist("mobile-sdk", "version", "semver", ("iOS", "Android"),
             "the {s} SDK pin", "{s}_sdk_pin",
             "The {s} SDK is pinned to {v}.",
             "Ship the {s} app with SDK {v}."),
    # owner
    _single("recon-owner", "owner", "person",
            "the owner of the billing reconciliation job", "recon_owner",
            "{v} owns the billing reconciliation job.",
            "The billing reconciliation job belongs to {v}."),
    _single("search-oncall", "owner", "email",
            "the on-call contact for the search cluster", "search_oncall",
            "Page {v} about anything on the search cluster.",
            "The search cluster's on-call contact is {v}."),
    _correction("schema-approver", "owner", "person", "directory-lookup",
                "the approver for production schema migrations", "schema_approver",
                "{v} approves production schema migrations.",
                "Production schema migrations need sign-off from {v}."),
    _correction("payments-codeowner", "owner", "handle", "codeowners-head",
                "the code owner of /services/payments/", "payments_codeowner",
                "{v} is the code owner of /services/payments/.",
                "Reviews under /services/payments/ go to {v}.",
                label="/services/payments/"),
    _coexist("area-owner", "owner", "person", ("frontend", "data platform"),
             "the owner of the {s} area", "{s}_owner",
             "{v} owns the {s} area.",
             "Questions about the {s} area go to {v}."),
    # deadline
    _single("code-freeze", "deadline", "date",
            "the start of the code freeze", "code_freeze",
            "Code freeze starts {v}.",
            "No merges after {v}: that's the freeze."),
    _single("contract-renewal", "deadline", "date",
            "the vendor contract renewal deadline", "contract_renewal_due",
            "The vendor contract has to be renewed by {v}.",
            "Renewal paperwork for the vendor contract is due {v}."),
    _correction("cutover", "deadline", "date", "gdocs-thread",
                "the migration cutover", "cutover_at",
                "The migration cutover is {v}.",
                "We cut over to the migrated database at {v}."),
    _correction("security-review", "deadline", "date", "echo-back",
                "the security review slot", "security_review_at",
                "Our security review slot is {v}.",
                "The security review is booked for {v}."),
    _coexist("milestones", "deadline", "date", ("beta", "GA"),
             "the {s} milestone", "{s}_milestone",
             "The {s} milestone is {v}.",
             "We owe the {s} milestone by {v}."),
    # endpoint
    _single("push-gateway", "endpoint", "url",
            "the metrics push gateway", "metrics_push_url",
            "Push metrics to {v}.",
            "The metrics push gateway is {v}."),
    _single("package-index", "endpoint", "url",
            "the internal package index", "package_index_url",
            "Install internal packages from {v}.",
            "Our internal package index lives at {v}."),
    _correction("primary-db", "endpoint", "host", "dig-cname",
                "the host behind pg-primary.ledger.corp", "pg_primary_host",
                "pg-primary.ledger.corp points at {v}.",
                "The primary database, pg-primary.ledger.corp, runs on {v}.",
                label="pg-primary.ledger.corp"),
    _correction("webhook-receiver", "endpoint", "url", "jq-apply",
                "the webhook receiver", "webhook_receiver",
                "Send webhooks to {v}.",
                "The webhook receiver is {v}."),
    _coexist("regional-api", "endpoint", "url", ("EU", "APAC"),
             "the {s} API endpoint", "{s}_api_url",
             "The {s} API endpoint is {v}.",
             "Point {s} clients at {v}."),
    # limit
    _single("upload-limit", "limit", "kib",
            "the largest upload the API accepts", "max_upload",
            "The API rejects uploads over {v}.",
            "Uploads are capped at {v}."),
    _single("tenant-rate", "limit", "rps",
            "the per-tenant API rate limit", "tenant_rate_limit",
            "Each tenant is limited to {v}.",
            "The per-tenant rate limit is {v}."),
    _correction("query-timeout", "limit", "seconds", "quota-cli",
                "the longest a report query may run", "report_query_timeout",
                "Report queries are killed after {v}.",
                "No report query may run longer than {v}."),
)  # fmt: skip
BY_NAME = {t.name: t for t in TEMPLATES}


# -- surfaces -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fact:
    """What a surface writes: the template, the subject (its side filled in), the key, the value
    and one of the template's sentences stating it."""

    template: Template
    subject: str
    key: str
    value: str
    sentence: str

    @property
    def bare(self) -> str:
        """The subject without its leading article, capitalized (a label)."""
        return _cap(self.subject.removeprefix("the "))

    @property
    def upper(self) -> str:
        return self.key.upper()

    @property
    def pascal(self) -> str:
        return "".join(_cap(p) for p in self.key.split("_"))

    @property
    def camel(self) -> str:
        p = self.pascal
        return p[:1].lower() + p[1:]

    @property
    def dashed(self) -> str:
        return self.key.replace("_", "-")


Render = Callable[[Fact, random.Random], str]

PEOPLE = (
    "Dana", "Priya", "Tomasz", "Aiko", "Mehmet", "Lucia", "Kofi", "Sanna", "Ravi", "Ines",
    "Oskar", "Mina", "Jonas", "Farah",
)  # fmt: skip
SURNAMES = ("Okafor", "Lindqvist", "Haddad", "Moreau", "Tanaka", "Kowalski", "Brennan", "Silva")
SERVICES = ("ledger", "intake", "billing", "search", "notifier", "exporter", "gateway")
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")


def _clock(r: random.Random) -> str:
    return f"{r.randrange(8, 19):02d}:{r.randrange(60):02d}"


def _hex(r: random.Random, n: int) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def _fence(lang: str, body: str) -> str:
    return f"```{lang}\n{body}\n```"


# user register


def _irc_log(f: Fact, r: random.Random) -> str:
    a, b = (p.lower() for p in r.sample(PEOPLE, 2))
    h, m = r.randrange(8, 18), r.randrange(0, 50)
    chatter = r.choice(
        ("anyone else seeing the runner queue back up?", "rebasing on main, brb",
         "CI is green again", "lunch in 10?")
    )  # fmt: skip
    return (
        f"pasting from #{r.choice(SERVICES)}-dev this morning:\n"
        f"[{h:02d}:{m:02d}] <{a}> {chatter}\n"
        f"[{h:02d}:{m + 4:02d}] <{b}> fyi: {f.sentence}\n"
        f"[{h:02d}:{m + 5:02d}] <{a}> ack"
    )


def _pdf_extract(f: Fact, r: random.Random) -> str:
    head = f"Platform Handbook · v{r.randrange(2, 9)}"
    page = f"page {r.randrange(3, 40)} of {r.randrange(40, 90)}"
    return (
        "copied out of the handbook PDF:\n\n"
        f"{head}{page.rjust(64 - len(head))}\n"
        f"{f.sentence}\n"
        "INTERNAL · do not distribute"
    )


def _sheet_cell_note(f: Fact, r: random.Random) -> str:
    return (
        f'Sheet "{_cap(r.choice(SERVICES))} launch tracker", cell '
        f"{r.choice('BCDEFG')}{r.randrange(3, 60)}, note from {r.choice(PEOPLE)}:\n{f.sentence}"
    )


def _srt_captions(f: Fact, r: random.Random) -> str:
    n, mm, ss = r.randrange(40, 300), r.randrange(0, 60), r.randrange(0, 48)
    filler = r.choice(
        ("okay, one more thing before we wrap up", "sorry, my camera froze, where was I",
         "right, and for the agent doing the port")
    )  # fmt: skip
    return (
        "captions from the sync recording (auto-generated):\n\n"
        f"{n}\n00:{mm:02d}:{ss:02d},120 --> 00:{mm:02d}:{ss + 5:02d},480\n{filler}\n\n"
        f"{n + 1}\n00:{mm:02d}:{ss + 5:02d},480 --> 00:{mm:02d}:{ss + 11:02d},900\n{f.sentence}"
    )


def _vcard(f: Fact, r: random.Random) -> str:
    return (
        "BEGIN:VCARD\nVERSION:4.0\n"
        f"FN:{r.choice(PEOPLE)} {r.choice(SURNAMES)}\n"
        f"TITLE:{r.choice(('Staff Engineer', 'Engineering Manager', 'SRE'))}\n"
        f"NOTE:{f.sentence}\nEND:VCARD"
    )


def _org_mode(f: Fact, r: random.Random) -> str:
    return (
        f"* TODO {f.bare}  :{r.choice(SERVICES)}:\n"
        "  :PROPERTIES:\n"
        f"  :{f.upper}: {f.value}\n"
        f"  :CREATED:  [2026-0{r.randrange(1, 10)}-1{r.randrange(10)} {r.choice(DAYS)}]\n"
        "  :END:\n"
        f"  {f.sentence}"
    )


def _rst_admonition(f: Fact, r: random.Random) -> str:
    return (
        f"from docs/ops/{r.choice(SERVICES)}.rst, the part that matters here:\n\n"
        f".. important::\n\n   {f.sentence}"
    )


def _wizard_prompts(f: Fact, r: random.Random) -> str:
    service = r.choice(SERVICES)
    return (
        "ran the setup wizard, this is what I answered:\n\n"
        f"$ npx create-{service}-config\n"
        f"✔ Project name … {service}\n"
        f"✔ {f.bare} … {f.value}\n"
        f"✔ Add a CI workflow? … {r.choice(('yes', 'no'))}\n"
        f"Done in {r.randrange(2, 9)}.{r.randrange(10)}s. Note: {f.sentence}"
    )


def _pagerduty_note(f: Fact, r: random.Random) -> str:
    return (
        f"PagerDuty #{r.randrange(10_000, 99_999)} [{r.choice(SERVICES)}] "
        f"note by {r.choice(PEOPLE)} at {_clock(r)}:\n{f.sentence}"
    )


def _heredoc_paste(f: Fact, r: random.Random) -> str:
    return (
        "I put this in the repo notes, fyi:\n\n"
        f"cat >> docs/{r.choice(SERVICES)}-notes.md <<'EOF'\n- {f.sentence}\nEOF"
    )


def _ocr_screenshot(f: Fact, r: random.Random) -> str:
    return (
        f"[pasted image: Screenshot at {_clock(r)}.png]\n"
        "text in the image:\n"
        f"  {f.bare} | Settings > Workspace\n"
        f"  {f.sentence}\n"
        "  Save    Cancel"
    )


def _shell_history(f: Fact, r: random.Random) -> str:
    n = r.randrange(400, 2000)
    return (
        "$ history | tail -3\n"
        f" {n}  git fetch --prune\n"
        f' {n + 1}  export {f.upper}="{f.value}"  # {f.sentence}\n'
        f" {n + 2}  make check"
    )


def _machine_translation(f: Fact, r: random.Random) -> str:
    language = r.choice(("Portuguese", "German", "Japanese", "Polish", "Turkish"))
    return (
        f'{r.choice(PEOPLE)} wrote this in {language}, the translate button gives:\n"{f.sentence}"'
    )


# tool register


def _haproxy_cfg(f: Fact, r: random.Random) -> str:
    service = r.choice(SERVICES)
    return (
        f"$ cat /etc/haproxy/conf.d/{service}.cfg\n"
        f"backend be_{service}\n"
        "    balance roundrobin\n"
        f"    # {f.sentence}\n"
        f'    http-request set-header X-{f.pascal} "{f.value}"\n'
        f"    server app1 10.0.{r.randrange(1, 9)}.{r.randrange(2, 250)}:8080 check inter 2s"
    )


def _docker_inspect(f: Fact, r: random.Random) -> str:
    fmt = "'{{range $k, $v := .Config.Labels}}{{$k}}={{$v}}{{println}}{{end}}'"
    return (
        f"$ docker inspect -f {fmt} {r.choice(SERVICES)}-api\n"
        "maintainer=platform-team\n"
        f"ops.{f.key}={f.value}\n"
        f"ops.note={f.sentence}\n"
        f"org.opencontainers.image.revision={_hex(r, 12)}"
    )


def _strace(f: Fact, r: random.Random) -> str:
    one = f"{f.key}={f.value}\\n"
    two = f"# {f.sentence}\\n"
    return (
        f"$ strace -f -e trace=write ./bin/{r.choice(SERVICES)} --print-config 2>&1 | tail -3\n"
        f'write(1, "{one}", {len(one) - 1}) = {len(one) - 1}\n'
        f'write(1, "{two}", {len(two) - 1}) = {len(two) - 1}\n'
        "+++ exited with 0 +++"
    )


def _ldif(f: Fact, r: random.Random) -> str:
    dn = f"cn={f.key},ou=runbook,dc=corp,dc=example"
    return (
        f"$ ldapsearch -LLL -x -b ou=runbook,dc=corp,dc=example cn={f.key}\n"
        f"dn: {dn}\nobjectClass: applicationProcess\ncn: {f.key}\ndescription: {f.sentence}"
    )


def _dig_txt(f: Fact, r: random.Random) -> str:
    name = f"{f.dashed}.facts.corp.example"
    return (
        f"$ dig +noall +answer TXT {name}\n"
        f'{name}.\t{r.choice((60, 300, 3600))}\tIN\tTXT\t"{f.sentence}"'
    )


def _blame_porcelain(f: Fact, r: random.Random) -> str:
    n, who = r.randrange(8, 140), r.choice(PEOPLE)
    return (
        f"$ git blame --porcelain -L {n},{n} docs/ops.md\n"
        f"{_hex(r, 40)} {n} {n} 1\n"
        f"author {who}\nauthor-mail <{who.lower()}@corp.example>\n"
        f"summary docs: note {f.dashed}\nfilename docs/ops.md\n\t{f.sentence}"
    )


def _ssh_config(f: Fact, r: random.Random) -> str:
    service = r.choice(SERVICES)
    return (
        f"$ cat ~/.ssh/config.d/{service}\n"
        f"Host {service}-bastion\n"
        f"    HostName 10.0.{r.randrange(1, 9)}.{r.randrange(2, 250)}\n"
        "    User deploy\n"
        f"    # {f.sentence}\n"
        f'    SetEnv {f.upper}="{f.value}"'
    )


def _gitconfig_list(f: Fact, r: random.Random) -> str:
    return (
        "$ git config --show-origin --get-regexp '^ops\\.'\n"
        f"file:.git/config\tops.{f.key} {f.value}\n"
        f"file:.git/config\tops.note {f.sentence}"
    )


def _powershell_list(f: Fact, r: random.Random) -> str:
    service = _cap(r.choice(SERVICES))
    width = max(len(f.pascal), 4)
    return (
        f"PS C:\\src\\{service}> Get-ItemProperty HKLM:\\Software\\Corp\\{service} | "
        f"Format-List {f.pascal}, Note\n\n"
        f"{f.pascal.ljust(width)} : {f.value}\n"
        f"{'Note'.ljust(width)} : {f.sentence}"
    )


def _gdb_print(f: Fact, r: random.Random) -> str:
    return (
        f"(gdb) p cfg->{f.key}\n"
        f'${r.randrange(1, 6)} = "{f.value}"\n'
        f"(gdb) p cfg->{f.key}_doc\n"
        f'${r.randrange(6, 12)} = "{f.sentence}"'
    )


def _python_repl(f: Fact, r: random.Random) -> str:
    return (
        f">>> from {r.choice(SERVICES)}.settings import FACTS\n"
        f'>>> FACTS["{f.key}"]\n'
        f"'{f.value}'\n"
        f'>>> print(FACTS.doc("{f.key}"))\n'
        f"{f.sentence}"
    )


def _kconfig(f: Fact, r: random.Random) -> str:
    return (
        f"$ cat {r.choice(SERVICES)}/Kconfig.ops\n"
        f'config {f.upper}\n\tstring "{f.bare}"\n\tdefault "{f.value}"\n\thelp\n'
        f"\t  {f.sentence}"
    )


def _nagios_check(f: Fact, r: random.Random) -> str:
    return (
        f"$ /usr/lib/nagios/plugins/check_{r.choice(SERVICES)}_facts -k {f.key}\n"
        f"OK - {f.sentence} | age={r.randrange(2, 90)}s;;;0"
    )


def _man_page(f: Fact, r: random.Random) -> str:
    service = r.choice(SERVICES)
    name = f"{service.upper()}.CONF(5)"
    return (
        f"$ man 5 {service}.conf\n"
        f"{name}{'File Formats Manual'.center(40)}{name}\n\n"
        f"NOTES\n       {f.sentence}"
    )


def _starlark(f: Fact, r: random.Random) -> str:
    return (
        f"$ cat {r.choice(SERVICES)}/BUILD.bazel | tail -5\n"
        f'ops_fact(\n    name = "{f.key}",\n    value = "{f.value}",\n'
        f'    doc = "{f.sentence}",\n)'
    )


def _cmake_cache(f: Fact, r: random.Random) -> str:
    return f"$ cmake -LH build | grep -B1 {f.upper}\n// {f.sentence}\n{f.upper}:STRING={f.value}"


# assistant register


def _test_fixture(f: Fact, r: random.Random) -> str:
    code = f'@pytest.fixture\ndef {f.key}() -> str:\n    # {f.sentence}\n    return "{f.value}"'
    return (
        f"Pinning this in a fixture so the tests cannot drift from it:\n\n{_fence('python', code)}"
    )


def _sql_query(f: Fact, r: random.Random) -> str:
    code = (
        f"-- {f.sentence}\n"
        f"SELECT name, value FROM settings WHERE name = '{f.key}' AND value <> '{f.value}';"
    )
    return f"I'll check the settings table against what you said:\n\n{_fence('sql', code)}"


def _ts_jsdoc(f: Fact, r: random.Random) -> str:
    code = (
        "export interface OpsFacts {\n"
        f"  /** {f.sentence} */\n"
        f'  readonly {f.camel}: "{f.value}";\n'
        "}"
    )
    return f"Typing it where the client reads it:\n\n{_fence('ts', code)}"


def _typing_literal(f: Fact, r: random.Random) -> str:
    code = f'{f.pascal}: TypeAlias = Literal["{f.value}"]  # {f.sentence}'
    return f"Encoding it in the types so a typo fails the type check:\n\n{_fence('python', code)}"


def _footnote(f: Fact, r: random.Random) -> str:
    lead = r.choice(
        ("I'll keep the patch small and leave the config loader alone.",
         "The parser fix does not need the settings module at all.",
         "Next I'll run the reproduction script once more.")
    )  # fmt: skip
    return f"{lead}[^1]\n\n[^1]: {f.sentence}"


def _argparse_default(f: Fact, r: random.Random) -> str:
    code = (
        f'parser.add_argument(\n    "--{f.dashed}",\n    default="{f.value}",\n'
        f'    help="{f.sentence}",\n)'
    )
    return f"The CLI gets it as its default:\n\n{_fence('python', code)}"


def _pydantic_field(f: Fact, r: random.Random) -> str:
    code = (
        "class OpsSettings(BaseSettings):\n"
        f'    {f.key}: str = Field("{f.value}", description="{f.sentence}")'
    )
    return _fence("python", code)


def _html_details(f: Fact, r: random.Random) -> str:
    return f"<details><summary>context I'm carrying forward</summary>\n\n{f.sentence}\n\n</details>"


def _warn_call(f: Fact, r: random.Random) -> str:
    code = f'warnings.warn(\n    "{f.sentence}",\n    UserWarning,\n    stacklevel=2,\n)'
    return f"Adding a guard so nobody trips over this:\n\n{_fence('python', code)}"


def _gettext_po(f: Fact, r: random.Random) -> str:
    code = f'#. {f.sentence}\nmsgctxt "ops"\nmsgid "{f.key}"\nmsgstr "{f.value}"'
    return f"Adding it to the message catalog with a translator note:\n\n{_fence('po', code)}"


def _blockquote_cite(f: Fact, r: random.Random) -> str:
    return (
        f"> {f.sentence}\n\n"
        "Quoting that from your brief so it stays in view while I work on the "
        f"{r.choice(SERVICES)} module."
    )


def _box_drawing(f: Fact, r: random.Random) -> str:
    width = len(f.sentence) + 2
    title = " keep in mind "
    return f"┌{title}{'─' * (width - len(title))}┐\n│ {f.sentence} │\n└{'─' * width}┘"


def _graphviz_dot(f: Fact, r: random.Random) -> str:
    code = (
        "digraph facts {\n"
        f'  "{f.key}" [shape=note, label="{f.sentence}"];\n'
        f'  "{f.key}" -> "{f.value}";\n'
        "}"
    )
    return f"Sketching the dependencies before I touch them:\n\n{_fence('dot', code)}"


GENERIC_RENDER: dict[str, tuple[str, Render]] = {
    "irc-log": ("user", _irc_log),
    "pdf-extract": ("user", _pdf_extract),
    "sheet-cell-note": ("user", _sheet_cell_note),
    "srt-captions": ("user", _srt_captions),
    "vcard": ("user", _vcard),
    "org-mode": ("user", _org_mode),
    "rst-admonition": ("user", _rst_admonition),
    "wizard-prompts": ("user", _wizard_prompts),
    "pagerduty-note": ("user", _pagerduty_note),
    "heredoc-paste": ("user", _heredoc_paste),
    "ocr-screenshot": ("user", _ocr_screenshot),
    "shell-history": ("user", _shell_history),
    "machine-translation": ("user", _machine_translation),
    "haproxy-cfg": ("tool", _haproxy_cfg),
    "docker-inspect": ("tool", _docker_inspect),
    "strace": ("tool", _strace),
    "ldif": ("tool", _ldif),
    "dig-txt": ("tool", _dig_txt),
    "blame-porcelain": ("tool", _blame_porcelain),
    "ssh-config": ("tool", _ssh_config),
    "gitconfig-list": ("tool", _gitconfig_list),
    "powershell-list": ("tool", _powershell_list),
    "gdb-print": ("tool", _gdb_print),
    "python-repl": ("tool", _python_repl),
    "kconfig": ("tool", _kconfig),
    "nagios-check": ("tool", _nagios_check),
    "man-page": ("tool", _man_page),
    "starlark": ("tool", _starlark),
    "cmake-cache": ("tool", _cmake_cache),
    "test-fixture": ("assistant", _test_fixture),
    "sql-query": ("assistant", _sql_query),
    "ts-jsdoc": ("assistant", _ts_jsdoc),
    "typing-literal": ("assistant", _typing_literal),
    "footnote": ("assistant", _footnote),
    "argparse-default": ("assistant", _argparse_default),
    "pydantic-field": ("assistant", _pydantic_field),
    "html-details": ("assistant", _html_details),
    "warn-call": ("assistant", _warn_call),
    "gettext-po": ("assistant", _gettext_po),
    "blockquote-cite": ("assistant", _blockquote_cite),
    "box-drawing": ("assistant", _box_drawing),
    "graphviz-dot": ("assistant", _graphviz_dot),
}
GENERIC = tuple(GENERIC_RENDER)


# -- corrections ----------------------------------------------------------------------------------

Rewrite = Callable[[Fact, str, random.Random], str]


@dataclass(frozen=True, slots=True)
class Phrasing:
    """One way of writing a correction: its surface (``style``, the same as its name), register,
    whether it names the value it replaces, and how it writes (fact, replaced value, rng)."""

    name: str
    register: str
    names_old: bool
    write: Rewrite

    @property
    def style(self) -> str:
        return self.name


ASKS = (
    "can you rerun the flaky integration suite once this lands?",
    "when you get a sec, tidy the imports in the files you touched.",
    "could you also add a regression test for the empty-input case?",
    "please keep the diff small, reviewers are busy this week.",
)


def _ps_aside(f: Fact, old: str, r: random.Random) -> str:
    return f"{r.choice(ASKS)}\n\nP.S. {f.subject}: go with {f.value}."


def _gdocs_thread(f: Fact, old: str, r: random.Random) -> str:
    a, b = r.sample(PEOPLE, 2)
    return (
        f'Resolved thread in "{_cap(r.choice(SERVICES))} cutover plan" (Google Docs):\n'
        f'{a}: suggested "{old}" -> "{f.value}"\n'
        f"{b}: accepted. {_cap(f.subject)} is {f.value}."
    )


def _standup_bot(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"Standup bot · #{r.choice(SERVICES)}-team · {r.choice(PEOPLE)}\n"
        f"• Yesterday: {r.choice(('finished the retry wrapper', 'paired on the importer'))}\n"
        f"• Today: {r.choice(('review queue', 'the flaky CI job', 'load test prep'))}\n"
        f"• Blockers: none. Heads-up, agent: {f.sentence}"
    )


def _typo_admission(f: Fact, old: str, r: random.Random) -> str:
    return f"ugh, {old} was a typo on my end. {_cap(f.subject)} is {f.value}."


def _strikethrough_note(f: Fact, old: str, r: random.Random) -> str:
    return (
        "from my notes app, today's page:\n"
        f"- ask {r.choice(PEOPLE)} about the flaky runner\n"
        f"- {f.bare}: ~~{old}~~ {f.value}\n"
        f"- {r.choice(('book the load test', 'read the vendor quote', 'lunch 12:30'))}"
    )


def _directory_lookup(f: Fact, old: str, r: random.Random) -> str:
    return (
        'From the staff directory (search: "schema"):\n'
        f"  {f.bare}: {f.value}\n"
        f"  Location: {r.choice(('Lisbon', 'Toronto', 'Osaka', 'Nairobi'))} · "
        f"Slack: #{r.choice(SERVICES)}-eng"
    )


def _form_response(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"Form response #{r.randrange(100, 999)} · capacity planning · "
        f"submitted by {r.choice(PEOPLE)}\n"
        f"Q3. What is {f.subject}?\nA3. {f.value}"
    )


def _pip_reinstall(f: Fact, old: str, r: random.Random) -> str:
    pkg = f.template.label
    return (
        f'$ pip install "{pkg}=={f.value}"\n'
        f"Collecting {pkg}=={f.value}\n"
        f"  Downloading {pkg.replace('-', '_')}-{f.value}-py3-none-any.whl "
        f"({r.randrange(40, 400)} kB)\n"
        f"Installing collected packages: {pkg}\n"
        f"  Attempting uninstall: {pkg}\n"
        f"    Found existing installation: {pkg} {old}\n"
        f"    Uninstalling {pkg}-{old}:\n"
        f"      Successfully uninstalled {pkg}-{old}\n"
        f"Successfully installed {pkg}-{f.value}"
    )


def _dig_cname(f: Fact, old: str, r: random.Random) -> str:
    name = f.template.label
    return (
        f"$ dig +noall +answer {name} CNAME\n"
        f"{name}.\t{r.choice((30, 60, 300))}\tIN\tCNAME\t{f.value}."
    )


def _codeowners_head(f: Fact, old: str, r: random.Random) -> str:
    path = f.template.label
    return (
        f"$ git show origin/main:.github/CODEOWNERS | grep -n '{path}'\n"
        f"{r.randrange(10, 60)}:{path}    {f.value}"
    )


def _history_rst(f: Fact, old: str, r: random.Random) -> str:
    head = f"{r.randrange(2, 6)}.{r.randrange(1, 20)}.0 (unreleased)"
    return (
        "$ head -5 HISTORY.rst\n"
        f"{head}\n{'-' * len(head)}\n"
        f"- {f.bare}: bumped from {old} to {f.value}.\n"
        "- Drop the v1 export shim."
    )


def _motd_banner(f: Fact, old: str, r: random.Random) -> str:
    line = f"#  {f.sentence}"
    rule = "#" * (len(line) + 3)
    return (
        f"Last login: {r.choice(DAYS)} {_clock(r)} "
        f"from 10.0.{r.randrange(1, 9)}.{r.randrange(2, 250)}\n"
        f"{rule}\n{line}\n#  questions: #{r.choice(SERVICES)}-ops\n{rule}"
    )


def _git_notes(f: Fact, old: str, r: random.Random) -> str:
    a, b, c = r.sample(PEOPLE, 3)
    return (
        f"$ git notes show HEAD\nArch sync, {r.choice(DAYS)}: {f.sentence} ({a}, {b}, {c} agreed.)"
    )


def _quota_cli(f: Fact, old: str, r: random.Random) -> str:
    return (
        f'$ quotactl set {f.key}="{f.value}" --scope reporting\n'
        f"{f.key}: {old} → {f.value}  ✓ applied"
    )


def _cdk_resource_tree(f: Fact, old: str, r: random.Random) -> str:
    return (
        "$ cdk diff LedgerStack\nStack LedgerStack\nResources\n"
        f"[~] AWS::Lambda::Function Ingest Ingest{_hex(r, 8).upper()}\n"
        " └─ [~] Environment\n"
        f"     └─ [~] .Variables.{f.upper}:\n"
        f"         ├─ [-] {old}\n"
        f"         └─ [+] {f.value}"
    )


def _reconcile(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"I see two values of {f.subject} in this thread: {old} in the task description, "
        f"{f.value} in your message this morning. Going with {f.value}."
    )


def _subagent_brief(f: Fact, old: str, r: random.Random) -> str:
    return (
        "Test-runner subagent brief:\n"
        "- work on a throwaway copy of the repo; do not push\n"
        f"- {f.sentence}\n"
        "- report failing tests only, with the first 20 lines of each traceback"
    )


def _jq_apply(f: Fact, old: str, r: random.Random) -> str:
    code = (
        f"jq '.{f.key} = \"{f.value}\"' config/settings.json > /tmp/settings.json "
        "&& mv /tmp/settings.json config/settings.json"
    )
    return f"Pointing the config at the receiver you named:\n\n{_fence('bash', code)}"


def _echo_back(f: Fact, old: str, r: random.Random) -> str:
    return f"Noted: {f.subject} is {f.value}. I'll plan the remaining steps around that."


def _confirm_question(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"Before I touch the database: {f.subject} is {f.value}, not {old}, right? "
        "I'll go ahead on that basis unless you say otherwise."
    )


PHRASINGS: dict[str, Phrasing] = {
    p.name: p
    for p in (
        Phrasing("ps-aside", "user", False, _ps_aside),
        Phrasing("gdocs-thread", "user", True, _gdocs_thread),
        Phrasing("standup-bot", "user", False, _standup_bot),
        Phrasing("typo-admission", "user", True, _typo_admission),
        Phrasing("strikethrough-note", "user", True, _strikethrough_note),
        Phrasing("directory-lookup", "user", False, _directory_lookup),
        Phrasing("form-response", "user", False, _form_response),
        Phrasing("pip-reinstall", "tool", True, _pip_reinstall),
        Phrasing("dig-cname", "tool", False, _dig_cname),
        Phrasing("codeowners-head", "tool", False, _codeowners_head),
        Phrasing("history-rst", "tool", True, _history_rst),
        Phrasing("motd-banner", "tool", False, _motd_banner),
        Phrasing("git-notes", "tool", False, _git_notes),
        Phrasing("quota-cli", "tool", True, _quota_cli),
        Phrasing("cdk-resource-tree", "tool", True, _cdk_resource_tree),
        Phrasing("reconcile", "assistant", True, _reconcile),
        Phrasing("subagent-brief", "assistant", False, _subagent_brief),
        Phrasing("jq-apply", "assistant", False, _jq_apply),
        Phrasing("echo-back", "assistant", False, _echo_back),
        Phrasing("confirm-question", "assistant", True, _confirm_question),
    )
}
STYLES: dict[str, str] = {
    **{name: register for name, (register, _) in GENERIC_RENDER.items()},
    **{p.style: p.register for p in PHRASINGS.values()},
}


# -- plans ----------------------------------------------------------------------------------------

Slot = tuple[Template, tuple[str, ...]]  # a template and the generic styles of its canaries


def _deck(r: random.Random) -> list[str]:
    """The generic styles shuffled, the registers alternating (the one with the largest share
    left goes next)."""
    groups = {g: r.sample(names, len(names)) for g, names in _BY_REGISTER.items()}
    total = {g: len(names) for g, names in groups.items()}
    out: list[str] = []
    while any(groups.values()):
        register = max(REGISTERS, key=lambda g: len(groups[g]) / total[g])
        out.append(groups[register].pop())
    return out


_BY_REGISTER = {g: [s for s in GENERIC if STYLES[s] == g] for g in REGISTERS}


@functools.cache
def _plans(seed: int, count: int, horizon: int) -> tuple[tuple[Slot, ...], ...]:
    """The templates (with their generic styles) of sessions ``0 .. horizon - 1``: dealt in order
    from a queue of shuffled decks of the templates; a session takes the first template that
    fits in what is left of it and is not in it yet (any that fits once every template is)."""
    r = random.Random(f"heldout-j:plan:{seed}:{count}")
    queue: list[Template] = []
    styles: list[str] = []
    sessions: list[tuple[Slot, ...]] = []
    for _ in range(horizon):
        room, names, slots = count, set[str](), list[Slot]()
        while room > 0:
            while len(queue) < 2 * len(TEMPLATES):
                queue.extend(r.sample(TEMPLATES, len(TEMPLATES)))
            fits = [i for i, t in enumerate(queue) if t.size <= room]
            pick = next((i for i in fits if queue[i].name not in names), fits[0])
            template = queue.pop(pick)
            generic = 2 if template.shape == "coexist" else 1
            while len(styles) < generic:
                styles.extend(_deck(r))
            slots.append((template, tuple(styles[:generic])))
            del styles[:generic]
            names.add(template.name)
            room -= template.size
        sessions.append(tuple(slots))
    return tuple(sessions)


# -- sessions -------------------------------------------------------------------------------------


def _draw(
    template: Template, values: random.Random, variant: int, taken: set[str]
) -> tuple[str, ...]:
    """The value(s) of one planting of ``template``: two of one form for a pair, neither in the
    other, the second of a correction later or higher where such values move that way."""
    make = FORMS[template.form]
    while True:
        first = make(values, variant)
        if template.shape == "single":
            out: tuple[str, ...] = (first,)
        else:
            later = LATER.get(template.form) if template.shape == "correction" else None
            second = later(first, values, variant) if later else make(values, variant)
            out = (first, second)
            if first in second or second in first or shape(first) != shape(second):
                continue
        if not any(v in t or t in v for v in out for t in taken):
            taken.update(out)
            return out


def _position(template: Template, layout: random.Random) -> tuple[float, ...]:
    if template.shape == "single":
        return (layout.uniform(0.03, 0.95),)
    if template.shape == "correction":
        first = layout.uniform(0.04, 0.56)
        return first, first + layout.uniform(0.12, 0.38)
    first = layout.uniform(0.03, 0.80)
    return first, first + layout.uniform(0.0, 0.15)


def _fact(template: Template, value: str, side: str | None, layout: random.Random) -> Fact:
    subject = template.subject.format(s=side)
    key = template.key.format(s=(side or "").lower().replace(" ", "_"))
    sentence = layout.choice(template.says).format(v=value, s=side)
    return Fact(template, subject, key, value, sentence)


def _session(
    slots: tuple[Slot, ...], values: random.Random, layout: random.Random, variant: int
) -> list[dict[str, Any]]:
    taken: set[str] = set()
    used_at: set[float] = set()
    items: list[tuple[float, int, dict[str, Any]]] = []  # at, link group, canary

    def at_of(x: float) -> float:
        x = round(min(max(x, 0.01), 0.97), 4)
        while x in used_at:
            x = round(x + 0.0001, 4)
        used_at.add(x)
        return x

    for group, (template, styles) in enumerate(slots):
        drawn = _draw(template, values, variant, taken)
        ats = [at_of(a) for a in _position(template, layout)]
        if template.shape == "single":
            fact = _fact(template, drawn[0], None, layout)
            text = GENERIC_RENDER[styles[0]][1](fact, layout)
            items.append((ats[0], group, _canary(template, fact, text, styles[0])))
        elif template.shape == "correction":
            old = _fact(template, drawn[0], None, layout)
            new = _fact(template, drawn[1], None, layout)
            phrasing = PHRASINGS[template.phrasing or ""]
            first = _canary(template, old, GENERIC_RENDER[styles[0]][1](old, layout), styles[0])
            second = _canary(template, new, phrasing.write(new, old.value, layout), phrasing.style)
            second["kind"] = "correction"
            second["phrasing"] = phrasing.name
            items += [(ats[0], group, first), (ats[1], group, second)]
        else:
            assert template.sides is not None
            sides = layout.sample(template.sides, 2)
            for value, side, style, at in zip(drawn, sides, styles, ats, strict=True):
                fact = _fact(template, value, side, layout)
                text = GENERIC_RENDER[style][1](fact, layout)
                items.append((at, group, _canary(template, fact, text, style)))
    items.sort(key=lambda item: item[0])
    by_group: dict[int, list[dict[str, Any]]] = {}
    for i, (at, group, canary) in enumerate(items):
        canary["id"] = f"j{i:02d}"
        canary["at"] = at
        by_group.setdefault(group, []).append(canary)
    for template, members in zip(
        (t for t, _ in slots), (by_group[g] for g in range(len(slots))), strict=True
    ):
        if template.shape == "correction":
            members[1]["supersedes"] = members[0]["id"]
        elif template.shape == "coexist":
            members[0]["coexists"], members[1]["coexists"] = members[1]["id"], members[0]["id"]
    order_keys = ("id", "kind", "at", "text", "keep", "style", "template", "subject")
    return [
        {k: c[k] for k in order_keys} | {k: v for k, v in c.items() if k not in order_keys}
        for _, _, c in items
    ]


def _canary(template: Template, fact: Fact, text: str, style: str) -> dict[str, Any]:
    return {
        "kind": template.kind,
        "text": text,
        "keep": [fact.value],
        "style": style,
        "template": template.name,
        "subject": fact.subject,
    }


def _sound(canaries: list[dict[str, Any]]) -> bool:
    """Every canary holds its value; no value is in another canary's text (but a correction may
    name the value it replaces)."""
    for a in canaries:
        keep = a["keep"][0]
        if keep not in a["text"]:
            return False
        for b in canaries:
            if a is not b and b.get("supersedes") != a["id"] and keep in b["text"]:
                return False
    return True


def generate(seed: int, count: int = 24, variant: int = 0) -> dict[str, Any]:
    """Session ``variant``'s ``count`` canaries of seed ``seed``, in the shape
    ``bench/retention.py`` reads (``{"canaries": [...]}`` with the plan's name and key)."""
    if count < 1 or variant < 0:
        raise ValueError(f"count must be >= 1 and variant >= 0, not {count} and {variant}")
    horizon = (variant // 32 + 1) * 32
    slots = _plans(seed, count, horizon)[variant]
    values = random.Random(f"heldout-j:values:{seed}:{count}:{variant}")
    layout = random.Random(f"heldout-j:layout:{seed}:{count}:{variant}")
    for _ in range(1000):
        canaries = _session(slots, values, layout, variant)
        if _sound(canaries):
            break
    else:  # pragma: no cover - a value colliding with noise a thousand times over
        raise RuntimeError(f"no sound draw for seed {seed}, count {count}, variant {variant}")
    return {"name": NAME, "seed": seed, "count": count, "variant": variant, "canaries": canaries}


if __name__ == "__main__":  # pragma: no cover - a look at one session
    import json
    import sys

    args = [int(a) for a in sys.argv[1:4]]
    print(json.dumps(generate(*args), indent=2, ensure_ascii=False))
