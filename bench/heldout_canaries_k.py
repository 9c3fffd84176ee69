"""Held-out canary generator, set K: facts and wording written blind, for ``bench/retention.py``.

Lab note
========

Why
---
The retention benchmark plants facts ("canaries") into recorded agent sessions, compacts five
times and checks which facts survive and whether a corrected value is still shown as current.
A summarizer tuned against one set of canaries can learn that set's words. This is the
eleventh set written without looking at the summarizer or at any earlier set's facts, so its
templates, surfaces and ways of correcting are nobody's tuning target. Run it with
``bench/retention.py --generator bench/heldout_canaries_k.py --seed S``.

What I read
-----------
- ``bench/retention.py``, the interface only: ``Canary``, ``canaries_from``,
  ``load_canaries``, ``CanarySource``, ``_generator``, ``Seeded``, ``insertion_step``, the
  observation helpers (``_append_line``, ``insert_in_output``, ``observation_index``,
  ``add_to_observation``), ``add_to_assistant``, ``_holder``, ``insert_canaries``,
  ``wire_text``, ``REPLACED_MARK`` / ``_WAS`` / ``_WAS_VALUE``, ``strip_replaced``,
  ``presents_as_current``, ``KeepIndex``, ``Score``, ``score_context``, the first half of
  ``aggregate`` (it tallies kinds, styles, templates, kind/style cells, coexisting canaries
  and staleness by correcting template, and counts ``r.ambiguous`` pairs) and the
  ``add_argument`` and ``parser.error`` lines of ``main`` (``--canary-count`` must be >= 6).
  Also the listing of its top-level names and constants (``grep -n "^def \\|^class "``),
  which showed lines such as ``PLACEMENTS``, ``METHODS``, ``CYCLES = 5``, ``TARGET = 0.95``,
  ``DEFAULT_DATA``, ``DEFAULT_CANARIES``.
- ``tests/bench/support.py`` whole, ``tests/conftest.py``, ``tests/needs.py``, lines 85-117
  of ``pyproject.toml`` (the pytest, ruff and mypy sections and the line before them).
- ``tests/bench/test_heldout_canaries_j.py``: its list of test names and lines 1-72. Lines
  1-72 are more than the list of earlier surface names I was allowed: by accident I also saw
  its module docstring, imports, ``KEYS`` (which includes ``"subject"``), a ``MARKERS`` tuple of
  words announcing a correction (none may be in more than a quarter of the corrections),
  ``SEEDS = (2, 4, 61)``, ``OTHER_TEST_SEEDS`` and two small sampling helpers.
- ``grep -n "^def _" bench/heldout_canaries_j.py``: the names (and line numbers) of set J's
  helper and surface functions, nothing of their bodies.
- ``/work/shared/data/swebench-gemini3/README.md``. The recorded sessions only by substring
  search for drawn values and for the shapes of my value forms (counts of distinct matches
  such as ``[0-9]+MB``, which showed ``290MB`` and a few ``NMB``, ``0/min``, ``28/min``; and
  the 30 characters around one drawn word, ``qidon``, inside a base64 blob), except one
  accident: ``head -c 600 | cut -c1-300`` showed the first 300 characters of
  ``trajectories.jsonl`` (instance ``astropy__astropy-14369`` and the opening of its system
  prompt).
- Directory listings: ``ls`` of the repository root, ``bench/``, ``tests/`` and
  ``tests/bench/`` (file names only, among them the earlier sets' files, a canary JSON file
  and ``RESULTS.md``, none opened) and of ``.venv/bin``.

What I did not read
-------------------
Nothing under ``src/abridged/engine/summarize/``, nothing about facts, ledger, references or
anchors under ``src/abridged/``, no other ``bench/heldout_canaries*.py`` body,
``bench/canary_generator.py``, no canary JSON file, ``bench/RESULTS.md``, no issue notes, no
benchmark figures, the rest of ``retention.py`` (its module docstring included). The tiny run
in the tests is checked for its keys only; I did not look at its figures.

Design
------
- 52 templates over the 12 kinds: 24 single facts, 20 correction pairs (a later fact of the
  same subject whose value replaces the earlier one) and 8 coexisting pairs (two subjects,
  one value form, both hold). A session of 24 canaries carries 10 singles, 5 corrections
  (10 canaries) and 2 coexisting pairs (4 canaries); every template sits in a per-seed
  shuffled ring that consecutive sessions walk, so any 16 consecutive sessions plant each.
- 54 fact surfaces in three registers (18 ``chat``: what people write; 18 ``tool``: pasted or
  observed command output; 18 ``code``: source and config), chosen away from the earlier sets'
  names (the brief's list, set J's test list and set J's own functions): Matrix and Zulip
  rooms, a quoted reply, a retro card, ``aws ssm``, ``consul kv``, ``dotnet user-secrets``,
  ``systemctl show``, sqlite's line mode, ``debconf-show``, ``gsettings``, ``knife``, a Rust
  ``const``, a Go ``var`` block, Spring ``@Value``, an Elixir config, a Nix attrset, CUE, a
  ``.bazelrc``, a C ``#define``, a Procfile, a justfile, a ConfigMap's data, and so on.
- 18 ways of correcting (also surfaces, in the three registers): 9 name the old value beside
  the new one, 9 only the new one. The scorer treats an old value as no longer current only
  inside ``(was ...)`` or on a line holding ``[superseded``, so the corrections naming the old
  value put it there (7 a ``(was ...)`` in different sentences: a rota swap, an issue field
  log, a commit subject, a plan sheet revision, a PR description, a source comment, a
  forwarded note; 2 a ``[superseded by ...]`` tag: a requirements trace, a decision
  register). Those naming only the new one are a thread reply, a handover, a settings query,
  a partial diff hunk, a plan change in passing, a shell ``export``, a smoke run, an accepted
  answer and a ticket resolution. No marker word is in more than a few of them.
- Values are drawn fresh per seed and session from made-up words (consonant-vowel syllables,
  one of them a ``q`` with no ``u``: not English, not in the recorded sessions) and random
  numbers, in less common forms: ISO week dates (``2033-W17-2``), ordinal dates
  (``2034-211``), Roman-month dates (``9.XI.2032``), patch-level versions (``7.31.0-p4``),
  revisions (``r482137``), calendar versions, ``Mi``/``MiB``/``GiB`` sizes, ``1h14m07s``
  durations, ``/min`` and ``k/day`` rates, ``s3://`` and ``unix://`` locations, ``@handles``;
  a value that is a word alone has seven letters (shorter draws turned up in the recorded
  sessions' base64 blobs when I searched them for drawn values). Deadlines only move later
  and versions only go up. A session is redrawn until no keep string is in another canary's
  text (a correction may name the value it replaces, and then only as replaced), each is in
  its own text and the two values of a pair do not contain one another.
- ``(was ...)`` is in 7 of the 18 ways (about 40% of the corrections): it is the one everyday
  form the scorer reads as "replaced"; the other marker words each stay in few of them.
- The text does not depend on the placement: chat, pasted tool output and code all occur
  as user messages, inside observations and in assistant messages alike.
- Each canary carries ``subject`` (the same for a fact and its correction, two for a
  coexisting pair) besides what ``canaries_from`` reads.

Evaluation seeds
----------------
Drawn with ``random.SystemRandom`` before any code was written: 3818605, 9264636, 7430795
(``EVALUATION_SEEDS``). No test runs them.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

EVALUATION_SEEDS = (3818605, 9264636, 7430795)

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
    "limit",
)
REGISTERS = ("chat", "tool", "code")
SHAPES = ("single", "correction", "coexist")

# -- values ---------------------------------------------------------------------------------------

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeio"
_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")


def _word(r: random.Random) -> str:
    """A made-up word: three consonant-vowel syllables, one opening with ``q`` (never followed
    by ``u``), sometimes a closing consonant."""
    syllables = 3
    q_at = r.randrange(syllables)
    out = "".join(
        ("q" if i == q_at else r.choice(_CONSONANTS)) + r.choice(_VOWELS) for i in range(syllables)
    )
    # six letters at least: four-letter draws such as ``noqa`` are in real code, five-letter
    # ones in the base64 blobs of the recorded sessions
    return out + (r.choice("lnrsk") if r.random() < 0.5 else "")


def _term(r: random.Random) -> str:
    """A made-up word of seven letters, for a value that is a word alone."""
    word = _word(r)
    return word if len(word) == 7 else word + r.choice("lnrsk")


def _Word(r: random.Random) -> str:  # noqa: N802
    return _word(r).capitalize()


def _date(r: random.Random) -> dt.date:
    return dt.date(r.randint(2031, 2037), 1, 1) + dt.timedelta(days=r.randrange(330))


def _isoweek(day: dt.date) -> str:
    year, week, weekday = day.isocalendar()
    return f"{year}-W{week:02d}-{weekday}"


def _ordinal(day: dt.date) -> str:
    return f"{day.year}-{day.timetuple().tm_yday:03d}"


def _roman(day: dt.date) -> str:
    return f"{day.day}.{_ROMAN[day.month - 1]}.{day.year}"


def parse_date(value: str) -> dt.date:
    """The day of a date written in one of this set's three forms."""
    if "-W" in value:
        return dt.datetime.strptime(value, "%G-W%V-%u").date()
    if "." in value:
        day, month, year = value.split(".")
        return dt.date(int(year), _ROMAN.index(month) + 1, int(day))
    return dt.datetime.strptime(value, "%Y-%j").date()


_DATE_FORMS: dict[str, Callable[[dt.date], str]] = {
    "isoweek": _isoweek,
    "ordinal": _ordinal,
    "roman": _roman,
}


def _semverp(r: random.Random) -> str:
    return f"{r.randint(3, 19)}.{r.randint(10, 40)}.{r.randint(0, 20)}-p{r.randint(1, 9)}"


def _rev(r: random.Random) -> str:
    return f"r{r.randint(100_000, 899_999)}"


def _calver(r: random.Random) -> str:
    return f"{r.randint(2031, 2036)}.{r.randint(1, 12)}.{r.randint(0, 30)}"


def version_key(value: str) -> tuple[int, ...]:
    """The order of a version written in one of this set's three forms."""
    return tuple(int(n) for n in re.findall(r"\d+", value))


def _higher_version(old: str, r: random.Random) -> str:
    if old.startswith("r"):
        return f"r{int(old[1:]) + r.randint(40, 9_000)}"
    numbers = version_key(old)
    at = r.randrange(1, len(numbers)) if "-p" in old else r.randrange(len(numbers))
    bumped = [*numbers[:at], numbers[at] + r.randint(1, 3), *([0] * (len(numbers) - at - 1))]
    if "-p" in old:
        a, b, c, p = bumped
        return f"{a}.{b}.{c}-p{max(p, 1)}"
    y, m, micro = bumped
    return f"{y}.{min(max(m, 1), 12)}.{micro}" if m <= 12 else f"{y + 1}.1.{micro}"


def _digits(r: random.Random, n: int) -> str:
    return str(r.randint(10 ** (n - 1), 10**n - 1))


_FORMS: dict[str, Callable[[random.Random], str]] = {
    "header": lambda r: f"X-{_Word(r)}-Tag",
    "channel": lambda r: f"#{_word(r)}-{_word(r)}",
    "bucket": lambda r: f"{_word(r)}-{_digits(r, 3)}-{_word(r)}",
    "flag": lambda r: f"--{_word(r)}-{_word(r)}",
    "factory": lambda r: f"{_Word(r)}Factory",
    "prefix": lambda r: f"{_word(r)}/",
    "account": lambda r: f"acct_{_word(r)}{_digits(r, 4)}",
    "tenant": lambda r: f"tnt-{_digits(r, 3)}-{_word(r)}",
    "word": _term,
    "packfmt": lambda r: f"{_word(r)}pack",
    "mebi": lambda r: f"{r.randint(10_000, 30_000)}Mi",
    "duration": lambda r: f"{r.randint(1, 3)}h{r.randint(10, 59)}m{r.randint(0, 59):02d}s",
    "optdir": lambda r: f"/opt/{_word(r)}/{_word(r)}.d/",
    "glob": lambda r: f"{_word(r)}/{_word(r)}/**/*.snap",
    "semverp": _semverp,
    "rev": _rev,
    "calver": _calver,
    "handle": lambda r: f"@{_word(r)}",
    "team": lambda r: f"team-{_word(r)}",
    "url": lambda r: f"https://{_word(r)}.{_word(r)}.dev/v{r.randint(2, 9)}/{_word(r)}",
    "grpc": lambda r: f"{_word(r)}.{_word(r)}.svc:{r.randint(20_000, 39_999)}",
    "perminute": lambda r: f"{r.randint(101, 4_999)}/min",
    "megs": lambda r: f"{r.randint(1_001, 4_999)}MiB",
    "image": lambda r: f"{_word(r)}-ci:{_digits(r, 4)}",
    "branch": lambda r: f"{_word(r)}/{_word(r)}-{_digits(r, 3)}",
    "ticket": lambda r: (
        "".join(r.sample(["Q", *r.sample("BDFGKLMNPRTVZ", 2)], 3)) + f"-{_digits(r, 4)}"
    ),
    "project": lambda r: f"prj-{_word(r)}-{_digits(r, 5)}",
    "euros": lambda r: f"{r.randint(1_000, 9_999)}.{r.choice(('00', '50', '25', '75'))} EUR",
    "gibi": lambda r: f"{r.randint(1_001, 9_999)}GiB",
    "s3": lambda r: f"s3://{_word(r)}-{_digits(r, 3)}/{_word(r)}/",
    "pemfile": lambda r: f"~/.{_word(r)}/{_word(r)}.pem",
    "email": lambda r: f"{_word(r)}.{_word(r)}@{_word(r)}.io",
    "socket": lambda r: f"unix:///run/{_word(r)}/{_word(r)}.sock",
    "burst": lambda r: f"{r.randint(101, 970)}/{r.choice((15, 20, 30, 45, 90))}s",
    "perday": lambda r: f"{r.randint(101, 989)}k/day",
    "host": lambda r: f"{_word(r)}-{r.randint(1, 99):02d}.{_word(r)}.lan",
    "node": lambda r: f"{_word(r)}-{_digits(r, 2)}",
}


def _draw(form: str, r: random.Random) -> str:
    if form in _DATE_FORMS:
        return _DATE_FORMS[form](_date(r))
    return _FORMS[form](r)


def _replacement(form: str, old: str, r: random.Random) -> str:
    """A new value of ``form`` for a correction: a later date, a higher version, else fresh."""
    if form in _DATE_FORMS:
        return _DATE_FORMS[form](parse_date(old) + dt.timedelta(days=r.randint(6, 75)))
    if form in ("semverp", "rev", "calver"):
        return _higher_version(old, r)
    return _draw(form, r)


# -- templates ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Template:
    """One fact: its kind, shape, value form, and per subject (two for a coexisting pair) the
    subject, a config key and a sentence (``{v}`` the value, ``{x}``/``{pkg}`` made-up names
    drawn per session)."""

    name: str
    kind: str
    shape: str
    form: str
    subjects: tuple[str, ...]
    keys: tuple[str, ...]
    says: tuple[str, ...]


def _one(name: str, kind: str, form: str, subject: str, key: str, says: str) -> Template:  # noqa: PLR0917
    return Template(name, kind, "single", form, (subject,), (key,), (says,))


def _fix(name: str, kind: str, form: str, subject: str, key: str, says: str) -> Template:  # noqa: PLR0917
    return Template(name, kind, "correction", form, (subject,), (key,), (says,))


def _two(
    name: str, kind: str, form: str, pair: tuple[tuple[str, str, str], tuple[str, str, str]]
) -> Template:
    (s1, k1, w1), (s2, k2, w2) = pair
    return Template(name, kind, "coexist", form, (s1, s2), (k1, k2), (w1, w2))


# fmt: off
TEMPLATES: tuple[Template, ...] = (
    # single facts
    _one("billing-header", "constraint", "header", "the header {x} billing calls must carry",
         "billing_required_header", "every call to the {x} billing API must carry the {v} header"),
    _one("schema-signoff", "constraint", "channel", "where schema changes get signed off",
         "schema_signoff_channel", "schema changes have to be signed off in {v} before they merge"),
    _one("archive-bucket", "prohibition", "bucket", "the bucket nobody may write to",
         "readonly_bucket", "never write to {v}, it is the {x} archive copy"),
    _one("migrator-flag", "prohibition", "flag", "the migrator flag that must not be passed",
         "forbidden_migrator_flag", "do not pass {v} to the migrator, it drops the {x} indexes"),
    _one("test-factory", "preference", "factory", "how new tests should build records",
         "preferred_test_factory", "I'd like new tests to build their records with {v}, not "
         "with hand-written dicts"),
    _one("branch-prefix", "preference", "prefix", "the branch name prefix", "branch_prefix",
         "please start branch names with {v} so the {x} bot picks them up"),
    _one("sandbox-account", "identifier", "account", "the sandbox account id",
         "sandbox_account_id", "the sandbox account for anything {x} is {v}"),
    _one("test-tenant", "identifier", "tenant", "the {x} test tenant", "test_tenant_id",
         "the {x} test tenant is {v}"),
    _one("queue-adapter", "decision", "word", "the queue adapter", "queue_adapter",
         "we decided to go with {v} as the queue adapter for {x}"),
    _one("wire-format", "decision", "packfmt", "the wire format between {x} and the gateway",
         "wire_format", "the wire format between {x} and the gateway is settled: {v}"),
    _one("worker-memory", "quantity", "mebi", "the {x} worker memory request",
         "worker_memory_request", "the {x} worker pod needs {v} of memory"),
    _one("suite-duration", "quantity", "duration", "how long the regression suite runs",
         "regression_suite_duration", "the full regression suite takes {v} on the shared runner"),
    _one("vendor-drop", "path", "optdir", "where the {x} vendor drop lands", "vendor_drop_dir",
         "the {x} vendor drop lands in {v}"),
    _one("snapshot-glob", "path", "glob", "where the snapshot files live", "snapshot_glob",
         "the snapshot files live under {v}"),
    _one("prod-runtime", "version", "semverp", "the {pkg} version production runs",
         "prod_{pkg}_version", "production runs {pkg} {v}"),
    _one("schema-revision", "version", "rev", "the {x} schema revision", "schema_revision",
         "the {x} schema is at revision {v}"),
    _one("exporter-owner", "owner", "handle", "who owns the {x} exporter", "exporter_owner",
         "{v} owns the {x} exporter, ask them before touching it"),
    _one("payments-oncall", "owner", "team", "the payments on-call rota", "payments_oncall",
         "payments on-call this quarter is {v}"),
    _one("contract-renewal", "deadline", "isoweek", "the {x} contract renewal date",
         "contract_renewal_due", "the {x} contract renewal is due {v}"),
    _one("purge-deadline", "deadline", "ordinal", "the data-retention purge deadline",
         "retention_purge_deadline", "the data-retention purge must finish by {v}"),
    _one("sandbox-api", "endpoint", "url", "the sandbox API base URL", "sandbox_api_base",
         "the sandbox API lives at {v}"),
    _one("pricing-grpc", "endpoint", "grpc", "the pricing service address", "pricing_grpc_addr",
         "the pricing service answers on {v}"),
    _one("partner-rate", "limit", "perminute", "the {x} partner API rate limit",
         "partner_rate_limit", "the {x} partner API allows {v}, and that is a hard limit"),
    _one("upload-cap", "limit", "megs", "the upload size cap", "upload_size_cap",
         "uploads are capped at {v}"),
    # corrections: a later fact of the same subject replaces the value
    _fix("ci-image", "constraint", "image", "the image CI jobs must run on", "ci_runner_image",
         "CI jobs must run on the {v} image"),
    _fix("frozen-branch", "prohibition", "branch", "the branch nobody may merge into",
         "frozen_branch", "nobody merges into {v} until the {x} review closes"),
    _fix("log-library", "preference", "word", "the preferred structured-logging library",
         "preferred_log_library", "for structured logs the team prefers {v}"),
    _fix("tracking-ticket", "identifier", "ticket", "the ticket this work is tracked in",
         "tracking_ticket", "this work is tracked in {v}"),
    _fix("prod-project", "identifier", "project", "the production project id",
         "prod_project_id", "the production project id is {v}"),
    _fix("rollout-strategy", "decision", "word", "the {x} rollout strategy", "rollout_strategy",
         "the {x} service goes out with the {v} rollout strategy"),
    _fix("cloud-budget", "quantity", "euros", "the monthly cloud budget", "monthly_cloud_budget",
         "the monthly cloud budget is {v}"),
    _fix("volume-size", "quantity", "gibi", "the {x} data volume size", "data_volume_size",
         "the {x} data volume is {v}"),
    _fix("export-location", "path", "s3", "where the nightly exports are written", "export_uri",
         "the nightly exports are written to {v}"),
    _fix("signing-key", "path", "pemfile", "where the release signing key is",
         "signing_key_path", "the release signing key is at {v}"),
    _fix("sdk-pin", "version", "semverp", "the {pkg} pin", "{pkg}_pin", "pin {pkg} to {v}"),
    _fix("base-image-tag", "version", "calver", "the base image tag", "base_image_tag",
         "the base image tag is {v}"),
    _fix("path-reviewer", "owner", "handle", "who reviews changes under /{x}", "path_reviewer",
         "{v} reviews anything under /{x}"),
    _fix("escalation-contact", "owner", "email", "where escalations go", "escalation_contact",
         "escalations go to {v}"),
    _fix("code-freeze", "deadline", "roman", "when the code freeze starts", "code_freeze_start",
         "the code freeze starts {v}"),
    _fix("pentest-report", "deadline", "isoweek", "the pen-test report due date",
         "pentest_report_due", "the pen-test report is due {v}"),
    _fix("webhook-target", "endpoint", "url", "the {x} webhook target", "webhook_target",
         "the {x} webhook target is {v}"),
    _fix("metrics-socket", "endpoint", "socket", "the socket the metrics agent reports to",
         "metrics_socket", "the metrics agent reports to {v}"),
    _fix("login-burst", "limit", "burst", "the login burst limit", "login_burst_limit",
         "logins are throttled at {v} per client"),
    _fix("export-quota", "limit", "perday", "the daily export quota", "daily_export_quota",
         "the daily export quota is {v}"),
    # coexisting pairs: two subjects, one value form, both hold
    _two("split-tickets", "identifier", "ticket", (
        ("the ticket for the API half", "api_ticket", "the API half is tracked in {v}"),
        ("the ticket for the UI half", "ui_ticket", "the UI half is tracked in {v}"))),
    _two("replica-hosts", "endpoint", "host", (
        ("the primary replica host", "primary_replica", "the primary replica is {v}"),
        ("the secondary replica host", "secondary_replica", "the secondary replica is {v}"))),
    _two("area-reviewers", "owner", "handle", (
        ("who reviews the migrations", "migrations_reviewer", "{v} reviews the migrations"),
        ("who reviews the {x} SDK", "sdk_reviewer", "{v} reviews the {x} SDK"))),
    _two("beta-and-ga", "deadline", "ordinal", (
        ("the beta cut date", "beta_cut", "the beta cut is {v}"),
        ("the GA date", "ga_date", "general availability is {v}"))),
    _two("regional-exports", "path", "s3", (
        ("the EU export location", "eu_export_uri", "EU customer exports go to {v}"),
        ("the US export location", "us_export_uri", "US customer exports go to {v}"))),
    _two("app-builds", "version", "calver", (
        ("the iOS build in store review", "ios_build", "the iOS build in store review is {v}"),
        ("the Android build in store review", "android_build",
         "the Android build in store review is {v}"))),
    _two("tier-rates", "limit", "perminute", (
        ("the free-tier rate limit", "free_tier_rate", "the free tier gets {v}"),
        ("the paid-tier rate limit", "paid_tier_rate", "the paid tier gets {v}"))),
    _two("pinned-nodes", "prohibition", "node", (
        ("the ledger node that must not be restarted", "no_restart_ledger",
         "never restart {v} during business hours, it is the ledger node"),
        ("the archive node that must not be restarted", "no_restart_archive",
         "{v} must not be restarted during business hours either, it holds the archive lock"))),
)
# fmt: on
TEMPLATE_BY_NAME = {t.name: t for t in TEMPLATES}

# -- surfaces -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fact:
    """One value of one subject, ready to be written."""

    kind: str
    subject: str
    key: str
    value: str
    sentence: str

    @property
    def line(self) -> str:
        """The sentence as written: capitalized (unless it opens with the value), a full stop."""
        s = self.sentence
        head = s if s.startswith(self.value) else s[0].upper() + s[1:]
        return f"{head}."

    @property
    def KEY(self) -> str:  # noqa: N802
        return self.key.upper()

    @property
    def camel(self) -> str:
        first, *rest = self.key.split("_")
        return first + "".join(p.capitalize() for p in rest)


_NAMES = (
    "Amara", "Bogdan", "Chiara", "Dmitri", "Esi", "Farid", "Greta", "Hiroshi", "Ines", "Jonas",
    "Kemal", "Lucia", "Mateus", "Nadia", "Oskar", "Priya", "Rosalind", "Soren", "Tamsin", "Yusuf",
)  # fmt: skip
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


def _name(r: random.Random) -> str:
    return r.choice(_NAMES)


def _clock(r: random.Random) -> str:
    return f"{r.randint(8, 18):02d}:{r.randint(0, 59):02d}"


def _sha(r: random.Random) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(7))


def _stamp(r: random.Random) -> str:
    return f"{r.choice(('Mar', 'Apr', 'May', 'Jun'))} {r.randint(1, 28)}"


Surface = Callable[[Fact, random.Random], str]
Fixer = Callable[[Fact, str, random.Random], str]


# chat: what people write ------------------------------------------------------------------------
def _matrix_room(f: Fact, r: random.Random) -> str:
    return f"[{_clock(r)}] <@{_name(r).lower()}:chat.{_word(r)}.org> {f.line}"


def _zulip_topic(f: Fact, r: random.Random) -> str:
    return f"#{_word(r)} > {f.subject}\n**{_name(r)}**: {f.line}"


def _reply_quoted(f: Fact, r: random.Random) -> str:
    return f"On {r.choice(_DAYS)}, {_name(r)} wrote:\n> {f.line}\n\nThanks, noted for the agent."


def _sticky_note(f: Fact, r: random.Random) -> str:
    return f"(copied off the sticky on {_name(r)}'s monitor)\n{f.subject}: {f.value}\n{f.line}"


def _action_items(f: Fact, r: random.Random) -> str:
    return (
        f"Action items from {r.choice(_DAYS)}'s sync:\n- {_name(r)}: chase the vendor\n"
        f"- everyone: {f.line}"
    )


def _nitpick(f: Fact, r: random.Random) -> str:
    return f"nit (non-blocking): {f.sentence}; `{f.key}` in the fixtures should say the same."


def _direct_message(f: Fact, r: random.Random) -> str:
    return f"{_name(r)} (direct message, {_clock(r)}): hey, before I forget, {f.sentence}"


def _teams_message(f: Fact, r: random.Random) -> str:
    return f"{_name(r)}  {_clock(r)}\n{f.line}\n👍 {r.randint(2, 6)}"


def _issue_template(f: Fact, r: random.Random) -> str:
    return f"### Environment\n- {f.subject}: {f.value}\n\n### Notes\n{f.line}"


def _pairing_banter(f: Fact, r: random.Random) -> str:
    a, b = r.sample(_NAMES, 2)
    return f"{a}: wait, what was {f.subject} again?\n{b}: {f.value}. {f.line}"


def _retro_card(f: Fact, r: random.Random) -> str:
    column = r.choice(("went well", "to improve", "keep doing"))
    return f"Retro card [{column}]: {f.line} +{r.randint(2, 9)}"


def _numbered_thread(f: Fact, r: random.Random) -> str:
    return f"1/ context for anyone joining {f.subject} late\n2/ {f.line}\n3/ questions below"


def _note_to_self(f: Fact, r: random.Random) -> str:
    return f"note to self: {f.sentence}"


def _onboarding_page(f: Fact, r: random.Random) -> str:
    return f"## Before your first deploy\n\n{f.line} Ask in the #{_word(r)} room if unsure."


def _changelog_entry(f: Fact, r: random.Random) -> str:
    return f"### Unreleased\n\n- Documented {f.subject}: {f.value}. {f.line}"


def _lab_notebook(f: Fact, r: random.Random) -> str:
    return f"{_stamp(r)}, {_clock(r)}. {f.line} ({_name(r)} confirmed it.)"


def _standing_order(f: Fact, r: random.Random) -> str:
    return f"One thing for the whole task, please: {f.sentence}."


def _phone_summary(f: Fact, r: random.Random) -> str:
    return f"Just got off the phone with {_name(r)}. Short version: {f.sentence}."


# tool: command output ---------------------------------------------------------------------------
def _ssm_parameter(f: Fact, r: random.Random) -> str:
    return (
        f"$ aws ssm get-parameter --name /{_word(r)}/{f.key} "
        f"--query Parameter.Value --output text\n{f.value}"
    )


def _consul_kv_detailed(f: Fact, r: random.Random) -> str:
    path = f"config/{_word(r)}/{f.key}"
    return (
        f"$ consul kv get -detailed {path}\nCreateIndex      {r.randint(100, 999)}\n"
        f"Flags            0\nKey              {path}\nValue            {f.value}"
    )


def _user_secrets_list(f: Fact, r: random.Random) -> str:
    return f"$ dotnet user-secrets list\nLogging:Level = Information\n{f.camel} = {f.value}"


def _heroku_config(f: Fact, r: random.Random) -> str:
    app = f"{_word(r)}-api"
    return f"$ heroku config -a {app}\n=== {app} Config Vars\nLOG_LEVEL: info\n{f.KEY}: {f.value}"


def _gh_variable_list(f: Fact, r: random.Random) -> str:
    return (
        f"$ gh variable list\nNAME\tVALUE\tUPDATED\n{f.KEY}\t{f.value}\t"
        f"about {r.randint(2, 9)} days ago\nNODE_VERSION\t20\tabout 3 months ago"
    )


def _npm_pkg_get(f: Fact, r: random.Random) -> str:
    return f'$ npm pkg get config.{f.camel}\n"{f.value}"'


def _systemctl_show(f: Fact, r: random.Random) -> str:
    return (
        f"$ systemctl show {_word(r)}.service -p Environment\n"
        f"Environment=RUST_LOG=info {f.KEY}={f.value}"
    )


def _sqlite_line_mode(f: Fact, r: random.Random) -> str:
    return (
        f"sqlite> .mode line\nsqlite> SELECT * FROM settings WHERE key = '{f.key}';\n"
        f"  key = {f.key}\nvalue = {f.value}\n note = {f.sentence}"
    )


def _az_appconfig_table(f: Fact, r: random.Random) -> str:
    return (
        f"$ az appconfig kv show -n {_word(r)} --key {f.key} -o table\n"
        f"Key    Value    Label\n-----  -------  -------\n{f.key}  {f.value}  prod"
    )


def _gcloud_secret_access(f: Fact, r: random.Random) -> str:
    return f"$ gcloud secrets versions access latest --secret={f.key.replace('_', '-')}\n{f.value}"


def _doppler_get(f: Fact, r: random.Random) -> str:
    return f"$ doppler secrets get {f.KEY} --plain\n{f.value}"


def _op_item_get(f: Fact, r: random.Random) -> str:
    return f'$ op item get "{f.subject}" --fields label=value\n{f.value}'


def _nomad_var_get(f: Fact, r: random.Random) -> str:
    job = _word(r)
    return (
        f"$ nomad var get nomad/jobs/{job}\nNamespace   = default\nPath        = nomad/jobs/{job}\n"
        f"\nItems\n{f.key} = {f.value}"
    )


def _salt_pillar_get(f: Fact, r: random.Random) -> str:
    minion = f"{_word(r)}-{r.randint(1, 9)}"
    return f"$ salt '{minion}' pillar.get app:{f.key}\n{minion}:\n    {f.value}"


def _debconf_show(f: Fact, r: random.Random) -> str:
    pkg = _word(r)
    return f"$ debconf-show {pkg}\n* {pkg}/{f.key}: {f.value}\n  {pkg}/enable_cache: true"


def _gsettings_get(f: Fact, r: random.Random) -> str:
    return f"$ gsettings get org.{_word(r)}.agent {f.key.replace('_', '-')}\n'{f.value}'"


def _knife_node_show(f: Fact, r: random.Random) -> str:
    node = f"{_word(r)}-{r.randint(1, 9)}"
    return f"$ knife node show {node} -a {f.key}\n{node}:\n  {f.key}: {f.value}"


def _pipeline_job_log(f: Fact, r: random.Random) -> str:
    return (
        f'Running with gitlab-runner 16.{r.randint(1, 9)}.0\n$ echo "{f.KEY}=${f.KEY}"\n'
        f"{f.KEY}={f.value}\nJob succeeded"
    )


# code: source and config ------------------------------------------------------------------------
def _rust_const(f: Fact, r: random.Random) -> str:
    return f'/// {f.line}\npub const {f.KEY}: &str = "{f.value}";'


def _go_var_block(f: Fact, r: random.Random) -> str:
    return f'var (\n\t// {f.line}\n\t{f.camel[0].upper()}{f.camel[1:]} = "{f.value}"\n)'


def _spring_value_default(f: Fact, r: random.Random) -> str:
    prop = f.key.replace("_", ".")
    return f'// {f.line}\n@Value("${{{prop}:{f.value}}}")\nprivate String {f.camel};'


def _kotlin_companion(f: Fact, r: random.Random) -> str:
    return f'companion object {{\n    // {f.line}\n    const val {f.KEY} = "{f.value}"\n}}'


def _swift_static_let(f: Fact, r: random.Random) -> str:
    return f'enum Settings {{\n    /// {f.line}\n    static let {f.camel} = "{f.value}"\n}}'


def _elixir_config_exs(f: Fact, r: random.Random) -> str:
    return f'# {f.line}\nconfig :{_word(r)}, {f.key}: "{f.value}"'


def _rails_config_x(f: Fact, r: random.Random) -> str:
    return f'# {f.line}\nRails.application.config.x.{f.key} = "{f.value}"'


def _php_define(f: Fact, r: random.Random) -> str:
    return f"<?php\n// {f.line}\ndefine('{f.KEY}', '{f.value}');"


def _lua_module_table(f: Fact, r: random.Random) -> str:
    return f'local M = {{}}\n-- {f.line}\nM.{f.key} = "{f.value}"\nreturn M'


def _nix_attrset(f: Fact, r: random.Random) -> str:
    return f'{{\n  # {f.line}\n  {f.camel} = "{f.value}";\n}}'


def _cue_field(f: Fact, r: random.Random) -> str:
    return f'// {f.line}\n{f.camel}: "{f.value}"'


def _bazelrc_define(f: Fact, r: random.Random) -> str:
    return f"# {f.line}\nbuild --define={f.key}={f.value}"


def _c_preprocessor_define(f: Fact, r: random.Random) -> str:
    return f'/* {f.line} */\n#define {f.KEY} "{f.value}"'


def _dataclass_field(f: Fact, r: random.Random) -> str:
    return f'@dataclass\nclass Settings:\n    {f.key}: str = "{f.value}"  # {f.sentence}'


def _strenum_member(f: Fact, r: random.Random) -> str:
    return f'class Pinned(StrEnum):\n    """{f.line}"""\n\n    {f.KEY} = "{f.value}"'


def _procfile_line(f: Fact, r: random.Random) -> str:
    return f"# {f.line}\nworker: bin/{_word(r)} --{f.key.replace('_', '-')}={f.value}"


def _justfile_var(f: Fact, r: random.Random) -> str:
    return f'# {f.line}\n{f.key} := "{f.value}"\n\ncheck:\n    ./run --{f.key} {{{{{f.key}}}}}'


def _cm_data_block(f: Fact, r: random.Random) -> str:
    return (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {_word(r)}-settings\n"
        f'data:\n  # {f.line}\n  {f.KEY}: "{f.value}"'
    )


SURFACES: dict[str, tuple[str, Surface]] = {
    "matrix-room": ("chat", _matrix_room),
    "zulip-topic": ("chat", _zulip_topic),
    "reply-quoted": ("chat", _reply_quoted),
    "sticky-note": ("chat", _sticky_note),
    "action-items": ("chat", _action_items),
    "nitpick": ("chat", _nitpick),
    "direct-message": ("chat", _direct_message),
    "teams-message": ("chat", _teams_message),
    "issue-template": ("chat", _issue_template),
    "pairing-banter": ("chat", _pairing_banter),
    "retro-card": ("chat", _retro_card),
    "numbered-thread": ("chat", _numbered_thread),
    "note-to-self": ("chat", _note_to_self),
    "onboarding-page": ("chat", _onboarding_page),
    "changelog-entry": ("chat", _changelog_entry),
    "lab-notebook": ("chat", _lab_notebook),
    "standing-order": ("chat", _standing_order),
    "phone-summary": ("chat", _phone_summary),
    "ssm-parameter": ("tool", _ssm_parameter),
    "consul-kv-detailed": ("tool", _consul_kv_detailed),
    "user-secrets-list": ("tool", _user_secrets_list),
    "heroku-config": ("tool", _heroku_config),
    "gh-variable-list": ("tool", _gh_variable_list),
    "npm-pkg-get": ("tool", _npm_pkg_get),
    "systemctl-show": ("tool", _systemctl_show),
    "sqlite-line-mode": ("tool", _sqlite_line_mode),
    "az-appconfig-table": ("tool", _az_appconfig_table),
    "gcloud-secret-access": ("tool", _gcloud_secret_access),
    "doppler-get": ("tool", _doppler_get),
    "op-item-get": ("tool", _op_item_get),
    "nomad-var-get": ("tool", _nomad_var_get),
    "salt-pillar-get": ("tool", _salt_pillar_get),
    "debconf-show": ("tool", _debconf_show),
    "gsettings-get": ("tool", _gsettings_get),
    "knife-node-show": ("tool", _knife_node_show),
    "pipeline-job-log": ("tool", _pipeline_job_log),
    "rust-const": ("code", _rust_const),
    "go-var-block": ("code", _go_var_block),
    "spring-value-default": ("code", _spring_value_default),
    "kotlin-companion": ("code", _kotlin_companion),
    "swift-static-let": ("code", _swift_static_let),
    "elixir-config-exs": ("code", _elixir_config_exs),
    "rails-config-x": ("code", _rails_config_x),
    "php-define": ("code", _php_define),
    "lua-module-table": ("code", _lua_module_table),
    "nix-attrset": ("code", _nix_attrset),
    "cue-field": ("code", _cue_field),
    "bazelrc-define": ("code", _bazelrc_define),
    "c-preprocessor-define": ("code", _c_preprocessor_define),
    "dataclass-field": ("code", _dataclass_field),
    "strenum-member": ("code", _strenum_member),
    "procfile-line": ("code", _procfile_line),
    "justfile-var": ("code", _justfile_var),
    "cm-data-block": ("code", _cm_data_block),
}

# -- corrections ----------------------------------------------------------------------------------
# naming the old value beside the new: the old one only inside ``(was ...)`` or on a line
# tagged ``[superseded ...]``, the two ways the scorer reads a value as replaced


def _rota_swap_aside(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"fyi, from {r.choice(_DAYS)} on, {f.subject}: {f.value} "
        f"(was {old} until the rota swap, {_name(r)} signed it off)"
    )


def _field_history(f: Fact, old: str, r: random.Random) -> str:
    ticket = f"OPS-{r.randint(100, 999)}"
    a, b = r.sample(_NAMES, 2)
    return (
        f"$ tix log {ticket}\n{_stamp(r)} {_clock(r)}  {a.lower()}  {f.key}: {f.value} "
        f"(was {old})\n{_stamp(r)} {_clock(r)}  {b.lower()}  labels: +ops"
    )


def _shortlog_subject(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"$ git log --format='%h %s' -3\n{_sha(r)} Set {f.key} to {f.value} (was {old})\n"
        f"{_sha(r)} Fix flaky {_word(r)} test\n{_sha(r)} Bump lockfile"
    )


def _sheet_revision(f: Fact, old: str, r: random.Random) -> str:
    rev = r.randint(3, 9)
    return (
        f"Rev {rev} of the plan sheet, row {r.randint(4, 40)}: {f.subject} is {f.value} "
        f"(was {old} in rev {rev - 1})"
    )


def _pr_description_line(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"## What this PR does\n\n- sets `{f.key}` to `{f.value}` (was `{old}`), "
        f"per {_name(r)}'s review\n- adds a test for it"
    )


def _inline_was_note(f: Fact, old: str, r: random.Random) -> str:
    return f'{f.key} = "{f.value}"  # (was "{old}" before the {_word(r)} incident)'


def _fwd_note(f: Fact, old: str, r: random.Random) -> str:
    return (
        f'Fwd from {_name(r)}: "{f.subject}, {f.value} (was {old}), please pass it on to '
        f'whoever runs the agent"'
    )


def _req_trace_tag(f: Fact, old: str, r: random.Random) -> str:
    a = r.randint(100, 480)
    b = a + r.randint(3, 60)
    return (
        f"- [superseded by REQ-{b}] REQ-{a}: {f.subject} is {old}\n"
        f"- REQ-{b}: {f.subject} is {f.value}"
    )


def _decision_register(f: Fact, old: str, r: random.Random) -> str:
    a = r.randint(10, 80)
    b = a + r.randint(1, 9)
    return (
        f"| #  | decision | status |\n|----|----------|--------|\n"
        f"| D{a} | {f.subject}: {old} | [superseded by D{b}] |\n"
        f"| D{b} | {f.subject}: {f.value} | accepted |"
    )


# naming only the new value


def _reply_in_thread(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"↳ {_name(r)} replied in the thread: for {f.subject} go with {f.value}; the figure "
        f"at the top of the thread is stale."
    )


def _handover_note(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"Handing this over before my leave. {f.subject[0].upper()}{f.subject[1:]}: {f.value}, "
        f"that is the one that "
        f"holds. {_name(r)} has the rest of the context."
    )


def _source_of_truth_query(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"$ cfgctl get {f.key} --show-meta\n{f.key}={f.value}\n"
        f"modified={_stamp(r)} {_clock(r)} by={_name(r).lower()} (source of truth)"
    )


def _partial_hunk(f: Fact, old: str, r: random.Random) -> str:
    line = r.randint(12, 240)
    return f'@@ -{line},7 +{line},7 @@ class Settings:\n…\n+    {f.key} = "{f.value}"\n…'


def _plan_change_in_passing(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"oh and after {_name(r)}'s call, {f.subject} ends up being {f.value}, "
        f"finance is fine with it. anyway, back to the failing test"
    )


def _export_line(f: Fact, old: str, r: random.Random) -> str:
    return f"export {f.KEY}='{f.value}'   # re-set after {_name(r)}'s rotation, keep this one"


def _smoke_fallout(f: Fact, old: str, r: random.Random) -> str:
    n = r.randint(100, 900)
    return (
        f"smoke #{n}: FAIL with {f.key} from the first sheet\n"
        f"smoke #{n + 1}: PASS with {f.key}={f.value}, keeping this one"
    )


def _accepted_answer(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"✔ Accepted answer ({_name(r)}): {f.subject} should be {f.value}; what the question "
        f"quotes is outdated."
    )


def _resolution_field(f: Fact, old: str, r: random.Random) -> str:
    return (
        f"Status: Done\nResolution: {f.subject} set to {f.value}\n"
        f"Resolved by: {_name(r)} on {_stamp(r)}"
    )


# name: (register, names the old value, phrasing)
CORRECTIONS: dict[str, tuple[str, bool, Fixer]] = {
    "rota-swap-aside": ("chat", True, _rota_swap_aside),
    "field-history": ("tool", True, _field_history),
    "shortlog-subject": ("tool", True, _shortlog_subject),
    "sheet-revision": ("chat", True, _sheet_revision),
    "pr-description-line": ("chat", True, _pr_description_line),
    "inline-was-note": ("code", True, _inline_was_note),
    "fwd-note": ("chat", True, _fwd_note),
    "req-trace-tag": ("chat", True, _req_trace_tag),
    "decision-register": ("chat", True, _decision_register),
    "reply-in-thread": ("chat", False, _reply_in_thread),
    "handover-note": ("chat", False, _handover_note),
    "source-of-truth-query": ("tool", False, _source_of_truth_query),
    "partial-hunk": ("code", False, _partial_hunk),
    "plan-change-in-passing": ("chat", False, _plan_change_in_passing),
    "export-line": ("code", False, _export_line),
    "smoke-fallout": ("tool", False, _smoke_fallout),
    "accepted-answer": ("chat", False, _accepted_answer),
    "resolution-field": ("tool", False, _resolution_field),
}

REGISTER_OF: dict[str, str] = {
    **{name: reg for name, (reg, _) in SURFACES.items()},
    **{name: reg for name, (reg, _, _) in CORRECTIONS.items()},
}

# -- sessions -------------------------------------------------------------------------------------


def _mix(count: int) -> tuple[int, int, int]:
    """How many singles, correction pairs and coexisting pairs make ``count`` canaries."""
    shapes = {s: [t for t in TEMPLATES if t.shape == s] for s in SHAPES}
    pairs_co = min(len(shapes["coexist"]), count // 12)
    pairs_fix = min(len(shapes["correction"]), count * 5 // 24)
    singles = count - 2 * pairs_co - 2 * pairs_fix
    while singles > len(shapes["single"]):
        if pairs_fix < len(shapes["correction"]):
            pairs_fix += 1
        elif pairs_co < len(shapes["coexist"]):
            pairs_co += 1
        else:
            break
        singles -= 2
    if count < 6 or not 0 <= singles <= len(shapes["single"]):
        raise ValueError(f"count {count}: this set makes 6 to 78 canaries")
    return singles, pairs_fix, pairs_co


def _ring(seed: int, label: str, items: list[Any], variant: int, n: int) -> list[Any]:
    """``n`` items of a per-seed shuffled ring, from where session ``variant`` starts: any
    consecutive sessions walk it on, so each item comes round."""
    order = list(items)
    random.Random(f"heldout-k/{label}/{seed}").shuffle(order)
    start = variant * n
    return [order[(start + i) % len(order)] for i in range(n)]


def _at(r: random.Random, low: float, high: float) -> float:
    return round(r.uniform(low, high), 3)


def _session(seed: int, count: int, variant: int, attempt: int) -> list[dict[str, Any]]:
    singles, pairs_fix, pairs_co = _mix(count)
    r = random.Random(f"heldout-k/values/{seed}/{variant}/{attempt}")

    def pick(shape: str, n: int) -> list[Template]:
        return _ring(seed, shape, [t for t in TEMPLATES if t.shape == shape], variant, n)

    def fact(t: Template, i: int, value: str, ctx: dict[str, str]) -> Fact:
        return Fact(
            t.kind,
            t.subjects[i].format(**ctx),
            t.keys[i].format(**ctx),
            value,
            t.says[i].format(v=value, **ctx),
        )

    # (template, fact, at, side): side is None, ("fix", old value, old index) or ("co", index)
    planned: list[tuple[Template, Fact, float, tuple[Any, ...] | None]] = []
    fixes: list[int] = []
    for t in pick("single", singles):
        ctx = {"x": _word(r), "pkg": _word(r)}
        planned.append((t, fact(t, 0, _draw(t.form, r), ctx), _at(r, 0.02, 0.95), None))
    for t in pick("correction", pairs_fix):
        ctx = {"x": _word(r), "pkg": _word(r)}
        old = _draw(t.form, r)
        new = _replacement(t.form, old, r)
        first = _at(r, 0.02, 0.55)
        planned.append((t, fact(t, 0, old, ctx), first, None))
        fixes.append(len(planned))
        later = _at(r, first + 0.28, min(0.97, first + 0.6))
        planned.append((t, fact(t, 0, new, ctx), later, ("fix", old, len(planned) - 1)))
    for t in pick("coexist", pairs_co):
        ctx = {"x": _word(r), "pkg": _word(r)}
        a = _draw(t.form, r)
        b = _replacement(t.form, a, r) if t.form in _DATE_FORMS else _draw(t.form, r)
        planned.append((t, fact(t, 0, a, ctx), _at(r, 0.02, 0.95), ("co", len(planned) + 1)))
        planned.append((t, fact(t, 1, b, ctx), _at(r, 0.02, 0.95), ("co", len(planned) - 1)))

    plain = [i for i in range(len(planned)) if i not in fixes]
    surfaces = _ring(seed, "surface", list(SURFACES), variant, len(plain))
    phrasings = _ring(seed, "fixer", list(CORRECTIONS), variant, len(fixes))
    looks = dict(zip(plain, surfaces, strict=True))
    fixers = dict(zip(fixes, phrasings, strict=True))

    ids = [f"k{variant}-{i:02d}" for i in range(len(planned))]
    out: list[dict[str, Any]] = []
    for i, (t, f, at, side) in enumerate(planned):
        if i in fixers:
            style = fixers[i]
            assert side is not None
            text = CORRECTIONS[style][2](f, side[1], r)
        else:
            style = looks[i]
            text = SURFACES[style][1](f, r)
        canary: dict[str, Any] = {
            "id": ids[i],
            "kind": t.kind,
            "at": at,
            "text": text,
            "keep": [f.value],
            "style": style,
            "template": t.name,
            "subject": f.subject,
        }
        if side is not None and side[0] == "fix":
            canary["supersedes"] = ids[side[2]]
        elif side is not None:
            canary["coexists"] = ids[side[1]]
        out.append(canary)
    return sorted(out, key=lambda c: (c["at"], c["id"]))


def _shows_old(text: str, old: list[str], new: list[str]) -> bool:
    """Whether ``text`` shows a value of ``old`` outside ``(was ...)`` and ``[superseded``
    lines once the values of ``new`` are taken out (how ``bench/retention.py`` reads it)."""
    lines = [line for line in text.split("\n") if "[superseded" not in line]
    rest = re.sub(r"\(was [^()\n]*\)", "", "\n".join(lines))
    for k in new:
        rest = rest.replace(k, "")
    return any(k in rest for k in old)


def _sound(canaries: list[dict[str, Any]]) -> bool:
    """No keep string in another canary's text (a correction may name the value it
    replaces), each in its own text, the two values of a pair apart, all subjects of the
    singles and pairs distinct."""
    by_id = {c["id"]: c for c in canaries}
    for a in canaries:
        if not all(k in a["text"] for k in a["keep"]):
            return False
        for b in canaries:
            if a is b or b.get("supersedes") == a["id"]:
                continue
            if any(k in b["text"] for k in a["keep"]):
                return False
        other = a.get("supersedes") or a.get("coexists")
        if other:
            o, k = by_id[other]["keep"][0], a["keep"][0]
            if o in k or k in o:
                return False
    for c in canaries:  # a correction shows the value it replaces only as replaced
        if c.get("supersedes") and _shows_old(c["text"], by_id[c["supersedes"]]["keep"], c["keep"]):
            return False
    heads = [c["subject"] for c in canaries if "supersedes" not in c]
    return len(heads) == len(set(heads))


def generate(seed: int, count: int = 24, variant: int = 0) -> dict[str, Any]:
    """``count`` canaries for session ``variant`` of a run seeded ``seed``, in the shape
    ``bench/retention.py`` reads (``{"canaries": [...]}``)."""
    for attempt in range(200):
        canaries = _session(seed, count, variant, attempt)
        if _sound(canaries):
            return {"generator": "heldout-k", "seed": seed, "variant": variant,
                    "canaries": canaries}  # fmt: skip
    raise RuntimeError(f"no sound draw for seed {seed}, session {variant}")  # pragma: no cover
