"""Held-out canary generator "f": facts written the way people and agents write them at work.

Lab note (how this file was made, so that its figures can be trusted as held out). Written
blind, in one sitting, by a helper that had not seen how abridged remembers facts.

- Read: ``bench/retention.py`` (its canary contract: ``Canary``, ``canaries_from``, the keys
  ``id, kind, at, text, keep, supersedes, style, template, coexists``, ``CanarySource``,
  ``_generator``, ``insertion_step``, ``insert_canaries``, ``add_to_observation``,
  ``add_to_assistant``, ``wire_text``, ``strip_replaced``, ``presents_as_current``,
  ``KeepIndex``, ``score_context`` and the options of ``main``), ``tests/bench/support.py``,
  ``tests/bench/test_retention_generated.py``, ``tests/conftest.py``, ``pyproject.toml``; the
  recorded sessions in ``../shared/data/swebench-gemini3/`` only to check that no keep string
  occurs there by chance.
- Not read: anything under ``src/abridged/engine/summarize/``, anything under
  ``src/abridged/core/`` about facts or references, the other generators
  (``bench/canary_generator.py``, the other ``bench/heldout_canaries*.py``) and their tests, any
  canary JSON, ``bench/RESULTS.md``, git log messages, issue notes. No benchmark figure was looked
  at while writing; nothing here was tuned to a score.

Design.

- **Templates.** Three shapes: single facts (one canary), correction pairs (a first fact, then a
  later one giving the same subject another value; the later one's ``supersedes`` names the
  first), and coexisting pairs (two facts of the same shape about different subjects that both
  hold; each one's ``coexists`` names the other; both carry the pair's template name). Kinds:
  constraint, prohibition, preference, identifier, decision, quantity (a number with its unit),
  path, version, owner, deadline, endpoint, credential (a secret's *name*, never a value),
  limit. Each fact is written in a surface style of its own: stand-up notes, PR descriptions,
  review threads, runbooks, incident timelines, TOML, INI, protobuf/GraphQL comments, crontabs,
  HTTP dumps, pytest failures, CI logs, changelogs, spreadsheet pastes with tabs, chat shorthand
  with typos, quoted email replies, voice transcriptions, non-native English, diffs, meeting
  notes, commit messages, env files, tickets, build files, shell sessions, CODEOWNERS.
- **Corrections** mostly carry no marker word: a config file shown again with another value, a
  table re-pasted with one cell changed, a diff adding a production override, a commit shipping
  a flag under another name, a meeting recap with another date, a stand-up in which someone has
  picked the work up, an answer giving another number as if obvious. A correction never quotes
  the value it replaces.
- **Values** are made up per (seed, variant, slot, template): syllable words with a closing
  consonant, ids with five digits, hosts, ports, paths, versions with a three-digit patch,
  amounts with units, made-up surnames, dates in 2027-2028, URLs on made-up domains, upper-case
  secret names. Each is drawn from ``random.Random(f"heldout-f/{seed}/{variant}/...")``. A keep
  string is the fact's value only. A session's facts are redrawn until no keep string of one
  occurs in another's text.
- **Plan.** The templates are shuffled per seed (and per round of the cycle) and dealt to the
  sessions in order, ``count`` slots each (a pair takes two; a pair that does not fit a
  session's last slot waits for the next session, a single goes first): a run of 16 sessions
  with ``count >= 8`` plants every template. ``at`` spreads the facts over the session; a
  correction comes 0.1-0.35 of the session after its first fact.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

NAME = "heldout-f"

KINDS = (
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
    "credential",
    "limit",
)

# -- made-up values -------------------------------------------------------------------------------

_ONSETS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_CODAS = "klmnrsz"
_FIRST = (
    "Aigerim",
    "Tomasz",
    "Folake",
    "Priyanka",
    "Henrik",
    "Mei-Ling",
    "Oluwaseun",
    "Rafaela",
    "Dmitri",
    "Siobhan",
    "Kenji",
    "Ngozi",
    "Ines",
    "Yusuf",
    "Astrid",
    "Thandiwe",
    "Mateus",
    "Leilani",
    "Goran",
    "Bettina",
)
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


class Draw:
    """Made-up values from one random stream."""

    def __init__(self, rng: random.Random) -> None:
        self.r = rng

    def word(self, syllables: int = 3) -> str:
        """A pronounceable made-up word ending in a consonant (``kavurel``)."""
        r = self.r
        body = "".join(r.choice(_ONSETS) + r.choice(_VOWELS) for _ in range(syllables))
        return body + r.choice(_CODAS)

    def cap(self, syllables: int = 3) -> str:
        return self.word(syllables).capitalize()

    def upper(self, syllables: int = 3) -> str:
        return self.word(syllables).upper()

    def person(self) -> str:
        return f"{self.r.choice(_FIRST)} {self.cap()}"

    def number(self, low: int, high: int) -> int:
        return self.r.randint(low, high)

    def ident(self, prefix: str | None = None) -> str:
        if prefix is None:
            prefix = "".join(self.r.choice("BCDFGHJKLMNPQRSTVWXZ") for _ in range(3))
        return f"{prefix}-{self.r.randint(10000, 99999)}"

    def hexid(self, n: int) -> str:
        return "".join(self.r.choice("0123456789abcdef") for _ in range(n))

    def host(self, role: str) -> str:
        return f"{self.word(2)}-{role}{self.r.randint(10, 99)}.{self.word(2)}.internal"

    def port(self) -> int:
        return self.r.randint(20000, 64999)

    def version(self) -> str:
        r = self.r
        return f"{r.randint(2, 9)}.{r.randint(11, 59)}.{r.randint(101, 389)}"

    def package(self) -> str:
        return f"{self.word(2)}-{self.word(1)}"

    def day(self) -> dt.date:
        return dt.date(2027, 1, 4) + dt.timedelta(days=self.r.randint(0, 640))

    def iso(self) -> str:
        return self.day().isoformat()

    def long_us(self, d: dt.date | None = None) -> str:
        d = d or self.day()
        return f"{_MONTHS[d.month - 1]} {d.day}, {d.year}"

    def slip(self) -> tuple[dt.date, dt.date]:
        """A date and a later one (a date slipping by 2 to 40 days)."""
        first = self.day()
        return first, first + dt.timedelta(days=self.r.randint(2, 40))

    def long_eu(self) -> str:
        d = self.day()
        return f"{d.day} {_MONTHS[d.month - 1]} {d.year}"

    def spoken(self) -> str:
        d = self.day()
        n = d.day
        suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
        return f"{n}{suffix} of {_MONTHS[d.month - 1]} {d.year}"

    def url(self) -> str:
        return f"https://api.{self.word(2)}{self.word(1)}.net/v{self.r.randint(2, 6)}/{self.word()}"

    def pick(self, *options: str) -> str:
        return self.r.choice(options)


# -- templates ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fact:
    """One planted fact as written: its kind, surface style, text and the strings to keep."""

    kind: str
    style: str
    text: str
    keep: tuple[str, ...]


Maker = Callable[[Draw], list[Fact]]


@dataclass(frozen=True, slots=True)
class Template:
    name: str
    shape: str  # "single", "correction" (first, later) or "coexist" (both hold)
    make: Maker

    @property
    def size(self) -> int:
        return 1 if self.shape == "single" else 2


TEMPLATES: list[Template] = []


def _template(shape: str) -> Callable[[Maker], Maker]:
    def register(make: Maker) -> Maker:
        TEMPLATES.append(Template(make.__name__.lstrip("_"), shape, make))
        return make

    return register


single = _template("single")
correction = _template("correction")
coexist = _template("coexist")


def F(kind: str, style: str, text: str, *keep: str) -> list[Fact]:  # noqa: N802
    return [Fact(kind, style, text, keep)]


# ---- single facts: constraint


@single
def _constraint_runbook(v: Draw) -> list[Fact]:
    host = v.host("bastion")
    svc = v.word()
    return F(
        "constraint",
        "runbook",
        f"Runbook: rebuilding the {svc} search index\n"
        f"1. Announce in #{v.word(2)}-ops and set the maintenance banner.\n"
        f"2. SSH to the bastion first. The reindex job is only allowed to run from {host}; "
        "the cluster ACLs drop it from anywhere else.\n"
        "3. ./reindex --shards all --throttle 40\n"
        "4. Watch the lag panel until it is back under a minute.",
        host,
    )


@single
def _constraint_pr(v: Draw) -> list[Fact]:
    header = f"X-{v.cap()}-Trace"
    return F(
        "constraint",
        "pr_description",
        f"### What\nMoves the {v.word()} parser behind a feature gate.\n\n"
        "### Constraints\n"
        f"- Every outbound call has to carry the `{header}` header; the partner proxy drops "
        "anything without it.\n"
        "- No schema changes in this PR.",
        header,
    )


@single
def _constraint_nonnative(v: Draw) -> list[Fact]:
    prefix = f"{v.word()}-{v.number(100, 999)}-"
    return F(
        "constraint",
        "non_native",
        "Hello, one important thing for the export: the file names must to start always with "
        f"the prefix {prefix} , because the old mainframe of {v.cap()} team is reading only "
        "these and the other ones it is ignoring them silently.",
        prefix,
    )


@single
def _constraint_proto(v: Draw) -> list[Fact]:
    limit = f"{v.number(3100, 61000)} bytes"
    return F(
        "constraint",
        "schema_comment",
        f"message {v.cap()}Request {{\n"
        f"  // Must stay below {limit} once serialized: the {v.word()} gateway rejects bigger "
        "frames.\n"
        "  bytes payload = 1;\n"
        "  string tenant = 2;\n"
        "}",
        limit,
    )


# ---- single facts: prohibition


@single
def _prohibition_chat(v: Draw) -> list[Fact]:
    path = f"{v.word()}/generated/{v.word(2)}_tables.py"
    return F(
        "prohibition",
        "chat_shorthand",
        f"pls dont touch {path} - its generated by {v.word(2)}gen, any hand edit gets wiped + "
        "breaks the nightly. thx",
        path,
    )


@single
def _prohibition_email(v: Draw) -> list[Fact]:
    table = f"{v.word()}_ledger_{v.number(10, 99)}"
    return F(
        "prohibition",
        "email_quote",
        f"> Can I rerun the backfill against {table} tonight? Should take ~20 min.\n\n"
        f"Please don't. {table} is read by the finance close until Friday; nothing writes to it "
        f"from our side this week.\n\n-- {v.r.choice(_FIRST)}",
        table,
    )


@single
def _prohibition_review(v: Draw) -> list[Fact]:
    func = f"{v.word(2)}_{v.word()}"
    return F(
        "prohibition",
        "review_thread",
        f"{v.person()} commented on src/{v.word()}/handlers.py line {v.number(40, 300)}:\n"
        f"> Never call `{func}()` from a request handler: it takes the global lock and p99 "
        "falls over. Move it to the worker.\n"
        f"{v.person()} replied:\n> ack, moving it",
        func,
    )


@single
def _prohibition_ticket(v: Draw) -> list[Fact]:
    bucket = f"{v.word()}-hold-{v.number(10, 99)}"
    return F(
        "prohibition",
        "ticket",
        f"{v.ident()}: Archive cold {v.word()} events\nPriority: P3\nAcceptance criteria:\n"
        "- events older than 180 days land in cold storage\n"
        f"- nothing is written to the {bucket} bucket, it is under legal hold",
        bucket,
    )


# ---- single facts: preference


@single
def _preference_standup(v: Draw) -> list[Fact]:
    lib = f"{v.word()}-fixtures"
    return F(
        "preference",
        "standup",
        f"standup {v.r.choice(_FIRST)}\n"
        "y: finished the flaky retry test\n"
        f"t: migrating fixtures. fyi we're using {lib} for test data from here on, the old "
        "factory helpers are frozen\n"
        "b: none",
        lib,
    )


@single
def _preference_review(v: Draw) -> list[Fact]:
    prefix = v.word()
    pattern = f"{prefix}_*.py"
    return F(
        "preference",
        "review_thread",
        f"{v.person()}:\n> nit (non-blocking): helper modules in this codebase are named "
        f"{pattern}, e.g. {prefix}_dates.py. Could you rename utils2.py to match?\n"
        f"{v.person()}:\n> sure",
        pattern,
    )


@single
def _preference_voice(v: Draw) -> list[Fact]:
    logger = f"{v.word()}.audit.{v.word(2)}"
    return F(
        "preference",
        "voice_transcript",
        "yeah so about the logging I'd really rather we go through the audit logger the one "
        f"that's called {logger} and not just print stuff because then it ends up nowhere and "
        "nobody can grep it later okay so that one please",
        logger,
    )


# ---- single facts: identifier


@single
def _identifier_incident(v: Draw) -> list[Fact]:
    inc = v.ident("INC")
    return F(
        "identifier",
        "incident_timeline",
        "Incident timeline (UTC)\n"
        f"02:14  alerts fire: {v.word()} 5xx above 8%\n"
        f"02:19  on-call acks, opens {inc}\n"
        "02:31  rollback started\n"
        "02:47  error rate back to baseline",
        inc,
    )


@single
def _identifier_tsv(v: Draw) -> list[Fact]:
    acct = f"acct-{v.word()}-{v.number(1000, 9999)}"
    return F(
        "identifier",
        "tsv_paste",
        "env\taccount\tregion\towner\n"
        f"staging\t{acct}\teu-central-1\t{v.word()}-team\n"
        "prod\t(ask security)\teu-central-1\tplatform",
        acct,
    )


@single
def _identifier_commit(v: Draw) -> list[Fact]:
    ticket = v.ident()
    return F(
        "identifier",
        "commit_message",
        f"{v.word()}: retry idempotent uploads once\n\n"
        "The load balancer can reset a connection mid-upload; one retry is safe for PUTs.\n\n"
        f"Refs: {ticket}",
        ticket,
    )


@single
def _identifier_graphql(v: Draw) -> list[Fact]:
    tenant = f"tn_{v.hexid(10)}"
    return F(
        "identifier",
        "schema_comment",
        '"""\n'
        f'Tenant of the contract tests: always query staging with tenantId: "{tenant}".\n'
        '"""\n'
        f"type {v.cap()}Account {{\n  id: ID!\n  tenantId: String!\n}}",
        tenant,
    )


@single
def _identifier_ci(v: Draw) -> list[Fact]:
    artifact = v.hexid(14)
    build = v.number(1000, 9999)
    return F(
        "identifier",
        "ci_log",
        f"[build {build}] packaging wheel\n"
        f"[build {build}] artifact uploaded: id={artifact} size={v.number(11, 90)}.4MB\n"
        f"[build {build}] downstream deploy jobs must reference this artifact id",
        artifact,
    )


# ---- single facts: decision


@single
def _decision_meeting(v: Draw) -> list[Fact]:
    option = f"{v.word()}-queue"
    return F(
        "decision",
        "meeting_recap",
        "Notes, arch sync\n"
        f"- attendees: {v.r.choice(_FIRST)}, {v.r.choice(_FIRST)}, {v.r.choice(_FIRST)}\n"
        f"- job queue backend: {option}. ADR to follow.\n"
        "- retry budget: parked until next week",
        option,
    )


@single
def _decision_email(v: Draw) -> list[Fact]:
    fmt = f"{v.word(2)}pack-v{v.number(2, 9)}"
    return F(
        "decision",
        "email_quote",
        "> So which serialization do we standardise on for the event bus?\n\n"
        f"We settled it on the call: {fmt} for every new topic, the legacy topics stay as "
        "they are.",
        fmt,
    )


@single
def _decision_changelog(v: Draw) -> list[Fact]:
    store = f"{v.word()}-store"
    return F(
        "decision",
        "changelog",
        "## Unreleased\n### Changed\n"
        f"- Sessions are kept in the {store} backend by default (ADR-{v.number(10, 99)}).\n"
        "### Fixed\n- Logging out clears the refresh cookie.",
        store,
    )


# ---- single facts: quantity


@single
def _quantity_toml(v: Draw) -> list[Fact]:
    timeout = f"{v.number(1001, 8999)}s"
    return F(
        "quantity",
        "toml",
        f"# {v.word()}/worker.toml\n[worker]\nconcurrency = 6\n"
        f'visibility_timeout = "{timeout}"\nprefetch = 1',
        timeout,
    )


@single
def _quantity_pytest(v: Draw) -> list[Fact]:
    cap = v.number(2_100_000, 9_900_000)
    body = cap + v.number(1000, 90000)
    keep = f"{cap} bytes"
    mod = v.word()
    return F(
        "quantity",
        "pytest_failure",
        "________________________ test_large_upload ________________________\n"
        "    def test_large_upload(client):\n"
        ">       assert resp.status_code == 201\n"
        "E       assert 413 == 201\n"
        "------------------------ Captured log call ------------------------\n"
        f"WARNING  {mod}.upload:upload.py:88 body of {body} bytes is over the limit of {keep}",
        keep,
    )


@single
def _quantity_voice(v: Draw) -> list[Fact]:
    heap = f"{v.number(11, 47)}.{v.number(1, 9)} GiB"
    return F(
        "quantity",
        "voice_transcript",
        f"and for the {v.word()} box we gave the heap {heap} exactly not more because the node "
        "is small and the sidecar needs what's left so don't bump it without asking",
        heap,
    )


@single
def _quantity_http(v: Draw) -> list[Fact]:
    cost = f"{v.number(101, 999)} credits"
    return F(
        "quantity",
        "http_dump",
        f"POST /v2/{v.word()}/render HTTP/1.1\nContent-Type: application/json\n\n"
        "HTTP/1.1 202 Accepted\n"
        f"X-{v.cap()}-Cost: {cost}\n\n"
        '{"status": "queued"}',
        cost,
    )


# ---- single facts: path


@single
def _path_crontab(v: Draw) -> list[Fact]:
    path = f"/opt/{v.word()}/bin/{v.word(2)}-rotate"
    return F(
        "path",
        "crontab",
        "# m h dom mon dow user  command\n"
        "*/15 * * * *  app   /usr/local/bin/healthcheck\n"
        f"{v.number(0, 59)} 3 * * *  {v.word(2)}  {path} --prune --keep 14",
        path,
    )


@single
def _path_dockerfile(v: Draw) -> list[Fact]:
    path = f"/var/lib/{v.word()}/{v.word(2)}"
    return F(
        "path",
        "build_file",
        "FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\n"
        f"ENV {v.upper(2)}_DATA_DIR={path}\nRUN pip install --no-cache-dir -e .",
        path,
    )


@single
def _path_ini(v: Draw) -> list[Fact]:
    path = f"/var/log/{v.word()}/{v.word(2)}.log"
    return F(
        "path",
        "ini",
        f"; {v.word()}.ini\n[logging]\nlevel = INFO\nfile = {path}\nrotate = daily",
        path,
    )


@single
def _path_chat(v: Draw) -> list[Fact]:
    path = f"~/scratch/{v.word()}/{v.word(2)}_{v.number(100, 999)}.sql.gz"
    return F(
        "path",
        "chat_shorthand",
        f"the prod dump is at {path} btw, ~3gb, dont open it in vscode lol",
        path,
    )


# ---- single facts: version


@single
def _version_changelog(v: Draw) -> list[Fact]:
    version = v.version()
    return F(
        "version",
        "changelog",
        f"## [{version}] - {v.iso()}\n### Added\n- `--{v.word()}` flag for dry runs\n"
        "### Fixed\n- Exit code 3 on a partial sync",
        version,
    )


@single
def _version_ci(v: Draw) -> list[Fact]:
    pkg, version = v.package(), v.version()
    return F(
        "version",
        "ci_log",
        f"Step 4/9 : RUN pip install {pkg}=={version}\n"
        f"Successfully installed {pkg}-{version}\n"
        f"note: the pipeline pins {pkg}; bump it only together with the lockfile",
        version,
    )


@single
def _version_pr(v: Draw) -> list[Fact]:
    pkg, version = v.package(), v.version()
    return F(
        "version",
        "pr_description",
        f"Bumps {pkg} to {version}.\n\n"
        "<details><summary>Release notes</summary>\n\n- fix race in pool shutdown\n</details>\n\n"
        "Dependabot will resolve any conflicts with this PR as long as you don't alter it.",
        version,
    )


@single
def _version_nonnative(v: Draw) -> list[Fact]:
    version = v.version()
    return F(
        "version",
        "non_native",
        f"For the test environment we are staying on the {v.cap()} server version {version}, "
        "the newer one is not validated yet from our QA, so please you don't upgrade it.",
        version,
    )


# ---- single facts: owner


@single
def _owner_ticket(v: Draw) -> list[Fact]:
    person = v.person()
    return F(
        "owner",
        "ticket",
        f"{v.ident()}  [{v.word()}] cert renewal fails on the second hop\n"
        f"Status: In Progress\nAssignee: {person}\nLabels: tls, ops",
        person,
    )


@single
def _owner_standup(v: Draw) -> list[Fact]:
    person = v.person()
    return F(
        "owner",
        "standup",
        f"{v.r.choice(_FIRST)}: reviews + the dashboard PR\n"
        f"{v.r.choice(_FIRST)}: out tomorrow\n"
        f"{person} is point on the {v.word()} migration, route questions there",
        person,
    )


@single
def _owner_proto(v: Draw) -> list[Fact]:
    person = v.person()
    return F(
        "owner",
        "schema_comment",
        f"// Owned by {person} (#team-{v.word(2)}). Ask before renumbering fields.\n"
        f"service {v.cap()}Billing {{\n  rpc Charge(ChargeRequest) returns (ChargeReply);\n}}",
        person,
    )


@single
def _owner_codeowners(v: Draw) -> list[Fact]:
    handle = f"@{v.word()}-{v.word(2)}"
    return F(
        "owner",
        "codeowners",
        f"# CODEOWNERS\n*.md  @docs-team\n/services/{v.word()}/  {handle}\n/infra/  @platform",
        handle,
    )


# ---- single facts: deadline


@single
def _deadline_email(v: Draw) -> list[Fact]:
    date = v.long_us()
    return F(
        "deadline",
        "email_quote",
        f"> When do you need the {v.word()} numbers?\n\n"
        f"By {date} at the latest, the board pack goes out the day after.",
        date,
    )


@single
def _deadline_chat(v: Draw) -> list[Fact]:
    date = v.iso()
    return F(
        "deadline",
        "chat_shorthand",
        f"fyi the {v.word()} cert expires {date} so we rly need the renewal merged b4 that",
        date,
    )


@single
def _deadline_meeting(v: Draw) -> list[Fact]:
    date = v.long_eu()
    return F(
        "deadline",
        "meeting_recap",
        f"Planning notes\n- {v.cap()} GA: {date}; docs freeze one week before\n"
        "- pricing: no change",
        date,
    )


@single
def _deadline_voice(v: Draw) -> list[Fact]:
    date = v.spoken()
    return F(
        "deadline",
        "voice_transcript",
        f"so the vendor said they shut the old {v.word()} endpoint down on the {date} so "
        "everything has to be moved over before then otherwise the nightly sync just dies",
        date,
    )


# ---- single facts: endpoint


@single
def _endpoint_http(v: Draw) -> list[Fact]:
    target = f"{v.host('api')}:{v.port()}"
    return F(
        "endpoint",
        "http_dump",
        f"> POST /v3/{v.word()}/events HTTP/1.1\n> Host: {target}\n"
        "> Content-Type: application/json\n>\n< HTTP/1.1 202 Accepted\n< Content-Length: 0",
        target,
    )


@single
def _endpoint_env(v: Draw) -> list[Fact]:
    url = v.url()
    name = v.upper(2)
    return F(
        "endpoint",
        "env_file",
        f"# {v.word()} sandbox\n{name}_API_URL={url}\n{name}_TIMEOUT=30",
        url,
    )


@single
def _endpoint_graphql(v: Draw) -> list[Fact]:
    url = f"wss://{v.word()}.{v.word(2)}.net/graphql/ws"
    return F(
        "endpoint",
        "schema_comment",
        f"# Subscriptions are served from {url}, not through the HTTP gateway.\n"
        "type Subscription {\n  orderUpdated(id: ID!): Order!\n}",
        url,
    )


@single
def _endpoint_runbook(v: Draw) -> list[Fact]:
    url = f"https://{v.word()}-admin.{v.word(2)}.net:{v.port()}"
    return F(
        "endpoint",
        "runbook",
        "Failover checklist\n"
        f"1. Check health: curl -fsS {url}/healthz\n"
        "2. If it is red, flip the DNS weight to the standby.\n"
        "3. Post the status in the incident channel.",
        url,
    )


# ---- single facts: credential (names only)


@single
def _credential_env(v: Draw) -> list[Fact]:
    name = f"{v.upper()}_DEPLOY_TOKEN"
    return F(
        "credential",
        "env_file",
        f"# never commit real values\n{name}=<from vault: kv/ci/{v.word()}>\nLOG_LEVEL=info",
        name,
    )


@single
def _credential_runbook(v: Draw) -> list[Fact]:
    key = f"{v.word()}/release-signing-{v.number(10, 99)}"
    return F(
        "credential",
        "runbook",
        "Release\n1. Tag the commit.\n"
        f"2. Fetch the signing key named {key} from the vault; the script reads it from "
        "the environment.\n3. ./release.sh --sign",
        key,
    )


@single
def _credential_ci(v: Draw) -> list[Fact]:
    name = f"{v.upper()}_PUBLISH_KEY"
    return F(
        "credential",
        "ci_log",
        f"##[group]Run ./publish.sh\nenv:\n  {name}: ***\n##[endgroup]\n"
        f"publish: using secret {name} from the org settings",
        name,
    )


@single
def _credential_nonnative(v: Draw) -> list[Fact]:
    account = f"svc-{v.word()}-ro"
    return F(
        "credential",
        "non_native",
        f"For connect to the staging database you must use the service account {account}, the "
        "password is inside the vault, I will not paste it here of course.",
        account,
    )


# ---- single facts: limit


@single
def _limit_http(v: Draw) -> list[Fact]:
    policy = f"{v.number(120, 9900)};w=60"
    return F(
        "limit",
        "http_dump",
        f"GET /v1/{v.word()}/search?q=x HTTP/1.1\n\n"
        f"HTTP/1.1 429 Too Many Requests\nX-RateLimit-Policy: {policy}\nRetry-After: 12",
        policy,
    )


@single
def _limit_tsv(v: Draw) -> list[Fact]:
    quota = v.number(97, 960)
    keep = f"{quota} vCPU"
    return F(
        "limit",
        "tsv_paste",
        f"project\tquota\tused\n{v.word()}-batch\t{keep}\t{v.number(10, quota - 1)} vCPU",
        keep,
    )


@single
def _limit_chat(v: Draw) -> list[Fact]:
    keep = f"{v.number(13, 97)} concurrent runners"
    return F(
        "limit",
        "chat_shorthand",
        f"heads up: org limit is {keep} on {v.word()}, if u queue more they just sit there",
        keep,
    )


@single
def _limit_nonnative(v: Draw) -> list[Fact]:
    keep = f"{v.number(1100, 9900)} requests"
    return F(
        "limit",
        "non_native",
        f"The API of {v.cap()} is accepting maximum {keep} for minute for each key, more than "
        "this it give back 429 and block the key for one hour.",
        keep,
    )


# ---- correction pairs (first fact, then the later value)


def _pair(first: list[Fact], later: list[Fact]) -> list[Fact]:
    return [*first, *later]


@correction
def _fix_toml_listen(v: Draw) -> list[Fact]:
    svc = v.word()
    a, b = f"0.0.0.0:{v.port()}", f"0.0.0.0:{v.port()}"
    return _pair(
        F(
            "endpoint",
            "toml",
            f'# services/{svc}/config.toml\n[server]\nlisten = "{a}"\nworkers = 4',
            a,
        ),
        F(
            "endpoint",
            "shell_session",
            f"$ cat services/{svc}/config.toml\n[server]\n"
            f'listen = "{b}"\nworkers = 4\nkeepalive = 75',
            b,
        ),
    )


@correction
def _fix_tsv_owner(v: Draw) -> list[Fact]:
    svc, other = v.word(), v.word()
    a, b, x = v.person(), v.person(), v.person()
    pager = f"{svc}-oncall"
    rows = "service\towner\tpager\n{0}\n" + f"{other}\t{x}\t{other}-oncall"
    return _pair(
        F("owner", "tsv_paste", rows.format(f"{svc}\t{a}\t{pager}"), a),
        F("owner", "tsv_paste", rows.format(f"{svc}\t{b}\t{pager}"), b),
    )


@correction
def _fix_diff_timeout(v: Draw) -> list[Fact]:
    svc = v.word()
    a, b = f"{v.number(1100, 4000)}ms", f"{v.number(4100, 9800)}ms"
    return _pair(
        F(
            "quantity",
            "ini",
            f"; config/{svc}.ini\n[http]\nread_timeout = {a}\nmax_idle = 30",
            a,
        ),
        F(
            "quantity",
            "diff",
            f"--- a/config/{svc}.prod.ini\n+++ b/config/{svc}.prod.ini\n@@ -1,2 +1,4 @@\n"
            f" ; production overrides for {svc}\n [pool]\n+[http]\n+read_timeout = {b}",
            b,
        ),
    )


@correction
def _fix_commit_flag(v: Draw) -> list[Fact]:
    feature = v.word()
    a = f"enable_{feature}_{v.word(2)}_v{v.number(2, 9)}"
    b = f"{feature}_{v.word()}"
    return _pair(
        F(
            "identifier",
            "pr_description",
            f"## Rollout\nThe new {feature} flow is behind the feature flag {a}, default off.",
            a,
        ),
        F(
            "identifier",
            "commit_message",
            f"flags: ship the {feature} flow behind {b}\n\n"
            "Shorter name, asked for by product. All call sites and the flag service entry "
            "follow.",
            b,
        ),
    )


@correction
def _fix_meeting_date(v: Draw) -> list[Fact]:
    project = v.cap()
    a, b = (d.isoformat() for d in v.slip())
    return _pair(
        F("deadline", "chat_shorthand", f"ok so {project} launch is {a} per marketing", a),
        F(
            "deadline",
            "meeting_recap",
            f"Sync notes\n- {project} launch: {b} (legal review needs the extra days)\n"
            f"- pricing page: {v.r.choice(_FIRST)} drafts",
            b,
        ),
    )


@correction
def _fix_handover(v: Draw) -> list[Fact]:
    first_a = v.r.choice(_FIRST)
    a = f"{first_a} {v.cap()}"
    b = v.person()
    ticket = v.ident()
    svc = v.word()
    return _pair(
        F(
            "owner",
            "ticket",
            f"{ticket}  [{svc}] renewal cron silently skips expired certs\n"
            f"Status: To Do\nAssignee: {a}",
            a,
        ),
        F(
            "owner",
            "standup",
            f"{b}: picked up {ticket} ({svc} renewal) from {first_a}, who is on the payments "
            "team from this sprint. Repro works locally.",
            b,
        ),
    )


@correction
def _fix_email_slip(v: Draw) -> list[Fact]:
    a, b = (v.long_us(d) for d in v.slip())
    product = v.cap()
    return _pair(
        F(
            "deadline",
            "email_quote",
            f"> What's the code freeze for {product}?\n\n{a}. After that only blockers go in.",
            a,
        ),
        F(
            "deadline",
            "email_quote",
            f"> Are we on track for the {product} freeze?\n\n"
            f"Code freeze is {b}; QA asked for two more days on the upgrade path.",
            b,
        ),
    )


@correction
def _fix_reply_number(v: Draw) -> list[Fact]:
    svc = v.word()
    a, b = f"{v.number(101, 499)} MB", f"{v.number(501, 999)} MB"
    return _pair(
        F("limit", "chat_shorthand", f"max upload on {svc} is {a} fyi", a),
        F(
            "limit",
            "chat_shorthand",
            f"{v.r.choice(_FIRST)}: whats the upload cap on {svc} again?\n"
            f"{v.r.choice(_FIRST)}: {b}, same as prod",
            b,
        ),
    )


@correction
def _fix_requirements(v: Draw) -> list[Fact]:
    pkg = v.package()
    a, b = v.version(), v.version()
    return _pair(
        F("version", "build_file", f"# requirements.txt\n{pkg}=={a}\nrequests>=2.31", a),
        F(
            "version",
            "build_file",
            f"# requirements.txt\n{pkg}=={b}  # CVE-2027-{v.number(10000, 49999)}\nrequests>=2.31",
            b,
        ),
    )


@correction
def _fix_curl_endpoint(v: Draw) -> list[Fact]:
    svc = v.word()
    name = svc.upper()
    a, b = v.url(), v.url()
    return _pair(
        F("endpoint", "env_file", f"{name}_API_URL={a}\n{name}_RETRIES=3", a),
        F(
            "endpoint",
            "shell_session",
            f'$ curl -s {b}/healthz\n{{"status": "ok", "service": "{svc}"}}\n'
            f"# that's where the {svc} API lives since the DC move",
            b,
        ),
    )


@correction
def _fix_cred_rename(v: Draw) -> list[Fact]:
    stem = v.upper()
    a, b = f"{stem}_DEPLOY_TOKEN", f"{stem}_CI_PUSH_KEY"
    return _pair(
        F(
            "credential",
            "runbook",
            f"Deploy\n1. export {a} (ask in #ops for access)\n2. ./deploy.sh staging",
            a,
        ),
        F(
            "credential",
            "env_file",
            f"# .env.example, read by deploy.sh\n{b}=\nDEPLOY_TARGET=staging",
            b,
        ),
    )


@correction
def _fix_crontab_path(v: Draw) -> list[Fact]:
    minute = v.number(0, 59)
    a = f"/opt/{v.word()}/bin/backup-{v.word(2)}"
    b = f"/srv/{v.word()}/jobs/backup-{v.word(2)}"
    line = f"{minute} 2 * * *  backup  {{0}} --target s3 --verify"
    return _pair(
        F("path", "crontab", "# m h dom mon dow user command\n" + line.format(a), a),
        F("path", "crontab", "$ crontab -l -u backup\n" + line.format(b), b),
    )


@correction
def _fix_quota_ticket(v: Draw) -> list[Fact]:
    project = f"{v.word()}-ml"
    low = v.number(97, 400)
    a, b = f"{low} vCPU", f"{low + v.number(100, 500)} vCPU"
    return _pair(
        F("limit", "tsv_paste", f"project\tquota\n{project}\t{a}", a),
        F(
            "limit",
            "ticket",
            f"{v.ident()}  Quota request for {project}\nStatus: Done\n"
            f"Resolution: granted, {b} in eu-west-4",
            b,
        ),
    )


@correction
def _fix_decision_pr(v: Draw) -> list[Fact]:
    svc = v.word()
    a, b = f"{v.word()}-mq", f"{v.word()}-streams"
    return _pair(
        F(
            "decision",
            "meeting_recap",
            f"Arch review\n- {svc} job queue: {a}\n- {v.r.choice(_FIRST)} writes it up",
            a,
        ),
        F(
            "decision",
            "pr_description",
            f"## Summary\nImplements the {svc} job queue on {b}, as agreed in Thursday's review.\n"
            "## Testing\n- load test at 2x peak",
            b,
        ),
    )


@correction
def _fix_incident_merge(v: Draw) -> list[Fact]:
    svc = v.word()
    a, b = v.ident("INC"), v.ident("INC")
    return _pair(
        F("identifier", "chat_shorthand", f"{svc} latency spike, tracking in {a}", a),
        F(
            "identifier",
            "incident_timeline",
            f"Incident {b}: {svc} latency (duplicate tickets closed into this one)\n"
            "03:10  p99 above 4s\n03:22  cache node restarted\n03:40  resolved",
            b,
        ),
    )


@correction
def _fix_formatter(v: Draw) -> list[Fact]:
    a, b = f"{v.word()}fmt", f"{v.word()}-format"
    return _pair(
        F(
            "preference",
            "standup",
            f"{v.r.choice(_FIRST)}: t: cleanup PR. reminder we format with {a} before pushing",
            a,
        ),
        F(
            "preference",
            "review_thread",
            f"{v.person()}:\n> ran black over it\n{v.person()}:\n"
            f"> this repo runs {b} in pre-commit, black's output will fight it",
            b,
        ),
    )


@correction
def _fix_freeze_scope(v: Draw) -> list[Fact]:
    a, b = f"{v.word()}-prod-{v.number(2, 9)}", f"{v.word()}-prod-{v.number(2, 9)}"
    return _pair(
        F("prohibition", "chat_shorthand", f"no deploys to {a} this wk, finance close", a),
        F(
            "prohibition",
            "ticket",
            f"CHG-{v.number(1000, 9999)}  Change freeze\nScope: {b}\n"
            "No deploys in scope until the audit signs off.",
            b,
        ),
    )


@correction
def _fix_batch_rows(v: Draw) -> list[Fact]:
    loader = v.word()
    a, b = f"{v.number(1100, 4900)} rows", f"{v.number(5100, 9800)} rows"
    return _pair(
        F(
            "constraint",
            "non_native",
            f"The batch for the {loader} loader must be maximum {a}, otherwise it is timeout.",
            a,
        ),
        F(
            "constraint",
            "non_native",
            f"I tried again with batches of {b} and it pass, more than this the {loader} loader "
            "is crashing, so please we keep this as the maximum.",
            b,
        ),
    )


@correction
def _fix_voice_bucket(v: Draw) -> list[Fact]:
    a, b = f"{v.word()}-exports-{v.number(10, 99)}", f"{v.word()}-exports-{v.number(10, 99)}"
    return _pair(
        F("path", "ini", f"[export]\nbucket = {a}\nformat = parquet", a),
        F(
            "path",
            "voice_transcript",
            f"and then you just drop the file in {b} that's the bucket the exports go to "
            "right yeah and the job picks it up at midnight",
            b,
        ),
    )


@correction
def _fix_db_name(v: Draw) -> list[Fact]:
    a, b = f"{v.word()}_main", f"{v.word()}_core"
    return _pair(
        F("identifier", "ini", f"[database]\nhost = db.internal\nname = {a}\npool = 10", a),
        F(
            "identifier",
            "ci_log",
            f"[migrate] connecting to db.internal/{b}\n"
            f"[migrate] {v.number(3, 40)} migrations applied to {b}\n[migrate] done",
            b,
        ),
    )


@correction
def _fix_proto_region(v: Draw) -> list[Fact]:
    msg = v.cap()
    a, b = f"{v.word()}-north-{v.number(1, 9)}", f"{v.word()}-west-{v.number(1, 9)}"
    body = (
        f"message {msg}Placement {{\n  // default region when unset: REGION\n"
        "  string region = 1;\n}"
    )
    return _pair(
        F("decision", "schema_comment", body.replace("REGION", a), a),
        F("decision", "schema_comment", body.replace("REGION", b), b),
    )


@correction
def _fix_http_ratelimit(v: Draw) -> list[Fact]:
    path = f"/v1/{v.word()}/lookup"
    a, b = f"{v.number(120, 900)};w=60", f"{v.number(1000, 9000)};w=60"
    return _pair(
        F(
            "limit",
            "http_dump",
            f"GET {path} HTTP/1.1\n\nHTTP/1.1 429 Too Many Requests\nX-RateLimit-Policy: {a}",
            a,
        ),
        F(
            "limit",
            "http_dump",
            f"GET {path} HTTP/1.1\n\nHTTP/1.1 200 OK\nX-RateLimit-Policy: {b}\n"
            "X-RateLimit-Remaining: 17",
            b,
        ),
    )


@correction
def _fix_pytest_attempts(v: Draw) -> list[Fact]:
    client = v.word()
    low = v.number(3, 6)
    a, b = f"{low} attempts", f"{low + v.number(3, 8)} attempts"
    return _pair(
        F(
            "quantity",
            "runbook",
            f"Client settings\n- the {client} client gives up after {a}\n- backoff doubles",
            a,
        ),
        F(
            "quantity",
            "pytest_failure",
            f"FAILED tests/test_{client}_client.py::test_gives_up_after_max_attempts\n"
            f"E   AssertionError: {client} client should stop after {b}, stopped after 2\n"
            "E   assert 2 == 0",
            b,
        ),
    )


@correction
def _fix_release_version(v: Draw) -> list[Fact]:
    svc = v.word()
    a, b = v.version(), v.version()
    return _pair(
        F("version", "ci_log", f"deploy: {svc} {a} rolled out to prod (3/3 pods ready)", a),
        F(
            "version",
            "changelog",
            f"## [{b}] - {v.iso()}\n### Fixed\n- {svc}: hotfix for the double-charge on retry",
            b,
        ),
    )


# ---- coexisting pairs (both hold)


@coexist
def _both_oncall(v: Draw) -> list[Fact]:
    s1, s2 = v.word(), v.word()
    a, b = v.person(), v.person()
    return [
        *F("owner", "standup", f"{s1} on-call this week: {a}; escalations to them", a),
        *F("owner", "chat_shorthand", f"and {s2} oncall this wk is {b} fyi", b),
    ]


@coexist
def _both_cache_hosts(v: Draw) -> list[Fact]:
    a = f"{v.host('cache')}:{v.port()}"
    b = f"{v.host('cache')}:{v.port()}"
    return [
        *F("endpoint", "ini", f"[cache.primary]\naddress = {a}\ntimeout = 2", a),
        *F("endpoint", "ini", f"[cache.replica]\naddress = {b}\nread_only = true", b),
    ]


@coexist
def _both_deadlines(v: Draw) -> list[Fact]:
    a, b = v.long_eu(), v.long_eu()
    d1, d2 = v.cap(), v.cap()
    return [
        *F("deadline", "meeting_recap", f"Roadmap\n- {d1} audit report due {a}", a),
        *F("deadline", "email_quote", f"> And {d2}?\n\n{d2} needs sign-off by {b}.", b),
    ]


@coexist
def _both_credentials(v: Draw) -> list[Fact]:
    a, b = f"{v.upper()}_STAGING_KEY", f"{v.upper()}_PROD_KEY"
    return [
        *F("credential", "env_file", f"# staging\nAPI_KEY_NAME={a}", a),
        *F("credential", "runbook", f"Prod deploys\n1. load the secret named {b} first", b),
    ]


@coexist
def _both_pins(v: Draw) -> list[Fact]:
    p1, p2 = v.package(), v.package()
    a, b = v.version(), v.version()
    return [
        *F("version", "build_file", f"# constraints.txt\n{p1}=={a}", a),
        *F("version", "ci_log", f"Collecting {p2}=={b}\nSuccessfully installed {p2}-{b}", b),
    ]


@coexist
def _both_paths(v: Draw) -> list[Fact]:
    a = f"/var/log/{v.word()}/{v.word(2)}.jsonl"
    b = f"/var/crash/{v.word()}/{v.word(2)}"
    return [
        *F("path", "crontab", f"5 * * * *  root  logship --from {a}", a),
        *F("path", "chat_shorthand", f"core dumps go to {b} on those boxes btw", b),
    ]


@coexist
def _both_limits(v: Draw) -> list[Fact]:
    svc = v.word()
    a, b = f"{v.number(30, 290)} req/min", f"{v.number(3000, 9000)} req/min"
    return [
        *F("limit", "tsv_paste", f"scope\tlimit\nper user ({svc})\t{a}", a),
        *F("limit", "http_dump", f"HTTP/1.1 200 OK\nX-{v.cap()}-Org-Limit: {b}", b),
    ]


STYLES: tuple[str, ...] = (
    "standup",
    "pr_description",
    "review_thread",
    "runbook",
    "incident_timeline",
    "toml",
    "ini",
    "schema_comment",
    "crontab",
    "http_dump",
    "pytest_failure",
    "ci_log",
    "changelog",
    "tsv_paste",
    "chat_shorthand",
    "email_quote",
    "voice_transcript",
    "non_native",
    "diff",
    "meeting_recap",
    "commit_message",
    "env_file",
    "ticket",
    "build_file",
    "shell_session",
    "codeowners",
)

BY_NAME = {t.name: t for t in TEMPLATES}


# -- the plan -------------------------------------------------------------------------------------


def _deck(seed: int) -> Iterator[Template]:
    """The templates, each round of the cycle shuffled anew from the seed."""
    round_ = 0
    while True:
        order = list(TEMPLATES)
        random.Random(f"{NAME}/{seed}/plan/{round_}").shuffle(order)
        yield from order
        round_ += 1


def plan(seed: int, count: int, variant: int) -> list[Template]:
    """The templates session ``variant`` plants: the seed's deck dealt ``count`` slots a session,
    in order; a pair that does not fit a session's last slot waits for the next session while
    the next single takes the slot (a session too small for any pair gets singles only)."""
    if count < 1 or variant < 0:
        raise ValueError("count must be >= 1 and variant >= 0")
    deck = _deck(seed)
    waiting: list[Template] = []  # drawn from the deck, not dealt yet, in deck order
    chosen: list[Template] = []
    for session in range(variant + 1):
        chosen = []
        room = count
        while room > 0:
            fit = next((t for t in waiting if t.size <= room), None)
            while fit is None:
                drawn = next(deck)
                waiting.append(drawn)
                if drawn.size <= room:
                    fit = drawn
            waiting.remove(fit)
            chosen.append(fit)
            room -= fit.size
        del session
    return chosen


# -- generate -------------------------------------------------------------------------------------


def _clashes(facts: list[Fact], taken: list[Fact]) -> bool:
    """Whether a keep string of one fact occurs in another fact's text (within ``facts`` or
    between ``facts`` and ``taken``)."""
    every = [*taken, *facts]
    for i, a in enumerate(every):
        for j, b in enumerate(every):
            fresh = i >= len(taken) or j >= len(taken)
            if i != j and fresh and any(k in b.text for k in a.keep):
                return True
    return False


def generate(seed: int, count: int = 24, variant: int = 0) -> dict[str, Any]:
    """The canaries of session ``variant`` of a run seeded ``seed``: ``count`` facts (pairs
    take two), in the shape ``retention.canaries_from`` reads."""
    taken: list[Fact] = []
    out: list[dict[str, Any]] = []
    for slot, template in enumerate(plan(seed, count, variant)):
        for attempt in range(200):
            rng = random.Random(f"{NAME}/{seed}/{variant}/{slot}/{template.name}/{attempt}")
            facts = template.make(Draw(rng))
            assert all(k and k in f.text for f in facts for k in f.keep), template.name
            if not _clashes(facts, taken):
                break
        else:  # pragma: no cover - 200 clashing draws of made-up words do not happen
            raise RuntimeError(f"{template.name}: no clash-free draw")
        taken.extend(facts)
        at = random.Random(f"{NAME}/{seed}/{variant}/{slot}/at")
        ids = [f"f{variant}-{len(out) + i:02d}" for i in range(len(facts))]
        if template.shape == "single":
            places = [round(at.uniform(0.03, 0.85), 3)]
        elif template.shape == "correction":
            first = at.uniform(0.03, 0.55)
            places = [round(first, 3), round(min(0.93, first + at.uniform(0.1, 0.35)), 3)]
        else:
            places = sorted(round(at.uniform(0.03, 0.85), 3) for _ in facts)
        for i, fact in enumerate(facts):
            item: dict[str, Any] = {
                "id": ids[i],
                "kind": fact.kind,
                "at": places[i],
                "text": fact.text,
                "keep": list(fact.keep),
                "style": fact.style,
                "template": template.name,
            }
            if template.shape == "correction" and i == 1:
                item["supersedes"] = ids[0]
            if template.shape == "coexist":
                item["coexists"] = ids[1 - i]
            out.append(item)
    out.sort(key=lambda c: c["at"])
    return {"generator": NAME, "seed": seed, "variant": variant, "canaries": out}


if __name__ == "__main__":  # pragma: no cover - a look at one session's facts
    import json
    import sys

    args = [int(a) for a in sys.argv[1:4]]
    print(json.dumps(generate(*args) if args else generate(0), indent=2))
