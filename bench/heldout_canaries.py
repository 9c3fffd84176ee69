"""Held-out canaries for bench/retention.py, written without reading how abridged remembers facts.

    .venv/bin/python bench/heldout_canaries.py --seed N [--count N] [--variant K]

``generate(seed, count, variant)`` makes one session's facts the way people and tools write them
(config files, CI logs, ``git log``, test failures, API responses, terse chat, an agent's notes),
from families of facts about one subject each (a service's timeout, a release date, who owns a
migration), values drawn fresh from ``random.Random`` seeded by (seed, variant). About a quarter
of the facts are corrections of an earlier fact about the same subject, most with no marker word;
a few pairs are two facts of one family about two subjects that both hold (``coexists``).
``bench/retention.py --generator bench/heldout_canaries.py`` plants and scores them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
    "stacktrace",
    "cli_output",
    "markdown_heading",
    "env",
    "ini",
    "toml",
    "sql",
    "http_header",
    "git_log",
    "test_failure",
    "code",
    "url",
    "requirements",
)
MAX_COUNT = 80  # each family is used once per set (pairs: once for both), so sets stay below this
Ctx = dict[str, str]
Forms = dict[str, str]  # "" is the value as usually written; other suffixes are other spellings

# -- vocabulary -----------------------------------------------------------------------------------

NOUNS = (
    "billing", "ingest", "notify", "search", "auth", "render", "export", "payout", "quota",
    "audit", "ledger", "catalog", "checkout", "geo", "media", "report", "sync", "webhook",
    "invoice", "ranker", "pricing", "session", "upload", "tenant",
)  # fmt: skip
SUFFIXES = ("api", "worker", "svc", "gateway", "cron", "consumer", "sidecar", "scheduler")
FIRST = (
    "Priya", "Tomasz", "Ngozi", "Mateus", "Ayumi", "Dmitri", "Ingrid", "Farhan", "Yusuf",
    "Oksana", "Henrik", "Thandiwe", "Rafaela", "Siobhan", "Kwabena", "Leilani", "Bogdan",
    "Marisol", "Takeshi", "Zainab", "Anneliese", "Chidi", "Soren", "Valentina", "Aurelio",
    "Hyun-woo", "Esperanza", "Gunnar", "Nadira", "Emeka", "Ludmila", "Ximena", "Baptiste",
    "Wilhelmina", "Rustam", "Ottoline", "Jiho", "Folasade", "Radek", "Imogen",
)  # fmt: skip
LAST = (
    "Raghunathan", "Kowalczyk", "Okafor", "Albuquerque", "Tanabe", "Volkov", "Lindqvist",
    "Chowdhury", "Demir", "Hrytsenko", "Aasen", "Mthembu", "Carvalho", "Brennan", "Mensah",
    "Kahale", "Petrescu", "Quintero", "Morikawa", "Abubakar", "Vogler", "Eze", "Kjeldsen",
    "Bellucci", "Ferreira", "Seong", "Villalobos", "Thorsen", "Haidari", "Nwosu", "Smirnova",
    "Cardenas", "Lefebvre", "Oduya", "Karimov", "Pemberton", "Yoon", "Adeyemi", "Dvorak",
)  # fmt: skip
REGIONS = (
    "eu-north-1", "ap-southeast-3", "me-central-1", "ca-west-1", "eu-south-2", "ap-south-2",
    "il-central-1", "af-south-1", "eu-central-2", "ap-northeast-3", "sa-east-1", "mx-central-1",
)  # fmt: skip
TIMEZONES = (
    "Pacific/Chatham", "Asia/Kathmandu", "America/St_Johns", "Australia/Eucla", "Asia/Kolkata",
    "Africa/Lagos", "America/Bogota", "Europe/Vilnius", "Asia/Ulaanbaatar", "Pacific/Apia",
    "Atlantic/Azores", "America/Winnipeg", "Asia/Tbilisi", "Australia/Darwin",
)  # fmt: skip
LOCALES = ("de-CH", "pt-BR", "fr-CA", "en-IE", "nb-NO", "es-MX", "ko-KR", "it-CH", "nl-BE")
DATE_FORMATS = ("%d.%m.%Y", "%Y/%m/%d", "%b %d, %Y", "%d-%b-%Y", "%m/%d/%y", "%Y%m%d")
PROJECTS = ("PAY", "OPS", "INFRA", "CORE", "DATA", "SRE", "PLAT", "BILL", "MOB", "WEB", "SEC")
SYMPTOMS = (
    "double charge on retry", "stale cache after deploy", "crash on empty CSV",
    "memory leak in the exporter", "timezone drift in reports", "duplicate webhook delivery",
    "slow search on long queries", "login loop on Safari", "truncated PDF invoices",
)  # fmt: skip
FEATURES = (
    "new checkout flow", "bulk export", "usage-based pricing", "SSO login", "dark mode",
    "async invoice rendering", "partner webhooks", "saved searches", "two-step refunds",
)  # fmt: skip
CLIS = ("appctl", "cfgctl", "opsctl", "svcctl")
_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "kl")
_CODAS = ("", "", "n", "r", "s", "l", "x")


def word(r: random.Random) -> str:
    """A made-up pronounceable word (``korvan``): values made of it do not occur by chance."""
    syllables = [r.choice(_ONSETS) + r.choice("aeiou") for _ in range(r.randint(2, 3))]
    return "".join(syllables) + r.choice(_CODAS)


def hexs(r: random.Random, n: int) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def alnum(r: random.Random, n: int) -> str:
    return "".join(r.choice(string.ascii_letters + string.digits) for _ in range(n))


def service(r: random.Random) -> tuple[str, str]:
    noun = r.choice(NOUNS)
    return noun, f"{noun}-{r.choice(SUFFIXES)}"


def a_date(r: random.Random) -> dt.date:
    return dt.date(2027, 1, 1) + dt.timedelta(days=r.randrange(0, 360))


def ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def version(r: random.Random) -> str:
    return f"{r.randint(1, 9)}.{r.randint(10, 49)}.{r.randint(1, 29)}"


def person(r: random.Random) -> Forms:
    first, last = r.choice(FIRST), r.choice(LAST)
    return {
        "": first,
        "_full": f"{first} {last}",
        "_handle": f"@{first[0].lower()}{last.lower()}",
    }


def noise(r: random.Random) -> Ctx:
    """Incidental values a real snippet carries around its fact (timestamps, hashes, counts)."""
    when = dt.datetime(2027, 1, 1) + dt.timedelta(seconds=r.randrange(0, 360 * 86400))
    first, last = r.choice(FIRST), r.choice(LAST)
    return {
        "ts": when.strftime("%Y-%m-%dT%H:%M:%S") + f".{r.randrange(1000):03d}Z",
        "ts2": (when + dt.timedelta(seconds=r.randint(1, 90))).strftime("%Y-%m-%dT%H:%M:%S") + "Z",
        "date": when.strftime("%Y-%m-%d"),
        "person": first,
        "user": f"{first[0].lower()}{last.lower()}",
        "sha7": hexs(r, 7),
        "sha7b": hexs(r, 7),
        "prev": hexs(r, 12),
        "n": str(r.randint(2, 9)),
        "pr": str(r.randint(1000, 9999)),
        "ln": str(r.randint(3, 240)),
        "pct": f"{r.randint(40, 69)}.{r.randint(10, 99)}",
        "cpu": str(r.choice((250, 500, 750, 1000, 1500))),
        "size": str(r.randint(1_000_000, 90_000_000)),
        "org": word(r),
        "branch": f"fix/{word(r)}",
        "cli": r.choice(CLIS),
    }


# -- families -------------------------------------------------------------------------------------

Phrase = tuple[str, str]  # (style, format)
Fix = tuple[str, str, str]  # (way, style, format): a correction written that way


@dataclass(frozen=True, slots=True)
class Family:
    """One kind of fact about one subject: how to draw the subject and its value, how people
    state it, and which ways of correcting it read naturally for it."""

    name: str
    kind: str
    subject: Callable[[random.Random], Ctx]
    value: Callable[[random.Random, Ctx], Forms]
    says: tuple[Phrase, ...]
    ways: tuple[str, ...] = ()  # generic correction ways (GENERIC) that fit this family
    fixes: tuple[Fix, ...] = ()  # its own correction phrasings
    pairable: bool = False  # two subjects can both hold a value (two tickets for two bugs)

    @property
    def correctable(self) -> bool:
        return bool(self.ways or self.fixes)


# Ways of correcting any setting-like fact; {key} is how a config file names it, {label} how a
# person says it, {alt} another wording of the same thing.
GENERIC: dict[str, tuple[Phrase, ...]] = {
    "names_new_only": (
        ("chat", "ok, {new} for {label} then"),
        ("chat", "let's go with {new} for {label} after all"),
        ("sentence", "We'll use {new} for {label}."),
        ("chat", "{label}: {new}. final answer"),
    ),
    "old_declared_dead": (
        ("chat", "{old} is dead, use {new} for {label}"),
        ("chat", "scrap {old}. {label} is {new}"),
        ("chat", "{old} was a mistake on my side, {label} is {new}"),
    ),
    "config_diff": (
        (
            "diff",
            "--- a/{file}\n+++ b/{file}\n@@ -{ln},1 +{ln},1 @@\n-  {key}: {old}\n+  {key}: {new}",
        ),
        ("diff", "-{key} = {old}\n+{key} = {new}"),
    ),
    "later_log_line": (
        ("log", "{ts} INFO  {section}: {key} changed {old} -> {new}"),
        ("log", "{ts} INFO  {section}: applying override {key}={new}"),
    ),
    "reply_to_question": (
        ("chat", "> what's {label} now?\n{new}"),
        ("chat", "re {label} - it's {new}"),
        ("chat", "> {Label}?\n{new}, checked with {person}"),
    ),
    "restated_other_wording": (
        ("sentence", "{Alt} is {new}."),
        ("keyvalue", "{alt}: {new}"),
        ("bullet", "- {alt} = {new}"),
    ),
    "env_override": (
        ("env", "export {env}={new}"),
        ("cli_output", "$ {env}={new} make deploy"),
    ),
    "later_yaml": (("yaml", "{section}:\n  {key}: {new}"),),
    "later_json": (("json", '{{"scope": "{section}", "{key}": "{new}", "updated_by": "{user}"}}'),),
    "agent_note": (
        ("sentence", "Noted - I'll use {new} for {label} from now on."),
        ("sentence", "Understood, switching {label} to {new}."),
        ("sentence", "Got it: {label} = {new}. I'll keep that in mind for the rest of this."),
    ),
    "later_table": (
        (
            "table",
            "| scope | setting | value | changed by |\n|---|---|---|---|\n"
            "| {section} | {key} | {new} | {person} |",
        ),
    ),
    "sql_update": (("sql", "UPDATE settings SET value = '{new}' WHERE name = '{section}.{key}';"),),
    "marker_word": (
        ("sentence", "Correction: {label} is {new}, not {old}."),
        ("chat", "update - {label} changed to {new}"),
        ("sentence", "{Label} is no longer {old}; it is {new}."),
    ),
    "cli_readback": (("cli_output", "$ {cli} config get {section}.{key}\n{new}"),),
    "later_ini": (("ini", "[{section}]\n{key} = {new}"),),
    "review_comment": (
        ("comment", "# review ({person}): {section}.{key} should be {new}, see the runbook"),
    ),
}
SETTING_WAYS = tuple(GENERIC)
PROSE_WAYS = (
    "names_new_only",
    "old_declared_dead",
    "reply_to_question",
    "restated_other_wording",
    "agent_note",
    "marker_word",
)


def setting(r: random.Random, **ctx: str) -> Ctx:
    """A subject with the names the generic correction ways use, filled in where not given."""
    key = ctx.get("key", "value")
    ctx.setdefault("env", key.upper())
    ctx.setdefault("section", ctx.get("svc", "app"))
    ctx.setdefault("file", f"config/{ctx['section']}.yaml")
    ctx.setdefault("alt", ctx.get("label", key))
    ctx.setdefault("label", key)
    ctx.setdefault("subject", ctx["label"])
    return ctx


def svc_ctx(key: str, label: str, alt: str, env: str) -> Callable[[random.Random], Ctx]:
    """A subject that belongs to one service: ``label``/``alt``/``env`` may name ``{svc}`` and
    ``{NOUN}``."""

    def draw(r: random.Random) -> Ctx:
        noun, svc = service(r)
        names = {"svc": svc, "NOUN": noun.upper()}
        return setting(
            r,
            svc=svc,
            key=key,
            label=label.format(**names),
            alt=alt.format(**names),
            env=env.format(**names),
        )

    return draw


def num(lo: int, hi: int, step: int = 1) -> Callable[[random.Random, Ctx], Forms]:
    def draw(r: random.Random, ctx: Ctx) -> Forms:
        n = r.randrange(lo, hi, step)
        while n % 1000 == 0:  # 2000 or 5000 turn up in any session by chance
            n = r.randrange(lo, hi, step)
        return {"": str(n)}

    return draw


def fixed(label: str, key: str, **extra: str) -> Callable[[random.Random], Ctx]:
    return lambda r: setting(r, label=label, key=key, **extra)


def _money(r: random.Random, ctx: Ctx) -> Forms:
    amount = r.randrange(1_150, 48_000, 50)
    return {"": str(amount), "_usd": f"${amount:,}"}


def _date(r: random.Random, ctx: Ctx) -> Forms:
    day = a_date(r)
    return {"": day.isoformat(), "_day": ordinal(day.day), "_weekday": day.strftime("%A")}


def _person(r: random.Random, ctx: Ctx) -> Forms:
    return person(r)


def _host(r: random.Random, ctx: Ctx) -> Forms:
    return {"": f"{word(r)}-db-prod-{r.randint(2, 19)}"}


def _ticket(r: random.Random, ctx: Ctx) -> Forms:
    return {"": f"{r.choice(PROJECTS)}-{r.randint(1000, 99999)}"}


def _ticket_subject(r: random.Random) -> Ctx:
    _noun, svc = service(r)
    bug = f"{svc} {r.choice(SYMPTOMS)}"
    return setting(r, svc=svc, key="ticket", label=f"the ticket for the {bug}", bug=bug,
                   alt=f"the {bug} ticket", subject=bug)  # fmt: skip


def _feature_subject(r: random.Random) -> Ctx:
    feature = r.choice(FEATURES)
    return setting(r, key="flag", label=f"the {feature} flag", feature=feature, subject=feature)


def _project_subject(r: random.Random) -> Ctx:
    noun, svc = service(r)
    project = r.choice((f"{noun} migration", f"{svc} runbook", f"{noun} schema cleanup",
                        f"{svc} on-call rotation", f"{noun} rewrite"))  # fmt: skip
    slug = project.replace(" ", "_").replace("-", "_")
    return setting(r, key="owner", label=f"the owner of the {project}", project=project,
                   slug=slug, path=f"{noun}/", subject=project)  # fmt: skip


def _pkg_subject(r: random.Random) -> Ctx:
    pkg = word(r) + r.choice(("-client", "-sdk", "lib", "", "-py"))
    return setting(r, key=pkg, pkg=pkg, label=f"the {pkg} pin", alt=f"the {pkg} version",
                   section="dependencies", file="requirements.txt", subject=pkg)  # fmt: skip


def _partner_subject(key: str, label: str) -> Callable[[random.Random], Ctx]:
    def draw(r: random.Random) -> Ctx:
        partner = word(r).capitalize()
        return setting(r, key=key, partner=partner, label=label.format(partner=partner),
                       section=partner.lower(), subject=f"{partner} {key}")  # fmt: skip

    return draw


def _release_subject(r: random.Random) -> Ctx:
    release = f"{word(r).capitalize()} {r.randint(2, 9)}.{r.randint(0, 9)}"
    return setting(r, key="release_date", label=f"the {release} release date", release=release,
                   alt=f"the {release} ship date", section="release", subject=release)  # fmt: skip


FAMILIES: tuple[Family, ...] = (
    # -- numbers ---------------------------------------------------------------------------------
    Family(
        "service_timeout",
        "number",
        svc_ctx(
            "request_timeout_ms",
            "the {svc} request timeout",
            "{svc}'s client timeout",
            "{NOUN}_TIMEOUT_MS",
        ),
        num(1250, 9750, 250),
        (
            ("yaml", "{svc}:\n  request_timeout_ms: {v}\n  retries: {n}"),
            ("sentence", "The {svc} client times out after {v} ms; slower calls are retried."),
            ("log", "{ts} WARN  {svc} upstream timed out after {v}ms (request_timeout_ms={v})"),
            ("chat", "fyi {svc} timeout is {v}ms in staging too"),
            ("env", "{env}={v}"),
        ),
        SETTING_WAYS,
        pairable=True,
    ),
    Family(
        "admin_port",
        "number",
        svc_ctx(
            "admin_port",
            "the {svc} admin port",
            "the port {svc}'s admin API listens on",
            "{NOUN}_ADMIN_PORT",
        ),
        num(10000, 39999),
        (
            ("log", "{ts} INFO  {svc}: admin API listening on http://0.0.0.0:{v}"),
            ("keyvalue", "admin_port: {v}"),
            ("yaml", 'ports:\n  - "{v}:{v}"  # {svc} admin'),
            (
                "stacktrace",
                "requests.exceptions.ConnectionError: HTTPConnectionPool("
                "host='localhost', port={v}): Max retries exceeded with url: /admin/health",
            ),
            ("sentence", "Noted - I'll use port {v} for the {svc} admin API from now on."),
        ),
        SETTING_WAYS,
        pairable=True,
    ),
    Family(
        "pool_size",
        "number",
        svc_ctx(
            "max_connections",
            "the {svc} connection pool size",
            "the connection cap for {svc}",
            "MAX_CONN",
        ),
        num(120, 960, 8),
        (
            ("env", "MAX_CONN={v}"),
            ("ini", "[pgbouncer]\nmax_client_conn = {v}\ndefault_pool_size = {n}0"),
            ("sentence", "{svc} is allowed {v} database connections at most."),
            ("json", '{{"pool": {{"max_connections": {v}, "idle_timeout_s": {n}0}}}}'),
            ("diff", "@@ -{ln},1 +{ln},1 @@\n-max_connections = {n}0\n+max_connections = {v}"),
        ),
        SETTING_WAYS,
    ),
    Family(
        "batch_size",
        "number",
        svc_ctx(
            "batch_size",
            "the {svc} backfill batch size",
            "rows per batch in the backfill",
            "{NOUN}_BATCH_SIZE",
        ),
        num(120, 2040, 24),
        (
            ("code", "BATCH_SIZE = {v}  # larger batches OOM the {svc} worker"),
            (
                "cli_output",
                "$ python -m {svc}.backfill --batch-size {v} --dry-run\nwould process {size} rows",
            ),
            ("sentence", "Use batches of {v} rows for the {svc} backfill."),
            ("keyvalue", "batch_size={v}"),
        ),
        SETTING_WAYS,
    ),
    Family(
        "cache_ttl",
        "number",
        svc_ctx(
            "ttl_seconds",
            "the {svc} cache TTL",
            "how long {svc} caches responses",
            "{NOUN}_CACHE_TTL",
        ),
        num(95, 7200, 15),
        (
            ("ini", "[cache]\nttl_seconds = {v}"),
            ("sentence", "Cached {svc} responses live for {v} seconds."),
            (
                "http_header",
                "HTTP/1.1 200 OK\nCache-Control: public, max-age={v}\nX-Served-By: {svc}",
            ),
            ("json", '{{"cache": {{"backend": "redis", "ttl": {v}}}}}'),
        ),
        SETTING_WAYS,
    ),
    Family(
        "disk_quota",
        "number",
        lambda r: setting(
            r,
            vol=(vol := f"{word(r)}-scratch"),
            key="quota_gib",
            label=f"the {vol} quota",
            alt=f"the size limit on {vol}",
            section="volumes",
            subject=vol,
        ),
        lambda r, ctx: {"": (n := str(r.randrange(40, 1800))), "_u": f"{n} GiB"},
        (
            ("sentence", "The {vol} volume has a {v_u} quota."),
            ("yaml", "volumes:\n  {vol}:\n    quota_gib: {v}"),
            ("chat", "{vol} tops out at {v_u}, clean up as you go"),
        ),
        SETTING_WAYS,
    ),
    Family(
        "topic_partitions",
        "number",
        lambda r: setting(
            r,
            topic=(t := f"{word(r)}.{r.choice(NOUNS)}.events"),
            key="partitions",
            label=f"the partition count of {t}",
            alt=f"how many partitions {t} has",
            section="kafka",
            subject=t,
        ),
        num(24, 384, 6),
        (
            (
                "cli_output",
                "$ kafka-topics --describe --topic {topic}\n"
                "Topic: {topic}\tPartitionCount: {v}\tReplicationFactor: 3",
            ),
            ("sentence", "{topic} has {v} partitions; never run more consumers than that."),
            ("keyvalue", "partitions={v}"),
        ),
        SETTING_WAYS,
    ),
    # -- constraints -----------------------------------------------------------------------------
    Family(
        "reply_word_limit",
        "constraint",
        fixed("the reply length limit", "max_reply_words", alt="the word cap on answers"),
        num(90, 260, 10),
        (
            ("chat", "keep replies under {v} words pls"),
            ("sentence", "Please keep every answer to {v} words or fewer."),
            ("bullet", "- Replies: {v} words max, no preamble"),
            ("markdown_heading", "## Style\nAnswers stay under {v} words."),
        ),
        PROSE_WAYS,
        (
            (
                "relaxed_limit",
                "chat",
                "you can go up to {new} words now, the short ones lose detail",
            ),
        ),
    ),
    Family(
        "coverage_floor",
        "constraint",
        fixed(
            "the coverage floor",
            "fail_under",
            alt="minimum coverage on main",
            section="tool.coverage.report",
            file="pyproject.toml",
        ),
        lambda r, ctx: {"": f"{r.randint(70, 95)}.{r.choice(('25', '5', '75', '4', '6'))}"},
        (
            ("toml", "[tool.coverage.report]\nfail_under = {v}"),
            (
                "test_failure",
                "FAIL Required test coverage of {v}% not reached. Total coverage: {pct}%",
            ),
            ("sentence", "Coverage must not drop below {v}% on main."),
            ("cli_output", "$ pytest --cov=src --cov-fail-under={v} -q"),
        ),
        SETTING_WAYS,
    ),
    Family(
        "memory_limit",
        "constraint",
        svc_ctx(
            "memory",
            "the {svc} memory limit",
            "the memory cap on the {svc} pod",
            "{NOUN}_MEMORY_LIMIT",
        ),
        lambda r, ctx: {"": f"{r.randrange(384, 6144, 64)}Mi"},
        (
            ("yaml", "resources:\n  limits:\n    memory: {v}\n    cpu: {cpu}m"),
            ("log", "{ts} ERROR {svc} OOMKilled: container exceeded memory limit {v}"),
            ("chat", "the {svc} pod is capped at {v}, don't load the whole file"),
            ("json", '{{"limits": {{"memory": "{v}", "cpu": "{cpu}m"}}}}'),
        ),
        SETTING_WAYS,
    ),
    Family(
        "partner_rate_limit",
        "constraint",
        _partner_subject("requests_per_minute", "the {partner} rate limit"),
        num(300, 5400, 60),
        (
            (
                "http_header",
                "HTTP/1.1 429 Too Many Requests\nX-RateLimit-Limit: {v}\n"
                "X-RateLimit-Remaining: 0\nRetry-After: {n}",
            ),
            ("sentence", "The {partner} API allows {v} requests per minute per key."),
            ("yaml", "{section}:\n  rate_limit:\n    requests_per_minute: {v}"),
            ("chat", "{partner} caps us at {v} rpm"),
        ),
        SETTING_WAYS,
    ),
    Family(
        "latency_budget",
        "constraint",
        svc_ctx("p99_ms", "the {svc} p99 budget", "the latency ceiling for {svc}", "{NOUN}_P99_MS"),
        num(120, 950, 5),
        (
            ("sentence", "p99 for {svc} must stay under {v} ms."),
            ("table", "| service | p99 budget |\n|---|---|\n| {svc} | {v} ms |"),
            ("comment", "// SLO: keep {svc} p99 under {v}ms or the dashboard pages"),
            ("bullet", "- {svc} p99 budget: {v} ms"),
        ),
        SETTING_WAYS,
    ),
    Family(
        "spend_cap",
        "constraint",
        lambda r: setting(
            r,
            team=(t := f"{word(r)}-{r.choice(('ml', 'data', 'web'))}"),
            key="monthly_cap_usd",
            label=f"the {t} spend cap",
            alt=f"the monthly budget for {t}",
            section="budget",
            subject=t,
        ),
        _money,
        (
            ("sentence", "Monthly cloud spend for the {team} account is capped at {v_usd}."),
            ("yaml", "budget:\n  account: {team}\n  monthly_cap_usd: {v}"),
            ("chat", "we can't go over {v_usd}/mo on {team}"),
        ),
        SETTING_WAYS,
    ),
    # -- prohibitions ----------------------------------------------------------------------------
    Family(
        "no_migrations_host",
        "prohibition",
        fixed("the no-migrations host", "protected_host", alt="the host migrations must not touch"),
        _host,
        (
            ("sentence", "Never run migrations on {v}."),
            ("chat", "do NOT run migrations against {v}, it's the live primary"),
            ("comment", "# WARNING: {v} is prod. No migrations here, use the staging replica."),
            ("log", "{ts} ERROR migrate: refusing to run against protected host {v}"),
            ("bullet", "- no schema migrations on {v}, ever"),
        ),
        ("old_declared_dead", "marker_word"),
        (
            (
                "failover",
                "chat",
                "after last night's failover the primary is {new} - same rule, "
                "keep migrations off it",
            ),
            (
                "decommissioned",
                "sentence",
                "{old} was decommissioned; the protected primary is {new} now.",
            ),
            (
                "failover_log",
                "log",
                "{ts} WARN  patroni: promoted {new} to primary (migrations locked)",
            ),
        ),
    ),
    Family(
        "no_force_push",
        "prohibition",
        fixed(
            "the protected release branch", "protected_branch", alt="the branch nobody force-pushes"
        ),
        lambda r, ctx: {"": f"release/2027.{r.randint(1, 12):02d}-{word(r)}"},
        (
            ("sentence", "Never force-push to {v}."),
            ("chat", "pls don't rewrite history on {v}, others are on it"),
            ("yaml", "protected_branches:\n  - name: {v}\n    allow_force_push: false"),
            (
                "cli_output",
                "$ git push --force origin {v}\nremote: error: GH006: Protected branch "
                "update failed for refs/heads/{v}.",
            ),
        ),
        ("marker_word",),
        (
            (
                "new_release_cut",
                "sentence",
                "The release branch is {new} now; it gets the same no-force-push rule.",
            ),
            ("cut_in_passing", "chat", "cut {new} this morning, that's the one to keep clean"),
        ),
    ),
    Family(
        "no_edit_generated",
        "prohibition",
        lambda r: setting(
            r,
            pkg=(p := word(r)),
            key="generated",
            label=f"the generated {p} module",
            subject=f"{p} generated code",
        ),
        lambda r, ctx: {"": f"src/{ctx['pkg']}/_generated/{word(r)}_pb2.py"},
        (
            ("comment", "# DO NOT EDIT: {v} is generated by buf, regenerate instead"),
            ("sentence", "Don't hand-edit {v}; it is generated."),
            ("chat", "leave {v} alone pls, codegen owns it"),
        ),
        (),
        (("codegen_moved", "chat", "codegen writes {new} now, still don't hand-edit it"),),
    ),
    Family(
        "banned_dependency",
        "prohibition",
        fixed("the banned package", "banned"),
        lambda r, ctx: {"": word(r) + r.choice(("kit", "lib", "io", "x", "fu"))},
        (
            ("sentence", "Don't add {v} as a dependency, legal hasn't cleared it."),
            ("chat", "no {v} pls, licence is AGPL"),
            ("toml", "[tool.deptry]\n# banned: {v} (license review pending)\nignore = []"),
        ),
    ),
    Family(
        "no_test_mail_domain",
        "prohibition",
        fixed("the domain test mail must never reach", "blocked_domains"),
        lambda r, ctx: {"": f"{word(r)}-{r.choice(('partners', 'clients', 'group'))}.com"},
        (
            ("sentence", "Never send test emails to addresses at {v}."),
            ("yaml", "mail:\n  blocked_domains:\n    - {v}"),
            ("chat", "careful, {v} addresses are real customers - never in test mail"),
        ),
    ),
    Family(
        "no_dev_writes_bucket",
        "prohibition",
        fixed(
            "the bucket dev machines must not write to",
            "readonly_bucket",
            alt="the read-only exports bucket",
        ),
        lambda r, ctx: {
            "": f"s3://{(b := word(r) + '-prod-' + r.choice(('ledger', 'exports', 'archive')))}",
            "_b": b,
        },
        (
            ("sentence", "Do not write to {v} from dev machines."),
            (
                "json",
                '{{"Effect": "Deny", "Action": "s3:PutObject", '
                '"Resource": "arn:aws:s3:::{v_b}/*"}}',
            ),
            ("chat", "{v} is read-only for us, never upload there"),
        ),
        ("marker_word",),
        (("bucket_moved", "chat", "exports moved to {new}, same rule: read-only from dev"),),
    ),
    Family(
        "never_log_header",
        "prohibition",
        fixed("the header that must never be logged", "redact_header"),
        lambda r, ctx: {"": f"X-{word(r).capitalize()}-Account-Ref"},
        (
            ("sentence", "Never log the {v} header; it identifies customers."),
            ("code", 'REDACT = {{"{v}"}}  # compliance: must never reach the logs'),
            ("chat", "strip {v} before logging, compliance thing"),
        ),
    ),
    # -- preferences -----------------------------------------------------------------------------
    Family(
        "display_timezone",
        "preference",
        fixed(
            "the display timezone",
            "display_tz",
            alt="the timezone for times in reports",
            env="TZ",
            section="ui",
        ),
        lambda r, ctx: {"": r.choice(TIMEZONES)},
        (
            ("chat", "show times in {v} please, not UTC"),
            ("sentence", "I'd prefer all timestamps in {v}."),
            ("keyvalue", "display_tz: {v}"),
            ("env", "TZ={v}"),
        ),
        (*PROSE_WAYS, "env_override"),
        (("moved_timezone", "chat", "I moved, {new} for times now"),),
    ),
    Family(
        "notify_channel",
        "preference",
        fixed(
            "the notification channel",
            "slack_channel",
            alt="where build notifications go",
            section="notify",
        ),
        lambda r, ctx: {"": f"#{word(r)}-{r.choice(('deploys', 'alerts', 'releases', 'ops'))}"},
        (
            ("chat", "ping me in {v} rather than DM"),
            ("sentence", "Post build notifications to {v}."),
            ("yaml", 'notify:\n  slack_channel: "{v}"'),
        ),
        ("names_new_only", "later_yaml", "agent_note", "marker_word", "reply_to_question"),
        (("channel_archived", "chat", "{old} got archived, use {new}"),),
    ),
    Family(
        "default_region",
        "preference",
        fixed(
            "the default region",
            "default_region",
            alt="where new buckets go",
            env="AWS_DEFAULT_REGION",
            section="aws",
        ),
        lambda r, ctx: {"": r.choice(REGIONS)},
        (
            ("sentence", "We prefer {v} for anything new."),
            ("chat", "new buckets in {v} if you can"),
            ("toml", '[aws]\ndefault_region = "{v}"'),
            ("env", "AWS_DEFAULT_REGION={v}"),
        ),
        (*PROSE_WAYS, "env_override", "later_ini"),
    ),
    Family(
        "commit_prefix",
        "preference",
        fixed("the commit prefix", "commit_prefix"),
        lambda r, ctx: {"": f"[{word(r)}-core]"},
        (
            ("chat", "prefix commit subjects with {v} pls"),
            ("git_log", "{sha7} {v} fix flaky retry test\n{sha7b} {v} bump deps"),
            ("bullet", "- commit subjects start with `{v}`"),
        ),
    ),
    Family(
        "export_date_format",
        "preference",
        fixed("the export date format", "date_format", alt="how dates look in exports"),
        lambda r, ctx: {"": r.choice(DATE_FORMATS)},
        (
            ("chat", "dates as {v} in the report pls"),
            ("code", 'DATE_FMT = "{v}"  # what finance expects'),
            ("sentence", "Format dates in exports as {v}."),
        ),
        ("names_new_only", "old_declared_dead", "agent_note", "marker_word"),
        (("finance_again", "chat", "finance came back, they want {new}"),),
    ),
    Family(
        "default_locale",
        "preference",
        fixed("the default locale", "defaultLocale", alt="the UI's fallback language"),
        lambda r, ctx: {"": r.choice(LOCALES)},
        (
            ("chat", "UI strings default to {v} for now"),
            ("json", '{{"defaultLocale": "{v}", "fallback": "en"}}'),
            ("sentence", "The default locale should be {v}."),
        ),
        ("names_new_only", "later_json", "agent_note", "reply_to_question", "marker_word"),
    ),
    # -- identifiers -----------------------------------------------------------------------------
    Family(
        "bug_ticket",
        "identifier",
        _ticket_subject,
        _ticket,
        (
            ("sentence", "The {bug} is tracked as {v}."),
            ("chat", "bug for the {bug} -> {v}"),
            (
                "git_log",
                "commit {prev}\nAuthor: {person} <{user}@{org}.io>\n\n"
                "    Fix {bug}\n\n    Refs: {v}",
            ),
            (
                "table",
                "| ticket | summary | status |\n|---|---|---|\n| {v} | {bug} | In Progress |",
            ),
            ("url", "{bug}: see https://{org}.atlassian.net/browse/{v}"),
        ),
        ("names_new_only", "reply_to_question", "agent_note", "marker_word"),
        (("closed_as_dup", "chat", "closed {old} as a dup, the {bug} lives in {new}"),),
        pairable=True,
    ),
    Family(
        "incident",
        "identifier",
        lambda r: setting(r, svc=service(r)[1], key="incident", subject="incident"),
        lambda r, ctx: {"": f"INC-{r.randint(10000, 99999)}"},
        (
            ("log", "{ts} PAGE  sev2 opened {v}: {svc} error rate above 5%"),
            ("sentence", "This is all part of incident {v}."),
            ("chat", "linking everything to {v}"),
        ),
    ),
    Family(
        "failing_request",
        "identifier",
        lambda r: setting(r, svc=service(r)[1], key="request_id", subject="failing request"),
        lambda r, ctx: {"": f"req_{hexs(r, 16)}"},
        (
            ("log", "{ts} ERROR {svc} request_id={v} status=500 upstream reset"),
            ("json", '{{"error": "internal", "request_id": "{v}"}}'),
            ("chat", "failing request is {v}, can you trace it"),
        ),
    ),
    Family(
        "last_green_sha",
        "identifier",
        fixed("the last green build", "last_green", alt="the newest passing commit on main"),
        lambda r, ctx: {"": hexs(r, 10)},
        (
            ("git_log", "{v} (tag: last-green) Merge pull request #{pr} from {user}/{branch}"),
            ("sentence", "The last green build on main is {v}."),
            ("chat", "bisect from {v}, that one passed"),
        ),
        ("names_new_only", "reply_to_question", "marker_word"),
        (("ci_green_again", "log", "{ts} main #{pr} passed at {new}"),),
    ),
    Family(
        "feature_flag",
        "identifier",
        _feature_subject,
        lambda r, ctx: {"": f"{word(r)}_{r.choice(NOUNS)}_v{r.randint(2, 9)}"},
        (
            ("code", 'if flags.enabled("{v}"):  # gates the {feature}'),
            ("sentence", "The {feature} is behind the {v} flag."),
            ("yaml", "flags:\n  {v}:\n    default: false\n    owner: {user}"),
            ("chat", "flag for {feature} is {v}"),
        ),
        ("names_new_only", "marker_word"),
        (("flag_renamed", "chat", "flag got renamed, it's {new} for the {feature}"),),
        pairable=True,
    ),
    Family(
        "gcp_project",
        "identifier",
        fixed(
            "the GCP project",
            "project",
            alt="the cloud project everything runs in",
            env="GOOGLE_CLOUD_PROJECT",
            section="core",
        ),
        lambda r, ctx: {"": f"{word(r)}-prod-{r.randint(100000, 999999)}"},
        (
            ("cli_output", "$ gcloud config get-value project\n{v}"),
            ("sentence", "Everything runs in the GCP project {v}."),
            ("env", "GOOGLE_CLOUD_PROJECT={v}"),
        ),
        ("env_override", "names_new_only", "marker_word", "cli_readback"),
    ),
    Family(
        "fix_pull_request",
        "identifier",
        lambda r: setting(
            r, key="pr", label=f"the PR for the {(s := r.choice(SYMPTOMS))}", symptom=s, subject=s
        ),
        lambda r, ctx: {"": f"#{r.randint(10000, 99999)}"},
        (
            ("chat", "the fix for the {symptom} is in {v}, needs one more review"),
            ("git_log", "{sha7} Merge pull request {v} from {user}/{branch}\n\n    Fix {symptom}"),
        ),
        ("names_new_only", "agent_note"),
        (("reopened_as", "chat", "that PR got closed, reopened as {new}"),),
    ),
    Family(
        "staging_image",
        "identifier",
        lambda r: setting(
            r,
            svc=(s := service(r)[1]),
            key="image",
            label=f"the {s} staging image",
            section=s,
            subject=f"{s} image",
        ),
        lambda r, ctx: {
            "": f"registry.{word(r)}.io/{ctx['svc']}:2027.{r.randint(1, 12):02d}-{hexs(r, 7)}"
        },
        (
            ("yaml", "containers:\n  - name: {svc}\n    image: {v}"),
            (
                "cli_output",
                "$ docker pull {v}\nDigest: sha256:{prev}{prev}\n"
                "Status: Downloaded newer image for {v}",
            ),
            ("sentence", "Staging runs {v}."),
        ),
        ("later_yaml", "config_diff", "names_new_only", "marker_word"),
        (("rolled_log", "log", "{ts} INFO  deploy: rolled {svc} to {new}"),),
    ),
    Family(
        "event_topic",
        "identifier",
        lambda r: setting(
            r,
            noun=(n := r.choice(NOUNS)),
            key="topic",
            label=f"the {n} events topic",
            section="kafka",
            subject=f"{n} topic",
        ),
        lambda r, ctx: {"": f"{word(r)}.{ctx['noun']}.finalized.v{r.randint(2, 9)}"},
        (
            ("sentence", "{noun} events go to the topic {v}."),
            ("keyvalue", "topic={v}"),
            ("log", "{ts} INFO  consumer subscribed to {v} (group {org}-{n})"),
        ),
        SETTING_WAYS,
    ),
    Family(
        "repro_customer",
        "identifier",
        lambda r: setting(r, key="customer", subject="repro customer"),
        lambda r, ctx: {"": f"cus_{alnum(r, 14)}"},
        (
            ("chat", "repro with customer {v}, they hit it daily"),
            ("json", '{{"customer": "{v}", "plan": "team", "status": "past_due"}}'),
            ("sql", "SELECT * FROM invoices WHERE customer_id = '{v}' ORDER BY created_at DESC;"),
        ),
    ),
    Family(
        "reporting_db",
        "identifier",
        fixed(
            "the reporting database",
            "database",
            alt="the database the reports read",
            env="REPORTING_DB",
            section="reporting",
        ),
        lambda r, ctx: {"": f"{word(r)}_{r.choice(NOUNS)}_prod"},
        (
            ("env", "DATABASE_URL=postgresql://app@{org}-db:5432/{v}"),
            ("sentence", "The reporting database is {v}."),
            ("sql", '\\c {v}\nYou are now connected to database "{v}" as user "app".'),
        ),
        ("names_new_only", "env_override", "marker_word"),
        (("sql_rename", "sql", "ALTER DATABASE {old} RENAME TO {new};"),),
    ),
    # -- decisions -------------------------------------------------------------------------------
    Family(
        "release_date",
        "decision",
        _release_subject,
        _date,
        (
            ("yaml", "release:\n  name: {release}\n  date: {v}"),
            ("sentence", "We decided to ship {release} on {v}."),
            ("markdown_heading", "## {release} - release {v}"),
            ("table", "| milestone | date |\n|---|---|\n| {release} GA | {v} |"),
        ),
        ("names_new_only", "reply_to_question", "marker_word", "agent_note"),
        (
            ("ship_day_only", "chat", "let's ship {release} on the {new_day} after all"),
            ("slips_to", "chat", "{release} goes out {new}, QA needs the extra days"),
        ),
    ),
    Family(
        "cutover_date",
        "decision",
        lambda r: setting(
            r,
            svc=(s := service(r)[1]),
            key="cutover",
            label=f"the {s} cutover",
            section=s,
            subject=f"{s} cutover",
        ),
        _date,
        (
            ("sentence", "The {svc} cutover is set for {v}."),
            ("bullet", "- [ ] {svc} cutover: {v} (window 02:00-04:00)"),
            ("chat", "cutover for {svc} on {v}, ok?"),
        ),
        ("names_new_only", "marker_word"),
        (("moved_to_weekday", "chat", "moved the {svc} cutover to {new_weekday} the {new_day}"),),
    ),
    Family(
        "node_pool",
        "decision",
        lambda r: setting(
            r,
            svc=(s := service(r)[1]),
            key="pool",
            label=f"the {s} node pool",
            alt=f"where the {s} jobs run",
            section="nodeSelector",
            subject=f"{s} pool",
        ),
        lambda r, ctx: {"": f"{r.choice(('spot', 'arm64', 'highmem', 'batch'))}-{word(r)}"},
        (
            ("sentence", "Decision: {svc} jobs run on the {v} node pool."),
            ("yaml", "nodeSelector:\n  pool: {v}"),
            ("chat", "we're putting {svc} on {v}, cheaper"),
        ),
        (
            "names_new_only",
            "old_declared_dead",
            "later_yaml",
            "agent_note",
            "reply_to_question",
            "marker_word",
        ),
    ),
    Family(
        "table_schema",
        "decision",
        fixed("the schema for new tables", "search_path", alt="where new tables live"),
        lambda r, ctx: {"": f"{word(r)}_v{r.randint(2, 9)}"},
        (
            ("sql", "CREATE SCHEMA IF NOT EXISTS {v};\nSET search_path TO {v};"),
            ("sentence", "We agreed new tables go in the {v} schema."),
            ("chat", "schema is {v}, decided in standup"),
        ),
        ("names_new_only", "agent_note", "marker_word", "old_declared_dead"),
    ),
    Family(
        "batch_endpoint",
        "decision",
        lambda r: setting(
            r,
            noun=(n := r.choice(NOUNS)),
            key="route",
            label=f"the {n} batch endpoint",
            subject=f"{n} endpoint",
        ),
        lambda r, ctx: {"": f"/v{r.randint(2, 5)}/{ctx['noun']}s/{word(r)}:batchGet"},
        (
            ("sentence", "We settled on {v} for the new {noun} endpoint."),
            (
                "code",
                '@router.post("{v}")\n'
                "async def batch_{noun}(req: BatchRequest) -> BatchResponse: ...",
            ),
            (
                "http_header",
                "POST {v} HTTP/1.1\nHost: api.{org}.io\nContent-Type: application/json",
            ),
        ),
        ("names_new_only", "agent_note", "marker_word"),
    ),
    Family(
        "dr_region",
        "decision",
        fixed("the DR region", "dr_region", alt="where we fail over to", section="dr"),
        lambda r, ctx: {"": r.choice(REGIONS)},
        (
            ("sentence", "The DR region is {v}."),
            ("table", "| role | region |\n|---|---|\n| primary | us-east-2 |\n| dr | {v} |"),
            ("chat", "DR goes to {v}, signed off"),
        ),
        ("names_new_only", "old_declared_dead", "marker_word", "later_table"),
    ),
    # -- paths -----------------------------------------------------------------------------------
    Family(
        "log_file",
        "path",
        svc_ctx("log_file", "the {svc} log file", "where {svc} logs", "{NOUN}_LOG_FILE"),
        lambda r, ctx: {"": f"/var/log/{ctx['svc']}/{word(r)}.log"},
        (
            ("sentence", "{svc} writes its log to {v}."),
            (
                "stacktrace",
                "Traceback (most recent call last):\n"
                '  File "/app/{svc}/main.py", line {ln}, in setup\n'
                "PermissionError: [Errno 13] Permission denied: '{v}'",
            ),
            ("yaml", "logging:\n  file: {v}\n  level: INFO"),
            ("cli_output", "$ tail -n 2 {v}\n{ts} INFO started\n{ts2} INFO ready"),
        ),
        SETTING_WAYS,
        pairable=True,
    ),
    Family(
        "config_file",
        "path",
        svc_ctx(
            "config", "the {svc} config file", "where {svc} reads its settings", "{NOUN}_CONFIG"
        ),
        lambda r, ctx: {"": f"/etc/{ctx['svc']}/{word(r)}.toml"},
        (
            ("log", "{ts} INFO  {svc}: loading config from {v}"),
            ("chat", "{svc} config lives at {v} on the boxes"),
            ("env", "{env}={v}"),
        ),
        ("env_override", "names_new_only", "marker_word", "later_log_line"),
        (("loading_log", "log", "{ts} INFO  {svc}: loading config from {new}"),),
    ),
    Family(
        "data_dir",
        "path",
        svc_ctx("data_dir", "the {svc} data directory", "{svc}'s scratch space", "DATA_DIR"),
        lambda r, ctx: {"": f"/mnt/{word(r)}/{ctx['svc']}-data"},
        (
            ("env", "DATA_DIR={v}"),
            ("sentence", "Scratch data for {svc} goes under {v}; it is wiped nightly."),
            ("ini", "[storage]\ndata_dir = {v}"),
        ),
        SETTING_WAYS,
    ),
    Family(
        "golden_file",
        "path",
        lambda r: setting(
            r,
            noun=(n := r.choice(NOUNS)),
            key="golden",
            label=f"the {n} golden file",
            subject=f"{n} golden file",
        ),
        lambda r, ctx: {"": f"tests/fixtures/{word(r)}/{ctx['noun']}_{r.randint(2, 99)}.json"},
        (
            (
                "test_failure",
                "FAILED tests/test_{noun}.py::test_roundtrip - FileNotFoundError: "
                "[Errno 2] No such file or directory: '{v}'",
            ),
            ("chat", "use {v} as the golden file for {noun}"),
            ("sentence", "The golden file for the {noun} parser is {v}."),
        ),
        PROSE_WAYS,
    ),
    Family(
        "daemon_socket",
        "path",
        svc_ctx("socket", "the {svc} socket", "the unix socket {svc} listens on", "{NOUN}_SOCKET"),
        lambda r, ctx: {"": f"/run/{ctx['svc']}/{word(r)}.sock"},
        (
            ("keyvalue", "socket: unix://{v}"),
            ("log", "{ts} INFO  {svc} bound to unix://{v}"),
            ("sentence", "Talk to {svc} over {v}."),
        ),
        SETTING_WAYS,
    ),
    Family(
        "post_deploy_script",
        "path",
        fixed("the post-deploy script", "post_deploy", alt="what runs after a deploy"),
        lambda r, ctx: {"": f"scripts/{word(r)}_{r.choice(('backfill', 'reindex', 'rotate'))}.py"},
        (
            ("chat", "run {v} after the deploy, not before"),
            ("bullet", "- post-deploy: `python {v} --env prod`"),
            ("cli_output", "$ python {v} --dry-run\nwould touch {size} rows"),
        ),
        ("names_new_only", "agent_note", "marker_word", "old_declared_dead"),
    ),
    Family(
        "backup_target",
        "path",
        svc_ctx("target", "the {svc} backup location", "where {svc} dumps go", "{NOUN}_BACKUP_URL"),
        lambda r, ctx: {"": f"s3://{word(r)}-backups/{ctx['svc']}/"},
        (
            ("sentence", "Nightly {svc} dumps land in {v}."),
            ("yaml", "backup:\n  target: {v}\n  retain_days: {n}0"),
            ("cli_output", "$ aws s3 ls {v}\n{date} 00:00:0{n} {size} dump.sql.gz"),
        ),
        SETTING_WAYS,
    ),
    # -- versions --------------------------------------------------------------------------------
    Family(
        "dependency_pin",
        "version",
        _pkg_subject,
        lambda r, ctx: {"": version(r)},
        (
            ("requirements", "{pkg}=={v}"),
            ("chat", "pin {pkg} to {v}, newer breaks the build"),
            ("toml", '[tool.poetry.dependencies]\n{pkg} = "{v}"'),
            ("sentence", "We stay on {pkg} {v} until the API change is handled."),
        ),
        ("names_new_only", "reply_to_question", "marker_word", "agent_note"),
        (
            ("pin_declared_dead", "chat", "the {old} pin is dead, use {new}"),
            ("bump_commit", "git_log", "{sha7} Bump {pkg} from {old} to {new}"),
            ("requirements_diff", "diff", "-{pkg}=={old}\n+{pkg}=={new}"),
        ),
        pairable=True,
    ),
    Family(
        "node_version",
        "version",
        fixed(
            "the Node version",
            "node",
            alt="the Node the frontend builds with",
            file=".nvmrc",
            section="engines",
        ),
        lambda r, ctx: {"": f"{r.randint(18, 25)}.{r.randint(10, 29)}.{r.randint(1, 19)}"},
        (
            ("keyvalue", ".nvmrc: {v}"),
            ("cli_output", "$ node --version\nv{v}"),
            ("sentence", "The frontend builds with Node {v}."),
        ),
        ("names_new_only", "marker_word", "config_diff"),
        (("node_readback", "cli_output", "$ nvm use\nNow using node v{new} (npm v10.{n}.0)"),),
    ),
    Family(
        "partner_api_version",
        "version",
        _partner_subject("api_version", "the {partner} API version"),
        lambda r, ctx: {"": f"{a_date(r).isoformat()}.{word(r)}"},
        (
            ("http_header", "GET /v1/charges HTTP/1.1\n{partner}-Version: {v}"),
            ("sentence", "Pin the {partner} API version to {v}."),
            ("code", 'client = {partner}Client(api_version="{v}")'),
        ),
        ("names_new_only", "marker_word"),
        (("header_later", "http_header", "HTTP/1.1 200 OK\n{partner}-Version: {new}"),),
    ),
    Family(
        "migration_head",
        "version",
        fixed("the staging migration head", "alembic_head", alt="the alembic revision on staging"),
        lambda r, ctx: {"": hexs(r, 12)},
        (
            ("cli_output", "$ alembic current\n{v} (head)"),
            ("sentence", "The migration head on staging is {v}."),
            (
                "log",
                "{ts} INFO  [alembic.runtime.migration] Running upgrade {prev} -> {v}, add index",
            ),
        ),
        ("names_new_only",),
        (
            (
                "upgrade_log",
                "log",
                "{ts} INFO  [alembic.runtime.migration] Running upgrade {old} -> {new}, backfill",
            ),
            ("current_readback", "cli_output", "$ alembic current\n{new} (head)"),
        ),
    ),
    Family(
        "prod_version",
        "version",
        lambda r: setting(
            r,
            svc=(s := service(r)[1]),
            key="version",
            label=f"the {s} prod version",
            section=s,
            subject=f"{s} prod version",
        ),
        lambda r, ctx: {"": f"v{version(r)}"},
        (
            ("log", "{ts} INFO  deploy: {svc} {v} is live in prod"),
            ("table", "| service | version | env |\n|---|---|---|\n| {svc} | {v} | prod |"),
            ("chat", "prod is on {v} for {svc}"),
        ),
        ("names_new_only", "reply_to_question", "marker_word"),
        (("rollback_log", "log", "{ts} WARN  deploy: {svc} rolled back to {new}"),),
    ),
    # -- owners ----------------------------------------------------------------------------------
    Family(
        "project_owner",
        "owner",
        _project_subject,
        _person,
        (
            ("sentence", "{v_full} owns the {project}."),
            ("chat", "{v} is on the {project}, ask there"),
            ("table", "| area | owner |\n|---|---|\n| {project} | {v_handle} |"),
            ("yaml", "owners:\n  {slug}: {v_handle}"),
            ("comment", "# owner: {v_handle} ({project})"),
        ),
        ("reply_to_question", "marker_word"),
        (
            ("ownership_in_passing", "chat", "{new} has the {project} now"),
            (
                "picked_up",
                "sentence",
                "{new_full} picked up the {project} this sprint, so route questions there.",
            ),
            ("covering", "chat", "{old} is out until March, {new} covers the {project}"),
            ("codeowners", "comment", "# CODEOWNERS\n/{path} {new_handle}"),
        ),
        pairable=True,
    ),
    Family(
        "on_call",
        "owner",
        lambda r: setting(
            r,
            svc=(s := service(r)[1]),
            key="oncall",
            label=f"{s} on-call",
            sched=f"{s}-primary",
            subject=f"{s} on-call",
        ),
        _person,
        (
            ("chat", "on-call for {svc} this week: {v_handle}"),
            ("cli_output", "$ pd oncall --schedule {sched}\n{v_full}  until {date} 09:00"),
            ("sentence", "{v} is on call for {svc} until Monday."),
        ),
        ("reply_to_question",),
        (
            ("swapped", "chat", "swapped {svc} on-call with {new}"),
            ("pager_log", "log", "{ts} PAGE  {svc}: escalated to {new_handle} ({sched})"),
        ),
    ),
    Family(
        "required_approver",
        "owner",
        lambda r: setting(
            r,
            path=(p := f"{r.choice(NOUNS)}/migrations/"),
            key="approver",
            label=f"the sign-off for {p}",
            subject=f"approver {p}",
        ),
        _person,
        (
            ("sentence", "{v_full} has to sign off on anything touching {path}."),
            ("comment", "# approvals: {v_handle} required for changes under {path}"),
            ("chat", "get {v} to approve if you touch {path}"),
        ),
        ("marker_word",),
        (("approver_swap", "chat", "{new} does the sign-off for {path} now"),),
    ),
    Family(
        "partner_contact",
        "owner",
        _partner_subject("contact", "the {partner} contact"),
        lambda r, ctx: {
            "": f"{r.choice(FIRST).lower()}.{r.choice(LAST).lower()}@{ctx['partner'].lower()}.io"
        },
        (
            ("sentence", "Questions about the {partner} contract go to {v}."),
            ("http_header", "From: billing@{org}.io\nTo: {v}\nSubject: {partner} renewal"),
            ("chat", "{partner} contact is {v}"),
        ),
        ("names_new_only", "marker_word"),
        (("new_contact", "chat", "new {partner} contact: {new}"),),
    ),
)


# -- one set --------------------------------------------------------------------------------------


def _fields(fmt: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(fmt) if name}


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _render(
    fmt: str, ctx: Ctx, values: dict[str, Forms], r: random.Random
) -> tuple[str, list[str]]:
    """``fmt`` filled from ``ctx``, noise and the value forms (``{v}``, ``{v_day}``, ``{new}``,
    ``{old}``...); and the keep strings: the forms of ``v`` or ``new`` it shows."""
    fill: dict[str, str] = {**noise(r), **ctx}
    fill["Label"] = _capital(ctx.get("label", ""))
    fill["Alt"] = _capital(ctx.get("alt", ""))
    for prefix, forms in values.items():
        for suffix, text in forms.items():
            fill[f"{prefix}{suffix}"] = text
    keep_prefix = "new" if "new" in values else "v"
    keep = [
        fill[name]
        for name in sorted(_fields(fmt))
        if name == keep_prefix or name.startswith(keep_prefix + "_")
    ]
    return fmt.format(**fill), keep


@dataclass(frozen=True, slots=True)
class Slot:
    """One place in the plan of a set: a plain fact, an original with its correction later, or
    one of a pair that both hold."""

    role: str  # plain, original, correction, pair
    family: Family
    partner: int | None = None  # the original of a correction, the other of a pair


def _plan(r: random.Random, count: int) -> tuple[list[float], list[Slot]]:
    """Positions in increasing order and what each holds."""
    fixes = max(1, round(count / 4))
    pairs = max(1, round(count / 12))
    ats = [i / 1000 for i in sorted(r.sample(range(20, 980), count))]
    order = list(range(count))
    r.shuffle(order)
    fix_idx, pair_idx = order[: 2 * fixes], order[2 * fixes : 2 * fixes + 2 * pairs]
    plain_idx = order[2 * fixes + 2 * pairs :]
    correctable = [f for f in FAMILIES if f.correctable]
    pairable = [f for f in FAMILIES if f.pairable]
    used: set[str] = set()

    def pick(pool: Sequence[Family]) -> Family:
        # a kind first, then one of its unused families: kinds stay balanced in every set
        left = [f for f in pool if f.name not in used]
        if not left:
            raise ValueError(f"count {count}: more facts than families for them")
        kinds = sorted({f.kind for f in left})
        kind = r.choice(kinds)
        family = r.choice([f for f in left if f.kind == kind])
        used.add(family.name)
        return family

    slots: dict[int, Slot] = {}
    # pairs first: few families can hold two subjects at once
    r.shuffle(pair_idx)
    for a, b in zip(pair_idx[0::2], pair_idx[1::2], strict=True):
        family = pick(pairable)
        slots[a] = Slot("pair", family, b)
        slots[b] = Slot("pair", family, a)
    r.shuffle(fix_idx)
    for a, b in zip(fix_idx[0::2], fix_idx[1::2], strict=True):
        first, later = min(a, b), max(a, b)
        family = pick(correctable)
        slots[first] = Slot("original", family)
        slots[later] = Slot("correction", family, first)
    for i in plain_idx:
        slots[i] = Slot("plain", pick(FAMILIES))
    return ats, [slots[i] for i in range(count)]


def _clashes(
    keep: Sequence[str], text: str, made: Sequence[dict[str, Any]], allowed: str | None
) -> bool:
    """Whether a new fact's values occur in a fact already made, or theirs in its text (the
    fact it corrects, ``allowed``, may be named in its text)."""
    for other in made:
        if any(k in other["text"] for k in keep):
            return True
        if other["id"] != allowed and any(k in text for k in other["keep"]):
            return True
    return False


def generate(seed: int, count: int = 24, variant: int = 0) -> dict[str, Any]:
    """One session's canaries: deterministic per (seed, variant, count); see the module doc."""
    if not 6 <= count <= MAX_COUNT:
        raise ValueError(f"count must be in [6, {MAX_COUNT}], got {count}")
    r = random.Random(f"heldout:{seed}:{variant}")
    ats, slots = _plan(r, count)
    ids = [f"h{variant}-{i:02d}" for i in range(count)]
    made: list[dict[str, Any]] = []
    contexts: dict[int, Ctx] = {}
    values: dict[int, Forms] = {}
    for i, slot in enumerate(slots):
        family = slot.family
        for _attempt in range(200):
            if slot.role == "correction":
                assert slot.partner is not None
                ctx = contexts[slot.partner]
            elif slot.role == "pair" and slot.partner in contexts:
                ctx = family.subject(r)
                if ctx["subject"] == contexts[slot.partner]["subject"]:
                    continue
            else:
                ctx = family.subject(r)
            value = family.value(r, ctx)
            if slot.role == "correction":
                assert slot.partner is not None
                old = values[slot.partner]
                if any(a in b or b in a for a in value.values() for b in old.values()):
                    continue
                # a way first, then one of its phrasings: no way wins by having more of them
                phrasings: dict[str, list[Phrase]] = {w: list(GENERIC[w]) for w in family.ways}
                for own, own_style, own_fmt in family.fixes:
                    phrasings.setdefault(own, []).append((own_style, own_fmt))
                way = r.choice(sorted(phrasings))
                style, fmt = r.choice(phrasings[way])
                text, keep = _render(fmt, ctx, {"new": value, "old": old}, r)
                template = f"correction/{way}"
                kind = "correction"
            else:
                style, fmt = r.choice(family.says)
                text, keep = _render(fmt, ctx, {"v": value}, r)
                template, kind = family.name, family.kind
            allowed = ids[slot.partner] if slot.role == "correction" else None
            if not keep or _clashes(keep, text, made, allowed):
                continue
            break
        else:  # pragma: no cover - a bug in the families, not bad luck
            raise RuntimeError(f"{family.name}: no clash-free value in 200 draws (seed {seed})")
        contexts[i], values[i] = ctx, value
        canary: dict[str, Any] = {
            "id": ids[i],
            "kind": kind,
            "at": ats[i],
            "text": text,
            "keep": keep,
            "style": style,
            "template": template,
            "subject": f"{family.name}:{ctx['subject']}",
        }
        if slot.role == "correction":
            canary["supersedes"] = ids[slot.partner] if slot.partner is not None else None
        if slot.role == "pair":
            canary["coexists"] = ids[slot.partner] if slot.partner is not None else None
        made.append(canary)
    out = {
        "about": "held-out canaries: facts as people and tools write them, values drawn fresh, "
        "corrections mostly without a marker word (bench/heldout_canaries.py)",
        "seed": seed,
        "variant": variant,
        "canaries": made,
    }
    check(out)
    return out


def check(generated: dict[str, Any]) -> None:
    """Raise ``ValueError`` unless the set keeps the benchmark's rules (see the module doc)."""
    canaries = generated["canaries"]
    by_id = {c["id"]: c for c in canaries}

    def fail(why: str) -> None:
        raise ValueError(f"seed {generated['seed']} variant {generated['variant']}: {why}")

    if len(by_id) != len(canaries):
        fail("ids are not unique")
    ats = [c["at"] for c in canaries]
    if any(not 0 <= a < 1 for a in ats) or any(b <= a for a, b in itertools.pairwise(ats)):
        fail("at is not strictly increasing in [0, 1)")
    for c in canaries:
        if c["kind"] not in KINDS or c["style"] not in STYLES:
            fail(f"{c['id']}: kind {c['kind']!r} or style {c['style']!r} unknown")
        if not c["keep"] or any(not k or k not in c["text"] for k in c["keep"]):
            fail(f"{c['id']}: a keep string is not in its own text")
        for other in canaries:
            if other is c or other.get("supersedes") == c["id"]:
                continue
            if any(k in other["text"] for k in c["keep"]):
                fail(f"{c['id']}: a keep string occurs in {other['id']}'s text")
        old_id = c.get("supersedes")
        if (c["kind"] == "correction") != (old_id is not None):
            fail(f"{c['id']}: a correction and only a correction supersedes")
        if old_id is not None:
            old = by_id.get(old_id)
            if old is None or old["at"] >= c["at"] or old["subject"] != c["subject"]:
                fail(f"{c['id']}: supersedes no earlier canary of its subject")
        mate_id = c.get("coexists")
        if mate_id is not None:
            mate = by_id.get(mate_id)
            if (
                mate is None
                or mate.get("coexists") != c["id"]
                or mate["template"] != c["template"]
                or mate["subject"] == c["subject"]
                or "supersedes" in c
            ):
                fail(f"{c['id']}: coexists with no other subject of its template")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, default=24, help=f"facts per set (6-{MAX_COUNT})")
    parser.add_argument("--variant", type=int, default=0, help="the session index")
    args = parser.parse_args(argv)
    print(json.dumps(generate(args.seed, args.count, args.variant), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
