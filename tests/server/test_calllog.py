"""The call log's one-pass references (``calllog.sent_refs``) are the inspection's
(``call_entry(inspect_call(...))``) for any context: sections, tokens, the cached prefix and
where the store finds each message."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from abridged.core.model import Message, Usage
from abridged.core.summary import summary_message
from abridged.runtime.inspection import call_entry, inspect_call
from abridged.server.calllog import extend_refs, sent_refs


def _message(kind: str, text: str, index: int) -> Message:
    if kind == "summary":
        return summary_message(text)
    if kind == "system":
        return Message.system(text)
    meta: dict[str, object] = {
        "pruned": {"meta": {"pruned": {"c": {"chars": 3}}}},
        "clipped": {"meta": {"clipped": True}},
        "damaged": {"meta": {"kind": "damaged"}},
        "no id": {},
        "user": {},
        "assistant": {},
    }[kind]
    role = "assistant" if kind == "assistant" else "user"
    message = Message(role, text, id="" if kind == "no id" else f"m{index}")
    return message.replace(**meta) if meta else message


kinds = st.sampled_from(
    ["system", "summary", "pruned", "clipped", "damaged", "no id", "user", "assistant"]
)
contexts = st.lists(st.tuples(kinds, st.text(max_size=20)), max_size=12)


@given(contexts, st.integers(0, 60))
def test_the_one_pass_references_are_the_inspections(
    parts: list[tuple[str, str]], cache_read: int
) -> None:
    messages = [_message(kind, text, i) for i, (kind, text) in enumerate(parts)]
    usage = Usage(input=100, output=1, cache_read=cache_read)

    def tokens(m: Message) -> int:
        return len(m.text) // 2

    expected = call_entry(
        inspect_call(0, epoch=0, messages=messages, estimate=0, usage=usage, tokens=tokens),
        tools=0,
    ).sent
    assert sent_refs(messages, tokens=tokens, cache_read=cache_read) == expected


@given(
    contexts,
    st.lists(
        st.tuples(
            st.integers(0, 4), st.integers(0, 80), st.booleans(), st.sampled_from([1.0, 1.3])
        ),
        max_size=6,
    ),
)
def test_references_extended_call_after_call_are_the_one_pass_ones(
    parts: list[tuple[str, str]], calls: list[tuple[int, int, bool, float]]
) -> None:
    """Each call's references, made from the last call's (``extend_refs``: its new messages
    only), equal ``sent_refs`` of the whole context, whatever the cache read, the calibration,
    and whether the context grew, lost a message or started again (issue 30)."""
    messages = [_message(kind, text, i) for i, (kind, text) in enumerate(parts)]
    last = None
    context: list[Message] = []
    for grow, cache_read, restart, factor in calls:

        def tokens(m: Message, factor: float = factor) -> int:
            return round(len(m.text) / 2 * factor)

        if restart and context:
            context = context[1:]  # another prefix: every message referenced anew
        context = context + messages[len(context) : len(context) + grow]
        last, sent = extend_refs(last, context, tokens=tokens, cache_read=cache_read, factor=factor)
        assert sent == sent_refs(context, tokens=tokens, cache_read=cache_read)
