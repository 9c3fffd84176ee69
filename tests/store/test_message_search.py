"""Search over the text of stored messages, on both databases: every word of the query in any
case, the newest first, scoped to the owner, the newest version of an edited message, tool
output left out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from abridged.core.model import Message, Text, ToolCall, ToolResult
from abridged.store import Store
from abridged.store.search import snippet


async def test_messages_are_found_by_every_word_of_their_text(store: Store) -> None:
    a = await store.create_conversation(owner="acme")
    b = await store.create_conversation(owner="acme")
    other = await store.create_conversation(owner="globex")
    await store.append_many(
        a.id,
        [
            Message.user("Deploy the Billing service to the staging cluster"),
            Message.assistant("Done: billing is on staging."),
            Message.tool("c1", "billing staging secret output", name="read"),
        ],
        owner="acme",
    )
    question = Message.user("Where does the Ünïcode BILLING report go?")
    await store.append(b.id, question, owner="acme")
    await store.append(other.id, Message.user("billing staging for globex"), owner="globex")

    hits = await store.search_messages("billing STAGING", owner="acme")
    # the newest first; the tool output and the other owner's message are not found
    assert [(h.conversation_id, h.seq, h.role) for h in hits] == [
        (a.id, 2, "assistant"),
        (a.id, 1, "user"),
    ]
    assert "Billing service to the staging" in hits[1].snippet
    assert [h.conversation_id for h in await store.search_messages("ünïcode", owner="acme")] == [
        b.id
    ]
    assert [h.seq for h in await store.search_messages("billing", conversation_id=a.id)] == [2, 1]
    assert await store.search_messages("billing staging nowhere", owner="acme") == []
    assert await store.search_messages("  ... ", owner="acme") == []
    assert len(await store.search_messages("billing", owner="acme", limit=1)) == 1
    # a word inside another word, or only in the JSON around the text, is no hit
    assert await store.search_messages("bill", owner="acme") == []
    assert await store.search_messages("text", owner="acme") == []

    # an edit: the newest version is the one searched
    await store.edit_message(a.id, 1, Message.user("Deploy payroll instead"), owner="acme")
    hits = await store.search_messages("billing staging", owner="acme")
    assert [(h.conversation_id, h.seq) for h in hits] == [(a.id, 2)]
    assert [h.seq for h in await store.search_messages("payroll", owner="acme")] == [1]


async def test_many_candidates_are_read_in_batches(store: Store) -> None:
    """More rows hold the letters than hold the word: later batches are read for the hits."""
    convo = await store.create_conversation(owner="acme")
    noise = [Message.user(f"noise {i} alphabet") for i in range(60)]
    await store.append_many(convo.id, [Message.user("the alpha release"), *noise], owner="acme")
    hits = await store.search_messages("alpha", owner="acme", limit=2)
    assert [h.seq for h in hits] == [1]


@given(
    words=st.lists(st.text(alphabet="abcxyz ", min_size=0, max_size=12), max_size=30),
    word=st.text(alphabet="abc", min_size=1, max_size=5),
    width=st.integers(min_value=10, max_value=200),
)
def test_a_snippet_is_bounded_and_shows_the_word(words: list[str], word: str, width: int) -> None:
    text = " ".join(words) + " " + word + " " + " ".join(reversed(words))
    cut = snippet(text, word, width=width)
    body = cut.strip("…")
    assert len(body) <= width
    if len(word) <= width:
        assert word in body


async def test_the_newest_request_of_each_session(store: Store) -> None:
    """What the user last asked in each session: not a slash command or its output, not a tool
    result, the newest version of an edited message; a session with none is left out."""
    convo = await store.create_conversation(owner="acme")
    (first,) = await store.list_sessions(convo.id, owner="acme")
    await store.append_many(
        convo.id,
        [
            Message.user("Plan the garden"),
            Message.assistant("Planned."),
            Message.user("Now order the seeds"),
            Message.assistant(tool_calls=[ToolCall("c1", "order", '{"what": "seeds"}')]),
            # a tool result in a user message, as Anthropic's API sends it
            Message("user", (ToolResult("c1", "order", (Text("ordered"),), False),)),
            Message.user("/status", meta={"kind": "command"}),
            Message.assistant("Context: 1k", meta={"kind": "command_output"}),
        ],
        owner="acme",
    )
    second = await store.new_session(convo.id, reason="clear", owner="acme")
    third_convo = await store.create_conversation(owner="acme")
    await store.append(third_convo.id, Message.user("Elsewhere"), owner="acme")
    assert await store.newest_requests(convo.id, [first.id, second.id]) == {
        first.id: "Now order the seeds"
    }
    await store.append(convo.id, Message.user("Water the roses"), owner="acme")
    assert await store.newest_requests(convo.id, [first.id, second.id]) == {
        first.id: "Now order the seeds",
        second.id: "Water the roses",
    }
    await store.edit_message(convo.id, 3, Message.user("Now order the bulbs"), owner="acme")
    assert (await store.newest_requests(convo.id, [first.id]))[first.id] == "Now order the bulbs"
    # another conversation's session is not this one's
    assert await store.newest_requests(third_convo.id, [first.id]) == {}
