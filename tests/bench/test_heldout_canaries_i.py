"""Tests of the held-out canary generator ``bench/heldout_canaries_i.py``: reproducible per seed,
well-formed canaries in the shape ``bench/retention.py`` reads, the breadth its lab note promises
(templates, kinds, styles, registers, ways of correcting, no marker word), corrections and pairs
that hold together, facts landing in each placement through retention.py's own insertion, every
template planted in a run of 16 sessions, no value in the recorded sessions, and a tiny benchmark
run with it (its figures are neither asserted nor printed: this generator measures, it is not
tuned). None of these tests runs the evaluation seeds of the lab note."""

from __future__ import annotations

import functools
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.bench.support import (
    BENCH,
    assert_facts_land_in_each_placement,
    assert_keep_strings_apart,
    assert_no_keep_string_recorded,
    correction_pairs,
    generator_run,
    load_bench,
)

I = load_bench("heldout_canaries_i")  # noqa: E741
R = load_bench("retention")
PATH = BENCH / "heldout_canaries_i.py"
KEYS = {"id", "kind", "at", "text", "keep", "style", "template"}
# words that announce a correction: none may be in more than a quarter of the corrections
MARKERS = (
    "update", "changed", "change", "instead", "now", "correction", "corrected", "actually",
    "new", "moved", "replace", "no longer", "wrong", "revert", "scratch", "ignore", "resched",
    "reassign", "fixed value", "turns out", "switch", "previous", "earlier",
)  # fmt: skip
SEEDS = (0, 1, 97)  # never the evaluation seeds
OTHER_TEST_SEEDS = (3, 5, 7, 8, 11, 12, 123, 2026)


def _canaries(seed: int, count: int, variant: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = I.generate(seed, count, variant)["canaries"]
    return items


@functools.cache
def _sample(count: int = 24) -> tuple[tuple[dict[str, Any], ...], ...]:
    return tuple(tuple(_canaries(seed, count, v)) for seed in SEEDS for v in range(16))


def test_the_evaluation_seeds_are_not_the_test_seeds() -> None:
    assert len(set(I.EVALUATION_SEEDS)) == 3
    assert all(10**6 <= s < 10**7 for s in I.EVALUATION_SEEDS)
    assert set(I.EVALUATION_SEEDS).isdisjoint({*SEEDS, *OTHER_TEST_SEEDS})
    doc = I.__doc__ or ""
    assert all(str(s) in doc for s in I.EVALUATION_SEEDS)
    assert "bench/retention.py --generator bench/heldout_canaries_i.py --seed" in doc


def test_a_seed_reproduces_its_canaries() -> None:
    made = I.generate(11, 24, 3)
    assert made["name"] == I.NAME == "heldout-i"
    assert (made["seed"], made["count"], made["variant"]) == (11, 24, 3)
    assert made == I.generate(11, 24, 3)
    I._plans.cache_clear()  # not a cache artefact: planned again from nothing
    assert made == I.generate(11, 24, 3)
    source = R.CanarySource(seed=11, count=24, generator=PATH)
    assert source.for_session(3) == R.canaries_from(I.generate(11, 24, 3))
    assert len(source.for_session(3)) == 24
    # a later session's plan does not depend on which sessions were asked for before
    I._plans.cache_clear()
    direct = I.generate(11, 24, 9)
    I._plans.cache_clear()
    I.generate(11, 24, 2)
    assert I.generate(11, 24, 9) == direct


def test_other_seeds_and_sessions_draw_other_values() -> None:
    def keeps(seed: int, variant: int) -> set[str]:
        return {k for c in _canaries(seed, 24, variant) for k in c["keep"]}

    assert keeps(11, 0).isdisjoint(keeps(12, 0))
    assert keeps(11, 0).isdisjoint(keeps(11, 1))
    for seed in SEEDS:  # a run's sessions never share a value
        seen = [keeps(seed, v) for v in range(16)]
        assert sum(map(len, seen)) == len(set().union(*seen))
    texts = {c["text"] for c in _canaries(11, 24, 0)}
    assert texts.isdisjoint(c["text"] for c in _canaries(12, 24, 0))
    assert texts.isdisjoint(c["text"] for c in _canaries(11, 24, 1))
    # another count is another plan, not a prefix of this one
    assert [c["template"] for c in _canaries(11, 8, 2)] != [
        c["template"] for c in _canaries(11, 24, 2)
    ][:8]


def test_every_canary_is_well_formed() -> None:
    for canaries in [*_sample(), *_sample(8), *_sample(7)]:
        ids = [c["id"] for c in canaries]
        assert len(ids) == len(set(ids)) == len(canaries)
        assert [c["at"] for c in canaries] == sorted(c["at"] for c in canaries)
        for c in canaries:
            assert set(c) >= KEYS
            template = I.BY_NAME[c["template"]]
            if "supersedes" in c:
                assert c["kind"] == "correction"
            else:
                assert c["kind"] == template.kind and c["kind"] in I.FACT_KINDS
            assert c["style"] in I.STYLES
            assert 0.0 < c["at"] < 1.0
            assert len(c["keep"]) == 1 and c["keep"][0] and c["keep"][0] in c["text"]
            assert c["keep"][0].isascii() and "\n" not in c["keep"][0]
            assert c["keep"][0] == c["keep"][0].strip() and len(c["keep"][0]) >= 6
            assert "</output" not in c["text"]  # nothing closes a text-protocol output early
            assert R.REPLACED_MARK not in c["text"] and not R._WAS.search(c["text"])
            if template.shape == "single":
                assert "supersedes" not in c and "coexists" not in c
        shapes = Counter(I.BY_NAME[c["template"]].shape for c in canaries)
        firsts = {x.get("supersedes") for x in canaries} - {None}
        assert len(firsts) * 2 == shapes["correction"]
        assert shapes["coexist"] % 2 == 0
        assert len(R.canaries_from({"canaries": list(canaries)})) == len(canaries)


def test_a_correction_supersedes_an_earlier_fact_of_its_subject() -> None:
    pairs = correction_pairs(_sample())
    assert len(pairs) > 150
    for c, old in pairs:
        template = I.BY_NAME[c["template"]]
        assert template.shape == "correction" and old["template"] == c["template"]
        assert old["subject"] == c["subject"] and old["kind"] == template.kind
        assert "supersedes" not in old and "coexists" not in old and "coexists" not in c
        assert old["keep"] != c["keep"]
        assert 0.1 <= c["at"] - old["at"] <= 0.4
        phrasing = I.PHRASINGS[template.phrasing]
        assert c["style"] == phrasing.style and c["phrasing"] == phrasing.name
    # every canary superseded is superseded once
    for canaries in _sample():
        targets = [c["supersedes"] for c in canaries if "supersedes" in c]
        assert len(targets) == len(set(targets))


def test_a_pair_that_both_hold_has_two_subjects() -> None:
    pairs = 0
    for canaries in _sample():
        by_id = {c["id"]: c for c in canaries}
        # what the benchmark counts as replaced: the corrected facts, never one of a pair
        index = R.KeepIndex(R.canaries_from({"canaries": list(canaries)}))
        replaced = {old for old, *_ in index.stale}
        assert replaced == {c["supersedes"] for c in canaries if "supersedes" in c}
        assert not any("coexists" in by_id[old] for old in replaced)
        for c in canaries:
            if "coexists" in c:
                pairs += 1
                other = by_id[c["coexists"]]
                assert other["coexists"] == c["id"] and other["template"] == c["template"]
                assert I.BY_NAME[c["template"]].shape == "coexist"
                assert other["subject"] != c["subject"] and other["keep"] != c["keep"]
                assert other["kind"] == c["kind"] == I.BY_NAME[c["template"]].kind
                assert "supersedes" not in c
    assert pairs > 60


def test_no_keep_string_occurs_in_another_canary() -> None:
    assert_keep_strings_apart([*_sample(), *_sample(8)])


def test_the_two_values_of_a_pair_have_one_form() -> None:
    pairs = 0
    for canaries in _sample():
        by_id = {c["id"]: c for c in canaries}
        for c in canaries:
            other = by_id.get(c.get("supersedes") or c.get("coexists") or "")
            if other is not None:
                pairs += 1
                assert I.shape(c["keep"][0]) == I.shape(other["keep"][0]), (c, other)
    assert pairs > 200
    assert I.shape("/srv/kelvo/dra-12") == I.shape("/srv/zu/pira-4071") == "/a/a/a-9"
    assert I.shape("2027-03-14 16:30") != I.shape("EUR 418,377")


def test_raised_bumped_and_slipped_values_go_up() -> None:
    rising = 0
    for c, old in correction_pairs(_sample()):
        if I.BY_NAME[c["template"]].form in I._RISES:
            rising += 1
            assert I._order(c["keep"][0]) > I._order(old["keep"][0]), (old["keep"], c["keep"])
    assert rising > 30
    assert I._order("1,875 req/min") == (1875,)
    assert I._order("7.38.214") < I._order("7.40.100")


def test_the_breadth_it_promises() -> None:
    assert len(I.TEMPLATES) >= 60 and len(I.BY_NAME) == len(I.TEMPLATES)
    shapes = Counter(t.shape for t in I.TEMPLATES)
    assert shapes == {"single": 36, "correction": 24, "coexist": 8}  # as the lab note says
    assert 0.28 <= shapes["correction"] / len(I.TEMPLATES) <= 0.40  # about a third
    assert len(I.FACT_KINDS) == 12 and set(I.KINDS) == {*I.FACT_KINDS, "correction"}
    for shape in ("single", "correction"):
        assert {t.kind for t in I.TEMPLATES if t.shape == shape} == set(I.FACT_KINDS)
    assert all(Counter(t.kind for t in I.TEMPLATES if t.shape == "single")[k] == 3
               for k in I.FACT_KINDS)  # fmt: skip
    assert all(t.form in I.FORMS for t in I.TEMPLATES)
    assert all(len(t.says) == 2 and all("{v}" in s for s in t.says) for t in I.TEMPLATES)
    assert all("{s}" in t.key and "{s}" in t.subject for t in I.TEMPLATES if t.shape == "coexist")
    assert len(I.STYLES) == 62 and len(I.GENERIC) == 38
    assert set(I.STYLES.values()) == set(I.REGISTERS)
    generic = Counter(I.STYLES[s] for s in I.GENERIC)
    assert generic == {"user": 12, "tool": 14, "assistant": 12}
    phrasings = Counter(p.register for p in I.PHRASINGS.values())
    assert phrasings == {"user": 7, "tool": 11, "assistant": 6}
    seen = [c for canaries in _sample() for c in canaries]
    assert {c["style"] for c in seen} == set(I.STYLES)
    assert {c["kind"] for c in seen} == set(I.KINDS)
    assert {c["template"] for c in seen} == set(I.BY_NAME)
    for canaries in _sample():  # every session has facts in each register
        assert {I.STYLES[c["style"]] for c in canaries} == set(I.REGISTERS)


def test_the_styles_avoid_the_earlier_sets() -> None:
    earlier = (
        "sentence", "terse", "key-value", "yaml", "json", "log-line", "table-row", "diff",
        "code-comment", "bullet", "slack", "linear", "calendar", "adr", "rfc", "postmortem",
        "gherkin", "wiki", "whiteboard", "forum", "call-chat", "helm", "terraform", "hcl",
        "compose", "nginx", "systemd", "psql", "jupyter-output", "grafana", "kubectl", "grep",
        "logfmt", "stack", "ansible", "oneline", "lint-output", "etcd", "toml", "ini", "env",
        "makefile", "dockerfile", "actions", "crontab", "csv", "tsv", "curl", "http",
        "json-rpc", "graphql", "protobuf", "openapi", "package-json", "properties", "xml",
        "migration", "pytest-run", "shell-session", "git-show", "word-diff", "side-by-side",
        "k8s", "cloudwatch", "datadog", "audit", "email", "minutes", "pr-review", "release",
        "faq", "glossary", "runbook", "status", "risk", "handoff", "voice", "poll",
        "reasoning", "calculation", "recap", "checklist",
    )  # fmt: skip
    for style in I.STYLES:
        assert not any(word in style for word in earlier), style


def test_corrections_are_written_many_ways() -> None:
    phrasings = {t.phrasing for t in I.TEMPLATES if t.shape == "correction"}
    assert phrasings == set(I.PHRASINGS) and len(phrasings) >= 20
    # one correction template per phrasing: stale share by template is by phrasing
    assert len([t for t in I.TEMPLATES if t.shape == "correction"]) == len(phrasings)
    assert all(I.PHRASINGS[p].style in I.STYLES for p in phrasings)
    assert {p.style for p in I.PHRASINGS.values()}.isdisjoint(I.GENERIC)
    pairs = correction_pairs(_sample())
    later = [c for c, _ in pairs]
    assert {c["phrasing"] for c in later} == set(I.PHRASINGS)
    # some name the value they replace and some do not, neither kind dominant
    naming_phrasings = [p.names_old for p in I.PHRASINGS.values()]
    assert 0.4 <= sum(naming_phrasings) / len(naming_phrasings) <= 0.6
    for c, old in pairs:
        assert (old["keep"][0] in c["text"]) == I.PHRASINGS[c["phrasing"]].names_old, c["text"]
    # no marker word: none is in more than a quarter of the corrections
    for word in MARKERS:
        pattern = re.compile(rf"\b{word}", re.IGNORECASE)
        share = sum(bool(pattern.search(c["text"])) for c in later) / len(later)
        assert share <= 0.25, (word, share)
    # nor any other word but the commonest function words
    words = Counter[str]()
    for c in later:
        words.update({w.lower() for w in re.findall(r"[A-Za-z]+", c["text"])})
    common = {"the", "to", "i", "a", "of", "is", "it", "from", "on"}
    assert all(n / len(later) <= 0.25 for w, n in words.items() if w not in common), [
        w for w, n in words.most_common(12)
    ]


def test_the_correction_text_alone_does_not_make_the_old_value_stale() -> None:
    for canaries in _sample()[:16]:
        parsed = R.canaries_from({"canaries": list(canaries)})
        index = R.KeepIndex(parsed)
        by_id = {c.id: c for c in parsed}
        for c in parsed:
            if c.supersedes:
                present = index.of(R.Message.user(c.text))
                assert f"stale:{c.supersedes}" not in present, c.text
                # while the old fact said again is
                again = index.of(R.Message.user(f"{by_id[c.supersedes].text}\n\n{c.text}"))
                assert f"stale:{c.supersedes}" in again, c.text


@pytest.mark.parametrize("seed", [0, 5, 123, 2026])
def test_a_run_of_16_sessions_plants_every_template(seed: int) -> None:
    for count in (8, 24):
        sessions = [_canaries(seed, count, v) for v in range(16)]
        assert {c["template"] for canaries in sessions for c in canaries} == set(I.BY_NAME)
        if count == 24:  # at the default count every surface comes up as well
            assert {c["style"] for canaries in sessions for c in canaries} == set(I.STYLES)
        assert all(len(canaries) == count for canaries in sessions)
        for canaries in sessions:  # no template twice in a session
            slots = Counter(c["template"] for c in canaries)
            assert all(n == I.BY_NAME[t].size for t, n in slots.items())
    # at the default count any 16 consecutive sessions do, not only the first
    later = [_canaries(seed, 24, v) for v in range(21, 37)]
    assert {c["template"] for canaries in later for c in canaries} == set(I.BY_NAME)


def test_no_keep_string_occurs_in_the_recorded_sessions(swebench_path: Path) -> None:
    assert_no_keep_string_recorded([*_sample(), *_sample(8)], swebench_path)


def test_every_fact_lands_in_each_placement(swebench_path: Path, tmp_path: Path) -> None:
    assert_facts_land_in_each_placement(I.generate, ((7, 2), (8, 9)), swebench_path, tmp_path)


def test_a_tiny_retention_run_with_this_generator(
    swebench_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it runs and reports; its figures are not looked at here
    out = generator_run(PATH, swebench_path, capsys)
    assert "survival_after_5" in out and "stale_share" in out
