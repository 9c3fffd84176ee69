"""A second held-out canary generator: facts written as real agent sessions carry them.

    python bench/retention.py --generator bench/heldout_canaries_b.py --seed S --no-results

Written on 2026-12-01 by a helper session under strict blindness: without reading the
summarizer (``src/abridged/engine/summarize/``), the default generator
(``bench/canary_generator.py``), the first held-out generator (``bench/heldout_canaries.py``),
the fixed canary files or the retention results; only the contract in ``bench/retention.py``
(the ``Canary`` fields and the scoring rules) was read.

``generate(seed, count, variant)`` returns ``count`` canaries (dicts of the ``Canary`` fields,
plus ``voice``: who the text is written as, ``user``, ``assistant`` or ``tool``). Each canary is
one template of one kind (``KINDS``) filled with values drawn fresh from ``(seed, variant)``:
made-up service, package and person names, ports, versions, hosts, paths, ids, dates. Templates
look like tool output (kubectl, terraform, psql, curl -i, pytest, jest, grep -n, git, CSV, .env,
compose, manifests, logs), user messages (chat, pasted Slack, tickets, e-mails) or assistant
messages (plans, hand-offs, markdown tables), and carry distractors: neighbouring values that are
not the fact. A set holds single facts, pairs of facts of one template and kind about two
subjects that both stay true (``coexists``), and facts later corrected (``supersedes``) by a
correction template: mostly a later tool output, teammate message, revert, rename or quiet
restatement. ``check`` validates a set against the contract; ``generate`` retries (with a
derived seed) until its set passes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

VOICES = ("user", "assistant", "tool")

# -- values -----------------------------------------------------------------------------------

_ONSETS: tuple[str, ...] = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v")
_ONSETS += ("z", "br", "dr", "kl", "tr", "sk", "st", "gr", "pl", "sv", "zh", "th")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou", "ea", "y")
_CODAS = ("", "", "n", "r", "l", "s", "x", "k", "m", "th")
PEOPLE: tuple[str, ...] = (
    "dana",
    "oskar",
    "priya",
    "mateo",
    "ines",
    "kofi",
    "sanne",
    "tomas",
    "yuki",
    "amara",
)
PEOPLE += ("felix", "noor", "bart", "lucia", "hamid", "greta")


class Draw:
    """Fresh values for one attempt: a seeded ``rng`` and the tokens already handed out, so that
    no value is part of an earlier one (a keep string must not occur by accident)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.taken: list[str] = []

    def fresh(self, make: Callable[[], str]) -> str:
        for _ in range(200):
            token = make()
            # a value may contain a name handed out (a host holds its org); ``check`` catches
            # the rest
            if not any(token in t for t in self.taken):
                self.taken.append(token)
                return token
        raise RuntimeError("no fresh value")  # pragma: no cover - the spaces are large

    def syllables(self, syllables: tuple[int, int] = (2, 3)) -> str:
        """A made-up word (not taken: for a value that ``fresh`` takes whole)."""
        r = self.rng
        n = r.randint(*syllables)
        w = "".join(r.choice(_ONSETS) + r.choice(_VOWELS) for _ in range(n)) + r.choice(_CODAS)
        return w if len(w) >= 5 else w + "vo"

    def word(self, syllables: tuple[int, int] = (2, 3)) -> str:
        return self.fresh(lambda: self.syllables(syllables))

    def num(self, lo: int, hi: int) -> str:
        return self.fresh(lambda: str(self.rng.randint(lo, hi)))

    def hexid(self, n: int) -> str:
        return self.fresh(lambda: "".join(self.rng.choice("0123456789abcdef") for _ in range(n)))

    def pick(self, options: Sequence[str]) -> str:
        return self.rng.choice(list(options))


def _common(d: Draw) -> dict[str, Any]:
    """Fields every template may use: people, times, small numbers (none of them a fact)."""
    r = d.rng
    day, hour, minute = r.randint(2, 28), r.randint(6, 22), r.randint(0, 59)
    who, who2 = r.sample(PEOPLE, 2)
    return {
        "who": who,
        "who2": who2,
        "ts": f"2026-11-{day:02d}T{hour:02d}:{minute:02d}:{r.randint(0, 59):02d}Z",
        "ts2": f"2026-11-{day:02d}T{hour:02d}:{minute:02d}:{r.randint(0, 59):02d}Z",
        "hm": f"{hour:02d}:{minute:02d}",
        "date": f"2026-11-{day:02d}",
        "env": r.choice(("staging", "prod-eu", "dev", "qa", "prod-us")),
        "ns": d.word((2, 2)),
        "org": d.word((2, 2)),
        "ip": f"10.{r.randint(1, 250)}.{r.randint(1, 250)}.{r.randint(2, 250)}",
        "ip2": f"10.{r.randint(1, 250)}.{r.randint(1, 250)}.{r.randint(2, 250)}",
        "age": r.randint(2, 90),
        "age2": r.randint(2, 90),
        "pid": r.randint(200, 9000),
        "pr": r.randint(100, 990),
        "ghn": r.randint(10, 99),
        "run": r.randint(100, 990),
        "n1": r.randint(2, 9),
        "n2": r.randint(11, 60),
        "n3": r.randint(61, 99),
        "l1": r.randint(12, 99),
        "l2": r.randint(101, 400),
        "pod": "".join(r.choice("bcdfghjkmnpqrstvwxz") for _ in range(5)),
        "sha_d": d.hexid(7),
        "sha_d2": d.hexid(7),
        "title": r.choice(
            (
                "Retry batch upload on 429",
                "Flaky sync test on CI",
                "Drop legacy session cookie",
                "Import stalls on large files",
                "Paginate the export endpoint",
            )
        ),
    }


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# Each kind: whether its subject is a keep string (a name the value belongs to), a draw of the
# subject (and the fields that go with it) and a draw of the value (and its distractors).
Fields = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    subject_kept: bool
    subject: Callable[[Draw, Fields], Fields]
    value: Callable[[Draw, Fields], Fields]

    def keep(self, f: Fields) -> tuple[str, ...]:
        return (f["subject"], f["value"]) if self.subject_kept else (f["value"],)


def _proj(d: Draw, f: Fields) -> Fields:
    proj = d.word((2, 2))
    return {"proj": proj, "PROJ": proj.upper(), "s2": d.word((2, 2)), "subject": ""}


def _port_subject(d: Draw, f: Fields) -> Fields:
    suffix = ("api", "gateway", "worker", "ingest", "billing", "search", "notifier", "sync")
    svc, s2 = d.word() + "-" + d.pick(suffix), d.word() + "-" + d.pick(suffix)
    return {"subject": svc, "s2": s2, "SUBJ": svc.upper().replace("-", "_"),
            "S2": s2.upper().replace("-", "_"), "what": f"the port of {svc}"}  # fmt: skip


def _port_value(d: Draw, f: Fields) -> Fields:
    return {"value": d.num(20000, 64999), "v2": d.num(20000, 64999)}


def _host_subject(d: Draw, f: Fields) -> Fields:
    out = _proj(d, f)
    out["what"] = f"the {out['proj']} primary database host"
    out["db"] = out["proj"] + "_main"
    return out


def _host_value(d: Draw, f: Fields) -> Fields:
    r = d.rng
    region = r.choice(("eu-west-2", "us-east-1", "ap-south-1", "eu-central-1"))

    def host() -> str:
        pre = r.choice(("pg", "db", "pgsql", "mysql"))
        return f"{pre}-{d.syllables((2, 2))}-{r.randint(1, 39):02d}.{region}.{f['org']}.internal"

    return {"value": d.fresh(host), "v2": d.fresh(host)}


def _version_subject(d: Draw, f: Fields) -> Fields:
    suffix = ("client", "sdk", "core", "utils", "parser", "codec")
    pkg, s2 = d.word() + "-" + d.pick(suffix), d.word() + "-" + d.pick(suffix)
    return {"subject": pkg, "s2": s2, "proj": d.word((2, 2)),
            "what": f"the pinned version of {pkg}"}  # fmt: skip


def _version_value(d: Draw, f: Fields) -> Fields:
    r = d.rng

    def version() -> str:
        return f"{r.randint(2, 19)}.{r.randint(10, 89)}.{r.randint(100, 999)}"

    return {"value": d.fresh(version), "v2": d.fresh(version), "v3": d.fresh(version)}


_PURPOSES = {
    "retry handler": "retry",
    "schema": "schema",
    "fixture": "fixtures",
    "config loader": "config",
    "rate limiter": "limiter",
    "exporter": "export",
}


def _path_subject(d: Draw, f: Fields) -> Fields:
    out = _proj(d, f)
    purpose = d.pick(list(_PURPOSES))
    out.update(purpose=purpose, func=d.word((2, 2)) + "_" + _PURPOSES[purpose], w2=d.word((2, 2)))
    out["what"] = f"the file that holds the {out['proj']} {purpose}"
    return out


def _path_value(d: Draw, f: Fields) -> Fields:
    r = d.rng
    slug = _PURPOSES[f["purpose"]]

    def path() -> str:
        top = r.choice(("services", "src", "pkg", "apps", "lib"))
        sub = r.choice(("internal", "core", "handlers", "jobs", "adapters"))
        ext = r.choice(("py", "go", "ts", "rs"))
        return f"{top}/{f['proj']}/{sub}/{d.syllables((2, 2))}_{slug}.{ext}"

    return {"value": d.fresh(path), "v2": d.fresh(path)}


def _ticket_subject(d: Draw, f: Fields) -> Fields:
    out = _proj(d, f)
    out.update(key=d.word((2, 2))[:4].upper(), what="the ticket this work is tracked under")
    out["slug"] = f["title"].lower().replace(" ", "-")[:24]
    return out


def _ticket_value(d: Draw, f: Fields) -> Fields:
    key = f["key"]
    return {"value": d.fresh(lambda: f"{key}-{d.rng.randint(1000, 99999)}"),
            "v2": d.fresh(lambda: f"{key}-{d.rng.randint(1000, 99999)}")}  # fmt: skip


def _revision_subject(d: Draw, f: Fields) -> Fields:
    out = _proj(d, f)
    out["what"] = f"the last known-good {out['proj']} revision"
    return out


def _revision_value(d: Draw, f: Fields) -> Fields:
    return {"value": d.hexid(12), "v2": d.hexid(12)}


_KNOBS = ("BATCH_SIZE", "POOL_MAX", "FLUSH_EVERY", "SHARD_COUNT", "CACHE_TTL_S", "PREFETCH")


def _config_subject(d: Draw, f: Fields) -> Fields:
    proj = d.word((2, 2))
    knob, knob2 = d.rng.sample(_KNOBS, 2)
    key = d.fresh(lambda: f"{proj.upper()}_{knob}")
    s2 = d.fresh(lambda: f"{proj.upper()}_{knob2}")
    return {"subject": key, "S2": s2, "proj": proj, "PROJ": proj.upper(),
            "what": f"the value of {key}"}  # fmt: skip


def _config_value(d: Draw, f: Fields) -> Fields:
    return {"value": d.num(1000, 9999), "v2": d.num(1000, 9999)}


def _command_subject(d: Draw, f: Fields) -> Fields:
    out = _proj(d, f)
    out["what"] = f"the command that runs the {out['proj']} test suite"
    return out


def _command_value(d: Draw, f: Fields) -> Fields:
    r = d.rng

    def command() -> str:
        w = d.syllables((2, 2))
        return r.choice(
            (
                f"make test-{w}",
                f"./scripts/{w}-check.sh --fast",
                f"tox -e {w}",
                f"pnpm --filter {w} test",
                f"just {w}-ci",
            )
        )

    return {"value": d.fresh(command), "v2": d.fresh(command)}


def _constraint_subject(d: Draw, f: Fields) -> Fields:
    out = _proj(d, f)
    out["what"] = "what must not be modified"
    return out


def _constraint_value(d: Draw, f: Fields) -> Fields:
    r = d.rng

    def protected() -> str:
        w = d.syllables((2, 2))
        return r.choice(
            (
                f"vendor/{w}/",
                f"release/{w}-{r.randint(2, 9)}",
                f"migrations/{r.randint(10, 999):04d}_{w}.sql",
                f"{w}_ledger",
            )
        )

    return {"value": d.fresh(protected), "v2": d.fresh(protected)}


def _owner_subject(d: Draw, f: Fields) -> Fields:
    out = _proj(d, f)
    out["what"] = f"the reviewer for {out['proj']} changes"
    return out


def _owner_value(d: Draw, f: Fields) -> Fields:
    def handle() -> str:
        return f"@{d.rng.choice(PEOPLE)}.{d.syllables((2, 2))}"

    return {"value": d.fresh(handle), "v2": d.fresh(handle)}


def _deadline_subject(d: Draw, f: Fields) -> Fields:
    out = _proj(d, f)
    out["what"] = f"the {out['proj']} cutover date"
    return out


def _deadline_value(d: Draw, f: Fields) -> Fields:
    r = d.rng

    def day() -> str:
        return f"{r.randint(2027, 2028)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"

    return {"value": d.fresh(day), "v2": d.fresh(day)}


_LIMITS = {
    "timeout_ms": "request timeout (ms)",
    "max_rows": "row limit per export",
    "rate_per_min": "rate limit per minute",
    "max_body_bytes": "request body limit",
}


def _limit_subject(d: Draw, f: Fields) -> Fields:
    out = _proj(d, f)
    lkey, lkey2 = d.rng.sample(list(_LIMITS), 2)
    out.update(lkey=lkey, lkey2=lkey2, label=_LIMITS[lkey])
    out["what"] = f"the {out['proj']} {_LIMITS[lkey]}"
    return out


def _limit_value(d: Draw, f: Fields) -> Fields:
    return {"value": d.num(10000, 99999), "v2": d.num(10000, 99999)}


def _decision_subject(d: Draw, f: Fields) -> Fields:
    out = _proj(d, f)
    out["role"] = d.pick(("queue", "cache", "ORM", "HTTP client", "feature-flag"))
    out["what"] = f"the {out['role']} library we settled on for {out['proj']}"
    out["ver"] = f"{d.rng.randint(1, 9)}.{d.rng.randint(0, 20)}.0"
    return out


def _decision_value(d: Draw, f: Fields) -> Fields:
    def lib() -> str:
        return d.syllables((2, 2)) + d.rng.choice(("db", "mq", "kit", "flow", "io", "js"))

    return {"value": d.fresh(lib), "v2": d.fresh(lib)}


def _error_subject(d: Draw, f: Fields) -> Fields:
    out = _proj(d, f)
    out["what"] = f"the error code the failing {out['proj']} job reports"
    out["pfx"] = d.word((2, 2))[:3].upper()
    return out


def _error_value(d: Draw, f: Fields) -> Fields:
    pfx = f["pfx"]

    def code() -> str:
        n = d.rng.randint(10000, 99999)
        return d.rng.choice((f"{pfx}-{n}", f"E_{pfx}_{n}"))

    return {"value": d.fresh(code), "v2": d.fresh(code)}


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("port", True, _port_subject, _port_value),
        Kind("host", False, _host_subject, _host_value),
        Kind("version", True, _version_subject, _version_value),
        Kind("path", False, _path_subject, _path_value),
        Kind("ticket", False, _ticket_subject, _ticket_value),
        Kind("revision", False, _revision_subject, _revision_value),
        Kind("config", True, _config_subject, _config_value),
        Kind("command", False, _command_subject, _command_value),
        Kind("constraint", False, _constraint_subject, _constraint_value),
        Kind("owner", False, _owner_subject, _owner_value),
        Kind("deadline", False, _deadline_subject, _deadline_value),
        Kind("limit", False, _limit_subject, _limit_value),
        Kind("decision", False, _decision_subject, _decision_value),
        Kind("error", False, _error_subject, _error_value),
    )
}


# -- templates ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Template:
    """One way of writing a fact (or a correction, ``kind=None`` for any kind): ``text`` is a
    ``str.format`` pattern over the fields of its kind; ``renames`` corrections change the
    subject and keep the value."""

    name: str
    kind: str | None
    style: str
    voice: str
    text: str
    renames: bool = False


U, A, T = "user", "assistant", "tool"

_FACT_ROWS: dict[str, list[tuple[str, str, str]]] = {
    "port": [
        (
            "kubectl",
            T,
            "$ kubectl get svc -n {ns}\nNAME          TYPE        CLUSTER-IP   PORT(S)"
            "       AGE\n{s2}   ClusterIP   {ip2}   {v2}/TCP   {age}d\n{subject}   ClusterIP   {ip}"
            "   {value}/TCP   {age2}d",
        ),
        (
            "compose",
            T,
            "services:\n  {subject}:\n    image: registry.{org}.io/{subject}:v{n1}\n"
            '    ports:\n      - "{value}:{value}"\n  {s2}:\n    ports:\n      - "{v2}:8080"',
        ),
        (
            "log",
            T,
            "{ts} INFO  [{subject}] listening on 0.0.0.0:{value} (pid {pid})\n"
            "{ts2} INFO  [{s2}] listening on 0.0.0.0:{v2}",
        ),
        (
            "curl",
            T,
            "$ curl -i http://localhost:{value}/healthz\nHTTP/1.1 200 OK\ncontent-type:"
            ' application/json\nx-served-by: {subject}\n\n{{"status":"ok","service":'
            '"{subject}","uptime_s":{n3}}}',
        ),
        ("dotenv", T, "# {subject}\n{SUBJ}_PORT={value}\n# {s2}\n{S2}_PORT={v2}\nLOG_LEVEL=info"),
        (
            "slack",
            U,
            "pasting from #{ns}:\n> *{who}* {hm}\n> {subject} is on its own box, port"
            " {value}. {s2} stays on {v2}",
        ),
        ("chat", U, "fyi {subject} runs on port {value} locally, not the default one"),
        (
            "issue",
            U,
            'From the bug report: "Repro: start {subject} (port {value}) and POST an'
            ' empty body to /v1/batch."',
        ),
        ("md-table", A, "| service | port |\n|---|---|\n| {subject} | {value} |\n| {s2} | {v2} |"),
        (
            "plan",
            A,
            "Plan: 1) point the integration tests at {subject} on port {value}; 2) rerun"
            " the suite; 3) report back.",
        ),
        (
            "handoff",
            A,
            "Hand-off note: {subject} is served on :{value} in the dev stack, {s2} on :{v2}.",
        ),
    ],
    "host": [
        (
            "psql",
            T,
            '{db}=> \\conninfo\nYou are connected to database "{db}" as user "app"'
            ' on host "{value}" (address "{ip}") at port "5432".',
        ),
        (
            "terraform",
            T,
            'Outputs:\n\n{proj}_db_endpoint = "{value}"\n'
            '{proj}_db_reader_endpoint = "{v2}"\n{proj}_db_port = 5432',
        ),
        (
            "grep",
            T,
            "$ grep -rn DATABASE_HOST deploy/\ndeploy/{env}/values.yaml:{l1}:  "
            "DATABASE_HOST: {value}\ndeploy/{env}/values.yaml:{l2}:  DATABASE_READ_HOST: {v2}",
        ),
        (
            "log",
            T,
            "{ts} WARN pool[{proj}]: reconnecting to {value}:5432 after 3 failures"
            " (replica {v2} healthy)",
        ),
        (
            "kubectl",
            T,
            "$ kubectl describe configmap {proj}-db -n {ns}\nName:         {proj}-db\n"
            "Namespace:    {ns}\n\nData\n====\nhost:\n----\n{value}\nport:\n----\n5432",
        ),
        (
            "chat",
            U,
            "the {proj} db for {env} is {value} - the other one in the wiki is the replica",
        ),
        (
            "issue",
            U,
            'Ticket text: "Move reporting off {v2}. The {proj} primary is {value};'
            ' reporting jobs must read from the replica only."',
        ),
        (
            "prose",
            A,
            "I'll run the migration against {value} (the {proj} primary), not the"
            " reader endpoint {v2}.",
        ),
        ("md-table", A, "| role | host |\n|---|---|\n| primary | {value} |\n| replica | {v2} |"),
        (
            "handoff",
            A,
            "Status for whoever picks this up: {proj} connects to {value}; the"
            " credentials come from the vault path in the README.",
        ),
    ],
    "version": [
        (
            "manifest",
            T,
            '"dependencies": {{\n    "{s2}": "^{v2}",\n    "{subject}":'
            ' "{value}",\n    "react": "^18.2.0"\n  }}',
        ),
        (
            "manifest",
            T,
            '[project]\nname = "{proj}"\ndependencies = [\n  "{s2}>={v2}",\n'
            '  "{subject}=={value}",\n]',
        ),
        (
            "manifest",
            T,
            '[dependencies]\n{subject} = "={value}"\n{s2} = {{ version ='
            ' "{v2}", features = ["derive"] }}',
        ),
        (
            "npm-ls",
            T,
            "$ npm ls {subject}\n{proj}@1.0.0 /srv/app\n└─┬ {s2}@{v2}\n  └── {subject}@{value}",
        ),
        (
            "lockfile",
            T,
            '[[package]]\nname = "{subject}"\nversion = "{value}"\n'
            'description = ""\noptional = false',
        ),
        ("chat", U, "we're stuck on {subject} {value} until the vendor ships a fix, don't bump it"),
        (
            "slack",
            U,
            "> *{who}* {hm}: prod runs {subject}@{value}, that's the one to reproduce against",
        ),
        (
            "prose",
            A,
            "The fix needs {subject} {value}; I've pinned it exactly so the resolver"
            " can't float to {v3}.",
        ),
        (
            "md-table",
            A,
            "| package | version |\n|---|---|\n| {subject} | {value} |\n| {s2} | {v2} |",
        ),
        (
            "plan",
            A,
            "Next: install {subject}=={value} in the venv, rerun the failing import"
            " test, then check that {s2} still resolves.",
        ),
    ],
    "path": [
        (
            "grep",
            T,
            '$ grep -rn "def {func}" .\n./{value}:{l1}:def {func}(self, batch):\n'
            "./{v2}:{l2}:    # {func} is re-exported here",
        ),
        (
            "pytest",
            T,
            "FAILED {value}::test_{func} - AssertionError: assert {n1} == {n2}\n"
            "==== 1 failed, {n3} passed in 4.2s ====",
        ),
        ("git", T, "$ git status --short\n M {value}\n?? {v2}"),
        (
            "jest",
            T,
            "FAIL {value}\n  ● {func} › rejects empty payload\n\n    expect(received)"
            ".toBe(expected)",
        ),
        (
            "stacktrace",
            T,
            'Traceback (most recent call last):\n  File "/srv/{proj}/{value}",'
            " line {l1}, in {func}\n    return self._inner(batch)\nKeyError: '{w2}'",
        ),
        ("chat", U, "the bug is somewhere in {value}, I'm fairly sure, start there"),
        (
            "email",
            U,
            "From {who}: the {purpose} for {proj} is {value}. The copy in {v2} is"
            " dead code, ignore it.",
        ),
        (
            "prose",
            A,
            "Found it: the {proj} {purpose} lives in {value} (line {l1}). The copy"
            " under {v2} is dead code.",
        ),
        (
            "handoff",
            A,
            "## Hand-off\n- edited: {value}\n- not touched yet: {v2}\n- tests: green locally",
        ),
        ("plan", A, "I'll patch {value} first and leave {v2} alone until we know the root cause."),
    ],
    "ticket": [
        (
            "jira",
            T,
            "$ jira issue view {value}\n{value}  [In Progress]  {title}\nAssignee: {who}"
            "  Reporter: {who2}\nLinks: blocks {v2}",
        ),
        (
            "github",
            T,
            "$ gh issue view {ghn}\n{title} #{ghn}\nOpen • {who} opened 2 days ago\n\n"
            "Tracked in Jira as {value}.",
        ),
        (
            "git",
            T,
            "$ git log --oneline -3\n{sha_d} {value}: {title}\n{sha_d2} {v2}: bump deps\n"
            "a1b2c3d Merge pull request #{pr}",
        ),
        (
            "csv",
            T,
            "key,summary,status,points\n{v2},Bump deps,Done,3\n{value},{title},In Progress,5",
        ),
        (
            "git",
            T,
            "$ git branch -a\n* feature/{value}-{slug}\n  main\n  remotes/origin/feature/"
            "{v2}-cleanup",
        ),
        (
            "chat",
            U,
            "please reference {value} in the commit message, the release tooling greps for it",
        ),
        (
            "slack",
            U,
            "> *{who}* {hm}: can you pick up {value}? it's the one from standup, not {v2}",
        ),
        ("prose", A, "I'll tag every commit with {value} so the release notes pick it up."),
        (
            "md-table",
            A,
            "| ticket | status |\n|---|---|\n| {value} | in progress (this task) |\n"
            "| {v2} | blocked |",
        ),
        ("handoff", A, "Hand-off: the work is tracked in {value}; the PR description links it."),
    ],
    "revision": [
        (
            "git",
            T,
            "$ git bisect good {value}\n$ git bisect bad {v2}\nBisecting: {n2} revisions"
            " left to test after this (roughly 5 steps)",
        ),
        (
            "ci",
            T,
            "Run #{run} on {value} passed ✓ ({n1} jobs)\nRun #{pr} on {v2} failed ✗"
            " (job: integration)",
        ),
        (
            "kubectl",
            T,
            "$ kubectl get deploy {proj} -o jsonpath='{{..image}}'\nregistry.{org}"
            ".io/{proj}:{value}",
        ),
        (
            "terraform",
            T,
            '  ~ resource "aws_ecs_service" "{proj}" {{\n      ~ image_tag ='
            ' "{v2}" -> "{value}"\n    }}\n\nPlan: 0 to add, 1 to change, 0 to destroy.',
        ),
        (
            "git",
            T,
            "$ git show --stat {value}\ncommit {value}\nAuthor: {who} <{who}@{org}.dev>\n"
            "\n    {title}\n\n src/{proj}/sync.py | {n2} ++++----",
        ),
        ("chat", U, "roll back to {value} if anything looks off, that build was fine for a week"),
        (
            "chat",
            U,
            "{value} is the last commit where the {proj} integration suite passed,"
            " bisect from there",
        ),
        (
            "prose",
            A,
            "Bisect result: {value} is the last good {proj} revision; {v2} introduced"
            " the regression.",
        ),
        ("plan", A, "1. check out {value}\n2. cherry-pick the schema fix\n3. rerun `make e2e`"),
        (
            "md-table",
            A,
            "| revision | integration |\n|---|---|\n| {value} | pass |\n| {v2} | fail |",
        ),
    ],
    "config": [
        ("dotenv", T, "# .env.{env}\n{S2}={v2}\n{subject}={value}\nLOG_LEVEL=info"),
        ("compose", T, "    environment:\n      - {subject}={value}\n      - {S2}={v2}"),
        (
            "kubectl",
            T,
            "    Environment:\n      {subject}:  {value}\n      {S2}:  {v2}\n"
            "    Mounts:\n      /var/run/secrets from kube-api-access-{pod} (ro)",
        ),
        (
            "grep",
            T,
            "$ grep -n {PROJ}_ config/{env}.toml\n{l1}:{subject} = {value}\n{l2}:{S2} = {v2}",
        ),
        ("shell", T, "$ printenv | grep {PROJ}\n{subject}={value}\n{S2}={v2}"),
        (
            "chat",
            U,
            "set {subject}={value} for the load test, anything higher and staging falls over",
        ),
        (
            "slack",
            U,
            "> *{who}*: in {env} we run with {subject} at {value}, please mirror that locally",
        ),
        (
            "prose",
            A,
            "I exported {subject}={value} before running the suite; with the default"
            " the flaky test reproduces.",
        ),
        (
            "md-table",
            A,
            "| setting | value | source |\n|---|---|---|\n| {subject} | {value} |"
            " .env.{env} |\n| {S2} | {v2} | default |",
        ),
        (
            "handoff",
            A,
            "Environment for the next run: `{subject}={value}`, everything else default.",
        ),
    ],
    "command": [
        ("ci", T, "  - name: tests\n    run: {value}\n  - name: lint\n    run: {v2}"),
        ("manifest", T, '"scripts": {{\n    "test:ci": "{value}",\n    "lint": "{v2}"\n  }}'),
        ("log", T, "{ts} ci-runner[{pid}]: exec: {value} (attempt 1/1)"),
        (
            "doc",
            T,
            "README, section Testing:\n```\n{value}        # what CI runs for {proj}\n{v2}"
            "    # lint only\n```",
        ),
        ("makefile", T, "ci: ## what the {proj} pipeline calls\n\t{value}\nlint:\n\t{v2}"),
        (
            "chat",
            U,
            "always run `{value}` before you say it's done, a plain pytest run skips"
            " the slow markers",
        ),
        (
            "slack",
            U,
            "> *{who}*: the {proj} suite only passes via {value}; any other way"
            " misses the fixtures",
        ),
        ("prose", A, "I'll verify with `{value}` - that's what CI runs - rather than {v2}."),
        ("plan", A, "Plan:\n- [ ] fix the import\n- [ ] run `{value}`\n- [ ] open the PR"),
        (
            "handoff",
            A,
            "To check my work: `{value}` (about {n1} min). Lint separately with `{v2}`.",
        ),
    ],
    "constraint": [
        (
            "codeowners",
            T,
            "# CODEOWNERS\n/{value}  @{org}/platform-leads   # frozen, do not"
            " edit\n/docs/  @{org}/docs",
        ),
        (
            "doc",
            T,
            "> **Do not modify `{value}`.** It is generated from the upstream schema;"
            " local edits are overwritten and break the audit checksum.",
        ),
        (
            "pre-commit",
            T,
            "check-frozen-paths.............................Failed\n- hook id:"
            " frozen-paths\n- exit code: 1\n\nrefusing commit: {value} is frozen (see"
            " docs/FREEZE.md)",
        ),
        (
            "github",
            T,
            "Issue #{ghn}: accidental edit of {value} broke prod\n...\nResolution:"
            " {value} is read-only for everyone but the DBA team. Bots must never write to it.",
        ),
        ("chat", U, "hard rule: don't touch {value}, whatever the failing test says"),
        (
            "slack",
            U,
            "> *{who}* {hm}: reminder, {value} is under change freeze until the audit"
            " closes. anything else is fair game",
        ),
        ("chat", U, "You can refactor freely but {value} stays byte-for-byte identical."),
        ("prose", A, "Noted - I won't modify {value}; the fix goes through {v2}."),
        (
            "plan",
            A,
            "Constraints I'm working under:\n- no changes to {value}\n- no new"
            " dependencies\n- keep the public API stable",
        ),
        ("handoff", A, "Hand-off: left {value} untouched as asked; all changes are in {v2}."),
    ],
    "owner": [
        ("codeowners", T, "/services/{proj}/   {value}\n/services/{s2}/   {v2}"),
        (
            "github",
            T,
            "$ gh pr view {pr}\n{title} #{pr}\nOpen • {v2} wants to merge 3 commits"
            " into main\nReviewers: {value} (Requested)\nLabels: {proj}, needs-review",
        ),
        ("jira", T, "Assignee: {v2}\nReviewer: {value}\nComponent/s: {proj}\nSprint: {n2}"),
        ("csv", T, "area,approver,backup\n{proj},{value},{v2}"),
        ("log", T, "{ts} bot[review-router]: assigned {value} to PR #{pr} ({proj} path match)"),
        ("chat", U, "get {value} to sign off before merging anything in {proj}, they own it"),
        (
            "slack",
            U,
            "> *{who}*: {value} is the approver for {proj} this quarter, ping them not me",
        ),
        ("prose", A, "I've requested review from {value}, who owns {proj} per CODEOWNERS."),
        ("md-table", A, "| area | approver |\n|---|---|\n| {proj} | {value} |\n| {s2} | {v2} |"),
        (
            "handoff",
            A,
            "Waiting on {value} to approve the {proj} change; nothing else blocks the merge.",
        ),
    ],
    "deadline": [
        ("jira", T, "Due date: {value}\nFix Version/s: {proj}-{n1}.{n2}\nPriority: High"),
        (
            "github",
            T,
            "$ gh api repos/{org}/{proj}/milestones --jq '.[] | [.title,.due_on]'\n"
            '["{proj} cutover","{value}T00:00:00Z"]\n["cleanup","{v2}T00:00:00Z"]',
        ),
        ("csv", T, "milestone,date,owner\ncode freeze,{v2},{who}\n{proj} cutover,{value},{who2}"),
        (
            "doc",
            T,
            "## Timeline\n- {v2}: code freeze\n- {value}: {proj} cutover (hard deadline,"
            " contractual)",
        ),
        ("log", T, "{ts} scheduler: job {proj}-cutover scheduled for {value} 06:00 UTC"),
        ("chat", U, "the {proj} cutover is {value}, hard date, legal already announced it"),
        (
            "slack",
            U,
            "> *{who}*: this has to be live before {value} or we miss the {proj} cutover window",
        ),
        (
            "prose",
            A,
            "Timeline: everything for the {proj} cutover lands by {value}; the freeze starts {v2}.",
        ),
        (
            "md-table",
            A,
            "| milestone | date |\n|---|---|\n| freeze | {v2} |\n| {proj} cutover | {value} |",
        ),
        (
            "plan",
            A,
            "Working back from the {value} cutover: tests by Friday, staging soak after that.",
        ),
    ],
    "limit": [
        ("yaml", T, "{proj}:\n  {lkey}: {value}\n  retries: {n1}\n  {lkey2}: {v2}"),
        (
            "curl",
            T,
            '$ curl -s http://config.{org}.internal/v1/{proj} | jq .\n{{\n  "{lkey}":'
            ' {value},\n  "{lkey2}": {v2},\n  "enabled": true\n}}',
        ),
        (
            "terraform",
            T,
            '  + resource "{org}_service_limits" "{proj}" {{\n      + {lkey}'
            " = {value}\n      + {lkey2} = {v2}\n    }}",
        ),
        (
            "psql",
            T,
            "{proj}=> select key, value from settings;\n     key      | value\n"
            "--------------+-------\n {lkey} | {value}\n {lkey2} | {v2}\n(2 rows)",
        ),
        ("log", T, "{ts} ERROR {proj}: request aborted, exceeded {lkey}={value}"),
        ("chat", U, "keep {lkey} at {value} for {proj}, the upstream contract says so"),
        (
            "issue",
            U,
            "Acceptance criteria from the ticket:\n- {proj} {label} is {value}\n-"
            " metrics exported for p99",
        ),
        ("prose", A, "I set {lkey} = {value} for {proj}; {lkey2} stays at {v2}."),
        ("md-table", A, "| knob | value |\n|---|---|\n| {lkey} | {value} |\n| {lkey2} | {v2} |"),
        ("handoff", A, "Left the {proj} {label} at {value} as required."),
    ],
    "decision": [
        (
            "doc",
            T,
            "# ADR-{n2}: {role} library for {proj}\nStatus: Accepted\nDecision: use"
            " {value}. {v2} was evaluated and rejected (no async support).",
        ),
        (
            "github",
            T,
            "{who} commented:\n> Let's go with {value} for the {role}. {v2} pulls in"
            " half of npm.\n{who2} commented:\n> agreed",
        ),
        ("git", T, '$ git diff package.json\n-    "{v2}": "^{ver}",\n+    "{value}": "^{ver}",'),
        (
            "doc",
            T,
            "Meeting notes {date}\n- {role} lib for {proj}: {value} (decided)\n- {v2}: dropped",
        ),
        ("chat", U, "we decided on {value} for {proj}, don't bring {v2} back in"),
        ("slack", U, "> *{who}*: arch review is done, {value} won for the {role}. {v2} is out"),
        ("chat", U, "Between {v2} and {value}: {value}. final answer, move on."),
        ("prose", A, "Decision recorded: {proj} uses {value} as its {role}; {v2} is rejected."),
        (
            "md-table",
            A,
            "| option | verdict |\n|---|---|\n| {value} | chosen |\n| {v2} | rejected |",
        ),
        (
            "plan",
            A,
            "Since we're on {value}, I'll port the {role} calls first and delete the"
            " {v2} shim last.",
        ),
    ],
    "error": [
        (
            "pytest",
            T,
            "E   {proj}.errors.RemoteError: [{value}] upstream rejected batch {n1}\n"
            "FAILED tests/test_{proj}.py::test_sync - {proj}.errors.RemoteError: [{value}]",
        ),
        (
            "jest",
            T,
            "  ● sync › retries\n\n    Error: {value}: lease expired\n      at Object"
            ".<anonymous> (src/{proj}/sync.ts:{l1}:{n1})",
        ),
        (
            "log",
            T,
            "{ts} ERROR [{proj}-worker-{n1}] job failed code={value} attempt=3/3\n{ts2}"
            " WARN  [{proj}-worker-{n2}] code={v2} (transient, retried)",
        ),
        (
            "curl",
            T,
            'HTTP/1.1 409 Conflict\ncontent-type: application/json\n\n{{"error":'
            '{{"code":"{value}","message":"lease held by another worker"}}}}',
        ),
        (
            "kubectl",
            T,
            "Events:\n  Warning  BackOff  {n1}m  kubelet  Back-off restarting failed"
            " container\n  Warning  Failed   {n2}m  {proj}   exit: {value}",
        ),
        (
            "chat",
            U,
            "the error we're chasing is {value}, ignore the {v2} noise, that's a known flake",
        ),
        (
            "issue",
            U,
            "Bug: {proj} nightly fails with {value}\nSteps: run the nightly import\n"
            "Expected: success",
        ),
        (
            "prose",
            A,
            "The root failure is {value}; {v2} shows up only as a consequence in the retry path.",
        ),
        (
            "md-table",
            A,
            "| code | count | meaning |\n|---|---|---|\n| {value} | {n3} | the real"
            " failure |\n| {v2} | {n2} | retry noise |",
        ),
        ("handoff", A, "Still open: {value} on the {proj} nightly; the fix is in review."),
    ],
}

# corrections: ``old`` is the value replaced (``old_subject`` the name, for renames)
_ANY_CORRECTIONS: list[tuple[str, str, str]] = [
    ("slack", U, "> *{who2}* {hm}: heads up, {what} is {value} as of this morning"),
    ("chat", U, "For the record, {what} is {value}."),
    ("prose", A, "Going forward I'm using {value} for {what}."),
    ("prose", A, "Checked again: {what} is actually {value}, not {old}. Adjusting the plan."),
    ("chat", U, "scratch what I said earlier - {what} is {value}"),
    (
        "email",
        U,
        "Forwarded message from {who2}:\n> Hi, small thing: {what} should be {value}."
        " The earlier value came from a stale wiki page.",
    ),
    (
        "jira",
        T,
        "Comment by {who2} ({ts}):\nVerified with the vendor. {What} = {value}. Closing"
        " the question.",
    ),
    ("doc", T, "Notes {date}\n- agreed: {what} -> {value}\n- next sync Thursday"),
    ("handoff", A, "Hand-off (latest): {what} = {value}. Disregard older notes that say {old}."),
    ("chat", U, "it's {value} now, for {what}"),
    (
        "github",
        T,
        "Merged PR #{pr}: switch {what} to {value}\n\n{who2} merged commit {sha_d} into main",
    ),
    ("md-table", A, "Current facts:\n| item | value |\n|---|---|\n| {What} | {value} |"),
]
_KIND_CORRECTIONS: list[tuple[str, str, str, str, bool]] = [
    (
        "port",
        "compose",
        T,
        "$ cat docker-compose.override.yml\nservices:\n  {subject}:\n    ports:"
        '\n      - "{value}:{value}"',
        False,
    ),
    (
        "port",
        "kubectl",
        T,
        "$ kubectl get svc {subject} -n {ns}\nNAME   TYPE   CLUSTER-IP   PORT(S)"
        "\n{subject}   ClusterIP   {ip}   {value}/TCP",
        False,
    ),
    (
        "port",
        "git",
        T,
        "$ git log -1 --stat\n    Rename service {old_subject} -> {subject}, still on {value}\n\n"
        " deploy/{old_subject}.yaml => deploy/{subject}.yaml | 2 +-",
        True,
    ),
    (
        "version",
        "git",
        T,
        '$ git log -1\ncommit {sha_d}\n    Revert "Bump {subject} to {old}"\n'
        "\n    This reverts commit {sha_d2}. {subject} goes back to {value}.",
        False,
    ),
    (
        "version",
        "lockfile",
        T,
        '$ grep -A1 \'name = "{subject}"\' poetry.lock\nname = "{subject}"\nversion = "{value}"',
        False,
    ),
    (
        "version",
        "github",
        T,
        "Bumps {subject} from {old} to {value}.\n- [Release notes]"
        "(https://github.com/{org}/{subject}/releases)\n\nMerged by {who2}.",
        False,
    ),
    ("config", "dotenv", T, "$ cat .env.{env}\n{subject}={value}\nLOG_LEVEL=info", False),
    (
        "config",
        "git",
        T,
        "$ git diff .env.example\n-{old_subject}={value}\n+{subject}={value}",
        True,
    ),
    (
        "config",
        "kubectl",
        T,
        "$ kubectl set env deploy/{proj} {subject}={value}\ndeployment.apps/{proj} env updated",
        False,
    ),
    ("path", "git", T, "$ git mv {old} {value}\n$ git status --short\nR  {old} -> {value}", False),
    ("path", "prose", A, "After the restructure the {proj} {purpose} is in {value}.", False),
    (
        "ticket",
        "jira",
        T,
        "{old} was closed as a duplicate of {value} by {who2}. Track the work there.",
        False,
    ),
    ("revision", "git", T, "$ git rev-parse {proj}-known-good\n{value}", False),
    (
        "owner",
        "git",
        T,
        "$ git diff CODEOWNERS\n-/services/{proj}/   {old}\n+/services/{proj}/   {value}",
        False,
    ),
    ("deadline", "jira", T, "History: {who2} changed Due date: {old} → {value}", False),
    ("deadline", "slack", U, "> *{who2}*: legal moved the {proj} cutover to {value}", False),
    (
        "limit",
        "psql",
        T,
        "{proj}=> select value from settings where key = '{lkey}';\n value\n"
        "-------\n {value}\n(1 row)",
        False,
    ),
    (
        "limit",
        "sql",
        T,
        "$ cat migrations/{n3}_{proj}_limits.sql\nUPDATE settings SET value ="
        " '{value}' WHERE key = '{lkey}';",
        False,
    ),
    (
        "decision",
        "doc",
        T,
        "# ADR-{n3}: {role} library for {proj} (supersedes ADR-{n2})\nStatus:"
        " Accepted\nDecision: use {value}.",
        False,
    ),
    (
        "decision",
        "chat",
        U,
        "after the benchmark we go with {value} for {proj}; the earlier pick is off the table",
        False,
    ),
    (
        "error",
        "log",
        T,
        "rerun after the patch:\n{ts} ERROR [{proj}-worker-{n1}] job failed"
        " code={value} attempt=1/3",
        False,
    ),
    (
        "command",
        "git",
        T,
        "$ git show HEAD -- .github/workflows/ci.yml\n-        run: {old}\n+        run: {value}",
        False,
    ),
    ("host", "terraform", T, 'after the failover:\n{proj}_db_endpoint = "{value}"', False),
    (
        "constraint",
        "chat",
        U,
        "the freeze moved: {value} is off limits now, {old} is open again",
        False,
    ),
]


def _templates() -> tuple[list[Template], list[Template]]:
    facts = [
        Template(f"{kind}.{style}.{i}", kind, style, voice, text)
        for kind, rows in _FACT_ROWS.items()
        for i, (style, voice, text) in enumerate(rows)
    ]
    fixes = [
        Template(f"fix.any.{style}.{i}", None, style, voice, text)
        for i, (style, voice, text) in enumerate(_ANY_CORRECTIONS)
    ] + [
        Template(f"fix.{kind}.{style}.{i}", kind, style, voice, text, renames)
        for i, (kind, style, voice, text, renames) in enumerate(_KIND_CORRECTIONS)
    ]
    return facts, fixes


FACTS, CORRECTIONS = _templates()

# -- generation ---------------------------------------------------------------------------------

FACTS_BY_KIND = {k: [t for t in FACTS if t.kind == k] for k in KINDS}


def _fields(d: Draw, kind: Kind) -> Fields:
    f = _common(d)
    f.update(kind.subject(d, f))
    f.update(kind.value(d, f))
    f["What"] = _cap(f["what"])
    return f


def _corrected(d: Draw, kind: Kind, old: Fields, fix: Template) -> Fields:
    new = dict(old)
    common = _common(d)
    for same in ("org", "ns"):  # the same system, seen later
        common.pop(same)
    new.update(common)
    if fix.renames:
        new.update(kind.subject(d, new))
        new["old_subject"] = old["subject"]
    else:
        new.update(kind.value(d, new))
    new["old"] = old["value"]
    new["What"] = _cap(new["what"])
    return new


def _canary(kind: Kind, template: Template, f: Fields, at: float) -> dict[str, Any]:
    return {
        "kind": kind.name,
        "at": round(at, 4),
        "text": template.text.format(**f),
        "keep": list(kind.keep(f)),
        "style": template.style,
        "template": template.name,
        "voice": template.voice,
    }


def _order(seed: int, items: Sequence[Template], salt: str) -> list[Template]:
    """``items`` in a seed's order: session ``variant`` takes the next slice, so one run over a
    few sessions uses every template."""
    out = list(items)
    random.Random(f"heldout2:{salt}:{seed}").shuffle(out)
    return out


def _build(seed: int, count: int, variant: int, attempt: int) -> list[dict[str, Any]]:
    rng = random.Random(f"heldout2:{seed}:{variant}:{attempt}")
    d = Draw(rng)
    fixes = max(1, count // 5)
    pairs = max(1, count // 8)
    singles = count - 2 * fixes - 2 * pairs
    facts, corrections = _order(seed, FACTS, "facts"), _order(seed, CORRECTIONS, "fixes")
    # session ``variant`` starts where the sessions before it stopped in both orders (a
    # correction of any kind takes its fact from the fact order, one of a kind picks its own)
    fix_at = variant * fixes
    anykind = [t.kind is None for t in corrections]
    before = (fix_at // len(corrections)) * sum(anykind) + sum(anykind[: fix_at % len(corrections)])
    fact_at = variant * (singles + pairs) + before

    def next_fact() -> Template:
        nonlocal fact_at
        fact_at += 1
        return facts[(fact_at - 1) % len(facts)]

    # (canary, group key, partner key, superseded key)
    made: list[tuple[dict[str, Any], str, str | None, str | None]] = []
    for i in range(singles):
        t = next_fact()
        kind = KINDS[str(t.kind)]
        made.append(
            (_canary(kind, t, _fields(d, kind), rng.uniform(0.02, 0.9)), f"s{i}", None, None)
        )
    for i in range(pairs):
        t = next_fact()
        kind = KINDS[str(t.kind)]
        first, second = _fields(d, kind), _fields(d, kind)
        made.append((_canary(kind, t, first, rng.uniform(0.02, 0.8)), f"p{i}a", f"p{i}b", None))
        made.append((_canary(kind, t, second, rng.uniform(0.02, 0.8)), f"p{i}b", f"p{i}a", None))
    for i in range(fixes):
        fix = corrections[fix_at % len(corrections)]
        fix_at += 1
        t = next_fact() if fix.kind is None else rng.choice(FACTS_BY_KIND[fix.kind])
        kind = KINDS[str(t.kind)]
        old = _fields(d, kind)
        at = rng.uniform(0.03, 0.55)
        made.append((_canary(kind, t, old, at), f"f{i}o", None, None))
        new = _corrected(d, kind, old, fix)
        later = rng.uniform(at + 0.12, min(0.95, at + 0.5))
        made.append((_canary(kind, fix, new, later), f"f{i}n", None, f"f{i}o"))
    made.sort(key=lambda m: (m[0]["at"], m[1]))
    ids = {key: f"h2-{variant}-{n:02d}" for n, (_, key, _, _) in enumerate(made)}
    out = []
    for fields, key, partner, old_key in made:
        canary = {"id": ids[key], **fields}
        canary["supersedes"] = ids[old_key] if old_key else None
        canary["coexists"] = ids[partner] if partner else None
        out.append(canary)
    return out


def check(canaries: Sequence[dict[str, Any]]) -> list[str]:
    """What in ``canaries`` breaks the contract of ``bench/retention.py`` (empty: none): every
    field typed, ``at`` in [0, 1), keep strings non-empty and verbatim in the text, ids unique,
    a correction later than the canary it supersedes, of its kind and with another keep, pairs
    that name each other, and no keep string in the text of a canary outside its own
    correction chain (it would be kept, or go stale, by accident)."""
    problems: list[str] = []
    by_id = {c["id"]: c for c in canaries}
    if len(by_id) != len(canaries):
        problems.append("duplicate ids")
    for c in canaries:
        cid = c["id"]
        if not (isinstance(c["text"], str) and isinstance(c["kind"], str)):
            problems.append(f"{cid}: text and kind must be strings")
        if not 0 <= float(c["at"]) < 1:
            problems.append(f"{cid}: at {c['at']} not in [0, 1)")
        if not c["keep"] or any(len(k) < 4 or k not in c["text"] for k in c["keep"]):
            problems.append(f"{cid}: keep {c['keep']} not verbatim in its text")
        old = by_id.get(c["supersedes"]) if c.get("supersedes") else None
        if c.get("supersedes") and old is None:
            problems.append(f"{cid}: supersedes unknown {c['supersedes']}")
        if old is not None and (
            old["at"] >= c["at"] or old["kind"] != c["kind"] or set(old["keep"]) == set(c["keep"])
        ):
            problems.append(f"{cid}: not a later, different value of {old['id']}")
        partner = by_id.get(c["coexists"]) if c.get("coexists") else None
        if c.get("coexists") and (partner is None or partner.get("coexists") != cid):
            problems.append(f"{cid}: coexists {c['coexists']} does not name it back")
    chain = {c["id"]: {c["id"]} for c in canaries}
    for c in canaries:
        if c.get("supersedes") in chain:
            joined = chain[c["id"]] | chain[c["supersedes"]]
            for member in joined:
                chain[member] = joined
    for c in canaries:
        for k in c["keep"]:
            for other in canaries:
                if other["id"] not in chain[c["id"]] and k in other["text"]:
                    problems.append(f"{c['id']}: keep {k!r} also in {other['id']}")
    return problems


def generate(seed: int, count: int = 24, variant: int = 0) -> list[dict[str, Any]]:
    """``count`` canaries for session ``variant`` of run ``seed``: the same arguments give the
    same canaries. A draw that breaks ``check`` is drawn again from a derived seed."""
    if count < 6:
        raise ValueError(f"count {count}: at least 6 (a correction and a pair need four)")
    for attempt in range(100):
        canaries = _build(seed, count, variant, attempt)
        if not check(canaries):
            return canaries
    raise RuntimeError(f"seed {seed} variant {variant}: no valid set")  # pragma: no cover
