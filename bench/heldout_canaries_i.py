"""Held-out canary generator I: facts for ``bench/retention.py`` written blind.

Lab note (2026-12-07).

**Why.** The retention benchmark plants facts (canaries) into recorded agent sessions, compacts
five times and checks which facts survive and whether a corrected value is still shown as
current. A memory tuned on one generator's wording looks better than it is, so this generator was
written by someone who has seen neither the summarizer nor any other generator: its figures
measure memory on facts nobody tuned for.

**What I read.** ``bench/retention.py`` (``Canary``, ``canaries_from``, ``CanarySource``,
``_generator``, ``insertion_step``, ``insert_canaries``, ``add_to_observation``,
``add_to_assistant``, ``wire_text``, ``strip_replaced``, ``presents_as_current``, ``KeepIndex``,
``score_context``, ``aggregate``, ``main``'s options), ``tests/bench/support.py``,
``tests/bench/test_retention_generated.py``, ``tests/conftest.py``, ``tests/needs.py``,
``pyproject.toml``, ``Makefile``, the shared data README, and
``tests/bench/test_heldout_canaries_h.py`` for the shape of a test file only. The recorded
sessions only by substring search (a drawn value must not already occur there). While looking
up where ``main`` gets a fresh seed I saw the five lines of ``fresh_seed`` in
``bench/canary_generator.py`` (a ``Random().randrange``), nothing else of that file.

**What I did not read.** ``src/abridged/engine/summarize/``, the facts/ledger/references code of
``src/abridged/core/``, every other generator and its tests (but H's test file's shape), any
canary JSON, ``bench/RESULTS.md``, git log messages, issue notes, any benchmark figure. The
benchmark ran only in the one-session smoke test, which asserts and prints no figure.

**Design.**

- Kinds: twelve fact kinds (``FACT_KINDS``: constraint, prohibition, preference, identifier,
  decision, quantity, path, version, owner, deadline, endpoint, limit) and ``correction``, the
  kind of the later canary of a correction pair (``supersedes`` names the earlier one, which keeps
  its own kind).
- Templates (``TEMPLATES``, 68): 36 ``single`` (three per kind), 24 ``correction`` (each kind at
  least once: a fact, then 0.12-0.38 of the session later the same subject with another value of
  the same form) and 8 ``coexist`` (two subjects of one template, e.g. two services each with its
  own endpoint; both values hold, ``coexists`` names the other; neither corrects the other).
  Corrections are 24 / 68 = 35 % of the templates.
- Styles (``STYLES``, 62 surfaces in three registers): 38 generic surfaces that render any fact
  (``GENERIC``: 12 a user pastes or types, 14 a tool prints, 12 the assistant writes), and one
  surface per way of correcting (``PHRASINGS``, 24: 7 user, 11 tool, 6 assistant). Chosen away
  from the earlier sets' surfaces: user: Jira comment, GitHub issue form, chat with emoji and
  typos, Discord message, todo.txt line, acceptance criteria, shall-requirement, review
  suggestion block, pasted sed one-liner, helpdesk ticket, relayed SMS, Notion callout; tool:
  Pulumi stack outputs, Sentry event, Prometheus exposition, redis-cli HGET, mongosh findOne,
  Rust const, Go const, mysql client box, Kafka ConsumerConfig dump, OpenTelemetry debug
  exporter span, vault kv get, Airflow default_args, devtools console, Kustomize JSON6902 patch;
  assistant: its own tool-call intent, jupytext markdown cell, TL;DR, docstring, drafted commit
  body, awk one-liner, guard assert, assumptions list, pinned note, progress line, mermaid edge,
  scratchpad block.
- Corrections (24 phrasings, one per correction template, each its own surface, so the stale
  share by correcting template is the stale share by phrasing; 11 name the old value beside the
  new, 13 name only the new): a deadline slipping in chat, a handover mentioned in passing, "on
  second thought", an accepted doc suggestion, "I'd rather go with", an async standup, a
  Dependabot title, a milestone PATCH, a PagerDuty override, an incident bot raising a limit
  after an incident, redis ``CONFIG SET``, a credit note, pip's reinstall log, a shell ``mv``, a
  devtools redirect, a Kafka consumer restarted with another group, an OPA deny rule, a
  duplicate-closed issue, the assistant redoing its own sum, a transposed digit, "going with X
  after all", a CODEOWNERS read, a ``readlink -f`` check, a ``git remote set-url``. No word that
  announces a correction is in more than a quarter of them, and none writes ``(was ...)`` or
  ``[superseded`` (the benchmark's replaced-markers).

**How values are drawn.** From ``random.Random("heldout-i:values:SEED:COUNT:VARIANT")``: made-up
words of consonant-vowel syllables (no word twice in a session), combined into forms that real
values have (``ZUV-48213``, ``/srv/kelvo/dranit-412``, ``7.38.214``, ``2027-03-14 16:30``,
``41.5 GiB``, ``EUR 418,377``, ``1,875 req/min``, ``3117mb``, ``Ines Velorak``,
``https://kelvo-41.dranim.internal/v3`` ...); the two values of a pair have one form, neither
contains the other, and no value is part of another canary's text (a correction may name the value
it replaces). A correction that raises a limit, bumps a version or pushes a date back has its
later value above the first. Each canary also carries ``subject`` (and a correction its
``phrasing``), which retention.py does not read: the tests check pairs with them. Which
templates and generic surfaces a session gets comes from per-seed shuffled cycles consumed
session after session, so any 16 consecutive sessions plant every template (and, at the default
count, every surface).
Nothing reads the recorded sessions: the forms make a chance occurrence unlikely and the tests
search the recorded file for every value of a large sample.

**EVALUATION_SEEDS** = 1975364, 8933458, 9849437 (``random.SystemRandom()`` before any code used
them; no test runs them). Run::

    .venv/bin/python bench/retention.py --generator bench/heldout_canaries_i.py --seed 1975364
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

NAME = "heldout-i"
EVALUATION_SEEDS = (1975364, 8933458, 9849437)
REGISTERS = ("user", "tool", "assistant")
FACT_KINDS = (
    "constraint", "prohibition", "preference", "identifier", "decision", "quantity",
    "path", "version", "owner", "deadline", "endpoint", "limit",
)  # fmt: skip
KINDS = (*FACT_KINDS, "correction")
SHAPES = ("single", "correction", "coexist")


# -- drawing values -------------------------------------------------------------------------------

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_FIRST = (
    "Ines", "Tomas", "Priya", "Oskar", "Mireille", "Kwame", "Sunniva", "Daichi", "Leontyne",
    "Bartek", "Odalys", "Rafferty", "Ysolde", "Caetano", "Henrike", "Ilkka", "Marisol",
    "Teodor", "Ashwini", "Gudrun", "Anselm", "Folake", "Jovana", "Radek",
)  # fmt: skip
_EMOJI = ("👍", "🙏", "😅", "🚀", "🙃", "✅", "👀")


class Draw:
    """Made-up values from one session's random stream; nothing drawn twice, and no value part
    of another."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.words: list[str] = []
        self.values: list[str] = []

    @staticmethod
    def _fresh(taken: list[str], make: Callable[[], str]) -> str:
        while True:
            value = make()
            if not any(value in t or t in value for t in taken):
                taken.append(value)
                return value

    def word(self, syllables: int = 3) -> str:
        def make() -> str:
            body = "".join(
                self.rng.choice(_CONSONANTS) + self.rng.choice(_VOWELS) for _ in range(syllables)
            )
            return body + self.rng.choice(("", "k", "n", "r", "s", "t"))

        return self._fresh(self.words, make)

    def num(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def hexes(self, n: int) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))

    def pick(self, options: tuple[str, ...]) -> str:
        return self.rng.choice(options)

    def value(self, form: str) -> str:
        return self.value_of(lambda: FORMS[form](self))

    def value_of(self, make: Callable[[], str]) -> str:
        return self._fresh(self.values, make)

    # decorations: who, when and where around a fact (never a keep string)
    def handle(self) -> str:
        return f"{self.word(2)}.{self.word(2)}"

    def clock(self) -> str:
        return f"{self.num(8, 19):02d}:{self.num(0, 59):02d}"

    def stamp(self) -> str:
        return (
            f"2026-{self.num(1, 12):02d}-{self.num(1, 28):02d}T{self.clock()}:{self.num(10, 59)}Z"
        )

    def ref(self) -> str:
        return f"{self.pick(('OPS', 'PLAT', 'INFRA', 'CORE'))}-{self.num(100, 999)}"


def _person(d: Draw) -> str:
    return f"{d.pick(_FIRST)} {d.word(3).capitalize()}"


def _hour(d: Draw) -> str:
    return f"{d.num(9, 18):02d}:{d.pick(('00', '15', '30', '45'))}"


def _date(d: Draw) -> str:
    return f"{d.num(2027, 2029)}-{d.num(1, 12):02d}-{d.num(1, 28):02d} {_hour(d)}"


FORMS: dict[str, Callable[[Draw], str]] = {
    "ticket": lambda d: f"{d.word(2)[:3].upper()}-{d.num(10000, 99999)}",
    "account": lambda d: f"{d.num(1000, 9999)}-{d.num(1000, 9999)}-{d.num(1000, 9999)}",
    "group": lambda d: f"{d.word(2)}-consumers-{d.num(10, 99)}",
    "flagkey": lambda d: f"ff_{d.word(2)}_{d.word(2)}_{d.num(10, 99)}",
    "branch": lambda d: f"release/{d.word(3)}-{d.num(10, 99)}",
    "region": lambda d: f"{d.pick(('eu', 'ap', 'sa', 'me'))}-{d.word(2)}-{d.num(2, 9)}",
    "runner": lambda d: f"{d.word(2)}-runner-{d.num(100, 999)}",
    "table": lambda d: f"{d.word(2)}_{d.word(2)}_{d.num(10, 99)}",
    "bucket": lambda d: f"s3://{d.word(2)}-{d.word(2)}-{d.num(100, 999)}",
    "flag": lambda d: f"--{d.word(2)}-{d.word(3)}",
    "registry": lambda d: f"{d.word(2)}{d.num(10, 99)}.{d.word(2)}.io",
    "lib": lambda d: f"py{d.word(3)}",
    "tool": lambda d: f"{d.word(3)}-lint",
    "style": lambda d: f"{d.word(3)}-case",
    "backend": lambda d: f"{d.word(3)}{d.pick(('db', 'mq', 'kv'))}",
    "option": lambda d: f"option {d.word(3).capitalize()}-{d.pick(('A', 'B', 'C', 'D'))}",
    "gib": lambda d: f"{d.num(11, 999)}.{d.num(1, 9)} GiB",
    "eur": lambda d: f"EUR {d.num(10_000, 999_999):,}",
    "tib": lambda d: f"{d.num(2, 98)}.{d.num(10, 99)} TiB",
    "path": lambda d: f"/srv/{d.word(2)}/{d.word(3)}-{d.num(100, 999)}",
    "logfile": lambda d: f"/var/log/{d.word(2)}/{d.word(3)}.log",
    "socket": lambda d: f"/run/{d.word(2)}/{d.word(2)}-{d.num(10, 99)}.sock",
    "version": lambda d: f"{d.num(2, 9)}.{d.num(10, 59)}.{d.num(100, 999)}",
    "person": _person,
    "date": _date,
    "url": lambda d: f"https://{d.word(2)}-{d.num(10, 99)}.{d.word(3)}.internal/v{d.num(2, 9)}",
    "hostport": lambda d: f"{d.word(3)}.{d.word(2)}.lan:{d.num(20000, 64999)}",
    "giturl": lambda d: f"git@{d.word(2)}.{d.word(2)}.dev:{d.word(2)}/{d.word(3)}.git",
    "reqmin": lambda d: f"{d.num(1_000, 99_999):,} req/min",
    "mb": lambda d: f"{d.num(1100, 9900)}mb",
    "rows": lambda d: f"{d.num(10_000, 990_000):,} rows",
    "uploadmb": lambda d: f"{d.num(101, 999)} MB per upload",
}


def shape(value: str) -> str:
    """A value's form: runs of digits and of letters blurred, the rest kept."""
    return re.sub(r"[A-Za-z]+", "a", re.sub(r"[0-9]+", "9", value))


# -- the facts ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fact:
    """One subject and its value, as a style renders it."""

    subject: str
    key: str
    value: str
    sentence: str

    @property
    def said(self) -> str:
        """The sentence capitalized (unless it starts with the value, kept as it is)."""
        if self.sentence.startswith(self.value):
            return self.sentence
        return self.sentence[:1].upper() + self.sentence[1:]

    @property
    def upper(self) -> str:
        return self.key.upper()

    @property
    def camel(self) -> str:
        return "".join(p.capitalize() for p in self.key.split("_"))

    @property
    def dotted(self) -> str:
        return self.key.replace("_", ".")


@dataclass(frozen=True, slots=True)
class Template:
    """A kind of fact: its subject, key and value form, and two ways to say it (``{v}`` the
    value; a coexist template's ``{s}`` the subject that tells its two facts apart)."""

    name: str
    kind: str
    shape: str
    subject: str
    key: str
    form: str
    says: tuple[str, str]
    phrasing: str | None = None

    @property
    def size(self) -> int:
        return 1 if self.shape == "single" else 2


def _single(name: str, kind: str, subject: str, key: str, form: str, *says: str) -> Template:
    return Template(name, kind, "single", subject, key, form, (says[0], says[1]))


def _fix(name: str, kind: str, subject: str, key: str, form: str, *says: str, by: str) -> Template:
    return Template(name, kind, "correction", subject, key, form, (says[0], says[1]), by)


def _both(name: str, kind: str, subject: str, key: str, form: str, *says: str) -> Template:
    return Template(name, kind, "coexist", subject, key, form, (says[0], says[1]))


TEMPLATES: tuple[Template, ...] = (
    # single: three per kind
    _single("deploy-branch", "constraint", "the deploy branch", "deploy_branch", "branch",
            "production deploys go out from {v} only", "nothing but {v} may be deployed"),
    _single("data-region", "constraint", "the data residency region", "data_region", "region",
            "customer data has to stay in {v}", "every bucket must be created in {v}"),
    _single("ci-runner", "constraint", "the CI runner label", "ci_runner", "runner",
            "the GPU tests must run on {v}", "only {v} has the licence for the e2e suite"),
    _single("frozen-table", "prohibition", "the frozen table", "frozen_table", "table",
            "do not write to {v} under any circumstances", "{v} is read-only, never alter it"),
    _single("no-push-bucket", "prohibition", "the archive bucket", "archive_bucket", "bucket",
            "never upload anything to {v}", "{v} is legal hold, do not touch it"),
    _single("banned-flag", "prohibition", "the banned CLI flag", "banned_flag", "flag",
            "never pass {v} to the migrator", "the flag {v} must not be used in scripts"),
    _single("mock-lib", "preference", "the preferred HTTP mocking library", "mock_lib", "lib",
            "please mock HTTP with {v}", "we prefer {v} for request stubs in tests"),
    _single("lint-tool", "preference", "the preferred linter", "linter", "tool",
            "run {v} rather than ad hoc checks", "the team likes {v} for the style pass"),
    _single("naming-style", "preference", "the naming convention", "naming", "style",
            "name new modules in {v}", "stick to {v} for new file names please"),
    _single("incident-ticket", "identifier", "the incident ticket", "incident_ticket", "ticket",
            "reference {v} in every commit for this fix", "this work is tracked under {v}"),
    _single("sandbox-account", "identifier", "the sandbox account id", "sandbox_account",
            "account", "the sandbox runs in account {v}", "use account {v} for the dry run"),
    _single("flag-key", "identifier", "the feature flag key", "flag_key", "flagkey",
            "the rollout is gated by {v}", "toggle {v} to expose the new export"),
    _single("cache-backend", "decision", "the cache backend", "cache_backend", "backend",
            "we settled on {v} for the cache layer", "the cache layer will use {v}"),
    _single("retry-design", "decision", "the retry design", "retry_design", "option",
            "the review picked {v} for retries", "retries follow {v} from the design doc"),
    _single("log-sink", "decision", "the audit log sink", "audit_sink", "logfile",
            "audit events are written to {v}", "we agreed the audit trail lives in {v}"),
    _single("disk-need", "quantity", "the index disk requirement", "index_disk", "gib",
            "the search index needs {v} of disk", "plan for {v} of index storage"),
    _single("monthly-budget", "quantity", "the monthly cloud budget", "cloud_budget", "eur",
            "the cloud budget is {v} a month", "we may spend {v} per month on compute"),
    _single("egress", "quantity", "the expected monthly egress", "egress", "tib",
            "expect {v} of egress each month", "egress is forecast at {v} monthly"),
    _single("scratch-dir", "path", "the scratch directory", "scratch_dir", "path",
            "put temporary artefacts under {v}", "the scratch space is {v}"),
    _single("app-log", "path", "the application log file", "app_log", "logfile",
            "the worker logs to {v}", "tail {v} when the worker misbehaves"),
    _single("agent-socket", "path", "the agent socket", "agent_socket", "socket",
            "the sidecar listens on {v}", "connect to the agent through {v}"),
    _single("runtime-pin", "version", "the runtime version pin", "runtime_version", "version",
            "pin the runtime to {v}", "the runtime has to be exactly {v}"),
    _single("sdk-pin", "version", "the SDK version", "sdk_version", "version",
            "build against SDK {v}", "the SDK we certify is {v}"),
    _single("schema-version", "version", "the schema version", "schema_version", "version",
            "the events use schema {v}", "emit schema {v} in every payload"),
    _single("oncall", "owner", "this week's on-call", "oncall", "person",
            "page {v} if the batch job fails", "{v} is on call this week"),
    _single("reviewer", "owner", "the required reviewer", "reviewer", "person",
            "{v} must approve changes to the ledger code", "get a review from {v} before merge"),
    _single("budget-owner", "owner", "the budget owner", "budget_owner", "person",
            "cost questions go to {v}", "{v} signs off on spend"),
    _single("code-freeze", "deadline", "the code freeze", "code_freeze", "date",
            "code freeze starts {v}", "nothing merges after {v}"),
    _single("cert-expiry", "deadline", "the certificate expiry", "cert_expiry", "date",
            "the TLS certificate expires {v}", "renew the certificate before {v}"),
    _single("migration-cutoff", "deadline", "the migration cutoff", "migration_cutoff", "date",
            "the old API is switched off {v}", "clients must migrate by {v}"),
    _single("push-gateway", "endpoint", "the metrics push gateway", "push_gateway", "url",
            "push metrics to {v}", "the push gateway is {v}"),
    _single("staging-api", "endpoint", "the staging API host", "staging_api", "hostport",
            "staging answers on {v}", "point the client at {v} for staging"),
    _single("artifact-repo", "endpoint", "the artifact repository remote", "artifact_remote",
            "giturl", "artifacts are pushed to {v}", "the artifact remote is {v}"),
    _single("api-rate", "limit", "the partner API rate limit", "partner_rate", "reqmin",
            "the partner API allows {v}", "stay under {v} when calling the partner API"),
    _single("upload-cap", "limit", "the upload size cap", "upload_cap", "uploadmb",
            "uploads are capped at {v}", "reject anything above {v}"),
    _single("batch-cap", "limit", "the batch size cap", "batch_cap", "rows",
            "a batch may hold at most {v}", "split imports so no batch exceeds {v}"),
    # correction: a fact, then the same subject with another value
    _fix("launch-date", "deadline", "the beta launch", "beta_launch", "date",
         "the beta launch is planned for {v}", "beta goes live {v}", by="slipped-chat"),
    _fix("exporter-owner", "owner", "the billing exporter", "billing_owner", "person",
         "{v} owns the billing exporter", "billing exporter issues go to {v}", by="handover-aside"),
    _fix("residency", "constraint", "the analytics region", "analytics_region", "region",
         "analytics data must remain in {v}",
         "keep the analytics cluster in {v}", by="second-thought"),
    _fix("release-branch", "constraint", "the release branch", "release_branch", "branch",
         "hotfixes land on {v} only", "cut the hotfix from {v}", by="doc-suggestion"),
    _fix("fixture-lib", "preference", "the fixture library", "fixture_lib", "lib",
         "use {v} for test fixtures", "fixtures should be built with {v}", by="rather-chat"),
    _fix("queue-backend", "decision", "the job queue backend", "queue_backend", "backend",
         "the job queue will run on {v}", "we chose {v} for the job queue", by="async-standup"),
    _fix("parser-pin", "version", "the parser library version", "parser_version", "version",
         "the parser stays on {v}", "keep the parser library at {v}", by="dependabot-bump"),
    _fix("milestone-due", "deadline", "the GA milestone", "ga_due", "date",
         "the GA milestone is due {v}", "GA is scheduled for {v}", by="milestone-patch"),
    _fix("payments-oncall", "owner", "the payments on-call", "payments_oncall", "person",
         "payments pages go to {v}", "{v} covers payments on call", by="pager-override"),
    _fix("ingest-limit", "limit", "the ingest rate limit", "ingest_rate_limit", "reqmin",
         "ingest is limited to {v}", "the ingest endpoint accepts {v}", by="incident-bot"),
    _fix("cache-memory", "limit", "the session cache maxmemory", "maxmemory", "mb",
         "the session cache may use {v}", "session cache maxmemory is {v}", by="redis-config-set"),
    _fix("compute-charge", "quantity", "the March compute charge", "march_compute", "eur",
         "the March compute charge is {v}", "March compute came to {v}", by="credit-note"),
    _fix("worker-pin", "version", "the worker package version", "worker_version", "version",
         "the worker package runs {v}", "deploy the worker package at {v}", by="pip-reinstall"),
    _fix("fixtures-dir", "path", "the fixtures directory", "fixtures_dir", "path",
         "test fixtures live in {v}", "load fixtures from {v}", by="mv-session"),
    _fix("auth-callback", "endpoint", "the auth callback URL", "auth_callback", "url",
         "the login flow calls back to {v}",
         "register {v} as the auth callback", by="devtools-redirect"),
    _fix("consumer-group", "identifier", "the consumer group id", "group_id", "group",
         "the indexer consumes as {v}", "the indexer's group id is {v}", by="consumer-restart"),
    _fix("blocked-registry", "prohibition", "the blocked image registry", "blocked_registry",
         "registry", "never pull images from {v}", "images from {v} are not allowed",
         by="rego-deny"),
    _fix("flaky-issue", "identifier", "the flaky upload test issue", "flaky_issue", "ticket",
         "the flaky upload test is tracked in {v}",
         "link flaky upload failures to {v}", by="duplicate-close"),
    _fix("storage-estimate", "quantity", "the nightly storage estimate", "nightly_storage",
         "gib", "nightly snapshots need {v}", "the nightly storage estimate is {v}",
         by="recompute"),
    _fix("customer-account", "identifier", "the customer account id", "customer_account",
         "account", "the customer's account id is {v}",
         "bill usage to account {v}", by="transposed-digit"),
    _fix("search-engine", "decision", "the search engine", "search_engine", "backend",
         "search will be served by {v}", "we picked {v} for search", by="after-all"),
    _fix("migrations-reviewer", "owner", "the migrations reviewer", "migrations_reviewer",
         "person", "{v} reviews the migrations folder",
         "migrations need {v}'s approval", by="codeowners-read"),
    _fix("model-dir", "path", "the active model directory", "model_dir", "path",
         "the served model is in {v}", "load weights from {v}", by="readlink-check"),
    _fix("mirror-remote", "endpoint", "the mirror remote", "mirror_remote", "giturl",
         "the mirror remote is {v}", "mirror pushes go to {v}", by="remote-set-url"),
    # coexist: two subjects of one template, both values hold
    _both("service-endpoint", "endpoint", "the {s} service endpoint", "{s}_endpoint",
          "hostport", "the {s} service answers on {v}", "call {s} at {v}"),
    _both("queue-owner", "owner", "the owner of the {s} queue", "{s}_queue_owner", "person",
          "{v} owns the {s} queue", "the {s} queue is looked after by {v}"),
    _both("region-cutover", "deadline", "the {s} region cutover", "{s}_cutover", "date",
          "the {s} region cuts over {v}", "{s} switches regions {v}"),
    _both("bucket-mount", "path", "the {s} bucket mount", "{s}_mount", "path",
          "the {s} bucket is mounted at {v}", "read {s} files from {v}"),
    _both("package-pin", "version", "the {s} package pin", "{s}_version", "version",
          "{s} is pinned at {v}", "install {s} at {v}"),
    _both("tenant-rate", "limit", "the {s} tenant rate limit", "{s}_rate", "reqmin",
          "tenant {s} may send {v}", "throttle tenant {s} at {v}"),
    _both("env-account", "identifier", "the {s} environment account", "{s}_account", "account",
          "the {s} environment is account {v}", "{s} resources live in account {v}"),
    _both("cluster-quota", "quantity", "the {s} cluster disk quota", "{s}_quota", "gib",
          "the {s} cluster gets {v} of disk", "cap {s} cluster storage at {v}"),
)  # fmt: skip
BY_NAME = {t.name: t for t in TEMPLATES}


# -- surfaces -------------------------------------------------------------------------------------

Render = Callable[[Fact, Draw], str]


def _mysql(f: Fact, d: Draw) -> str:
    a, b = max(len(f.key), 4), max(len(f.value), 5)
    line = f"+{'-' * (a + 2)}+{'-' * (b + 2)}+"
    return "\n".join(
        [
            f"mysql> SELECT name, value FROM settings WHERE name = '{f.key}';",
            line,
            f"| {'name'.ljust(a)} | {'value'.ljust(b)} |",
            line,
            f"| {f.key.ljust(a)} | {f.value.ljust(b)} |",
            line,
            f"1 row in set (0.0{d.num(0, 9)} sec)",
        ]
    )


def _vault(f: Fact, d: Draw) -> str:
    pad = max(len(f.key), 3) + 4
    return "\n".join(
        [
            f"$ vault kv get secret/{d.word(2)}/settings",
            "====== Data ======",
            f"{'Key'.ljust(pad)}Value",
            f"{'---'.ljust(pad)}-----",
            f"{f.key.ljust(pad)}{f.value}",
        ]
    )


USER_STYLES: dict[str, Render] = {
    "jira-comment": lambda f, d: (
        f"{d.handle()} added a comment - {d.clock()}\n{f.said}. Please keep that in mind for "
        f"{d.ref()}."
    ),
    "issue-form": lambda f, d: (
        f"### Environment\n\n- {f.subject}: `{f.value}`\n\n### Additional context\n\n{f.said}."
    ),
    "emoji-typo-chat": lambda f, d: (
        f"{d.pick(('ok so', 'btw', 'fyi', 'quick one:'))} {f.sentence} {d.pick(_EMOJI)} "
        f"{d.pick(('thx!!', 'ty', 'pls dont forgt', 'kk?', 'lmk if thats a prob'))}"
    ),
    "discord-message": lambda f, d: (
        f"**{d.handle()}** — Today at {d.clock()}\n{f.said} {d.pick(_EMOJI)}"
    ),
    "todo-txt": lambda f, d: (
        f"(A) 2026-{d.num(1, 12):02d}-{d.num(10, 28)} {f.said} +{d.word(2)} @work"
    ),
    "acceptance-criteria": lambda f, d: (
        f"Acceptance criteria (from the story):\n  AC{d.num(1, 6)}. {f.said}.\n"
        f"  AC{d.num(7, 9)}. Existing tests keep passing."
    ),
    "shall-requirement": lambda f, d: (
        f"REQ-{d.num(100, 999)} (shall): {f.said}.\nRationale: agreed with {d.handle()}."
    ),
    "review-suggestion": lambda f, d: (
        f'```suggestion\n{f.key} = "{f.value}"\n```\n{f.said} — please apply this one.'
    ),
    "pasted-sed": lambda f, d: (
        f"run this pls:\nsed -i 's|^{f.key}=.*|{f.key}={f.value}|' {d.word(2)}.cfg\n({f.sentence})"
    ),
    "helpdesk-ticket": lambda f, d: (
        f"Ticket #{d.num(10000, 99999)} · Priority: Normal\nRequester: {d.handle()}\n"
        f"Description:\n{f.said}."
    ),
    "relayed-sms": lambda f, d: (
        f"[SMS from +44 7700 900{d.num(100, 999)}] {f.sentence}. sent from my phone"
    ),
    "notion-callout": lambda f, d: f"> 💡 **{f.subject[:1].upper()}{f.subject[1:]}**\n> {f.said}.",
}

TOOL_STYLES: dict[str, Render] = {
    "pulumi-outputs": lambda f, d: (
        f'Outputs:\n    {f.key}: "{f.value}"\n    stack: "{d.word(2)}-prod"\n\n'
        f"Resources:\n    {d.num(12, 80)} unchanged"
    ),
    "sentry-event": lambda f, d: (
        f"Sentry event {d.hexes(32)}\n  level: warning\n  tags:\n    {f.key}: {f.value}\n"
        f"  extra.note: {f.sentence}"
    ),
    "prom-exposition": lambda f, d: (
        f"# HELP app_setting_info {f.subject}\n# TYPE app_setting_info gauge\n"
        f'app_setting_info{{name="{f.key}",value="{f.value}"}} 1'
    ),
    "redis-hget": lambda f, d: f'127.0.0.1:6379> HGET settings {f.key}\n"{f.value}"',
    "mongosh-findone": lambda f, d: (
        f"test> db.settings.findOne({{ _id: '{f.key}' }})\n"
        f"{{ _id: '{f.key}', value: '{f.value}', note: \"{f.sentence}\" }}"
    ),
    "rust-const": lambda f, d: (
        f'// src/settings.rs\n/// {f.said}.\npub const {f.upper}: &str = "{f.value}";'
    ),
    "go-const": lambda f, d: f'// {f.camel} is {f.subject}.\nconst {f.camel} = "{f.value}"',
    "mysql-client": _mysql,
    "kafka-config-dump": lambda f, d: (
        f"[{d.stamp()}] INFO ConsumerConfig values: \n\tauto.offset.reset = earliest\n"
        f"\t{f.dotted} = {f.value}\n\tenable.auto.commit = false"
    ),
    "otel-debug-span": lambda f, d: (
        f"Span #0\n    Trace ID       : {d.hexes(32)}\n    Name           : load-settings\n"
        f"Attributes:\n     -> settings.{f.key}: Str({f.value})"
    ),
    "vault-kv-get": _vault,
    "airflow-default-args": lambda f, d: (
        f'default_args = {{\n    "retries": 2,\n    "{f.key}": "{f.value}",  # {f.sentence}\n}}'
    ),
    "devtools-console": lambda f, d: f"> localStorage.getItem('{f.key}')\n< '{f.value}'",
    "kustomize-patch": lambda f, d: (
        f"patches:\n  - target:\n      kind: ConfigMap\n      name: {d.word(2)}-settings\n"
        f'    patch: |-\n      - op: add\n        path: /data/{f.key}\n        value: "{f.value}"'
    ),
}

ASSISTANT_STYLES: dict[str, Render] = {
    "tool-call-intent": lambda f, d: (
        f'→ next call: edit_file(path="settings.toml", set={{"{f.key}": "{f.value}"}})'
        f"  # {f.sentence}"
    ),
    "jupytext-cell": lambda f, d: f"# %% [markdown]\n# **Note.** {f.said}.",
    "tldr": lambda f, d: f"TL;DR: {f.sentence}.",
    "docstring-note": lambda f, d: (
        f'"""Settings loader.\n\n{f.subject[:1].upper()}{f.subject[1:]}: {f.value}.\n"""'
    ),
    "drafted-commit": lambda f, d: (
        f"Drafted commit message:\n\n    config: pin {f.key}\n\n    {f.said}."
    ),
    "awk-in-place": lambda f, d: (
        f"I'll set it with a one-liner:\n\n    awk -F= -v OFS== "
        f'\'$1=="{f.key}"{{$2="{f.value}"}}1\' settings.cfg'
    ),
    "guard-assert": lambda f, d: (
        f'Adding a guard so this cannot drift:\n\n    assert settings.{f.key} == "{f.value}"'
    ),
    "assumptions": lambda f, d: (
        f"Assumptions I'm carrying forward:\n  (a) {f.sentence}\n"
        f"  (b) the test suite is the source of truth"
    ),
    "pinned-note": lambda f, d: f"📌 {f.said}.",
    "progress-line": lambda f, d: f"[{d.num(2, 4)}/{d.num(5, 9)}] {f.subject} → {f.value} ✓",
    "mermaid-edge": lambda f, d: (
        f"```mermaid\nflowchart LR\n  cfg[{f.key}] -->|{f.value}| app[{d.word(2)}]\n```"
    ),
    "scratchpad": lambda f, d: (
        f"<scratchpad>\n{f.key} := {f.value}  -- {f.sentence}\n</scratchpad>"
    ),
}

GENERIC: dict[str, Render] = {**USER_STYLES, **TOOL_STYLES, **ASSISTANT_STYLES}


# -- corrections ----------------------------------------------------------------------------------

Correct = Callable[[Fact, Fact, Draw], str]


@dataclass(frozen=True, slots=True)
class Phrasing:
    """One way of correcting a value, with its own surface (its style)."""

    name: str
    register: str
    names_old: bool
    render: Correct

    @property
    def style(self) -> str:
        return self.name


def _pip(old: Fact, new: Fact, d: Draw) -> str:
    pkg = f"{old.key.split('_')[0]}-{d.word(2)}"
    return "\n".join(
        [
            f"Collecting {pkg}=={new.value}",
            f"Installing collected packages: {pkg}",
            f"  Attempting uninstall: {pkg}",
            f"    Found existing installation: {pkg} {old.value}",
            f"    Uninstalling {pkg}-{old.value}:",
            f"      Successfully uninstalled {pkg}-{old.value}",
            f"Successfully installed {pkg}-{new.value}",
        ]
    )


PHRASINGS_LIST: tuple[Phrasing, ...] = (
    # user
    Phrasing("slipped-chat", "user", False, lambda o, n, d: (
        f"ugh, {n.subject} slipped again → {n.value} {d.pick(_EMOJI)} sry")),
    Phrasing("handover-aside", "user", True, lambda o, n, d: (
        f"oh and {n.value} is taking over {n.subject} from {o.value} next sprint, fyi")),
    Phrasing("second-thought", "user", False, lambda o, n, d: (
        f"on second thought, let's keep {n.subject} in {n.value}. legal prefers it")),
    Phrasing("doc-suggestion", "user", True, lambda o, n, d: (
        f"From the spec doc, suggestion by {d.handle()} (accepted):\n"
        f"  {n.subject}: ~~{o.value}~~ {n.value}")),
    Phrasing("rather-chat", "user", False, lambda o, n, d: (
        f"hmm, for {n.subject} I'd rather go with {n.value} tbh, it plays nicer with pytest")),
    Phrasing("async-standup", "user", True, lambda o, n, d: (
        f"Async standup — {d.handle()}\nYesterday: benchmarked {o.value}, too slow under load\n"
        f"Today: {n.subject} goes to {n.value}\nBlockers: none")),
    Phrasing("dependabot-bump", "user", True, lambda o, n, d: (
        f"can you look at #{d.num(1000, 9999)} \"Bump {n.key.split('_')[0]} from {o.value} "
        f"to {n.value}\"? merging it today")),
    # tool
    Phrasing("milestone-patch", "tool", False, lambda o, n, d: (
        f"$ gh api -X PATCH repos/{d.word(2)}/{d.word(2)}/milestones/{d.num(3, 40)} "
        f"-f due_on='{n.value}'\n{{\n  \"title\": \"GA\",\n  \"due_on\": \"{n.value}\"\n}}")),
    Phrasing("pager-override", "tool", False, lambda o, n, d: (
        f"PagerDuty · Override created\n  Schedule: {n.subject}\n  On call: {n.value}\n"
        f"  Starts: {d.stamp()}")),
    Phrasing("incident-bot", "tool", True, lambda o, n, d: (
        f"🚨 incident-bot: INC-{d.num(1000, 9999)} resolved.\n"
        f"Follow-up applied: {n.key} {o.value} ⇒ {n.value} so the backlog can drain.")),
    Phrasing("redis-config-set", "tool", False, lambda o, n, d: (
        f"127.0.0.1:6379> CONFIG SET {n.key} {n.value}\nOK\n127.0.0.1:6379> CONFIG GET "
        f"{n.key}\n1) \"{n.key}\"\n2) \"{n.value}\"")),
    Phrasing("credit-note", "tool", False, lambda o, n, d: (
        f"Credit note CN-{d.num(10000, 99999)} issued against INV-{d.num(10000, 99999)}\n"
        f"  {n.subject}: {n.value}\n  Reason: billing error on reserved instances")),
    Phrasing("pip-reinstall", "tool", True, _pip),
    Phrasing("mv-session", "tool", True, lambda o, n, d: (
        f"$ mv {o.value} {n.value}\n$ ls -d {n.value}\n{n.value}")),
    Phrasing("devtools-redirect", "tool", True, lambda o, n, d: (
        f"▶ GET {o.value} 308 Permanent Redirect\n  Location: {n.value}\n"
        f"▶ GET {n.value} 200 OK")),
    Phrasing("consumer-restart", "tool", False, lambda o, n, d: (
        f"[{d.stamp()}] INFO [Consumer clientId=indexer-{d.num(1, 9)}] Subscribed to topic(s): "
        f"events\n\tgroup.id = {n.value}")),
    Phrasing("rego-deny", "tool", False, lambda o, n, d: (
        f"# policy/images.rego\ndeny[msg] {{\n  startswith(input.image, \"{n.value}\")\n"
        f"  msg := \"{n.subject} may not be used\"\n}}")),
    Phrasing("duplicate-close", "tool", True, lambda o, n, d: (
        f"$ gh issue view {o.value}\nstate: CLOSED (duplicate)\n"
        f"{d.handle()} closed this as a duplicate of {n.value}")),
    # assistant
    Phrasing("recompute", "assistant", True, lambda o, n, d: (
        f"Hmm, I mis-added earlier: {n.subject} comes to {n.value}, not {o.value} — "
        f"I had counted the replica twice.")),
    Phrasing("transposed-digit", "assistant", False, lambda o, n, d: (
        f"Small fix to my notes: I had two digits of {n.subject} swapped. "
        f"It is {n.value}.")),
    Phrasing("after-all", "assistant", True, lambda o, n, d: (
        f"Going with {n.value} after all for {n.subject}: the load test I ran favours it "
        f"over {o.value}.")),
    Phrasing("codeowners-read", "assistant", False, lambda o, n, d: (
        f"Per the CODEOWNERS file I just opened, {n.subject} is {n.value} — not the name "
        f"I gave before.")),
    Phrasing("readlink-check", "assistant", False, lambda o, n, d: (
        f"Checked with `readlink -f current`: {n.subject} resolves to {n.value}, so that is "
        f"the path I'll use from here.")),
    Phrasing("remote-set-url", "assistant", False, lambda o, n, d: (
        f"Pointed the mirror elsewhere:\n\n    git remote set-url mirror {n.value}\n"
        f"    git remote -v   # mirror {n.value} (fetch)")),
)  # fmt: skip
PHRASINGS = {p.name: p for p in PHRASINGS_LIST}

STYLES: dict[str, str] = {
    **dict.fromkeys(USER_STYLES, "user"),
    **dict.fromkeys(TOOL_STYLES, "tool"),
    **dict.fromkeys(ASSISTANT_STYLES, "assistant"),
    **{p.style: p.register for p in PHRASINGS_LIST},
}


# -- planning sessions ----------------------------------------------------------------------------


class _Stream:
    """Items in per-seed shuffled cycles, taken session after session: a run of sessions plants
    every item before any comes back."""

    def __init__(self, items: tuple[str, ...], salt: str) -> None:
        self.items, self.salt, self.cycle = items, salt, 0
        self.pending: list[str] = []

    def _refill(self) -> None:
        order = list(self.items)
        random.Random(f"{self.salt}:{self.cycle}").shuffle(order)
        self.cycle += 1
        self.pending += order

    def take(self, fits: Callable[[str], bool]) -> str | None:
        for _ in range(3):
            for i, item in enumerate(self.pending):
                if fits(item):
                    return self.pending.pop(i)
            self._refill()
        return None


@dataclass(frozen=True, slots=True)
class Slot:
    """One template in a session, and the generic surface of its (first) facts."""

    template: str
    styles: tuple[str, ...]


def _fits(name: str, *, left: int, chosen: tuple[str, ...]) -> bool:
    return BY_NAME[name].size <= left and name not in chosen


@functools.cache
def _plans(seed: int, count: int, sessions: int) -> tuple[tuple[Slot, ...], ...]:
    """The templates and generic surfaces of sessions ``0 .. sessions - 1``."""
    templates = _Stream(tuple(BY_NAME), f"heldout-i:templates:{seed}:{count}")
    styles = _Stream(tuple(GENERIC), f"heldout-i:styles:{seed}:{count}")
    out: list[tuple[Slot, ...]] = []
    for _ in range(sessions):
        chosen: list[str] = []
        left = count
        while left > 0:
            name = templates.take(functools.partial(_fits, left=left, chosen=tuple(chosen)))
            if name is None:  # more canaries than templates: a single one again
                name = next(t.name for t in TEMPLATES if t.shape == "single")
            chosen.append(name)
            left -= BY_NAME[name].size
        slots = []
        for name in chosen:
            t = BY_NAME[name]
            n = 2 if t.shape == "coexist" else 1
            picked = tuple(styles.take(lambda _s: True) or "tldr" for _ in range(n))
            slots.append(Slot(name, picked))
        out.append(tuple(slots))
    return tuple(out)


def _plan(seed: int, count: int, variant: int) -> tuple[Slot, ...]:
    return _plans(seed, count, variant + 1)[variant]


# -- generating -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Made:
    """A canary before it gets its id (``ref`` ties a pair together)."""

    ref: str
    at: float
    kind: str
    text: str
    value: str
    subject: str
    style: str
    template: str
    supersedes: str | None = None
    coexists: str | None = None
    phrasing: str | None = None


def _fact(t: Template, value: str, d: Draw, s: str = "") -> Fact:
    say = d.pick(t.says)
    return Fact(
        t.subject.format(s=s),
        t.key.format(s=s),
        value,
        say.format(v=value, s=s),
    )


# corrections that raise, bump or push back draw a value above the first
_RISES = {"version", "date", "reqmin", "mb"}


def _order(value: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"[0-9]+", value.replace(",", "")))


def _two_values(t: Template, d: Draw) -> tuple[str, str]:
    """The first and the later value of a correction of ``t`` (the later one above where such
    a correction raises, bumps or pushes back)."""
    first = d.value(t.form)
    if t.form == "date":  # pushed back by days to weeks, at another hour
        moved = datetime.strptime(first, "%Y-%m-%d %H:%M") + timedelta(days=d.num(5, 60))
        return first, d.value_of(lambda: f"{moved:%Y-%m-%d} {_hour(d)}")
    then = d.value(t.form)
    if t.form in _RISES and _order(first) > _order(then):
        return then, first
    return first, then


def _made_for(slot: Slot, index: int, d: Draw) -> list[_Made]:
    t = BY_NAME[slot.template]
    ref = f"{index:02d}"
    if t.shape == "single":
        fact = _fact(t, d.value(t.form), d)
        text = GENERIC[slot.styles[0]](fact, d)
        at = round(d.rng.uniform(0.04, 0.93), 3)
        return [_Made(ref, at, t.kind, text, fact.value, fact.subject, slot.styles[0], t.name)]
    if t.shape == "coexist":
        made = []
        for half, other in (("a", "b"), ("b", "a")):
            subject = d.word(2)
            fact = _fact(t, d.value(t.form), d, subject)
            style = slot.styles[0 if half == "a" else 1]
            at = round(d.rng.uniform(0.04, 0.93), 3)
            made.append(
                _Made(
                    ref + half,
                    at,
                    t.kind,
                    GENERIC[style](fact, d),
                    fact.value,
                    fact.subject,
                    style,
                    t.name,
                    coexists=ref + other,
                )
            )
        return made
    assert t.phrasing is not None
    phrasing = PHRASINGS[t.phrasing]
    first, then = _two_values(t, d)
    old, new = _fact(t, first, d), _fact(t, then, d)
    first_at = round(d.rng.uniform(0.04, 0.55), 3)
    later_at = round(first_at + d.rng.uniform(0.12, 0.38), 3)
    return [
        _Made(ref + "a", first_at, t.kind, GENERIC[slot.styles[0]](old, d), old.value,
              old.subject, slot.styles[0], t.name),
        _Made(ref + "b", later_at, "correction", phrasing.render(old, new, d), new.value,
              new.subject, phrasing.style, t.name, supersedes=ref + "a", phrasing=phrasing.name),
    ]  # fmt: skip


def generate(seed: int, count: int = 24, variant: int = 0) -> dict[str, object]:
    """``count`` canaries for session ``variant`` of a run seeded ``seed``, in the shape
    ``bench/retention.py`` reads (``canaries_from``), in order of ``at``."""
    d = Draw(random.Random(f"heldout-i:values:{seed}:{count}:{variant}"))
    made = [m for i, slot in enumerate(_plan(seed, count, variant)) for m in _made_for(slot, i, d)]
    made.sort(key=lambda m: (m.at, m.ref))
    ids = {m.ref: f"i{variant}-{n:02d}-{d.hexes(4)}" for n, m in enumerate(made)}
    canaries: list[dict[str, object]] = []
    for m in made:
        item: dict[str, object] = {
            "id": ids[m.ref],
            "kind": m.kind,
            "at": m.at,
            "text": m.text,
            "keep": [m.value],
            "style": m.style,
            "template": m.template,
            "subject": m.subject,  # not read by retention.py: for the tests
        }
        if m.supersedes is not None:
            item["supersedes"] = ids[m.supersedes]
            item["phrasing"] = m.phrasing
        if m.coexists is not None:
            item["coexists"] = ids[m.coexists]
        canaries.append(item)
    return {"name": NAME, "seed": seed, "variant": variant, "count": count, "canaries": canaries}


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(generate(int(sys.argv[1]) if len(sys.argv) > 1 else 0), indent=2))
