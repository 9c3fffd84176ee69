"""Held-out canary generator D, for ``bench/retention.py --generator``.

Lab note: written blind. Its author did not read the memory code (``src/abridged/engine/
summarize/``, the fact/reference code of ``src/abridged/core/``), the other canary generators
(``bench/canary_generator.py``, ``bench/heldout_canaries*.py``) or their tests, any canary JSON
file, ``bench/RESULTS.md`` or issue notes. From ``bench/retention.py`` only the contract was read:
``Canary`` / ``canaries_from`` (the dict keys), ``CanarySource`` / ``_generator`` (``generate(seed,
count, variant=session index)``), ``insert_canaries`` and the helpers that write a canary into a
user message, a tool observation (its own last line(s)) or the start of an assistant message,
``KeepIndex``, ``strip_replaced``, ``presents_as_current`` and ``score_context``, plus how
``tests/bench/test_retention_generated.py`` invokes a tiny run. No score was looked at before the
generator was written; see the helper's report for the one smoke run made afterwards.

Design.

- A fact is a template: a kind (constraint, prohibition, preference, identifier, decision,
  quantity, path, version, owner, deadline, credential_ref, feature_flag, environment,
  api_contract; a correcting fact is kind ``correction``), a surface style (sentence, chat, kv,
  yaml, json, log, table, diff, comment, bullet, stacktrace, cli, commit, test_output, config,
  ticket, shell) and a voice (who would write it: ``user``, ``tool``, ``assistant``). The bench
  plants every canary in all three placements, one pass each (the Canary contract has no
  placement), so the voice is only recorded (``voice``, a key ``canaries_from`` ignores): a
  tool-voiced log line also shows up pasted into a user message, as users do paste logs.
- ``SINGLES`` are facts standing alone. ``PAIRS`` are two facts about one subject, said at two
  points of the session: either the second replaces the first (``relation = "corrects"``: the
  second canary's ``supersedes`` names the first; its ``template`` is the phrasing of the
  correction), or both hold (``"coexists"``: each canary's ``coexists`` names the other). Most
  corrections carry no marker word: a change of plan naming only the new value, a revert in a
  diff, an owner moving in passing, a ``sed`` on an env file, a benchmark re-run, a date slipping,
  a dependency bump in a commit, a ticket reassigned, an ``export`` in shell history, a config
  reload log line, an API answering with the new region, the assistant restating what the review
  asked, a deploy table after a rollout, a secret rotation log; three use a marker
  (``Correction:``, ``actually``, ``instead``), flagged ``marker``.
- The keep strings are the made-up values a fact is about (hosts, ports, paths, ids, versions,
  dates, amounts, surnames, flag names), never its common words: a summary that says the fact in
  other words but keeps its value keeps it. Values are drawn fresh per (seed, variant) from
  made-up syllable words and unround numbers (``Draw.fresh``): no drawn value contains another
  or is contained in one. After a session's set is written, every keep string is checked against
  every other canary's text (a correction may quote the value it replaces, and nothing else may
  hold another fact's value); a set that fails is drawn again from the next attempt's stream.
  Before any benchmark run, a block's keep strings were searched for in the recorded sessions:
  bare four-digit numbers turned up there (line numbers, sizes), so four templates draw five
  digits or write the unit into the value (``1357s``); about 1 fact in 4,000 still occurs in its
  session by chance (the bench counts those as ambiguous).
- A plan spreads the templates across a block of sessions: each kind of slot (single,
  correction, coexisting pair) walks its own seed-shuffled order of templates, session ``v``
  taking the next stretch, so with the default 24 canaries a 16-session run uses every template.
- Deterministic: every draw comes from ``random.Random`` seeded with a string of seed, variant
  and attempt (string seeds are hashed the same way in every process).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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
    "credential_ref",
    "feature_flag",
    "environment",
    "api_contract",
    "correction",
)
STYLES = (
    "sentence",
    "chat",
    "kv",
    "yaml",
    "json",
    "log",
    "table",
    "diff",
    "comment",
    "bullet",
    "stacktrace",
    "cli",
    "commit",
    "test_output",
    "config",
    "ticket",
    "shell",
)
VOICES = ("user", "tool", "assistant")
ATTEMPTS = 64

Fact = tuple[str, tuple[str, ...]]  # a canary's text and its keep strings


# -- values -----------------------------------------------------------------------------------

_ONSETS = (*"bdfgklmnprstvz", "br", "dr", "gr", "kl", "pl", "tr", "st", "sk", "fr", "sn")
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "i", "o", "u", "ai", "ou")
_CODAS = ("n", "r", "l", "s", "th", "k", "m", "x", "nd", "rt")
_FIRST = (
    "Priya", "Tomasz", "Ines", "Kwame", "Mei", "Aurelio", "Sanna", "Dmitri", "Folake", "Hiroshi",
    "Leonie", "Rafael", "Yusuf", "Agnieszka", "Teodor", "Camille", "Oskar", "Nadia", "Joaquin",
    "Ingrid", "Emeka", "Lucia", "Bashir", "Hanne",
)  # fmt: skip
_SURNAME_ENDS = ("son", "ski", "ova", "elli", "berg", "ek", "ard", "ino", "ley", "wick")


class Draw:
    """Fresh values for one session's set: ``fresh`` registers a value and refuses one that
    contains, or is contained in, a value drawn before."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: list[str] = []

    def fresh(self, make: Callable[[], str]) -> str:
        for _ in range(500):
            value = make()
            if all(value not in u and u not in value for u in self.used):
                self.used.append(value)
                return value
        raise RuntimeError("no fresh value after 500 draws")

    # raw parts (not registered: they go into a value that is)
    def raw_word(self, syllables: int = 3) -> str:
        """A made-up word: ``syllables`` open syllables, the last one closed."""
        r = self.rng
        body = "".join(r.choice(_ONSETS) + r.choice(_VOWELS) for _ in range(syllables))
        return body + r.choice(_CODAS)

    def hex(self, n: int) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))

    def first(self) -> str:
        return self.rng.choice(_FIRST)

    def int_in(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    # registered values
    def word(self) -> str:
        return self.fresh(self.raw_word)

    def upper(self) -> str:
        return self.fresh(lambda: self.raw_word(2).upper()[:5])

    def surname(self) -> str:
        return self.fresh(lambda: self.raw_word(2).capitalize() + self.rng.choice(_SURNAME_ENDS))

    def handle(self) -> str:
        return self.fresh(lambda: f"{self.first().lower()[:3]}{self.raw_word(2)}")

    def number(self, lo: int, hi: int, *, grouped: bool = False) -> str:
        def make() -> str:
            n = self.rng.randint(lo, hi)
            while n % 10 == 0:  # unround: a round number occurs anywhere
                n = self.rng.randint(lo, hi)
            return f"{n:,}" if grouped else str(n)

        return self.fresh(make)

    def decimal(self) -> str:
        return self.fresh(lambda: f"{self.rng.randint(110, 989)}.{self.rng.randint(11, 99)}")

    def port(self) -> str:
        return self.number(20011, 48999)

    def host(self, domain: str | None = None) -> str:
        dom = domain or self.raw_word(2)
        return self.fresh(lambda: f"{self.raw_word(2)}-{self.int_in(11, 97)}.{dom}.internal")

    def version(self) -> str:
        return self.fresh(lambda: f"{self.int_in(2, 9)}.{self.int_in(21, 89)}.{self.int_in(2, 29)}")

    def date(self) -> str:
        return self.fresh(
            lambda: f"{self.int_in(2027, 2029)}-{self.int_in(1, 12):02d}-{self.int_in(1, 28):02d}"
        )

    def timestamp(self) -> str:
        def make() -> str:
            d = f"{self.int_in(2027, 2029)}-{self.int_in(1, 12):02d}-{self.int_in(1, 28):02d}"
            return (
                f"{d}T{self.int_in(0, 23):02d}:{self.int_in(0, 59):02d}:{self.int_in(0, 59):02d}Z"
            )

        return self.fresh(make)

    def ticket(self) -> str:
        return self.fresh(lambda: f"{self.raw_word(2).upper()[:4]}-{self.int_in(1013, 9899)}")

    def region(self) -> str:
        return self.fresh(
            lambda: f"{self.rng.choice(('eu', 'us', 'ap'))}-{self.raw_word(2)}-{self.int_in(2, 9)}"
        )

    def ident(self, make: Callable[[], str]) -> str:
        """Any composite value (built from raw parts)."""
        return self.fresh(make)


# -- templates --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Single:
    name: str
    kind: str
    style: str
    voice: str
    write: Callable[[Draw], Fact]


@dataclass(frozen=True, slots=True)
class Side:
    kind: str
    style: str
    voice: str


@dataclass(frozen=True, slots=True)
class Pair:
    """Two facts about one subject: the second replaces the first (``corrects``) or both hold
    (``coexists``)."""

    name: str
    relation: str
    first: Side
    second: Side
    write: Callable[[Draw], tuple[Fact, Fact]]
    marker: bool = False  # the correction says it is one ("Correction:", "actually", "instead")


SINGLES: list[Single] = []
PAIRS: list[Pair] = []


def single(name: str, kind: str, style: str, voice: str) -> Callable[..., Any]:
    def register(write: Callable[[Draw], Fact]) -> Callable[[Draw], Fact]:
        SINGLES.append(Single(name, kind, style, voice, write))
        return write

    return register


def pair(
    name: str,
    relation: str,
    first: tuple[str, str, str],
    second: tuple[str, str, str],
    *,
    marker: bool = False,
) -> Callable[..., Any]:
    def register(
        write: Callable[[Draw], tuple[Fact, Fact]],
    ) -> Callable[[Draw], tuple[Fact, Fact]]:
        PAIRS.append(Pair(name, relation, Side(*first), Side(*second), write, marker))
        return write

    return register


# constraint


@single("constraint/sentence", "constraint", "sentence", "user")
def _(d: Draw) -> Fact:
    table = d.ident(lambda: f"{d.raw_word()}_events")
    module = d.ident(lambda: f"{d.raw_word()}.writer")
    return (
        f"Every write to the {table} table has to go through {module}: it is the only code "
        "that takes the advisory lock, and two writers corrupted the ledger last quarter.",
        (table, module),
    )


@single("constraint/yaml", "constraint", "yaml", "tool")
def _(d: Draw) -> Fact:
    region = d.region()
    return (
        f'# deploy/policy/{d.raw_word()}.yaml\nplacement:\n  allowed_regions: ["{region}"]\n'
        "  data_residency: strict",
        (region,),
    )


@single("constraint/comment", "constraint", "comment", "tool")
def _(d: Draw) -> Fact:
    func = d.ident(lambda: f"_drain_{d.raw_word()}_queue")
    return (
        f"    # {func} must stay re-entrant: the {d.raw_word()} scheduler calls it again "
        "from its SIGALRM handler.",
        (func,),
    )


@single("constraint/ticket", "constraint", "ticket", "tool")
def _(d: Draw) -> Fact:
    size = d.number(200_003, 987_649)
    return (
        f"Acceptance criteria ({d.ticket()}):\n"
        f"  * responses from /{d.raw_word()}/export stay under {size} bytes (the "
        f"{d.raw_word()} gateway drops anything larger)\n  * no new runtime dependencies",
        (size,),
    )


@single("constraint/chat", "constraint", "chat", "user")
def _(d: Draw) -> Fact:
    seconds = d.ident(lambda: f"{d.int_in(1103, 2897)}s")
    return (
        f"heads up: the whole suite has to finish in under {seconds} on CI or the "
        f"{d.raw_word()} runner kills the job",
        (seconds,),
    )


# prohibition


@single("prohibition/chat", "prohibition", "chat", "user")
def _(d: Draw) -> Fact:
    path = d.ident(lambda: f"src/{d.raw_word()}/_generated_{d.raw_word(2)}.py")
    return (f"pls don't touch {path}, it's generated from the {d.raw_word()} schema", (path,))


@single("prohibition/bullet", "prohibition", "bullet", "user")
def _(d: Draw) -> Fact:
    host = d.host()
    return (f"- never run the migrations against {host} (that's the live replica)", (host,))


@single("prohibition/comment", "prohibition", "comment", "tool")
def _(d: Draw) -> Fact:
    func = d.ident(lambda: f"charge_{d.raw_word()}")
    return (
        f"# Do not call {func}() from tests: it talks to the real {d.raw_word()} billing "
        "sandbox and charges the shared card.",
        (func,),
    )


@single("prohibition/config", "prohibition", "config", "tool")
def _(d: Draw) -> Fact:
    branch = d.ident(lambda: f"release/{d.raw_word()}-{d.int_in(11, 97)}")
    return (f'[branch "{branch}"]\n\tprotected = true\n\tallow-force-push = false', (branch,))


@single("prohibition/sentence", "prohibition", "sentence", "assistant")
def _(d: Draw) -> Fact:
    folder = d.ident(lambda: f"third_party/{d.raw_word()}/")
    return (
        f"I won't modify anything under {folder}: you said that directory is vendored from "
        f"{d.raw_word()} and gets overwritten on every sync.",
        (folder,),
    )


# preference


@single("preference/chat", "preference", "chat", "user")
def _(d: Draw) -> Fact:
    lib = d.ident(lambda: f"py{d.raw_word()}")
    return (
        f"i'd rather we use {lib} than hand-rolled retries, the rest of the "
        f"{d.raw_word()} services already do",
        (lib,),
    )


@single("preference/sentence", "preference", "sentence", "assistant")
def _(d: Draw) -> Fact:
    prefix = d.ident(lambda: f"{d.raw_word(2)}_")
    return (
        f"I'll name the new fixtures with your {prefix} prefix so they sort next to the "
        "existing ones in conftest.py.",
        (prefix,),
    )


@single("preference/bullet", "preference", "bullet", "tool")
def _(d: Draw) -> Fact:
    tag = d.word()
    return (
        f"## Commit messages\n- Start the subject with the area tag, e.g. `{tag}: fix flaky "
        "retry`.\n- Keep the subject under 72 characters.",
        (f"{tag}:",),
    )


# identifier


@single("identifier/chat", "identifier", "chat", "user")
def _(d: Draw) -> Fact:
    ticket = d.ticket()
    return (f"this is for {ticket}", (ticket,))


@single("identifier/json", "identifier", "json", "tool")
def _(d: Draw) -> Fact:
    req = d.ident(lambda: f"req_{d.hex(14)}")
    return (f'{{"error": "upstream_timeout", "request_id": "{req}", "retry_after": 30}}', (req,))


@single("identifier/log", "identifier", "log", "tool")
def _(d: Draw) -> Fact:
    trace = d.ident(lambda: d.hex(16))
    return (
        f"{d.timestamp()} ERROR [{d.raw_word()}] trace_id={trace} span={d.hex(8)} "
        "upstream connection reset by peer",
        (trace,),
    )


@single("identifier/table", "identifier", "table", "tool")
def _(d: Draw) -> Fact:
    run = d.number(40_000_013, 98_999_989)
    return (
        "| run      | workflow | status | duration |\n"
        "|----------|----------|--------|----------|\n"
        f"| {run} | nightly-{d.raw_word(2)} | failed | 14m02s |",
        (run,),
    )


@single("identifier/cli", "identifier", "cli", "tool")
def _(d: Draw) -> Fact:
    ns = d.raw_word()
    pod = d.ident(lambda: f"{d.raw_word(2)}-api-{d.hex(10)}-{d.hex(5)}")
    return (
        f"$ kubectl get pods -n {ns}\nNAME{' ' * 30}READY   STATUS    RESTARTS\n"
        f"{pod}   1/1     Running   3",
        (pod,),
    )


# decision


@single("decision/sentence", "decision", "sentence", "user")
def _(d: Draw) -> Fact:
    path = d.ident(lambda: f"var/{d.raw_word()}/index.sqlite3")
    return (
        f"Let's settle it: the {d.raw_word()} index goes in SQLite at {path}, not in Redis.",
        (path,),
    )


@single("decision/commit", "decision", "commit", "tool")
def _(d: Draw) -> Fact:
    adr = d.ident(lambda: f"ADR-{d.int_in(103, 989)}")
    lib = d.ident(lambda: f"{d.raw_word()}-parser")
    first, surname = d.first(), d.surname()
    return (
        f"commit {d.hex(40)}\nAuthor: {first} {surname} <{first.lower()}@{d.raw_word(2)}.dev>\n\n"
        f"    Adopt {lib} for {d.raw_word()} parsing ({adr})",
        (lib, adr),
    )


@single("decision/ticket", "decision", "ticket", "tool")
def _(d: Draw) -> Fact:
    path = d.ident(lambda: f"patches/{d.raw_word()}-{d.int_in(101, 989)}.patch")
    return (
        "Resolution: Won't Fix (upstream)\n"
        f"Comment: we carry the patch in {path} until {d.raw_word()} ships a release with it.",
        (path,),
    )


@single("decision/bullet", "decision", "bullet", "assistant")
def _(d: Draw) -> Fact:
    keyword = d.ident(lambda: f"{d.raw_word()}_mode")
    return (
        f"- Plan: keep the public signature of load_{d.raw_word(2)}() and add the new behaviour "
        f"behind a keyword-only `{keyword}` argument.",
        (keyword,),
    )


# quantity (a number with its unit)


@single("quantity/kv", "quantity", "kv", "tool")
def _(d: Draw) -> Fact:
    ms = d.number(12_011, 89_989)
    return (f"{d.raw_word()}.request_timeout_ms: {ms}", (ms,))


@single("quantity/test_output", "quantity", "test_output", "tool")
def _(d: Draw) -> Fact:
    name = d.raw_word()
    mean = d.decimal()
    return (
        f"tests/perf/test_{name}.py::test_throughput PASSED\n"
        f"---- benchmark {name}: mean {mean} ms  stddev {d.int_in(2, 9)}.{d.int_in(1, 9)} ms  "
        "rounds 200 ----",
        (mean,),
    )


@single("quantity/chat", "quantity", "chat", "user")
def _(d: Draw) -> Fact:
    amount = d.number(1_103, 9_899, grouped=True)
    return (f"budget for the {d.raw_word()} cluster is {amount} EUR a month, hard cap", (amount,))


@single("quantity/cli", "quantity", "cli", "tool")
def _(d: Draw) -> Fact:
    memory = d.ident(lambda: f"{d.int_in(1031, 7933)}Mi")
    return (
        f"$ kubectl describe pod {d.raw_word(2)}-worker-0 | grep -A2 Limits\n    Limits:\n"
        f"      memory:  {memory}",
        (memory,),
    )


@single("quantity/sentence", "quantity", "sentence", "assistant")
def _(d: Draw) -> Fact:
    rows = d.number(1_000_003, 4_999_999, grouped=True)
    return (
        f"The {d.raw_word()} export wrote {rows} rows, the same as the source count, so "
        "nothing was dropped.",
        (rows,),
    )


# path


@single("path/sentence", "path", "sentence", "user")
def _(d: Draw) -> Fact:
    path = d.ident(lambda: f"qa/{d.raw_word()}/fixtures/{d.raw_word(2)}")
    return (f"The fixtures you need are in {path}, not under tests/.", (path,))


@single("path/stacktrace", "path", "stacktrace", "tool")
def _(d: Draw) -> Fact:
    path = d.ident(lambda: f"/opt/{d.raw_word()}/lib/{d.raw_word(2)}/loader.py")
    error = d.raw_word(2).capitalize()
    return (
        "Traceback (most recent call last):\n"
        f'  File "{path}", line {d.int_in(40, 380)}, in load_bundle\n'
        f"    raise {error}Error(msg)\n"
        f"{d.raw_word(2)}.errors.{error}Error: checksum mismatch for bundle.bin",
        (path,),
    )


@single("path/shell", "path", "shell", "tool")
def _(d: Draw) -> Fact:
    folder = d.ident(lambda: f"~/src/{d.raw_word()}-{d.raw_word(2)}")
    n = d.int_in(301, 899)
    return (
        f"  {n}  cd {folder} && make bootstrap\n  {n + 1}  ./bin/{d.raw_word(2)} --check",
        (folder,),
    )


@single("path/diff", "path", "diff", "tool")
def _(d: Draw) -> Fact:
    path = d.ident(lambda: f"internal/{d.raw_word()}/{d.raw_word(2)}_store.go")
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..{d.hex(7)}\n"
        f"--- /dev/null\n+++ b/{path}",
        (path,),
    )


# version


@single("version/cli", "version", "cli", "tool")
def _(d: Draw) -> Fact:
    tool = d.raw_word(2)
    version = d.version()
    return (f"$ {tool} --version\n{tool} {version} (build {d.hex(9)})", (version,))


@single("version/config", "version", "config", "tool")
def _(d: Draw) -> Fact:
    package = d.word()
    version = d.version()
    return (
        f"# requirements/prod.txt\n{package}=={version}\n{d.raw_word(2)}>={d.int_in(2, 9)}.0",
        (package, version),
    )


@single("version/chat", "version", "chat", "user")
def _(d: Draw) -> Fact:
    version = d.version()
    return (
        f"prod's still on {version} of the {d.raw_word()} client, don't use anything newer",
        (version,),
    )


# owner


@single("owner/sentence", "owner", "sentence", "user")
def _(d: Draw) -> Fact:
    first, surname = d.first(), d.surname()
    return (
        f"{first} {surname} owns the {d.raw_word()} service; check with {first} before "
        "changing its schema.",
        (surname,),
    )


@single("owner/config", "owner", "config", "tool")
def _(d: Draw) -> Fact:
    handle = d.handle()
    return (
        f"# .github/CODEOWNERS\n/services/{d.raw_word()}/    @{handle}\n*.sql    @dba-team",
        (f"@{handle}",),
    )


@single("owner/ticket", "owner", "ticket", "tool")
def _(d: Draw) -> Fact:
    surname = d.surname()
    return (
        f"{d.ticket()}: {d.raw_word()} export drops rows\nAssignee: {d.first()} {surname}\n"
        f"Reporter: {d.first()} {d.surname()}\nPriority: P2",
        (surname,),
    )


# deadline


@single("deadline/chat", "deadline", "chat", "user")
def _(d: Draw) -> Fact:
    date = d.date()
    return (f"need this merged before {date}, that's the {d.raw_word()} freeze", (date,))


@single("deadline/ticket", "deadline", "ticket", "tool")
def _(d: Draw) -> Fact:
    date = d.date()
    return (
        f"Due date: {date}\nFix versions: {d.raw_word()} {d.int_in(2, 9)}.{d.int_in(1, 9)}",
        (date,),
    )


@single("deadline/bullet", "deadline", "bullet", "assistant")
def _(d: Draw) -> Fact:
    date = d.date()
    return (f"- Hard stop for the {d.raw_word()} cutover: {date} 14:00 UTC", (date,))


# credential_ref (where a secret lives, never the secret)


@single("credential_ref/sentence", "credential_ref", "sentence", "user")
def _(d: Draw) -> Fact:
    path = d.ident(lambda: f"secret/data/{d.raw_word()}/deploy-token")
    return (
        f"The deploy token is in vault at {path}. Read it from there, never paste it into "
        "the repo.",
        (path,),
    )


@single("credential_ref/kv", "credential_ref", "kv", "tool")
def _(d: Draw) -> Fact:
    secret = d.ident(lambda: f"{d.raw_word().upper()}_API_KEY")
    return (f"{d.raw_word(2).upper()}_TOKEN: ${{{{ secrets.{secret} }}}}", (secret,))


@single("credential_ref/yaml", "credential_ref", "yaml", "tool")
def _(d: Draw) -> Fact:
    secret = d.ident(lambda: f"{d.raw_word()}-db-credentials")
    return (
        f"        env:\n          - name: {d.raw_word(2).upper()}_DB_PASSWORD\n"
        f"            valueFrom:\n              secretKeyRef:\n                name: {secret}\n"
        "                key: password",
        (secret,),
    )


# feature_flag


@single("feature_flag/json", "feature_flag", "json", "tool")
def _(d: Draw) -> Fact:
    flag = d.ident(lambda: f"{d.raw_word()}_{d.raw_word(2)}_v2")
    return (
        f'{{"flag": "{flag}", "enabled": false, "environment": "production", '
        f'"updated_by": "{d.raw_word(2)}"}}',
        (flag,),
    )


@single("feature_flag/chat", "feature_flag", "chat", "user")
def _(d: Draw) -> Fact:
    flag = d.ident(lambda: f"enable_{d.raw_word()}")
    return (f"keep {flag} off in prod until {d.first()} signs off", (flag,))


@single("feature_flag/log", "feature_flag", "log", "tool")
def _(d: Draw) -> Fact:
    flag = d.ident(lambda: f"ff.{d.raw_word()}.{d.raw_word(2)}")
    return (
        f"{d.timestamp()} INFO flagd: evaluated {flag}=true for tenant {d.raw_word(2)} "
        "(rollout 25%)",
        (flag,),
    )


# environment


@single("environment/cli", "environment", "cli", "tool")
def _(d: Draw) -> Fact:
    prefix = d.raw_word(2).upper()
    host, port = d.host(), d.port()
    return (
        f"$ env | grep {prefix}_\n{prefix}_DB_HOST={host}\n{prefix}_DB_PORT={port}",
        (host, port),
    )


@single("environment/sentence", "environment", "sentence", "assistant")
def _(d: Draw) -> Fact:
    image = d.ident(lambda: f"registry.{d.raw_word(2)}.dev/ci/{d.raw_word()}:{d.int_in(11, 97)}")
    return (
        f"The CI runners build inside {image}, so the OpenSSL in that image is what the "
        "tests link against.",
        (image,),
    )


@single("environment/yaml", "environment", "yaml", "tool")
def _(d: Draw) -> Fact:
    service = d.raw_word()
    image = d.ident(lambda: f"{d.raw_word()}-gateway:{d.int_in(2, 9)}.{d.int_in(11, 97)}")
    port = d.port()
    return (
        f'services:\n  {service}:\n    image: {image}\n    ports:\n      - "{port}:8080"',
        (image, port),
    )


# api_contract


@single("api_contract/sentence", "api_contract", "sentence", "user")
def _(d: Draw) -> Fact:
    endpoint = d.ident(lambda: f"/v2/{d.raw_word()}/batch")
    return (
        f"POST {endpoint} takes at most 500 items per call and answers 207 when some of them "
        "fail, so the client has to read the per-item status.",
        (endpoint,),
    )


@single("api_contract/json", "api_contract", "json", "tool")
def _(d: Draw) -> Fact:
    field = d.ident(lambda: f"{d.raw_word()}_ref")
    prefix = d.raw_word(2).upper()[:3]
    return (
        f'"{d.raw_word(2).capitalize()}Request": {{"required": ["{field}", "amount_minor"], '
        f'"properties": {{"{field}": {{"type": "string", "pattern": "^{prefix}-[0-9]{{6}}$"}}}}}}',
        (field,),
    )


@single("api_contract/comment", "api_contract", "comment", "assistant")
def _(d: Draw) -> Fact:
    func = d.ident(lambda: f"find_{d.raw_word()}")
    return (
        f"# contract: {func}() returns None for an unknown id and never raises; callers "
        "rely on that.",
        (func,),
    )


# facts the agent restates or finds on its own


@single("identifier/sentence", "identifier", "sentence", "assistant")
def _(d: Draw) -> Fact:
    ticket = d.ticket()
    return (
        f"I'll reference {ticket} in the commit message so the tracker links the fix.",
        (ticket,),
    )


@single("owner/bullet", "owner", "bullet", "assistant")
def _(d: Draw) -> Fact:
    handle = d.handle()
    return (
        f"- Review: @{handle} has to approve, CODEOWNERS lists them for services/{d.raw_word()}/",
        (f"@{handle}",),
    )


@single("version/sentence", "version", "sentence", "assistant")
def _(d: Draw) -> Fact:
    version = d.version()
    return (
        f"The lockfile resolves {d.raw_word()} to {version}, which already carries the fix "
        "for the unicode path bug, so no pin is needed.",
        (version,),
    )


@single("path/comment", "path", "comment", "assistant")
def _(d: Draw) -> Fact:
    path = d.ident(lambda: f"etc/{d.raw_word()}/settings.local.toml")
    return (
        f"# settings are read from {path} first (see load_settings), then the defaults",
        (path,),
    )


@single("quantity/bullet", "quantity", "bullet", "assistant")
def _(d: Draw) -> Fact:
    ms = d.decimal()
    return (
        f"- Measured: cold start {ms} ms on the {d.raw_word()} runner, before the change",
        (ms,),
    )


@single("feature_flag/sentence", "feature_flag", "sentence", "assistant")
def _(d: Draw) -> Fact:
    flag = d.ident(lambda: f"{d.raw_word()}_async_writes")
    return (
        f"I'll put the new write path behind {flag} so it ships dark until you flip it.",
        (flag,),
    )


@single("credential_ref/bullet", "credential_ref", "bullet", "assistant")
def _(d: Draw) -> Fact:
    variable = d.ident(lambda: f"{d.raw_word().upper()}_SIGNING_KEY")
    return (
        f"- The client reads the key from the {variable} environment variable; nothing is "
        "hard-coded.",
        (variable,),
    )


# -- pairs that both hold ---------------------------------------------------------------------


@pair("both/tickets", "coexists", ("identifier", "chat", "user"), ("identifier", "ticket", "tool"))
def _(d: Draw) -> tuple[Fact, Fact]:
    one, two = d.ticket(), d.ticket()
    return (
        (f"this is for {one}", (one,)),
        (
            f"{two}: worker crashes on an empty {d.raw_word()} batch\nStatus: In Progress\n"
            "Component: ingest-worker",
            (two,),
        ),
    )


@pair(
    "both/pool_hosts", "coexists", ("environment", "config", "tool"), ("environment", "log", "tool")
)
def _(d: Draw) -> tuple[Fact, Fact]:
    pool, domain = d.raw_word(), d.raw_word(2)
    one, two = d.host(domain), d.host(domain)
    return (
        (f"upstream {pool} {{\n    server {one}:8443;\n    keepalive 32;\n}}", (one,)),
        (f"{d.timestamp()} INFO healthcheck pool={pool} member={two} status=up", (two,)),
    )


@pair(
    "both/ports",
    "coexists",
    ("environment", "sentence", "assistant"),
    ("environment", "cli", "tool"),
)
def _(d: Draw) -> tuple[Fact, Fact]:
    service = d.raw_word()
    one, two = d.port(), d.port()
    return (
        (f"The {service} daemon serves client traffic on port {one}.", (one,)),
        (
            f"$ ss -ltnp | grep {service}\nLISTEN 0  128  0.0.0.0:{two}  0.0.0.0:*  "
            f'users:(("{service}",pid={d.int_in(1201, 9899)},fd=7))',
            (two,),
        ),
    )


@pair("both/owners", "coexists", ("owner", "sentence", "user"), ("owner", "config", "tool"))
def _(d: Draw) -> tuple[Fact, Fact]:
    surname, handle = d.surname(), d.handle()
    return (
        (
            f"{d.first()} {surname} owns {d.raw_word()} ingest, ask there about the parser.",
            (surname,),
        ),
        (f"/services/{d.raw_word()}-billing/    @{handle}", (f"@{handle}",)),
    )


@pair("both/deadlines", "coexists", ("deadline", "ticket", "tool"), ("deadline", "chat", "user"))
def _(d: Draw) -> tuple[Fact, Fact]:
    freeze, release = d.date(), d.date()
    return (
        (f"Milestone: {d.raw_word()} 4.0\nCode freeze: {freeze}", (freeze,)),
        (f"and the release itself goes out {release}", (release,)),
    )


@pair("both/versions", "coexists", ("version", "cli", "tool"), ("version", "chat", "user"))
def _(d: Draw) -> tuple[Fact, Fact]:
    name = d.raw_word(2)
    server, client = d.version(), d.version()
    return (
        (f"$ {name}-server --version\n{name}-server {server}", (server,)),
        (f"the {name} client lib we ship is {client}, that one stays", (client,)),
    )


# -- corrections: the second replaces the first -------------------------------------------------


@pair(
    "fix/plan_change",
    "corrects",
    ("environment", "sentence", "user"),
    ("correction", "chat", "user"),
)
def _(d: Draw) -> tuple[Fact, Fact]:
    old, new = d.host(), d.host()
    return (
        (f"For Friday's demo, deploy the build to {old}.", (old,)),
        (f"let's run the demo off {new}, it has the seeded accounts", (new,)),
    )


@pair("fix/diff_revert", "corrects", ("quantity", "config", "tool"), ("correction", "diff", "tool"))
def _(d: Draw) -> tuple[Fact, Fact]:
    name = d.raw_word()
    old, new = d.number(10_003, 29_999), d.number(10_003, 29_999)
    path = f"config/{name}.toml"
    return (
        (f"# {path}\n[retry]\nbackoff_ms = {old}\nmax_attempts = 5", (old,)),
        (
            f'Revert "Raise {name} retry backoff"\n\ndiff --git a/{path} b/{path}\n'
            f"@@ -2,3 +2,3 @@ [retry]\n-backoff_ms = {old}\n+backoff_ms = {new}\n max_attempts = 5",
            (new,),
        ),
    )


@pair(
    "fix/owner_in_passing",
    "corrects",
    ("owner", "sentence", "user"),
    ("correction", "chat", "user"),
)
def _(d: Draw) -> tuple[Fact, Fact]:
    pipeline = d.raw_word()
    old, new = d.surname(), d.surname()
    new_first = d.first()
    return (
        (
            f"{d.first()} {old} looks after the {pipeline} pipeline; loop them in on schema "
            "changes.",
            (old,),
        ),
        (
            f"fyi {new_first} {new} has had the {pipeline} pipeline since the reorg, so send "
            f"the schema question to {new_first}",
            (new,),
        ),
    )


@pair("fix/config_edit", "corrects", ("quantity", "chat", "user"), ("correction", "cli", "tool"))
def _(d: Draw) -> tuple[Fact, Fact]:
    name = d.raw_word()
    old, new = d.number(12_011, 64_999), d.number(12_011, 64_999)
    return (
        (f"the {name} queue capacity is {old} in the deploy env", (old,)),
        (
            f"$ sed -i 's/^QUEUE_CAPACITY=.*/QUEUE_CAPACITY={new}/' deploy/{name}.env && "
            f"grep QUEUE deploy/{name}.env\nQUEUE_CAPACITY={new}",
            (new,),
        ),
    )


@pair(
    "fix/rerun_figure",
    "corrects",
    ("quantity", "test_output", "tool"),
    ("correction", "test_output", "tool"),
)
def _(d: Draw) -> tuple[Fact, Fact]:
    name = d.raw_word()
    old, new = d.decimal(), d.decimal()
    return (
        (f"bench_{name}_ingest: p95 {old} ms over 2000 requests", (old,)),
        (
            "== re-run on the pinned runner ==\n"
            f"bench_{name}_ingest: p95 {new} ms over 2000 requests",
            (new,),
        ),
    )


@pair("fix/date_slip", "corrects", ("deadline", "sentence", "user"), ("correction", "chat", "user"))
def _(d: Draw) -> tuple[Fact, Fact]:
    name = d.raw_word()
    old, new = d.date(), d.date()
    return (
        (f"The {name} cutover is on {old}.", (old,)),
        (
            f"{d.raw_word(2).capitalize()} pushed their side back, so the {name} cutover lands "
            f"on {new}",
            (new,),
        ),
    )


@pair(
    "fix/commit_bump", "corrects", ("version", "config", "tool"), ("correction", "commit", "tool")
)
def _(d: Draw) -> tuple[Fact, Fact]:
    package = d.raw_word()
    old, new = d.version(), d.version()
    return (
        (f"# requirements/prod.txt\n{package}=={old}", (old,)),
        (f"{d.hex(9)} Bump {package} to {new} (CVE-2027-{d.int_in(20013, 49989)})", (new,)),
    )


@pair(
    "fix/ticket_reassign", "corrects", ("owner", "ticket", "tool"), ("correction", "ticket", "tool")
)
def _(d: Draw) -> tuple[Fact, Fact]:
    old_first, new_first = d.first(), d.first()
    old, new = d.surname(), d.surname()
    return (
        (
            f"{d.ticket()}: flaky {d.raw_word()} upload test\nAssignee: {old_first} {old}\n"
            "Priority: P3",
            (old,),
        ),
        (
            f"{d.date()} 09:12 · {new_first} {new} changed the Assignee from {old_first} {old} "
            f"to {new_first} {new}",
            (new,),
        ),
    )


@pair(
    "fix/env_export",
    "corrects",
    ("environment", "sentence", "assistant"),
    ("correction", "shell", "tool"),
)
def _(d: Draw) -> tuple[Fact, Fact]:
    old, new = d.host(), d.host()
    n = d.int_in(301, 899)
    prefix = d.raw_word(2).upper()
    return (
        (f"I'll run the integration tests against the staging database at {old}.", (old,)),
        (f"  {n}  export {prefix}_DB_HOST={new}\n  {n + 1}  pytest -x tests/integration", (new,)),
    )


@pair(
    "fix/marker_correction",
    "corrects",
    ("environment", "kv", "tool"),
    ("correction", "sentence", "user"),
    marker=True,
)
def _(d: Draw) -> tuple[Fact, Fact]:
    name = d.raw_word()
    old, new = d.port(), d.port()
    return (
        (f"{name}.admin_port: {old}", (old,)),
        (f"Correction: the {name} admin port is {new}, not {old}.", (new,)),
    )


@pair("fix/scratch_that", "corrects", ("path", "chat", "user"), ("correction", "chat", "user"))
def _(d: Draw) -> tuple[Fact, Fact]:
    old = d.ident(lambda: f"reports/{d.raw_word()}/summary.md")
    new = d.ident(lambda: f"docs/{d.raw_word()}/summary.md")
    return ((f"write the report to {old}", (old,)), (f"scratch that, put it in {new}", (new,)))


@pair("fix/log_reload", "corrects", ("quantity", "yaml", "tool"), ("correction", "log", "tool"))
def _(d: Draw) -> tuple[Fact, Fact]:
    name = d.raw_word()
    old, new = d.number(10_003, 49_999), d.number(10_003, 49_999)
    return (
        (f"# /etc/{name}/limits.yaml\nlimits:\n  max_queued_bytes: {old}\n  burst: 64", (old,)),
        (
            f"{d.timestamp()} INFO config reloaded from /etc/{name}/limits.yaml: "
            f"max_queued_bytes={new} burst=64",
            (new,),
        ),
    )


@pair(
    "fix/json_response",
    "corrects",
    ("environment", "sentence", "user"),
    ("correction", "json", "tool"),
)
def _(d: Draw) -> tuple[Fact, Fact]:
    name = d.raw_word()
    old, new = d.region(), d.region()
    return (
        (f"The {name} service runs in {old}.", (old,)),
        (
            f'{{"service": "{name}", "region": "{new}", "state": "migrated", '
            f'"since": "{d.date()}"}}',
            (new,),
        ),
    )


@pair(
    "fix/assistant_restate",
    "corrects",
    ("identifier", "chat", "user"),
    ("correction", "sentence", "assistant"),
)
def _(d: Draw) -> tuple[Fact, Fact]:
    old = d.ident(lambda: f"feature/{d.raw_word()}-{d.int_in(11, 97)}")
    new = d.ident(lambda: f"hotfix/{d.raw_word()}-{d.int_in(11, 97)}")
    return (
        (f"branch off {old} for this", (old,)),
        (f"Following the review thread, I'm basing the fix on {new}.", (new,)),
    )


@pair(
    "fix/actually",
    "corrects",
    ("constraint", "sentence", "user"),
    ("correction", "chat", "user"),
    marker=True,
)
def _(d: Draw) -> tuple[Fact, Fact]:
    name = d.raw_word()
    old, new = d.number(12_011, 64_999), d.number(12_011, 64_999)
    return (
        (f"Cap the {name} import at {old} rows per batch.", (old,)),
        (f"actually make that {new} rows per batch, {old} times out on the big tenants", (new,)),
    )


@pair(
    "fix/table_rollout", "corrects", ("version", "table", "tool"), ("correction", "table", "tool")
)
def _(d: Draw) -> tuple[Fact, Fact]:
    name = d.raw_word()
    old, new = d.version(), d.version()
    head = "| service | version | env  | health  |\n|---------|---------|------|---------|\n"
    return (
        (f"{head}| {name} | {old} | prod | healthy |", (old,)),
        (f"{head}| {name} | {new} | prod | healthy |", (new,)),
    )


@pair(
    "fix/instead",
    "corrects",
    ("preference", "chat", "user"),
    ("correction", "chat", "user"),
    marker=True,
)
def _(d: Draw) -> tuple[Fact, Fact]:
    old = d.ident(lambda: f"{d.raw_word()}mock")
    new = d.ident(lambda: f"{d.raw_word()}mock")
    return (
        (f"use {old} for the http mocks", (old,)),
        (f"use {new} instead of {old}, {old} can't do async", (new,)),
    )


@pair(
    "fix/secret_rotation",
    "corrects",
    ("credential_ref", "yaml", "tool"),
    ("correction", "log", "tool"),
)
def _(d: Draw) -> tuple[Fact, Fact]:
    prefix = d.raw_word(2).upper()
    old = d.ident(lambda: f"secret/data/{d.raw_word()}/db")
    new = d.ident(lambda: f"secret/data/{d.raw_word()}/db-rotated")
    return (
        (f"vault:\n  role: {prefix.lower()}-app\n  db_secret_path: {old}", (old,)),
        (
            f"{d.timestamp()} INFO vault-agent: rotated {prefix} credentials, rendering {new}",
            (new,),
        ),
    )


CORRECTIONS = [p for p in PAIRS if p.relation == "corrects"]
COEXISTING = [p for p in PAIRS if p.relation == "coexists"]


# -- a session's set --------------------------------------------------------------------------


def shares(count: int) -> tuple[int, int, int]:
    """How many (singles, correction pairs, coexisting pairs) make ``count`` canaries."""
    corrections = max(1, count // 8) if count >= 2 else 0
    coexisting = max(1, count // 12) if count >= 4 else 0
    return count - 2 * (corrections + coexisting), corrections, coexisting


def _order(seed: int, what: str, n: int) -> list[int]:
    """A seed's shuffle of ``range(n)``, the same for every session of a run."""
    order = list(range(n))
    random.Random(f"heldout-d:{seed}:{what}").shuffle(order)
    return order


def _stretch(seed: int, what: str, n: int, variant: int, per_session: int) -> list[int]:
    """Session ``variant``'s stretch of the run's walk through ``n`` templates."""
    order = _order(seed, what, n)
    start = variant * per_session
    return [order[(start + j) % n] for j in range(per_session)]


def _valid(canaries: list[dict[str, Any]]) -> bool:
    """Every keep string in its own text and in no other canary's text (a correction may quote
    the value it replaces); no keep string inside another canary's keep string."""
    for c in canaries:
        if not all(s in c["text"] for s in c["keep"]):
            raise AssertionError(f"{c['template']}: a keep string missing from its own text")
        for other in canaries:
            if other is c:
                continue
            quoting = other.get("supersedes") == c["id"]
            for s in c["keep"]:
                if not quoting and s in other["text"]:
                    return False
                if any(s in t for t in other["keep"]):
                    return False
    return True


def _attempt(seed: int, count: int, variant: int, attempt: int) -> list[dict[str, Any]]:
    rng = random.Random(f"heldout-d:{seed}:{variant}:{attempt}")
    draw = Draw(rng)
    n_single, n_fix, n_both = shares(count)
    made: list[dict[str, Any]] = []

    def add(template: str, side: Side, fact: Fact, at: float) -> dict[str, Any]:
        text, keep = fact
        item: dict[str, Any] = {
            "id": f"d4-{variant}-{len(made):02d}",
            "kind": side.kind,
            "at": round(at, 3),
            "text": text,
            "keep": list(keep),
            "style": side.style,
            "template": template,
            "voice": side.voice,
        }
        made.append(item)
        return item

    for index in _stretch(seed, "singles", len(SINGLES), variant, n_single):
        t = SINGLES[index]
        add(t.name, Side(t.kind, t.style, t.voice), t.write(draw), rng.uniform(0.0, 0.9))
    for relation, templates, n in (("fix", CORRECTIONS, n_fix), ("both", COEXISTING, n_both)):
        for index in _stretch(seed, relation, len(templates), variant, n):
            p = templates[index]
            one, two = p.write(draw)
            first_at = rng.uniform(0.02, 0.55)
            second_at = min(0.95, first_at + rng.uniform(0.08, 0.35))
            first = add(f"{p.name}:first", p.first, one, first_at)
            second = add(p.name, p.second, two, second_at)
            if p.relation == "corrects":
                second["supersedes"] = first["id"]
                second["marker"] = p.marker
            else:
                first["coexists"], second["coexists"] = second["id"], first["id"]
    made.sort(key=lambda c: c["at"])  # stable: at equal ``at``, the order they were made
    return made


def generate(seed: int, count: int = 24, variant: int = 0) -> list[dict[str, Any]]:
    """``count`` canaries for session ``variant`` of a run seeded ``seed``, in the shape
    ``bench/retention.py``'s ``canaries_from`` reads (plus ``voice`` and, on a correction,
    ``marker``)."""
    for attempt in range(ATTEMPTS):
        canaries = _attempt(seed, count, variant, attempt)
        if _valid(canaries):
            return canaries
    raise RuntimeError(f"no collision-free set for seed {seed}, variant {variant}")
