"""Request bodies joined from each message's wire JSON, encoded once per message object."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

from abridged.core.model import Message, starts_with_same

#: Messages whose encoding a model keeps: a few hundred conversations of a few hundred messages
#: (a worker's open conversations share one model of each model string).
DEFAULT_MAX_ENTRIES = 100_000
#: Bodies a model keeps joined, one a conversation (by its first messages), the last one sent
#: each: at most this many bytes in all, the least recently sent dropped first.
DEFAULT_MAX_RUN_BYTES = 64 * 1024 * 1024


class EncodedMessages:
    """Each message's wire JSON, kept by the identity of the message object.

    A conversation sends its whole history on every call, and its messages are the same
    (immutable) objects call after call: only the ones new since the last call are converted
    and encoded, the rest is a look-up. The key is the object's identity, checked against the
    object itself (kept alive by its entry, so an identity is never reused while cached), not
    its content: a content hash costs more than the conversion it would save. An LRU of
    ``max_entries`` messages."""

    def __init__(
        self,
        encode: Callable[[Message, int], bytes],
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_run_bytes: int = DEFAULT_MAX_RUN_BYTES,
    ) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        self._encode = encode
        self.max_entries = max_entries
        self.max_run_bytes = max_run_bytes
        self._entries: OrderedDict[int, tuple[Message, bytes]] = OrderedDict()
        # the last body of each conversation: its messages and their joined JSON, by the
        # identity of its first two messages (the same objects call after call)
        self._runs: OrderedDict[tuple[int, int], tuple[list[Message], bytes]] = OrderedDict()
        self._run_bytes = 0
        #: messages encoded (not found in the cache): for tests and benchmarks
        self.encoded = 0
        #: messages taken with the last body they were joined in: for tests and benchmarks
        self.reused = 0

    def join(self, messages: Sequence[Message]) -> bytes:
        """The messages' JSON, comma-separated (the inside of a JSON array). What ``encode``
        raises for a message is raised; nothing of it is kept.

        A call that sends the last call's messages (the same objects, in order) and more
        takes their joined JSON as it is and looks up only the new ones: a look-up a message
        would otherwise cost more, on a long history, than the rest of the body."""
        if not messages:
            return b""
        # a conversation's first two messages: a system prompt may be one object shared by
        # many conversations, its first message after it is its own (both kept by the run)
        key = (id(messages[0]), id(messages[1]) if len(messages) > 1 else 0)
        run = self._runs.get(key)
        start, head = 0, b""
        if run is not None:
            sent, joined = run
            if starts_with_same(messages, sent):  # (a changed or pruned message is another)
                start, head = len(sent), joined
                self.reused += len(sent)
        tail = self._join(messages, start)
        body = head + b"," + tail if head and tail else head or tail
        self._keep(key, list(messages), body, run)
        return body

    def _keep(
        self,
        key: tuple[int, int],
        messages: list[Message],
        body: bytes,
        old: tuple[list[Message], bytes] | None,
    ) -> None:
        runs = self._runs
        if old is not None:
            self._run_bytes -= len(old[1])
        runs[key] = (messages, body)  # holds messages[0]: its id is never reused meanwhile
        runs.move_to_end(key)
        self._run_bytes += len(body)
        while self._run_bytes > self.max_run_bytes and runs:
            _, (_, dropped) = runs.popitem(last=False)
            self._run_bytes -= len(dropped)

    def _join(self, messages: Sequence[Message], start: int) -> bytes:
        entries = self._entries
        parts: list[bytes] = []
        for i in range(start, len(messages)):
            m = messages[i]
            entry = entries.get(id(m))
            if entry is not None and entry[0] is m:
                entries.move_to_end(id(m))
                data = entry[1]
            else:
                data = self._encode(m, i)
                self.encoded += 1
                entries[id(m)] = (m, data)
                if len(entries) > self.max_entries:
                    entries.popitem(last=False)
            if data:
                parts.append(data)
        return b",".join(parts)

    def clear(self) -> None:
        """Forget every encoding."""
        self._entries.clear()
        self._runs.clear()
        self._run_bytes = 0
