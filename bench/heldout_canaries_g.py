"""Held-out canary generator G, written blind, for ``bench/retention.py --generator``.

Lab note
--------
*Why.* The retention benchmark plants facts ("canaries") into recorded agent sessions, compacts
five times and checks which facts survive. A memory tuned on one generator's wording can look
better than it is; this file is a second opinion written by someone who never saw the tuned
sets, so that its figures measure memory on facts nobody tuned for.

*What I read.* ``bench/retention.py`` (the canary contract: ``Canary``, ``canaries_from``,
``CanarySource``, ``_generator``, ``insertion_step``, ``insert_canaries``,
``add_to_observation``, ``add_to_assistant``, ``wire_text``, ``strip_replaced``,
``presents_as_current``, ``KeepIndex``, ``score_context`` and the options of ``main``),
``tests/bench/support.py``, ``tests/bench/test_retention_generated.py``,
``tests/bench/test_heldout_canaries_f.py`` (only as the shape of a test file),
``tests/conftest.py`` and ``pyproject.toml``; the recorded sessions
(``shared/data/swebench-gemini3``) only to check that no keep string occurs there by chance.

*What I did not read.* Anything of the summarizer (``src/abridged/engine/summarize/``) or of
the core's facts, ledger or references; every other canary generator (``bench/
canary_generator.py``, ``bench/heldout_canaries*.py``); any canary JSON; ``bench/RESULTS.md``;
git log messages; issue notes. I did not run ``bench/retention.py`` and have seen no benchmark
figure: nothing here is tuned to a score. (The test file runs a tiny benchmark pass only to see
that it runs and reports; it asserts and prints no figure.)

*Design.*

- **Templates** (``TEMPLATES``, 77): a kind, a setting key and a noun phrase about an invented
  subject (``{s}``, a made-up service name), two sentences stating the fact, and a value
  drawer. Kinds (``KINDS``, 13): constraint, prohibition, preference, identifier,
  decision, quantity (number with unit), path, version, owner, deadline, endpoint, limit and
  credential_name (a secret's *name*, never a value). Three shapes:

  - ``single`` (43): one fact;
  - ``correction`` (24): a fact, then 0.10-0.35 of the session later the same subject given
    another value; the later canary's ``supersedes`` names the first. Each correction template
    is corrected one way (``Template.phrasing``), so the benchmark's stale share by the
    correcting template is a stale share by phrasing;
  - ``coexist`` (10): two facts of the same template about two different subjects that both
    hold; each ``coexists`` names the other.

- **Styles** (``STYLES``, 37), chosen away from those the previous blind set used: Helm values,
  Terraform/HCL, docker-compose, nginx config, systemd drop-ins, psql query output, Jupyter
  cells, Grafana alert JSON, ``kubectl describe``, grep hits, logfmt lines, Python tracebacks,
  ``helm`` CLI output, Ansible tasks, ``git log --oneline``, regex-heavy lint output,
  ``etcdctl``; Slack threads with reactions, Linear issue activity, calendar invitations,
  Markdown ADRs, RFC-style sections, postmortem action tables, Gherkin, wiki tables, OCR of a
  whiteboard photo, a Q&A forum post, a video-call chat log; and assistant-style text: headed
  answers, plans, recaps, findings tables, narrated tool use, checklists, short answers, code
  edits, caveats. Each style has a register (``REGISTERS``: ``user`` pastes, ``tool`` output,
  ``assistant`` prose); a fact's register is drawn uniformly, then a style within it, so the
  three are balanced. Every fact is planted by ``retention.py`` in each placement (user
  message, tool observation, assistant message; one pass each); the texts hold no closing tag,
  so they can sit inside a text-protocol ``<output>``.

- **Corrections** (``PHRASINGS``, 19 ways, no fixed marker word): a config shown again with
  another value, a wiki table pasted again, a quiet restatement, a reassignment mentioned in
  passing, an updated calendar invitation, a ``helm rollback``, "scratch that", a reply
  admitting the wrong paste, a SQL ``UPDATE``, a ``kubectl patch`` (these ten do not name the
  old value); a retry that connected to another host, "moved from X to Y", an Ansible diff with
  ``-``/``+`` lines, "X is cancelled, Y instead", a ``terraform plan`` ``~ X -> Y``, a Jira
  field history, a ``git log`` showing a revert, an ADR that replaces an earlier one, a
  postmortem action handed over (these nine name it). Twelve correction templates name the
  old value and twelve do not. No announcing word ("update", "changed", "instead", "now",
  ...) is in more than a quarter of the corrections (the test file checks this).

- **Values**: drawn per (seed, variant, slot, template) from
  ``random.Random(f"heldout-g/{seed}/{variant}/{slot}/{template}/{attempt}")``, from this
  file's own vocabulary: invented words from its own syllables, ids, hosts, ports, paths,
  versions, amounts with units, invented surnames, dates in 2027-2029 (four formats), URLs on
  invented domains, secret names. The two facts of a pair write their values in the same
  form (``Drawer``'s second generator). A keep string is the value alone (for an owner, the
  surname; the text shows a first name too). A slot is redrawn (``attempt`` + 1) while a keep
  string of it occurs in another canary's text or another's in its (a correction may name the
  value it replaces), while the two values of a pair contain one another, or while a keep
  string occurs in the recorded sessions (checked when the file is at its usual place; the
  values are made so that this practically never happens: no slot of 960 sessions, 60 seeds,
  needed it, so the output does not in practice depend on the file).

- **Plan**: the templates are dealt from per-seed shuffles of all 77 (a new shuffle when one
  runs out), session after session (``variant`` 0, 1, ...): each session takes ``count``
  canaries (a pair takes two), no template twice, so a run of 16 sessions with 8 or more
  canaries each plants every template. Positions: a single or a coexisting fact at ``at`` in
  [0.03, 0.92]; a correction pair's first in [0.03, 0.55], the later one 0.10-0.35 after it.
"""

from __future__ import annotations

import functools
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAME = "heldout-g"
ROOT = Path(__file__).resolve().parent.parent
RECORDED = ROOT.parent / "shared" / "data" / "swebench-gemini3" / "trajectories.jsonl"

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
    "credential_name",
)
SHAPES = ("single", "correction", "coexist")
# kinds whose fact is a rule or a choice: config styles write the sentence beside the setting
CLAIMS = frozenset({"constraint", "prohibition", "preference", "decision"})

Rng = random.Random

# -- vocabulary -----------------------------------------------------------------------------------

_ONSETS = (
    "b", "bl", "br", "d", "dr", "f", "g", "gr", "h", "j", "k", "kl", "kr", "l", "m",
    "n", "p", "pl", "qu", "r", "s", "sk", "sp", "t", "th", "tr", "v", "w", "z",
)  # fmt: skip
_NUCLEI = ("a", "e", "i", "o", "u", "au", "ei", "oa", "y")
_CODAS = ("", "", "", "n", "r", "l", "m", "sk", "nd", "v", "x", "th")
_FIRST = (
    "Ines", "Tomasz", "Adaeze", "Kenji", "Marisol", "Oskar", "Priya", "Yusuf", "Lotte",
    "Rafael", "Siobhan", "Dmitri", "Amara", "Henrik", "Farah", "Luca", "Noor", "Bao", "Elif",
    "Mateo",
)  # fmt: skip
_SURNAME_ENDS = (
    "ard", "berg", "cott", "holm", "ington", "kova", "mund", "oni", "quist", "sen", "vic",
    "wright", "ley", "ano", "ez",
)  # fmt: skip
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_UPPER = "BCDFGHJKLMNPQRSTVWXZ"
_B36 = "abcdefghijklmnopqrstuvwxyz0123456789"


def _word(r: Rng, lo: int = 2, hi: int = 2, shortest: int = 5, longest: int = 10) -> str:
    """An invented lowercase word (``lo`` to ``hi`` syllables; a third one now and then)."""
    while True:
        n = r.randint(lo, hi) + (r.random() < 0.2)
        w = "".join(r.choice(_ONSETS) + r.choice(_NUCLEI) + r.choice(_CODAS) for _ in range(n))
        if shortest <= len(w) <= longest:
            return w


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _hex(r: Rng, n: int) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def _b36(r: Rng, n: int) -> str:
    return "".join(r.choice(_B36) for _ in range(n))


def _sha(r: Rng) -> str:
    return _hex(r, 7)


def _names(r: Rng, n: int) -> list[str]:
    return r.sample(_FIRST, n)


# -- value drawers ------------------------------------------------------------------------------
# A drawer returns (value, shown): the keep string is the value, the text shows ``shown`` (the
# same, but for an owner: first name and surname). Values come from ``r``; the form of the value
# (date format, kind of path, unit) from ``k``, which the two facts of a pair share, so that a
# correction or a second subject writes its value the way the first one did.

Drawn = tuple[str, str]
Drawer = Callable[[Rng, Rng], Drawn]


def _same(value: str) -> Drawn:
    return value, value


def _flag(r: Rng, k: Rng) -> Drawn:
    w1, w2, n = _word(r), _word(r, 1, 2, 4), r.randint(2, 99)
    return _same(k.choice((f"ff_{w1}_{w2}", f"{w1}.{w2}.enabled", f"FLAG_{w1.upper()}_{n}")))


def _region(r: Rng, k: Rng) -> Drawn:
    return _same(f"{k.choice(('eu', 'us', 'ap', 'sa', 'me'))}-{_word(r)}-{r.randint(1, 9)}")


def _header(r: Rng, k: Rng) -> Drawn:
    return _same(f"X-{_cap(_word(r))}-{_cap(_word(r, 1, 2, 4))}")


def _window(r: Rng, k: Rng) -> Drawn:
    h = r.randint(0, 21)
    m1, m2 = r.choice((0, 10, 15, 20, 40, 45, 50)), r.choice((5, 25, 35, 55))
    return _same(f"{r.choice(_DAYS)} {h:02d}:{m1:02d}-{h + r.randint(1, 2):02d}:{m2:02d} UTC")


def _table(r: Rng, k: Rng) -> Drawn:
    return _same(f"{_word(r)}_{_word(r, 1, 2, 4)}")


def _branch(r: Rng, k: Rng) -> Drawn:
    w, n = _word(r), r.randint(2, 99)
    return _same(k.choice((f"release/{w}-{n}", f"hotfix/{w}.{n}", f"{w}/stable-{n}")))


def _package(r: Rng, k: Rng) -> Drawn:
    w, tail = _word(r), _word(r, 1, 2, 4)
    return _same(k.choice((f"{w}-kit", f"py{w}", f"lib{w}", f"@{w}/{tail}")))


def _cluster(r: Rng, k: Rng) -> Drawn:
    env = k.choice(("prod", "edge", "east", "blue", "batch"))
    return _same(f"{_word(r)}-{env}-{r.randint(1, 40):02d}")


def _fixtures(r: Rng, k: Rng) -> Drawn:
    w = _word(r)
    return _same(k.choice((f"{w}-fixtures", f"{w}_factory", f"{w}.builders")))


def _layout(r: Rng, k: Rng) -> Drawn:
    w, n = _word(r), r.randint(2, 9)
    return _same(k.choice((f"{w}-line-v{n}", f"{w}json-{n}")))


def _prefix(r: Rng, k: Rng) -> Drawn:
    return _same(f"{_word(r)}_{_word(r, 1, 1, 3)}_")


def _runner(r: Rng, k: Rng) -> Drawn:
    return _same(f"{_word(r)}-{r.choice(('runner', 'harness', 'check'))}")


def _ticket(r: Rng, k: Rng) -> Drawn:
    key = "".join(r.choice(_UPPER) for _ in range(k.randint(2, 4)))
    return _same(f"{key}-{r.randint(1000, 99999)}")


def _account(r: Rng, k: Rng) -> Drawn:
    forms = (f"acct_{_b36(r, 12)}", f"cus_{_b36(r, 14)}", f"org-{_b36(r, 8)}")
    return _same(k.choice(forms))


def _incident(r: Rng, k: Rng) -> Drawn:
    forms = (f"INC{r.randint(100000, 999999)}", f"IR-{r.randint(1000, 9999)}-{_word(r).upper()}")
    return _same(k.choice(forms))


def _resource(r: Rng, k: Rng) -> Drawn:
    return _same(k.choice((f"sg-{_hex(r, 10)}", f"vol-{_hex(r, 12)}", f"sgr-{_hex(r, 9)}")))


def _product(*suffixes: str) -> Drawer:
    """An invented product name ending in one of ``suffixes`` (``GrelvaMQ``)."""

    def draw(r: Rng, k: Rng) -> Drawn:
        return _same(f"{_cap(_word(r))}{r.choice(suffixes)}")

    return draw


def _shard_key(r: Rng, k: Rng) -> Drawn:
    return _same(f"{_word(r)}_{_word(r, 1, 2, 4)}_id")


def _vendor(r: Rng, k: Rng) -> Drawn:
    return _same(f"{_cap(_word(r))} {r.choice(('Systems', 'Labs', 'Cloud', 'Works', 'Data'))}")


def _amount(unit: str, lo: int, hi: int) -> Drawer:
    def draw(r: Rng, k: Rng) -> Drawn:
        return _same(f"{r.randint(lo, hi)} {unit}")

    return draw


def _vcpu(r: Rng, k: Rng) -> Drawn:
    return _same(f"{r.randint(3, 47)}.{r.choice((25, 5, 75))} vCPU")


def _path(r: Rng, k: Rng) -> Drawn:
    w1, w2, n = _word(r), _word(r, 1, 2, 4), r.randint(2, 99)
    forms = (
        f"/srv/{w1}/{w2}/spool",
        f"/var/lib/{w1}/{w2}-{n}.db",
        f"/etc/{w1}/conf.d/{n:02d}-{w2}.conf",
        f"/run/{w1}/{w2}.sock",
        f"/mnt/{w1}-{n}/{w2}",
        f"/opt/{w1}/var/{w2}",
    )
    return _same(k.choice(forms))


def _version(r: Rng, k: Rng) -> Drawn:
    base = f"{r.randint(2, 39)}.{r.randint(10, 89)}.{r.randint(1, 99)}"
    suffix = k.choice(("", "", f"-rc.{r.randint(1, 9)}", f"+{_word(r, 1, 2, 4)}{r.randint(1, 9)}"))
    return _same(base + suffix)


def _owner(r: Rng, k: Rng) -> Drawn:
    surname = _cap(_word(r, 1, 2, 4, 7)) + r.choice(_SURNAME_ENDS)
    return surname, f"{r.choice(_FIRST)} {surname}"


def _date(r: Rng, k: Rng) -> Drawn:
    y, m, d = r.randint(2027, 2029), r.randint(1, 12), r.randint(1, 28)
    forms = (
        f"{y}-{m:02d}-{d:02d}",
        f"{d} {_MONTHS[m - 1][:3]} {y}",
        f"{_MONTHS[m - 1]} {d}, {y}",
        f"{y}/{m:02d}/{d:02d}",
    )
    return _same(k.choice(forms))


def _domain(r: Rng, k: Rng) -> str:
    return f"{_word(r)}-{_word(r, 1, 2, 4)}.{r.choice(('io', 'dev', 'net', 'cloud', 'systems'))}"


def _url(r: Rng, k: Rng) -> Drawn:
    sub, tail = _word(r, 1, 2, 3), _word(r, 1, 2, 4)
    return _same(
        f"https://{sub}.{_domain(r, k)}/{k.choice(('v2', 'v3', 'api/v1', 'hooks'))}/{tail}"
    )


def _origin(r: Rng, k: Rng) -> Drawn:
    return _same(f"https://{_word(r, 1, 2, 3)}.{_domain(r, k)}")


def _hostport(r: Rng, k: Rng) -> Drawn:
    zone = k.choice(("internal", "svc.cluster.local", "corp", "lan"))
    return _same(f"{_word(r)}-{r.randint(1, 9)}.{zone}:{r.randint(20000, 64999)}")


def _rate(r: Rng, k: Rng) -> Drawn:
    n = r.randint(12, 9800)
    return _same(f"{n} {k.choice(('req/min', 'req/s', 'writes/s', 'calls/h'))}")


def _env_secret(r: Rng, k: Rng) -> Drawn:
    tail = k.choice(("API_TOKEN", "SIGNING_KEY", "WEBHOOK_SECRET", "CLIENT_SECRET"))
    return _same(f"{_word(r).upper()}_{_word(r, 1, 2, 4).upper()}_{tail}")


def _vault_path(r: Rng, k: Rng) -> Drawn:
    w1, w2 = _word(r), _word(r, 1, 2, 4)
    return _same(k.choice((f"secret/{w1}/{w2}-signing-key", f"kv/{w1}/{w2}/api-token")))


def _gcp_secret(r: Rng, k: Rng) -> Drawn:
    w1, w2 = _word(r), _word(r, 1, 2, 4)
    return _same(f"projects/{w1}-{r.randint(100, 999)}/secrets/{w2}-db-password")


def _k8s_secret(r: Rng, k: Rng) -> Drawn:
    return _same(f"{_word(r)}-{_word(r, 1, 2, 4)}-credentials")


# -- templates ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Template:
    """A fact: kind, shape, setting key and noun phrase about the subject ``{s}``, sentences
    stating it (``{v}``: the value as shown), its value drawer, and for a correction how the
    later value is written (a name of ``PHRASINGS``)."""

    name: str
    kind: str
    shape: str
    key: str
    label: str
    says: tuple[str, ...]
    draw: Drawer
    phrasing: str | None = None

    @property
    def size(self) -> int:
        """How many canaries it plants."""
        return 1 if self.shape == "single" else 2


def _t(  # noqa: PLR0917 - the template table reads best as rows of positional fields
    name: str,
    kind: str,
    key: str,
    label: str,
    says: Sequence[str],
    draw: Drawer,
    shape: str = "single",
    phrasing: str | None = None,
) -> Template:
    return Template(name, kind, shape, key, label, tuple(says), draw, phrasing)


def _fix(  # noqa: PLR0917
    name: str,
    kind: str,
    phrasing: str,
    key: str,
    label: str,
    says: Sequence[str],
    draw: Drawer,
) -> Template:
    return _t(name, kind, key, label, says, draw, "correction", phrasing)


def _both(  # noqa: PLR0917
    name: str, kind: str, key: str, label: str, says: Sequence[str], draw: Drawer
) -> Template:
    return _t(name, kind, key, label, says, draw, "coexist")


TEMPLATES: tuple[Template, ...] = (
    # -- single facts --
    _t("write_flag", "constraint", "{s}_write_flag", "the {s} write flag",
       ("every write on the {s} path has to sit behind the flag {v}",
        "{s} writes may only go out with {v} switched on"), _flag),
    _t("data_region", "constraint", "{s}_region", "the {s} data region",
       ("{s} data must stay in region {v}",
        "storage for {s} is pinned to {v} and nothing leaves that region"), _region),
    _t("required_header", "constraint", "{s}_required_header", "the header {s} calls must carry",
       ("every call into {s} has to carry the {v} header",
        "requests to {s} are rejected unless they send {v}"), _header),
    _t("change_window", "constraint", "{s}_change_window", "the {s} change window",
       ("changes to {s} only ship inside the window {v}",
        "the {s} change window is {v}, and outside it nothing merges"), _window),
    _t("hands_off_table", "prohibition", "{s}_protected_table", "the {s} table nobody rewrites",
       ("nobody truncates or rewrites the {v} table",
        "keep your hands off {v}: no UPDATE, no DELETE, no migration from {s}"), _table),
    _t("frozen_branch", "prohibition", "{s}_frozen_branch", "the frozen {s} branch",
       ("no force-pushes to {v}, ever",
        "{v} is frozen for {s}, so do not push to it directly"), _branch),
    _t("banned_dependency", "prohibition", "{s}_banned_dependency", "the package {s} must not use",
       ("do not add {v} as a dependency of {s}",
        "{s} must not import {v} again"), _package),
    _t("no_deploy_cluster", "prohibition", "{s}_forbidden_cluster",
       "the cluster {s} never goes to",
       ("never deploy {s} to {v}",
        "{s} stays off {v}: no deploys there"), _cluster),
    _t("fixture_style", "preference", "{s}_fixtures", "the {s} test fixtures",
       ("for {s} tests we prefer {v} over hand-built objects",
        "use {v} when a {s} test needs data, it is what the team likes"), _fixtures),
    _t("log_layout", "preference", "{s}_log_layout", "the {s} log layout",
       ("{s} logs should use the {v} layout",
        "the team prefers the {v} log layout for {s}"), _layout),
    _t("metric_prefix", "preference", "{s}_metric_prefix", "the {s} metric prefix",
       ("new {s} metrics should be prefixed {v}",
        "please start new {s} metric names with {v}"), _prefix),
    _t("tracking_ticket", "identifier", "{s}_ticket", "the {s} tracking ticket",
       ("the {s} work is tracked in {v}",
        "{s} changes go under ticket {v}"), _ticket),
    _t("affected_account", "identifier", "{s}_affected_account", "the account in the {s} report",
       ("the account hitting the {s} bug is {v}",
        "repro with account {v}, that is the one the {s} report came from"), _account),
    _t("incident_ref", "identifier", "{s}_incident", "the {s} incident number",
       ("the {s} outage is incident {v}",
        "reference {v} in anything about the {s} outage"), _incident),
    _t("security_group", "identifier", "{s}_security_group", "the {s} security group",
       ("{s} hosts sit in security group {v}",
        "the security group for {s} is {v}"), _resource),
    _t("queue_product", "decision", "{s}_queue", "the {s} queue",
       ("for {s} we went with {v} as the queue",
        "the {s} queue will be {v}, the alternatives were dropped"),
       _product("MQ", "Bus", "Stream")),
    _t("shard_key", "decision", "{s}_shard_key", "the {s} shard key",
       ("{s} gets sharded on {v}",
        "we agreed to partition {s} by {v}"), _shard_key),
    _t("vendor_pick", "decision", "{s}_vendor", "the {s} vendor",
       ("{v} won the {s} vendor review",
        "the {s} contract goes to {v}"), _vendor),
    _t("volume_size", "quantity", "{s}_volume_size", "the {s} data volume",
       ("the {s} data volume is {v}",
        "{s} gets a {v} volume"), _amount("GiB", 120, 9000)),
    _t("call_timeout", "quantity", "{s}_timeout", "the {s} client timeout",
       ("{s} calls time out after {v}",
        "the {s} client timeout is {v}"), _amount("ms", 700, 9800)),
    _t("import_batch", "quantity", "{s}_batch_size", "the {s} import batch size",
       ("{s} imports go in batches of {v}",
        "the batch size for the {s} import is {v}"), _amount("rows", 1100, 48000)),
    _t("spool_dir", "path", "{s}_spool_dir", "the {s} spool directory",
       ("{s} spools to {v}",
        "the {s} spool directory is {v}"), _path),
    _t("state_db", "path", "{s}_state_file", "the {s} state file",
       ("{s} keeps its state in {v}",
        "the {s} state file lives at {v}"), _path),
    _t("conf_dropin", "path", "{s}_override_file", "the {s} override file",
       ("the {s} drop-in config is {v}",
        "{s} reads its overrides from {v}"), _path),
    _t("control_socket", "path", "{s}_control_socket", "the {s} control socket",
       ("{s} listens on the control socket {v}",
        "the {s} control socket is {v}"), _path),
    _t("runtime_pin", "version", "{s}_runtime", "the {s} runtime",
       ("{s} is pinned to runtime {v}",
        "{s} runs on runtime version {v}"), _version),
    _t("schema_version", "version", "{s}_schema_version", "the {s} schema version",
       ("the {s} schema is at version {v}",
        "{s} expects schema {v}"), _version),
    _t("client_lib", "version", "{s}_client_version", "the {s} client library",
       ("the {s} client library is on {v}",
        "{s} ships with client {v}"), _version),
    _t("service_owner", "owner", "{s}_owner", "the {s} owner",
       ("{v} owns {s}",
        "{s} belongs to {v}, ask them first"), _owner),
    _t("required_reviewer", "owner", "{s}_reviewer", "the {s} reviewer",
       ("changes to {s} need a review from {v}",
        "{v} is the required reviewer for {s}"), _owner),
    _t("on_call", "owner", "{s}_on_call", "the {s} on-call",
       ("{v} is on call for {s} this rotation",
        "page {v} for {s} problems"), _owner),
    _t("freeze_date", "deadline", "{s}_freeze_date", "the {s} code freeze",
       ("the {s} code freeze starts {v}",
        "{s} freezes on {v}"), _date),
    _t("cert_expiry", "deadline", "{s}_cert_expiry", "the {s} certificate expiry",
       ("the {s} TLS certificate expires {v}",
        "the certificate of {s} runs out on {v}"), _date),
    _t("report_due", "deadline", "{s}_report_due", "the {s} report deadline",
       ("the {s} report is due {v}",
        "{s} has to be delivered by {v}"), _date),
    _t("webhook_url", "endpoint", "{s}_webhook_url", "the {s} webhook target",
       ("{s} posts its webhooks to {v}",
        "the {s} webhook target is {v}"), _url),
    _t("grpc_upstream", "endpoint", "{s}_upstream", "the {s} upstream",
       ("{s} talks gRPC to {v}",
        "the {s} upstream is {v}"), _hostport),
    _t("metrics_url", "endpoint", "{s}_metrics_url", "the {s} metrics endpoint",
       ("{s} metrics are scraped from {v}",
        "scrape {s} at {v}"), _url),
    _t("api_rate", "limit", "{s}_rate_limit", "the {s} rate limit",
       ("{s} is capped at {v}",
        "the {s} API allows {v} and no more"), _rate),
    _t("job_concurrency", "limit", "{s}_max_jobs", "the {s} job concurrency",
       ("{s} runs at most {v}",
        "{s} is limited to {v}"), _amount("concurrent jobs", 3, 96)),
    _t("upload_cap", "limit", "{s}_max_upload", "the {s} upload limit",
       ("{s} rejects uploads over {v}",
        "uploads to {s} max out at {v}"), _amount("MB", 11, 950)),
    _t("api_token_env", "credential_name", "{s}_token_env", "the variable holding the {s} token",
       ("the {s} token is read from {v}",
        "{s} expects its API token in {v}"), _env_secret),
    _t("signing_key_path", "credential_name", "{s}_signing_key_path", "the {s} signing key",
       ("the {s} signing key lives at {v} in Vault",
        "{s} pulls its signing key from {v}"), _vault_path),
    _t("db_password_secret", "credential_name", "{s}_db_password_secret",
       "the {s} database password secret",
       ("the {s} database password is the secret {v}",
        "{s} reads its DB password from {v}"), _gcp_secret),
    # -- corrections: a later fact gives the same subject another value --
    _fix("owner_in_passing", "owner", "reassigned_in_passing", "{s}_owner", "the {s} owner",
         ("{v} owns {s}", "{s} is looked after by {v}"), _owner),
    _fix("launch_rescheduled", "deadline", "rescheduled_invite", "{s}_launch_date",
         "the {s} launch", ("the {s} launch is on {v}", "{s} goes live {v}"), _date),
    _fix("image_rolled_back", "version", "rollback", "{s}_image_tag", "the {s} image tag",
         ("{s} runs image tag {v}", "the {s} image is {v}"), _version),
    _fix("upstream_retried", "endpoint", "retry_other_host", "{s}_primary", "the {s} primary",
         ("{s} connects to {v}", "the {s} primary is {v}"), _hostport),
    _fix("archive_moved", "path", "moved_from_to", "{s}_archive_dir",
         "the {s} archive directory",
         ("{s} archives go to {v}", "the {s} archive directory is {v}"), _path),
    _fix("burst_diffed", "limit", "diff_lines", "{s}_burst_limit", "the {s} burst limit",
         ("{s} allows bursts of {v}", "the {s} burst limit is {v}"), _rate),
    _fix("cache_cancelled", "decision", "cancelled_instead", "{s}_cache", "the {s} cache",
         ("we chose {v} as the {s} cache", "the {s} cache will be {v}"),
         _product("Cache", "KV")),
    _fix("disk_planned", "quantity", "terraform_plan", "{s}_disk_size", "the {s} disk",
         ("the {s} disk is {v}", "{s} runs on a {v} disk"), _amount("GiB", 64, 7000)),
    _fix("pool_updated", "limit", "sql_update", "{s}_max_connections",
         "the {s} connection limit",
         ("{s} may open at most {v}", "the {s} pool is capped at {v}"),
         _amount("connections", 8, 900)),
    _fix("review_due_moved", "deadline", "jira_field_change", "{s}_review_due",
         "the {s} review deadline",
         ("the {s} review is due {v}", "the {s} security review has to be done by {v}"), _date),
    _fix("secret_patched", "credential_name", "kubectl_patch", "{s}_credentials_secret",
         "the {s} credentials secret",
         ("{s} takes its credentials from the secret {v}",
          "the {s} pods mount the secret {v}"), _k8s_secret),
    _fix("sdk_reverted", "version", "git_revert", "{s}_sdk_version", "the {s} SDK",
         ("{s} uses SDK {v}", "the {s} SDK pin is {v}"), _version),
    _fix("ticket_repasted", "identifier", "thread_reply", "{s}_bug_ticket", "the {s} bug ticket",
         ("the {s} bug is {v}", "the {s} crash is tracked as {v}"), _ticket),
    _fix("storage_adr", "decision", "adr_status", "{s}_blob_store", "the {s} blob store",
         ("{s} will store blobs in {v}", "the {s} blob store is {v}"),
         _product("Store", "Blob", "Vault")),
    _fix("action_handed_over", "owner", "postmortem_reassign", "{s}_action_owner",
         "the {s} follow-up owner",
         ("{v} follows up on the {s} action item", "the {s} follow-up sits with {v}"), _owner),
    _fix("callback_reshown", "endpoint", "config_reshown", "{s}_callback_url",
         "the {s} callback URL",
         ("{s} calls back to {v}", "the {s} callback URL is {v}"), _url),
    _fix("billing_table", "identifier", "table_repasted", "{s}_billing_account",
         "the {s} billing account",
         ("{s} bills to account {v}", "the {s} billing account is {v}"), _account),
    _fix("residency_restated", "constraint", "quiet_restatement", "{s}_residency",
         "the {s} residency rule",
         ("{s} data has to stay in {v}", "nothing from {s} may be stored outside {v}"), _region),
    _fix("frozen_scratched", "prohibition", "scratch_that", "{s}_frozen_branch",
         "the branch nobody pushes to",
         ("nobody pushes to {v} while {s} is in freeze",
          "{v} is off limits for {s} pushes"), _branch),
    _fix("runner_moved", "preference", "moved_from_to", "{s}_test_runner",
         "the {s} test runner",
         ("for {s} the team prefers {v}", "{s} tests should be run with {v}"), _runner),
    _fix("memory_reshown", "quantity", "config_reshown", "{s}_worker_memory",
         "the {s} worker memory",
         ("{s} workers get {v} of memory", "the {s} worker memory is {v}"),
         _amount("MiB", 300, 30000)),
    _fix("cache_mount_diffed", "path", "diff_lines", "{s}_cache_dir", "the {s} cache mount",
         ("{s} mounts its cache at {v}", "the {s} cache directory is {v}"), _path),
    _fix("token_cancelled", "credential_name", "cancelled_instead", "{s}_auth_env",
         "the {s} auth variable",
         ("{s} authenticates with {v}", "the {s} credential is the variable {v}"), _env_secret),
    _fix("origin_scratched", "constraint", "scratch_that", "{s}_allowed_origin",
         "the origin {s} accepts",
         ("{s} only accepts requests from {v}", "the only allowed origin for {s} is {v}"),
         _origin),
    # -- pairs that both hold: same template, two subjects --
    _both("pair_endpoints", "endpoint", "{s}_listen", "the {s} listen address",
          ("{s} listens on {v}", "the {s} listen address is {v}"), _hostport),
    _both("pair_owners", "owner", "{s}_maintainer", "the {s} maintainer",
          ("{v} looks after {s}", "{s} is maintained by {v}"), _owner),
    _both("pair_deadlines", "deadline", "{s}_ship_date", "the {s} ship date",
          ("{s} has to ship by {v}", "the {s} ship date is {v}"), _date),
    _both("pair_tickets", "identifier", "{s}_regression", "the {s} regression ticket",
          ("the {s} regression is {v}", "the regression in {s} is filed as {v}"), _ticket),
    _both("pair_paths", "path", "{s}_data_dir", "the {s} data directory",
          ("{s} writes its data under {v}", "the {s} data directory is {v}"), _path),
    _both("pair_limits", "limit", "{s}_throttle", "the {s} throttle",
          ("{s} is throttled at {v}", "the {s} throttle is {v}"), _rate),
    _both("pair_versions", "version", "{s}_pinned_version", "the {s} pin",
          ("{s} is pinned to {v}", "the {s} pin is {v}"), _version),
    _both("pair_secrets", "credential_name", "{s}_key_env", "the {s} key variable",
          ("{s} reads its key from {v}", "the {s} key is in the variable {v}"), _env_secret),
    _both("pair_cpu", "quantity", "{s}_cpu_request", "the {s} CPU request",
          ("{s} reserves {v}", "the {s} CPU request is {v}"), _vcpu),
    _both("pair_hands_off", "prohibition", "{s}_untouchable_table",
          "the {s} write ban",
          ("{s} must never write to the {v} table", "no job in {s} may touch {v}"), _table),
)  # fmt: skip
BY_NAME = {t.name: t for t in TEMPLATES}

# -- a drawn fact ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fact:
    """A template with its subject and value drawn."""

    template: Template
    subject: str
    value: str
    shown: str

    def fill(self, pattern: str) -> str:
        return pattern.replace("{s}", self.subject).replace("{v}", self.shown)

    def say(self, r: Rng) -> str:
        """One of the template's sentences as written, to sit inside another sentence."""
        return self.fill(r.choice(self.template.says))

    def sentence(self, r: Rng) -> str:
        """One of the template's sentences, capitalised unless it starts with the value."""
        pattern = r.choice(self.template.says)
        text = self.fill(pattern)
        return text if pattern.startswith("{v}") else _cap(text)

    @property
    def claims(self) -> bool:
        return self.template.kind in CLAIMS

    @property
    def snake(self) -> str:
        return self.fill(self.template.key)

    @property
    def camel(self) -> str:
        first, *rest = self.snake.split("_")
        return first + "".join(_cap(p) for p in rest)

    @property
    def upper(self) -> str:
        return self.snake.upper()

    @property
    def kebab(self) -> str:
        return self.snake.replace("_", "-")

    @property
    def label(self) -> str:
        return self.fill(self.template.label)

    @property
    def title(self) -> str:
        return _cap(self.label.removeprefix("the "))


def _yaml(text: str) -> str:
    """``text`` as a YAML scalar (quoted when it would not read as a plain string)."""
    plain = re.fullmatch(r"[A-Za-z0-9_./+-]+", text) and text[0] not in "@-+"
    return text if plain else f'"{text}"'


# -- styles: how a fact is written ----------------------------------------------------------------

Style = Callable[[Fact, Rng], str]


def _slack_thread(f: Fact, r: Rng) -> str:
    a, b = _names(r, 2)
    h, m = r.randint(8, 17), r.randint(0, 50)
    react = r.choice((":+1: 3", ":white_check_mark: 2", ":eyes: 1  :+1: 2", ":pray: 4"))
    reply = r.choice(("ack", "noted, ty", "ok, keeping that in mind", "+1"))
    return (
        f"#{f.subject}-eng  ·  thread\n{a}  {h}:{m:02d}\n{f.sentence(r)}\n    {react}\n"
        f"{b}  {h}:{m + r.randint(1, 9):02d}\n{reply}"
    )


def _linear_history(f: Fact, r: Rng) -> str:
    a, b = _names(r, 2)
    team = f.subject[:3].upper()
    return (
        f"{team}-{r.randint(20, 990)} · {f.title}\nActivity\n"
        f"  {a} created the issue · {r.randint(3, 9)}d ago\n"
        f"  {b} commented · {r.randint(1, 2)}d ago\n    {f.sentence(r)}.\n"
        f"  {a} set priority to {r.choice(('High', 'Medium', 'Urgent'))} · {r.randint(2, 20)}h ago"
    )


def _calendar_invite(f: Fact, r: Rng) -> str:
    a, b, c = _names(r, 3)
    day = r.choice(("Monday", "Tuesday", "Wednesday", "Thursday"))
    h = r.randint(9, 16)
    code = f"{_b36(r, 3)}-{_b36(r, 4)}-{_b36(r, 3)}"
    return (
        f"Invitation: {_cap(f.subject)} sync @ Weekly on {day} {h}:30 - {h + 1}:00 (UTC)\n"
        f"Organizer: {a}\nGuests: {b}, {c}\n"
        f"Description: standing agenda. {f.sentence(r)}.\n"
        f"Join: https://meet.{_word(r, 1, 2, 4)}.example/{code}"
    )


def _adr_markdown(f: Fact, r: Rng) -> str:
    return (
        f"# ADR-{r.randint(3, 140):04d}: {f.title}\n\nStatus: Accepted\n\n## Context\n"
        f"{_cap(f.label)} kept coming up in reviews of {f.subject}.\n\n## Decision\n"
        f"{f.sentence(r)}.\n\n## Consequences\nDashboards and runbooks for {f.subject} follow this."
    )


def _rfc_section(f: Fact, r: Rng) -> str:
    return (
        f"{r.randint(2, 9)}.{r.randint(1, 7)}.  {f.title}\n\n"
        f"   This section is normative.  {f.sentence(r)}.  Deployments of\n"
        f"   {f.subject} that cannot honour this are out of scope of this document."
    )


def _postmortem_actions(f: Fact, r: Rng) -> str:
    a, b = _names(r, 2)
    n = r.randint(1, 30)
    return (
        f"## Action items ({f.subject} incident review)\n"
        "| ID | Action | Owner | Status |\n|----|--------|-------|--------|\n"
        f"| AI-{n} | Write it down where people look: {f.say(r)} | {a} | done |\n"
        f"| AI-{n + 1} | Alert on {f.subject} saturation | {b} | open |"
    )


def _gherkin(f: Fact, r: Rng) -> str:
    return (
        f"Feature: {f.title}\n\n  Background:\n    Given {f.say(r)}\n\n"
        f"  Scenario: a request arrives during the {f.subject} rollout\n"
        "    When the client retries twice\n    Then the rule in the background still holds"
    )


def _confluence_table(f: Fact, r: Rng) -> str:
    a = _names(r, 1)[0]
    note = f.sentence(r) if f.claims else r.choice(("", "checked in prod", "per the team"))
    return (
        f"{_cap(f.subject)} settings (team wiki page, last edited by {a})\n"
        "| Setting | Value | Notes |\n|---|---|---|\n"
        f"| {f.snake} | {f.shown} | {note} |\n| {f.subject}_team | {f.subject}-core | |"
    )


_OCR = {"l": "1", "o": "0", "e": "c", "i": "l", "s": "5"}


def _ocr(text: str, r: Rng) -> str:
    """``text`` with a few characters misread, as OCR of a photo does."""
    chars = list(text)
    spots = [i for i, ch in enumerate(chars) if ch in _OCR]
    for i in r.sample(spots, min(len(spots), r.randint(1, 3))):
        chars[i] = _OCR[chars[i]]
    return "".join(chars)


def _whiteboard_ocr(f: Fact, r: Rng) -> str:
    pattern = r.choice(f.template.says).replace("{s}", f.subject)
    said = f.shown.join(_ocr(part, r) for part in pattern.split("{v}"))
    return (
        f"[whiteboard photo, OCR]\n{f.subject.upper()} - AGREED\n * {said}\n"
        f" * open q: staging?? ask {_names(r, 1)[0]}"
    )


def _forum_post(f: Fact, r: Rng) -> str:
    a = _names(r, 1)[0]
    return (
        f"Q: what is {f.label} these days? (asked by {a})\n"
        f"A (accepted, {r.randint(2, 40)} votes): {f.sentence(r)}. It is on the team page too."
    )


def _call_chat(f: Fact, r: Rng) -> str:
    a, b = _names(r, 2)
    h, m, s = r.randint(9, 17), r.randint(0, 58), r.randint(0, 59)
    return (
        f"{h:02d}:{m:02d}:{s:02d} From {a} to Everyone:\n\t{f.sentence(r)}\n"
        f"{h:02d}:{m + 1:02d}:{s:02d} From {b} to Everyone:\n\tthanks, writing that down"
    )


def _helm_values(f: Fact, r: Rng) -> str:
    comment = f"  # {f.say(r)}\n" if f.claims or r.random() < 0.5 else ""
    return (
        f"# values-{r.choice(('prod', 'staging', 'eu'))}.yaml\n{f.subject}:\n{comment}"
        f"  {f.camel}: {_yaml(f.shown)}\n  replicaCount: {r.randint(2, 9)}"
    )


def _terraform_hcl(f: Fact, r: Rng) -> str:
    return (
        f'variable "{f.snake}" {{\n  description = "{f.sentence(r)}"\n'
        f'  type        = string\n  default     = "{f.shown}"\n}}'
    )


def _docker_compose(f: Fact, r: Rng) -> str:
    comment = f"      # {f.say(r)}\n" if f.claims else ""
    return (
        f"services:\n  {f.subject}:\n    image: registry.{_word(r)}.internal/{f.subject}:"
        f"build-{r.randint(100, 999)}\n    environment:\n{comment}      {f.upper}: "
        f'"{f.shown}"\n    restart: unless-stopped'
    )


def _nginx_conf(f: Fact, r: Rng) -> str:
    return (
        f"# /etc/nginx/conf.d/{f.subject}.conf\nlocation /{f.subject}/ {{\n"
        f'    # {f.say(r)}\n    set ${f.snake} "{f.shown}";\n'
        f"    proxy_pass http://{f.subject}_upstream;\n}}"
    )


def _systemd_unit(f: Fact, r: Rng) -> str:
    return (
        f"# /etc/systemd/system/{f.subject}.service.d/override.conf\n[Service]\n"
        f'# {f.sentence(r)}\nEnvironment="{f.upper}={f.shown}"\nRestart=on-failure'
    )


def _psql_table(prompt: str, query: str, header: Sequence[str], row: Sequence[str]) -> str:
    widths = [max(len(h), len(c)) + 1 for h, c in zip(header, row, strict=True)]
    head = "|".join(f" {h.center(w - 1)} " for h, w in zip(header, widths, strict=True))
    rule = "+".join("-" * (w + 1) for w in widths)
    body = "|".join(f" {c.ljust(w - 1)} " for c, w in zip(row, widths, strict=True))
    return f"{prompt}=# {query}\n{head}\n{rule}\n{body}\n(1 row)"


def _sql_result(f: Fact, r: Rng) -> str:
    if f.claims:
        query = f"SELECT key, value, note FROM {f.subject}_settings WHERE key = '{f.snake}';"
        return _psql_table(f.subject, query, ("key", "value", "note"),
                           (f.snake, f.shown, f.say(r)))  # fmt: skip
    query = f"SELECT key, value FROM {f.subject}_settings WHERE key = '{f.snake}';"
    return _psql_table(f.subject, query, ("key", "value"), (f.snake, f.shown))


def _jupyter_output(f: Fact, r: Rng) -> str:
    n = r.randint(3, 40)
    return (
        f'In [{n}]: cfg = load_settings("{f.subject}"); cfg["{f.snake}"]\n'
        f"Out[{n}]: '{f.shown}'\n\nIn [{n + 1}]: print(cfg.describe(\"{f.snake}\"))\n"
        f"{f.sentence(r)}."
    )


def _grafana_alert(f: Fact, r: Rng) -> str:
    payload = {
        "receiver": f"{f.subject}-oncall",
        "status": "firing",
        "alerts": [
            {
                "labels": {"alertname": f"{_cap(f.subject)}SettingDrift", "service": f.subject},
                "annotations": {"summary": f.sentence(r), "expected": f.shown},
                "fingerprint": _hex(r, 16),
            }
        ],
    }
    return json.dumps(payload)


def _kubectl_describe(f: Fact, r: Rng) -> str:
    ns = r.choice(("prod", "platform", f"{f.subject}-system"))
    note = f"note:\n----\n{f.sentence(r)}\n" if f.claims else ""
    return (
        f"$ kubectl -n {ns} describe configmap {f.subject}-settings\n"
        f"Name:         {f.subject}-settings\nNamespace:    {ns}\nLabels:       app={f.subject}\n\n"
        f"Data\n====\n{f.snake}:\n----\n{f.shown}\n{note}\nEvents:  none"
    )


def _grep_hits(f: Fact, r: Rng) -> str:
    return (
        f'$ grep -rn "{f.upper}" .\n./{f.subject}/settings.py:{r.randint(8, 200)}:'
        f'{f.upper} = "{f.shown}"\n./docs/{f.subject}.md:{r.randint(3, 90)}:{f.sentence(r)}.'
    )


def _logfmt(f: Fact, r: Rng) -> str:
    return (
        f'at=info component={f.subject} msg="{f.sentence(r)}" {f.snake}="{f.shown}" '
        f"request_id={_hex(r, 12)}"
    )


def _stack_trace(f: Fact, r: Rng) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "/app/{f.subject}/boot.py", line {r.randint(20, 400)}, in check_settings\n'
        "    raise SettingsCheckFailed(key, expected)\n"
        f"{f.subject}.boot.SettingsCheckFailed: {f.sentence(r)} (setting {f.snake})"
    )


def _helm_cli(f: Fact, r: Rng) -> str:
    ns = r.choice(("prod", "apps", f.subject))
    notes = f"$ helm get notes {f.subject} -n {ns}\nNOTES:\n{f.sentence(r)}.\n" if f.claims else ""
    return (
        f"$ helm get values {f.subject} -n {ns}\nUSER-SUPPLIED VALUES:\n"
        f"{f.camel}: {_yaml(f.shown)}\n{notes}".rstrip("\n")
    )


def _ansible_task(f: Fact, r: Rng) -> str:
    return (
        f"- name: {f.title}\n  ansible.builtin.lineinfile:\n"
        f"    path: /etc/{f.subject}/{f.subject}.conf\n"
        f"    regexp: '^{f.snake}\\s*='\n    line: \"{f.snake} = {f.shown}\"\n"
        f"  # {f.say(r)}"
    )


def _git_log_oneline(f: Fact, r: Rng) -> str:
    a = _names(r, 1)[0].lower()
    return (
        f"$ git log --oneline -3 -- {f.subject}/\n{_sha(r)} {f.subject}: {f.say(r)}\n"
        f"{_sha(r)} {f.subject}: tidy imports\n"
        f"{_sha(r)} Merge pull request #{r.randint(100, 4000)} from {a}/{f.subject}-fixes"
    )


def _lint_output(f: Fact, r: Rng) -> str:
    return (
        f"{f.subject}/settings.py:{r.randint(5, 300)}:{r.randint(1, 40)}: CFG{r.randint(100, 999)}"
        f' {f.snake} does not match policy pattern r"^{re.escape(f.shown)}$"\n'
        f"    policy: {f.say(r)}\nFound 1 error (1 fixable with --fix)."
    )


def _etcdctl(f: Fact, r: Rng) -> str:
    key = f"/config/{f.subject}/{f.kebab}"
    note = f"{key}.note\n{f.sentence(r)}\n" if f.claims else ""
    return f"$ etcdctl get --prefix {key}\n{key}\n{f.shown}\n{note}".rstrip("\n")


def _assistant_headings(f: Fact, r: Rng) -> str:
    return (
        f"## {f.title}\n\n- **Value:** {f.shown}\n- **Why it matters:** {f.sentence(r)}.\n\n"
        f"### Next\n- Re-run the {f.subject} tests with this in place."
    )


def _assistant_plan(f: Fact, r: Rng) -> str:
    return (
        f"Plan for the {f.subject} change:\n1. Read the current {f.subject} settings.\n"
        f"2. Keep to this: {f.say(r)}.\n3. Run the {f.subject} test suite before anything else."
    )


def _assistant_recap(f: Fact, r: Rng) -> str:
    return f"Noting this before I go on, since the fix depends on it: {f.say(r)}."


def _assistant_table(f: Fact, r: Rng) -> str:
    source = r.choice(("config file", "team wiki", "deploy manifest", "issue thread"))
    return (
        "What I found so far:\n\n| Item | Value | Source |\n|---|---|---|\n"
        f"| {f.label} | {f.shown} | {source} |\n"
        f"| {f.subject} unit tests | {r.randint(12, 300)} passing | local run |"
    )


def _assistant_narration(f: Fact, r: Rng) -> str:
    return (
        f"I ran `cat /etc/{f.subject}/README` and it confirms that {f.say(r)}. "
        "Next I'll look at the failing test."
    )


def _assistant_checklist(f: Fact, r: Rng) -> str:
    return (
        f"Progress:\n- [x] reproduced the {f.subject} failure\n- [x] confirmed: {f.say(r)}\n"
        "- [ ] patch and regression test"
    )


def _assistant_short_answer(f: Fact, r: Rng) -> str:
    return (
        f"Short answer: {f.shown}.\n\nLonger answer: {f.sentence(r)}. "
        "I'll go with that from here on."
    )


def _assistant_code_edit(f: Fact, r: Rng) -> str:
    return (
        "I'll record it next to the code so it isn't lost:\n\n```python\n"
        f'# {f.subject}/settings.py\n{f.upper} = "{f.shown}"  # {f.say(r)}\n```'
    )


def _assistant_caveat(f: Fact, r: Rng) -> str:
    return (
        f"Heads-up before the next step: {f.say(r)}. "
        "I'll keep that in mind for the rest of this task."
    )


STYLE_FUNCS: dict[str, tuple[str, Style]] = {
    # things a person pastes or writes
    "slack_thread": ("user", _slack_thread),
    "linear_history": ("user", _linear_history),
    "calendar_invite": ("user", _calendar_invite),
    "adr_markdown": ("user", _adr_markdown),
    "rfc_section": ("user", _rfc_section),
    "postmortem_actions": ("user", _postmortem_actions),
    "gherkin": ("user", _gherkin),
    "wiki_table": ("user", _confluence_table),
    "whiteboard_ocr": ("user", _whiteboard_ocr),
    "forum_answer": ("user", _forum_post),
    "call_chat": ("user", _call_chat),
    # what a tool prints, or a file it shows
    "helm_values": ("tool", _helm_values),
    "terraform_hcl": ("tool", _terraform_hcl),
    "docker_compose": ("tool", _docker_compose),
    "nginx_conf": ("tool", _nginx_conf),
    "systemd_unit": ("tool", _systemd_unit),
    "psql_output": ("tool", _sql_result),
    "jupyter_output": ("tool", _jupyter_output),
    "grafana_alert": ("tool", _grafana_alert),
    "kubectl": ("tool", _kubectl_describe),
    "grep_hits": ("tool", _grep_hits),
    "logfmt": ("tool", _logfmt),
    "stack_trace": ("tool", _stack_trace),
    "helm_cli": ("tool", _helm_cli),
    "ansible_task": ("tool", _ansible_task),
    "git_log_oneline": ("tool", _git_log_oneline),
    "lint_output": ("tool", _lint_output),
    "etcdctl": ("tool", _etcdctl),
    # what an assistant writes
    "assistant_headings": ("assistant", _assistant_headings),
    "assistant_plan": ("assistant", _assistant_plan),
    "assistant_recap": ("assistant", _assistant_recap),
    "assistant_table": ("assistant", _assistant_table),
    "assistant_narration": ("assistant", _assistant_narration),
    "assistant_checklist": ("assistant", _assistant_checklist),
    "assistant_short_answer": ("assistant", _assistant_short_answer),
    "assistant_code_edit": ("assistant", _assistant_code_edit),
    "assistant_caveat": ("assistant", _assistant_caveat),
}
STYLES = tuple(STYLE_FUNCS)
REGISTERS = {name: register for name, (register, _) in STYLE_FUNCS.items()}
_BY_REGISTER = {
    reg: tuple(n for n, r in REGISTERS.items() if r == reg) for reg in ("user", "tool", "assistant")
}

# -- corrections: how a later value is written ----------------------------------------------------

Phrasing = Callable[[Fact, Fact, Rng], str]


def _p_config_reshown(new: Fact, old: Fact, r: Rng) -> str:
    lead = r.choice(("", f"values-prod.yaml for {new.subject}, as deployed:\n"))
    value = _yaml(new.shown)
    return f"{lead}{new.subject}:\n  {new.camel}: {value}\n  replicaCount: {r.randint(2, 9)}"


def _p_table_repasted(new: Fact, old: Fact, r: Rng) -> str:
    day = r.choice(("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"))
    return (
        f"{_cap(new.subject)} settings (team wiki page, {day} revision)\n"
        "| Setting | Value | Notes |\n|---|---|---|\n"
        f"| {new.snake} | {new.shown} | |\n| {new.subject}_team | {new.subject}-core | |"
    )


def _p_quiet_restatement(new: Fact, old: Fact, r: Rng) -> str:
    return f"Where things stand for {new.subject}: {new.say(r)}."


def _p_reassigned_in_passing(new: Fact, old: Fact, r: Rng) -> str:
    a = _names(r, 1)[0]
    return (
        f"#{new.subject}-eng\n{a}  {r.randint(9, 17)}:{r.randint(10, 59)}\n"
        f"unrelated to the outage, but {new.say(r)}. Send {new.subject} reviews that way"
    )


def _p_rescheduled_invite(new: Fact, old: Fact, r: Rng) -> str:
    a, b = _names(r, 2)
    return (
        f"Updated invitation: {_cap(new.subject)} go/no-go\n"
        f"When: {new.shown}, 15:00 - 15:30 (UTC)\nOrganizer: {a}\nGuests: {b}\n"
        f"Description: {new.sentence(r)}."
    )


def _p_rollback(new: Fact, old: Fact, r: Rng) -> str:
    ns = r.choice(("prod", "apps", new.subject))
    return (
        f"$ helm rollback {new.subject} {r.randint(4, 60)} -n {ns}\n"
        "Rollback was a success! Happy Helming!\n"
        f"$ helm get values {new.subject} -n {ns} | grep -i {new.camel}\n"
        f"{new.camel}: {_yaml(new.shown)}"
    )


def _p_scratch_that(new: Fact, old: Fact, r: Rng) -> str:
    a = _names(r, 1)[0]
    h, m = r.randint(9, 17), r.randint(10, 59)
    lead = r.choice(("scratch that,", "ignore my last message,", "hm no, sorry:"))
    return f"{h:02d}:{m:02d}:{r.randint(10, 59)} From {a} to Everyone:\n\t{lead} {new.say(r)}"


def _p_thread_reply(new: Fact, old: Fact, r: Rng) -> str:
    a = _names(r, 1)[0]
    return (
        f"{a}  {r.randint(9, 17)}:{r.randint(10, 59)}  (reply in thread)\n"
        f"ugh, pasted the one from the other channel above. {new.sentence(r)} :facepalm:"
    )


def _p_sql_update(new: Fact, old: Fact, r: Rng) -> str:
    s = new.subject
    return (
        f"{s}=# UPDATE {s}_settings SET value = '{new.shown}' WHERE key = '{new.snake}';\n"
        f"UPDATE 1\n{s}=# COMMIT;\nCOMMIT"
    )


def _p_kubectl_patch(new: Fact, old: Fact, r: Rng) -> str:
    ns, s = r.choice(("prod", "platform")), new.subject
    op = json.dumps(
        [
            {
                "op": "replace",
                "path": "/spec/template/spec/containers/0/envFrom/0/secretRef/name",
                "value": new.shown,
            }
        ]
    )
    return (
        f"$ kubectl -n {ns} patch deploy/{s} --type=json -p '{op}'\n"
        f"deployment.apps/{s} patched\n$ kubectl -n {ns} rollout status deploy/{s}\n"
        f'deployment "{s}" successfully rolled out'
    )


def _p_retry_other_host(new: Fact, old: Fact, r: Rng) -> str:
    s = new.subject
    return (
        f'at=warn component={s} msg="connect failed" target={old.shown} attempt=1 '
        'err="dial tcp: i/o timeout"\n'
        f'at=info component={s} msg="connected" target={new.shown} attempt=2\n'
        f'at=info component={s} msg="keeping this target for the run" target={new.shown}'
    )


def _p_moved_from_to(new: Fact, old: Fact, r: Rng) -> str:
    a = _names(r, 1)[0]
    return (
        f"{new.subject[:3].upper()}-{r.randint(20, 990)} · {new.title}\n"
        f"  {a} commented · {r.randint(1, 9)}h ago\n"
        f"    {_cap(new.label)} moved from {old.shown} to {new.shown}. "
        "Nothing else to do on our side."
    )


def _p_diff_lines(new: Fact, old: Fact, r: Rng) -> str:
    s, n = new.subject, r.randint(3, 80)
    return (
        f"TASK [{s} : render {s}.conf] {'*' * 24}\n--- before: /etc/{s}/{s}.conf\n"
        f"+++ after: /etc/{s}/{s}.conf\n@@ -{n},3 +{n},3 @@\n # managed by ansible\n"
        f"-{new.snake} = {old.shown}\n+{new.snake} = {new.shown}\n"
        f"changed: [{s}-{r.randint(1, 9):02d}]"
    )


def _p_cancelled_instead(new: Fact, old: Fact, r: Rng) -> str:
    a = _names(r, 1)[0]
    h, m = r.randint(9, 17), r.randint(10, 59)
    said = r.choice(
        (
            f"{old.shown} is cancelled for {new.subject}, {new.shown} instead",
            f"{old.shown} is off the table for {new.subject}; going with {new.shown}",
            f"for {new.subject}: drop {old.shown}, it's {new.shown}",
        )
    )
    return f"{h:02d}:{m:02d}:{r.randint(10, 59)} From {a} to Everyone:\n\t{said}"


def _p_terraform_plan(new: Fact, old: Fact, r: Rng) -> str:
    s = new.subject
    return (
        "Terraform will perform the following actions:\n\n"
        f"  # module.{s}.aws_ebs_volume.data will be updated in-place\n"
        '  ~ resource "aws_ebs_volume" "data" {\n'
        f'        tags = {{ service = "{s}" }}\n'
        f'      ~ {new.snake} = "{old.shown}" -> "{new.shown}"\n    }}\n\n'
        "Plan: 0 to add, 1 to change, 0 to destroy."
    )


def _p_jira_field_change(new: Fact, old: Fact, r: Rng) -> str:
    a = _names(r, 1)[0]
    return (
        f"{new.subject[:3].upper()}-{r.randint(20, 990)} · History\n"
        f"{a} changed the Due date · {r.randint(2, 23)}h ago\n"
        f"  Original: {old.shown}\n  New: {new.shown}\n"
        f"{a} changed the Summary · {r.randint(2, 23)}h ago\n  New: {new.title}"
    )


def _p_git_revert(new: Fact, old: Fact, r: Rng) -> str:
    s = new.subject
    return (
        f"$ git log --oneline -3 -- {s}/\n"
        f'{_sha(r)} Revert "{s}: bump sdk to {old.shown}"\n'
        f"{_sha(r)} {s}: bump sdk to {old.shown}\n{_sha(r)} {s}: pin sdk {new.shown}"
    )


def _p_adr_status(new: Fact, old: Fact, r: Rng) -> str:
    n = r.randint(20, 140)
    return (
        f"# ADR-{n:04d}: {new.title}, revisited\n\nStatus: Accepted; replaces "
        f"ADR-{n - r.randint(3, 15):04d}\n\n## Decision\n"
        f"{_cap(new.subject)} moves off {old.shown} and onto {new.shown}."
    )


def _p_postmortem_reassign(new: Fact, old: Fact, r: Rng) -> str:
    n = r.randint(1, 30)
    return (
        f"## Action items ({new.subject} incident review)\n"
        "| ID | Action | Owner | Status |\n|----|--------|-------|--------|\n"
        f"| AI-{n} | Add load shedding to {new.subject} | {new.shown} | "
        f"open, handed over by {old.shown} |"
    )


@dataclass(frozen=True, slots=True)
class Correction:
    """A way of writing a later value: the style it is written in, whether the text names the
    value it replaces, and the writer."""

    style: str
    names_old: bool
    write: Phrasing


PHRASINGS: dict[str, Correction] = {
    "config_reshown": Correction("helm_values", False, _p_config_reshown),
    "table_repasted": Correction("wiki_table", False, _p_table_repasted),
    "quiet_restatement": Correction("assistant_recap", False, _p_quiet_restatement),
    "reassigned_in_passing": Correction("slack_thread", False, _p_reassigned_in_passing),
    "rescheduled_invite": Correction("calendar_invite", False, _p_rescheduled_invite),
    "rollback": Correction("helm_cli", False, _p_rollback),
    "scratch_that": Correction("call_chat", False, _p_scratch_that),
    "thread_reply": Correction("slack_thread", False, _p_thread_reply),
    "sql_update": Correction("psql_output", False, _p_sql_update),
    "kubectl_patch": Correction("kubectl", False, _p_kubectl_patch),
    "retry_other_host": Correction("logfmt", True, _p_retry_other_host),
    "moved_from_to": Correction("linear_history", True, _p_moved_from_to),
    "diff_lines": Correction("ansible_task", True, _p_diff_lines),
    "cancelled_instead": Correction("call_chat", True, _p_cancelled_instead),
    "terraform_plan": Correction("terraform_hcl", True, _p_terraform_plan),
    "jira_field_change": Correction("linear_history", True, _p_jira_field_change),
    "git_revert": Correction("git_log_oneline", True, _p_git_revert),
    "adr_status": Correction("adr_markdown", True, _p_adr_status),
    "postmortem_reassign": Correction("postmortem_actions", True, _p_postmortem_reassign),
}

# -- the recorded sessions: no keep string may occur there by chance ------------------------------

_RUN = re.compile(r"[A-Za-z0-9]+")


@functools.cache
def _recorded() -> tuple[frozenset[str], str, str] | None:
    """The recorded sessions' text, its alphanumeric runs and those runs joined (to rule most
    keep strings out without scanning the whole text); ``None`` without the file."""
    if not RECORDED.is_file():
        return None
    text = RECORDED.read_text(encoding="utf-8")
    runs = frozenset(_RUN.findall(text))
    return runs, "\n".join(sorted(runs)), text


def in_recorded(keep: str) -> bool:
    """Whether ``keep`` occurs in the recorded sessions (``False`` without them)."""
    found = _recorded()
    if found is None:
        return False
    runs, joined, text = found
    tokens = list(_RUN.finditer(keep))
    inner = [m.group() for m in tokens if m.start() > 0 and m.end() < len(keep)]
    if any(t not in runs for t in inner):  # a run bounded on both sides must occur whole
        return False
    edges = [m.group() for m in tokens if m.start() == 0 or m.end() == len(keep)]
    if any(t not in joined for t in edges):  # a run at an edge occurs inside some run
        return False
    return keep in text


# -- the plan: which templates each session plants ------------------------------------------------


def plan(seed: int, count: int, variant: int) -> list[Template]:
    """The templates of session ``variant``: dealt from per-seed shuffles of all templates,
    session after session, ``count`` canaries each (a pair takes two), no template twice in a
    session while another one fits."""
    pending: list[Template] = []
    rounds = 0

    def refill() -> None:
        nonlocal rounds
        order = list(TEMPLATES)
        random.Random(f"{NAME}/{seed}/plan/{rounds}").shuffle(order)
        rounds += 1
        pending.extend(order)

    chosen: list[Template] = []
    for _ in range(variant + 1):
        chosen, room = [], count
        while room > 0:
            pick = _fitting(pending, chosen, room)
            if pick is None:
                refill()
                pick = _fitting(pending, chosen, room)
            if pick is None:  # more canaries than distinct templates: repeat one
                pick = _fitting(pending, [], room)
            assert pick is not None
            chosen.append(pending.pop(pick))
            room -= chosen[-1].size
    return chosen


def _fitting(pending: Sequence[Template], chosen: Sequence[Template], room: int) -> int | None:
    for i, t in enumerate(pending):
        if t.size <= room and t not in chosen:
            return i
    return None


# -- drawing a session ----------------------------------------------------------------------------

MAX_ATTEMPTS = 200


def _style(r: Rng) -> str:
    return r.choice(_BY_REGISTER[r.choice(("user", "tool", "assistant"))])


def _fact(t: Template, subject: str, r: Rng, form: int) -> Fact:
    value, shown = t.draw(r, random.Random(form))
    return Fact(t, subject, value, shown)


def _canary(cid: str, f: Fact, at: float, style: str, text: str, **extra: str) -> dict[str, Any]:
    return {
        "id": cid,
        "kind": f.template.kind,
        "at": round(at, 3),
        "text": text,
        "keep": [f.value],
        "style": style,
        "template": f.template.name,
        **extra,
    }


def _written(f: Fact, r: Rng) -> tuple[str, str]:
    style = _style(r)
    return style, STYLE_FUNCS[style][1](f, r)


def draw_slot(t: Template, cid: str, r: Rng) -> list[dict[str, Any]]:
    """The canaries of one slot (one template), values and wording from ``r``."""
    subject, form = _word(r), r.getrandbits(32)
    if t.shape == "single":
        f = _fact(t, subject, r, form)
        style, text = _written(f, r)
        return [_canary(cid, f, r.uniform(0.03, 0.92), style, text)]
    if t.shape == "coexist":
        other = _word(r)
        while other == subject:
            other = _word(r)
        f, g = _fact(t, subject, r, form), _fact(t, other, r, form)
        one, two = f"{cid}a", f"{cid}b"
        (s1, x1), (s2, x2) = _written(f, r), _written(g, r)
        return [
            _canary(one, f, r.uniform(0.03, 0.92), s1, x1, coexists=two),
            _canary(two, g, r.uniform(0.03, 0.92), s2, x2, coexists=one),
        ]
    assert t.phrasing is not None
    old = _fact(t, subject, r, form)
    new = _fact(t, subject, r, form)
    first = round(r.uniform(0.03, 0.55), 3)
    later = first + round(r.uniform(0.10, 0.35), 3)
    style, text = _written(old, r)
    way = PHRASINGS[t.phrasing]
    return [
        _canary(f"{cid}a", old, first, style, text),
        _canary(f"{cid}b", new, later, way.style, way.write(new, old, r), supersedes=f"{cid}a"),
    ]


def _clean(slot: list[dict[str, Any]], accepted: list[dict[str, Any]]) -> bool:
    """Whether ``slot`` may join ``accepted``: no keep string of one canary in another's text
    (a correction may name the value it replaces), the two values of a pair apart, and no keep
    string in the recorded sessions."""
    keeps = [k for c in slot for k in c["keep"]]
    if len(slot) == 2:
        a, b = slot[0]["keep"][0], slot[1]["keep"][0]
        if a in b or b in a:
            return False
    everyone = [*accepted, *slot]
    for c in slot:
        for other in everyone:
            if other is c:
                continue
            if other.get("supersedes") != c["id"] and any(k in other["text"] for k in c["keep"]):
                return False
            if c.get("supersedes") != other["id"] and any(k in c["text"] for k in other["keep"]):
                return False
    return not any(in_recorded(k) for k in keeps)


def generate(seed: int, count: int, variant: int = 0) -> dict[str, Any]:
    """Session ``variant``'s ``count`` canaries, in the shape ``bench/retention.py`` reads."""
    canaries: list[dict[str, Any]] = []
    for slot, t in enumerate(plan(seed, count, variant)):
        for attempt in range(MAX_ATTEMPTS):
            r = random.Random(f"{NAME}/{seed}/{variant}/{slot}/{t.name}/{attempt}")
            drawn = draw_slot(t, f"g{slot:02d}", r)
            if _clean(drawn, canaries):
                break
        else:  # pragma: no cover - the values are drawn from spaces far larger than a session
            raise RuntimeError(f"no clean values for slot {slot} ({t.name})")
        canaries.extend(drawn)
    return {"canaries": canaries}
