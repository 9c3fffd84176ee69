"""Supersession by a shared name: random things, attributes and values, in notations of ours."""

from __future__ import annotations

import re
import string

from hypothesis import example, given, settings
from hypothesis import strategies as st

from abridged.core.model import Message
from abridged.engine.summarize.anchors import anchors, changes_value, related, slots
from abridged.engine.summarize.ledger import build_ledger

_LETTERS = st.text(alphabet=string.ascii_lowercase, min_size=4, max_size=7)
#: A made-up thing's name: two words joined by a separator (``quvex-relay``, ``mab_porter``).
names = st.tuples(_LETTERS, st.sampled_from("-_"), _LETTERS).map("".join)
#: Two names with no letter in common: near-identical names read as a typo's fix (older rules).
_FIRST = st.text(alphabet="abcdefghijklm", min_size=4, max_size=7)
_SECOND = st.text(alphabet="nopqrstuvwxyz", min_size=4, max_size=7)
first_names = st.tuples(_FIRST, st.sampled_from("-_"), _FIRST).map("".join)
second_names = st.tuples(_SECOND, st.sampled_from("-_"), _SECOND).map("".join)
numbers = st.integers(min_value=11, max_value=99_999)


def _tool(text: str) -> Message:
    return Message.user(f"<returncode>0</returncode><output>\n{text}\n</output>")


@given(name=names, old=numbers, new=numbers)
def test_a_later_value_of_a_named_thing_changes_it(name: str, old: int, new: int) -> None:
    if old == new:
        return
    before = f"{name} holds at most {old} slots, keep it so"
    after = f"heads-up: for {name} we settled on {new} now"
    assert changes_value(anchors(after), slots(after), anchors(before), slots(before), {name})


@given(first=names, second=names, old=numbers, new=numbers)
def test_two_named_things_are_two_subjects(first: str, second: str, old: int, new: int) -> None:
    if related(first, second):
        return
    before = f"{first} holds at most {old} slots"
    after = f"{second} holds at most {new} slots"
    rare = {first, second}
    assert not changes_value(anchors(after), slots(after), anchors(before), slots(before), rare)


@example(name="quill_store", old=203, new=77, notation="log")  # a number its timestamp holds
@settings(max_examples=30, deadline=None)
@given(name=names, old=numbers, new=numbers, notation=st.sampled_from(["chat", "log"]))
def test_the_ledger_drops_the_old_value_of_a_named_thing(
    name: str, old: int, new: int, notation: str
) -> None:
    if str(old) in str(new) or str(new) in str(old):
        return
    first = f"{name} tops out at {old} units, clean up as you go"
    later = {
        "chat": f"ok so {name} gets {new} from today",
        "log": f"2031-01-02T03:04:05Z INFO {name}: applied {new}",
    }[notation]
    text = "\n".join(
        build_ledger(
            [
                _tool(first),
                Message.assistant("Checking the next thing."),
                _tool(later),
            ]
        ).lines()
    )
    # (whole numbers: the log line's timestamp holds 2031, which is no 203)
    assert re.search(rf"(?<![\d.]){new}(?![\d.])", text)
    cleaned = re.sub(r"\(was [^()\n]*\)", "", text)  # marked replaced, as the benchmark reads
    assert not re.search(rf"(?<![\d.]){old}(?![\d.])", cleaned)


# The input that showed two identifier-named subjects in one wording taken for one (the
# second marked as replacing the first), kept so that no random draw can miss it; and a draw
# of CI's fresh seed (2026-12-06): hyphenated names, which are no values of the fact.
@example(first="aaaa_aaaa", second="nnnn_nnnn", a=4711, b=9123)
@example(first="aaaa-aaaa", second="nnnn-nnnn", a=11, b=12)
@settings(max_examples=30, deadline=None)
@given(first=first_names, second=second_names, a=numbers, b=numbers)
def test_the_ledger_keeps_both_values_of_two_named_things(
    first: str, second: str, a: int, b: int
) -> None:
    if str(a) in str(b) or str(b) in str(a):
        return
    text = "\n".join(
        build_ledger(
            [
                _tool(f"{first} tops out at {a} units, clean up as you go"),
                Message.assistant("Checking the next thing."),
                _tool(f"{second} tops out at {b} units, clean up as you go"),
            ]
        ).lines()
    )
    assert str(a) in text and str(b) in text


@settings(max_examples=30, deadline=None)
@given(name=names, old=numbers, new=numbers)
def test_a_fact_carried_by_a_summary_is_still_corrected_by_name(
    name: str, old: int, new: int
) -> None:
    # Before a compaction the two lines meet in one ledger; after it, the first comes back
    # from the summary's text (``previous``) and must still be found by the name it states.
    if str(old) in str(new) or str(new) in str(old):
        return
    ledger = build_ledger(
        [_tool(f"heads-up: for {name} we settled on {new} GiB now")],
        previous=[f"[tool] {name} tops out at {old} GiB, clean up as you go"],
    )
    text = "\n".join(ledger.lines())
    assert f"{new} GiB" in text
    assert f"{old} GiB" in ledger.replaced_values
    cleaned = re.sub(r"\(was [^()\n]*\)", "", text)
    assert f"{old} GiB" not in cleaned
