"""Tool-output pruning: plan which old tool results become placeholders, then apply the plan.

Pruning is the cheapest compaction step: outside a protected recent window, bulky old tool results
are replaced by a short placeholder that keeps the call id and tool name (pairing holds) and says
how big the output was::

    [tool output pruned: 48,211 chars, ~12.1k tokens; call bash#c12]

The pruned message keeps its id and gets ``meta["pruned"]``: a mapping from each pruned call id to
``{"chars": ..., "tokens": ...}`` of the original output.

Rules (each is a property test):

- **Forward-only boundary.** A plan takes the previous prune boundary and only looks at messages
  at or after it; when it prunes, its ``new_boundary`` is the start of the protected window (never
  before the old boundary). Nothing before the boundary changes, so the cached prefix stays
  byte-identical between prunes.
- **Worth a cache miss.** A prune that frees fewer than ``min_savings_tokens`` is skipped (and the
  boundary stays), except when forced.
- **Idempotent.** Applying a plan twice changes nothing more; a plan over already pruned messages
  finds nothing new.
- **Never larger.** A placeholder that would not be smaller than the output it replaces (in
  tokens, and in characters for text-only output) is not used: the original stays.
- **Per-tool policy.** ``prune`` (default), ``summarize`` (left for the summarizer, listed in the
  plan), ``keep`` (never pruned, except by ``keep_all`` past its hard limit).

Modes: ``auto`` prunes results of ``prune`` tools of at least ``min_result_tokens``;
``keep_none`` prunes every ``prune``-tool result however small; ``keep_all`` prunes nothing until
the messages exceed ``hard_limit_tokens``, then force-prunes every result outside the protected
window whatever its tool's policy or size, without the minimum-savings check.

Messages with ``meta["text_protocol"]`` (tool calls recovered from text, such as mini-swe-agent's
bash blocks) are sent as their text: the placeholder replaces both the ``ToolResult`` content and
the message's text parts, and the message is pruned as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, get_args

from abridged.core.budget import format_token_size
from abridged.core.fields import NonNegative, Positive, check_fields
from abridged.core.model import Message, Part, Text, ToolResult
from abridged.core.turns import TokenCount, cut_points, head_length, step_spans
from abridged.errors import MessageValidationError, SettingError

PruneMode: TypeAlias = Literal["auto", "keep_all", "keep_none"]
ToolPolicy: TypeAlias = Literal["prune", "summarize", "keep"]
PRUNE_MODES: tuple[PruneMode, ...] = get_args(PruneMode)
TOOL_POLICIES: tuple[ToolPolicy, ...] = get_args(ToolPolicy)

_EMPTY_POLICY: Mapping[str, ToolPolicy] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class PruneSettings:
    """How tool outputs are pruned; every field is validated (``SettingError`` outside its range).

    - ``mode`` (default ``"auto"``; one of ``auto``, ``keep_all``, ``keep_none``): see the module
      docstring.
    - ``tool_policy`` (default empty): tool name -> ``prune`` | ``summarize`` | ``keep``.
    - ``default_policy`` (default ``"prune"``): the policy of tools not in ``tool_policy``.
    - ``protect_recent_tokens`` (default ``None``: the budget's ``keep_recent``; integer >= 0):
      the newest messages holding this many tokens are never pruned.
    - ``protect_recent_steps`` (default 3; integer >= 0): nor are the last this many steps.
    - ``min_savings_tokens`` (default ``None``: 5% of the input budget, at most 4,096; integer
      >= 0): a prune freeing less is skipped.
    - ``min_result_tokens`` (default ``None``: ``keep_recent / 8``, at most 256; integer >= 0):
      in ``auto``, smaller results stay.
    - ``hard_limit_tokens`` (default ``None``; integer >= 1): in ``keep_all``, messages above this
      many tokens are force-pruned. ``None`` means no hard limit (the engine passes the input
      budget).

    A threshold left at ``None`` is sized to the budget by ``abridged.engine.compaction_settings.
    prune_settings`` whatever else is given, so setting a tool policy never changes how much is
    protected. Used without a budget (``plan_prune`` alone), ``None`` means the fixed
    ``UNSIZED`` values (20,000, 4,096 and 256).
    """

    mode: PruneMode = "auto"
    tool_policy: Mapping[str, ToolPolicy] = field(default_factory=lambda: _EMPTY_POLICY)
    default_policy: ToolPolicy = "prune"
    protect_recent_tokens: NonNegative | None = None
    protect_recent_steps: NonNegative = 3
    min_savings_tokens: NonNegative | None = None
    min_result_tokens: NonNegative | None = None
    hard_limit_tokens: Positive | None = None

    def __post_init__(self) -> None:
        check_fields(self)
        object.__setattr__(self, "tool_policy", MappingProxyType(dict(self.tool_policy)))

    def policy_for(self, tool: str) -> ToolPolicy:
        """The policy of ``tool``."""
        return self.tool_policy.get(tool, self.default_policy)

    @property
    def sized(self) -> bool:
        """Whether every threshold is set (none left to size)."""
        return None not in (
            self.protect_recent_tokens,
            self.min_savings_tokens,
            self.min_result_tokens,
        )

    def fill(self, protect_recent: int, min_savings: int, min_result: int) -> PruneSettings:
        """These settings with each threshold left at ``None`` set to the value given."""
        if self.sized:
            return self
        return replace(
            self,
            protect_recent_tokens=_given(self.protect_recent_tokens, protect_recent),
            min_savings_tokens=_given(self.min_savings_tokens, min_savings),
            min_result_tokens=_given(self.min_result_tokens, min_result),
        )


#: The thresholds ``plan_prune`` uses for those left unset when no budget sized them.
UNSIZED = (20_000, 4_096, 256)


def _given(value: int | None, default: int) -> int:
    return default if value is None else value


@dataclass(frozen=True, slots=True)
class PrunedOutput:
    """One planned replacement: results ``call_ids`` of message ``index`` become ``placeholder``.

    ``chars`` and ``tokens`` are the size of the original output (``tokens`` as the counter sees
    the output alone). A text-protocol message is one item for all its results.
    """

    index: int
    call_ids: tuple[str, ...]
    tool: str
    chars: int
    tokens: int
    placeholder: str
    text_protocol: bool = False


@dataclass(frozen=True, slots=True)
class PrunePlan:
    """What a prune would do; ``apply_prune`` carries it out.

    - ``pruned``: the replacements, in message order; empty when ``skipped``.
    - ``for_summarizer``: ``(index, call_id)`` of ``summarize``-policy results outside the protected
      window, left verbatim for the summarizer.
    - ``tokens_before`` / ``tokens_after``: tokens of all the messages before and after applying.
    - ``boundary``: the boundary passed in; ``new_boundary``: the one to store after applying
      (equal to ``boundary`` when skipped); ``protect_start``: first protected message.
    - ``skipped``: why nothing is pruned (``None`` when the plan prunes).
    - ``forced``: ``keep_all`` past its hard limit.
    """

    pruned: tuple[PrunedOutput, ...]
    for_summarizer: tuple[tuple[int, str], ...]
    tokens_before: int
    tokens_after: int
    boundary: int
    new_boundary: int
    protect_start: int
    skipped: str | None = None
    forced: bool = False

    @property
    def saved_tokens(self) -> int:
        """Tokens the prune frees."""
        return self.tokens_before - self.tokens_after

    @property
    def indexes(self) -> tuple[int, ...]:
        """Indexes of the messages that change."""
        return tuple(sorted({p.index for p in self.pruned}))

    @property
    def call_ids(self) -> tuple[str, ...]:
        """Call ids of the pruned results."""
        return tuple(c for p in self.pruned for c in p.call_ids)


def placeholder_text(tool: str, call_id: str, chars: int, tokens: int, extra: str = "") -> str:
    """The placeholder of a pruned output.

    >>> placeholder_text("bash", "c12", 48_211, 12_390)
    '[tool output pruned: 48,211 chars, ~12.1k tokens; call bash#c12]'
    """
    label = f"{tool}#{call_id}" if tool else call_id
    size = f"{chars:,} chars{extra}, ~{format_token_size(tokens)} tokens"
    return f"[tool output pruned: {size}; call {label}]"


def _pruned_meta(message: Message) -> Mapping[str, Any]:
    value = message.meta.get("pruned")
    return value if isinstance(value, Mapping) else {}


def _content_tokens(result: ToolResult, count_tokens: TokenCount) -> int:
    full = count_tokens(Message("tool", (result,)))
    empty = count_tokens(Message("tool", (ToolResult(result.call_id, result.name, ()),)))
    return max(0, full - empty)


def _text_tokens(message: Message, count_tokens: TokenCount) -> int:
    stripped = tuple(p for p in message.parts if not isinstance(p, Text))
    return max(0, count_tokens(message) - count_tokens(message.replace(parts=stripped, id="")))


def _replace(message: Message, items: Sequence[PrunedOutput]) -> Message:
    """``message`` with ``items`` applied; results already pruned are left alone."""
    done = _pruned_meta(message)
    todo = [item for item in items if not all(c in done for c in item.call_ids)]
    if not todo:
        return message
    by_call = {c: item for item in todo for c in item.call_ids}
    protocol = next((item for item in todo if item.text_protocol), None)
    parts: list[Part] = []
    text_placed = False
    for part in message.parts:
        if isinstance(part, ToolResult) and part.call_id in by_call:
            item = by_call[part.call_id]
            parts.append(
                ToolResult(part.call_id, part.name, (Text(item.placeholder),), part.is_error)
            )
        elif isinstance(part, Text) and protocol is not None:
            if not text_placed:
                parts.append(Text(protocol.placeholder))
                text_placed = True
        else:
            parts.append(part)
    pruned = dict(done)
    for item in todo:
        for call_id in item.call_ids:
            pruned[call_id] = {"chars": item.chars, "tokens": item.tokens}
    meta = dict(message.meta)
    meta["pruned"] = pruned
    return message.replace(parts=tuple(parts), meta=meta)


def _thresholds(settings: PruneSettings) -> tuple[int, int, int]:
    """``protect_recent_tokens``, ``min_savings_tokens`` and ``min_result_tokens`` in force."""
    protect, savings, result = UNSIZED
    return (
        _given(settings.protect_recent_tokens, protect),
        _given(settings.min_savings_tokens, savings),
        _given(settings.min_result_tokens, result),
    )


def _protect_start(
    messages: Sequence[Message], tokens: Sequence[int], settings: PruneSettings, recent: int
) -> int:
    """First protected index: a step or user-message boundary covering the recent window."""
    n = len(messages)
    start = n
    if recent > 0:
        total = 0
        start = 0
        for index in range(n - 1, -1, -1):
            total += tokens[index]
            if total >= recent:
                start = index
                break
    if settings.protect_recent_steps > 0:
        steps = step_spans(messages)
        if steps:
            step_start, _end = steps[max(0, len(steps) - settings.protect_recent_steps)]
            start = min(start, step_start)
    if start >= n:
        return n
    bounds = [0, head_length(messages), *cut_points(messages)]
    return max(b for b in bounds if b <= start)


def plan_prune(
    messages: Sequence[Message],
    settings: PruneSettings,
    count_tokens: TokenCount,
    *,
    boundary: int = 0,
) -> PrunePlan:
    """Plan the pruning of ``messages`` from the previous prune ``boundary`` on (pure).

    Looks at tool results in ``[boundary, protect_start)``, decides per result by mode and tool
    policy, checks that each placeholder is smaller than its output, and skips the whole prune
    when it frees less than ``min_savings_tokens`` (unless forced). Deterministic: the same
    messages, settings and boundary give the same plan. ``SettingError`` when ``boundary`` is not
    in ``[0, len(messages)]``.
    """
    n = len(messages)
    if isinstance(boundary, bool) or not isinstance(boundary, int) or not 0 <= boundary <= n:
        raise SettingError("boundary", boundary, f"an integer in [0, {n}]")
    protect_recent, min_savings, min_result = _thresholds(settings)
    tokens = [count_tokens(m) for m in messages]
    before = sum(tokens)
    protect = max(boundary, _protect_start(messages, tokens, settings, protect_recent))
    forced = (
        settings.mode == "keep_all"
        and settings.hard_limit_tokens is not None
        and before > settings.hard_limit_tokens
    )

    call_names: dict[str, str] = {}
    for message in messages:
        for call in message.tool_calls:
            call_names.setdefault(call.id, call.name)

    items: list[PrunedOutput] = []
    for_summarizer: list[tuple[int, str]] = []
    saved = 0
    for index in range(boundary, protect):
        message = messages[index]
        results = message.tool_results
        if not results:
            continue
        done = _pruned_meta(message)
        fresh = [r for r in results if r.call_id not in done]
        if not fresh:
            continue
        candidates: list[ToolResult] = []
        for result in fresh:
            tool = result.name or call_names.get(result.call_id, "")
            policy = settings.policy_for(tool)
            if policy == "summarize" and not forced:
                for_summarizer.append((index, result.call_id))
            if forced or policy == "prune":
                candidates.append(result)
        if not candidates or (settings.mode == "keep_all" and not forced):
            continue
        if message.meta.get("text_protocol"):
            if len(candidates) != len(fresh):
                continue  # the wire text is one piece: prune it whole or not at all
            planned = _plan_text_protocol(index, message, candidates, call_names, count_tokens)
            planned_items = [planned] if planned is not None else []
        else:
            planned_items = [
                item
                for result in candidates
                if (item := _plan_result(index, result, call_names, count_tokens)) is not None
            ]
        if settings.mode == "auto" and not forced:
            planned_items = [i for i in planned_items if i.tokens >= min_result]
        if not planned_items:
            continue
        replaced = _replace(message, planned_items)
        gain = tokens[index] - count_tokens(replaced)
        if gain <= 0:
            continue  # never larger, whatever the counter thinks of the parts
        items.extend(planned_items)
        saved += gain

    skipped: str | None = None
    if settings.mode == "keep_all" and not forced:
        skipped = "mode keep_all (under the hard limit)"
    elif not items:
        skipped = "nothing to prune"
    elif not forced and saved < min_savings:
        skipped = (
            f"frees {format_token_size(saved)} tokens, under min_savings_tokens "
            f"{format_token_size(min_savings)}"
        )
    return PrunePlan(
        pruned=() if skipped else tuple(items),
        for_summarizer=tuple(for_summarizer),
        tokens_before=before,
        tokens_after=before if skipped else before - saved,
        boundary=boundary,
        new_boundary=boundary if skipped else protect,
        protect_start=protect,
        skipped=skipped,
        forced=forced,
    )


def _plan_result(
    index: int, result: ToolResult, call_names: Mapping[str, str], count_tokens: TokenCount
) -> PrunedOutput | None:
    tool = result.name or call_names.get(result.call_id, "")
    chars = len(result.text)
    others = len(result.content) - sum(1 for c in result.content if isinstance(c, Text))
    extra = f", {others} non-text part{'s' if others != 1 else ''}" if others else ""
    tokens = _content_tokens(result, count_tokens)
    text = placeholder_text(tool, result.call_id, chars, tokens, extra)
    replacement = ToolResult(result.call_id, result.name, (Text(text),), result.is_error)
    if _content_tokens(replacement, count_tokens) >= tokens:
        return None
    if not others and len(text) >= chars:
        return None
    return PrunedOutput(index, (result.call_id,), tool, chars, tokens, text)


def _plan_text_protocol(
    index: int,
    message: Message,
    results: Sequence[ToolResult],
    call_names: Mapping[str, str],
    count_tokens: TokenCount,
) -> PrunedOutput | None:
    first = results[0]
    tool = first.name or call_names.get(first.call_id, "")
    wire = message.text or "\n".join(r.text for r in results)
    chars = len(wire)
    tokens = _text_tokens(message, count_tokens) or sum(
        _content_tokens(r, count_tokens) for r in results
    )
    label = ",".join(r.call_id for r in results)
    text = placeholder_text(tool, label, chars, tokens)
    if len(text) >= chars:
        return None
    return PrunedOutput(
        index, tuple(r.call_id for r in results), tool, chars, tokens, text, text_protocol=True
    )


def apply_prune(messages: Sequence[Message], plan: PrunePlan) -> list[Message]:
    """``messages`` with the plan's placeholders in place (a new list; unchanged messages shared).

    Idempotent: results already pruned (listed in ``meta["pruned"]``) are left as they are.
    Raises ``MessageValidationError`` when the plan names a message or call id that is not there
    (the plan was made for other messages).
    """
    out = list(messages)
    by_index: dict[int, list[PrunedOutput]] = {}
    for item in plan.pruned:
        by_index.setdefault(item.index, []).append(item)
    for index, items in sorted(by_index.items()):
        if not 0 <= index < len(out):
            raise MessageValidationError(
                f"prune plan names message {index}, beyond the {len(out)} messages",
                index=index,
                field="index",
            )
        present = {r.call_id for r in out[index].tool_results}
        for item in items:
            missing = [c for c in item.call_ids if c not in present]
            if missing:
                raise MessageValidationError(
                    f"prune plan names tool result {missing[0]!r}, not in message {index}",
                    index=index,
                    field="call_id",
                )
        out[index] = _replace(out[index], items)
    return out
