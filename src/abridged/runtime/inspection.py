"""What one model call sent, part by part: the call inspector of the service's page.

Each message of a call's context is labelled with the part of the layout it came from (the
design's stable-first order): ``system``, ``pinned`` (carried verbatim before the summary: the
first task, pinned steps), ``summary``, ``pruned`` (a tool result replaced by its placeholder),
``kept`` (the verbatim tail). Tokens are abridged's calibrated estimate per message; the provider's
own figures (input, cached, output) come from the call's usage. A message counts as ``cached``
when it lies wholly inside the prefix the provider said it read from its cache (by the running
estimate: a guide, not the provider's own split).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from abridged.core.model import Message, Usage
from abridged.store.calls import CallEntry, reference

__all__ = ["CallInspection", "SentMessage", "call_entry", "inspect_call", "section_totals"]

Section = Literal["system", "pinned", "summary", "pruned", "kept"]
SECTIONS: tuple[Section, ...] = ("system", "pinned", "summary", "pruned", "kept")


@dataclass(frozen=True, slots=True)
class SentMessage:
    """One message as it was sent: its part of the layout, role, estimated tokens, whether it
    was inside the cached prefix, and the message itself."""

    section: Section
    role: str
    tokens: int
    cached: bool
    message: Message


@dataclass(frozen=True, slots=True)
class CallInspection:
    """One model call: what was sent (``messages``), tokens by part (``by_section``), and what
    the provider reported (``usage``; ``None`` when it reported nothing)."""

    index: int
    epoch: int
    estimate: int
    usage: Usage | None
    retry: bool
    ok: bool
    messages: tuple[SentMessage, ...]

    @property
    def by_section(self) -> dict[str, int]:
        """Estimated tokens of each part, in layout order (every part present, 0 when empty)."""
        return section_totals((m.section, m.tokens) for m in self.messages)


def section_totals(sent: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Tokens of each part of the layout from ``(section, tokens)`` pairs, in layout order
    (every part present, 0 when empty).

    >>> section_totals([("system", 9), ("kept", 2), ("kept", 3)])["kept"]
    5
    """
    totals: dict[str, int] = dict.fromkeys(SECTIONS, 0)
    for section, tokens in sent:
        totals[section] = totals.get(section, 0) + tokens
    return totals


def call_entry(call: CallInspection, *, tools: int) -> CallEntry:
    """What the store keeps of an inspected call (``tools``: its tool definitions' tokens):
    references to the rows its messages came from, not copies (``abridged.store.calls``)."""
    return CallEntry(
        epoch=call.epoch,
        estimate=call.estimate,
        tools=tools,
        usage=call.usage,
        retry=call.retry,
        ok=call.ok,
        sent=tuple(
            reference(m.message, section=m.section, tokens=m.tokens, cached=m.cached)
            for m in call.messages
        ),
    )


def _section(message: Message, *, before_summary: bool) -> Section:
    if message.role == "system":
        return "system"
    if message.is_summary:
        return "summary"
    if message.meta.get("pruned"):
        return "pruned"
    return "pinned" if before_summary else "kept"


def inspect_call(
    index: int,
    *,
    epoch: int,
    messages: Sequence[Message],
    estimate: int,
    usage: Usage | None,
    tokens: Callable[[Message], int],
    retry: bool = False,
    ok: bool = True,
) -> CallInspection:
    """The inspection of call ``index`` that sent ``messages`` (``tokens`` estimates one).

    >>> from abridged.core.model import Message
    >>> call = inspect_call(0, epoch=0, messages=[Message.system("Be brief."), Message.user("hi")],
    ...                     estimate=12, usage=None, tokens=lambda m: len(m.text))
    >>> [(m.section, m.tokens) for m in call.messages], call.by_section["kept"]
    ([('system', 9), ('kept', 2)], 2)
    """
    has_summary = any(m.is_summary for m in messages)
    cached_left = usage.cache_read if usage is not None else 0
    before_summary = has_summary
    sent: list[SentMessage] = []
    for message in messages:
        if message.is_summary:
            before_summary = False
        count = tokens(message)
        cached = 0 < count <= cached_left
        cached_left = cached_left - count if cached else 0
        sent.append(
            SentMessage(
                section=_section(message, before_summary=before_summary),
                role=message.role,
                tokens=count,
                cached=cached,
                message=message,
            )
        )
    return CallInspection(
        index=index,
        epoch=epoch,
        estimate=estimate,
        usage=usage,
        retry=retry,
        ok=ok,
        messages=tuple(sent),
    )
