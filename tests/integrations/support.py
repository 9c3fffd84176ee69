"""What the framework tests share: the record the tool reads and the provider's script."""

from __future__ import annotations

from typing import Any

from abridged.testing import RecordedRequest, Reply

WINDOW = 8_192


def record_text(key: str) -> str:
    """What the ``read_record`` tool returns: about 600 tokens."""
    return f"record {key}\n" + "\n".join(
        f"{i:03d} {key} alpha bravo charlie delta echo foxtrot golf" for i in range(60)
    )


def scripted(calls: dict[str, int]) -> Any:
    """Tool calls while ``calls["left"]`` lasts, then a final answer."""

    def reply(request: RecordedRequest) -> Reply:
        calls["left"] -= 1
        if calls["left"] < 0:
            return Reply("Done.")
        return Reply("", tool_calls=[("read_record", {"key": f"k{request.index}"})])

    return reply
