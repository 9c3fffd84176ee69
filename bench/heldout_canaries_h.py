"""Held-out canary generator H (``heldout-h``): facts for ``bench/retention.py`` written blind.

    .venv/bin/python bench/retention.py --generator bench/heldout_canaries_h.py --seed N

Lab note
========

**Why.** The retention benchmark plants facts ("canaries") into recorded agent sessions,
compacts five times and checks which facts survive and whether a corrected value is still shown
as current. A memory tuned on one generator's wording or surfaces looks better on that generator
than it is. This eighth held-out generator was written by someone who has not seen the
summarizer nor any other generator, so its figures measure memory on facts nobody tuned for.

**What I read.** ``bench/retention.py`` (the canary contract: ``Canary``, ``canaries_from``,
``CanarySource``, ``_generator``, ``insertion_step``, ``insert_canaries``,
``add_to_observation``, ``add_to_assistant``, ``wire_text``, ``strip_replaced``,
``presents_as_current``, ``KeepIndex``, ``score_context``, how ``aggregate`` groups by kind,
style, template and correcting template, and the options of ``main``; the default count is 24),
``tests/bench/support.py``, ``tests/bench/test_retention_generated.py``, ``tests/conftest.py``,
``tests/needs.py``, ``pyproject.toml``, the ``Makefile`` (mypy checks ``abridged`` only, not
``bench``), the shared data's README, ``tests/bench/test_heldout_canaries_g.py`` as the shape of a
test file only, and the recorded sessions
(``../shared/data/swebench-gemini3/trajectories.jsonl``) only by substring search, to redraw a
value that occurs there.

**What I did not read.** Nothing under ``src/abridged/engine/summarize/`` nor the core's facts,
ledger or references code; no other canary generator (``bench/canary_generator.py``,
``bench/heldout_canaries*.py``) and none of their tests but G's, read for its shape; no canary
JSON; not ``bench/RESULTS.md``; no git log message; no issue note. I ran ``bench/retention.py``
only through the one-session smoke test in ``tests/bench/test_heldout_canaries_h.py``, which
asserts and prints no figure, and I looked at no benchmark figure.

Design
------

**Kinds** (``KINDS``): the fact kinds ``constraint``, ``prohibition``, ``preference``,
``identifier``, ``decision``, ``quantity`` (a number with its unit), ``path``, ``version``,
``owner`` (a person or an address), ``deadline``, ``endpoint``, ``limit``; and ``correction``,
the kind of the later canary of a correction pair (its first canary keeps its fact kind), so
that survival of corrected values is reported apart.

**Templates** (``TEMPLATES``, 78): a template is one fact about one subject: a config key, a
noun phrase naming it, two or more sentences saying it, and a value form. Three shapes:

- ``single`` (43): one canary; every fact kind has three or four.
- ``correction`` (27): a fact, then 0.12 to 0.38 of the session later the same subject with
  another value of the same form; the later canary's ``supersedes`` names the first. Each
  correction template has its own way of correcting (``PHRASINGS``), so the benchmark's stale
  share by correcting template is a stale share by phrasing.
- ``coexist`` (8): two facts of one template about two different subjects (two services, two
  tenants, ...) that both hold; each ``coexists`` names the other.

A third of the templates (27 of 78) are corrections; by canary count they are nearer half,
since each takes two slots.

**Styles** (``STYLES``, 57, each in a register: what a user pastes, what a tool prints, what
the assistant writes; 16 + 16 + 16 render any fact, 9 more are surfaces only corrections use).
Chosen away from the previous blind set's surfaces:

- user pastes: TOML, INI, ``.env``, Makefile, Dockerfile, GitHub Actions workflow,
  ``package.json``, Java ``.properties``, an ``appSettings`` XML fragment, a spreadsheet pasted as
  TSV, an email thread with a quoted reply, meeting minutes, a voice transcript, an on-call
  handoff, a PR review comment, release notes; and for corrections a runbook page and a chat
  poll result;
- tool output: an HTTP request/response dump with headers, ``curl -v``, JSON-RPC, a GraphQL
  response, protobuf text format, ``kubectl get events``, a CloudWatch log line, a Datadog JSON
  log, ``crontab -l``, a ``pytest -s`` run, a shell session with prompts, a SQL migration file,
  ``git show`` with trailers, an OpenAPI excerpt, a CSV export, a ConfigMap as YAML; and for
  corrections ``git diff --word-diff`` and a field-history audit log;
- assistant prose: numbered reasoning, a diff summary, a table of options with the chosen one,
  a Stack-Overflow-style answer, a confirmation of understanding, an assumptions list, a drafted
  commit message, a FAQ entry, a status report, an explanation of a failure, a glossary, a quote
  of the user, a drafted email, a reply to a review comment, a risk register, a reply to a
  question; and for corrections a worked calculation, a source check, an inventory table, an
  admission of a misreading and a side-by-side config diff.

Styles are dealt in turn user, tool, assistant (each register's styles shuffled per round), so
registers are balanced in every session, and at the default count every style comes up in any
16 sessions.

**Corrections** (``PHRASINGS``, 27 ways, no fixed marker word; 13 name the old value, 14 do
not): a config file shown again whole with one field different; a CSV export re-exported; an
email reply "let's go with Y"; a PR review with requested changes and a suggestion block; an
on-call handoff giving the value as of the shift; minutes recording a decision; release notes
"Breaking: ... is Y from this release on"; an HTTP PATCH with its 200 response; ``git show`` of
a commit with trailers; ``kubectl get configmap -o yaml``; the assistant redoing a
calculation; the assistant going by the user's last message; the assistant checking a signed
source; the assistant re-listing an inventory table; and, naming the old value: release notes
"Bumped X from A to B"; a strikethrough ``~~A~~ Y``; a poll result; a voice transcript where the
speaker catches themselves; ``sed -i 's|A|B|'`` then the line printed; ``git diff
--word-diff``; a field-history audit log; a protobuf response with ``previous_value``; a
migration whose down step restores the old default; the assistant admitting it misread; the
assistant re-checking a vault listing; the assistant's table of two candidates with one picked;
the assistant's side-by-side config diff. Of the announcing words (update, change, instead,
now, correction, actually, new, moved, replace, no longer, wrong, revert, scratch, ignore, ...)
only "changes" occurs, in one phrasing (a PR review's "requested changes"), and no invented
value starts with one.

**Values** are drawn per (seed, variant, slot, template, attempt) with
``random.Random(f"heldout-h/{seed}/{variant}/{slot}/{template}/{attempt}")`` from invented
syllable words (none starting with a marker word): zones, CIDRs, hosts, host:port pairs, ports,
emails, invented names, paths, versions, image tags, branches, channels, tickets, secret NAMES
(never a secret value), billing ids, buckets, feature flags, URLs on invented domains, sizes in
MiB/GiB, amounts in EUR, latencies in ms, rates in req/s, attempts, row counts, worker counts,
percentages, durations, cron expressions, maintenance windows, dates and date-times in 2027 to
2029. The filler around a fact (file names, first names, timestamps, hashes) is drawn from
other shapes (dates in 2026, plain first names) so it cannot pass for a value. A slot is redrawn
while one of its values occurs in another canary's text, another canary's value occurs in its
text, the two values of its pair are equal or contain one another, a correction names or does
not name the old value against its phrasing, the two values of a pair differ in shape (a path
``/srv/a/b-12`` against ``/var/lib/c/d``), or a value occurs in the recorded sessions (when
the file is there).

**Plan.** Per seed, an endless stream of the templates, each round shuffled, is dealt over the
sessions in variant order: session ``v`` takes the stream from where session ``v - 1`` stopped,
putting aside (for the next session first) a template it already has or a pair that does not
fit the slots left. With 24 canaries (retention.py's default) a round of all templates needs
113 slots, so every template is planted in a run of 16 sessions (the first 16 also at 8
canaries; at 24, any 16 consecutive ones hold three whole rounds). Every output is deterministic
per (seed, count, variant). Positions: singles and coexisting facts at
``at`` in [0.03, 0.94]; a correction's first fact in [0.04, 0.55], its correction 0.12 to 0.38
later.

**Shape.** ``generate(seed, count, variant)`` returns ``{"name", "seed", "variant", "count",
"canaries"}``; each canary has ``id`` (``hNN`` for slot NN, ``hNNa`` / ``hNNb`` for a pair),
``kind``, ``at``, ``text``, ``keep`` (its one value), ``style``, ``template`` (a correction
carries its template's name, and ``phrasing`` as well), and ``supersedes`` or ``coexists`` for
a pair.

**Evaluation seeds**, drawn with ``random.SystemRandom().randrange(10**6, 10**7)`` before
anything was run, and not run by me: **4758392, 5652842, 5787220**.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAME = "heldout-h"
EVALUATION_SEEDS = (4758392, 5652842, 5787220)
ROOT = Path(__file__).resolve().parent.parent

FACT_KINDS = (
    "constraint",
    "prohibition",
    "preference",
    "identifier",
    "decision",
    "quantity",
    "path",
    "version",
    "owner",
    "deadline",
    "endpoint",
    "limit",
)
KINDS = (*FACT_KINDS, "correction")
REGISTERS = ("user", "tool", "assistant")
# words that announce a correction: no invented word starts with one (the phrasings avoid them)
MARKERS = (
    "correction", "corrected", "instead", "no longer", "update", "actually", "change", "now",
    "moved", "new", "wrong", "revert", "scratch", "replace", "resched", "reassign", "ignore",
)  # fmt: skip

# -- values ---------------------------------------------------------------------------------------

_ONSETS = (
    "b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
    "br", "dr", "kr", "st", "tr", "sk", "pl", "gl", "th", "sh", "fr", "gr",
)  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou")
_CODAS = ("", "", "", "n", "r", "l", "s", "k", "x", "m")


def _word(r: random.Random, low: int = 2, high: int = 3) -> str:
    """An invented word of ``low`` to ``high`` syllables, not starting with a marker word."""
    while True:
        syllables = r.randint(low, high)
        w = "".join(
            r.choice(_ONSETS) + r.choice(_VOWELS) + r.choice(_CODAS) for _ in range(syllables)
        )
        if 5 <= len(w) <= 11 and not w.startswith(MARKERS):
            return w


def _upper_word(r: random.Random) -> str:
    return _word(r, 2, 2).upper()


def _hex(r: random.Random, n: int) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def _version(r: random.Random) -> str:
    return f"{r.randint(2, 9)}.{r.randint(10, 60)}.{r.randint(100, 999)}"


def _host(r: random.Random) -> str:
    return f"{_word(r)}-{r.randint(10, 99)}.{_word(r)}.{r.choice(('internal', 'lan', 'corp'))}"


def _date(r: random.Random) -> str:
    return f"{r.randint(2027, 2029)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"


def _person(r: random.Random) -> str:
    return f"{_word(r, 2, 2).capitalize()} {_word(r, 2, 3).capitalize()}"


def _dir(r: random.Random) -> str:
    w = _word
    return r.choice(
        (
            f"/srv/{w(r)}/{w(r)}-{r.randint(10, 99)}",
            f"/var/lib/{w(r)}/{w(r)}",
            f"/opt/{w(r)}/{w(r)}.d",
            f"/data/{w(r)}/{w(r)}/{w(r)}",
        )
    )


def _file(r: random.Random) -> str:
    w = _word
    return r.choice(
        (
            f"/var/log/{w(r)}/{w(r)}.log",
            f"/srv/{w(r)}/{w(r)}-{r.randint(10, 99)}/{w(r)}.jsonl",
            f"/opt/{w(r)}/audit/{w(r)}.ndjson",
        )
    )


def _window(r: random.Random) -> str:
    day = r.choice(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"))
    h = r.randint(0, 19)
    h2 = h + r.randint(1, 4)
    return f"{day} {h:02d}:{r.randrange(0, 60, 10):02d}-{h2:02d}:{r.randrange(0, 60, 10):02d} UTC"


def _ticket(r: random.Random) -> str:
    letters = "BCDFGHJKLMNPRSTVXZ"
    prefix = "".join(r.choice(letters) for _ in range(r.randint(3, 4)))
    return f"{prefix}-{r.randint(1000, 99999)}"


def _secret(r: random.Random) -> str:
    suffix = r.choice(("TOKEN", "API_KEY", "SIGNING_KEY", "PASSWORD", "DSN"))
    return f"{_upper_word(r)}_{_upper_word(r)}_{suffix}"


def _email(r: random.Random) -> str:
    return f"{_word(r, 2, 2)}.{_word(r)}@{_word(r)}.{r.choice(('io', 'dev', 'net', 'co'))}"


FORMS: dict[str, Callable[[random.Random], str]] = {
    "zone": lambda r: (
        f"{r.choice(('eu', 'us', 'ap', 'sa', 'me'))}-{_word(r)}-{r.randint(1, 9)}{r.choice('abc')}"
    ),
    "cidr": lambda r: (
        f"{r.choice(('10', '10', '172'))}.{r.randint(16, 250)}.{r.randrange(0, 256, 16)}.0"
        f"/{r.randint(20, 26)}"
    ),
    "tagprefix": lambda r: f"{_word(r)}-rel",
    "kmsalias": lambda r: f"alias/{_word(r)}-{_word(r)}-backup",
    "host": _host,
    "hostport": lambda r: f"{_host(r)}:{r.randint(20000, 64999)}",
    "port": lambda r: str(r.randint(20000, 64999)),
    "dir": _dir,
    "file": _file,
    "pem": lambda r: f"/etc/{_word(r)}/tls/{_word(r)}-bundle.pem",
    "flag": lambda r: r.choice(
        (
            f"ff_{_word(r)}_{_word(r)}",
            f"{_word(r)}-{_word(r)}-gate",
            f"enable_{_word(r)}_{_word(r)}",
        )
    ),
    "window": _window,
    "imagetag": lambda r: f"registry.{_word(r)}.io/{_word(r)}/{_word(r)}:{_version(r)}",
    "branch": lambda r: f"release/{_word(r)}-{r.randint(10, 99)}",
    "channel": lambda r: f"#{_word(r)}-{_word(r)}",
    "ticket": _ticket,
    "secret": _secret,
    "acct": lambda r: f"ba-{_hex(r, 8)}",
    "bucket": lambda r: f"s3://{_word(r)}-{_word(r)}-{r.randint(10, 99)}",
    "vendor": lambda r: _word(r).capitalize(),
    "column": lambda r: f"{_word(r)}_{_word(r)}",
    "word": _word,
    "mib": lambda r: f"{r.randint(300, 15999)} MiB",
    "gib": lambda r: f"{r.randint(20, 4000)} GiB",
    "money": lambda r: f"{r.randint(1200, 98000):,} EUR",
    "ms": lambda r: f"{r.randint(120, 2900)} ms",
    "version": _version,
    "person": _person,
    "email": _email,
    "date": _date,
    "datetime": lambda r: f"{_date(r)} {r.randint(6, 22):02d}:{r.choice((0, 15, 30, 45)):02d} UTC",
    "url": lambda r: (
        f"https://{_word(r)}.{_word(r)}.{r.choice(('io', 'dev', 'net', 'cloud'))}"
        f"/{_word(r)}/v{r.randint(2, 9)}"
    ),
    "rate": lambda r: f"{r.randint(40, 9000)} req/s",
    "attempts": lambda r: f"{r.randint(11, 97)} attempts",
    "duration": lambda r: f"{r.randint(1, 19)}h{r.randint(1, 59):02d}m",
    "percent": lambda r: f"{r.randint(1, 9)}.{r.randint(1, 99):02d}%",
    "cron": lambda r: f"{r.randint(0, 59)} {r.randint(0, 23)} * * {r.randint(0, 6)}",
    "workers": lambda r: f"{r.randint(16, 4000)} workers",
    "rows": lambda r: f"{r.randint(1000, 90000)} rows",
}

# -- filler (shapes no value has: plain first names, 2026 dates, short hex) ----------------------

_FIRST = (
    "Ines", "Marek", "Priya", "Tomas", "Aiko", "Femi", "Lotte", "Rui", "Oskar", "Mina",
    "Jonah", "Sade", "Elif", "Bram", "Keiko", "Hana",
)  # fmt: skip
_TEAMS = ("platform", "payments", "search", "infra", "data", "growth", "billing", "mobile")
_APPS = ("api", "worker", "ingest", "gateway", "exporter", "scheduler", "indexer")
_ENVS = ("staging", "prod", "qa", "dev")
_FILLER_KV = (
    ("log_level", "info"),
    ("retries", "3"),
    ("tls", "true"),
    ("encoding", "utf-8"),
    ("compress", "gzip"),
    ("debug", "false"),
    ("cache_ttl", "300"),
    ("format", "json"),
    ("pool", "8"),
)


def _fill_date(r: random.Random) -> str:
    return f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"


def _fill_ts(r: random.Random) -> str:
    return (
        f"{_fill_date(r)}T{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"
        f".{r.randint(0, 999):03d}Z"
    )


def _fill_kv(r: random.Random, n: int) -> list[tuple[str, str]]:
    return r.sample(_FILLER_KV, n)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# -- facts ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact as the styles render it: a config key, a noun phrase, a sentence, a value."""

    key: str
    label: str
    sentence: str
    value: str

    @property
    def env(self) -> str:
        return re.sub(r"[^A-Za-z0-9]+", "_", self.key).strip("_").upper()

    @property
    def section(self) -> str:
        return self.key.rsplit(".", 1)[0] if "." in self.key else "settings"

    @property
    def leaf(self) -> str:
        return self.key.rsplit(".", 1)[-1]

    @property
    def Label(self) -> str:  # noqa: N802 (the label as a sentence starts)
        return _cap(self.label)


Style = Callable[[Fact, random.Random], str]
STYLES: dict[str, str] = {}  # name -> register
GENERIC: dict[str, Style] = {}  # the styles that render any fact


def _style(name: str, register: str) -> Callable[[Style], Style]:
    def register_it(fn: Style) -> Style:
        STYLES[name] = register
        GENERIC[name] = fn
        return fn

    return register_it


# -- user pastes ----------------------------------------------------------------------------------


def _toml_doc(f: Fact, r: random.Random) -> tuple[str, str]:
    """A TOML file holding ``f`` (its name, its text); the same ``r`` state gives the same file."""
    name = r.choice(
        ("config/app.toml", "deploy/settings.toml", "service.toml", "conf/runtime.toml")
    )
    lines = [f"{k} = {v if v.isdigit() or v in ('true', 'false') else json.dumps(v)}"
             for k, v in _fill_kv(r, 3)]  # fmt: skip
    lines.insert(r.randint(0, 3), f'{f.leaf} = "{f.value}"  # {f.label}')
    body = "\n".join([f"[{f.section}]", *lines])
    return name, f"```toml\n{body}\n```"


@_style("toml-file", "user")
def _toml(f: Fact, r: random.Random) -> str:
    name, doc = _toml_doc(f, r)
    intro = r.choice(("From `{n}`:", "This is the relevant part of `{n}`:", "`{n}` on main:"))
    return f"{intro.format(n=name)}\n\n{doc}"


@_style("ini-file", "user")
def _ini(f: Fact, r: random.Random) -> str:
    fill = "\n".join(f"{k} = {v}" for k, v in _fill_kv(r, 2))
    name = r.choice(("setup.cfg", "service.ini", "tox.ini", "deploy.ini"))
    return f"{name}:\n\n```ini\n[{f.section}]\n{fill}\n; {f.label}\n{f.leaf} = {f.value}\n```"


@_style("dotenv", "user")
def _dotenv(f: Fact, r: random.Random) -> str:
    k, v = _fill_kv(r, 1)[0]
    lines = [f"# {f.label}", f'{f.env}="{f.value}"', f"{k.upper()}={v}"]
    env = r.choice(_ENVS)
    return f"The `.env.{env}` we use:\n\n```\n" + "\n".join(lines) + "\n```"


@_style("makefile", "user")
def _makefile(f: Fact, r: random.Random) -> str:
    dash = f.leaf.replace("_", "-")
    target = r.choice(("deploy", "release", "run", "bootstrap"))
    return (
        f"From the Makefile:\n\n```make\n# {f.label}\n{f.env} ?= {f.value}\n\n.PHONY: {target}\n"
        f'{target}:\n\t./scripts/{target}.sh --{dash}="$({f.env})"\n```'
    )


@_style("dockerfile", "user")
def _dockerfile(f: Fact, r: random.Random) -> str:
    base = r.choice(("debian:bookworm-slim", "alpine:3.20", "ubuntu:24.04"))
    k, v = _fill_kv(r, 1)[0]
    return (
        f"```dockerfile\nFROM {base}\nARG {k.upper()}={v}\n# {f.label}\n"
        f'ENV {f.env}="{f.value}"\nCOPY . /app\nCMD ["/app/run"]\n```'
    )


@_style("gha-workflow", "user")
def _gha(f: Fact, r: random.Random) -> str:
    wf = r.choice(("ci", "deploy", "nightly", "release"))
    return (
        f"`.github/workflows/{wf}.yml`:\n\n```yaml\nname: {wf}\non:\n  push:\n"
        "    branches: [main]\n"
        f'env:\n  {f.env}: "{f.value}"  # {f.label}\njobs:\n  build:\n    runs-on: ubuntu-latest\n'
        "    steps:\n      - uses: actions/checkout@v4\n```"
    )


@_style("package-json", "user")
def _package_json(f: Fact, r: random.Random) -> str:
    doc = {
        "name": f"@{r.choice(_TEAMS)}/{r.choice(_APPS)}",
        "private": True,
        "config": {f.key: f.value, "_comment": f.label},
        "scripts": {"start": "node dist/main.js"},
    }
    return "package.json:\n\n```json\n" + json.dumps(doc, indent=2) + "\n```"


@_style("java-properties", "user")
def _properties(f: Fact, r: random.Random) -> str:
    k, v = _fill_kv(r, 1)[0]
    env = r.choice(_ENVS)
    return (
        f"application-{env}.properties:\n\n```properties\n{f.section}.{k}={v}\n# {f.label}\n"
        f"{f.key}={f.value}\n```"
    )


@_style("app-config-xml", "user")
def _app_config(f: Fact, r: random.Random) -> str:
    k, v = _fill_kv(r, 1)[0]
    return (
        "web.config, appSettings section:\n\n```xml\n<appSettings>\n"
        f'  <add key="{k}" value="{v}" />\n'
        f'  <!-- {f.label} -->\n  <add key="{f.key}" value="{f.value}" />\n</appSettings>\n```'
    )


@_style("tsv-sheet", "user")
def _tsv(f: Fact, r: random.Random) -> str:
    rows = [f"{f.section}.{k}\t{v}\tdefault" for k, v in _fill_kv(r, 2)]
    rows.insert(r.randint(0, 2), f"{f.key}\t{f.value}\t{f.label}")
    team = r.choice(_TEAMS)
    return f"Copied from the {team} settings sheet:\n\nsetting\tvalue\tnote\n" + "\n".join(rows)


@_style("email-thread", "user")
def _email_thread(f: Fact, r: random.Random) -> str:
    a, b = r.sample(_FIRST, 2)
    return (
        f"From: {a} <{a.lower()}@corp.example>\nSubject: Re: {f.Label}\n\nHi all,\n\n"
        f"{f.sentence}\n\nThanks,\n{a}\n\n> On {_fill_date(r)}, {b} wrote:\n"
        f"> Quick one: what is {f.label}?"
    )


@_style("meeting-minutes", "user")
def _minutes(f: Fact, r: random.Random) -> str:
    people = ", ".join(r.sample(_FIRST, 3))
    return (
        f"Minutes: {r.choice(_TEAMS)} sync, {_fill_date(r)}\nAttendees: {people}\n\n"
        f"1. {f.Label}\n   - {f.sentence}\n   - No objections.\n2. AOB: none"
    )


@_style("voice-transcript", "user")
def _voice(f: Fact, r: random.Random) -> str:
    a, b = r.sample(_FIRST, 2)
    mm, ss = r.randint(1, 40), r.randint(0, 50)
    return (
        f"[00:{mm:02d}:{ss:02d}] {a}: so, um, one thing before we start. {f.sentence} Yeah.\n"
        f"[00:{mm:02d}:{ss + 7:02d}] {b}: okay, noted."
    )


@_style("oncall-handoff", "user")
def _handoff(f: Fact, r: random.Random) -> str:
    shift = r.choice(("night", "day", "weekend"))
    return (
        f"On-call handoff, {_fill_date(r)} ({shift} shift)\n- Pages: {r.randint(0, 6)}, all "
        f"resolved\n- Heads-up: {f.sentence}\n- Open incidents: none"
    )


@_style("pr-review", "user")
def _pr_review(f: Fact, r: random.Random) -> str:
    path = r.choice(("src/settings.py", "deploy/values.go", "lib/config.ts", "app/conf.rb"))
    return (
        f"Review comment on `{path}` (line {r.randint(12, 240)}):\n> {f.sentence}\n"
        "Keep that in mind for the rest of this PR, please."
    )


@_style("release-notes", "user")
def _release_notes(f: Fact, r: random.Random) -> str:
    return (
        f"## 2026.{r.randint(1, 12)}.{r.randint(0, 9)} ({_fill_date(r)})\n\n### Notes\n"
        f"- {f.sentence}\n- Minor dependency bumps."
    )


# -- tool output ----------------------------------------------------------------------------------


@_style("http-exchange", "tool")
def _http(f: Fact, r: random.Random) -> str:
    body = json.dumps({"key": f.key, "value": f.value, "description": f.label})
    team = r.choice(_TEAMS)
    return (
        f"GET /v1/config/{f.key} HTTP/1.1\nHost: config.{team}.internal\nAccept: application/json"
        f'\n\nHTTP/1.1 200 OK\nContent-Type: application/json\nETag: "{_hex(r, 12)}"\n'
        f"Cache-Control: no-store\n\n{body}"
    )


@_style("curl-verbose", "tool")
def _curl(f: Fact, r: random.Random) -> str:
    host = f"config.{r.choice(_TEAMS)}.internal"
    ip = f"10.{r.randint(0, 15)}.{r.randint(0, 255)}.{r.randint(2, 254)}"
    return (
        f"$ curl -sv https://{host}/v1/{f.key}\n*   Trying {ip}:443...\n* Connected to {host} "
        f"({ip}) port 443\n> GET /v1/{f.key} HTTP/2\n> Host: {host}\n> user-agent: curl/8.5.0\n"
        f"> accept: */*\n>\n< HTTP/2 200\n< content-type: text/plain\n< x-request-id: "
        f"{_hex(r, 16)}\n<\n{f.value}\n* Connection #0 to host {host} left intact"
    )


@_style("jsonrpc", "tool")
def _jsonrpc(f: Fact, r: random.Random) -> str:
    n = r.randint(2, 90)
    call = {"jsonrpc": "2.0", "id": n, "method": "config.get", "params": {"key": f.key}}
    result = {"key": f.key, "value": f.value, "doc": f.label}
    reply = {"jsonrpc": "2.0", "id": n, "result": result}
    return f"--> {json.dumps(call)}\n<-- {json.dumps(reply)}"


@_style("graphql", "tool")
def _graphql(f: Fact, r: random.Random) -> str:
    data = {"data": {"setting": {"key": f.key, "value": f.value, "note": f.sentence}}}
    return f'query {{ setting(key: "{f.key}") {{ key value note }} }}\n\n' + json.dumps(
        data, indent=2
    )


@_style("protobuf-text", "tool")
def _protobuf(f: Fact, r: random.Random) -> str:
    return (
        "# proto-file: config/v1/setting.proto\n# proto-message: Setting\n"
        f'key: "{f.key}"\nvalue: "{f.value}"\ndescription: "{f.label}"\n'
        f'owner_team: "{r.choice(_TEAMS)}"\nrevision: {r.randint(3, 400)}'
    )


@_style("k8s-events", "tool")
def _k8s_events(f: Fact, r: random.Random) -> str:
    app, ns = r.choice(_APPS), r.choice(_TEAMS)
    return (
        f"$ kubectl get events -n {ns} --sort-by=.lastTimestamp\n"
        "LAST SEEN   TYPE     REASON          OBJECT                 MESSAGE\n"
        f"{r.randint(3, 9)}m          Normal   Scheduled       pod/{app}-{_hex(r, 5)}      "
        f"Successfully assigned {ns}/{app}-{_hex(r, 5)} to node-{r.randint(1, 9)}\n"
        f"{r.randint(10, 59)}s         Normal   ConfigApplied   deployment/{app}       "
        f"{f.key}={f.value} ({f.label})"
    )


@_style("cloudwatch-log", "tool")
def _cloudwatch(f: Fact, r: random.Random) -> str:
    rid = f"{_hex(r, 8)}-{_hex(r, 4)}-{_hex(r, 4)}-{_hex(r, 4)}-{_hex(r, 12)}"
    msg = json.dumps({"msg": "config resolved", "key": f.key, "value": f.value})
    return (
        f"START RequestId: {rid} Version: $LATEST\n{_fill_ts(r)}\t{rid}\tINFO\t{msg}\n"
        f"END RequestId: {rid}"
    )


@_style("datadog-json", "tool")
def _datadog(f: Fact, r: random.Random) -> str:
    line = {
        "timestamp": _fill_ts(r),
        "service": r.choice(_APPS),
        "status": "info",
        "message": f.sentence,
        "attributes": {"config.key": f.key, "config.value": f.value},
    }
    return json.dumps(line)


@_style("crontab", "tool")
def _crontab(f: Fact, r: random.Random) -> str:
    when = r.choice(("15 4 * * *", "*/10 * * * *", "0 */6 * * *", "30 1 1 * *"))
    return (
        f'$ crontab -l\nMAILTO=ops@corp.example\n{f.env}="{f.value}"\n# {f.label}\n'
        f"{when} /usr/local/bin/{r.choice(_APPS)}-sync"
    )


@_style("pytest-run", "tool")
def _pytest(f: Fact, r: random.Random) -> str:
    return (
        f"$ python -m pytest -q -s tests/test_settings.py::test_{f.leaf}\n{f.key} resolved to "
        f"{f.value}\n.\n1 passed in 0.{r.randint(10, 99)}s"
    )


@_style("shell-session", "tool")
def _shell(f: Fact, r: random.Random) -> str:
    app = r.choice(_APPS)
    if r.random() < 0.5:
        return f"dev@{app}-box:~$ printenv {f.env}\n{f.value}\ndev@{app}-box:~$ echo $?\n0"
    return f"$ cat /etc/{app}/{f.key}\n{f.value}\n$ stat -c %y /etc/{app}/{f.key}\n{_fill_ts(r)}"


@_style("sql-migration", "tool")
def _sql(f: Fact, r: random.Random) -> str:
    return (
        f"$ cat migrations/{r.randint(10, 400):04d}_{f.leaf}.sql\n-- {f.label}\n"
        f"INSERT INTO settings (key, value) VALUES ('{f.key}', '{f.value}')\n"
        "ON CONFLICT (key) DO NOTHING;"
    )


@_style("git-show", "tool")
def _git_show(f: Fact, r: random.Random) -> str:
    a = r.choice(_FIRST)
    return (
        f"$ git show --no-patch {_hex(r, 7)}\ncommit {_hex(r, 40)}\n"
        f"Author: {a} <{a.lower()}@corp.example>\n"
        f"Date:   {_fill_date(r)} 10:{r.randint(10, 59)}\n\n"
        f"    Record {f.label}\n\n    {f.sentence}\n\n    Refs: #{r.randint(100, 9999)}\n"
        f"    Signed-off-by: {a} <{a.lower()}@corp.example>"
    )


@_style("openapi-yaml", "tool")
def _openapi(f: Fact, r: random.Random) -> str:
    return (
        f"$ sed -n '1,12p' api/openapi.yaml\nopenapi: 3.1.0\ninfo:\n"
        f"  title: {r.choice(_TEAMS)} API\n"
        f'  version: "2026.{r.randint(1, 12)}"\nx-settings:\n  {f.key}:\n'
        f'    description: {f.label}\n    default: "{f.value}"'
    )


def _csv_rows(f: Fact, r: random.Random) -> tuple[str, list[str]]:
    """A CSV export holding ``f`` (its name, its rows); the same ``r`` state gives the same rows."""
    name = r.choice(("settings", "config-export", "flags", "inventory"))
    scope = r.choice(_ENVS)
    rows = [f"{f.section}.{k},{v},{scope}" for k, v in _fill_kv(r, 2)]
    rows.insert(r.randint(0, 2), f'{f.key},"{f.value}",{scope}')
    return name, rows


@_style("csv-export", "tool")
def _csv(f: Fact, r: random.Random) -> str:
    name, rows = _csv_rows(f, r)
    stamp = _fill_ts(r)
    return f"$ head -4 exports/{name}.csv\nkey,value,scope\n" + "\n".join(rows) + f"\n# {stamp}"


@_style("configmap-yaml", "tool")
def _configmap(f: Fact, r: random.Random) -> str:
    app, ns = r.choice(_APPS), r.choice(_TEAMS)
    return (
        f"$ kubectl get configmap {app}-config -n {ns} -o yaml\napiVersion: v1\ndata:\n"
        f'  {f.env}: "{f.value}"\n  LOG_LEVEL: info\nkind: ConfigMap\nmetadata:\n'
        f'  name: {app}-config\n  namespace: {ns}\n  resourceVersion: "{r.randint(1000, 99999)}"'
    )


# -- assistant prose ------------------------------------------------------------------------------


@_style("numbered-reasoning", "assistant")
def _reasoning(f: Fact, r: random.Random) -> str:
    first = r.choice(
        (
            "The failing test only reads configuration at import time.",
            "The task touches the deploy path, so configuration matters here.",
            "Before editing anything I went through the settings that constrain this.",
        )
    )
    return (
        f"Working through this:\n1. {first}\n2. {f.sentence}\n"
        "3. I'll keep that fixed in everything that follows."
    )


@_style("diff-summary", "assistant")
def _diff_summary(f: Fact, r: random.Random) -> str:
    path = r.choice(("config/settings.yaml", "deploy/env.json", "src/defaults.py"))
    return (
        f"What the diff does so far:\n- `{path}`: sets `{f.key}` to `{f.value}` ({f.label}).\n"
        "- `tests/test_settings.py`: one case for it."
    )


@_style("options-table", "assistant")
def _options(f: Fact, r: random.Random) -> str:
    return (
        f"Options I looked at for {f.label}:\n\n| option | verdict |\n|---|---|\n"
        "| leave it unset | rejected: validation fails |\n"
        f"| `{f.value}` | chosen: {f.sentence} |"
    )


@_style("so-answer", "assistant")
def _so_answer(f: Fact, r: random.Random) -> str:
    return (
        f"**Short answer:** {f.sentence}\n\n**Longer answer:** {f.Label} is read once at "
        "startup, so a restart is needed before a different value takes effect."
    )


@_style("confirm-understanding", "assistant")
def _confirm(f: Fact, r: random.Random) -> str:
    return f"To confirm what I'm working from: {f.sentence} I'll treat that as fixed."


@_style("assumptions", "assistant")
def _assumptions(f: Fact, r: random.Random) -> str:
    return (
        f"Assumptions for the rest of this task:\n- {f.sentence}\n"
        "- The test suite is the arbiter of behaviour.\n- No schema migrations are needed."
    )


@_style("commit-draft", "assistant")
def _commit_draft(f: Fact, r: random.Random) -> str:
    return f"Proposed commit message:\n\n    Record {f.label}\n\n    {f.sentence}"


@_style("faq-entry", "assistant")
def _faq(f: Fact, r: random.Random) -> str:
    return f"**Q:** What is {f.label}?\n**A:** `{f.value}`. {f.sentence}"


@_style("status-report", "assistant")
def _status(f: Fact, r: random.Random) -> str:
    return (
        f"Status: {r.randint(3, 40)} tests green locally, nothing blocking. "
        f"One fact to carry forward: {f.sentence}"
    )


@_style("explain-failure", "assistant")
def _explain(f: Fact, r: random.Random) -> str:
    path = r.choice(("config/validate.py", "src/settings.rs", "lib/checks.ts"))
    return (
        f"The failing check comes down to configuration. {f.sentence} "
        f"Anything else trips the validation in `{path}`."
    )


@_style("glossary", "assistant")
def _glossary(f: Fact, r: random.Random) -> str:
    return (
        f"Terms as I use them here:\n- **{f.key}**: {f.label}; value `{f.value}`.\n"
        "- **cutover**: the switch of traffic to the rebuilt stack."
    )


@_style("quoting-user", "assistant")
def _quoting(f: Fact, r: random.Random) -> str:
    return f'You wrote: "{f.sentence}" I\'ll work with that.'


@_style("email-draft", "assistant")
def _email_draft(f: Fact, r: random.Random) -> str:
    a = r.choice(_FIRST)
    return f"Draft reply for you to send:\n\n> Hi {a},\n> {f.sentence}\n> Best regards"


@_style("review-reply", "assistant")
def _review_reply(f: Fact, r: random.Random) -> str:
    path = r.choice(("src/settings.py", "deploy/values.go", "lib/config.ts"))
    return (
        f"Re your comment on `{path}`: {f.sentence} So I left `{f.key}` as it is and "
        "added a test that pins it."
    )


@_style("risk-register", "assistant")
def _risks(f: Fact, r: random.Random) -> str:
    return (
        "| risk | likelihood | mitigation |\n|---|---|---|\n"
        f"| misconfigured `{f.key}` | {r.choice(('low', 'medium'))} | {f.sentence} |\n"
        "| flaky network test | low | retry once in CI |"
    )


@_style("reply-to-question", "assistant")
def _reply(f: Fact, r: random.Random) -> str:
    return f"You asked about {f.label}: it's `{f.value}`. {f.sentence}"


# surfaces only corrections are written in
STYLES.update(
    {
        "runbook-page": "user",
        "poll-result": "user",
        "git-word-diff": "tool",
        "audit-log": "tool",
        "worked-calculation": "assistant",
        "source-check": "assistant",
        "inventory-table": "assistant",
        "admission": "assistant",
        "side-by-side-diff": "assistant",
    }
)

# -- corrections ----------------------------------------------------------------------------------

Render = Callable[[Fact, Fact, random.Random, int], str]


@dataclass(frozen=True, slots=True)
class Phrasing:
    """One way of correcting a value: the style it is written in, whether it names the value it
    replaces, how it renders, and (for a surface shown again whole) how the first fact is shown."""

    name: str
    style: str
    names_old: bool
    render: Render
    first: Callable[[Fact, int], str] | None = None


PHRASINGS: dict[str, Phrasing] = {}


def _phrasing(
    name: str, style: str, names_old: bool, first: Callable[[Fact, int], str] | None = None
) -> Callable[[Render], Render]:
    def register_it(fn: Render) -> Render:
        PHRASINGS[name] = Phrasing(name, style, names_old, fn, first)
        return fn

    return register_it


def _toml_first(f: Fact, shared: int) -> str:
    name, doc = _toml_doc(f, random.Random(shared))
    return f"From `{name}`:\n\n{doc}"


@_phrasing("config-shown-again", "toml-file", False, _toml_first)
def _p_config_again(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    name, doc = _toml_doc(new, random.Random(shared))
    intro = r.choice(
        (
            "Here is `{n}` as it stands on main:",
            "Current `{n}` for reference, from the deploy branch:",
            "Pasting the whole `{n}` from the release tag:",
        )
    )
    return f"{intro.format(n=name)}\n\n{doc}"


def _csv_first(f: Fact, shared: int) -> str:
    name, rows = _csv_rows(f, random.Random(shared))
    return f"$ head -4 exports/{name}.csv\nkey,value,scope\n" + "\n".join(rows)


@_phrasing("csv-reexported", "csv-export", False, _csv_first)
def _p_csv_again(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    name, rows = _csv_rows(new, random.Random(shared))
    return (
        f"$ ./bin/export --table settings > exports/{name}.csv && head -4 exports/{name}.csv\n"
        "key,value,scope\n" + "\n".join(rows)
    )


@_phrasing("email-go-with", "email-thread", False)
def _p_email(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    a, b = r.sample(_FIRST, 2)
    first = r.choice(
        (
            f"Let's go with {new.value} for {new.label}.",
            f"{new.value} it is: let's go with that for {new.label}.",
        )
    )
    return (
        f"From: {a} <{a.lower()}@corp.example>\nSubject: Re: {new.Label}\n\n{first} "
        f"I've told the vendor.\n\n{a}\n\n> On {_fill_date(r)}, {b} wrote:\n"
        f"> Which one are we committing to for {new.label}? Need it for the plan."
    )


@_phrasing("pr-requested-changes", "pr-review", False)
def _p_pr(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    a = r.choice(_FIRST)
    return (
        f"**{a}** requested changes on `ci/config.toml`\n\n> line {r.randint(8, 90)}\n\n"
        f"Use `{new.value}` for {new.label}, as agreed in the review thread.\n\n"
        f'```suggestion\n{new.leaf} = "{new.value}"\n```'
    )


@_phrasing("handoff-as-of-shift", "oncall-handoff", False)
def _p_handoff(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    a = r.choice(_FIRST)
    return (
        f"On-call handoff, {_fill_date(r)} ({r.choice(('night', 'day'))} shift)\n"
        f"- Pages: {r.randint(0, 5)}, all acked\n"
        f"- {new.Label}: {new.value} as of this shift, confirmed with {a}.\n- Nothing else open."
    )


@_phrasing("minutes-decision", "meeting-minutes", False)
def _p_minutes(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    people = r.sample(_FIRST, 3)
    return (
        f"Minutes: {r.choice(_TEAMS)} weekly, {_fill_date(r)}\nPresent: {', '.join(people)}\n\n"
        f"Decisions\n1. {new.Label}: {new.value}. Agreed without objection; {people[0]} records "
        "it in the ownership file.\n\nActions\n- none beyond the above"
    )


@_phrasing("release-breaking-default", "release-notes", False)
def _p_release_default(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    return (
        f"## 2026.{r.randint(1, 12)}.{r.randint(0, 9)} ({_fill_date(r)})\n\n### Breaking\n"
        f"- {new.Label} is {new.value} from this release on. Pin the previous tag explicitly "
        "if you depend on it."
    )


@_phrasing("http-patch", "http-exchange", False)
def _p_patch(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    team = r.choice(_TEAMS)
    return (
        f"PATCH /v2/settings/{new.key} HTTP/1.1\nHost: config.{team}.internal\n"
        f'Content-Type: application/merge-patch+json\nIf-Match: "{_hex(r, 12)}"\n\n'
        f"{json.dumps({'value': new.value})}\n\nHTTP/1.1 200 OK\nContent-Type: application/json\n"
        f'ETag: "{_hex(r, 12)}"\n\n'
        + json.dumps({"key": new.key, "value": new.value, "revision": r.randint(5, 500)})
    )


@_phrasing("commit-with-trailers", "git-show", False)
def _p_commit(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    a, b = r.sample(_FIRST, 2)
    return (
        f"$ git show --no-patch HEAD\ncommit {_hex(r, 40)}\nAuthor: {a} <{a.lower()}@corp.example>"
        f"\n\n    Point {new.label} at {new.value}\n\n    Agreed with the billing on-call rotation."
        f"\n\n    Refs: #{r.randint(100, 9999)}\n    Reviewed-by: {b} <{b.lower()}@corp.example>"
    )


@_phrasing("configmap-applied", "configmap-yaml", False)
def _p_configmap(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    app, ns = r.choice(_APPS), r.choice(_TEAMS)
    return (
        f"$ kubectl apply -f k8s/{app}-config.yaml\nconfigmap/{app}-config configured\n"
        f"$ kubectl get configmap {app}-config -n {ns} -o yaml\napiVersion: v1\ndata:\n"
        f'  {new.env}: "{new.value}"\nkind: ConfigMap\nmetadata:\n  name: {app}-config'
    )


@_phrasing("assistant-recomputes", "worked-calculation", False)
def _p_recompute(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    return (
        "Redoing the arithmetic with the figures from the signed capacity sheet, "
        f"{new.label} comes out at {new.value}. My first pass took the draft sheet; "
        f"from here on I use {new.value}."
    )


@_phrasing("assistant-goes-by-user", "quoting-user", False)
def _p_user_quote(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    return (
        f"Going by your last message, {new.label} is {new.value}. I'll plan the rest around that."
    )


@_phrasing("assistant-signed-source", "source-check", False)
def _p_source(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    source = r.choice(("the signed order form", "the countersigned contract", "the finance ticket"))
    return (
        f"I checked this against {source}: {new.label} is {new.value}. That is the figure "
        "the report will use."
    )


@_phrasing("assistant-inventory-table", "inventory-table", False)
def _p_table(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    k, v = _fill_kv(r, 1)[0]
    return (
        "Inventory as it stands:\n\n| setting | value | source |\n|---|---|---|\n"
        f"| `{new.key}` | `{new.value}` | ops review {_fill_date(r)} |\n"
        f"| `{new.section}.{k}` | `{v}` | defaults |"
    )


@_phrasing("changelog-bumped", "release-notes", True)
def _p_bumped(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    return (
        f"## [2026.{r.randint(1, 12)}.{r.randint(0, 9)}] - {_fill_date(r)}\n### Dependencies\n"
        f"- Bumped {new.label} from {old.value} to {new.value} (#{r.randint(100, 9999)}).\n"
        "### Fixed\n- Flaky retry in the export job."
    )


@_phrasing("strikethrough", "runbook-page", True)
def _p_strike(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    a = r.choice(_FIRST)
    if r.random() < 0.5:
        return f"**{new.Label}:** ~~{old.value}~~ {new.value}\n_Edited by {a}, {_fill_date(r)}._"
    return (
        f"| setting | value |\n|---|---|\n| {new.Label} | ~~{old.value}~~ **{new.value}** |\n"
        f"_Edited by {a}, {_fill_date(r)}._"
    )


@_phrasing("poll-result", "poll-result", True)
def _p_poll(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    won, lost = r.randint(5, 11), r.randint(1, 4)
    if r.random() < 0.5:
        return (
            f"Poll closed: {new.Label}?\n- {new.value}: {won} votes\n- {old.value}: {lost} votes\n"
            f"Result: {new.value}"
        )
    return (
        f"Poll results, {won + lost} votes, on {new.label}\n{old.value} .... {lost}\n"
        f"{new.value} .... {won}\nCarried: {new.value}"
    )


@_phrasing("voice-self-correction", "voice-transcript", True)
def _p_voice(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    a, b = r.sample(_FIRST, 2)
    mm = r.randint(1, 40)
    return (
        f"[00:{mm:02d}:12] {a}: okay so {new.label}, it's, uh, {old.value}... sorry, no, "
        f"{new.value}. {new.value}. I was reading the row above.\n"
        f"[00:{mm:02d}:21] {b}: got it, {new.value}."
    )


@_phrasing("sed-in-place", "shell-session", True)
def _p_sed(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    path = r.choice(("config/app.toml", "deploy/settings.toml", "etc/service.conf"))
    return (
        f"$ sed -i 's|{old.value}|{new.value}|' {path}\n$ sed -n '/^{new.leaf}/p' {path}\n"
        f'{new.leaf} = "{new.value}"'
    )


@_phrasing("git-word-diff", "git-word-diff", True)
def _p_word_diff(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    path = r.choice(("config/app.toml", "deploy/settings.toml"))
    n = r.randint(4, 80)
    return (
        f"$ git diff --word-diff {path}\ndiff --git a/{path} b/{path}\n"
        f"index {_hex(r, 7)}..{_hex(r, 7)} 100644\n--- a/{path}\n+++ b/{path}\n"
        f'@@ -{n},3 +{n},3 @@ [{new.section}]\n{new.leaf} = [-"{old.value}"-]{{+"{new.value}"+}}'
    )


@_phrasing("field-history", "audit-log", True)
def _p_history(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    a, b = r.sample(_FIRST, 2)
    return (
        f"Field history: {new.label}\n{_fill_ts(r)}  {a.lower()}  {new.key}: {old.value} -> "
        f"{new.value}\n{_fill_ts(r)}  {b.lower()}  {new.key}: (empty) -> {old.value}"
    )


@_phrasing("previous-value-response", "protobuf-text", True)
def _p_previous(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    a = r.choice(_FIRST)
    return (
        f'set_config_response {{\n  key: "{new.key}"\n  previous_value: "{old.value}"\n'
        f'  value: "{new.value}"\n  applied_by: "{a.lower()}"\n  revision: {r.randint(5, 500)}\n}}'
    )


@_phrasing("migration-down-step", "sql-migration", True)
def _p_migration(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    table = new.section.replace(".", "_")
    return (
        f"$ cat migrations/{r.randint(10, 400):04d}_{new.leaf}_default.sql\n-- migrate:up\n"
        f"ALTER TABLE {table} ALTER COLUMN {new.leaf} SET DEFAULT '{new.value}';\n\n"
        f"-- migrate:down\nALTER TABLE {table} ALTER COLUMN {new.leaf} SET DEFAULT '{old.value}';"
    )


@_phrasing("assistant-misread", "admission", True)
def _p_misread(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    return r.choice(
        (
            f"I misread {new.label} earlier: it is {new.value}. {old.value} was from the "
            "neighbouring row of the inventory.",
            f"My mistake on {new.label}: I read {old.value} off the staging row. Production's "
            f"value is {new.value}.",
        )
    )


@_phrasing("assistant-rechecks", "source-check", True)
def _p_recheck(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    return (
        f"Re-checked against the vault listing: {new.label} is {new.value}. The {old.value} I "
        "quoted came from a stale cached copy."
    )


@_phrasing("assistant-picks-option", "options-table", True)
def _p_options(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    return (
        f"Two candidates for {new.label}:\n\n| value | where it comes from | pick |\n"
        "|---|---|---|\n"
        f"| {old.value} | first draft of the runbook | |\n"
        f"| {new.value} | load test on {_fill_date(r)} | yes |\n\nGoing with {new.value}."
    )


@_phrasing("assistant-side-by-side", "side-by-side-diff", True)
def _p_side(old: Fact, new: Fact, r: random.Random, shared: int) -> str:
    left = f'{new.leaf} = "{old.value}"'
    return (
        "The config before and after, side by side:\n\n```\n"
        f'{left:<48}|  {new.leaf} = "{new.value}"\n```'
    )


# -- templates ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Template:
    """One fact about one subject (``{s}`` in a coexisting template), said ``says`` ways."""

    name: str
    kind: str
    shape: str  # single | correction | coexist
    form: str
    key: str
    label: str
    says: tuple[str, ...]
    phrasing: str | None = None

    @property
    def size(self) -> int:
        return 1 if self.shape == "single" else 2


def _single(name: str, kind: str, form: str, key: str, label: str, *says: str) -> Template:
    return Template(name, kind, "single", form, key, label, says)


def _pair(name: str, kind: str, form: str, key: str, label: str, *says: str) -> Template:
    return Template(name, kind, "coexist", form, key, label, says)


def _fix(  # noqa: PLR0917 (a row of the template table)
    name: str, kind: str, form: str, key: str, label: str, phrasing: str, *says: str
) -> Template:
    return Template(name, kind, "correction", form, key, label, says, phrasing)


TEMPLATES: tuple[Template, ...] = (
    # constraint
    _single("zone_pin", "constraint", "zone", "placement.required_zone",
            "the zone every worker must run in",
            "Every worker must be scheduled in {v}; the data-residency review requires it.",
            "Workers are pinned to {v} and may not be placed in any other zone."),
    _single("admin_cidr", "constraint", "cidr", "admin.allowed_cidr",
            "the only network allowed to reach the admin API",
            "The admin API must only accept connections from {v}.",
            "Only {v} may reach the admin API; everything else is dropped at the edge."),
    _single("tag_prefix", "constraint", "tagprefix", "release.tag_prefix",
            "the prefix every release tag must carry",
            "Release tags must start with {v}/ and nothing else.",
            "Every release tag has to carry the prefix {v}/."),
    _single("backup_kms", "constraint", "kmsalias", "backup.kms_key_alias",
            "the key alias backups must be encrypted with",
            "Backups must be encrypted with the key alias {v}.",
            "Nothing is written to the backup vault unless it is encrypted under {v}."),
    # prohibition
    _single("ledger_host", "prohibition", "host", "migrations.forbidden_host",
            "the database host migrations must never run against",
            "Never run migrations against {v}; it is the live ledger.",
            "Migrations are forbidden on {v}, whatever a ticket says."),
    _single("generated_dir", "prohibition", "dir", "codegen.do_not_edit",
            "the generated directory nobody edits by hand",
            "Do not edit anything under {v}; it is regenerated from the upstream schema.",
            "Hands off {v}: files there are overwritten on every build."),
    _single("legal_flag", "prohibition", "flag", "flags.blocked",
            "the flag that must stay off everywhere",
            "Do not turn on {v} in any environment until legal signs off.",
            "{v} stays off in every environment; legal has not cleared it."),
    _single("batch_window", "prohibition", "window", "deploy.blackout",
            "the window with no deploys",
            "No deploys during {v}: the settlement batch runs then.",
            "Deploying during {v} is not allowed; the settlement batch owns that window."),
    # preference
    _single("base_image", "preference", "imagetag", "build.base_image",
            "the preferred base image for services",
            "Prefer {v} as the base image for services we start from here on.",
            "For fresh services I'd rather start from {v}."),
    _single("log_layout", "preference", "word", "logging.layout",
            "the log layout the dashboards expect",
            "Please keep log output in the {v} layout; the dashboards parse it.",
            "Stick to the {v} log layout, the parsers downstream expect it."),
    _single("pr_branch", "preference", "branch", "review.base_branch",
            "the branch pull requests should be opened against",
            "Open pull requests against {v} rather than main.",
            "I'd like every PR to target {v}."),
    _single("notice_channel", "preference", "channel", "notify.deploy_channel",
            "the channel for deploy notices",
            "Post deploy notices in {v}, not in DMs.",
            "Deploy announcements belong in {v}."),
    # identifier
    _single("tracking_ticket", "identifier", "ticket", "tracking.ticket",
            "the ticket this work is tracked under",
            "This work is tracked as {v}; reference it in every commit.",
            "Use {v} as the ticket reference for all of this."),
    _single("registry_secret", "identifier", "secret", "ci.registry_secret",
            "the secret the CI job reads the registry password from",
            "The CI job reads the registry password from the secret named {v}.",
            "Registry credentials come from the secret {v}; never inline them."),
    _single("billing_account", "identifier", "acct", "billing.account_id",
            "the billing account of this project",
            "The billing account for this project is {v}.",
            "Charge everything to billing account {v}."),
    _single("artifact_bucket", "identifier", "bucket", "artifacts.bucket",
            "the bucket build artifacts go to",
            "Build artifacts go to {v}.",
            "Artifacts are uploaded to {v}."),
    # decision
    _single("queue_vendor", "decision", "vendor", "queue.backend",
            "the queue backend for the exporter",
            "We decided on {v} as the queue backend for the exporter.",
            "Decision from the design review: the exporter uses {v} for its queue."),
    _single("ship_flag", "decision", "flag", "rollout.flag",
            "the flag the migration ships behind",
            "Agreed: the migration ships behind {v}.",
            "The migration goes out behind {v}, off by default."),
    _single("tracker_vendor", "decision", "vendor", "errors.vendor",
            "the error-tracking vendor",
            "After the bake-off we picked {v} for error tracking.",
            "Error tracking goes to {v}; that was the outcome of the bake-off."),
    _single("partition_key", "decision", "column", "events.partition_key",
            "the partition key of the events table",
            "The events table will be partitioned by {v}.",
            "We settled on {v} as the partition key for events."),
    # quantity
    _single("worker_mem", "quantity", "mib", "worker.memory",
            "the memory each worker gets",
            "Each worker gets {v} of memory.",
            "Workers are sized at {v} of RAM each."),
    _single("team_budget", "quantity", "money", "cloud.monthly_budget",
            "the team's monthly cloud budget",
            "The team's monthly cloud budget is {v}.",
            "We have {v} a month for cloud spend."),
    _single("checkout_p99", "quantity", "ms", "slo.checkout_p99",
            "the p99 latency target for checkout",
            "The p99 latency target for checkout is {v}.",
            "Checkout has to answer within {v} at p99."),
    _single("scratch_disk", "quantity", "gib", "runners.scratch_size",
            "the scratch disk of each runner",
            "Each CI runner has {v} of scratch disk.",
            "The runners' scratch volume is {v}."),
    # path
    _single("audit_log", "path", "file", "audit.log_path",
            "the file the service writes its audit log to",
            "The service writes its audit log to {v}.",
            "Audit entries end up in {v}."),
    _single("tls_bundle", "path", "pem", "tls.bundle_path",
            "the path of the TLS bundle",
            "The TLS bundle lives at {v}.",
            "Point the client at {v} for the CA bundle."),
    _single("golden_dir", "path", "dir", "tests.golden_dir",
            "the directory of the golden files",
            "Golden files for the tests are in {v}.",
            "Snapshot fixtures live under {v}."),
    # version
    _single("runtime_pin", "version", "version", "runtime.version",
            "the runtime version",
            "Pin the runtime to {v}; later builds break the ABI.",
            "We stay on runtime {v} until the ABI issue is fixed."),
    _single("client_sdk", "version", "version", "deps.client_sdk",
            "the client SDK version",
            "The client SDK is locked at {v}.",
            "Use client SDK {v}; nothing later is approved."),
    _single("deploy_image", "version", "imagetag", "deploy.image",
            "the image production runs",
            "Deploy image {v} to production.",
            "Production runs {v}."),
    # owner
    _single("exporter_owner", "owner", "person", "owners.billing_exporter",
            "the owner of the billing exporter",
            "{v} owns the billing exporter; route questions there.",
            "Questions about the billing exporter go to {v}, who owns it."),
    _single("ingest_escalation", "owner", "email", "alerts.ingest_escalation",
            "the escalation contact of the ingest pipeline",
            "Escalations for the ingest pipeline go to {v}.",
            "Page {v} if the ingest pipeline stalls."),
    _single("schema_approver", "owner", "person", "review.schema_approver",
            "the person who signs off schema changes",
            "Schema changes need sign-off from {v}.",
            "{v} has to approve any schema change."),
    # deadline
    _single("code_freeze", "deadline", "date", "release.code_freeze",
            "the code freeze date",
            "Code freeze is {v}.",
            "Nothing merges after {v}: code freeze."),
    _single("cert_expiry", "deadline", "date", "tls.partner_cert_expiry",
            "the expiry of the partner certificate",
            "The partner certificate expires on {v}; renew before then.",
            "Renew the partner certificate before {v}, when it expires."),
    _single("cutover_deadline", "deadline", "datetime", "migration.cutover_deadline",
            "the cutover deadline",
            "The cutover must be finished by {v}.",
            "Hard deadline for the cutover: {v}."),
    # endpoint
    _single("staging_api", "endpoint", "url", "api.staging_url",
            "the staging API URL",
            "The staging API is at {v}.",
            "Point staging clients at {v}."),
    _single("metrics_collector", "endpoint", "hostport", "metrics.collector",
            "the metrics collector address",
            "The metrics collector listens on {v}.",
            "Ship metrics to {v}."),
    _single("deploy_webhook", "endpoint", "url", "deploy.webhook_url",
            "the deploy webhook URL",
            "Deploy webhooks go to {v}.",
            "Send the deploy webhook to {v}."),
    # limit
    _single("tenant_rate", "limit", "rate", "ratelimit.per_tenant",
            "the per-tenant rate limit",
            "Each tenant is limited to {v}.",
            "Tenants are throttled at {v}."),
    _single("retry_cap", "limit", "attempts", "jobs.max_attempts",
            "the attempts a job gets before dead-lettering",
            "A job gets at most {v} before it is dead-lettered.",
            "Jobs are dead-lettered after {v}."),
    _single("upload_cap", "limit", "mib", "uploads.max_size",
            "the upload size limit",
            "Uploads above {v} are rejected.",
            "The upload ceiling is {v}."),
    _single("job_timeout", "limit", "duration", "jobs.timeout",
            "the job timeout",
            "Jobs are killed after {v}.",
            "The job runner enforces a timeout of {v}."),
    # two subjects, both hold
    _pair("service_port", "endpoint", "port", "services.{s}.port", "the port {s} listens on",
          "{s} listens on port {v}.", "The {s} service binds port {v}."),
    _pair("component_owner", "owner", "person", "owners.{s}", "the owner of {s}",
          "{v} owns the {s} component.", "The {s} component belongs to {v}."),
    _pair("library_pin", "version", "version", "pins.{s}", "the version {s} is pinned to",
          "{s} is pinned to {v}.", "Keep {s} at {v}."),
    _pair("milestone_due", "deadline", "date", "milestones.{s}.due", "the due date of {s}",
          "The {s} milestone is due {v}.", "{s} has to ship by {v}."),
    _pair("tenant_cap", "limit", "rate", "limits.{s}", "the rate cap of tenant {s}",
          "Tenant {s} is capped at {v}.", "{s} gets at most {v}."),
    _pair("dataset_path", "path", "dir", "datasets.{s}", "the directory of the {s} dataset",
          "The {s} dataset lives in {v}.", "Read the {s} data from {v}."),
    _pair("subnet", "constraint", "cidr", "network.{s}.subnet", "the subnet {s} is confined to",
          "{s} must stay inside {v}.", "Everything in {s} is confined to {v}."),
    _pair("service_secret", "identifier", "secret", "secrets.{s}", "the secret {s} reads",
          "{s} authenticates with the secret named {v}.",
          "The secret {v} holds the credentials of {s}."),
    # a fact, then the same subject with another value
    _fix("worker_memory_cx", "quantity", "mib", "worker.memory_limit", "the worker memory limit",
         "config-shown-again",
         "The worker memory limit is {v}.", "Workers are capped at {v} of memory."),
    _fix("launch_date_cx", "deadline", "date", "launch.date", "the launch date",
         "email-go-with", "Launch is {v}.", "We launch on {v}."),
    _fix("target_branch_cx", "preference", "branch", "ci.target_branch",
         "the branch pull requests should target", "pr-requested-changes",
         "Please target {v} with pull requests.", "PRs should go to {v}."),
    _fix("primary_zone_cx", "constraint", "zone", "placement.primary_zone",
         "the zone the primary database must stay in", "handoff-as-of-shift",
         "The primary database must stay in {v}.",
         "Keep the primary in {v}; failover targets are elsewhere."),
    _fix("parser_owner_cx", "owner", "person", "owners.parser", "the owner of the parser",
         "minutes-decision", "{v} owns the parser.", "Parser questions go to {v}, its owner."),
    _fix("api_image_cx", "version", "imagetag", "deploy.api_image", "the API image",
         "release-breaking-default", "The API runs {v}.", "Deploy the API as {v}."),
    _fix("pool_size_cx", "quantity", "workers", "search.worker_pool",
         "the search worker pool size", "csv-reexported",
         "The search cluster runs {v}.", "Size the search pool at {v}."),
    _fix("rollout_flag_cx", "decision", "flag", "rollout.gate_flag",
         "the flag gating the rollout", "http-patch",
         "The rollout is gated on {v}.", "We gate the rollout behind {v}."),
    _fix("escalation_email_cx", "owner", "email", "alerts.escalation_email",
         "the escalation address for billing alerts", "commit-with-trailers",
         "Billing alerts escalate to {v}.", "Send billing escalations to {v}."),
    _fix("collector_url_cx", "endpoint", "url", "telemetry.collector_url",
         "the telemetry collector URL", "configmap-applied",
         "Telemetry goes to {v}.", "The collector URL is {v}."),
    _fix("search_p99_cx", "quantity", "ms", "slo.search_p99", "the search p99 target",
         "assistant-recomputes",
         "Search must answer within {v} at p99.", "The p99 budget for search is {v}."),
    _fix("incident_channel_cx", "preference", "channel", "notify.incident_channel",
         "the channel for incident notes", "assistant-goes-by-user",
         "Post incident notes in {v}.", "Incident chatter belongs in {v}."),
    _fix("spend_cap_cx", "limit", "money", "billing.monthly_cap", "the monthly spend cap",
         "assistant-signed-source",
         "Monthly spend is capped at {v}.", "The spend cap is {v} per month."),
    _fix("archive_root_cx", "path", "dir", "archive.root", "the archive root",
         "assistant-inventory-table", "Archives go under {v}.", "The archive root is {v}."),
    _fix("interpreter_cx", "version", "version", "runtime.interpreter",
         "the interpreter version", "changelog-bumped",
         "Build with interpreter {v}.", "The interpreter is pinned at {v}."),
    _fix("error_budget_cx", "limit", "percent", "slo.error_budget", "the monthly error budget",
         "strikethrough",
         "The error budget is {v} per month.", "We can burn {v} of requests a month."),
    _fix("queue_choice_cx", "decision", "vendor", "queue.backend_choice", "the queue backend",
         "poll-result", "We are going with {v} for the queue.", "The queue runs on {v}."),
    _fix("freeze_window_cx", "prohibition", "window", "deploy.freeze_window",
         "the deploy freeze window", "voice-self-correction",
         "No deploys during {v}.", "Deploys are blocked {v}."),
    _fix("cache_endpoint_cx", "endpoint", "hostport", "cache.endpoint", "the cache endpoint",
         "sed-in-place", "The cache is at {v}.", "Connect to the cache on {v}."),
    _fix("export_timeout_cx", "limit", "duration", "export.timeout", "the export job timeout",
         "git-word-diff",
         "Export jobs time out after {v}.", "The exporter gives up after {v}."),
    _fix("incident_ticket_cx", "identifier", "ticket", "tracking.incident_ticket",
         "the incident ticket", "field-history",
         "The incident is tracked in {v}.", "Log everything about the incident against {v}."),
    _fix("backup_schedule_cx", "constraint", "cron", "backup.schedule", "the backup schedule",
         "previous-value-response",
         "Backups must run on the schedule {v}.",
         "The backup cron is {v}; nothing else may hold that slot."),
    _fix("default_plan_cx", "decision", "word", "accounts.default_plan",
         "the default plan for sign-ups", "migration-down-step",
         "Sign-ups land on the {v} plan.", "The default plan is {v}."),
    _fix("protected_host_cx", "prohibition", "host", "migrations.protected_host",
         "the host migrations must never touch", "assistant-misread",
         "Never point migrations at {v}.", "{v} is off limits for migrations."),
    _fix("deploy_secret_cx", "identifier", "secret", "deploy.secret_name",
         "the secret the deploy job reads", "assistant-rechecks",
         "The deploy job reads its key from the secret {v}.",
         "Deploy credentials live in the secret {v}."),
    _fix("batch_size_cx", "limit", "rows", "import.batch_size", "the import batch size",
         "assistant-picks-option",
         "Import in batches of at most {v}.", "The importer commits every {v}."),
    _fix("upload_dir_cx", "path", "dir", "uploads.dir", "the upload directory",
         "assistant-side-by-side",
         "Uploads are stored in {v}.", "The upload directory is {v}."),
)  # fmt: skip
BY_NAME = {t.name: t for t in TEMPLATES}

# -- the recorded sessions ------------------------------------------------------------------------


@functools.cache
def _recorded() -> str | None:
    """The recorded sessions' text (``$ABRIDGED_SHARED`` or ``../shared``), if the file is there."""
    shared = os.environ.get("ABRIDGED_SHARED")
    base = Path(shared) if shared else ROOT.parent / "shared"
    path = base / "data" / "swebench-gemini3" / "trajectories.jsonl"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def in_recorded(text: str) -> bool:
    """Whether ``text`` occurs in the recorded sessions (never, without the file)."""
    recorded = _recorded()
    return recorded is not None and text in recorded


# -- plan -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Unit:
    """A template planted in one session, with the style of each of its canaries."""

    template: Template
    styles: tuple[str, ...]


@functools.lru_cache(maxsize=64)
def _plan(seed: int, count: int, sessions: int) -> tuple[tuple[Unit, ...], ...]:
    """The units of sessions ``0 .. sessions - 1`` (see the lab note's Plan)."""
    order = random.Random(f"{NAME}/{seed}/plan")
    style_order = random.Random(f"{NAME}/{seed}/styles")

    def stream() -> Any:
        while True:
            yield from order.sample(TEMPLATES, len(TEMPLATES))

    templates = stream()
    by_register = {
        reg: [s for s in GENERIC if STYLES[s] == reg] for reg in REGISTERS
    }  # in definition order
    queues: dict[str, list[str]] = {reg: [] for reg in REGISTERS}
    turn = itertools.count()

    def next_style() -> str:
        register = REGISTERS[next(turn) % len(REGISTERS)]
        queue = queues[register]
        if not queue:
            queue.extend(style_order.sample(by_register[register], len(by_register[register])))
        return queue.pop(0)

    pending: list[Template] = []
    out: list[tuple[Unit, ...]] = []
    for _ in range(sessions):
        units: list[Unit] = []
        used: set[str] = set()
        room = count
        waiting, pending = pending, []
        while room > 0:
            t = waiting.pop(0) if waiting else next(templates)
            if t.name in used or t.size > room:
                pending.append(t)
                continue
            used.add(t.name)
            room -= t.size
            if t.shape == "single":
                styles: tuple[str, ...] = (next_style(),)
            elif t.shape == "coexist":
                styles = (next_style(), next_style())
            else:
                assert t.phrasing is not None
                p = PHRASINGS[t.phrasing]
                styles = (p.style if p.first is not None else next_style(), p.style)
            units.append(Unit(t, styles))
        pending.extend(waiting)
        out.append(tuple(units))
    return tuple(out)


# -- generating -----------------------------------------------------------------------------------

_WAS = re.compile(r"\(was [^()\n]*\)")


def _fact(t: Template, say: str, value: str, subject: str = "") -> Fact:
    fields = {"v": value, "s": subject}
    return Fact(t.key.format(**fields), t.label.format(**fields), _cap(say.format(**fields)), value)


def _at(r: random.Random, low: float, high: float) -> float:
    return round(r.uniform(low, high), 4)


def _make(unit: Unit, r: random.Random, slot: int) -> list[dict[str, Any]]:
    """The canaries of one unit, drawn from ``r``."""
    t = unit.template
    form = FORMS[t.form]
    base = {"template": t.name}
    ident = f"h{slot:02d}"
    if t.shape == "single":
        f = _fact(t, r.choice(t.says), form(r))
        style = unit.styles[0]
        text = GENERIC[style](f, r)
        return [
            {"id": ident, "kind": t.kind, "at": _at(r, 0.03, 0.94), "text": text,
             "keep": [f.value], "style": style, **base}
        ]  # fmt: skip
    if t.shape == "coexist":
        subjects = [_word(r), _word(r)]
        out = []
        for i, (subject, style) in enumerate(zip(subjects, unit.styles, strict=True)):
            f = _fact(t, r.choice(t.says), form(r), subject)
            me, other = f"{ident}{'ab'[i]}", f"{ident}{'ba'[i]}"
            out.append(
                {"id": me, "kind": t.kind, "at": _at(r, 0.03, 0.94),
                 "text": GENERIC[unit.styles[i]](f, r), "keep": [f.value], "style": style,
                 "coexists": other, **base}
            )  # fmt: skip
        return out
    assert t.phrasing is not None
    p = PHRASINGS[t.phrasing]
    say = r.choice(t.says)
    old, new = _fact(t, say, form(r)), _fact(t, say, form(r))
    shared = r.getrandbits(48)
    first_text = p.first(old, shared) if p.first is not None else GENERIC[unit.styles[0]](old, r)
    first_at = _at(r, 0.04, 0.55)
    return [
        {"id": f"{ident}a", "kind": t.kind, "at": first_at, "text": first_text,
         "keep": [old.value], "style": unit.styles[0], **base},
        {"id": f"{ident}b", "kind": "correction",
         "at": round(first_at + r.uniform(0.12, 0.38), 4),
         "text": p.render(old, new, r, shared), "keep": [new.value], "style": p.style,
         "supersedes": f"{ident}a", "phrasing": p.name, **base},
    ]  # fmt: skip


def _clean(text: str) -> bool:
    """Nothing in ``text`` reads as a replaced-marker or closes a text-protocol output."""
    return (
        "[superseded" not in text
        and not _WAS.search(text)
        and "</output" not in text
        and "\r" not in text
    )


def shape(value: str) -> str:
    """``value`` with each run of digits, capitals and small letters blurred to one symbol: the
    two values of a pair have one shape (``/srv/kelvo/dra-12`` and ``/srv/zum/pira-40``)."""
    value = re.sub(r"[0-9]+", "9", value)
    return re.sub(r"[a-z]+", "a", re.sub(r"[A-Z]+", "A", value))


def _fits(made: list[dict[str, Any]], accepted: list[dict[str, Any]], unit: Unit) -> bool:
    """Whether a drawn unit can join the accepted canaries (see the lab note's Values)."""
    keeps = [c["keep"][0] for c in made]
    if any(not _clean(c["text"]) or c["keep"][0] not in c["text"] for c in made):
        return False
    for k in keeps:
        if any(k in c["text"] for c in accepted):
            return False
    for c in accepted:
        if any(c["keep"][0] in m["text"] for m in made):
            return False
    if len(made) == 2:
        a, b = made
        ka, kb = keeps
        if ka in kb or kb in ka or kb in a["text"] or shape(ka) != shape(kb):
            return False
        names_old = ka in b["text"]
        if unit.template.shape == "correction":
            assert unit.template.phrasing is not None
            if names_old != PHRASINGS[unit.template.phrasing].names_old:
                return False
        elif names_old:
            return False
    return not any(in_recorded(k) for k in keeps)


def generate(seed: int, count: int = 24, variant: int = 0) -> dict[str, Any]:
    """Canaries for session ``variant`` of a run seeded ``seed``: ``count`` of them, in the shape
    ``bench/retention.py`` reads (``{"canaries": [...]}``), in order of ``at``."""
    if count < 1 or variant < 0:
        raise ValueError(f"count >= 1 and variant >= 0 (got {count}, {variant})")
    units = _plan(seed, count, variant + 1)[variant]
    accepted: list[dict[str, Any]] = []
    for slot, unit in enumerate(units):
        for attempt in range(1000):
            r = random.Random(f"{NAME}/{seed}/{variant}/{slot}/{unit.template.name}/{attempt}")
            made = _make(unit, r, slot)
            if _fits(made, accepted, unit):
                accepted.extend(made)
                break
        else:  # pragma: no cover - the value spaces are far larger than a session
            raise RuntimeError(f"no values fit for {unit.template.name} (seed {seed})")
    accepted.sort(key=lambda c: (c["at"], c["id"]))
    return {"name": NAME, "seed": seed, "variant": variant, "count": count, "canaries": accepted}
