"""Request bodies joined from each message's wire JSON, encoded once per message object."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

from abridged.core.model import Message

#: Messages whose encoding a model keeps: a few hundred conversations of a few hundred messages
#: (a worker's open conversations share one model of each model string).
DEFAULT_MAX_ENTRIES = 100_000


class EncodedMessages:
    """Each message's wire JSON, kept by the identity of the message object.

    A conversation sends its whole history on every call, and its messages are the same
    (immutable) objects call after call: only the ones new since the last call are converted
    and encoded, the rest is a look-up. The key is the object's identity, checked against the
    object itself (kept alive by its entry, so an identity is never reused while cached), not
    its content: a content hash costs more than the conversion it would save. An LRU of
    ``max_entries`` messages."""

    def __init__(
        self, encode: Callable[[Message, int], bytes], max_entries: int = DEFAULT_MAX_ENTRIES
    ) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        self._encode = encode
        self.max_entries = max_entries
        self._entries: OrderedDict[int, tuple[Message, bytes]] = OrderedDict()
        #: messages encoded (not found in the cache): for tests and benchmarks
        self.encoded = 0

    def join(self, messages: Sequence[Message]) -> bytes:
        """The messages' JSON, comma-separated (the inside of a JSON array). What ``encode``
        raises for a message is raised; nothing of it is kept."""
        entries = self._entries
        parts: list[bytes] = []
        for i, m in enumerate(messages):
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
