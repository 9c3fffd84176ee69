"""A fifth held-out canary generator, written blind: facts shaped as real agent sessions carry them.

Lab note (what was read while writing this, and nothing else of the project's memory code):
``bench/retention.py`` only for its contract, namely ``Canary`` and ``canaries_from`` (the keys
``id, kind, at, text, keep, supersedes, style, template, coexists``), ``CanarySource`` and
``_generator`` (a file defining ``generate(seed, count, variant)``), ``insertion_step``,
``insert_canaries`` with ``insert_in_output``, ``add_to_observation`` and ``add_to_assistant``
(how a canary's text becomes a user message, lines inside a tool observation, or the head of an
assistant message), ``wire_text``, ``strip_replaced``, ``presents_as_current``, ``KeepIndex``,
``score_context``, and the option list of its ``main`` (``--generator``, ``--seed``,
``--canary-count``, ``--limit``, ``--placements``, ``--jobs``); ``tests/bench/support.py`` and
``tests/bench/test_retention_generated.py`` (how a tiny run is invoked); ``tests/conftest.py``
(the ``swebench_path`` fixture); ``pyproject.toml`` (ruff and mypy settings); the README of the
recorded sessions under ``../shared/data/swebench-gemini3/`` and that file itself, only to check
that no keep string occurs in it by chance. Not read: anything under
``src/abridged/engine/summarize/``, the fact/reference code of ``src/abridged/core/``, the other
canary generators and their tests, any canary JSON file, ``bench/RESULTS.md``, git log messages
or issue notes. No score of this generator was looked at while it was written.

Design. A canary is a fact written the way a coding agent meets it: inside a SQL migration, an
XML or HCL config block, a systemd unit, an nginx server block, a Dockerfile or compose file, a
Makefile, a CSV export, shell exports, a Markdown table, a pasted Slack or email thread, a ticket
comment, source code, test runner output, a traceback, ``git`` output, a Kubernetes manifest, a
CLI table, service log lines or plain chat with the developer (``STYLES``). Each template
(``SINGLES``) writes one fact of one kind (``KINDS``) in one style, with a few lines of
plausible surrounding content in the same style; the keep strings are the fact's value only.

``CORRECTIONS`` are pairs: a first fact, then a later message that changes it, phrased each its
own way and mostly with no marker word: a change of plan naming only the new value, an old
slot declared cancelled, ownership moved in passing, a revert diff, a config reload log line, a
migration changing a column default, a re-run reporting a new number, a reply in a thread
overriding its parent, a terraform apply, a ``kubectl set image``, a ticket's field history, a
review suggestion, a Makefile ``override``, a re-run export, a later-loaded env file, an email
erratum, a superseding ADR row, and one plain "Correction:". The correction's ``supersedes``
names the first fact; its template is the phrasing, the first fact's template is
``<phrasing>/old``. ``PAIRS`` are two facts of the same shape about different subjects that both
hold (``coexists`` names the other one).

Values are made up per (seed, variant): syllable words (``zuvorek``), ids, hosts, ports, paths,
versions, amounts, names and timestamps with unround numbers. A session's facts are drawn with
``random.Random(f"heldout-e/{seed}/{variant}/{attempt}")``; when a keep string of one fact
occurs in another fact's text (a correction may quote the value it replaces), the whole set is
drawn again with the next attempt. Which templates a session gets is a plan over blocks of
``BLOCK`` sessions: every unit (single, correction pair, coexisting pair) comes once per round
in an order shuffled per (seed, block, round), and the sessions of a block take consecutive
slices of that sequence, so a 16-session run with ``count >= 8`` uses every template.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

BLOCK = 16
GENERATOR = "heldout_canaries_e"

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
    "endpoint",
    "deadline",
    "correction",
)
STYLES = (
    "sql",
    "xml",
    "hcl",
    "systemd",
    "nginx",
    "docker",
    "makefile",
    "csv",
    "env",
    "markdown",
    "thread",
    "ticket",
    "code",
    "test_output",
    "traceback",
    "git",
    "k8s",
    "cli_table",
    "log",
    "chat",
)

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_ENDS = ("k", "r", "n", "l", "s", "m", "v", "")
_HEX = "0123456789abcdef"


class Draw:
    """Fresh made-up values for one session's facts (no value twice in a session)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def _fresh(self, make: Callable[[], str]) -> str:
        while True:
            value = make()
            if value not in self.used:
                self.used.add(value)
                return value

    def word(self, syllables: int = 3) -> str:
        r = self.rng

        def make() -> str:
            body = "".join(r.choice(_CONSONANTS) + r.choice(_VOWELS) for _ in range(syllables))
            return body + r.choice(_ENDS)

        return self._fresh(make)

    def cap(self, syllables: int = 3) -> str:
        return self.word(syllables).capitalize()

    def name(self) -> str:
        return self._fresh(lambda: f"{self.cap(2)} {self.cap(3)}")

    def letters(self, n: int = 3) -> str:
        return self._fresh(lambda: "".join(self.rng.choice(_CONSONANTS.upper()) for _ in range(n)))

    def digits(self, n: int) -> str:
        """``n`` digits, no leading zero, not ending in 0, at least three different digits
        (two for ``n = 2``): an unround number."""
        r = self.rng
        distinct = min(3, n)

        def make() -> str:
            while True:
                s = str(r.randint(1, 9)) + "".join(str(r.randint(0, 9)) for _ in range(n - 1))
                if not s.endswith("0") and len(set(s)) >= distinct:
                    return s

        return self._fresh(make) if n >= 4 else make()  # short ones are parts of values

    def dec(self, whole: int, places: int) -> str:
        """A decimal with ``whole`` digits before the point and ``places`` after, unround."""
        return self._fresh(lambda: f"{self.digits(whole)}.{self.digits(places)}")

    def hx(self, n: int) -> str:
        r = self.rng

        def make() -> str:
            while True:
                s = "".join(r.choice(_HEX) for _ in range(n))
                if any(c.isalpha() for c in s) and any(c.isdigit() for c in s):
                    return s

        return self._fresh(make)

    def ident(self) -> str:
        return self._fresh(lambda: f"{self.letters(3)}-{self.digits(5)}")

    def version(self) -> str:
        r = self.rng
        return self._fresh(lambda: f"{r.randint(2, 9)}.{r.randint(11, 89)}.{r.randint(103, 987)}")

    def port(self) -> str:
        return self._fresh(lambda: str(self.rng.randint(20_011, 64_989)))

    def host(self, role: str) -> str:
        r = self.rng
        return self._fresh(
            lambda: f"{self.word(2)}-{role}-{r.randint(2, 39)}.{self.word(2)}.internal"
        )

    def stamp(self) -> str:
        """A UTC date and time (minutes in steps of 5, not on the hour)."""
        r = self.rng

        def make() -> str:
            return (
                f"{r.randint(2027, 2034)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d} "
                f"{r.randint(0, 23):02d}:{5 * r.randint(1, 11):02d}"
            )

        return self._fresh(make)

    def clocks(self, n: int) -> list[str]:
        """``n`` increasing wall-clock times of one day's chat lines (not keeps)."""
        r = self.rng
        minute = r.randint(8 * 60, 15 * 60)
        out = []
        for _ in range(n):
            out.append(f"{minute // 60:02d}:{minute % 60:02d}")
            minute += r.randint(1, 40)
        return out

    def clock(self) -> str:
        return self.clocks(1)[0]

    def log_times(
        self,
        n: int,
        gap_seconds: tuple[int, int] = (0, 3),
        first_gap: tuple[int, int] | None = None,
    ) -> list[str]:
        """``n`` increasing log timestamps of a past year (not keeps), ``gap_seconds`` apart
        (the first two ``first_gap`` apart when given)."""
        r = self.rng
        t = datetime(2025, r.randint(1, 12), r.randint(1, 27), r.randint(0, 11), r.randint(0, 59))
        t += timedelta(seconds=r.randint(0, 59), milliseconds=r.randint(0, 999))
        out = []
        for i in range(n):
            out.append(t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z")
            gap = first_gap if i == 0 and first_gap is not None else gap_seconds
            t += timedelta(seconds=r.randint(*gap), milliseconds=r.randint(1, 999))
        return out


Written = tuple[str, tuple[str, ...]]  # a fact's text and its keep strings
Maker = Callable[["Draw"], Written]
Maker2 = Callable[["Draw"], tuple[Written, Written]]


@dataclass(frozen=True, slots=True)
class Single:
    """A template writing one fact."""

    name: str
    kind: str
    style: str
    make: Maker
    size: int = 1


@dataclass(frozen=True, slots=True)
class Correction:
    """A template writing a fact and, later, the message that changes it (``style`` is the
    correction's, ``old_style`` the first fact's)."""

    name: str
    old_kind: str
    old_style: str
    style: str
    make: Maker2
    size: int = 2


@dataclass(frozen=True, slots=True)
class Pair:
    """A template writing two facts of one shape about different subjects; both hold."""

    name: str
    kind: str
    style: str
    make: Maker2
    size: int = 2


Unit = Single | Correction | Pair

SINGLES: list[Single] = []
CORRECTIONS: list[Correction] = []
PAIRS: list[Pair] = []


def _single(kind: str, style: str) -> Callable[[Maker], Maker]:
    def register(make: Maker) -> Maker:
        SINGLES.append(Single(make.__name__.lstrip("_"), kind, style, make))
        return make

    return register


def _correction(old_kind: str, old_style: str, style: str) -> Callable[[Maker2], Maker2]:
    def register(make: Maker2) -> Maker2:
        CORRECTIONS.append(Correction(make.__name__.lstrip("_"), old_kind, old_style, style, make))
        return make

    return register


def _pair(kind: str, style: str) -> Callable[[Maker2], Maker2]:
    def register(make: Maker2) -> Maker2:
        PAIRS.append(Pair(make.__name__.lstrip("_"), kind, style, make))
        return make

    return register


# -- single facts -----------------------------------------------------------------------------


@_single("identifier", "sql")
def _sql_e2e_tenant(d: Draw) -> Written:
    tenant = f"tn_{d.hx(10)}"
    text = (
        "INSERT INTO tenants (tenant_id, slug, region, plan, created_at) VALUES\n"
        f"  ('tn_{d.hx(10)}', '{d.word()}', 'eu-central-1', 'trial', now()),\n"
        f"  ('{tenant}', '{d.word()}', 'us-east-2', 'enterprise', now()),"
        "  -- the e2e suite may only write to this tenant\n"
        f"  ('tn_{d.hx(10)}', '{d.word()}', 'ap-south-1', 'trial', now());\n"
        "INSERT 0 3"
    )
    return text, (tenant,)


@_single("constraint", "sql")
def _sql_payout_cap(d: Draw) -> Written:
    cap = d.digits(7)
    text = (
        "BEGIN;\n"
        "ALTER TABLE payouts\n"
        f"  ADD CONSTRAINT payouts_amount_cap CHECK (amount_cents <= {cap});\n"
        f"-- finance sign-off {d.ident()}: no single payout above {cap} cents;"
        " the API rejects, it never clamps\n"
        "COMMIT;"
    )
    return text, (cap,)


@_single("version", "xml")
def _xml_pom_pin(d: Draw) -> Written:
    version = d.version()
    text = (
        "<dependency>\n"
        f"  <groupId>io.{d.word()}</groupId>\n"
        f"  <artifactId>{d.word()}-client</artifactId>\n"
        f"  <!-- pinned: newer releases change the wire format the {d.word()} service reads -->\n"
        f"  <version>{version}</version>\n"
        "  <scope>compile</scope>\n"
        "</dependency>"
    )
    return text, (version,)


@_single("path", "xml")
def _xml_audit_log_path(d: Draw) -> Written:
    stem = f"/var/log/{d.word()}/{d.word()}-audit"
    path = f"{stem}.log"
    text = (
        "<Appenders>\n"
        "  <!-- audit trail: compliance collects it from exactly this file -->\n"
        f'  <RollingFile name="audit" fileName="{path}"\n'
        f'               filePattern="{stem}-%d{{yyyy-MM-dd}}-%i.log.gz">\n'
        '    <PatternLayout pattern="%d{ISO8601} %-5p [%t] %c{1} - %m%n"/>\n'
        '    <SizeBasedTriggeringPolicy size="250 MB"/>\n'
        "  </RollingFile>\n"
        "</Appenders>"
    )
    return text, (path,)


@_single("quantity", "xml")
def _xml_request_limit(d: Draw) -> Written:
    limit = d.digits(6)
    text = (
        "<configuration>\n"
        "  <system.web>\n"
        f"    <!-- IIS rejects uploads above this (KB); the {d.word()} importer chunks"
        " below it -->\n"
        f'    <httpRuntime targetFramework="4.8" maxRequestLength="{limit}"'
        f' executionTimeout="{d.digits(3)}" />\n'
        "  </system.web>\n"
        "</configuration>"
    )
    return text, (limit,)


@_single("identifier", "hcl")
def _hcl_state_bucket(d: Draw) -> Written:
    bucket = f"tfstate-{d.word()}-{d.hx(4)}"
    app = d.word()
    text = (
        "terraform {\n"
        '  required_version = ">= 1.6"\n'
        "  # state lives only in this bucket; never init with -backend=false\n"
        '  backend "s3" {\n'
        f'    bucket         = "{bucket}"\n'
        f'    key            = "{app}/prod/terraform.tfstate"\n'
        '    region         = "eu-west-1"\n'
        f'    dynamodb_table = "{d.word()}-tf-locks"\n'
        "  }\n"
        "}"
    )
    return text, (bucket,)


@_single("constraint", "hcl")
def _hcl_admin_cidr(d: Draw) -> Written:
    r = d.rng
    cidr = d._fresh(lambda: f"10.{r.randint(101, 249)}.{4 * r.randint(3, 62)}.0/22")
    app = d.word()
    text = (
        f'resource "aws_security_group_rule" "{app}_admin_ingress" {{\n'
        '  type              = "ingress"\n'
        "  from_port         = 443\n"
        "  to_port           = 443\n"
        '  protocol          = "tcp"\n'
        "  # security review: the admin API accepts the office VPN range and nothing else\n"
        f'  cidr_blocks       = ["{cidr}"]\n'
        f"  security_group_id = aws_security_group.{app}.id\n"
        "}"
    )
    return text, (cidr,)


@_single("constraint", "systemd")
def _systemd_run_as(d: Draw) -> Written:
    user = f"svc-{d.word()}"
    app = d.word()
    text = (
        "[Unit]\n"
        f"Description={app.capitalize()} ingest worker\n"
        "After=network-online.target\n"
        "\n"
        "[Service]\n"
        "# never as root: the worker writes into the shared NFS export\n"
        f"User={user}\n"
        f"Group={user}\n"
        f"ExecStart=/opt/{app}/bin/{app}-worker --queue {d.word()}\n"
        "Restart=on-failure"
    )
    return text, (user,)


@_single("path", "systemd")
def _systemd_config_path(d: Draw) -> Written:
    path = f"/etc/{d.word()}/{d.word()}.toml"
    app = d.word()
    text = (
        f"$ systemctl cat {app}d.service\n"
        f"# /etc/systemd/system/{app}d.service\n"
        "[Service]\n"
        f"ExecStart=/usr/local/bin/{app}d --config {path}\n"
        "Restart=always\n"
        f"# {app}d reads only that file; config/{app}.example.toml in the repo is a template"
    )
    return text, (path,)


@_single("deadline", "systemd")
def _systemd_timer_window(d: Draw) -> Written:
    when = d.stamp()
    app = d.word()
    text = (
        "[Unit]\n"
        f"Description=One-off {app} reindex (the approved maintenance window)\n"
        "\n"
        "[Timer]\n"
        f"OnCalendar={when}:00 UTC\n"
        "Persistent=false\n"
        f"Unit={app}-reindex.service\n"
        "\n"
        "[Install]\n"
        "WantedBy=timers.target"
    )
    return text, (when,)


@_single("endpoint", "nginx")
def _nginx_upstream(d: Draw) -> Written:
    primary = f"{d.host('api')}:{d.port()}"
    text = (
        f"upstream {d.word()}_api {{\n"
        "    # the blue pool serves everything; backup only takes traffic during deploys\n"
        f"    server {primary} max_fails=3 fail_timeout=10s;\n"
        f"    server {d.host('api')}:{d.port()} backup;\n"
        "    keepalive 32;\n"
        "}"
    )
    return text, (primary,)


@_single("quantity", "nginx")
def _nginx_body_size(d: Draw) -> Written:
    size = f"{d.digits(4)}m"
    app = d.word()
    text = (
        "server {\n"
        "    listen 443 ssl;\n"
        f"    server_name {app}.{d.word(2)}.example;\n"
        f"    # the {d.word()} uploader splits files to stay under this\n"
        f"    client_max_body_size {size};\n"
        f"    location / {{ proxy_pass http://{app}_api; }}\n"
        "}"
    )
    return text, (size,)


@_single("prohibition", "nginx")
def _nginx_internal_deny(d: Draw) -> Written:
    location = f"/internal/{d.word()}/"
    text = (
        f"location {location} {{\n"
        f"    # must never be reachable from outside (audit finding {d.ident()})\n"
        "    allow 10.0.0.0/8;\n"
        "    deny  all;\n"
        f"    proxy_pass http://{d.word()}_admin;\n"
        "}"
    )
    return text, (location,)


@_single("version", "docker")
def _docker_base_pin(d: Draw) -> Written:
    version = d.version()
    app = d.word()
    text = (
        "# syntax=docker/dockerfile:1.7\n"
        f"FROM registry.{d.word()}.io/base/{d.word()}:{version} AS build\n"
        f"# keep this exact tag: {version} is the last base image with glibc 2.31\n"
        "WORKDIR /src\n"
        "COPY . .\n"
        f"RUN make release APP={app}"
    )
    return text, (version,)


@_single("endpoint", "docker")
def _compose_db_port(d: Draw) -> Written:
    bound = f"127.0.0.1:{d.port()}"
    app = d.word()
    text = (
        "services:\n"
        f"  {app}-db:\n"
        "    image: postgres:16\n"
        "    environment:\n"
        f"      POSTGRES_DB: {d.word()}\n"
        "      POSTGRES_PASSWORD: dev\n"
        "    ports:\n"
        f'      - "{bound}:5432"   # the test settings connect here, not to 5432'
    )
    return text, (bound,)


@_single("endpoint", "makefile")
def _makefile_registry(d: Draw) -> Written:
    registry = f"{d.word()}.azurecr.io/{d.word()}"
    text = (
        "# images are pushed to this registry only; prod pulls from nowhere else\n"
        f"REGISTRY   ?= {registry}\n"
        f"IMAGE      := $(REGISTRY)/{d.word()}-api\n"
        "TAG        ?= $(shell git rev-parse --short HEAD)\n"
        "\n"
        "push: build\n"
        "\tdocker push $(IMAGE):$(TAG)"
    )
    return text, (registry,)


@_single("constraint", "makefile")
def _makefile_build_tags(d: Draw) -> Written:
    tag = f"{d.word()}fips"
    app = d.word()
    text = (
        f"# release builds must pass -tags {tag}: without it the FIPS provider is not linked\n"
        f"GO_TAGS   := {tag},netgo\n"
        "LDFLAGS   := -s -w -X main.version=$(VERSION)\n"
        "\n"
        "release:\n"
        f"\tgo build -tags '$(GO_TAGS)' -ldflags '$(LDFLAGS)' -o bin/{app} ./cmd/{app}"
    )
    return text, (tag,)


@_single("quantity", "csv")
def _csv_budget_cap(d: Draw) -> Written:
    cap = d.dec(5, 2)
    text = (
        "cost_center,team,monthly_cap_eur,note\n"
        f"CC-{d.digits(4)},{d.word()},{d.dec(5, 2)},\n"
        f"CC-{d.digits(4)},{d.word()},{cap},ours - spend alerts fire at 80%\n"
        f"CC-{d.digits(4)},{d.word()},{d.dec(4, 2)},"
    )
    return text, (cap,)


@_single("owner", "csv")
def _csv_service_owner(d: Draw) -> Written:
    owner = d.name()
    text = (
        "service,owner,channel,notes\n"
        f"{d.word()}-gateway,{d.name()},#{d.word()}-dev,\n"
        f"{d.word()}-exporter,{owner},#{d.word()}-dev,the service this task changes\n"
        f"{d.word()}-scheduler,{d.name()},#{d.word()}-ops,"
    )
    return text, (owner,)


@_single("path", "env")
def _env_data_dir(d: Draw) -> Written:
    app = d.word().upper()
    path = f"/mnt/{d.word()}/{d.word()}-{d.digits(3)}"
    text = (
        f"export {app}_ENV=dev\n"
        f"export {app}_DATA_DIR={path}   # scratch volume, wiped nightly: no fixtures here\n"
        f"export {app}_LOG_LEVEL=debug"
    )
    return text, (path,)


@_single("decision", "env")
def _env_pipeline_choice(d: Draw) -> Written:
    app = d.word().upper()
    choice = f"{d.word()}-v2"
    text = (
        "# .env.defaults\n"
        "# arch review, tuesday: the v2 ingest path is the default from now on\n"
        f"{app}_INGEST_PIPELINE={choice}\n"
        f"{app}_INGEST_BATCH={d.digits(3)}\n"
        f"{app}_INGEST_DLQ=on"
    )
    return text, (choice,)


@_single("decision", "markdown")
def _md_adr_choice(d: Draw) -> Written:
    tech = d.cap()
    text = (
        "| ADR | Title | Status | Decision |\n"
        "|-----|-------|--------|----------|\n"
        f"| 0{d.digits(3)} | Session storage | Accepted | Postgres, one row per session |\n"
        f"| 0{d.digits(3)} | Event bus for order sync | Accepted | {tech} streams;"
        " no new Kafka topics |\n"
        f"| 0{d.digits(3)} | Feature flags | Proposed | - |"
    )
    return text, (tech,)


@_single("owner", "markdown")
def _md_component_owner(d: Draw) -> Written:
    owner = d.name()
    ours = d.word()
    text = (
        "| Component | Owner | Escalation |\n"
        "|---|---|---|\n"
        f"| {d.word()}-web | {d.name()} | #{d.word()}-ops |\n"
        f"| {ours}-sync (this repo) | {owner} | #{ours}-oncall |\n"
        f"| {d.word()}-billing | {d.name()} | #{d.word()}-ops |"
    )
    return text, (owner,)


@_single("deadline", "markdown")
def _md_release_schedule(d: Draw) -> Written:
    freeze = d.stamp()
    text = (
        f"### Release train {d.word()}\n"
        "| Milestone | When (UTC) |\n"
        "|---|---|\n"
        f"| Branch cut | {d.stamp()} |\n"
        f"| Code freeze, no merges to main | {freeze} |\n"
        f"| GA | {d.stamp()} |"
    )
    return text, (freeze,)


@_single("prohibition", "thread")
def _thread_replica(d: Draw) -> Written:
    host = d.host("pg")
    who, other = d.name(), d.name()
    said, answered = d.clocks(2)
    text = (
        f"#{d.word()}-dev\n"
        f"{who}  {said}\n"
        f"  please nobody run migrations against {host}, it's the shared replica"
        " finance reads from\n"
        f"{other}  {answered}\n"
        "  > please nobody run migrations against that one\n"
        "  noted, pointing my env at the local container"
    )
    return text, (host,)


@_single("preference", "thread")
def _thread_branch_names(d: Draw) -> Written:
    prefix = f"{d.word()}-feat/"
    who = d.name()
    other = d.name()
    text = (
        f"From: {who} <{who.lower().replace(' ', '.')}@{d.word()}.dev>\n"
        "Subject: Re: review conventions\n"
        "\n"
        f"Small thing for the next PRs: I prefer branches named {prefix}<ticket>-<slug>,"
        " one commit per module, and the ticket in the PR title.\n"
        "\n"
        f"> On Mon, {other} wrote:\n"
        "> Any conventions I should know before I send the patch?"
    )
    return text, (prefix,)


@_single("deadline", "ticket")
def _ticket_freeze(d: Draw) -> Written:
    freeze = d.stamp()
    app = d.word()
    text = (
        f"{d.ident()} · Prepare the {app} 3.x rollout\n"
        f"Comment by {d.name()} · 2 days ago\n"
        f"  Freeze for the {app} repo starts {freeze} UTC. After that only the release"
        " manager merges.\n"
        f"  Fix Version/s: {app}-{d.version()}"
    )
    return text, (freeze,)


@_single("identifier", "ticket")
def _ticket_incident_ref(d: Draw) -> Written:
    incident = d.ident()
    text = (
        f"#{d.digits(4)} opened by {d.word()}{d.digits(2)}\n"
        "  Checkout returns 500 after the cache change\n"
        "  ---\n"
        f"  {d.name()} commented:\n"
        f"  Same root cause as incident {incident}. Put {incident} in every commit message"
        " of this fix so the postmortem links them.\n"
        "  Labels: bug, p1, area/checkout"
    )
    return text, (incident,)


@_single("constraint", "ticket")
def _ticket_acceptance(d: Draw) -> Written:
    p99 = d.dec(3, 2)
    app = d.word()
    text = (
        f"{d.ident()} acceptance criteria\n"
        f"- [ ] /v1/{app}/search p99 at most {p99} ms under the replayed prod load\n"
        "- [ ] no new N+1 queries (checked with the query counter)\n"
        f"- [ ] the {app} dashboard shows the new histogram"
    )
    return text, (p99,)


@_single("quantity", "code")
def _code_retry_budget(d: Draw) -> Written:
    budget = d.dec(3, 3)
    text = (
        f"# retry policy agreed with the {d.word()} API team; their gateway bans clients"
        " that exceed it\n"
        f"RETRY_BUDGET_SECONDS = {budget}\n"
        "RETRY_BASE_DELAY = 0.25\n"
        f"MAX_ATTEMPTS = {d.rng.randint(4, 9)}"
    )
    return text, (budget,)


@_single("prohibition", "code")
def _code_js_flush(d: Draw) -> Written:
    call = f"{d.word()}Cache.flushAll()"
    text = (
        "export async function resetFixtures(client, runId) {\n"
        f"  // never call {call} here: staging shares the cluster and it wipes everyone's keys\n"
        "  await client.del(`fixtures:${runId}`);\n"
        "  await client.del(`locks:${runId}`);\n"
        "}"
    )
    return text, (call,)


@_single("endpoint", "code")
def _code_go_endpoint(d: Draw) -> Written:
    host = d.host("gw")
    text = (
        f"package {d.word()}\n"
        "\n"
        "// defaultBaseURL is the only endpoint behind the signed-request middleware.\n"
        f'const defaultBaseURL = "https://{host}/v3"\n'
        "\n"
        "var client = &http.Client{Timeout: 20 * time.Second}"
    )
    return text, (host,)


@_single("preference", "code")
def _code_logger_name(d: Draw) -> Written:
    logger = f"{d.word()}.audit"
    text = (
        "import logging\n"
        "\n"
        f'# house style for this package: one logger named "{logger}", f-strings in'
        " messages, no print()\n"
        f'log = logging.getLogger("{logger}")'
    )
    return text, (logger,)


@_single("quantity", "test_output")
def _test_throughput(d: Draw) -> Written:
    rate = d.dec(4, 2)
    app = d.word()
    text = (
        "============================= test session starts ==============================\n"
        "platform linux -- Python 3.11.9, pytest-8.3.2, pluggy-1.5.0\n"
        "collected 3 items\n"
        "\n"
        f"tests/perf/test_{app}_ingest.py::test_batch_insert PASSED        [ 33%]\n"
        f"tests/perf/test_{app}_ingest.py::test_throughput PASSED          [ 66%]\n"
        f"tests/perf/test_{app}_ingest.py::test_backpressure PASSED        [100%]\n"
        f"throughput baseline (the CI gate fails below it): {rate} rows/s\n"
        f"============================== 3 passed in {d.dec(2, 2)}s =============================="
    )
    return text, (rate,)


@_single("constraint", "test_output")
def _test_live_flag(d: Draw) -> Written:
    flag = f"--{d.word()}-live"
    app, sandbox = d.word(), d.word()
    text = (
        f"tests/integration/test_{app}_sync.py::test_roundtrip SKIPPED (needs {flag})\n"
        f"tests/integration/test_{app}_sync.py::test_conflicts SKIPPED (needs {flag})\n"
        "=========================== short test summary info ============================\n"
        f"SKIPPED [2] tests/integration/conftest.py:41: live tests hit the real {sandbox}"
        f" sandbox and only run with {flag}\n"
        f"======================== {d.rng.randint(11, 89)} passed, 2 skipped in"
        f" {d.dec(1, 2)}s ========================"
    )
    return text, (flag,)


@_single("path", "traceback")
def _tb_key_path(d: Draw) -> Written:
    path = f"/etc/{d.word()}/keys/{d.word()}-signing.pem"
    app = d.word()
    text = (
        "Traceback (most recent call last):\n"
        f'  File "/opt/{app}/app/main.py", line {d.rng.randint(40, 199)}, in <module>\n'
        "    signer = load_signer(settings.SIGNING_KEY_PATH)\n"
        f'  File "/opt/{app}/app/crypto.py", line {d.rng.randint(20, 99)}, in load_signer\n'
        '    with open(path, "rb") as fh:\n'
        f"FileNotFoundError: [Errno 2] No such file or directory: '{path}'"
    )
    return text, (path,)


@_single("version", "traceback")
def _tb_requires_version(d: Draw) -> Written:
    need = d.version()
    app, lib, dep = d.word(), d.word(), d.word()
    text = (
        "Traceback (most recent call last):\n"
        f'  File "/home/dev/{app}/scripts/migrate.py", line 12, in <module>\n'
        f"    import {lib}\n"
        f'  File "/home/dev/{app}/.venv/lib/python3.11/site-packages/{lib}/__init__.py",'
        " line 7, in <module>\n"
        f'    raise ImportError(f"{lib} needs {dep}>={need} (found {{found}})")\n'
        f"ImportError: {lib} needs {dep}>={need} (found {d.version()})"
    )
    return text, (need,)


@_single("owner", "git")
def _git_codeowners(d: Draw) -> Written:
    owner = d.name()
    handle = owner.lower().replace(" ", ".")
    service = d.word()
    text = (
        "$ git log -1 -p -- .github/CODEOWNERS\n"
        f"commit {d.hx(40)}\n"
        f"Author: {owner} <{handle}@{d.word()}.dev>\n"
        f"Date:   Tue Mar {d.rng.randint(1, 28)} 11:02:17 2025 +0000\n"
        "\n"
        f"    Take over ownership of {service}-exporter\n"
        "\n"
        f"-/services/{service}-exporter/ @platform-team\n"
        f"+/services/{service}-exporter/ @{handle}"
    )
    return text, (owner,)


@_single("identifier", "git")
def _git_release_branch(d: Draw) -> Written:
    branch = f"release/{d.word()}-{d.digits(3)}"
    org, repo = d.word(), d.word()
    text = (
        "# backports for this bug go on the release branch\n"
        f"$ git push -u origin {branch}\n"
        "Enumerating objects: 14, done.\n"
        "Writing objects: 100% (8/8), 1.21 KiB | 1.21 MiB/s, done.\n"
        f"To github.com:{org}/{repo}.git\n"
        f" * [new branch]      {branch} -> {branch}\n"
        f"branch '{branch}' set up to track 'origin/{branch}'."
    )
    return text, (branch,)


@_single("identifier", "k8s")
def _k8s_namespace(d: Draw) -> Written:
    namespace = f"{d.word()}-prod-{d.digits(2)}"
    app = d.word()
    text = (
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        "metadata:\n"
        f"  name: {app}-api\n"
        f"  namespace: {namespace}   # all our workloads live here, never in default\n"
        "spec:\n"
        "  replicas: 3\n"
        "  selector:\n"
        "    matchLabels:\n"
        f"      app: {app}-api"
    )
    return text, (namespace,)


@_single("quantity", "k8s")
def _k8s_memory_limit(d: Draw) -> Written:
    limit = f"{d.digits(4)}Mi"
    text = (
        "      containers:\n"
        f"        - name: {d.word()}\n"
        "          resources:\n"
        "            requests:\n"
        "              cpu: 250m\n"
        "              memory: 512Mi\n"
        "            limits:\n"
        "              # measured peak plus 20%: the pod is OOMKilled below this\n"
        f"              memory: {limit}"
    )
    return text, (limit,)


@_single("version", "cli_table")
def _cli_helm_chart(d: Draw) -> Written:
    chart = d.version()
    app, namespace = d.word(), f"{d.word()}-prod"
    text = (
        f"$ helm list -n {namespace}   # what prod runs right now\n"
        "NAME          NAMESPACE     REVISION  UPDATED                     STATUS    CHART"
        "                 APP VERSION\n"
        f"{app:<13} {namespace:<13} {d.digits(2):<9} 2025-03-04 10:41:07 UTC     deployed  "
        f"{app}-{chart:<14} {d.version()}\n"
        f"{app + '-redis':<13} {namespace:<13} 3         2025-01-19 08:12:55 UTC     deployed  "
        "redis-18.6.1          7.2.4"
    )
    return text, (chart,)


@_single("identifier", "cli_table")
def _cli_gcloud_project(d: Draw) -> Written:
    app = d.word()
    project = f"{app}-{d.word()}-{d.digits(6)}"
    sandbox = f"{app}-{d.word()}-{d.digits(6)}"
    text = (
        f'$ gcloud projects list --filter="name:{app}*"\n'
        "PROJECT_ID                       NAME            PROJECT_NUMBER\n"
        f"{sandbox:<32} {app}-sandbox   {d.digits(12)}\n"
        f"{project:<32} {app}-prod      {d.digits(12)}\n"
        f"$ gcloud config set project {project}\n"
        "Updated property [core/project]."
    )
    return text, (project,)


@_single("endpoint", "log")
def _log_broker(d: Draw) -> Written:
    host = d.host("mq")
    app = d.word()
    boot, connecting, connected = d.log_times(3)
    text = (
        f"{boot} INFO  [{app}-worker] boot: version {d.version()}\n"
        f"{connecting} INFO  [{app}-worker] connecting to broker amqps://{host}:5671/"
        f"{d.word()}\n"
        f"{connected} INFO  [{app}-worker] connected, prefetch=32, consumers=4"
    )
    return text, (host,)


@_single("prohibition", "chat")
def _chat_legacy_schema(d: Draw) -> Written:
    schema = f"{d.word()}_legacy"
    text = (
        f"Please leave the `{schema}` schema alone, even if it looks dead: the finance"
        " reports still read it every night. Nothing in this task should write there."
    )
    return text, (schema,)


@_single("preference", "chat")
def _chat_local_tool(d: Draw) -> Written:
    tool = f"{d.word()}ctl"
    text = (
        f"For running the stack locally I'd rather you use `{tool} up` than calling docker"
        " compose yourself; it sets the env files up the way CI does."
    )
    return text, (tool,)


@_single("decision", "chat")
def _chat_worker_pool(d: Draw) -> Written:
    pool = f"{d.word()}-batch"
    text = (
        f"We settled it on the call: the import job runs on the {pool} worker pool. The"
        " lambda route is off the table, so don't spend time on it."
    )
    return text, (pool,)


# -- corrections ------------------------------------------------------------------------------


@_correction("path", "chat", "chat")
def _fix_plan_change(d: Draw) -> tuple[Written, Written]:
    old, new = f"{d.word()}-exports-{d.digits(3)}", f"{d.word()}-exports-{d.digits(3)}"
    first = (
        f"The nightly export writes to s3://{old}/daily/; the analytics team picks it up"
        " from there.",
        (old,),
    )
    second = (
        f"Plan for the nightly export after the call with ops: s3://{new}/daily/. Same prefix"
        " layout, same schedule.",
        (new,),
    )
    return first, second


@_correction("deadline", "ticket", "ticket")
def _fix_slot_cancelled(d: Draw) -> tuple[Written, Written]:
    old, new = d.stamp(), d.stamp()
    change = f"CHG-{d.digits(5)}"
    app = d.word()
    first = (
        f"{change} · {app} database failover test\n"
        f"Window: {old} UTC (approved by CAB)\n"
        f"Implementer: {d.name()}",
        (old,),
    )
    second = (
        f"{change} comment by {d.name()}:\n"
        f"CAB pulled the {old} slot, it clashes with the payroll run; that window is"
        " cancelled.\n"
        f"Rebooked: {new} UTC, same runbook.",
        (new,),
    )
    return first, second


@_correction("owner", "markdown", "thread")
def _fix_owner_in_passing(d: Draw) -> tuple[Written, Written]:
    old, new = d.name(), d.name()
    service = f"{d.word()}-ledger"
    first = (
        "| Service | Owner | Covers |\n"
        "|---|---|---|\n"
        f"| {d.word()}-search | {d.name()} | reviews + on-call |\n"
        f"| {service} | {old} | reviews + on-call |",
        (old,),
    )
    second = (
        f"{d.name()}  {d.clock()}\n"
        f"  standup notes: staging is flaky again; {new} has {service} since the reorg, so"
        " route the review there; release notes due thursday",
        (new,),
    )
    return first, second


@_correction("identifier", "code", "git")
def _fix_revert_diff(d: Draw) -> tuple[Written, Written]:
    app = d.word()
    old, new = f"{d.word()}-jobs-{d.digits(3)}", f"{d.word()}-jobs-{d.digits(3)}"
    first = (
        f"# {app}/settings.py: jobs for the importer\n"
        f'QUEUE_NAME = "{old}"\n'
        "QUEUE_VISIBILITY_TIMEOUT = 300",
        (old,),
    )
    second = (
        "$ git show HEAD\n"
        f"commit {d.hx(40)}\n"
        f"Author: {d.name()}\n"
        "\n"
        '    Revert "Move the importer to the new queue"\n'
        "\n"
        f"    This reverts commit {d.hx(12)}.\n"
        "\n"
        f"--- a/{app}/settings.py\n"
        f"+++ b/{app}/settings.py\n"
        "@@ -1,3 +1,3 @@\n"
        f'-QUEUE_NAME = "{old}"\n'
        f'+QUEUE_NAME = "{new}"\n'
        " QUEUE_VISIBILITY_TIMEOUT = 300",
        (new,),
    )
    return first, second


@_correction("quantity", "log", "log")
def _fix_reload_log(d: Draw) -> tuple[Written, Written]:
    app = d.word()
    old, new = f"{d.digits(5)}ms", f"{d.digits(5)}ms"
    # the boot, then hours later the reload and its two lines
    loaded, hup, changed, done = d.log_times(4, gap_seconds=(0, 1), first_gap=(3_600, 40_000))
    first = (
        f"{loaded} INFO  [{app}-proxy] config loaded from /etc/{app}/proxy.yaml:"
        f" upstream_timeout={old} retries=2",
        (old,),
    )
    second = (
        f"{hup} INFO  [{app}-proxy] SIGHUP: reloading /etc/{app}/proxy.yaml\n"
        f"{changed} INFO  [{app}-proxy] upstream_timeout {old} -> {new}\n"
        f"{done} INFO  [{app}-proxy] reload complete, 0 connections dropped",
        (new,),
    )
    return first, second


@_correction("quantity", "sql", "sql")
def _fix_migration_default(d: Draw) -> tuple[Written, Written]:
    table = f"{d.word()}_events"
    old, new = d.digits(7), d.digits(7)
    first = (
        f"CREATE TABLE {table} (\n"
        "  id bigserial PRIMARY KEY,\n"
        "  payload jsonb NOT NULL,\n"
        f"  retention_seconds integer NOT NULL DEFAULT {old}\n"
        ");",
        (old,),
    )
    second = (
        f"-- migrations/0{d.digits(3)}_{table}_retention.sql\n"
        f"ALTER TABLE {table} ALTER COLUMN retention_seconds SET DEFAULT {new};\n"
        f"UPDATE {table} SET retention_seconds = {new} WHERE retention_seconds = {old};",
        (new,),
    )
    return first, second


@_correction("quantity", "test_output", "test_output")
def _fix_rerun_number(d: Draw) -> tuple[Written, Written]:
    app = d.word()
    old, new = d.dec(4, 2), d.dec(4, 2)
    first = (
        f"tests/perf/test_{app}_memory.py::test_peak_rss PASSED\n"
        f"  peak RSS of the {app} worker: {old} MiB\n"
        f"========================= 1 passed in {d.dec(2, 2)}s =========================",
        (old,),
    )
    second = (
        f"$ pytest tests/perf/test_{app}_memory.py -q --count=3 -p no:cacheprovider\n"
        "...                                                                   [100%]\n"
        f"  peak RSS of the {app} worker: {new} MiB (median of 3, fixture leak fixed)\n"
        f"3 passed in {d.dec(2, 2)}s",
        (new,),
    )
    return first, second


@_correction("identifier", "thread", "thread")
def _fix_thread_reply(d: Draw) -> tuple[Written, Written]:
    app = d.word()
    old, new = f"v{d.version()}-{app}", f"v{d.version()}-{app}"
    who = d.name()
    posted, replied, acked = d.clocks(3)
    first = (
        f"{who}  {posted}\n  @here freeze tag for this week's deploys is {old}, build from"
        " that one only",
        (old,),
    )
    second = (
        f"{who}  {replied}  (reply in thread)\n"
        "  > freeze tag for this week's deploys\n"
        f"  typo, sorry: {new}. the other tag never got the security patch\n"
        f"{d.name()}  {acked}\n"
        "  :+1:",
        (new,),
    )
    return first, second


@_correction("identifier", "hcl", "hcl")
def _fix_terraform_apply(d: Draw) -> tuple[Written, Written]:
    res = d.word()
    old, new = f"{d.word()}-data-{d.digits(3)}", f"{d.word()}-data-{d.digits(3)}"
    kind = "aws_s3_bucket_server_side_encryption_configuration"
    first = (
        f'resource "{kind}" "{res}" {{\n'
        f"  bucket = aws_s3_bucket.{res}.id\n"
        "  rule {\n"
        "    apply_server_side_encryption_by_default {\n"
        '      sse_algorithm     = "aws:kms"\n'
        f'      kms_master_key_id = "alias/{old}"\n'
        "    }\n"
        "  }\n"
        "}",
        (old,),
    )
    second = (
        f"  # {kind}.{res} will be updated in-place\n"
        f'  ~ resource "{kind}" "{res}" {{\n'
        "      ~ rule {\n"
        "          ~ apply_server_side_encryption_by_default {\n"
        f'              ~ kms_master_key_id = "alias/{old}" -> "alias/{new}"\n'
        "            }\n"
        "        }\n"
        "    }\n"
        "\n"
        "Plan: 0 to add, 1 to change, 0 to destroy.\n"
        f"{kind}.{res}: Modifications complete after 2s\n"
        "Apply complete! Resources: 0 added, 1 changed, 0 destroyed.",
        (new,),
    )
    return first, second


@_correction("version", "k8s", "cli_table")
def _fix_set_image(d: Draw) -> tuple[Written, Written]:
    app, org, namespace = d.word(), d.word(), f"{d.word()}-prod"
    old, new = d.version(), d.version()
    first = (
        "    spec:\n"
        "      containers:\n"
        f"        - name: {app}\n"
        f"          image: ghcr.io/{org}/{app}:{old}\n"
        "          ports:\n"
        "            - containerPort: 8080",
        (old,),
    )
    second = (
        f"$ kubectl -n {namespace} set image deployment/{app} {app}=ghcr.io/{org}/{app}:{new}\n"
        f"deployment.apps/{app} image updated\n"
        f"$ kubectl -n {namespace} rollout status deployment/{app}\n"
        f'deployment "{app}" successfully rolled out\n'
        f"$ kubectl -n {namespace} get pods -l app={app}\n"
        "NAME                        READY   STATUS    RESTARTS   AGE\n"
        f"{app}-{d.hx(10)}-{d.word(2)}   1/1     Running   0          42s",
        (new,),
    )
    return first, second


@_correction("version", "ticket", "ticket")
def _fix_field_history(d: Draw) -> tuple[Written, Written]:
    app = d.word()
    old, new = d.version(), d.version()
    key = d.ident()
    sprint = d.rng.randint(21, 89)
    first = (
        f"{key}: {app} export drops rows with a NULL region\n"
        "Type: Bug   Priority: High\n"
        f"Fix Version/s: {app}-{old}\n"
        f"Assignee: {d.name()}",
        (old,),
    )
    second = (
        f"{key} · History\n"
        f"{d.name()} made changes - 3 hours ago\n"
        "  Field           Original Value        New Value\n"
        f"  Fix Version/s   {app}-{old}        {app}-{new}\n"
        f"  Sprint          {app} {sprint}              {app} {sprint + 1}",
        (new,),
    )
    return first, second


@_correction("identifier", "code", "code")
def _fix_review_suggestion(d: Draw) -> tuple[Written, Written]:
    old, new = f"kid-{d.hx(12)}", f"kid-{d.hx(12)}"
    first = (
        f"# {d.word()}/keys.py\n"
        f'SIGNING_KEY_ID = "{old}"\n'
        'SIGNING_ALG = "ES256"\n'
        "TOKEN_TTL_SECONDS = 900",
        (old,),
    )
    second = (
        f"{d.name()} commented on keys.py line 2:\n"
        "```suggestion\n"
        f'SIGNING_KEY_ID = "{new}"\n'
        "```\n"
        "rotated yesterday; the gateway answers 401 to tokens signed with the other one now",
        (new,),
    )
    return first, second


@_correction("version", "makefile", "makefile")
def _fix_make_override(d: Draw) -> tuple[Written, Written]:
    org = d.word()
    old, new = d.version(), d.version()
    first = (
        f"TOOLCHAIN_IMAGE ?= ghcr.io/{org}/toolchain:{old}\n"
        "\n"
        "lint:\n"
        "\tdocker run --rm -v $(PWD):/src -w /src $(TOOLCHAIN_IMAGE) golangci-lint run",
        (old,),
    )
    second = (
        "# common.mk: included last by every service Makefile\n"
        f"override TOOLCHAIN_IMAGE := ghcr.io/{org}/toolchain:{new}\n"
        "# pinned here after the cgo change; a service Makefile cannot set it",
        (new,),
    )
    return first, second


@_correction("quantity", "csv", "csv")
def _fix_reexport(d: Draw) -> tuple[Written, Written]:
    other, ours = f"{d.word()}-eu", f"{d.word()}-us"
    other_cap = d.dec(5, 2)
    old, new = d.dec(5, 2), d.dec(5, 2)
    header = "cluster,region,monthly_cost_cap_usd,note\n"
    first = (
        f"{header}{other},eu-west-1,{other_cap},\n{ours},us-east-2,{old},ours",
        (old,),
    )
    second = (
        "finance re-ran the export after the quota raise:\n"
        f"{header}{other},eu-west-1,{other_cap},\n{ours},us-east-2,{new},ours",
        (new,),
    )
    return first, second


@_correction("endpoint", "env", "env")
def _fix_env_load_order(d: Draw) -> tuple[Written, Written]:
    app = d.word()
    var = f"{app.upper()}_API_BASE"
    old, new = d.host("sandbox"), d.host("sandbox")
    first = (
        f"# .envrc\nexport {var}=https://{old}/api\nexport {app.upper()}_API_TIMEOUT=30",
        (old,),
    )
    second = (
        "$ cat .envrc.local\n"
        "# sourced after .envrc; ops moved the sandbox on monday\n"
        f"export {var}=https://{new}/api\n"
        "$ direnv allow\n"
        f"direnv: loading ~/src/{app}/.envrc\n"
        f"direnv: export ~{var}",
        (new,),
    )
    return first, second


@_correction("identifier", "chat", "chat")
def _fix_explicit(d: Draw) -> tuple[Written, Written]:
    app = d.word()
    old, new = f"release/{app}-{d.digits(3)}", f"release/{app}-{d.digits(3)}"
    first = (
        f"The release branch for this fix is {old}; cherry-picks go there after review.",
        (old,),
    )
    second = (f"Correction to my earlier message: the release branch is {new}, not {old}.", (new,))
    return first, second


@_correction("deadline", "thread", "thread")
def _fix_email_erratum(d: Draw) -> tuple[Written, Written]:
    app = d.word()
    who = d.name()
    sender = f"{who} <{who.lower().replace(' ', '.')}@{d.word()}.dev>"
    old, new = d.stamp(), d.stamp()
    body = f"Hi all, the {app} cutover happens {old} UTC. Expect 20 minutes of read-only mode."
    first = (f"From: {sender}\nSubject: {app} cutover\n\n{body}", (old,))
    second = (
        f"From: {sender}\n"
        f"Subject: Re: {app} cutover\n"
        "\n"
        f"Apologies, wrong date in my mail this morning. We cut over {new} UTC; the read-only"
        " window is unchanged.\n"
        "\n"
        f"> {body}",
        (new,),
    )
    return first, second


@_correction("decision", "markdown", "markdown")
def _fix_adr_retired(d: Draw) -> tuple[Written, Written]:
    old, new = d.cap(), d.cap()
    number = int(d.digits(3))
    head = "| ADR | Title | Status | Decision |\n|---|---|---|---|\n"
    first = (
        f"{head}| 0{number} | Cache for price lookups | Accepted | {old} in front of the"
        " pricing DB |",
        (old,),
    )
    second = (
        f"{head}| 0{number + 1} | Cache for price lookups, revisited | Accepted | {new} in"
        f" front of the pricing DB; retires ADR 0{number} |",
        (new,),
    )
    return first, second


# -- pairs that both hold ---------------------------------------------------------------------


@_pair("endpoint", "env")
def _pair_pg_hosts(d: Draw) -> tuple[Written, Written]:
    staging = f"{d.host('pg')}:{d.port()}"
    reporting = f"{d.host('pg')}:{d.port()}"
    first = (
        "# staging database: safe to reset from the test scripts\n"
        f"export STAGING_PG_HOST={staging}\n"
        "export STAGING_PG_SSLMODE=require",
        (staging,),
    )
    second = (
        "# reporting replica: read-only, for the export checks\n"
        f"export REPORTING_PG_HOST={reporting}\n"
        "export REPORTING_PG_SSLMODE=verify-full",
        (reporting,),
    )
    return first, second


@_pair("owner", "thread")
def _pair_reviewers(d: Draw) -> tuple[Written, Written]:
    one, two = d.name(), d.name()
    first_service, second_service = f"{d.word()}-api", f"{d.word()}-worker"
    first = (
        f"{d.name()}  {d.clock()}\n  for anything touching {first_service}, {one} reviews;"
        " she knows the retry code",
        (one,),
    )
    second = (
        f"{d.name()}  {d.clock()}\n  and {second_service} changes go to {two}, he owns the"
        " queue consumers",
        (two,),
    )
    return first, second


@_pair("identifier", "ticket")
def _pair_tickets(d: Draw) -> tuple[Written, Written]:
    prefix = d.letters(3)
    upload, export = f"{prefix}-{d.digits(5)}", f"{prefix}-{d.digits(5)}"
    first = (
        f"{upload} · Upload crashes on files with a BOM\nStatus: In Progress   Priority: High",
        (upload,),
    )
    second = (
        f"{export} · CSV export takes minutes for large tenants\nStatus: In Progress  "
        " Priority: Medium",
        (export,),
    )
    return first, second


@_pair("path", "systemd")
def _pair_log_paths(d: Draw) -> tuple[Written, Written]:
    base = f"/var/log/{d.word()}"
    api_app, worker_app = d.word(), d.word()
    api, worker = f"{base}/{api_app}-api.log", f"{base}/{worker_app}-worker.log"
    first = (
        f"[Service]\nExecStart=/opt/{api_app}/bin/api\nStandardOutput=append:{api}\n"
        "StandardError=inherit",
        (api,),
    )
    second = (
        f"[Service]\nExecStart=/opt/{worker_app}/bin/worker\nStandardOutput=append:{worker}\n"
        "StandardError=inherit",
        (worker,),
    )
    return first, second


@_pair("version", "code")
def _pair_pins(d: Draw) -> tuple[Written, Written]:
    one, two = d.version(), d.version()
    lib_one, lib_two = d.word(), d.word()
    first = (
        f"# requirements/base.txt\n{lib_one}=={one}   # pinned: later versions drop the"
        " sync client\nrequests>=2.31",
        (one,),
    )
    second = (
        f"# requirements/base.txt\n{lib_two}=={two}   # pinned: the schema migrations"
        " need this exact one\nurllib3<3",
        (two,),
    )
    return first, second


UNITS: tuple[Unit, ...] = (*SINGLES, *CORRECTIONS, *PAIRS)
PHRASINGS = tuple(c.name for c in CORRECTIONS)
TEMPLATES = tuple(
    name
    for unit in UNITS
    for name in ((f"{unit.name}/old", unit.name) if isinstance(unit, Correction) else (unit.name,))
)


# -- the plan ---------------------------------------------------------------------------------


def _cycle(seed: int, block: int, label: str, units: tuple[Unit, ...]) -> Iterator[Unit]:
    """``units`` round after round, each round shuffled per (seed, block, label, round)."""
    round_ = 0
    while True:
        order = list(units)
        random.Random(f"heldout-e/plan/{seed}/{block}/{label}/{round_}").shuffle(order)
        yield from order
        round_ += 1


def plan(seed: int, count: int, variant: int) -> list[Unit]:
    """The units of session ``variant``: the sessions of a block of ``BLOCK`` take consecutive
    slices of one sequence; a pair that does not fit a session's last slot is left for the next
    session and the slot gets a single from a second sequence."""
    block, position = divmod(variant, BLOCK)
    main = _cycle(seed, block, "all", UNITS)
    spare = _cycle(seed, block, "spare", tuple(SINGLES))
    waiting = next(main)
    for at in range(position + 1):
        units: list[Unit] = []
        need = count
        while need > 0:
            if waiting.size <= need:
                units.append(waiting)
                need -= waiting.size
                waiting = next(main)
            else:
                units.append(next(spare))
                need -= 1
        if at == position:
            return units
    raise AssertionError("unreachable")


# -- drawing a session's facts ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fact:
    """One canary before it gets its id."""

    kind: str
    style: str
    template: str
    at: float
    text: str
    keep: tuple[str, ...]
    supersedes: int | None = None  # index of the fact it changes
    coexists: int | None = None  # index of the other fact of its pair


def clashes(facts: list[Fact]) -> list[tuple[int, str, int]]:
    """``(i, s, j)`` for each keep string ``s`` of fact ``i`` that occurs in the text of another
    fact ``j``, unless ``j`` is the correction of ``i`` (it may quote the value it replaces)."""
    out: list[tuple[int, str, int]] = []
    for i, fact in enumerate(facts):
        for s in fact.keep:
            for j, other in enumerate(facts):
                if i not in (j, other.supersedes) and s in other.text:
                    out.append((i, s, j))
    return out


def _at(rng: random.Random, low: float, high: float) -> float:
    return round(rng.uniform(low, high), 3)


def _draw(units: list[Unit], rng: random.Random) -> list[Fact]:
    d = Draw(rng)
    facts: list[Fact] = []
    for unit in units:
        if isinstance(unit, Single):
            text, keep = unit.make(d)
            facts.append(Fact(unit.kind, unit.style, unit.name, _at(rng, 0.02, 0.92), text, keep))
        elif isinstance(unit, Correction):
            (old_text, old_keep), (new_text, new_keep) = unit.make(d)
            first = _at(rng, 0.02, 0.55)
            later = _at(rng, first + 0.12, min(0.95, first + 0.6))
            index = len(facts)
            facts.append(
                Fact(unit.old_kind, unit.old_style, f"{unit.name}/old", first, old_text, old_keep)
            )
            facts.append(
                Fact("correction", unit.style, unit.name, later, new_text, new_keep, index)
            )
        else:
            (one_text, one_keep), (two_text, two_keep) = unit.make(d)
            index = len(facts)
            facts.append(
                Fact(unit.kind, unit.style, unit.name, _at(rng, 0.02, 0.92), one_text, one_keep,
                     coexists=index + 1)
            )  # fmt: skip
            facts.append(
                Fact(unit.kind, unit.style, unit.name, _at(rng, 0.02, 0.92), two_text, two_keep,
                     coexists=index)
            )  # fmt: skip
    for fact in facts:
        missing = [s for s in fact.keep if s not in fact.text]
        if missing:
            raise AssertionError(f"{fact.template}: keep {missing} not in its text")
    return facts


MAX_ATTEMPTS = 200


def generate(seed: int, count: int = 24, variant: int = 0) -> dict[str, Any]:
    """``count`` canaries for session ``variant`` of a run seeded ``seed``, in the shape
    ``bench/retention.py`` reads (``{"canaries": [...]}``), ordered by ``at``."""
    units = plan(seed, count, variant)
    for attempt in range(MAX_ATTEMPTS):
        facts = _draw(units, random.Random(f"heldout-e/{seed}/{variant}/{attempt}"))
        if not clashes(facts):
            break
    else:
        raise RuntimeError(f"no clash-free draw for seed {seed} variant {variant}")
    order = sorted(range(len(facts)), key=lambda i: facts[i].at)  # stable at equal ``at``
    ids = {i: f"e{variant}-{n:02d}" for n, i in enumerate(order)}
    canaries: list[dict[str, Any]] = []
    for i in order:
        fact = facts[i]
        item: dict[str, Any] = {
            "id": ids[i],
            "kind": fact.kind,
            "at": fact.at,
            "text": fact.text,
            "keep": list(fact.keep),
            "style": fact.style,
            "template": fact.template,
        }
        if fact.supersedes is not None:
            item["supersedes"] = ids[fact.supersedes]
        if fact.coexists is not None:
            item["coexists"] = ids[fact.coexists]
        canaries.append(item)
    return {
        "generator": GENERATOR,
        "seed": seed,
        "variant": variant,
        "attempt": attempt,
        "canaries": canaries,
    }


if __name__ == "__main__":
    import json
    import sys

    args = [int(a) for a in sys.argv[1:4]]
    print(json.dumps(generate(*args) if args else generate(1), indent=2))
