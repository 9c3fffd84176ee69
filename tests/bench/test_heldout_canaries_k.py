"""Tests of the held-out canary generator ``bench/heldout_canaries_k.py``: a seed reproduces its
canaries and other seeds draw others, the canaries are well formed in the shape
``bench/retention.py`` reads, corrections and coexisting pairs hold together, the breadth its lab
note promises (templates by shape, kinds, surfaces by register, ways of correcting, old beside
new, no marker word), surfaces away from the earlier sets, made-up values, a correction's text
that does not itself present the old value as current, every template in 16 consecutive
sessions, no value in the recorded sessions, facts landing in each placement through
retention.py's own insertion, and a tiny benchmark run (its figures are neither asserted nor
printed). No test here runs the evaluation seeds of the lab note."""

from __future__ import annotations

import datetime as dt
import functools
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from abridged.core.model import Message
from tests.bench.support import (
    BENCH,
    EARLIER_SURFACES,
    assert_a_seed_reproduces,
    assert_evaluation_seeds_apart,
    assert_facts_land_in_each_placement,
    assert_keep_strings_apart,
    assert_no_keep_string_recorded,
    assert_seeds_and_sessions_draw_apart,
    correction_pairs,
    generator_run,
    load_bench,
)

K = load_bench("heldout_canaries_k")
R = load_bench("retention")
PATH = BENCH / "heldout_canaries_k.py"
KEYS = {"id", "kind", "at", "text", "keep", "style", "template", "subject"}
SEEDS = (3, 17, 808)  # never the evaluation seeds
OTHER_SEEDS = (1, 8, 42, 90, 555, 31337)
KINDS = {
    "constraint", "prohibition", "preference", "identifier", "decision", "quantity", "path",
    "version", "owner", "deadline", "endpoint", "limit",
}  # fmt: skip
# words that announce a correction: none may be in more than a quarter of the corrections
MARKERS = (
    "update", "change", "instead", "now", "actually", "correction", "corrected", "new", "move",
    "replace", "no longer", "wrong", "revert", "scratch", "ignore", "resched", "reassign",
    "turns out", "switch", "previous", "earlier", "mistake", "rather", "supersede", "oops",
    "sorry", "typo", "fix:",
)  # fmt: skip
# what the earlier sets wrote their facts as (set J's test list) ...
EARLIER = EARLIER_SURFACES
# ... and set J's own surfaces and ways of correcting (its function names)
SET_J = (
    "irc-log", "pdf-extract", "sheet-cell-note", "srt-captions", "vcard", "org-mode",
    "rst-admonition", "wizard-prompts", "pagerduty-note", "heredoc-paste", "ocr-screenshot",
    "shell-history", "machine-translation", "haproxy-cfg", "docker-inspect", "strace", "ldif",
    "dig-txt", "blame-porcelain", "ssh-config", "gitconfig-list", "powershell-list", "gdb-print",
    "python-repl", "kconfig", "nagios-check", "man-page", "starlark", "cmake-cache",
    "test-fixture", "sql-query", "ts-jsdoc", "typing-literal", "footnote", "argparse-default",
    "pydantic-field", "html-details", "warn-call", "gettext-po", "blockquote-cite", "box-drawing",
    "graphviz-dot", "ps-aside", "gdocs-thread", "standup-bot", "typo-admission",
    "strikethrough-note", "directory-lookup", "form-response", "pip-reinstall", "dig-cname",
    "codeowners-head", "history-rst", "motd-banner", "git-notes", "quota-cli",
    "cdk-resource-tree", "reconcile", "subagent-brief", "jq-apply", "echo-back",
    "confirm-question",
)  # fmt: skip
# letter runs of keep strings that are part of a value's form, not drawn
FORM_WORDS = {"acct", "https", "snap", "sock", "unix", "team"}


def _canaries(seed: int, count: int = 24, variant: int = 0) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = K.generate(seed, count, variant)["canaries"]
    return items


@functools.cache
def _sample() -> tuple[tuple[dict[str, Any], ...], ...]:
    return tuple(tuple(_canaries(seed, 24, v)) for seed in SEEDS for v in range(16))


def _all() -> list[dict[str, Any]]:
    return [c for session in _sample() for c in session]


def _skeleton(value: str) -> str:
    """A value's form: letter runs as ``a``, digit runs as ``9``."""
    return re.sub(r"\d+", "9", re.sub(r"[A-Za-z]+", "a", value))


ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")


def _day(value: str) -> dt.date:
    """A deadline as a day, read here independently of the generator."""
    if m := re.fullmatch(r"(\d{4})-W(\d{2})-([1-7])", value):
        return dt.date.fromisocalendar(int(m[1]), int(m[2]), int(m[3]))
    if m := re.fullmatch(r"(\d{4})-(\d{3})", value):
        return dt.date(int(m[1]), 1, 1) + dt.timedelta(days=int(m[2]) - 1)
    m = re.fullmatch(r"(\d{1,2})\.([IVX]+)\.(\d{4})", value)
    assert m, value
    return dt.date(int(m[3]), ROMAN.index(m[2]) + 1, int(m[1]))


def _version(value: str) -> tuple[int, ...]:
    assert re.fullmatch(r"r\d+|\d+\.\d+\.\d+(-p\d+)?", value), value
    return tuple(int(n) for n in re.findall(r"\d+", value))


def test_the_evaluation_seeds_are_not_the_test_seeds() -> None:
    assert_evaluation_seeds_apart(K, {*SEEDS, *OTHER_SEEDS})


def test_a_seed_reproduces_its_canaries() -> None:
    assert_a_seed_reproduces(K, SEEDS, 3)


def test_other_seeds_and_sessions_draw_other_values() -> None:
    assert_seeds_and_sessions_draw_apart(_canaries, (*SEEDS, *OTHER_SEEDS))


def test_every_canary_is_well_formed() -> None:
    for session in _sample():
        assert len(session) == 24
        assert len({c["id"] for c in session}) == 24
        parsed = R.canaries_from({"canaries": list(session)})
        assert [p.id for p in parsed] == [c["id"] for c in session]
        for c, p in zip(session, parsed, strict=True):
            assert KEYS <= set(c) <= KEYS | {"supersedes", "coexists"}, c
            assert c["kind"] in KINDS
            assert 0 < c["at"] < 1
            assert c["keep"] and all(isinstance(k, str) and len(k) >= 5 for k in c["keep"])
            assert all(k in c["text"] for k in c["keep"]), c
            assert c["style"] in K.REGISTER_OF
            template = K.TEMPLATE_BY_NAME[c["template"]]
            assert template.kind == c["kind"]
            assert c["subject"] and c["subject"] not in c["keep"]
            assert p.keep == tuple(c["keep"]) and p.style == c["style"]
            assert p.template == c["template"] and p.text == c["text"]
    for count in (6, 13, 40):
        assert len(_canaries(17, count, 3)) == count
    with pytest.raises(ValueError, match="count"):
        K.generate(17, 5)


def test_a_correction_supersedes_an_earlier_fact_of_its_subject() -> None:
    pairs = correction_pairs(_sample())
    assert len(pairs) == 5 * len(_sample())
    for new, old in pairs:
        assert old["at"] + 0.25 <= new["at"], (old, new)
        assert new["subject"] == old["subject"] and new["template"] == old["template"]
        assert new["kind"] == old["kind"]
        assert K.TEMPLATE_BY_NAME[new["template"]].shape == "correction"
        assert new["style"] in K.CORRECTIONS and old["style"] in K.SURFACES
        assert new["keep"] != old["keep"]
        assert "supersedes" not in old and "coexists" not in new
    for session in _sample():  # each old fact is corrected once, by its own template only
        olds = [c["supersedes"] for c in session if "supersedes" in c]
        assert len(olds) == len(set(olds))
        for c in session:
            shape = K.TEMPLATE_BY_NAME[c["template"]].shape
            if shape == "correction":
                same = [x for x in session if x["template"] == c["template"]]
                assert len(same) == 2 and sum("supersedes" in x for x in same) == 1


def test_a_pair_that_both_hold_has_two_subjects() -> None:
    pairs = 0
    for session in _sample():
        by_id = {c["id"]: c for c in session}
        superseded = {c["supersedes"] for c in session if "supersedes" in c}
        for c in session:
            if "coexists" not in c:
                assert K.TEMPLATE_BY_NAME[c["template"]].shape != "coexist"
                continue
            other = by_id[c["coexists"]]
            assert other["coexists"] == c["id"]
            assert other["template"] == c["template"] and other["kind"] == c["kind"]
            assert other["subject"] != c["subject"] and other["keep"] != c["keep"]
            assert c["id"] not in superseded and "supersedes" not in c
            pairs += 1
    assert pairs == 2 * 2 * len(_sample())


def test_no_keep_string_occurs_in_another_canary() -> None:
    assert_keep_strings_apart(_sample())


def test_the_two_values_of_a_pair_have_one_form() -> None:
    for session in _sample():
        by_id = {c["id"]: c for c in session}
        for c in session:
            other = c.get("supersedes") or c.get("coexists")
            if other:
                a, b = c["keep"][0], by_id[other]["keep"][0]
                assert _skeleton(a) == _skeleton(b), (a, b)


def test_deadlines_slip_and_versions_go_up() -> None:
    seen = Counter[str]()
    for new, old in correction_pairs(_sample()):
        if new["kind"] == "deadline":
            assert _day(old["keep"][0]) < _day(new["keep"][0]), (old["keep"], new["keep"])
            seen["deadline"] += 1
        elif new["kind"] == "version":
            assert _version(old["keep"][0]) < _version(new["keep"][0]), (old["keep"], new["keep"])
            seen["version"] += 1
    assert seen["deadline"] >= 10 and seen["version"] >= 10


def test_the_breadth_it_promises() -> None:
    templates = K.TEMPLATES
    shapes = Counter(t.shape for t in templates)
    assert len(templates) >= 48 and len({t.name for t in templates}) == len(templates)
    assert shapes == {"single": 24, "correction": 20, "coexist": 8}
    kinds = Counter(t.kind for t in templates)
    assert set(kinds) == KINDS and min(kinds.values()) >= 3
    assert {t.kind for t in templates if t.shape == "single"} == KINDS
    assert {t.kind for t in templates if t.shape == "correction"} == KINDS
    registers = Counter(K.REGISTER_OF.values())
    assert len(K.REGISTER_OF) >= 60 and set(registers) == {"chat", "tool", "code"}
    assert min(registers.values()) >= 18
    assert min(Counter(reg for reg, _ in K.SURFACES.values()).values()) >= 15
    assert len(K.CORRECTIONS) >= 16
    assert {reg for reg, _, _ in K.CORRECTIONS.values()} == {"chat", "tool", "code"}
    # a session of 24: 10 singles, 5 corrections, 2 coexisting pairs, each template once
    for session in _sample():
        per = Counter(K.TEMPLATE_BY_NAME[c["template"]].shape for c in session)
        assert per == {"single": 10, "correction": 10, "coexist": 4}
        assert len({c["kind"] for c in session}) >= 8
    styles = {c["style"] for c in _all()}
    assert styles == set(K.REGISTER_OF)


def test_the_surfaces_avoid_the_earlier_sets() -> None:
    for style in K.REGISTER_OF:
        name = style.replace("_", "-")
        assert not [e for e in EARLIER if e in name or e in name.replace("-", "")], style
        assert not [j for j in SET_J if j in name or name in j], style


def test_values_are_made_up_words() -> None:
    keeps = {k for c in _all() for k in c["keep"]}
    assert len(keeps) >= 0.95 * len(_all())
    for keep in keeps:
        assert re.search(r"q(?!u)", keep.lower()) or re.search(r"\d{2}", keep), keep
        for run in re.findall(r"[A-Za-z]{4,}", keep):
            made_up = re.search(r"q[aeio]", run.lower())
            assert made_up or run.lower() in FORM_WORDS or run in ROMAN, (keep, run)
        assert not re.fullmatch(r"[a-z]+", keep) or len(keep) >= 7
    words = [K._word(random.Random(i)) for i in range(2_000)]
    assert all(len(w) >= 6 and "qu" not in w for w in words)


def test_corrections_are_written_many_ways() -> None:
    pairs = correction_pairs(_sample())
    naming_old = [new for new, old in pairs if any(k in new["text"] for k in old["keep"])]
    assert 0.35 <= len(naming_old) / len(pairs) <= 0.65
    ways = Counter(new["style"] for new, _ in pairs)
    assert len(ways) >= 16 and max(ways.values()) <= 0.12 * len(pairs)
    old_ways = {new["style"] for new in naming_old}
    assert len(old_ways) >= 8 and len(set(ways) - old_ways) >= 8
    for new, old in pairs:  # each way does what the lab note says of it
        assert K.CORRECTIONS[new["style"]][1] == any(k in new["text"] for k in old["keep"])
    texts = [new["text"].lower() for new, _ in pairs]
    for marker in MARKERS:
        assert sum(marker in t for t in texts) <= 0.25 * len(texts), marker
    assert sum("(was " in t for t in texts) <= 0.45 * len(texts)
    # the subject or its key is in every correction: it can be told what it corrects
    for new, _ in pairs:
        key = K.TEMPLATE_BY_NAME[new["template"]].keys[0]
        text = new["text"].lower()
        assert new["subject"].lower() in text or key.split("_")[-1] in text, new


def test_the_correction_text_alone_does_not_make_the_old_value_stale() -> None:
    pairs = correction_pairs(_sample())
    bites = 0
    for new, old in pairs:
        assert not R.presents_as_current(new["text"], old["keep"], new["keep"]), new
        index = R.KeepIndex(R.canaries_from([old, new]))
        held = index.of(Message.user(f"Summary of the task so far:\n{new['text']}"))
        assert f"stale:{old['id']}" not in held and new["keep"][0] in held
        # the same words without the marks that say "replaced" would present it as current
        bare = new["text"].replace("(was ", "(").replace("[superseded", "[")
        if any(k in new["text"] for k in old["keep"]):
            assert R.presents_as_current(bare, old["keep"], new["keep"]), new
            bites += 1
    assert bites >= len(pairs) // 3


@pytest.mark.parametrize(("seed", "first"), [(3, 0), (808, 0), (1234, 5)])
def test_a_run_of_16_sessions_plants_every_template(seed: int, first: int) -> None:
    sessions = [_canaries(seed, 24, v) for v in range(first, first + 16)]
    assert {c["template"] for s in sessions for c in s} == set(K.TEMPLATE_BY_NAME)
    assert {c["style"] for s in sessions for c in s} == set(K.REGISTER_OF)
    for s in sessions:  # no template twice in one session (a pair counts once)
        names = Counter(c["template"] for c in s)
        assert all(
            n == (1 if K.TEMPLATE_BY_NAME[t].shape == "single" else 2) for t, n in names.items()
        )


def test_no_keep_string_occurs_in_the_recorded_sessions(swebench_path: Path) -> None:
    assert_no_keep_string_recorded(_sample(), swebench_path)


def test_every_fact_lands_in_each_placement(swebench_path: Path, tmp_path: Path) -> None:
    cases = [(3, 0), (17, 6), (808, 11), (42, 15)]
    assert_facts_land_in_each_placement(K.generate, cases, swebench_path, tmp_path)


def test_a_tiny_retention_run_with_this_generator(
    swebench_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = generator_run(PATH, swebench_path, capsys)
    assert out["canary_source"].endswith("heldout_canaries_k.py")
