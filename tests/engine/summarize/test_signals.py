"""Tests of the ledger's ranking signals, each alone, and of the one place they are combined."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.core.model import Message
from abridged.engine.summarize import signals
from abridged.engine.summarize.ledger import build_ledger
from abridged.engine.summarize.references import reference_kinds
from abridged.errors import SettingError


def _specificity(text: str) -> float:
    return signals.specificity(reference_kinds(text), text)


def test_specificity_counts_exact_values_not_words_or_code() -> None:
    assert _specificity("The retry budget was discussed at length.") == 0.0
    assert _specificity("Tracked as OPS-4821.") > 0.5
    # More exact values, more specific; a keyed line and a person's name count too.
    assert _specificity("OPS-4821 ships in 7.14.2 on 2027-03-01.") > _specificity("OPS-4821.")
    assert _specificity("reviewer: Maren Lindqvist") > 0.4
    # Code names are the agent's work in progress; a source file is the files section's.
    assert _specificity("Look at `self.rhs` and `parse()`.") == 0.0
    assert _specificity("See src/app/models.py.") < _specificity("Logs go to /var/log/app/x.log.")


def test_a_line_printed_by_many_messages_is_less_specific() -> None:
    text = "Platform: Linux-6.8.0-1040-aws-x86_64"
    refs = reference_kinds(text)
    assert signals.specificity(refs, text, seen_in=4) == signals.specificity(refs, text) / 4


def test_modality_tells_rules_from_advice_plans_and_hedges() -> None:
    assert signals.modality("Never push to the shared remote.") == 1.0
    assert signals.modality("When you report back, keep it to five bullets.") == 1.0
    assert signals.modality("We decided to drop the tokenizer.") == 1.0
    assert signals.modality("The tests pass.") == 0.0
    # Advice binds when the user gives it, not when the agent expects something.
    assert signals.modality("You should rebase first.", "user") == 0.6
    assert signals.modality("This should work now.", "assistant") == 0.0
    assert signals.modality("I should check the admin code.") == 0.0
    assert signals.modality("It turns out the cache was cold.") == 0.3
    assert signals.modality("We must probably pin it.") == 0.5  # hedged


@given(st.dictionaries(st.sampled_from(signals.SIGNALS), st.floats(0, 1)))
def test_combine_is_the_weighted_sum_and_without_removes_a_signal(values: dict[str, float]) -> None:
    expected = sum(signals.WEIGHTS[k] * v for k, v in values.items())
    assert signals.combine(values) == pytest.approx(expected)
    for name in signals.SIGNALS:
        weights = signals.without(name)
        assert weights[name] == 0.0
        rest = {k: v for k, v in values.items() if k != name}
        assert signals.combine(values, weights) == pytest.approx(signals.combine(rest))


def test_an_unknown_signal_is_a_setting_error() -> None:
    with pytest.raises(SettingError, match="ledger signal"):
        signals.without("vibes")


def test_removing_a_signal_changes_the_ranking_it_decides() -> None:
    """A rule and a line without rule language that is more exact, from one tool output: with
    both signals the rule (it binds) ranks first; without modality the more exact line does."""
    output = (
        "Never restart db-7.example.net during business hours.\n"
        "The cache on 10.0.0.7 holds 512 MiB.\n"
    )
    messages = [Message.user(f"<returncode>0</returncode><output>\n{output}</output>")]
    ranked = [f.text for f in build_ledger(messages).facts]
    assert ranked[0].startswith("Never restart")
    flat = [f.text for f in build_ledger(messages, weights=signals.without("modality")).facts]
    assert flat[0] == "The cache on 10.0.0.7 holds 512 MiB."


@pytest.mark.parametrize("weights", [{"vibes": 1.0}, {"modality": -1.0}, {"modality": True}])
def test_the_summarizer_refuses_weights_it_cannot_use(weights: dict[str, float]) -> None:
    from abridged.engine.summarize.extractive import ExtractiveSummarizer

    with pytest.raises(SettingError, match="ledger_weights"):
        ExtractiveSummarizer(ledger_weights=weights)


def test_a_record_number_is_one_reference_and_no_word_holds_a_number() -> None:
    found = reference_kinds("Tracked as INC552043 and CHG0012345; the build log is a12345.")
    assert ("INC552043", "ticket") in found and ("CHG0012345", "ticket") in found
    assert not any(value in {"552043", "0012345", "12345"} for value, _kind in found)
    assert ("123456", "number") in reference_kinds("order 123456 shipped")
    # Standards and products with letters and a short number are no records.
    standards = reference_kinds("ISO8601 dates, ES2017 target, RFC7231, ISO27001, RTX4090")
    assert not [value for value, kind in standards if kind == "ticket"]


def test_a_preposition_or_weekday_before_a_capital_names_nobody() -> None:
    assert signals.persons("> On Mon, Supon Rafilok wrote:") == ["Supon Rafilok"]
    assert signals.persons("Status: In Progress, then To Do") == []
    assert signals.persons("handed over to Ines Varga by Tomas Ruiz") == [
        "Ines Varga",
        "Tomas Ruiz",
    ]
    # A month, *per* or *sun* opens first names too.
    assert signals.persons("met May Chen, Per Olsen and Sun Yang") == [
        "May Chen",
        "Per Olsen",
        "Sun Yang",
    ]


def test_picking_something_up_is_no_decision() -> None:
    """*picked* settles a choice; *picked up* (a worker took a job, a fix was collected) does
    not: a log's routine line is no decision."""
    assert signals.modality("We picked Postgres for the event store.") == 1.0
    assert signals.modality("2026-06-04T16:31:33Z INFO worker 96 picked up batch 074c4874") == 0.0


def test_words_inside_code_and_comparisons_from_the_agent_bind_nothing() -> None:
    """What a code span holds is the code's (``drop=drop`` is no instruction to drop), and
    *instead of* from the agent mostly says what code does; from the user it settles a choice."""
    assert signals.modality("So `Dataset.sel` returns `self.isel(indexers={}, drop=drop)`.") == 0.0
    described = "It gets passed as the `method` argument, instead of being treated as a dimension."
    assert signals.modality(described, "assistant") == 0.0
    moved = "The cutover happens on Friday instead of Monday."
    assert signals.modality(moved, "user") == 1.0
    assert signals.modality(moved, "assistant") == 0.0
    # A rule word outside the span still binds.
    assert signals.modality("Never call `flush_all()` in a request.", "assistant") == 1.0


def test_a_name_with_a_middle_initial_is_one_person_and_a_plan_b_is_none() -> None:
    assert signals.persons("Our account manager is Gaspard H. Fojeos.") == ["Gaspard H. Fojeos"]
    assert signals.persons("Folasade T. Rizau receives the goods.") == ["Folasade T. Rizau"]
    # (an initial that ends a sentence: the next word opens another)
    assert signals.persons("We go with Plan B. Then we ship.") == []
