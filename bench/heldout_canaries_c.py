"""A third held-out canary generator for ``bench/retention.py``, written blind.

Lab notebook, 2026-12-02. Written from my own idea of what long agent sessions carry, without
reading the memory code (nothing under ``src/abridged/engine/summarize/``), the other canary
generators (``bench/canary_generator.py``, ``bench/heldout_canaries.py``,
``bench/heldout_canaries_b.py``) or their tests, any canary file, ``bench/RESULTS.md`` or the
issue tracker. Of ``bench/retention.py`` I read only the contract: ``Canary``,
``canaries_from``, ``CanarySource``, ``_generator``, the insertion functions, ``KeepIndex``,
``strip_replaced``, ``presents_as_current`` and ``score_context``.

Design, as built:

- a fact is a subject (a made-up service, package, job, milestone...), an attribute and a
  value; its keep strings are the value, and the subject too when the value alone would not
  say what it belongs to. Twenty-one kinds, from ports to prohibitions and decisions.
- every name is built on a made-up word owned by one fact (or one correction chain) of a set,
  so no keep string can turn up in another fact's text; distractor rows (the same shape, other
  subjects, other values) are drawn on the words no fact owns, and a text is re-drawn when its
  noise or distractors happen to contain any keep string of the set.
- templates are written as the user, the assistant or a tool would write them (``voice``);
  correction phrasings mostly avoid the words that announce a correction: a revert in a diff,
  a rollback in a log, a ticket moving, a row of a table edited, a date slipping.
- which templates and kinds a session gets is planned per block of 16 sessions of one seed, so
  that a 16-session run uses every template and writes every kind in every voice; values are
  drawn per (seed, variant).

Usage: ``python bench/retention.py --generator bench/heldout_canaries_c.py --seed S``.
"""

from __future__ import annotations

import random
import re
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from abridged.errors import AbridgedError, SettingError

VOICES = ("user", "assistant", "tool")
SESSIONS_PER_PLAN = 16  # a plan covers every template and kind x voice in this many sessions
MIN_COUNT = 6
# words a correction phrasing avoids, mostly: people and tools seldom announce one
ANNOUNCING = frozenset(
    ("correction", "correct", "update", "updated", "instead", "changed", "change", "now",
     "actually", "new")
)  # fmt: skip

# -- vocabulary -------------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


WORDS = _words(
    "kestrel umber quokka tamarind basalt marten juniper osprey cobalt larch ferrule gannet "
    "sorrel tansy pewter yarrow zircon halyard ibex jackdaw lupine merlin nacre ocelot pika "
    "quince ruddock saffron vetch wolfram alder bittern caracal dunlin egret fescue garnet "
    "heron indri jacana kudu loris nutmeg oriole plover quoll rowan shrike urchin vole "
    "whimbrel xerus yucca zander anise bracken cicada eider fennel gorse hazel jasper krill "
    "lichen madder nettle obsidian peridot quartz sedge thistle verdigris walrus agate borage "
    "cumin dogwood elver flint galena hornet jute lark myrtle nimbus opal puffin raven sumac "
    "topaz avocet bulbul crake dotterel fulmar godwit hoopoe kittiwake linnet moorhen nuthatch "
    "pipit redpoll smew turnstone wigeon siskin bunting chiffchaff garganey"
)
ROLES = _words(
    "ingest ledger gateway relay indexer scheduler notifier billing search auth exporter "
    "collector router cache mailer renderer uploader broker api worker sync audit metrics"
)
FIRST = _words(
    "Ifeoma Tomasz Aiko Rafael Nkechi Henrike Vikram Solveig Mateus Yevgenia Kwame Liesel "
    "Dariusz Amaranta Oskar Thandiwe Benedikt Priyanka Jovana Emeka Saoirse Tadeo Marit "
    "Anselm Ayesha Florin Nilufar Cosmin Wairimu Eulalia Radomir Signe Bartosz Imogen Kenji"
)
LAST = _words(
    "Szalai Okonkwo Lindqvist Barros Haraldsen Mukherjee Zielinski Achterberg Nakagawa "
    "Oyelaran Castellanos Vukovic Brannigan Thorsdottir Kowalczyk Esposito Ramaswamy Ferreira "
    "Mbeki Dufresne Halvorsen Petrakis Quiroga Sandoval Abernathy Wojcik Ilunga Marchetti "
    "Novotny Takahashi Gallagher Eriksen Ndiaye Lindgren Varga"
)
REGIONS = _words(
    "eu-north-1 ap-southeast-2 us-west-2 ca-central-1 me-central-1 af-south-1 eu-central-2 "
    "ap-south-2 sa-east-1 ap-northeast-3 europe-west4 asia-northeast1 southamerica-east1 "
    "australia-southeast2 northamerica-northeast2 me-west1 westeurope swedencentral "
    "japaneast brazilsouth uaenorth koreacentral"
)
SETTINGS = {
    "wal_sync_mode": ("group-commit", "fsync-always", "write-behind", "os-default"),
    "compaction": ("leveled", "size-tiered", "time-window", "universal"),
    "retry_policy": ("exp-jitter", "fixed-backoff", "no-retry", "decorrelated-jitter"),
    "log_format": ("ecs-json", "logfmt", "gelf", "cef"),
    "consistency": ("read-your-writes", "bounded-staleness", "linearizable", "eventual"),
    "eviction": ("lfu-decay", "lru-approx", "ttl-only", "arc"),
    "tls_mode": ("mtls-strict", "mtls-permissive", "tls-edge-only", "passthrough"),
    "balancer": ("least_request", "ring_hash", "maglev", "round_robin"),
}
DECISIONS = {
    "message_broker": ("NATS JetStream", "Redpanda", "RabbitMQ quorum queues", "Amazon SQS FIFO"),
    "primary_store": ("CockroachDB", "ScyllaDB", "TimescaleDB", "FoundationDB"),
    "workflow_engine": ("Temporal", "Argo Workflows", "Dagster", "AWS Step Functions"),
    "cache_backend": ("Dragonfly", "KeyDB", "Memcached 1.6", "Valkey"),
    "search_engine": ("OpenSearch", "Meilisearch", "Typesense", "Vespa"),
}
PREFERENCES = (
    "squash-and-merge only", "British spelling in user-facing text",
    "ISO-8601 timestamps with offset", "kebab-case file names", "early returns over nesting",
    "structlog over print", "Decimal for money", "httpx over requests",
    "one migration per pull request", "feature branches under 300 lines",
    "table-driven tests", "no ORM lazy loading", "UTC everywhere in storage",
    "semantic commit prefixes", "explicit re-exports in __init__",
    "tabs in Makefiles only",
)  # fmt: skip
RUNTIMES = (
    "PostgreSQL 12.7", "PostgreSQL 13.4", "glibc 2.28", "glibc 2.31", "OpenSSL 1.1.1w",
    "OpenSSL 3.0.13", "Node.js 18.19", "Node.js 20.11", "Erlang/OTP 25.3", "Ruby 3.1.4",
    "Kafka 2.8.2", "Redis 6.2.14", "nginx 1.22.1", "MariaDB 10.6", "Go 1.21.6",
)  # fmt: skip
COHORTS = (
    "internal-staff", "beta-apac", "design-partners", "pilot-tenants", "qa-only",
    "premium-tier", "early-access-eu", "support-agents",
)  # fmt: skip


# -- kinds ------------------------------------------------------------------------------------

Draw = Callable[[random.Random, str, str | None], tuple[str, str, str, str]]


def _svc(rng: random.Random, word: str) -> str:
    return f"{word}-{rng.choice(ROLES)}"


def _version(rng: random.Random) -> str:
    return f"{rng.randint(1, 9)}.{rng.randint(0, 39)}.{rng.randint(1, 29)}"


def _port(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    return _svc(rng, w), "port", "port", str(rng.randint(10240, 64999))


def _timeout(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    return _svc(rng, w), "request_timeout", "request timeout", f"{rng.randint(24, 196) * 50}ms"


def _path(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    root = rng.choice(("srv", "var/lib", "opt", "data", "mnt/fast"))
    seg = rng.choice(("spool", "segments", "wal", "blobs", "outbox", "cache-v2", "snapshots"))
    return _svc(rng, w), "data_dir", "data directory", f"/{root}/{w}/{seg}"


def _release(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    return _svc(rng, w), "release", "release", f"v{_version(rng)}"


def _pin(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    package = f"{w}{rng.choice(('kit', 'py', '-client', 'lib', '-sdk', 'tools'))}"
    return package, "pin", "pinned version", _version(rng)


def _owner(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    return _svc(rng, w), "owner", "owner", f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _date(rng: random.Random, year: int = 2027) -> str:
    return f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _deadline(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    milestone = rng.choice(("cutover", "GA", "beta", "migration", "freeze", "handover", "audit"))
    return f"{w} {milestone}", "due", "deadline", _date(rng)


def _endpoint(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    zone = rng.choice(("internal", "svc", "corp", "mesh", "int"))
    tld = rng.choice(("net", "org", "com"))
    tail = rng.choice(("v1/ingest", "v2/events", "v3/batches", "api/v2/orders", "v1/records"))
    return _svc(rng, w), "endpoint", "endpoint", f"https://{w}.{zone}.example.{tld}/{tail}"


def _secret(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    what = rng.choice(("api-token", "db-password", "signing-key", "webhook-secret"))
    if rng.random() < 0.5:
        team = rng.choice(("platform", "payments", "data", "infra", "growth"))
        ref = f"vault:kv/{team}/{w}/{what}"
    else:
        ref = f"{w.upper()}_{what.upper().replace('-', '_')}_REF"
    return _svc(rng, w), "token_ref", "credential reference", ref


def _setting(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    key = key or rng.choice(sorted(SETTINGS))
    return _svc(rng, w), key, key.replace("_", " "), rng.choice(SETTINGS[key])


def _flag(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    feature = rng.choice(("fast_checkout", "bulk_export", "smart_retry", "inline_preview"))
    state = rng.choice(("on for", "enabled for", "limited to"))
    return f"{w}_{feature}", "rollout", "rollout", f"{state} {rng.choice(COHORTS)}"


def _quota(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    org = rng.choice(("labs", "retail", "health", "logistics", "media", "freight"))
    unit = rng.choice(("req/min", "GiB", "vCPU"))
    high = {"req/min": 9000, "GiB": 4000, "vCPU": 512}[unit]
    return f"{w}-{org}", "quota", "quota", f"{rng.randint(12, high)} {unit}"


def _schedule(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    job = rng.choice(("nightly-rollup", "vacuum", "backup", "reindex", "export", "purge"))
    minute = rng.choice([m for m in range(1, 60) if m % 15])
    days = rng.choice(("1-5", "0", "6", "2", "*", "1,4"))
    cron = f"{minute} {rng.randint(0, 23)} * * {days}"
    return f"{w}-{job}", "schedule", "cron schedule", cron


def _region(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    return _svc(rng, w), "region", "region", rng.choice(REGIONS)


def _environment(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    base = rng.choice(("preprod", "staging", "perf", "uat", "sandbox", "qa"))
    tail = rng.choice(("blue", "green", "eu2", "us3", "lab4", "shadow"))
    return _svc(rng, w), "target_env", "target environment", f"{base}-{tail}"


def _ticket(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    return _svc(rng, w), "ticket", "tracking ticket", f"{w[:4].upper()}-{rng.randint(100, 9999)}"


def _command(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    command = rng.choice(
        (
            f"make test-{w} SHARD={rng.randint(2, 9)}",
            f"./scripts/{w}-check.sh --fast",
            f"tox -e {w}-py{rng.choice((310, 311, 312))}",
            f"just {w}-itest",
            f"npm run test:{w}",
            f"go test ./internal/{w}/... -run Integration",
        )
    )
    return _svc(rng, w), "test_cmd", "test command", command


def _prohibition(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    table = rng.choice(("rollups", "audit_log", "ledger", "events_raw"))
    operation = rng.choice(
        (
            f"DROP TABLE {w}_{table}",
            f"TRUNCATE {w}_{table}",
            f"git push --force origin {w}-release",
            f"kubectl delete pvc {w}-data-0",
            f"terraform destroy -target=module.{w}_{table}",
            f"rm -rf /srv/{w}/archive",
        )
    )
    return _svc(rng, w), "deny", "forbidden operation", operation


def _constraint(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    return _svc(rng, w), "min_supported", "oldest supported runtime", rng.choice(RUNTIMES)


def _preference(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    return _svc(rng, w), "convention", "convention", rng.choice(PREFERENCES)


def _decision(rng: random.Random, w: str, key: str | None) -> tuple[str, str, str, str]:
    key = key or rng.choice(sorted(DECISIONS))
    return _svc(rng, w), key, key.replace("_", " "), rng.choice(DECISIONS[key])


@dataclass(frozen=True, slots=True)
class Kind:
    """What a kind of fact looks like: how its values are drawn, what must be kept, and how a
    person states it in a sentence (``{S}`` subject, ``{A}`` attribute, ``{V}`` value)."""

    name: str
    draw: Draw
    keeps_subject: bool  # the value alone does not say what it belongs to
    claims: tuple[str, ...]

    def keep(self, subject: str, value: str) -> tuple[str, ...]:
        return (subject, value) if self.keeps_subject else (value,)


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("port", _port, True, (
            "{S} listens on port {V}", "{S} has to bind {V}", "the port for {S} is {V}")),
        Kind("timeout", _timeout, True, (
            "calls to {S} time out after {V}", "{S} gets a request timeout of {V}",
            "the request timeout on {S} is {V}")),
        Kind("path", _path, False, (
            "{S} keeps its data under {V}", "{S} writes to {V}",
            "the data directory of {S} is {V}")),
        Kind("release", _release, True, (
            "{S} ships as {V}", "we deploy {S} at {V}", "{S} stays on release {V}")),
        Kind("pin", _pin, True, (
            "{S} is pinned to {V}", "{S} must stay at {V}", "keep {S} at exactly {V}")),
        Kind("owner", _owner, True, (
            "{V} owns {S}", "{S} belongs to {V}", "questions about {S} go to {V}")),
        Kind("deadline", _deadline, True, (
            "{S} is due {V}", "{S} has to land by {V}", "the hard deadline for {S} is {V}")),
        Kind("endpoint", _endpoint, False, (
            "{S} is served at {V}", "clients of {S} call {V}", "the endpoint of {S} is {V}")),
        Kind("credential_ref", _secret, False, (
            "{S} reads its credential from {V}", "the token of {S} is referenced as {V}",
            "{S} takes its secret from {V}, never inline")),
        Kind("setting", _setting, True, (
            "{S} runs with {A} {V}", "{A} for {S} is {V}", "set {A} to {V} on {S}")),
        Kind("feature_flag", _flag, True, (
            "the flag {S} is {V}", "{S} stays {V}", "rollout of {S}: {V}")),
        Kind("quota", _quota, True, (
            "{S} gets a quota of {V}", "the quota for {S} is {V}", "cap {S} at {V}")),
        Kind("schedule", _schedule, True, (
            "{S} runs on cron {V}", "the schedule of {S} is {V}", "{S} fires at {V} (cron)")),
        Kind("region", _region, True, (
            "{S} lives in {V}", "{S} is deployed to {V}", "the region for {S} is {V}")),
        Kind("environment", _environment, True, (
            "{S} goes to {V} first", "test {S} against {V}",
            "the target environment for {S} is {V}")),
        Kind("identifier", _ticket, True, (
            "work on {S} is tracked in {V}", "{V} is the ticket for {S}",
            "log time for {S} against {V}")),
        Kind("command", _command, False, (
            "the tests of {S} run with `{V}`", "use `{V}` to check {S}",
            "before merging {S}, run `{V}`")),
        Kind("prohibition", _prohibition, False, (
            "never run `{V}` on {S}", "`{V}` is off limits for {S}",
            "do not do `{V}` against {S}, whatever the reason")),
        Kind("constraint", _constraint, True, (
            "{S} must keep working on {V}", "{S} cannot drop support for {V}",
            "the oldest runtime {S} supports is {V}")),
        Kind("preference", _preference, True, (
            "for {S} we prefer {V}", "in {S} it is {V}", "the convention in {S}: {V}")),
        Kind("decision", _decision, True, (
            "we decided {S} uses {V} as its {A}", "{A} for {S}: {V}, decided",
            "{S} goes with {V} for its {A}")),
    )
}  # fmt: skip
ALL_KINDS = tuple(KINDS)


# -- templates --------------------------------------------------------------------------------
# {S} subject, {K} key, {A} attribute, {V} value, {O} the superseded value (corrections),
# {SAY} a kind's sentence, {KU}/{SU} upper-cased key/subject; «...» is a block of rows, one of
# them the fact, the others distractors ({s} {k} {a} {v} {su} {ku}), {N} the number of rows;
# other names are fresh noise (a trailing digit keeps one value: {who1} is one person).

TOOL = [
    ("toml", "", "$ cat deploy/services.toml\n«[services.{s}]\n{k} = \"{v}\"\nreplicas = {n}\n\n»"),
    ("toml", "", "$ grep -n -A2 '{S}' deploy/prod.toml\n{nn}:[{S}]\n{nn}-{K} = \"{V}\"\n"
     "{nn}-owner_team = \"platform\""),
    ("toml", "", "# pyproject.toml (excerpt)\n[tool.platform.targets]\n«\"{s}\" = { {k} = \"{v}\" "
                 "}\n»"),
    ("ini", "", "$ cat conf/app.ini\n; generated {date}\n«[{s}]\n{k} = {v}\nenabled = true\n\n»"),
    ("ini", "", "[global]\nlog_level = info\n\n[{S}]\n{K} = {V}\nmax_workers = {n}\n"),
    ("yaml-configmap", "", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: platform-settings\n"
     "  namespace: prod\ndata:\n«  {s}.{k}: \"{v}\"\n»"),
    ("yaml-configmap", "", "$ kubectl get configmap {S}-config -o yaml\napiVersion: v1\ndata:\n"
     "  {K}: \"{V}\"\n  LOG_LEVEL: info\nkind: ConfigMap\nmetadata:\n  resourceVersion: "
     "\"{nnn}{nnn}\""),
    ("helm-values", "", "# charts/platform/values-prod.yaml\n«{s}:\n  {k}: \"{v}\"\n  replicas: "
                        "{n}\n»"),
    ("helm-values", "", "$ helm get values {S} -n prod\nUSER-SUPPLIED VALUES:\nconfig:\n  {K}: "
                        "\"{V}\"\n"
     "image:\n  pullPolicy: IfNotPresent\nresources:\n  limits:\n    cpu: {n}00m"),
    ("json-config", "", "$ jq .services config/settings.json\n{\n«  \"{s}\": {\"{k}\": \"{v}\", "
                        "\"tier\": {n}},\n»}"),
    ("json-config", "", "$ cat .platform/{S}.json\n{\n  \"name\": \"{S}\",\n  \"{K}\": \"{V}\",\n"
     "  \"labels\": [\"prod\", \"tier-{n}\"]\n}"),
    ("jsonl-log", "", "«{\"ts\":\"{ts}\",\"level\":\"info\",\"svc\":\"{s}\",\"msg\":\"config "
                      "loaded\","
     "\"{k}\":\"{v}\"}\n»"),
    ("jsonl-log", "",
     "«{\"time\":\"{ts}\",\"lvl\":\"debug\",\"caller\":\"boot.go:{nn}\",\"svc\":\"{s}\","
     "\"{k}\":\"{v}\",\"rev\":\"{sha7}\"}\n»{\"time\":\"{ts}\",\"lvl\":\"info\",\"msg\":\"{N} "
     "services "
     "configured\"}"),
    ("logfmt", "", "«time={ts} level=info component={s} msg=\"effective config\" {k}=\"{v}\"\n»"),
    ("logfmt", "", "time={ts} level=warn component={S} msg=\"override applied from ops sheet\" "
     "{K}=\"{V}\" source=manual\ntime={ts} level=info component={S} msg=\"ready\" took={ms}"),
    ("csv", "", "$ head -n 20 inventory.csv\nname,{k},updated_by\n«{s},{v},{who}\n»"),
    ("csv", "", "$ csvlook exports/{date}-settings.csv\n| service | {k} | since |\n«| {s} | {v} | "
                "{date} |\n»"),
    ("dotenv", "", "$ cat .env.production\n«# {s}\n{su}_{ku}=\"{v}\"\n»"),
    ("dotenv", "", "$ grep -B1 {KU} deploy/{S}.env\n# {S}: agreed with ops on "
                   "{date}\n{SU}_{KU}=\"{V}\""),
    ("kubectl-table", "", "$ kubectl get deploy -n prod -L {k}\nNAME   READY   AGE   {ku}\n"
     "«{s}   {n}/{n}   {n}d   {v}\n»"),
    ("kubectl-table", "", "$ kubectl describe deploy {S} -n prod | head\nName:        {S}\n"
     "Namespace:   prod\nAnnotations: deployment.kubernetes.io/revision: {n}\n"
     "             platform/{K}: {V}\nReplicas:    {n} desired | {n} updated"),
    ("compose", "", "$ docker compose config\nservices:\n«  {s}:\n    image: "
                    "registry.local/{s}:{sha7}\n"
     "    environment:\n      {ku}: \"{v}\"\n»"),
    ("terraform-plan", "", "Terraform will perform the following actions:\n\n«  # "
                           "module.{su}.aws_ssm_parameter.{k} "
     "will be created\n  + resource \"aws_ssm_parameter\" \"{k}\" {\n      + name  = \"/{s}/{k}\"\n"
     "      + value = \"{v}\"\n    }\n\n»Plan: {N} to add, 0 to change, 0 to destroy."),
    ("terraform-plan", "", "$ terraform output -json | jq '.settings.value[\"{S}\"]'\n{\n"
     "  \"{K}\": \"{V}\",\n  \"managed_by\": \"terraform\"\n}"),
    ("hcl", "", "# env/prod/terraform.tfvars\nservices = {\n«  \"{s}\" = { {k} = \"{v}\" }\n»}"),
    ("pkg-list", "pin release", "$ pip list --format=columns | grep -v '^pip'\nPackage            "
                                "Version\n"
     "------------------ -------\n«{s}    {v}\n»"),
    ("pkg-list", "pin release", "$ npm ls --depth=0\nweb@{n}.0.0 /srv/app\n«├── {s}@{v}\n»"),
    ("lockfile", "pin", "$ grep -A2 'name = \"{S}\"' poetry.lock\nname = \"{S}\"\nversion = "
                        "\"{V}\"\n"
     "description = \"internal client\""),
    ("lockfile", "pin", "# requirements/prod.txt (pip-compile output)\n«{s}=={v}\n    # via -r "
                        "requirements/prod.in\n»"),
    ("git-log", "", "$ git log --oneline -12\n«{sha7} {s}: set {k} to {v}\n»"),
    ("git-log", "", "$ git log -3 --format='%h %an %s'\n{sha7} {who} docs: fix typo\n"
     "{sha7} {who1} {S}: pin {K} at {V} (ops review)\n{sha7} {who} ci: bump cache key"),
    ("git-show", "", "commit {sha}\nAuthor: {who1} <{handle}@example.com>\nDate:   {day} {date}\n\n"
     "    {S}: settle {A}\n\n    {SAY}. Agreed in the platform sync; see thread.\n"),
    ("git-diff", "", "diff --git a/config/{S}.yaml b/config/{S}.yaml\n--- a/config/{S}.yaml\n"
     "+++ b/config/{S}.yaml\n@@ -3,6 +3,7 @@\n name: {S}\n+{K}: \"{V}\"\n replicas: {n}"),
    ("git-diff", "", "$ git diff --stat HEAD~1 && git diff HEAD~1 -- settings.yaml\n "
                     "settings.yaml | 1 +\n"
     "@@ -11,3 +11,4 @@ services:\n«   {s}: { {k}: \"{v}\" }\n»+  {S}: { {K}: \"{V}\", pinned: "
     "true }"),
    ("pytest", "", "$ pytest tests/config -q\n«tests/config/test_{k}.py::test_{k}[{s}-{v}] "
                   "PASSED\n»"
     "{N} passed in {n}.{n}s"),
    ("pytest", "", "FAILED tests/test_settings.py::test_{K}[{S}] - AssertionError: {K} of {S} "
                   "must be "
     "'{V}'\n  assert '{ms}' == '{V}'\n1 failed, {nn} passed in {n}.{n}s"),
    ("curl-json", "", "$ curl -s https://config.internal/v1/services/{S} | jq\n{\n  \"name\": "
                      "\"{S}\",\n"
     "  \"{K}\": \"{V}\",\n  \"etag\": \"{sha7}\",\n  \"fetched\": \"{ts}\"\n}"),
    ("curl-json", "", "$ curl -s 'https://config.internal/v1/services?fields={K}' | jq -c "
                      "'.items[]'\n"
     "«{\"name\":\"{s}\",\"{k}\":\"{v}\"}\n»"),
    ("psql", "", "platform=> SELECT name, {k} FROM service_settings ORDER BY name;\n   name    | "
                 "{k}\n"
     "-----------+----------\n« {s} | {v}\n»({N} rows)"),
    ("psql", "", "platform=> \\x\nExpanded display is on.\nplatform=> SELECT * FROM "
                 "service_settings WHERE "
     "name = '{S}';\n-[ RECORD 1 ]-------\nname       | {S}\n{K}       | {V}\nupdated_by | {who}"),
    ("sql", "", "-- migrations/{nnn}_seed_settings.sql\nINSERT INTO service_settings (name, {k}) "
                "VALUES\n"
     "«  ('{s}', '{v}'),\n»ON CONFLICT (name) DO NOTHING;"),
    ("sql", "", "CREATE TABLE service_settings (\n  name text PRIMARY KEY,\n  {K} text NOT "
                "NULL\n);\n"
     "COMMENT ON TABLE service_settings IS 'platform defaults';\n"
     "INSERT INTO service_settings VALUES ('{S}', '{V}');"),
    ("mysql-table", "", "mysql> SELECT name, {k} FROM settings;\n+--------------+-----------+\n"
     "| name | {k} |\n+--------------+-----------+\n«| {s} | {v} |\n»+--------------+-----------+\n"
     "{N} rows in set (0.0{n} sec)"),
    ("crontab", "schedule", "$ crontab -l -u svc\nMAILTO=ops@example.com\n«{v} "
                            "/usr/local/bin/run-job {s} "
     ">> /var/log/{s}.log 2>&1\n»"),
    ("crontab", "schedule", "$ kubectl get cronjobs -n batch\nNAME   SCHEDULE   SUSPEND   ACTIVE\n"
     "«{s}   {v}   False   0\n»"),
    ("systemd", "", "$ systemctl cat {S}.service\n# /etc/systemd/system/{S}.service\n[Unit]\n"
     "Description={S}\nAfter=network-online.target\n\n[Service]\nEnvironment=\"{KU}={V}\"\n"
     "ExecStart=/usr/local/bin/{S}\nRestart=on-failure"),
    ("systemd", "", "$ systemctl show -p Environment {S} {S}.socket\nEnvironment=\"{KU}={V}\" "
                    "LANG=C.UTF-8\n"
     "Environment=LISTEN_FDS=1"),
    ("nginx", "port", "$ cat /etc/nginx/conf.d/upstreams.conf\n«upstream {s} {\n    server "
                      "10.0.{n}.{n}:{v};\n}\n»"),
    ("nginx", "timeout endpoint", "location /{S}/ {\n    # {A}: {V}\n    proxy_pass http://{S}/;\n"
     "    proxy_read_timeout {ms};\n}"),
    ("dockerfile", "", "$ cat services/{S}/Dockerfile\nFROM python:3.12-slim\nLABEL "
                       "org.platform.service=\"{S}\"\n"
     "ENV {KU}=\"{V}\"\nCOPY . /app\nCMD [\"python\", \"-m\", \"app\"]"),
    ("dockerfile", "", "$ docker inspect --format '{{json .Config.Labels}}' "
                       "registry.local/{S}:{sha7}\n"
     "{\"org.platform.service\":\"{S}\",\"org.platform.{K}\":\"{V}\",\"vcs-ref\":\"{sha7}\"}"),
    ("openapi", "", "openapi: 3.0.3\ninfo:\n  title: platform settings\npaths:\n«  /services/{s}:\n"
     "    x-{k}: \"{v}\"\n»"),
    ("openapi", "endpoint", "# {S}/openapi.yaml\nservers:\n  - url: {V}\n    description: "
                            "production\n"
     "  - url: http://localhost:{nnn}{n}\n    description: local"),
    ("graphql", "", "$ gql query '{ services { name {K} } "
                    "}'\n{\"data\":{\"services\":[\n«{\"name\":\"{s}\","
     "\"{k}\":\"{v}\"},\n»]}}"),
    ("protobuf", "", "// proto/platform/v1/settings.proto\nmessage ServiceDefaults {\n"
     "  // {S}: {K} = \"{V}\" (agreed with ops)\n  string {K} = {n};\n}"),
    ("xml", "", "<!-- pom.xml (properties) -->\n<properties>\n«  "
                "<{s}.{k}>{v}</{s}.{k}>\n»</properties>"),
    ("xml", "", "<configuration>\n  <service name=\"{S}\">\n    <add key=\"{K}\" value=\"{V}\" />\n"
     "    <add key=\"retries\" value=\"{n}\" />\n  </service>\n</configuration>"),
    ("changelog", "", "## [{n}.{n}.0] - {date}\n### Changed\n«- {s}: {k} set to `{v}`\n»"),
    ("changelog", "", "$ sed -n '1,12p' CHANGELOG.md\n# Changelog\n\n## Unreleased\n- {S}: {A} is "
                      "`{V}` "
     "(ops request)\n- docs: mention the staging proxy"),
    ("adr", "", "$ cat docs/adr/{nnn}-{S}.md\n# ADR {nnn}: {A} for {S}\n\nStatus: Accepted "
                "({date})\n\n"
     "## Decision\n\n{SAY}.\n\n## Consequences\n\nDashboards and runbooks follow this."),
    ("adr", "decision preference constraint", "# RFC: {A} of {S}\n\n| option | verdict "
                                              "|\n|---|---|\n"
     "| {V} | chosen |\n| status quo | rejected |\n\nAuthors: {who}, {who}"),
    ("markdown-table", "owner", "$ cat MAINTAINERS.md\n| component | owner | backup "
                                "|\n|---|---|---|\n"
     "«| {s} | {v} | {who} |\n»"),
    ("python-code", "", "$ sed -n '1,20p' src/platform/defaults.py\n\"\"\"Platform defaults per "
                        "service.\"\"\"\n\n"
     "DEFAULTS = {\n«    \"{s}\": {\"{k}\": \"{v}\"},\n»}"),
    ("python-code", "", "class {SU}Settings(BaseSettings):\n    \"\"\"Settings of {S}; {A} agreed "
                        "with ops.\"\"\"\n\n"
     "    {K}: str = \"{V}\"\n    debug: bool = False"),
    ("syslog", "", "«{mon} {dd} {hh}:{mm}:{ss} node-{n} {s}[{pid}]: starting with {k}={v}\n»"),
    ("syslog", "", "{mon} {dd} {hh}:{mm}:{ss} node-{n} {S}[{pid}]: config reload: {K}={V}\n"
     "{mon} {dd} {hh}:{mm}:{ss} node-{n} {S}[{pid}]: listening, {nn} workers"),
    ("ci-log", "", "##[group]Run ./scripts/verify-config --env prod\n«✓ {s}: {k} = "
                   "{v}\n»##[endgroup]\n"
     "All {N} services match the ops sheet."),
    ("ci-log", "",
     "[{tsl}] step 4/7 deploy-config\n[{tsl}] applying {S} {K}={V}\n[{tsl}] ok ({ms})"),
    ("gh-issue", "", "$ gh issue view {nnn}\ntitle:  {S}: settle {A}\nstate:  CLOSED\nauthor: "
                     "{handle}\n"
     "labels: infra, ops\n--\n{SAY}. Closing since ops confirmed."),
    ("gh-issue", "", "$ gh pr view {nnn} --comments\n{handle} approved\n{handle1}: LGTM. For the "
                     "record "
     "{SAY}, that is what the runbook says too."),
    ("aws-json", "", "$ aws ssm get-parameters-by-path --path /prod --recursive\n{\"Parameters\": "
                     "[\n"
     "«  {\"Name\": \"/prod/{s}/{k}\", \"Value\": \"{v}\", \"Version\": {n}},\n»]}"),
    ("aws-json", "", "$ aws ssm get-parameter --name /prod/{S}/{K}\n{\n  \"Parameter\": {\n"
     "    \"Name\": \"/prod/{S}/{K}\",\n    \"Value\": \"{V}\",\n    \"Version\": {n}\n  }\n}"),
    ("etcd", "", "$ etcdctl get --prefix /config/\n«/config/{s}/{k}\n{v}\n»"),
    ("redis", "", "127.0.0.1:6379> HGETALL settings:{S}\n1) \"{K}\"\n2) \"{V}\"\n3) "
                  "\"owner_team\"\n"
     "4) \"platform\""),
    ("jest", "", "PASS src/settings.test.ts\n  service settings\n«    ✓ {s} uses {k} {v} ({n} "
                 "ms)\n»"),
    ("k8s-manifest", "", "      containers:\n        - name: app\n          env:\n«            - "
                         "name: {su}_{ku}\n"
     "              value: \"{v}\"  # {s}\n»"),
    ("ansible", "", "$ cat inventory/prod.ini\n«[{s}]\nhost-{n}.prod {k}=\"{v}\"\n\n»"),
    ("gradle", "", "> Task :printPlatformConfig\n«{s}.{k}={v}\n»\nBUILD SUCCESSFUL in {n}s"),
    ("access-log", "", "«10.0.{n}.{n} - - [{dd}/Nov/2026:{hh}:{mm}:{ss} +0000] \"GET /config/{s} "
                       "HTTP/1.1\" "
     "200 {nnn} \"-\" \"{k}={v}\"\n»"),
    ("readme", "", "$ cat services/{S}/README.md\n# {S}\n\n| setting | value |\n|---|---|\n| {K} "
                   "| `{V}` |\n"
     "| replicas | {n} |"),
    ("readme", "command", "## Testing {S}\n\n```sh\n{V}\n```\n\nCI runs the same on every push."),
    ("tracker-csv", "",
     "$ cat export.csv\nkey,summary,status\n«OPS-{nnn},\"{s}: {k} {v}\",Done\n»"),
    ("makefile", "command", "$ make -n check\n«{v}  # {s}\n»"),
]  # fmt: skip

USER = [
    ("chat", "", "fyi {SAY}. keep that in mind when you touch the deploy config"),
    ("chat", "", "one thing before you go on: {SAY}. ops will not budge on it"),
    ("chat", "", "quick note, {A} for {S} is {V}. don't guess it from the other services"),
    ("chat-typos", "", "btw {SAY} ,, pls dont forget thsi one, last time it bit us"),
    ("chat-typos", "", "ok so teh {A} on {S} is {V} (not whatever the old wiki says lol)"),
    ("chat-typos", "", "sry forgot to mention: {SAY}. we lost a day on tht last sprint"),
    ("pasted-email", "", "---------- Forwarded message ---------\nFrom: {who1} "
                         "<{handle}@example.com>\n"
     "Date: {day}, {date}\nSubject: Re: {S} rollout\n\nHi all,\n\nconfirming what we said on the "
     "call: {SAY}.\n\nBest,\n{who1}"),
    ("pasted-email", "", "pasting the mail from ops:\n\n> Hello team,\n> for the records, the {A} "
                         "values:\n"
     "«> - {s}: {v}\n»> Please do not deviate without asking.\n> Regards, {who}"),
    ("pasted-email", "", "From: {who} <ops@example.com>\nSubject: {S}\n\nHi,\nplease note that "
                         "{SAY}. "
     "The other services keep their defaults.\nThanks"),
    ("ticket", "", "Ticket OPS-{nnn} (P2)\nSummary: {S} misconfigured\nAcceptance criteria:\n"
     "- {SAY}\n- dashboards green for {n} days\nReporter: {who}"),
    ("ticket", "", "copying the jira description:\n\n*Context*: {S} keeps paging us.\n*Ask*: {A} "
     "must be {V}.\n*Out of scope*: the other {n} services."),
    ("ticket", "", "from the ticket, verbatim: \"{SAY}\" - the rest of the ticket is about "
                   "dashboards, "
     "ignore it"),
    ("meeting-notes", "", "notes from the platform sync ({date}):\n«- {s}: {a} {v}\n»- action "
                          "items: "
     "{who} to write the runbook"),
    ("meeting-notes", "", "Minutes, infra weekly\nAttendees: {who}, {who}, {who}\n1. budget - "
                          "parked\n"
     "2. {S}: {SAY}. Agreed by all.\n3. on-call swap - see sheet"),
    ("meeting-notes", "", "standup recap: {who} is out, the migration is blocked on review, and "
                          "{SAY}."),
    ("voice-transcript", "", "so um yeah basically the thing is uh {SAY}, right, and uh the rest "
     "we can figure out later i guess"),
    ("voice-transcript", "", "okay recording this while walking so sorry for the noise. the, the "
     "{A} for {S}, it's {V}. {V}. yeah. that's the one"),
    ("voice-transcript", "", "[transcribed] hey so quick one, uh, I talked to {who} and uh {SAY}, "
     "so just, you know, go with that"),
    ("requirements", "", "Requirements for this task:\n1. keep the public API stable\n2. {SAY}\n"
     "3. no new dependencies\n4. tests for anything you change"),
    ("requirements", "", "hard requirements (from ops):\n«* {s} - {a}: {v}\n»please don't touch "
                         "other "
     "services"),
    ("requirements", "", "MUST: {SAY}.\nSHOULD: keep the diff small.\nMAY: clean up the logging."),
    ("non-native", "", "Hello, please for the {S} you must to use {V} as {A}. This is decided "
     "from my manager. Thank you"),
    ("non-native", "", "I am explaining: the {A} of {S} it is {V}, not other. We have problem "
     "before with this, so please to be careful"),
    ("non-native", "", "Kindly note that {SAY}. Please do the needful and revert if any doubt."),
    ("slack-paste", "", "pasting from #platform:\n[{hh}:{mm}] {who}: anyone know the {A} for {S}?\n"
     "[{hh}:{mm}] {who1}: {V}\n[{hh}:{mm}] {who}: ty"),
    ("slack-paste", "", "from slack:\n«{who}: {s} -> {v}\n»{who}: that's all the {A} values, "
     "pinning this thread"),
    ("slack-paste", "", "> {who1} [{hh}:{mm}]\n> heads up: {SAY}\n> :thumbsup: 3"),
    ("review-comment", "", "review comment on your last diff: you hard-coded a default for {S}; "
     "{SAY}, so use that"),
    ("review-comment", "", "nit but important: {A} of {S} should read {V} in the config, "
     "the PR has something else"),
    ("terse", "", "{S}: {A} {V}."),
    ("terse", "", "remember: {SAY}"),
    ("terse", "", "{A} = {V} for {S}. go"),
    ("forwarded-thread", "", "long thread, tl;dr at the bottom.\n\n{who}: are we sure?\n{who1}: "
                             "yes\n"
     "{who}: ok\n...\ntl;dr: {SAY}"),
    ("forwarded-thread", "", "summarising the thread with {who}: they compared a few options, "
     "talked about cost, then landed on this: {SAY}. nobody objected"),
    ("bug-report", "", "Bug: {S} misbehaves under load.\nExpected: {A} {V}.\nObserved: falls back "
                       "to "
     "a default after restart.\nEnv: prod, node-{n}"),
    ("bug-report", "", "I think the bug is config drift. For reference the values that are right:\n"
     "«  {s}  {v}\n»(from the ops sheet, {date})"),
    ("handoff", "", "handing this over to you for the afternoon. context: {SAY}. {who} knows "
     "the rest if you get stuck"),
    ("handoff", "", "before I log off: the {A} thing is settled, {S} -> {V}. everything else in "
     "my notes is still open"),
    ("aside", "", "unrelated to the test failures, but so I don't forget: {SAY}"),
    ("aside", "", "(side note: {SAY}. carry on with the refactor)"),
    ("question-answer", "", "you asked earlier about {S}. answer from ops: {A} is {V}"),
    ("question-answer", "", "to your question - yes, {SAY}. they double-checked"),
    ("excel-paste", "", "copied from the sheet:\nservice\t{a}\tnote\n«{s}\t{v}\t\n»"),
    ("excel-paste", "", "row {nn} of the ops sheet says: {S} | {A} | {V} | signed off by {who}"),
    ("list-dump", "", "dumping what I know:\n«- {s} => {v}\n»that should be all of them for {A}"),
    ("list-dump", "", "context dump:\n- repo builds with make\n- {SAY}\n- CI is flaky on arm\n- "
                      "ask {who} for access"),
    ("frustrated", "", "again: {SAY}. third time I'm saying it"),
    ("frustrated", "", "PLEASE stop assuming the default. {A} for {S} is {V}!!"),
]  # fmt: skip

ASSISTANT = [
    ("plan", "", "Plan:\n1. Reproduce the failing check.\n2. Keep {A} of {S} at {V} while "
                 "editing.\n"
     "3. Run the affected tests.\n4. Report back."),
    ("plan", "", "Here's how I'll proceed. First I read the service config; {SAY}, so I will leave "
     "that value alone. Then I fix the parser and add a regression test."),
    ("plan", "", "Next steps (in order):\n- [ ] patch the loader\n- [ ] confirm {S} still has {A} "
                 "{V}\n"
     "- [ ] rerun the suite"),
    ("summary", "", "Summary so far: the failure comes from a stale fixture. Settled facts: {SAY}. "
     "Open: the flaky network test."),
    ("summary", "", "To recap what we know about the services:\n«- {s}: {a} {v}\n»Nothing else is "
     "confirmed yet."),
    ("summary", "", "Where things stand: the migration script runs, two tests fail, and {SAY}."),
    ("status-report", "", "Status: in progress.\nDone: parser fix, test for empty input.\nNoted: "
                          "{SAY}.\n"
     "Blocked: none."),
    ("status-report", "", "Progress report\n- build: green\n- lint: {n} warnings left\n- config: "
                          "{S} "
     "keeps {A} {V}\n- docs: not started"),
    ("status-report", "", "Quick status: I am {n} files into the refactor. Reminder for myself and "
     "you: {SAY}."),
    ("table", "", "| service | {a} | source |\n|---|---|---|\n«| {s} | {v} | ops sheet |\n»"),
    ("table", "", "Collected the values into one table so we stop re-reading the configs:\n\n"
     "| service | {a} |\n|---|---|\n«| {s} | `{v}` |\n»"),
    ("table", "", "| item | value | confirmed |\n|---|---|---|\n| {A} of {S} | {V} | yes |\n"
     "| retries | {n} | no |"),
    ("checklist", "", "Checklist before I open the PR:\n- [x] tests pass locally\n- [x] {SAY}\n"
     "- [ ] changelog entry"),
    ("checklist", "", "Pre-deploy checks:\n«- [x] {s}: {a} {v}\n»- [ ] smoke test in staging"),
    ("reasoning", "", "Let me think about this. The loader falls back to defaults when a key is "
                      "missing. "
     "But {SAY}, so a fallback here would be wrong; the value must be read explicitly."),
    ("reasoning", "", "The traceback points at the config merge. If the merge took the default, "
                      "{S} "
     "would not get {V} as its {A}, which is what we agreed. So the merge order is the bug."),
    ("reasoning", "", "Two explanations fit. Either the cache is stale or the override is ignored. "
     "Since {SAY}, and the logs show a different value, the override is ignored."),
    ("decision-log", "", "Decision log\n- {date}: keep the old parser for now\n- {date}: {SAY}\n"
     "- {date}: drop the python 3.9 job"),
    ("decision-log", "", "Recording this so it survives: {A} for {S} = {V} (from you, this "
                         "session)."),
    ("handoff", "", "Handoff notes for whoever continues: the branch builds; {SAY}; the remaining "
     "failure is in the integration suite."),
    ("handoff", "", "If I lose context, the essentials are: (1) tests run with pytest -x, (2) "
                    "{SAY}, "
     "(3) don't touch the vendored code."),
    ("commit-proposal", "", "Proposed commit message:\n\n    {S}: keep {A} at {V}\n\n"
     "    The loader used to override it with the default.\n"),
    ("commit-proposal", "", "I'll commit this as \"config: read {A} of {S} explicitly\"; the value "
     "stays {V}."),
    ("review", "", "Reviewing the diff: the rename is fine, the new test is fine, but line {nn} "
                   "sets a "
     "different value for {S}. {SAY}, so I'll restore it."),
    ("review", "", "Looked at all the service configs:\n«- {s}: {v} - matches\n»So {A} is "
                   "consistent "
     "everywhere."),
    ("answer", "", "Yes: {SAY}. I found it in the deploy config and in the ops runbook."),
    ("answer", "", "Short answer: {V}. That is the {A} of {S}, per your message earlier."),
    ("recap-after-tool", "", "The output confirms it: {SAY}. The other entries are defaults."),
    ("recap-after-tool", "", "From that listing, the only line that matters for us is {S} with "
     "{A} {V}; the rest are unrelated services."),
    ("recap-after-tool", "", "That command printed {n} services. Ours is {S}: {A} {V}."),
    ("risk-list", "", "Risks:\n- flaky CI could hide a regression\n- if anyone resets the config, "
     "{S} loses its {A} ({V})\n- the vendored lib is old"),
    ("risk-list", "", "What could go wrong: mainly config drift. {SAY}; I'll add a test that pins "
                      "it."),
    ("todo", "", "TODO (mine):\n- write the migration\n- double-check that {SAY}\n- ask about the "
     "arm runners"),
    ("todo", "", "Remaining:\n«* verify {s} ({a} {v})\n»* update docs"),
    ("explanation", "", "Why the service crashed: it started with the default {A}. {SAY}, and with "
     "that value the startup check passes."),
    ("explanation", "", "To explain the config layering: defaults, then env files, then ops "
     "overrides. The override that matters: {S}, {A} {V}."),
    ("numbered-findings", "", "Findings:\n1. The fixture is stale.\n2. {SAY}.\n3. Two tests depend "
     "on network access."),
    ("numbered-findings", "", "What I found in the configs:\n«{n}) {s}: {v}\n»Only the {A} of {S} "
     "was explicitly requested."),
    ("json-block", "", "Here is the state I'm tracking, as JSON:\n```json\n{\"service\": \"{S}\", "
     "\"{K}\": \"{V}\", \"tests\": \"failing\"}\n```"),
    ("json-block", "", "```yaml\n# working notes\nconstraints:\n  - {SAY}\nopen:\n  - flaky "
                       "test\n```"),
    ("apology", "", "Sorry, I lost track of that earlier. To be clear: {SAY}. I'll keep it."),
    ("confirmation", "", "Confirmed with the config and your note: {S} -> {A} {V}. Proceeding."),
    ("confirmation", "", "Understood. {SAY}; I won't change it."),
    ("memo", "", "Note to self (keep): {SAY}."),
    ("memo", "", "Pinned facts for this task:\n- {SAY}\n- the repo uses tabs in Makefiles"),
    ("comparison", "", "Compared the environments:\n«- {s}: {v} (prod), same in staging\n»"
     "Prod and staging agree."),
    ("comparison", "", "Before/after of the {A}:\n- before my patch: default\n- after: {V} on {S}, "
     "as requested"),
    ("question-back", "", "Before I continue: I'm assuming {SAY}, as you said. Tell me if that's "
     "wrong."),
]  # fmt: skip

# corrections: the later canary of a chain; {O} is the value it supersedes
FIXES = [
    ("tool", "revert-diff", "", "$ git show --stat HEAD\ncommit {sha}\n    Revert \"{S}: set {K} "
                                "to {O}\"\n\n"
     "diff --git a/config/{S}.yaml b/config/{S}.yaml\n-{K}: \"{O}\"\n+{K}: \"{V}\""),
    ("tool", "revert-diff", "", "$ git diff HEAD~1 -- deploy/prod.toml\n@@ -7,3 +7,3 @@ [{S}]\n"
     "-{K} = \"{O}\"\n+{K} = \"{V}\"\n replicas = {n}"),
    ("tool", "rollback-log", "", "[{tsl}] rollback started for {S} (release {sha7})\n[{tsl}] {S}: "
                                 "{K} "
     "{O} -> {V}\n[{tsl}] rollback complete, {n} pods healthy"),
    ("tool", "rollback-log", "", "time={ts} level=warn component={S} msg=\"operator override "
                                 "reverted\" "
     "{K}=\"{V}\" reverted_from=\"{O}\""),
    ("tool", "later-output", "", "$ curl -s https://config.internal/v1/services/{S} | jq "
                                 ".{K}\n\"{V}\""),
    ("tool", "later-output", "", "$ kubectl get deploy {S} -n prod -L {K}\nNAME   READY   AGE   "
                                 "{KU}\n"
     "{S}   {n}/{n}   {n}m   {V}"),
    ("tool", "later-output", "", "platform=> SELECT name, {K} FROM service_settings WHERE name = "
                                 "'{S}';\n"
     "   name    | {K}\n-----------+-----\n {S} | {V}\n(1 row)"),
    ("tool", "ticket-status", "", "$ jira issue view OPS-{nnn}\nOPS-{nnn}  {S}: {A} {O}\n"
     "Status: Won't Do (was: In Progress)\nLatest comment ({who}): going with {V}, see the ops "
     "sheet."),
    ("tool", "ticket-status", "", "$ gh issue view {nnn}\ntitle:  {S}: use {V} for {A}\nstate:  "
                                  "OPEN\n"
     "--\nSupersedes #{nn}, which proposed {O} and was closed."),
    ("tool", "migration", "", "$ alembic upgrade head\nINFO  [alembic.runtime.migration] Running "
                              "upgrade "
     "{sha7} -> {sha7}, {S} {K}\nUPDATE service_settings SET {K} = '{V}' WHERE name = '{S}';"),
    ("tool", "migration", "", "-- migrations/{nnn}_{K}.sql\nUPDATE service_settings\n   SET {K} = "
                              "'{V}'\n"
     " WHERE name = '{S}';  -- {O} caused the outage of {date}"),
    ("tool", "terraform-drift", "", "  # module.platform.aws_ssm_parameter.{K} will be modified "
                                    "in-place\n"
     "  ~ resource \"aws_ssm_parameter\" \"{K}\" {\n        name  = \"/{S}/{K}\"\n"
     "      ~ value = \"{O}\" -> \"{V}\"\n    }\n\nPlan: 0 to add, 1 to change, 0 to destroy."),
    ("tool", "renamed-field", "", "$ git log -1 -p -- config/{S}.yaml\n    config: rename "
                                  "legacy_{K} to {K}\n"
     "-legacy_{K}: \"{O}\"\n+{K}: \"{V}\""),
    ("tool", "changelog-fix", "", "## [{n}.{n}.{n}] - {date}\n### Fixed\n- {S}: {A} goes back to "
                                  "`{V}`; "
     "`{O}` shipped by mistake in the previous release."),
    ("tool", "table-edit", "", "$ git diff -U0 docs/services.md\n-| {S} | {O} |\n+| {S} | {V} |"),
    ("tool", "deprecation", "", "WARNING: {A} {O} for {S} is deprecated and ignored since {date}; "
     "effective value: {V}"),
    ("user", "scratch-that", "", "scratch that - {SAY}. I mixed it up with another service"),
    ("user", "scratch-that", "", "wait no. ignore what I said about {S}, {SAY}"),
    ("user", "teammate-off", "", "{who} just told me the {O} plan for {S} is off. {SAY}"),
    ("user", "teammate-off", "", "ops pushed back: {A} for {S} goes to {V}. the earlier value is "
                                 "dead"),
    ("user", "date-slip", "deadline", "bad news, {S} slipped. it's {V} at the earliest"),
    ("user", "date-slip", "deadline", "{S} moved to {V}, the board wants more testing. {O} is not "
                                      "happening"),
    ("user", "handover", "owner", "{S} moved over to {V} this morning, {O} is on another team "
                                  "from monday"),
    ("user", "handover", "owner", "oh and {V} took over {S}, ping them not the old owner"),
    ("user", "typo", "", "ugh, {O} was a typo on my side. {A} for {S} is {V}"),
    ("user", "typo", "", "my bad, the sheet was stale: {SAY}"),
    ("user", "pasted-email", "", "> From: {who}\n> Subject: Re: {S}\n> Sorry all, we are "
                                 "reverting to "
     "{V} for the {A}; {O} broke the canary.\n\nfyi"),
    ("user", "reversal", "", "after the incident review we are going back: {SAY}. forget {O}"),
    ("user", "reversal", "", "they rolled it back. {A} for {S} = {V} again"),
    ("user", "correction-explicit", "", "correction: {SAY}, not {O}"),
    ("user", "correction-explicit", "", "actually {A} for {S} is {V} now"),
    ("assistant", "recheck", "", "I re-read the config: {S} uses {V} as its {A}, not {O} as I "
                                 "wrote "
     "earlier."),
    ("assistant", "recheck", "", "Looking again at the output, {SAY}. My earlier note was wrong."),
    ("assistant", "table-edit", "", "Revised table:\n\n| service | {a} |\n|---|---|\n«| {s} | {v} "
                                    "|\n»"
     "(the {S} row reflects your last message)"),
    ("assistant", "table-edit", "", "| item | value |\n|---|---|\n| {A} of {S} | ~~{O}~~ {V} |\n"
     "| tests | failing |"),
    ("assistant", "plan-revision", "", "Revised plan: step 2 keeps {S} on {V} for the {A} (the {O} "
     "idea is dropped); the other steps stay."),
    ("assistant", "plan-revision", "", "Given your last message, I'm dropping {O}. {SAY}."),
    ("assistant", "status-report", "", "Status: reverted my edit to {S}. {A}: {V} (was {O})."),
    ("assistant", "status-report", "", "Done: rolled back the {A} on {S} to {V}; the tests pass "
                                       "again."),
    ("assistant", "superseded-note", "", "Noting that this supersedes what I had before: {SAY}."),
    ("assistant", "handover", "owner", "Heads-up: {S} is with {V} from today; {O} handed it over."),
    ("assistant", "date-slip", "deadline", "The date moved: {S} is {V}, later than we planned."),
    ("assistant", "correction-explicit", "", "Correction to my summary: {SAY}."),
    ("assistant", "correction-explicit", "", "Updated: {A} for {S} is {V}."),
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Template:
    """One way a fact is written: by whom (``voice``), in what surface ``style``, for which
    kinds (every kind when empty), and whether it supersedes an earlier value (``fix``)."""

    name: str
    voice: str
    style: str
    kinds: tuple[str, ...]
    body: str
    fix: bool = False

    def fits(self, kind: str) -> bool:
        return not self.kinds or kind in self.kinds


def _templates() -> tuple[tuple[Template, ...], tuple[Template, ...]]:
    base: list[Template] = []
    fixes: list[Template] = []
    seen: Counter[str] = Counter()

    def add(
        into: list[Template], voice: str, style: str, kinds: str, body: str, *, fix: bool
    ) -> None:
        stem = f"{voice}-{style}"
        seen[stem] += 1
        into.append(Template(f"{stem}-{seen[stem]}", voice, style, tuple(kinds.split()), body, fix))

    for voice, rows in (("tool", TOOL), ("user", USER), ("assistant", ASSISTANT)):
        for style, kinds, body in rows:
            add(base, voice, style, kinds, body, fix=False)
    for voice, style, kinds, body in FIXES:
        add(fixes, voice, f"fix-{style}", kinds, body, fix=True)
    return tuple(base), tuple(fixes)


BASE_TEMPLATES, FIX_TEMPLATES = _templates()
TEMPLATES = {t.name: t for t in (*BASE_TEMPLATES, *FIX_TEMPLATES)}

# -- rendering --------------------------------------------------------------------------------

_NAME = re.compile(r"\{([A-Za-z]+[0-9]?)\}")
_ROWS = re.compile(r"«(.*?)»", re.DOTALL)
_ROW_FIELDS = frozenset(("s", "v", "su"))  # outside a block {k} {a} {ku} are the fact's
Segments = list[tuple[str, bool]]  # (text, whether it is one of the fact's own values)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass(frozen=True, slots=True)
class Fact:
    """A drawn fact: its subject, key and attribute words, value and keep strings."""

    kind: str
    subject: str
    key: str
    attr: str
    value: str
    keep: tuple[str, ...]


def _noise(rng: random.Random, name: str) -> str | None:
    """A fresh value of the noise field ``name`` (``None``: not a noise field)."""
    makers: dict[str, Callable[[], str]] = {
        "n": lambda: str(rng.randint(1, 9)),
        "nn": lambda: str(rng.randint(10, 99)),
        "nnn": lambda: str(rng.randint(100, 999)),
        "date": lambda: _date(rng, 2026),
        "ts": lambda: (
            f"{_date(rng, 2026)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
            f"{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z"
        ),
        "tsl": lambda: (
            f"{_date(rng, 2026)} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
            f"{rng.randint(0, 59):02d},{rng.randint(0, 999):03d}"
        ),
        "sha": lambda: f"{rng.getrandbits(160):040x}",
        "sha7": lambda: f"{rng.getrandbits(28):07x}",
        "ms": lambda: f"{rng.randint(3, 999)}ms",
        "who": lambda: f"{rng.choice(FIRST)} {rng.choice(LAST)}",
        "handle": lambda: f"{rng.choice(FIRST).lower()}.{rng.choice(LAST).lower()[:3]}",
        "day": lambda: rng.choice(DAYS),
        "mon": lambda: rng.choice(MONTHS),
        "dd": lambda: f"{rng.randint(1, 28):02d}",
        "hh": lambda: f"{rng.randint(0, 23):02d}",
        "mm": lambda: f"{rng.randint(0, 59):02d}",
        "ss": lambda: f"{rng.randint(0, 59):02d}",
        "pid": lambda: str(rng.randint(300, 65000)),
    }
    maker = makers.get(name)
    return maker() if maker else None


def _upper(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", name).upper().strip("_")


def _fill(text: str, lookup: Callable[[str], Segments | None]) -> Segments:
    """``text`` with each known ``{name}`` replaced by what ``lookup`` gives; unknown names and
    other braces stay as written."""
    out: Segments = []
    pos = 0
    for match in _NAME.finditer(text):
        got = lookup(match.group(1))
        if got is None:
            continue
        out.append((text[pos : match.start()], False))
        out.extend(got)
        pos = match.end()
    out.append((text[pos:], False))
    return out


def _render(
    rng: random.Random,
    template: Template,
    fact: Fact,
    old: Fact | None,
    rows: Sequence[tuple[str, str, str, str]],
) -> Segments:
    """The segments of ``template`` written for ``fact`` (superseding ``old``), with
    ``rows`` (subject, key, attribute, value) as the distractors of its block of rows."""
    cached: dict[str, str] = {}
    claim = rng.choice(KINDS[fact.kind].claims)

    def noise(name: str) -> Segments | None:
        if name[-1].isdigit():
            if name not in cached:
                made = _noise(rng, name[:-1])
                if made is None:
                    return None
                cached[name] = made
            return [(cached[name], False)]
        made = _noise(rng, name)
        return None if made is None else [(made, False)]

    def outer(name: str) -> Segments | None:
        fields: dict[str, Segments] = {
            "S": [(fact.subject, True)],
            "V": [(fact.value, True)],
            "K": [(fact.key, False)],
            "A": [(fact.attr, False)],
            "KU": [(_upper(fact.key), False)],
            "k": [(fact.key, False)],
            "a": [(fact.attr, False)],
            "ku": [(_upper(fact.key), False)],
            "SU": [(_upper(fact.subject), False)],
            "N": [(str(len(rows) + 1), False)],
        }
        if old is not None:
            fields["O"] = [(old.value, True)]
        if name == "SAY":
            return _fill(claim, outer)
        if name in _ROW_FIELDS:
            raise AbridgedError("a row field outside a block of rows", template=template.name)
        return fields[name] if name in fields else noise(name)

    match = _ROWS.search(template.body)
    if match is None:
        return _fill(template.body, outer)
    fact_at = rng.randint(0, len(rows))
    block: Segments = []
    distractors = iter(rows)
    for i in range(len(rows) + 1):
        if i == fact_at:
            s, k, a, v, own = fact.subject, fact.key, fact.attr, fact.value, True
        else:
            s, k, a, v = next(distractors)
            own = False

        fields = {"s": (s, own), "v": (v, own), "k": (k, False), "a": (a, False),
                  "su": (_upper(s), False), "ku": (_upper(k), False)}  # fmt: skip

        def row(name: str, fields: dict[str, tuple[str, bool]] = fields) -> Segments | None:
            return [fields[name]] if name in fields else outer(name)

        block.extend(_fill(match.group(1), row))
    before = _fill(template.body[: match.start()], outer)
    after = _fill(template.body[match.end() :], outer)
    return [*before, *block, *after]


def _clashes(text: str, keeps: Sequence[str]) -> bool:
    return any(k in text for k in keeps)


def _related(a: str, b: str) -> bool:
    return a in b or b in a


# -- planning: which template and kind each canary of a session gets --------------------------


@dataclass(frozen=True, slots=True)
class Slot:
    """A part of a session's set: a lone fact, a pair that both hold, or a correction chain
    (the first template writes the fact, the others its corrections)."""

    shape: str  # "single", "pair", "chain"
    kind: str
    templates: tuple[Template, ...]


def _take(
    rng: random.Random, queue: deque[Template], pool: Sequence[Template], kind: str | None
) -> Template:
    """The first template of ``queue`` that fits ``kind`` (any when ``None``), refilling the
    queue with a fresh shuffle of ``pool`` when none does."""
    for _ in range(2):
        for i, template in enumerate(queue):
            if kind is None or template.fits(kind):
                del queue[i]
                return template
        queue.extend(rng.sample(list(pool), len(pool)))
    raise AbridgedError("no template fits the kind", kind=kind)


def _least(
    rng: random.Random, kinds: Sequence[str], voice: str, used: Counter[tuple[str, str]]
) -> str:
    """The kind of ``kinds`` written least often in ``voice`` so far (ties broken at random)."""
    low = min(used[(k, voice)] for k in kinds)
    return rng.choice([k for k in kinds if used[(k, voice)] == low])


def _session_slots(
    rng: random.Random,
    count: int,
    base: deque[Template],
    fixes: deque[Template],
    used: Counter[tuple[str, str]],
) -> list[Slot]:
    pairs = max(1, round(count * rng.uniform(0.17, 0.25) / 2))
    corrections = max(1, round(count / 6))
    chains: list[int] = []  # corrections per chain
    while corrections > 0:
        two = corrections >= 2 and count >= 12 and rng.random() < 0.25
        chains.append(2 if two else 1)
        corrections -= chains[-1]
    singles = count - 2 * pairs - sum(1 + c for c in chains)
    slots: list[Slot] = []
    for corrections_in_chain in chains:
        first_fix = _take(rng, fixes, FIX_TEMPLATES, None)
        kind = _least(rng, first_fix.kinds or ALL_KINDS, first_fix.voice, used)
        written = [_take(rng, base, BASE_TEMPLATES, kind), first_fix]
        written += [_take(rng, fixes, FIX_TEMPLATES, kind) for _ in range(corrections_in_chain - 1)]
        for t in written:
            used[(kind, t.voice)] += 1
        slots.append(Slot("chain", kind, tuple(written)))
    for shape in ["pair"] * pairs + ["single"] * singles:
        template = _take(rng, base, BASE_TEMPLATES, None)
        kind = _least(rng, template.kinds or ALL_KINDS, template.voice, used)
        used[(kind, template.voice)] += 1 + (shape == "pair")
        slots.append(Slot(shape, kind, (template,)))
    return slots


def plan(seed: int, count: int, variant: int) -> list[Slot]:
    """The slots of session ``variant``: planned with the other sessions of its block of
    ``SESSIONS_PER_PLAN``, so that the block uses every template and every kind x voice."""
    block, index = divmod(variant, SESSIONS_PER_PLAN)
    rng = random.Random(f"heldout-c/plan/{seed}/{count}/{block}")
    base = deque(rng.sample(list(BASE_TEMPLATES), len(BASE_TEMPLATES)))
    fixes = deque(rng.sample(list(FIX_TEMPLATES), len(FIX_TEMPLATES)))
    used: Counter[tuple[str, str]] = Counter()
    for i in range(SESSIONS_PER_PLAN):
        slots = _session_slots(rng, count, base, fixes, used)
        if i == index:
            return slots
    raise AssertionError("unreachable: index < SESSIONS_PER_PLAN")


# -- drawing a session's set ------------------------------------------------------------------


class _RedrawError(Exception):
    """This attempt drew values that clash; the caller starts over from another seed."""


@dataclass(slots=True)
class _Draft:
    """A canary before ids are given: its fact, template, and the drafts it relates to."""

    fact: Fact
    template: Template
    at: float
    supersedes: _Draft | None = None
    coexists: _Draft | None = None
    text: str = ""


class _Drawer:
    """Draws the facts and texts of one set, keeping every keep string apart from every
    other fact's names and from the distractors."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.words = rng.sample(WORDS, len(WORDS))
        self.keeps: list[str] = []

    def _fresh(self, value: str) -> bool:
        return not any(_related(value, k) for k in self.keeps)

    def fact(self, kind: str, key: str | None = None) -> Fact:
        word = self.words.pop()
        for _ in range(30):
            subject, fact_key, attr, value = KINDS[kind].draw(self.rng, word, key)
            keep = KINDS[kind].keep(subject, value)
            if all(self._fresh(k) for k in keep):
                self.keeps.extend(keep)
                return Fact(kind, subject, fact_key, attr, value, keep)
        raise _RedrawError

    def successor(self, fact: Fact) -> Fact:
        """The same subject and key as ``fact`` with another value."""
        word = fact.subject.split("-")[0].split("_")[0].split(" ")[0]
        for _ in range(60):
            value = KINDS[fact.kind].draw(self.rng, word, fact.key)[3]
            if value != fact.value and self._fresh(value):
                self.keeps.append(value)
                keep = KINDS[fact.kind].keep(fact.subject, value)
                return Fact(fact.kind, fact.subject, fact.key, fact.attr, value, keep)
        raise _RedrawError

    def rows(self, fact: Fact, count: int) -> list[tuple[str, str, str, str]]:
        """``count`` distractors of ``fact``'s kind, on words no fact owns."""
        out: list[tuple[str, str, str, str]] = []
        seen = {fact.value, fact.subject}
        for _ in range(count * 20):
            if len(out) == count:
                break
            subject, key, attr, value = KINDS[fact.kind].draw(
                self.rng, self.rng.choice(self.words), None
            )
            if (
                value in seen
                or subject in seen
                or _clashes(subject, self.keeps)
                or _clashes(value, self.keeps)
            ):
                continue
            seen |= {value, subject}
            out.append((subject, key, attr, value))
        return out

    def write(self, draft: _Draft) -> str:
        template, fact = draft.template, draft.fact
        old = draft.supersedes.fact if draft.supersedes else None
        for _ in range(25):
            rows = self.rows(fact, self.rng.randint(3, 7)) if "«" in template.body else []
            segments = _render(self.rng, template, fact, old, rows)
            text = "".join(t for t, _ in segments)
            missing = [k for k in fact.keep if k not in text]
            if missing:
                raise AbridgedError(
                    "template does not write the keep strings", template=template.name,
                    missing=missing,
                )  # fmt: skip
            masked = "".join("\x00" if own else t for t, own in segments)
            if not _clashes(masked, self.keeps):
                return text
        raise _RedrawError


def _at(rng: random.Random, low: float, high: float) -> float:
    return round(rng.uniform(low, high), 3)


def _draft(slots: Sequence[Slot], rng: random.Random) -> list[_Draft]:
    drawer = _Drawer(rng)
    drafts: list[_Draft] = []
    for slot in slots:
        if slot.shape == "single":
            drafts.append(_Draft(drawer.fact(slot.kind), slot.templates[0], _at(rng, 0.02, 0.92)))
        elif slot.shape == "pair":
            first = drawer.fact(slot.kind)
            one = _Draft(first, slot.templates[0], _at(rng, 0.02, 0.92))
            two = _Draft(drawer.fact(slot.kind, first.key), slot.templates[0], _at(rng, 0.02, 0.92))
            one.coexists, two.coexists = two, one
            drafts += [one, two]
        else:
            head = _Draft(drawer.fact(slot.kind), slot.templates[0], _at(rng, 0.02, 0.5))
            drafts.append(head)
            for template in slot.templates[1:]:
                prev = drafts[-1]
                at = min(0.99, round(prev.at + rng.uniform(0.08, 0.3), 3))
                if at <= prev.at:
                    raise _RedrawError
                drafts.append(_Draft(drawer.successor(prev.fact), template, at, supersedes=prev))
    for draft in drafts:
        draft.text = drawer.write(draft)
    return drafts


def _as_dicts(drafts: Sequence[_Draft]) -> list[dict[str, Any]]:
    ordered = sorted(drafts, key=lambda d: d.at)
    ids = {id(d): f"c{i:02d}" for i, d in enumerate(ordered, 1)}
    return [
        {
            "id": ids[id(d)],
            "kind": d.fact.kind,
            "at": d.at,
            "text": d.text,
            "keep": list(d.fact.keep),
            "supersedes": ids[id(d.supersedes)] if d.supersedes else None,
            "style": d.template.style,
            "template": d.template.name,
            "coexists": ids[id(d.coexists)] if d.coexists else None,
            "voice": d.template.voice,
        }
        for d in ordered
    ]


def generate(seed: int, count: int = 24, variant: int = 0) -> list[dict[str, Any]]:
    """``count`` canaries for session ``variant`` of ``seed``: the same arguments give the same
    set; a set that fails ``check`` is drawn again from a derived seed."""
    if count < MIN_COUNT:
        raise SettingError("count", count, f"at least {MIN_COUNT}")
    slots = plan(seed, count, variant)
    for attempt in range(200):
        rng = random.Random(f"heldout-c/values/{seed}/{count}/{variant}/{attempt}")
        try:
            canaries = _as_dicts(_draft(slots, rng))
        except _RedrawError:
            continue
        if not check(canaries):
            return canaries
    raise AbridgedError("no valid canary set", seed=seed, count=count, variant=variant)


# -- validation -------------------------------------------------------------------------------


def _chains(canaries: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each canary id to the id of the first canary of its correction chain."""
    parent = {str(c["id"]): c.get("supersedes") for c in canaries}

    def root(cid: str) -> str:
        seen: set[str] = set()
        while parent.get(cid) in parent and cid not in seen:
            seen.add(cid)
            cid = str(parent[cid])
        return cid

    return {cid: root(cid) for cid in parent}


def check(canaries: Sequence[Mapping[str, Any]]) -> list[str]:
    """What is wrong with a set of canaries (empty when it is valid)."""
    problems: list[str] = []
    ids = [str(c["id"]) for c in canaries]
    problems += [f"duplicate id {i}" for i in sorted({i for i in ids if ids.count(i) > 1})]
    by_id = {str(c["id"]): c for c in canaries}
    for c in canaries:
        cid, text, keep = str(c["id"]), str(c["text"]), [str(k) for k in c["keep"]]
        if not 0 <= float(c["at"]) < 1:
            problems.append(f"{cid}: at {c['at']} is outside [0, 1)")
        if c.get("voice") not in VOICES:
            problems.append(f"{cid}: voice {c.get('voice')!r} is not one of {VOICES}")
        if not keep:
            problems.append(f"{cid}: no keep strings")
        problems += [f"{cid}: keep {k!r} is shorter than 4" for k in keep if len(k) < 4]
        problems += [f"{cid}: keep {k!r} is not in its text" for k in keep if k not in text]
        sup = c.get("supersedes")
        if sup is not None:
            old = by_id.get(str(sup))
            if old is None:
                problems.append(f"{cid}: supersedes unknown {sup}")
            else:
                if float(old["at"]) >= float(c["at"]):
                    problems.append(f"{cid}: supersedes {sup} but is not later")
                if old["kind"] != c["kind"]:
                    problems.append(f"{cid}: supersedes {sup} of another kind")
                if set(old["keep"]) == set(keep):
                    problems.append(f"{cid}: supersedes {sup} with the same keep set")
                gone = set(old["keep"]) - set(keep)
                problems += [
                    f"{cid}: superseded {o!r} and {n!r} contain one another (stale is unseen)"
                    for o in sorted(gone)
                    for n in keep
                    if _related(o, n)
                ]
        mate = c.get("coexists")
        if mate is not None:
            other = by_id.get(str(mate))
            if other is None or other.get("coexists") != cid or mate == cid:
                problems.append(f"{cid}: coexists with {mate}, which does not name it back")
            elif (other["kind"], other.get("template")) != (c["kind"], c.get("template")):
                problems.append(f"{cid}: coexists with {mate} of another kind or template")
            elif set(other["keep"]) == set(keep):
                problems.append(f"{cid}: coexists with {mate} holding the same keep strings")
    chain = _chains(canaries)
    for c in canaries:
        for d in canaries:
            if chain[str(c["id"])] == chain[str(d["id"])]:
                continue
            problems += [
                f"{c['id']}: keep {k!r} occurs in the text of {d['id']}"
                for k in c["keep"]
                if k in d["text"]
            ]
    return problems
