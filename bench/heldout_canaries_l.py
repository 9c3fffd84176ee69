"""Held-out canary generator, set L: facts and wording written blind, for ``bench/retention.py``.

Lab note
========

Why
---
The retention benchmark plants facts ("canaries") into recorded agent sessions, compacts five
times and checks which facts survive and whether a corrected value is still shown as current.
A summarizer tuned against one set of canaries can learn that set's words. This is the twelfth
set written without looking at the summarizer or at any earlier set's facts, so its templates,
surfaces and ways of correcting are nobody's tuning target. Its emphasis: corrections that name
the old value the way people really write them (arrows, "from X to Y", diff lines,
strike-through, "Y (not X)", a table with old and new columns...). Run it with
``bench/retention.py --generator bench/heldout_canaries_l.py --seed S``.

Evaluation seeds
----------------
Drawn with ``secrets.randbelow`` before any code was written: 3823730, 3927369, 5080891
(``EVALUATION_SEEDS``). I never ran the generator or the benchmark with them; no test does.

What I read
-----------
- ``bench/retention.py``, the interface only: the listing of its top-level names and constants
  (``grep -n "^def \\|^class \\|^[A-Z_]* ="``, which shows lines such as ``DEFAULT_DATA``,
  ``WINDOW``, ``CYCLES = 5``, ``TARGET``, ``PLACEMENTS``, ``METHODS``); lines 170-470 (``Canary``,
  ``canaries_from``, ``load_canaries``, ``CanarySource``, ``_generator``, ``Seeded``,
  ``insertion_step``, the observation helpers, ``add_to_assistant``, ``_holder``,
  ``insert_canaries``, ``wire_text``, ``REPLACED_MARK`` / ``_WAS`` / ``_WAS_VALUE``); lines
  498-618 (``strip_replaced``, ``presents_as_current``, ``KeepIndex``, ``Score``,
  ``score_context``); the first 85 lines of ``aggregate`` (kinds, styles and templates are
  tallied as they come; staleness is tallied by the correcting canary's template; ``r.ambiguous``
  pairs are counted); lines 1894-1956 of ``main``. That last range is a little more than the
  ``add_argument`` / ``parser.error`` lines: by accident I also saw the ``--ablate`` option's
  help ("rank the ledger without these signals ... ``SIGNALS``"), the names ``without``,
  ``SettingError`` and ``add_output_options`` and the ``if`` lines guarding each
  ``parser.error``. Nothing else of the ledger or its signals.
- ``bench/heldout_canaries_k.py``: its module docstring (lab note) only; the listing of its
  top-level names (``grep -n "^def \\|^class \\|^[A-Z_]* ="``, which names its value helpers,
  its surface and correction functions and constants such as ``KINDS``, ``REGISTERS``,
  ``_CONSONANTS``, ``_VOWELS``, ``_ROMAN``, and shows the values ``_CONSONANTS =
  "bdfgklmnprstvz"``, ``_VOWELS = "aeio"`` and the Roman month tuple, because those one-line
  constants match the pattern); the body of ``generate`` (lines 1122-end). Its lab note told
  me set K's value forms and correction ways in outline; I kept away from them (no ``(was
  ...)``, no ``[superseded``, no ``q`` words, no ISO week or Roman dates) and from its surface
  names.
- ``tests/bench/support.py`` whole, ``tests/conftest.py``, ``tests/needs.py``, lines 87-117 of
  ``pyproject.toml`` (pytest, ruff, mypy sections) and the ``[...]`` header lines of the file.
- ``tests/bench/test_heldout_canaries_k.py``: its ``from``/``import`` lines and lines 111-end
  (the test bodies, to mirror their kinds of checks). Not lines 1-110 (its constants).
- ``/work/shared/data/swebench-gemini3/README.md``. The recorded sessions only by substring
  counts of my drawn values and value shapes (no session text read).
- The output of my own checks: a throwaway script counting (only counting) how many of 12,120
  drawn values and of my value shapes occur in ``trajectories.jsonl`` (none of the values;
  a handful of shape matches such as ``NNNN seconds``, a ``ABCD-12345`` ticket shape and a
  ``N.NN.NNN`` version shape, distinct from my draws), sample canaries of test seeds, and the
  sorted top-level key names (not values) of ``--json`` output of a 2-session run with the
  test seed 31, to choose which keys the tiny-run test checks.
- Directory listings: ``ls`` of ``bench/`` and ``tests/bench/`` (file names only, among them
  the earlier sets, ``canary_generator.py``, a canary JSON file and ``RESULTS.md``, none
  opened), of the shared data directory, and ``.venv/bin`` filtered for tools.
- By accident, at the end, ``git status --short`` of the whole checkout (to see that only my
  two files are mine) listed other people's uncommitted file names:
  ``src/abridged/engine/summarize/ledger.py``, ``src/abridged/engine/summarize/lookups.py`` and
  their tests under ``tests/engine/summarize/``. Names only; none opened, and the set was
  written before I saw them.

What I did not read
-------------------
Nothing under ``src/abridged/`` at all (no summarizer, facts, ledger, references, anchors, keys
or slots), no other ``bench/heldout_canaries*.py`` body, ``bench/canary_generator.py``, no
canary JSON file, ``bench/RESULTS.md``, no README, no issue notes, no benchmark figures, the
rest of ``retention.py`` (its module docstring included). The tiny run in the tests is checked
for its keys only; I did not look at its figures.

Scoring, as read
----------------
An old value is stale in a message when one of its keep strings is left after removing (1) the
correcting canary's whole text, (2) the new value's keep strings, (3) lines holding
``[superseded`` and ``(was ...)`` parentheticals. So a correction that names the old value is
fair while it is quoted whole (the original message, or a summary copying it verbatim): every
text here is inserted verbatim by ``insert_canaries`` in each placement (the tests check it
lands whole and that the message holding only the correction is not stale). A summary that
rewrites "X -> Y" in its own words and keeps X outside those two marks shows X as current; that
is the measurement, and this set deliberately avoids the two marks themselves.

Design
------
- 50 templates over 12 kinds (constraint, prohibition, preference, identifier, decision,
  number, path, version, owner, deadline, setting, endpoint): 24 single facts (two per kind),
  18 correction pairs (every kind, six of them twice) and 8 coexisting pairs (two subjects that
  both hold, one value form: two bug tickets, two service owners, input and output dirs, a
  primary and a replica host, beta and GA dates, server and CLI versions, two memory limits,
  connect and read timeouts). Correction and coexisting canaries carry ``supersedes`` /
  ``coexists``; every canary carries ``subject`` besides what ``canaries_from`` reads.
- A session of 24 canaries holds 10 singles, 5 corrections (10 canaries) and 2 coexisting
  pairs (4 canaries); other counts scale (at least one of each, count >= 6). Templates, fact
  surfaces and correction ways each sit in a per-seed shuffled ring that consecutive sessions
  walk, so a run of 16 sessions plants every template, surface and correction way.
- 45 fact surfaces in three registers: 20 ``tool`` (a CI notice, a GitLab job trace, a Kubernetes
  describe, a Terraform plan creating a parameter, a full ``git log`` entry, a pytest failure,
  a REST response body, a dotfile of variables, a Make variable, a Docker build ARG, a MySQL
  grid, a Python traceback, a Go panic, a journal tail, a cargo build-script note, image
  labels, an AWS CLI table, ``gh pr view``, an Argo CD app, ``jq -r``), 12 ``assistant``
  (numbered plan, where-we-are, inline review, thinking aloud, preface to a tool call, done
  list, settled points, facts table, caveat, patch note, so-far, self-check) and 13 ``user``
  (an aside, a pasted ticket, sync notes, an IRC log, a forwarded mail, a standup line, a
  requirements doc, a phone chat export, a support reply, a by-the-way, an agenda, a
  spreadsheet paste, a prod snippet). Names kept off ``EARLIER_SURFACES`` (no earlier name is
  a substring of mine) and off set K's function names.
- 21 ways of correcting, in the three registers: 15 name the old value beside the new one
  (``X -> Y``, ``X → Y``, "moved from X to Y", "X is out, Y is in", a diff hunk ``-key: X`` /
  ``+key: Y``, ``~~X~~ Y``, "swap X for Y", "Y (not X)", "was X, now Y", "X? no — Y", a changes
  file ``changed key X => Y``, a before/after table row, a Terraform in-place update
  ``~ key = "X" -> "Y"``, "Y instead of X", an event record ``old=X new=Y``) and 6 only the new
  one (a change of plan, another person in passing, a later config dump, ``kubectl set env``
  and its read-back, an assistant's acknowledgement, a ticket comment). No marker word is in
  more than a quarter of them (the tests count).
- Values are drawn fresh per seed and session: made-up words (syllables with a doubled ``aa``,
  ``ii`` or ``uu``, at least seven letters) for hosts, paths, branches, handles, surnames,
  libraries and flags; tickets ``ABCD-12345``; service accounts ``svc_`` + 10 base-32
  characters; three-part versions with a 3-digit patch; dates in 2031-2038 in three styles;
  numbers always with a unit after a space or in punctuation (``7315 ms``, ``1837 MiB``,
  ``734 req/s``, ``$31,406``, ``48,213 rows``, ``5415 seconds``); ``HH:MM-HH:MM UTC`` windows;
  cron lines. A correction's new value has the old one's form; deadlines only move later and
  versions only go up. A session is redrawn until every keep string is in its own text and in
  no other canary's (a correction may name the value it replaces), no keep string contains
  another, and the ways that name only the new value do not name the old one.
- The text does not depend on the placement: ``bench/retention.py`` places each canary in a
  user message, an observation or an assistant message per pass, so correction and coexisting
  pairs occur in all three.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

EVALUATION_SEEDS = (3823730, 3927369, 5080891)

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

# -- values ---------------------------------------------------------------------------------------

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "kr",
           "tr", "vr", "sk", "th")  # fmt: skip
_PLAIN = ("a", "e", "i", "o", "u", "ei", "ou")
_DOUBLE = ("aa", "ii", "uu")
_CODAS = ("n", "r", "l", "s", "th", "x", "k", "m")
_B32 = "abcdefghjkmnpqrstvwxyz23456789"
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip


def _word(r: random.Random) -> str:
    """A made-up lowercase word of 7 to 11 letters with one doubled vowel (``aa``, ``ii``,
    ``uu``): not English, not an identifier the recorded sessions use."""
    while True:
        n = r.choice((2, 3))
        marked = r.randrange(n)
        parts = [
            r.choice(_ONSETS) + (r.choice(_DOUBLE) if i == marked else r.choice(_PLAIN))
            for i in range(n)
        ]
        word = "".join(parts) + r.choice(_CODAS)
        if 7 <= len(word) <= 11 and sum(word.count(d) for d in _DOUBLE) == 1:
            return word


def _Word(r: random.Random) -> str:  # noqa: N802
    return _word(r).capitalize()


def _num(r: random.Random, low: int, high: int) -> int:
    """A number in [low, high) that does not end in 0 (round numbers are everywhere)."""
    while True:
        n = r.randrange(low, high)
        if n % 10:
            return n


def _date(r: random.Random) -> dt.date:
    return dt.date(2031, 1, 1) + dt.timedelta(days=r.randrange(8 * 365))


def _fmt_date(day: dt.date, style: str) -> str:
    if style == "iso":
        return day.isoformat()
    month = _MONTHS[day.month - 1]
    if style == "dmy":
        return f"{day.day} {month[:3]} {day.year}"
    return f"{month} {day.day}, {day.year}"


def parse_date(value: str) -> dt.date:
    """The day of a date drawn in any of the three styles."""
    if value[:4].isdigit():
        return dt.date.fromisoformat(value)
    if value[0].isdigit():
        day, mon, year = value.split()
        return dt.date(int(year), [m[:3] for m in _MONTHS].index(mon) + 1, int(day))
    month, day, year = value.replace(",", "").split()
    return dt.date(int(year), _MONTHS.index(month) + 1, int(day))


def version_key(value: str) -> tuple[int, ...]:
    return tuple(int(p) for p in value.split("."))


def _version(r: random.Random) -> str:
    return f"{r.randrange(2, 20)}.{r.randrange(10, 80)}.{r.randrange(100, 900)}"


def _higher_version(old: str, r: random.Random) -> str:
    major, minor, patch = version_key(old)
    step = r.choice(("patch", "minor", "major"))
    if step == "patch":
        return f"{major}.{minor}.{r.randrange(patch + 11, patch + 180)}"
    if step == "minor":
        return f"{major}.{minor + r.randrange(1, 9)}.{r.randrange(100, 900)}"
    return f"{major + 1}.{r.randrange(10, 80)}.{r.randrange(100, 900)}"


def _ticket(r: random.Random) -> str:
    prefix = "".join(c for c in _word(r) if c not in "aeiou")[:4].upper()
    while len(prefix) < 3:
        prefix += r.choice("BDFGKLMNPRSTVZ")
    return f"{prefix}-{_num(r, 10_000, 100_000)}"


def _window(r: random.Random) -> str:
    start = r.randrange(0, 20)
    end = start + r.randrange(1, 4)
    m1, m2 = r.choice((5, 15, 25, 35, 45, 55)), r.choice((10, 20, 40, 50))
    return f"{start:02d}:{m1:02d}-{end:02d}:{m2:02d} UTC"


_GIVEN = ("Ines", "Tobiah", "Marguerite", "Oskar", "Leontyne", "Ravi", "Solveig", "Kwame",
          "Eulalia", "Matthias", "Noor", "Benedikt", "Yusra", "Casimir", "Thandiwe",
          "Ewa")  # fmt: skip


def _site(r: random.Random) -> str:
    """A site code: three consonants and a digit (``tkv4``)."""
    return "".join(r.choice("bdfgklmnprstvz") for _ in range(3)) + str(r.randrange(1, 10))


_FORMS: dict[str, Callable[[random.Random], str]] = {
    "word": _Word,
    "person": lambda r: f"{r.choice(_GIVEN)} {_Word(r)}",
    "handle": lambda r: f"@{_word(r)}",
    "ticket": _ticket,
    "account": lambda r: "svc_" + "".join(r.choice(_B32) for _ in range(10)),
    "host": lambda r: f"{_word(r)}-{r.randrange(10, 99)}.{_site(r)}.internal",
    "url": lambda r: f"https://{_word(r)}.example.net/{_word(r)}/v{r.randrange(2, 9)}",
    "dir": lambda r: f"/srv/{_word(r)}/{_word(r)}-{r.randrange(10, 99)}",
    "file": lambda r: f"/etc/{_word(r)}/{_word(r)}.toml",
    "branch": lambda r: f"release/{_word(r)}-{r.randrange(10, 99)}",
    "namespace": lambda r: f"{_word(r)}-{r.randrange(10, 99)}",
    "flag": lambda r: f"{_word(r)}_{_word(r)}",
    "version": _version,
    "date": lambda r: _fmt_date(_date(r), "iso"),
    "date_dmy": lambda r: _fmt_date(_date(r), "dmy"),
    "date_mdy": lambda r: _fmt_date(_date(r), "mdy"),
    "ms": lambda r: f"{_num(r, 1_100, 9_900)} ms",
    "mib": lambda r: f"{_num(r, 300, 9_000)} MiB",
    "rps": lambda r: f"{_num(r, 110, 990)} req/s",
    "money": lambda r: f"${_num(r, 11_000, 99_000):,}",
    "rows": lambda r: f"{_num(r, 11_000, 99_000):,} rows",
    "seconds": lambda r: f"{_num(r, 1_100, 9_900)} seconds",
    "window": _window,
    "cron": lambda r: f"{r.randrange(1, 59)} {r.randrange(0, 23)} * * {r.randrange(0, 6)}",
}
FORMS = tuple(_FORMS)


def _draw(form: str, r: random.Random) -> str:
    return _FORMS[form](r)


def _replacement(form: str, old: str, r: random.Random) -> str:
    """A new value of ``old``'s form: a deadline moves later, a version goes up."""
    if form.startswith("date"):
        style = {"date": "iso", "date_dmy": "dmy", "date_mdy": "mdy"}[form]
        return _fmt_date(parse_date(old) + dt.timedelta(days=r.randrange(3, 60)), style)
    if form == "version":
        return _higher_version(old, r)
    while True:
        new = _draw(form, r)
        if new != old:
            return new


# -- templates ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Template:
    """A fact (or two): its kind, shape, value form, and per subject a key and a sentence."""

    name: str
    kind: str
    shape: str
    form: str
    subjects: tuple[str, ...]
    keys: tuple[str, ...]
    says: tuple[str, ...]  # with ``{v}`` for the value


def _one(name: str, kind: str, form: str, subject: str, key: str, says: str) -> Template:  # noqa: PLR0917
    return Template(name, kind, "single", form, (subject,), (key,), (says,))


def _fix(name: str, kind: str, form: str, subject: str, key: str, says: str) -> Template:  # noqa: PLR0917
    return Template(name, kind, "correction", form, (subject,), (key,), (says,))


def _two(
    name: str, kind: str, form: str, first: tuple[str, str, str], second: tuple[str, str, str]
) -> Template:
    return Template(
        name, kind, "coexist", form, (first[0], second[0]), (first[1], second[1]),
        (first[2], second[2]),
    )  # fmt: skip


TEMPLATES: tuple[Template, ...] = (
    # single facts: two per kind
    _one("backfill_batch_cap", "constraint", "rows", "the backfill batch size",
         "backfill_max_rows", "The backfill must never write more than {v} in one batch."),
    _one("search_p99_budget", "constraint", "ms", "the search endpoint's p99 budget",
         "search_p99_budget", "The search endpoint has to answer within {v} at p99, or the "
         "change does not ship."),
    _one("frozen_branch", "prohibition", "branch", "the frozen branch", "frozen_branch",
         "Nobody pushes to {v} until the audit is closed; that branch is frozen."),
    _one("untouchable_host", "prohibition", "host", "the host nobody may touch",
         "do_not_touch_host", "Do not run anything against {v}; it is the customer's live box."),
    _one("fixture_home", "preference", "dir", "where new test fixtures go", "fixture_dir",
         "Please keep new test fixtures under {v} rather than next to the tests."),
    _one("parser_reviewer", "preference", "handle", "who reviews parser changes",
         "parser_reviewer", "For anything touching the parser I'd rather {v} reviews it."),
    _one("incident_ticket", "identifier", "ticket", "the incident ticket", "incident_ticket",
         "All of this is tracked as incident {v}; reference it in the PR."),
    _one("ci_account", "identifier", "account", "the CI service account", "ci_service_account",
         "CI runs as the service account {v}."),
    _one("cache_library", "decision", "word", "the cache library", "cache_library",
         "Decision: we adopt {v} as the cache library; the other candidates are dropped."),
    _one("dark_launch_flag", "decision", "flag", "the flag the fix ships behind",
         "release_flag", "We agreed to ship the fix dark, behind the feature flag {v}."),
    _one("worker_memory", "number", "mib", "the worker memory limit", "worker_memory_limit",
         "Each worker is capped at {v} of memory."),
    _one("cloud_budget", "number", "money", "the monthly cloud budget", "monthly_budget",
         "The project's cloud spend is capped at {v} a month."),
    _one("artifact_dir", "path", "dir", "the build artifact directory", "artifact_dir",
         "Build artifacts are written to {v}."),
    _one("service_config_file", "path", "file", "the config file the service reads",
         "config_path", "The service reads its settings from {v}, not from the repo copy."),
    _one("protocol_pin", "version", "version", "the pinned protocol library version",
         "protolib_version", "Pin the protocol library at exactly {v}."),
    _one("oldest_client", "version", "version", "the oldest client version the API accepts",
         "min_client_version", "Clients older than {v} are refused by the API."),
    _one("oncall_engineer", "owner", "person", "this week's on-call engineer", "oncall",
         "{v} is on call this week; page them, not the team channel."),
    _one("migration_owner", "owner", "person", "the owner of the schema migration",
         "migration_owner", "{v} owns the schema migration and signs it off."),
    _one("code_freeze", "deadline", "date_dmy", "the code freeze", "code_freeze",
         "Code freeze is on {v}; nothing merges after that."),
    _one("cert_expiry", "deadline", "date", "when the wildcard TLS certificate expires",
         "cert_expiry", "The wildcard TLS certificate expires on {v}; renew it before then."),
    _one("retry_backoff", "setting", "ms", "the retry backoff base", "RETRY_BACKOFF_BASE",
         "Set the retry backoff base to {v}."),
    _one("worker_queue", "setting", "flag", "the queue the workers consume", "WORKER_QUEUE",
         "Workers consume from the queue {v}."),
    _one("webhook_receiver", "endpoint", "url", "the webhook receiver", "webhook_url",
         "Webhooks are delivered to {v}."),
    _one("metrics_gateway", "endpoint", "host", "the metrics gateway", "metrics_gateway",
         "Push metrics to {v} and nowhere else."),
    # correction pairs: every kind, six twice
    _fix("upload_ceiling", "constraint", "mib", "the upload size limit", "max_upload_size",
         "Uploads above {v} must be rejected."),
    _fix("deploy_blackout", "prohibition", "window", "the deploy blackout window",
         "deploy_blackout", "No deploys during {v}; that is the blackout window."),
    _fix("manual_test_namespace", "preference", "namespace", "the namespace for manual tests",
         "manual_test_namespace", "For manual testing use the {v} namespace; that's the one "
         "we prefer."),
    _fix("tracking_epic", "identifier", "ticket", "the tracking epic", "tracking_epic",
         "Log all follow-ups against the epic {v}."),
    _fix("broker_choice", "decision", "word", "the message broker", "message_broker",
         "We settled on {v} as the message broker."),
    _fix("public_rate_limit", "number", "rps", "the public API rate limit", "public_rate_limit",
         "The public API is limited to {v} per client."),
    _fix("gateway_timeout", "number", "ms", "the gateway timeout", "gateway_timeout",
         "The gateway times out upstream calls after {v}."),
    _fix("data_root", "path", "dir", "the data root of the job", "DATA_ROOT",
         "The job's data root is {v}."),
    _fix("build_runtime", "version", "version", "the runtime version of the build image",
         "runtime_version", "Build images use runtime {v}."),
    _fix("importer_schema", "version", "version", "the schema version the importer targets",
         "schema_version", "The importer targets schema {v}."),
    _fix("release_manager", "owner", "person", "the release manager", "release_manager",
         "{v} is release manager for this cycle."),
    _fix("security_contact", "owner", "handle", "the security contact", "security_contact",
         "Security questions go to {v}."),
    _fix("launch_day", "deadline", "date_mdy", "the launch date", "launch_date",
         "We launch on {v}."),
    _fix("vendor_cutoff", "deadline", "date", "the old vendor API's cutoff", "vendor_cutoff",
         "The old vendor API stops answering on {v}; migrate before that."),
    _fix("nightly_schedule", "setting", "cron", "the nightly job schedule", "NIGHTLY_CRON",
         "The nightly job runs on the schedule {v}."),
    _fix("cache_ttl", "setting", "seconds", "the cache TTL", "CACHE_TTL",
         "Cache entries live for {v}."),
    _fix("staging_api_base", "endpoint", "url", "the staging API base URL", "STAGING_API_BASE",
         "The staging API lives at {v}."),
    _fix("db_primary", "endpoint", "host", "the primary database host", "DB_PRIMARY_HOST",
         "The primary database is {v}."),
    # coexisting pairs: two subjects, both hold
    _two("two_bug_tickets", "identifier", "ticket",
         ("the login bug's ticket", "login_bug_ticket", "The login bug is tracked as {v}."),
         ("the export bug's ticket", "export_bug_ticket",
          "The export bug is a separate ticket, {v}.")),
    _two("two_service_owners", "owner", "person",
         ("the owner of the billing service", "billing_owner", "{v} owns the billing service."),
         ("the owner of the search service", "search_owner",
          "The search service belongs to {v}.")),
    _two("input_output_dirs", "path", "dir",
         ("the importer's input directory", "import_input_dir", "The importer reads from {v}."),
         ("the importer's output directory", "import_output_dir",
          "The importer writes its results to {v}.")),
    _two("primary_and_replica", "endpoint", "host",
         ("the reporting primary host", "reporting_primary",
          "Reporting writes go to the primary {v}."),
         ("the reporting replica host", "reporting_replica",
          "Reporting reads go to the replica {v}.")),
    _two("beta_and_ga", "deadline", "date",
         ("the beta date", "beta_date", "The beta opens on {v}."),
         ("the general availability date", "ga_date", "General availability is on {v}.")),
    _two("server_and_cli", "version", "version",
         ("the server version", "server_version", "The server is on {v}."),
         ("the CLI version", "cli_version", "The CLI we ship alongside is {v}.")),
    _two("api_and_worker_memory", "number", "mib",
         ("the API pod memory limit", "api_memory_limit", "API pods get {v} of memory."),
         ("the worker pod memory limit", "worker_pod_memory_limit",
          "Worker pods get {v} of memory.")),
    _two("connect_and_read_timeouts", "setting", "ms",
         ("the connect timeout", "CONNECT_TIMEOUT", "The connect timeout is {v}."),
         ("the read timeout", "READ_TIMEOUT", "The read timeout is {v}.")),
)  # fmt: skip
TEMPLATE_BY_NAME = {t.name: t for t in TEMPLATES}


# -- surfaces -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact to write: its subject, key, value and sentence."""

    kind: str
    subject: str
    key: str
    value: str
    says: str


def _fact(t: Template, which: int, value: str) -> Fact:
    return Fact(t.kind, t.subjects[which], t.keys[which], value, t.says[which].format(v=value))


_NAMES = ("Priya", "Tomasz", "Hana", "Diego", "Femi", "Lena", "Arjun", "Mei", "Jonas", "Zara",
          "Pavel", "Aiko")  # fmt: skip
_SERVICES = ("billing-api", "ingest", "search-web", "notifier", "ledger-sync", "exporter")
_FILES = ("src/app/config.py", "lib/settings.rb", "internal/conf/load.go", "app/core/limits.ts")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _sha(r: random.Random, n: int = 40) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def _clock(r: random.Random) -> str:
    return f"{r.randrange(8, 19):02d}:{r.randrange(60):02d}"


def _upper(key: str) -> str:
    return key.upper()


# tool output


def _ci_notice(f: Fact, r: random.Random) -> str:
    return (f"##[group]Run ./ci/check-config.sh\nchecking {f.key} ... ok\n"
            f"::notice title={f.key}::{f.says}\n##[endgroup]")  # fmt: skip


def _gitlab_trace(f: Fact, r: random.Random) -> str:
    t = 1_770_000_000 + r.randrange(10_000_000)
    return (f"$ ./scripts/print-settings --only {f.key}\nsection_start:{t}:settings\n"
            f"{f.key}={f.value}\nsection_end:{t + 2}:settings\nJob succeeded")  # fmt: skip


def _kube_describe(f: Fact, r: random.Random) -> str:
    svc = r.choice(_SERVICES)
    return (f"Name:                   {svc}\nNamespace:              default\n"
            f"Annotations:            deployment.kubernetes.io/revision: {r.randrange(3, 40)}\n"
            f"                        ops/{f.key.lower().replace('_', '-')}: {f.value}\n"
            f"Replicas:               3 desired | 3 updated | 3 total | 3 available")  # fmt: skip


def _tf_plan_create(f: Fact, r: random.Random) -> str:
    return (f'  # aws_ssm_parameter.{f.key.lower()} will be created\n'
            f'  + resource "aws_ssm_parameter" "{f.key.lower()}" {{\n'
            f'      + name  = "/app/{f.key.lower()}"\n      + type  = "String"\n'
            f'      + value = "{f.value}"\n    }}\n\n'
            f'Plan: 1 to add, 0 to change, 0 to destroy.')  # fmt: skip


def _git_log_full(f: Fact, r: random.Random) -> str:
    who = r.choice(_NAMES)
    return (f"commit {_sha(r)}\nAuthor: {who} <{who.lower()}@example.com>\n"
            f"Date:   Tue Mar 3 {_clock(r)}:11 2026 +0100\n\n    Record {f.key}\n\n"
            f"    {f.says}")  # fmt: skip


def _pytest_failure(f: Fact, r: random.Random) -> str:
    name = f.key.lower()
    return (f"_______________________ test_{name} _______________________\n\n"
            f"    def test_{name}():\n>       assert check_{name}(settings), MESSAGE\n"
            f"E       AssertionError: {f.says}\n\n"
            f"tests/test_settings.py:{r.randrange(20, 300)}: AssertionError")  # fmt: skip


def _rest_response(f: Fact, r: random.Random) -> str:
    body = {"setting": {"key": f.key, "value": f.value, "updated_by": r.choice(_NAMES).lower(),
                        "description": f.subject}}  # fmt: skip
    return f"HTTP/1.1 200 OK\ncontent-type: application/json\n\n{json.dumps(body)}"


def _dotfile_vars(f: Fact, r: random.Random) -> str:
    return f'# .env.local: {f.subject}\n{_upper(f.key)}="{f.value}"\nLOG_FORMAT=plain'


def _make_var(f: Fact, r: random.Random) -> str:
    return (f"{_upper(f.key)} ?= {f.value}\n\ncheck:\n\t./bin/check --{f.key.lower()} "
            f"\"$({_upper(f.key)})\"")  # fmt: skip


def _build_arg(f: Fact, r: random.Random) -> str:
    return (f'FROM python:3.12-slim\nARG {_upper(f.key)}="{f.value}"\n'
            f"ENV {_upper(f.key)}=${{{_upper(f.key)}}}\nCOPY . /app")  # fmt: skip


def _sql_grid(f: Fact, r: random.Random) -> str:
    w1, w2 = max(4, len(f.key)), max(5, len(f.value))
    rule = f"+-{'-' * w1}-+-{'-' * w2}-+"
    return (f"mysql> SELECT name, value FROM app_settings WHERE name = '{f.key}';\n{rule}\n"
            f"| {'name':<{w1}} | {'value':<{w2}} |\n{rule}\n| {f.key:<{w1}} | {f.value:<{w2}} |\n"
            f"{rule}\n1 row in set (0.00 sec)")  # fmt: skip


def _py_traceback(f: Fact, r: random.Random) -> str:
    return ("Traceback (most recent call last):\n"
            f'  File "/app/service/settings.py", line {r.randrange(30, 400)}, in load\n'
            f"    raise ConfigError(msg)\nservice.errors.ConfigError: {f.says}")  # fmt: skip


def _go_panic(f: Fact, r: random.Random) -> str:
    return (f"panic: config: {f.says}\n\ngoroutine 1 [running]:\nmain.mustLoad(...)\n"
            f"\t/src/cmd/server/main.go:{r.randrange(20, 200)} +0x1c4\nexit status 2")  # fmt: skip


def _journal_tail(f: Fact, r: random.Random) -> str:
    svc, pid = r.choice(_SERVICES), r.randrange(1000, 60000)
    clock = _clock(r)
    return (f"Mar 03 {clock}:22 node-a {svc}[{pid}]: starting with {f.key}={f.value}\n"
            f"Mar 03 {clock}:23 node-a {svc}[{pid}]: ready")  # fmt: skip


def _cargo_build_note(f: Fact, r: random.Random) -> str:
    return (f"   Compiling app-config v0.{r.randrange(1, 9)}.0 (/work/app-config)\n"
            f"warning: app-config@0.1.0: {f.says}\n"
            f"    Finished `dev` profile [unoptimized + debuginfo] target(s) in 4.2s")  # fmt: skip


def _image_labels(f: Fact, r: random.Random) -> str:
    labels = {"org.opencontainers.image.revision": _sha(r, 12), f"ops.{f.key.lower()}": f.value}
    return (f"$ docker inspect --format '{{{{json .Config.Labels}}}}' {r.choice(_SERVICES)}\n"
            f"{json.dumps(labels, separators=(',', ':'))}")  # fmt: skip


def _aws_table(f: Fact, r: random.Random) -> str:
    name = f"/app/{f.key.lower()}"
    w = max(len(name), len(f.value)) + 2
    return (f"{'-' * (w + 12)}\n|{'GetParameter':^{w + 10}}|\n+{'-' * 9}+{'-' * w}+\n"
            f"|  Name   |  {name:<{w - 2}}|\n|  Value  |  {f.value:<{w - 2}}|\n"
            f"+{'-' * 9}+{'-' * w}+")  # fmt: skip


def _pr_view_text(f: Fact, r: random.Random) -> str:
    return (f"title:\tRecord {f.subject}\nstate:\tOPEN\nauthor:\t{r.choice(_NAMES).lower()}\n"
            f"labels:\tconfig\nnumber:\t{r.randrange(200, 3000)}\n--\n{f.says}")  # fmt: skip


def _argocd_app(f: Fact, r: random.Random) -> str:
    return (f"Name:               {r.choice(_SERVICES)}\n"
            f"Sync Status:        Synced to HEAD ({_sha(r, 7)})\n"
            f"Health Status:      Healthy\n\nPARAMETERS\nNAME{' ' * 22}VALUE\n"
            f"{f.key.lower():<26}{f.value}")  # fmt: skip


def _jq_filter(f: Fact, r: random.Random) -> str:
    return f"$ jq -r '.{f.key.lower()}' deploy/settings.json\n{f.value}"


# assistant


def _plan_steps(f: Fact, r: random.Random) -> str:
    return ("Plan:\n1. Reproduce the failure with the smallest input.\n"
            f"2. Keep to what was agreed: {f.says}\n"
            "3. Patch, then rerun the affected tests.")  # fmt: skip


def _where_we_are(f: Fact, r: random.Random) -> str:
    return ("Where we are: the reproduction works and the fix is half written. "
            f"Worth keeping in mind: {f.says}")  # fmt: skip


def _inline_review(f: Fact, r: random.Random) -> str:
    return (f"`{r.choice(_FILES)}` line {r.randrange(12, 400)}: the code should follow this, "
            f"and it doesn't yet. {f.says}")  # fmt: skip


def _thinking_aloud(f: Fact, r: random.Random) -> str:
    return f"Before touching anything, let me restate one thing so I don't lose it: {f.says}"


def _preface(f: Fact, r: random.Random) -> str:
    return f"Next I'll run the focused tests. For reference, {f.subject}: {f.value}."


def _done_list(f: Fact, r: random.Random) -> str:
    return ("Done so far:\n- read the failing test\n"
            f"- confirmed with the user: {f.says}\n- drafted the patch")  # fmt: skip


def _settled_points(f: Fact, r: random.Random) -> str:
    return f"Open: whether to backport this.\nSettled: {f.says}"


def _facts_table(f: Fact, r: random.Random) -> str:
    return (f"| what | value |\n|---|---|\n| {f.subject} | {f.value} |\n"
            "| local tests | passing |")  # fmt: skip


def _caveat(f: Fact, r: random.Random) -> str:
    return f"One caveat before I continue: {f.says}"


def _patch_note(f: Fact, r: random.Random) -> str:
    return f"Proposed note for the PR description:\n> {f.says}"


def _so_far(f: Fact, r: random.Random) -> str:
    return ("So far I have confirmed three things: the bug reproduces, the fix stays local, "
            f"and {f.subject} is {f.value}.")  # fmt: skip


def _self_check(f: Fact, r: random.Random) -> str:
    return f"Self-check before editing: {f.key} = {f.value} (from the user); main is green."


# user


def _aside(f: Fact, r: random.Random) -> str:
    return f"oh, and one thing: {f.says}"


def _pasted_ticket(f: Fact, r: random.Random) -> str:
    return (f"Summary: {_cap(f.subject)}\nType: Task    Priority: P2\nDescription:\n{f.says}\n"
            f"Reporter: {r.choice(_NAMES)}")  # fmt: skip


def _sync_notes(f: Fact, r: random.Random) -> str:
    a, b, c = r.sample(_NAMES, 3)
    return (f"Notes from today's sync:\n* attendees: {a}, {b}, {c}\n* {f.says}\n"
            "* next sync Thursday")  # fmt: skip


def _irc_log(f: Fact, r: random.Random) -> str:
    a, b = r.sample(_NAMES, 2)
    clock = _clock(r)
    return f"[{clock}] <{a.lower()}> {f.says}\n[{clock}] <{b.lower()}> ack"


def _forwarded_mail(f: Fact, r: random.Random) -> str:
    who = r.choice(_NAMES)
    return ("---------- Forwarded message ---------\n"
            f"From: {who} <{who.lower()}@example.org>\nSubject: {f.subject}\n\n{f.says}\n\n"
            f"{who}")  # fmt: skip


def _standup(f: Fact, r: random.Random) -> str:
    return f"standup: yesterday the repro, today the patch. also: {f.says}"


def _req_doc(f: Fact, r: random.Random) -> str:
    return f"From the customer's requirements document:\nR{r.randrange(3, 60)}. {f.says}"


def _phone_chat_export(f: Fact, r: random.Random) -> str:
    return f"[03/03/26, {_clock(r)}:05] {r.choice(_NAMES)}: {f.says}"


def _support_reply(f: Fact, r: random.Random) -> str:
    return f"Hi team,\nas discussed on the call: {f.says}\nThanks,\n{r.choice(_NAMES)}"


def _by_the_way(f: Fact, r: random.Random) -> str:
    return f"btw before you go on: {f.says}"


def _agenda(f: Fact, r: random.Random) -> str:
    return (f"Agenda, Thursday:\n1. Demo\n2. {_cap(f.subject)}: {f.value} (agreed last week)\n"
            "3. Anything else")  # fmt: skip


def _sheet_paste(f: Fact, r: random.Random) -> str:
    return f"Item\tValue\tOwner\n{f.subject}\t{f.value}\t{r.choice(_NAMES)}"


def _prod_snippet(f: Fact, r: random.Random) -> str:
    return f"here's what we have in prod:\n```\n{f.key}: {f.value}\n```"


Surface = Callable[[Fact, random.Random], str]
SURFACES: dict[str, tuple[str, Surface]] = {
    "ci-notice": ("tool", _ci_notice),
    "gitlab-trace": ("tool", _gitlab_trace),
    "kube-describe": ("tool", _kube_describe),
    "tf-plan-create": ("tool", _tf_plan_create),
    "git-log-full": ("tool", _git_log_full),
    "pytest-failure": ("tool", _pytest_failure),
    "rest-response": ("tool", _rest_response),
    "dotfile-vars": ("tool", _dotfile_vars),
    "make-var": ("tool", _make_var),
    "build-arg": ("tool", _build_arg),
    "sql-grid": ("tool", _sql_grid),
    "py-traceback": ("tool", _py_traceback),
    "go-panic": ("tool", _go_panic),
    "journal-tail": ("tool", _journal_tail),
    "cargo-build-note": ("tool", _cargo_build_note),
    "image-labels": ("tool", _image_labels),
    "aws-table": ("tool", _aws_table),
    "pr-view-text": ("tool", _pr_view_text),
    "argocd-app": ("tool", _argocd_app),
    "jq-filter": ("tool", _jq_filter),
    "plan-steps": ("assistant", _plan_steps),
    "where-we-are": ("assistant", _where_we_are),
    "inline-review": ("assistant", _inline_review),
    "thinking-aloud": ("assistant", _thinking_aloud),
    "preface": ("assistant", _preface),
    "done-list": ("assistant", _done_list),
    "settled-points": ("assistant", _settled_points),
    "facts-table": ("assistant", _facts_table),
    "caveat": ("assistant", _caveat),
    "patch-note": ("assistant", _patch_note),
    "so-far": ("assistant", _so_far),
    "self-check": ("assistant", _self_check),
    "aside": ("user", _aside),
    "pasted-ticket": ("user", _pasted_ticket),
    "sync-notes": ("user", _sync_notes),
    "irc-log": ("user", _irc_log),
    "forwarded-mail": ("user", _forwarded_mail),
    "standup": ("user", _standup),
    "req-doc": ("user", _req_doc),
    "phone-chat-export": ("user", _phone_chat_export),
    "support-reply": ("user", _support_reply),
    "by-the-way": ("user", _by_the_way),
    "agenda": ("user", _agenda),
    "sheet-paste": ("user", _sheet_paste),
    "prod-snippet": ("user", _prod_snippet),
}


# -- corrections ----------------------------------------------------------------------------------
# ``f`` holds the new value; ``old`` is the value it replaces.


def _ascii_arrow(f: Fact, old: str, r: random.Random) -> str:
    return f"quick one on {f.subject}: {old} -> {f.value}. effective immediately"


def _unicode_arrow(f: Fact, old: str, r: random.Random) -> str:
    return f"Updated `{f.key}`: {old} → {f.value}, after {r.choice(_NAMES)}'s message."


def _moved_from_to(f: Fact, old: str, r: random.Random) -> str:
    return f"{r.choice(_NAMES)} moved {f.subject} from {old} to {f.value} this morning."


def _out_in(f: Fact, old: str, r: random.Random) -> str:
    return f"For {f.subject}: {old} is out, {f.value} is in."


def _hunk_pair(f: Fact, old: str, r: random.Random) -> str:
    at = r.randrange(3, 40)
    return ("--- a/deploy/settings.yml\n+++ b/deploy/settings.yml\n"
            f"@@ -{at},3 +{at},3 @@\n"
            f" # {f.subject}\n-{f.key}: {old}\n+{f.key}: {f.value}")  # fmt: skip


def _struck_value(f: Fact, old: str, r: random.Random) -> str:
    return f"**{_cap(f.subject)}:** ~~{old}~~ {f.value}"


def _swap_for(f: Fact, old: str, r: random.Random) -> str:
    return (f"Review comment on `{r.choice(_FILES)}`: swap {old} for {f.value} in {f.key}; "
            f"{f.subject} moved.")  # fmt: skip


def _not_paren(f: Fact, old: str, r: random.Random) -> str:
    return f"{_cap(f.subject)} is {f.value} (not {old}), sorry for the confusion earlier."


def _was_now(f: Fact, old: str, r: random.Random) -> str:
    return f"{f.key} was {old}, now {f.value}."


def _no_dash(f: Fact, old: str, r: random.Random) -> str:
    return f"{old}? no — {f.value}. double-checked {f.subject} with {r.choice(_NAMES)}."


def _changes_file(f: Fact, old: str, r: random.Random) -> str:
    return ("$ head -3 CHANGES\n* bump test matrix\n"
            f"* changed {f.key} {old} => {f.value} ({_sha(r, 7)})\n* fix typo in docs")  # fmt: skip


def _before_after_row(f: Fact, old: str, r: random.Random) -> str:
    return (f"| setting | before | after |\n|---|---|---|\n| {f.key} | {old} | {f.value} |\n"
            f"(that's {f.subject})")  # fmt: skip


def _in_place_update(f: Fact, old: str, r: random.Random) -> str:
    return (f'  # aws_ssm_parameter.{f.key.lower()} will be updated in-place\n'
            f'  ~ resource "aws_ssm_parameter" "{f.key.lower()}" {{\n'
            f'      ~ value = "{old}" -> "{f.value}"\n    }}\n\n'
            f'Plan: 0 to add, 1 to change, 0 to destroy.')  # fmt: skip


def _instead(f: Fact, old: str, r: random.Random) -> str:
    return f"Revised plan: use {f.value} instead of {old} for {f.subject}, then rerun the checks."


def _event_record(f: Fact, old: str, r: random.Random) -> str:
    return (f"2026-03-03T{_clock(r)}:41Z event=config.set actor={r.choice(_NAMES).lower()} "
            f'key={f.key} old="{old}" new="{f.value}"')  # fmt: skip


def _plan_shift(f: Fact, old: str, r: random.Random) -> str:
    return f"Change of plan: {f.subject} is going to be {f.value}. Go with that."


def _said_in_passing(f: Fact, old: str, r: random.Random) -> str:
    return (f"[{_clock(r)}] <{r.choice(_NAMES).lower()}> fyi I already pointed everything at "
            f"{f.value}, so {f.subject} is sorted")  # fmt: skip


def _fresh_dump(f: Fact, old: str, r: random.Random) -> str:
    return (f"$ ./bin/app config dump\nlog_format = plain\n{f.key} = {f.value}\n"
            "metrics = on")  # fmt: skip


def _kube_set_var(f: Fact, old: str, r: random.Random) -> str:
    svc = r.choice(_SERVICES)
    return (f'$ kubectl set env deployment/{svc} {_upper(f.key)}="{f.value}"\n'
            f"deployment.apps/{svc} env updated\n"
            f"$ kubectl exec deploy/{svc} -- printenv {_upper(f.key)}\n{f.value}")  # fmt: skip


def _ack(f: Fact, old: str, r: random.Random) -> str:
    return f"Got it: {f.subject} is {f.value} from here on; I'll use that."


def _ticket_comment(f: Fact, old: str, r: random.Random) -> str:
    return (f"Comment by {r.choice(_NAMES)} ({_clock(r)}):\nConfirmed with the vendor. "
            f"{_cap(f.subject)}: {f.value}.")  # fmt: skip


Correction = Callable[[Fact, str, random.Random], str]
# name -> (register, names the old value, writer)
CORRECTIONS: dict[str, tuple[str, bool, Correction]] = {
    "ascii-arrow": ("user", True, _ascii_arrow),
    "unicode-arrow": ("assistant", True, _unicode_arrow),
    "moved-from-to": ("user", True, _moved_from_to),
    "out-in": ("user", True, _out_in),
    "hunk-pair": ("tool", True, _hunk_pair),
    "struck-value": ("user", True, _struck_value),
    "swap-for": ("assistant", True, _swap_for),
    "not-paren": ("user", True, _not_paren),
    "was-now": ("user", True, _was_now),
    "no-dash": ("user", True, _no_dash),
    "changes-file": ("tool", True, _changes_file),
    "before-after-row": ("assistant", True, _before_after_row),
    "in-place-update": ("tool", True, _in_place_update),
    "instead": ("assistant", True, _instead),
    "event-record": ("tool", True, _event_record),
    "plan-shift": ("user", False, _plan_shift),
    "said-in-passing": ("user", False, _said_in_passing),
    "fresh-dump": ("tool", False, _fresh_dump),
    "kube-set-var": ("tool", False, _kube_set_var),
    "ack": ("assistant", False, _ack),
    "ticket-comment": ("user", False, _ticket_comment),
}

REGISTER_OF: dict[str, str] = {
    **{name: reg for name, (reg, _) in SURFACES.items()},
    **{name: reg for name, (reg, _, _) in CORRECTIONS.items()},
}

# -- sessions -------------------------------------------------------------------------------------


def _mix(count: int) -> tuple[int, int, int]:
    """How many singles, correction pairs and coexisting pairs a session of ``count`` holds."""
    if count < 6:
        raise ValueError(f"count must be >= 6, not {count}")
    corrections = max(1, round(count * 5 / 24))
    pairs = max(1, round(count * 2 / 24))
    return count - 2 * corrections - 2 * pairs, corrections, pairs


def _ring(seed: int, label: str, items: list[Any], variant: int, n: int) -> list[Any]:
    """``n`` items of a per-seed shuffled ring, session ``variant`` starting where the previous
    one stopped."""
    order = list(items)
    random.Random(f"heldout-l:{seed}:{label}").shuffle(order)
    return [order[(variant * n + i) % len(order)] for i in range(n)]


def _at(r: random.Random, low: float, high: float) -> float:
    return round(r.uniform(low, high), 4)


def _session(seed: int, count: int, variant: int, attempt: int) -> list[dict[str, Any]]:
    singles_n, fixes_n, pairs_n = _mix(count)
    by_shape = {s: [t for t in TEMPLATES if t.shape == s] for s in SHAPES}
    singles = _ring(seed, "single", by_shape["single"], variant, singles_n)
    fixes = _ring(seed, "correction", by_shape["correction"], variant, fixes_n)
    pairs = _ring(seed, "coexist", by_shape["coexist"], variant, pairs_n)
    n_surfaces = singles_n + fixes_n + 2 * pairs_n
    surfaces = _ring(seed, "surface", list(SURFACES), variant, n_surfaces)
    ways = _ring(seed, "correction-way", list(CORRECTIONS), variant, fixes_n)
    r = random.Random(f"heldout-l:{seed}:{variant}:{attempt}")
    out: list[dict[str, Any]] = []

    def add(t: Template, fact: Fact, style: str, text: str, at: float, **extra: str) -> str:
        cid = f"L{variant}-{len(out) + 1:02d}"
        out.append({"id": cid, "kind": t.kind, "at": at, "text": text,
                    "keep": [fact.value], "style": style, "template": t.name,
                    "subject": fact.subject, **extra})  # fmt: skip
        return cid

    s = iter(surfaces)
    for t in singles:
        fact = _fact(t, 0, _draw(t.form, r))
        style = next(s)
        add(t, fact, style, SURFACES[style][1](fact, r), _at(r, 0.04, 0.92))
    for t, way in zip(fixes, ways, strict=True):
        old_value = _draw(t.form, r)
        old = _fact(t, 0, old_value)
        style = next(s)
        first = _at(r, 0.05, 0.5)
        old_id = add(t, old, style, SURFACES[style][1](old, r), first)
        new = _fact(t, 0, _replacement(t.form, old_value, r))
        text = CORRECTIONS[way][2](new, old_value, r)
        add(t, new, way, text, _at(r, first + 0.25, min(0.95, first + 0.6)), supersedes=old_id)
    for t in pairs:
        a = _fact(t, 0, _draw(t.form, r))
        b = _fact(t, 1, _draw(t.form, r))
        first = _at(r, 0.05, 0.7)
        sa, sb = next(s), next(s)
        a_id = add(t, a, sa, SURFACES[sa][1](a, r), first)
        b_id = add(t, b, sb, SURFACES[sb][1](b, r), _at(r, first + 0.03, min(0.95, first + 0.4)))
        out[-2]["coexists"], out[-1]["coexists"] = b_id, a_id
    return sorted(out, key=lambda c: c["at"])


def _sound(canaries: list[dict[str, Any]]) -> bool:
    """Each keep string in its own text and in no other canary's (a correction may name the one
    it replaces, and does exactly when its way says so), and no keep string inside another."""
    keeps = [k for c in canaries for k in c["keep"]]
    if len(set(keeps)) != len(keeps):
        return False
    if any(a != b and a in b for a in keeps for b in keeps):
        return False
    by_id = {c["id"]: c for c in canaries}
    for c in canaries:
        if not all(len(k) >= 5 and k in c["text"] for k in c["keep"]):
            return False
        for other in canaries:
            if other is c or other.get("supersedes") == c["id"]:
                continue
            if any(k in other["text"] for k in c["keep"]):
                return False
        if "supersedes" in c:
            old = by_id[c["supersedes"]]
            names_old = any(k in c["text"] for k in old["keep"])
            if names_old != CORRECTIONS[c["style"]][1]:
                return False
    return True


def generate(seed: int, count: int = 24, variant: int = 0) -> dict[str, Any]:
    """``count`` canaries for session ``variant`` of a run seeded ``seed``, in the shape
    ``bench/retention.py`` reads (``{"canaries": [...]}``)."""
    for attempt in range(200):
        canaries = _session(seed, count, variant, attempt)
        if _sound(canaries):
            return {"generator": "heldout-l", "seed": seed, "variant": variant,
                    "canaries": canaries}  # fmt: skip
    raise RuntimeError(f"no sound draw for seed {seed}, session {variant}")  # pragma: no cover
