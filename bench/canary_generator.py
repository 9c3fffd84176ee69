"""Generated canaries for bench/retention.py: facts from templates and random values, per seed.

    .venv/bin/python bench/canary_generator.py [--seed N] [--count N] [--variant K]

prints one canary set in the shape of ``../shared/data/canaries/canaries.json`` (``id``,
``kind``, ``at``, ``text``, ``keep``, and ``supersedes`` on corrections), each canary with its
``style`` (how it is written), ``template`` (which template made it), ``subject`` (what it is
about: a correction has its corrected canary's subject) and, on the two canaries of a pair that
both hold, ``coexists`` (the other one's id).

Why generated: a fixed canary file can be fitted, by its wording or by its values. Here every
value (ids, hosts, paths, amounts with units, names, versions, branches, tickets) is drawn fresh
from ``random.Random`` seeded by the seed and the variant (``retention.py`` gives every session
its own variant), and the wording comes from many templates written in many surface styles, so
a figure that holds here holds for facts nobody tuned for. Everything is deterministic per
(seed, variant, count): a run is reproduced from its printed seed.

A set holds, for ``count`` canaries: corrections (each with the canary it corrects, earlier, of
the same subject; ``keep`` is the new value, the old one may or may not be named, and no marker
word is shared by the phrasings), pairs of facts of one template about two different subjects
that both hold (two tickets for two bugs, two hosts for two services: no ``supersedes``, so a
memory that replaces by template rather than by subject loses one), and single facts spread over
the kinds. ``keep`` strings are the values themselves, never common words, and no keep string
occurs in another canary's text (a correction may name the value it replaces).
"""

from __future__ import annotations

import argparse
import json
import string
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from random import Random
from typing import Any

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
    "correction",
)
STYLES = (
    "sentence",
    "chat",
    "keyvalue",
    "yaml",
    "json",
    "log",
    "table",
    "diff",
    "comment",
    "bullet",
)
PROSE = frozenset({"sentence", "chat", "comment", "bullet"})
DEFAULT_COUNT = 24

# -- random values --------------------------------------------------------------------------------

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_FIRST_NAMES = (
    "Maren", "Tomasz", "Dana", "Jiho", "Amara", "Lukas", "Priya", "Oskar", "Ines", "Mateo",
    "Freya", "Kofi", "Noor", "Elias", "Yuki", "Zofia", "Rafael", "Aino", "Samir", "Greta",
    "Chidi", "Leona", "Henrik", "Mei", "Anders", "Lucia", "Tariq", "Ingrid", "Pavel", "Esme",
)  # fmt: skip
_SERVICES = (
    "billing", "ingest", "search", "export", "auth", "metrics", "notify", "ledger", "upload",
    "report", "gateway", "scheduler", "catalog", "payments", "thumbnails", "audit",
)  # fmt: skip
_ISSUES = (
    "parser crash", "docs typo", "flaky upload test", "memory leak", "timezone bug",
    "retry storm", "login redirect", "cache stampede", "unicode filename bug", "slow export",
)  # fmt: skip
_PACKAGES = ("lxml", "urllib3", "protobuf", "grpcio", "pyyaml", "cryptography", "sqlalchemy")
_RELEASES = ("spring release", "hotfix train", "beta", "LTS release", "mobile release")
_NOTES = ("per ops", "agreed in the call", "from the runbook", "see wiki", "set by infra")
_LEVELS = ("INFO", "INFO", "NOTICE", "WARN")


def word(rng: Random, syllables: int | None = None) -> str:
    """A pronounceable made-up word (fresh per seed, never a common word by design)."""
    n = syllables if syllables is not None else rng.randint(2, 3)
    return "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(n)) + (
        rng.choice("nrlsx") if rng.random() < 0.5 else ""
    )


def _suffix(rng: Random) -> str:
    return rng.choice(string.ascii_lowercase) + str(rng.randint(2, 99))


def ticket(rng: Random) -> str:
    prefix = "".join(rng.choice(string.ascii_uppercase) for _ in range(rng.randint(2, 4)))
    return f"{prefix}-{rng.randint(1000, 99999)}"


def person(rng: Random) -> str:
    return f"{rng.choice(_FIRST_NAMES)} {word(rng, 3).capitalize()}"


def version(rng: Random) -> str:
    base = f"{rng.randint(2, 19)}.{rng.randint(10, 60)}.{rng.randint(100, 999)}"
    return base + (f"-rc{rng.randint(2, 9)}" if rng.random() < 0.25 else "")


def host(rng: Random, topic: str) -> str:
    shape = rng.randrange(3)
    if shape == 0:
        return f"ip-10-{rng.randint(0, 255)}-{rng.randint(0, 255)}-{rng.randint(1, 254)}"
    if shape == 1:
        return f"{topic.replace(' ', '-')}-{word(rng)}-{rng.randint(10, 99)}.internal"
    return f"db-{word(rng)}{rng.randint(1, 9)}.eu-{word(rng, 2)}.example.net"


def date(rng: Random) -> str:
    day = f"{rng.randint(2027, 2031)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    return f"{day} {rng.randint(6, 20):02d}:{rng.choice(range(0, 60, 5)):02d} UTC"


# -- templates ------------------------------------------------------------------------------------

Value = Callable[[Random, str], str]


@dataclass(frozen=True, slots=True)
class Template:
    """One kind of fact: how its value is drawn and how it is written.

    ``subject``, ``key`` and the forms are ``str.format`` patterns over ``t`` (the topic, one
    of ``topics``; a template without topics has the single topic ``""``), ``tk`` (the topic
    as a key fragment) and ``v`` (the value). ``sentences`` and ``chats`` are the prose forms
    (the comment and bullet styles reuse them); ``section`` names where the structured styles
    put the key (a YAML section, a log component)."""

    name: str
    kind: str
    subject: str
    key: str
    value: Value
    sentences: Sequence[str]
    chats: Sequence[str]
    section: str
    topics: Sequence[str] = ("",)
    correctable: bool = True


TEMPLATES: tuple[Template, ...] = (
    # constraints
    Template(
        "coverage_floor",
        "constraint",
        "the diff coverage floor",
        "diff_coverage_min",
        lambda r, t: f"{r.randint(71, 96)}.{r.randint(10, 99)}%",
        [
            "CI rule: diff coverage below {v} fails the job, and there is no override label.",
            "Keep diff coverage at {v} or above; the pipeline rejects anything lower.",
        ],
        ["coverage must stay >= {v} or ci goes red"],
        "ci",
    ),
    Template(
        "test_scope",
        "constraint",
        "the test scope for {t}",
        "test_scope_{tk}",
        lambda r, t: f"tests/{t.replace(' ', '_')}_{word(r)}",
        [
            "Only run the tests under {v} for {t}; the full suite takes forty minutes.",
            "For {t}, limit test runs to {v}, nothing wider.",
        ],
        ["{t}: run only {v}, not the whole suite"],
        "ci",
        _SERVICES,
    ),
    Template(
        "commit_prefix",
        "constraint",
        "the commit message prefix",
        "commit_prefix",
        lambda r, t: ticket(r),
        [
            "Every commit message on this branch must start with {v}.",
            "Commit subjects have to begin with {v}, the release tooling greps for it.",
        ],
        ["commits must start with {v}"],
        "git",
    ),
    Template(
        "required_flag",
        "constraint",
        "the flag integration runs need",
        "required_flag",
        lambda r, t: f"--{word(r)}-{word(r, 2)}",
        [
            "All integration runs must pass with {v} enabled.",
            "Integration tests are only valid when run with {v}.",
        ],
        ["integration runs need {v} on"],
        "ci",
    ),
    Template(
        "wire_format",
        "constraint",
        "the wire format to stay compatible with",
        "wire_format",
        lambda r, t: f"{word(r)}-v{r.randint(2, 9)}",
        [
            "The patch must stay compatible with the {v} wire format.",
            "Whatever we change, clients speaking {v} must keep working.",
        ],
        ["must stay {v} compatible"],
        "compat",
    ),
    # prohibitions
    Template(
        "readonly_path",
        "prohibition",
        "the read-only directory",
        "readonly_path",
        lambda r, t: f"{r.choice(['vendor', 'third_party', 'legacy'])}/{word(r)}_{_suffix(r)}",
        [
            "Never touch anything under {v}; it is synced nightly from another repo.",
            "Do not modify files in {v}, local edits get overwritten.",
        ],
        ["dont edit {v}, its generated"],
        "repo",
        correctable=False,
    ),
    Template(
        "no_push",
        "prohibition",
        "the branch that must not be pushed",
        "no_push_branch",
        lambda r, t: f"fix/{ticket(r).lower()}-{word(r)}",
        [
            "Never push {v} to the shared remote; it stays local until I say so.",
            "Do not push {v} anywhere, not even as a draft.",
        ],
        ["do NOT push {v}"],
        "git",
        correctable=False,
    ),
    Template(
        "frozen_package",
        "prohibition",
        "the package that must not be upgraded",
        "frozen_package",
        lambda r, t: f"{word(r)}-{word(r, 2)}",
        [
            "Do not upgrade {v}, whatever the resolver suggests; it is pinned for a reason.",
            "Leave {v} at its current version, no upgrades in this change.",
        ],
        ["no upgrading {v}"],
        "deps",
        correctable=False,
    ),
    Template(
        "forbidden_endpoint",
        "prohibition",
        "the endpoint tests must not call",
        "forbidden_endpoint",
        lambda r, t: f"/api/v{r.randint(2, 9)}/{word(r)}/{word(r, 2)}",
        [
            "Never call {v} from tests: it bills a real account.",
            "Tests must not hit {v}, it talks to the live provider.",
        ],
        ["never hit {v} in tests"],
        "api",
        correctable=False,
    ),
    Template(
        "forbidden_script",
        "prohibition",
        "the script that must not be run",
        "forbidden_script",
        lambda r, t: f"scripts/{word(r)}_{r.choice(['wipe', 'reset', 'purge', 'rebuild'])}.sh",
        [
            "Never run {v} on the shared box, it drops everyone's data.",
            "Do not execute {v}; it is only for disposable environments.",
        ],
        ["dont run {v} pls"],
        "ops",
        correctable=False,
    ),
    # preferences
    Template(
        "helper_name",
        "preference",
        "the helper's name",
        "helper_name",
        lambda r, t: f"_{word(r)}_{word(r, 2)}",
        [
            "I prefer the helper named {v}; it matches the neighbouring code.",
            "Please call the new helper {v}.",
        ],
        ["name the helper {v}"],
        "style",
    ),
    Template(
        "log_prefix",
        "preference",
        "the log prefix",
        "log_prefix",
        lambda r, t: f"[{word(r).upper()}]",
        [
            "I'd like every new log line prefixed with {v} so we can grep for it.",
            "Prefix the debug output with {v}, please.",
        ],
        ["log prefix {v}"],
        "logging",
    ),
    Template(
        "test_fixture",
        "preference",
        "the fixture for the new tests",
        "test_fixture",
        lambda r, t: f"{word(r)}_{word(r, 2)}_fixture",
        [
            "For the new tests I prefer the {v} fixture over building objects by hand.",
            "Use {v} in the tests rather than ad-hoc setup.",
        ],
        ["use {v} in tests"],
        "tests",
    ),
    Template(
        "status_channel",
        "preference",
        "the status channel for {t}",
        "status_channel_{tk}",
        lambda r, t: f"#{word(r)}-{word(r, 2)}",
        [
            "Post status updates about {t} in {v}, not in DMs.",
            "For {t}, I'd rather see progress notes in {v}.",
        ],
        ["{t} updates go to {v}"],
        "comms",
        _SERVICES,
    ),
    Template(
        "test_class",
        "preference",
        "the test class name",
        "test_class",
        lambda r, t: f"Test{word(r).capitalize()}{word(r, 2).capitalize()}",
        [
            "Group the new tests in a class named {v}.",
            "I prefer the regression tests collected under {v}.",
        ],
        ["put tests in {v}"],
        "tests",
    ),
    Template(
        "branch_prefix",
        "preference",
        "the branch naming",
        "branch_prefix",
        lambda r, t: f"{word(r, 1)}{word(r, 1)}/{word(r)}",
        [
            "Name the working branch {v}, that is how the team tracks them.",
            "I prefer the branch to be called {v}.",
        ],
        ["branch name: {v}"],
        "git",
    ),
    # identifiers
    Template(
        "ticket",
        "identifier",
        "the ticket for the {t}",
        "ticket_{tk}",
        lambda r, t: ticket(r),
        ["For the record, the {t} is tracked as {v}.", "The {t} has its own ticket: {v}."],
        ["{t} = {v}"],
        "tracker",
        _ISSUES,
    ),
    Template(
        "flaky_job",
        "identifier",
        "the flaky CI job",
        "flaky_job",
        lambda r, t: f"nightly-{word(r)}-shard-{r.randint(2, 19)}",
        [
            "The flaky CI job is {v}; ignore its failures for now.",
            "If a red build shows up, check whether it is {v}, which flakes.",
        ],
        ["{v} is the flaky one"],
        "ci",
    ),
    Template(
        "last_good_commit",
        "identifier",
        "the last good commit",
        "last_good_commit",
        lambda r, t: "".join(r.choice("0123456789abcdef") for _ in range(12)),
        [
            "The last good commit before the regression is {v}.",
            "Bisect from {v}, that one is known good.",
        ],
        ["last good: {v}"],
        "git",
    ),
    Template(
        "advisory",
        "identifier",
        "the security advisory",
        "advisory",
        lambda r, t: f"CVE-{r.randint(2027, 2031)}-{r.randint(10000, 99999)}",
        [
            "The pin is there because of advisory {v}.",
            "This is the fix for {v}; cite it in the changelog.",
        ],
        ["its for {v}"],
        "security",
    ),
    Template(
        "vault_path",
        "identifier",
        "the vault path for {t}",
        "vault_path_{tk}",
        lambda r, t: f"kv/{word(r)}/{t.replace(' ', '-')}-{word(r, 2)}",
        [
            "Credentials for {t} are in the vault under {v}, not in the repo.",
            "The {t} secrets live at {v} in the vault.",
        ],
        ["{t} creds: {v}"],
        "secrets",
        _SERVICES,
    ),
    Template(
        "feature_flag",
        "identifier",
        "the feature flag",
        "feature_flag",
        lambda r, t: f"{word(r)}_{word(r, 2)}_enabled",
        ["The fix ships behind the feature flag {v}, default off.", "Gate the new path with {v}."],
        ["flag is {v}"],
        "flags",
    ),
    Template(
        "green_run",
        "identifier",
        "the last green run",
        "last_green_run",
        lambda r, t: str(r.randint(100_000_000, 999_999_999)),
        ["The last green pipeline run id was {v}.", "Compare against run {v}, which was green."],
        ["green run {v}"],
        "ci",
    ),
    # decisions
    Template(
        "branch_cut",
        "decision",
        "the {t} branch cut",
        "branch_cut_{tk}",
        lambda r, t: date(r),
        ["As agreed, the {t} branch cut happens on {v}.", "We decided: the {t} is cut on {v}."],
        ["{t} cut: {v}"],
        "release",
        _RELEASES,
    ),
    Template(
        "approach",
        "decision",
        "the chosen approach",
        "approach",
        lambda r, t: f"{word(r)}-{word(r, 2)}",
        [
            "Decision: we go with the {v} approach and drop the alternative.",
            "We settled it in the call, the {v} design it is.",
        ],
        ["going with {v}"],
        "design",
    ),
    Template(
        "invalidation_table",
        "decision",
        "the invalidation table",
        "invalidation_table",
        lambda r, t: f"{word(r)}_outbox",
        [
            "Cache invalidation happens on write via the {v} table, not on a TTL.",
            "We agreed to invalidate through the {v} table.",
        ],
        ["invalidate via {v}"],
        "design",
    ),
    Template(
        "backport_line",
        "decision",
        "the backport target",
        "backport_line",
        lambda r, t: f"{r.randint(2, 19)}.{r.randint(10, 60)}.x",
        ["We backport this to the {v} line only.", "The fix goes back to {v}, nothing older."],
        ["backport to {v}"],
        "release",
    ),
    Template(
        "migration",
        "decision",
        "the migration file",
        "migration",
        lambda r, t: f"{r.randint(1000, 9999)}_{word(r)}_{word(r, 2)}.py",
        [
            "The schema change goes in migration {v}.",
            "Put the column change in {v}, one migration only.",
        ],
        ["migration: {v}"],
        "db",
    ),
    # numbers with units
    Template(
        "memory_limit",
        "number",
        "the memory limit for {t}",
        "{tk}_memory_limit",
        lambda r, t: f"{r.randint(1100, 9900)} MiB",
        [
            "The {t} job has a memory limit of {v}, so stream the input.",
            "Memory limit on the {t} runners is {v}.",
        ],
        ["{t} mem limit {v}"],
        "runner",
        _SERVICES,
    ),
    Template(
        "timeout",
        "number",
        "the request timeout for {t}",
        "{tk}_timeout",
        lambda r, t: f"{r.randint(1100, 9900)} ms",
        ["The request timeout for {t} is {v}.", "{t} calls time out after {v}."],
        ["{t} timeout = {v}"],
        "http",
        _SERVICES,
    ),
    Template(
        "p95_budget",
        "number",
        "the p95 budget for {t}",
        "{tk}_p95_max",
        lambda r, t: f"{r.randint(1, 9)}.{r.randint(100, 999)} s",
        [
            "p95 for {t} must stay under {v} on staging.",
            "Our latency budget for {t} is {v} at p95.",
        ],
        ["{t} p95 < {v}"],
        "slo",
        _SERVICES,
    ),
    Template(
        "throughput",
        "number",
        "the measured throughput",
        "throughput",
        lambda r, t: f"{r.randint(1, 9)},{r.randint(100, 999)} requests/s",
        ["The final benchmark run did {v} at 64 connections.", "Measured: {v} after the patch."],
        ["bench: {v}"],
        "bench",
    ),
    Template(
        "max_upload",
        "number",
        "the maximum upload size",
        "max_upload",
        lambda r, t: f"{r.randint(1100, 9900)} MB",
        [
            "Uploads are capped at {v}; anything larger is rejected.",
            "The maximum upload size is {v}.",
        ],
        ["max upload {v}"],
        "limits",
    ),
    Template(
        "fd_limit",
        "number",
        "the file handle limit",
        "fd_limit",
        lambda r, t: f"{r.randint(10_000, 65_000)} file handles",
        ["A worker may hold at most {v}.", "The file handle limit is {v} per worker."],
        ["fd limit {v}"],
        "limits",
    ),
    # paths
    Template(
        "scratch_dir",
        "path",
        "the scratch directory",
        "scratch_dir",
        lambda r, t: f"/srv/scratch/{word(r)}-{r.randint(1000, 9999)}",
        [
            "If you need a scratch directory use {v} and clean it up afterwards.",
            "Scratch space for this task is {v}.",
        ],
        ["scratch: {v}"],
        "fs",
    ),
    Template(
        "config_file",
        "path",
        "the config file for {t}",
        "{tk}_config",
        lambda r, t: f"config/{t.replace(' ', '_')}/{word(r)}.yaml",
        ["The {t} settings live in {v}.", "{t} reads its settings from {v}."],
        ["{t} config is {v}"],
        "config",
        _SERVICES,
    ),
    Template(
        "log_file",
        "path",
        "the log file of {t}",
        "{tk}_log",
        lambda r, t: f"/var/log/{t.replace(' ', '_')}/{word(r)}.log",
        ["{t} writes its log to {v}.", "Look for {t} errors in {v}."],
        ["{t} logs -> {v}"],
        "logging",
        _SERVICES,
    ),
    Template(
        "golden_dir",
        "path",
        "the golden files directory",
        "golden_dir",
        lambda r, t: f"tests/fixtures/{word(r)}_{_suffix(r)}",
        ["The golden files are in {v}.", "Regenerate the golden files under {v} if needed."],
        ["goldens in {v}"],
        "tests",
    ),
    Template(
        "socket",
        "path",
        "the socket of {t}",
        "{tk}_socket",
        lambda r, t: f"/run/{t.replace(' ', '_')}/{word(r)}.sock",
        ["The {t} daemon listens on {v}.", "Connect to {t} through {v}."],
        ["{t} sock {v}"],
        "runtime",
        _SERVICES,
    ),
    # versions
    Template(
        "target_build",
        "version",
        "the target build",
        "target_build",
        lambda r, t: version(r),
        ["This has to ship in build {v}.", "Target build for the fix is {v}."],
        ["ships in {v}"],
        "release",
    ),
    Template(
        "package_pin",
        "version",
        "the {t} pin",
        "{tk}_version",
        lambda r, t: version(r),
        ["Pin {t} to {v} in the lock file.", "{t} must be exactly {v}."],
        ["{t} pinned at {v}"],
        "deps",
        _PACKAGES,
    ),
    Template(
        "image_tag",
        "version",
        "the image tag of {t}",
        "{tk}_image_tag",
        lambda r, t: f"{version(r)}-{word(r, 2)}",
        ["The {t} image tag to deploy is {v}.", "Deploy {t} from the {v} image."],
        ["{t} image {v}"],
        "deploy",
        _SERVICES,
    ),
    Template(
        "min_client",
        "version",
        "the minimum client version",
        "min_client_version",
        lambda r, t: version(r),
        [
            "The minimum supported client version is {v}.",
            "Clients older than {v} are not supported any more.",
        ],
        ["min client {v}"],
        "compat",
    ),
    # people and owners
    Template(
        "reviewer",
        "owner",
        "the reviewer",
        "reviewer",
        lambda r, t: person(r),
        ["The reviewer will be {v}; mention them in the summary.", "{v} reviews this change."],
        ["{v} is reviewing"],
        "review",
    ),
    Template(
        "codeowner",
        "owner",
        "the owner of {t}",
        "owner_{tk}",
        lambda r, t: f"@{word(r, 2)}/{word(r)}-{word(r, 2)}",
        ["{t} is owned by {v} per CODEOWNERS.", "Changes to {t} need approval from {v}."],
        ["{t} owner {v}"],
        "owners",
        _SERVICES,
    ),
    Template(
        "oncall",
        "owner",
        "the on-call for {t}",
        "oncall_{tk}",
        lambda r, t: person(r),
        ["{v} is on call for {t} this week.", "If {t} pages, {v} is the one to call."],
        ["{t} oncall: {v}"],
        "oncall",
        _SERVICES,
    ),
    Template(
        "approver",
        "owner",
        "the release approver",
        "release_approver",
        lambda r, t: f"{word(r)}.{word(r, 3)}@example.org",
        ["Release approvals go to {v}.", "Send the sign-off request to {v}."],
        ["approver {v}"],
        "release",
    ),
)


@dataclass(frozen=True, slots=True)
class Correction:
    """One way of saying a subject's value changed: ``text`` over ``s`` (the subject), ``S``
    (capitalised), ``o`` (the old value), ``n`` (the new one); ``kinds`` the kinds it reads
    right for (empty: all)."""

    name: str
    text: str
    kinds: frozenset[str] = frozenset()


_OWNERS = frozenset({"owner"})
_SETTINGS = frozenset({"number", "version", "path", "identifier", "decision", "constraint"})

# prose corrections (sentence, comment and bullet styles): no word is shared by all of them
CORRECTIONS: tuple[Correction, ...] = (
    Correction("plan_change", "Change of plan: {s} is {n} now."),
    Correction("old_cancelled", "{o} is cancelled. {S} is {n}."),
    Correction("instead", "Use {n} instead of {o} for {s}."),
    Correction("no_longer", "{S} is no longer {o}; it is {n}."),
    Correction("forget", "Forget {o} - {s} is {n}."),
    Correction("moved", "Heads up: {s} moved to {n} overnight."),
    Correction("was_wrong", "Turns out {o} was wrong, the right value for {s} is {n}."),
    Correction("scratch_that", "Scratch what I said about {s}: it's {n}."),
    Correction("settled", "After the review we settled on {n} for {s}."),
    Correction("retired", "{o} got retired, so {s} is {n} going forward."),
    Correction("bumped", "{S} was bumped to {n} after the load test.", _SETTINGS),
    Correction("ignore_earlier", "Ignore the earlier {s}; {n} is the one that counts."),
    Correction("only_new", "{S}: {n}."),
    Correction("rechecked", "Re-checked {s} and it is actually {n}."),
    Correction("took_over", "{n} took over as {s} from {o} last week, so loop them in.", _OWNERS),
    Correction("owns_now", "Since {n} is {s} now, send the patch their way.", _OWNERS),
    Correction("replaced_by", "{o} has been replaced by {n}.", _SETTINGS),
)
# terse chat corrections
CHAT_CORRECTIONS: tuple[Correction, ...] = (
    Correction("chat_arrow", "fyi {s} -> {n} now"),
    Correction("chat_nvm", "nvm {o}, its {n}"),
    Correction("chat_dead", "{o} is dead, use {n}"),
    Correction("chat_actually", "actually {s} is {n}"),
    Correction("chat_swap", "swap {o} for {n} pls"),
)


# -- rendering ------------------------------------------------------------------------------------


def _timestamp(rng: Random) -> str:
    return (
        f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
        f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"
    )


def _yaml_value(value: str) -> str:
    return f'"{value}"' if value[0] in "[#@%*&!|>'\"{" or ": " in value else value


def structured(style: str, key: str, value: str, section: str, rng: Random) -> str:
    """``key`` set to ``value`` in one of the structured styles."""
    if style == "keyvalue":
        return rng.choice([f"{key}: {value}", f"{key} = {value}", f"{key.upper()}={value}"])
    if style == "yaml":
        return f"{section}:\n  {key}: {_yaml_value(value)}"
    if style == "json":
        if rng.random() < 0.5:
            return json.dumps({key: value})
        return json.dumps({"setting": key, "value": value, "source": section})
    if style == "log":
        return f"{_timestamp(rng)} {rng.choice(_LEVELS)} [{section}] {key}={value}"
    if style == "table":
        return f"| {key} | {value} | {rng.choice(_NOTES)} |"
    if style == "diff":
        return rng.choice([f"+{key} = {value}", f"+  {key}: {_yaml_value(value)}"])
    raise ValueError(f"not a structured style: {style!r}")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def prose(style: str, sentence: str, chat: str, rng: Random) -> str:
    """A prose fact in ``style``."""
    if style == "sentence":
        return _capital(sentence)
    if style == "chat":
        return chat
    if style == "comment":
        body = rng.choice([sentence, chat])
        return rng.choice([f"# {body}", f"// {body}", f"# NOTE: {body}", f"// TODO: {body}"])
    if style == "bullet":
        return rng.choice(["- ", "* "]) + _capital(sentence)
    raise ValueError(f"not a prose style: {style!r}")


@dataclass(frozen=True, slots=True)
class Fact:
    """A template with its topic and value drawn."""

    template: Template
    topic: str
    value: str

    def fill(self, pattern: str) -> str:
        tk = self.topic.replace(" ", "_")
        return pattern.format(t=self.topic, tk=tk, v=self.value)

    @property
    def subject(self) -> str:
        return self.fill(self.template.subject)

    @property
    def key(self) -> str:
        return self.fill(self.template.key)

    def render(self, style: str, rng: Random) -> str:
        t = self.template
        if style in PROSE:
            return prose(
                style, self.fill(rng.choice(t.sentences)), self.fill(rng.choice(t.chats)), rng
            )
        return structured(style, self.key, self.value, t.section, rng)


def render_correction(old: Fact, new: Fact, style: str, rng: Random) -> tuple[str, str]:
    """The text of a correction of ``old`` by ``new`` in ``style``, and its phrasing's name."""
    kind = old.template.kind
    fields = {"s": old.subject, "S": _capital(old.subject), "o": old.value, "n": new.value}
    if style == "chat":
        c = rng.choice(CHAT_CORRECTIONS)
        return c.text.format(**fields), c.name
    if style in PROSE:
        fitting = [c for c in CORRECTIONS if not c.kinds or kind in c.kinds]
        c = rng.choice(fitting)
        return prose(style, c.text.format(**fields), c.text.format(**fields), rng), c.name
    key, section = old.key, old.template.section
    if style == "diff":
        before = f"-{key} = {old.value}\n+{key} = {new.value}"
        return before, "diff_pair"
    if style == "log":
        stamp, level = _timestamp(rng), rng.choice(_LEVELS)
        if rng.random() < 0.5:
            return (
                f"{stamp} {level} [{section}] {key} changed {old.value} -> {new.value}",
                "log_change",
            )
        return f"{stamp} {level} [{section}] reloaded: {key}={new.value}", "log_reload"
    return structured(style, key, new.value, section, rng), f"{style}_restated"


# -- the set --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Draft:
    kind: str
    at: float
    text: str
    keep: tuple[str, ...]
    style: str
    template: str
    subject: str
    supersedes: int | None = None  # index into the drafts
    coexists: int | None = None


def _draw(rng: Random, template: Template, topic: str, taken: set[str]) -> Fact:
    """A fresh value for ``template`` not overlapping any value already drawn."""
    for _ in range(50):
        value = template.value(rng, topic)
        if not any(value in v or v in value for v in taken):
            taken.add(value)
            return Fact(template, topic, value)
    raise RuntimeError(f"no fresh value for {template.name}")  # pragma: no cover


def _at(rng: Random, low: float, high: float) -> float:
    return round(rng.uniform(low, high), 3)


def generate(seed: int, count: int = DEFAULT_COUNT, variant: int = 0) -> dict[str, Any]:
    """A canary set of ``count`` canaries (at least 6), the same for the same arguments."""
    if count < 6:
        raise ValueError(f"count must be at least 6, got {count}")
    for attempt in range(100):
        # a draw whose values happen to collide with another canary's text is drawn again
        try:
            return _generate(
                Random(f"canaries:{seed}:{variant}:{count}:{attempt}"), count, seed, variant
            )
        except ValueError:
            continue
    raise RuntimeError(f"no canary set for seed {seed}")  # pragma: no cover


def _generate(rng: Random, count: int, seed: int, variant: int) -> dict[str, Any]:
    corrections = max(1, count // 6)
    pairs = max(1, count // 12)
    singles = count - 2 * corrections - 2 * pairs
    taken: set[str] = set()
    styles = list(STYLES)
    rng.shuffle(styles)
    style_at = [0]

    def next_style() -> str:
        if style_at[0] % len(styles) == 0:
            rng.shuffle(styles)
        style = styles[style_at[0] % len(styles)]
        style_at[0] += 1
        return style

    pool = list(TEMPLATES)
    rng.shuffle(pool)
    used: set[str] = set()

    def pick(fit: Callable[[Template], bool]) -> Template:
        fresh = [t for t in pool if fit(t) and t.name not in used]
        choice = rng.choice(fresh or [t for t in pool if fit(t)])
        used.add(choice.name)
        return choice

    drafts: list[Draft] = []
    for _ in range(corrections):
        template = pick(lambda t: t.correctable)
        topic = rng.choice(template.topics)
        old = _draw(rng, template, topic, taken)
        new = _draw(rng, template, topic, taken)
        first = _at(rng, 0.02, 0.55)
        second = _at(rng, first + 0.12, min(0.89, first + 0.6))
        style = next_style()
        drafts.append(
            Draft(
                template.kind,
                first,
                old.render(style, rng),
                (old.value,),
                style,
                template.name,
                old.subject,
            )
        )
        # most corrections are said in prose, the way people write them; some restate the key
        style = rng.choice(sorted(PROSE)) if rng.random() < 0.6 else next_style()
        text, phrasing = render_correction(old, new, style, rng)
        drafts.append(
            Draft(
                "correction",
                second,
                text,
                (new.value,),
                style,
                f"correction:{phrasing}",
                old.subject,
                supersedes=len(drafts) - 1,
            )
        )
    for _ in range(pairs):
        template = pick(lambda t: len(t.topics) > 1)
        one, two = rng.sample(template.topics, 2)
        facts = (_draw(rng, template, one, taken), _draw(rng, template, two, taken))
        ats = sorted((_at(rng, 0.02, 0.88), _at(rng, 0.02, 0.88)))
        start = len(drafts)
        for k, (fact, at) in enumerate(zip(facts, ats, strict=True)):
            style = next_style()
            drafts.append(
                Draft(
                    template.kind,
                    at,
                    fact.render(style, rng),
                    (fact.value,),
                    style,
                    template.name,
                    fact.subject,
                    coexists=start + 1 - k,
                )
            )
    kinds = [k for k in KINDS if k != "correction"]
    rng.shuffle(kinds)
    for i in range(singles):
        kind = kinds[i % len(kinds)]
        template = pick(lambda t, kind=kind: t.kind == kind)  # type: ignore[misc]
        fact = _draw(rng, template, rng.choice(template.topics), taken)
        style = next_style()
        drafts.append(
            Draft(
                kind,
                _at(rng, 0.02, 0.88),
                fact.render(style, rng),
                (fact.value,),
                style,
                template.name,
                fact.subject,
            )
        )
    return _as_set(seed, variant, drafts)


def _as_set(seed: int, variant: int, drafts: list[Draft]) -> dict[str, Any]:
    order = sorted(range(len(drafts)), key=lambda i: (drafts[i].at, i))
    ids = {i: f"g{n + 1:02d}" for n, i in enumerate(order)}
    canaries: list[dict[str, Any]] = []
    for i in order:
        d = drafts[i]
        item: dict[str, Any] = {
            "id": ids[i],
            "kind": d.kind,
            "at": d.at,
            "text": d.text,
            "keep": list(d.keep),
            "style": d.style,
            "template": d.template,
            "subject": d.subject,
        }
        if d.supersedes is not None:
            item["supersedes"] = ids[d.supersedes]
        if d.coexists is not None:
            item["coexists"] = ids[d.coexists]
        canaries.append(item)
    check(canaries)
    return {
        "about": (
            "Generated by bench/canary_generator.py (seed "
            f"{seed}, variant {variant}): same format and placements as "
            "../shared/data/canaries/canaries.json; `style` is how each fact is written, "
            "`template` which template made it, `subject` what it is about; `supersedes` names "
            "the earlier canary of the same subject a correction replaces; `coexists` the other "
            "canary of a pair that both hold."
        ),
        "seed": seed,
        "variant": variant,
        "canaries": canaries,
    }


def check(canaries: Sequence[dict[str, Any]]) -> None:
    """Raise ``ValueError`` unless every keep string is in its own text and in no other
    canary's text (a correction may name the value it replaces), and every ``supersedes``
    points at an earlier canary of the same subject."""
    by_id = {c["id"]: c for c in canaries}
    position = {c["id"]: k for k, c in enumerate(canaries)}
    for c in canaries:
        for s in c["keep"]:
            if s not in c["text"]:
                raise ValueError(f"{c['id']}: keep {s!r} not in its text")
            for other in canaries:
                if other is c or s not in other["text"]:
                    continue
                if other.get("supersedes") == c["id"]:
                    continue
                raise ValueError(f"{c['id']}: keep {s!r} also in {other['id']}")
        old = c.get("supersedes")
        if old is not None:
            if old not in by_id or position[old] >= position[c["id"]]:
                raise ValueError(f"{c['id']}: supersedes {old!r}, not an earlier canary")
            if by_id[old]["subject"] != c["subject"] or not by_id[old]["at"] < c["at"]:
                raise ValueError(f"{c['id']}: supersedes {old!r} of another subject or later")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=None, help="default: a fresh random seed")
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT, help="canaries (>= 6)")
    parser.add_argument("--variant", type=int, default=0, help="retention.py: the session index")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else fresh_seed()
    if args.count < 6:
        parser.error("--count must be at least 6")
    json.dump(generate(seed, args.count, args.variant), sys.stdout, indent=2)
    sys.stdout.write("\n")


def fresh_seed() -> int:
    """A seed nobody chose: from the system's randomness."""
    return Random().randrange(1, 10**9)


if __name__ == "__main__":
    main()
