"""OpenAI Codex CLI's auto-compact, re-implemented: at 90% of the window, summarize and restart.

Source: openai/codex (the snapshot the code index holds: ``codex-rs/core/src/compact.rs`` at
commit e06dd0e5, ``codex-rs/protocol/src/openai_models.rs`` at 0d4367d0, the templates at
11baefb5 / 50a53333); what this module takes from each file:

- ``codex-rs/protocol/src/openai_models.rs``: ``ModelInfo::auto_compact_token_limit`` is the
  configured limit or ``context_window * 9 / 10`` (90%). Codex's ``context_window`` is the *input*
  budget (272,000 for the GPT-5 family: 400k minus 128k of output), so its analogue here is
  ``Window.limit`` (window - max_output): the limit is 11,059 tokens at 16k, 25,804 at 32k
  (``auto_compact_limit``).
- ``codex-rs/core/src/codex.rs`` (``run_turn``, ``run_pre_sampling_compact``): after each
  sampling request, when ``total_usage_tokens >= auto_compact_limit`` and the model needs a
  follow-up (it called tools), the inline auto-compact runs *mid-turn*
  (``InitialContextInjection::BeforeLastUserMessage``) and the loop continues with the compacted
  history; before a new user turn the same check runs first (``DoNotInject``), before the new user
  message is recorded. ``total_usage_tokens`` is ``ContextManager::get_total_token_usage``
  (``context_manager/history.rs``): the last response's ``total_tokens`` (input, cached included,
  plus output) plus an estimate of the items recorded after the last model-generated item (the
  tool outputs), each item its JSON's bytes / 4 (``estimate_item_token_count``,
  ``approx_token_count``). After a compaction ``recompute_token_usage`` sets that total to the
  estimate of the new history (base instructions included).
- ``codex-rs/core/src/compact.rs`` (``run_compact_task_inner``): the compaction request is the
  *whole history* plus the compact prompt recorded as one more user message
  (``templates/compact/prompt.md``, ``SUMMARIZATION_PROMPT``), sent to the same model with the
  same base instructions, so it can read the prompt cache. When the provider answers
  ``ContextWindowExceeded`` it removes the oldest history item and retries ("Trim from the
  beginning to preserve cache (prefix-based) and keep recent messages intact"); with one item left
  it gives up and the turn ends. The summary is the last assistant message of that exchange,
  prefixed ``{SUMMARY_PREFIX}\\n`` (``templates/compact/summary_prefix.md``).
  ``build_compacted_history_with_limit``: the new history is the user messages of the old one
  (``collect_user_messages``: real user messages, earlier summaries excluded), newest first while
  ``COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000`` lasts (``approx_token_count``: bytes / 4), the one
  that does not fit cut in the middle (``truncate_text``: ``…N tokens truncated…``), then the
  summary as the last user message. Mid-turn, the initial context is inserted before the last real
  user message (``insert_initial_context_before_last_real_user_or_summary``).
- ``codex.rs`` again, for a context that is still too long: there is no recovery. A sampling
  request rejected with ``ContextWindowExceeded`` is not retried; the turn ends with an error
  and ``set_total_tokens_full`` marks the context full, so the next turn's pre-sampling check
  compacts (here: the next ``prepare`` after a rejection compacts). A compaction that leaves the
  history over the limit is not checked either ("as long as compaction works well in getting us
  way below the token limit, we shouldn't worry about being in an infinite loop"): the next sample
  runs, and compacts again after it.

**Scaling.** The auto-compact limit already scales with the window (90% of it). The 20,000-token
budget of recent user messages is kept as Codex has it at any window (``user_message_budget``):
the recorded tasks are a few thousand tokens, so Codex keeps them whole, as it would with a
small-window model. (A budget scaled to the window, 903 tokens at 16k, would cut the task in the
middle: cheaper, and not what Codex does; pass ``user_message_max_tokens`` to try it.)

**Mapping to this harness.** The recorded system prompt stands for Codex's base instructions (sent
with every request, the compaction request included); the recorded sessions have no counterpart
of Codex's initial-context items (environment context, AGENTS.md), so nothing is re-injected. The
summary's ``max_tokens`` is the window's ``max_output``: Codex asks for no smaller cap. Codex also
truncates each tool output when it records it (``truncation_policy``); this module does not, so the
tool results are the recorded ones for every policy. Codex's *remote* compaction (OpenAI providers
use ``/responses/compact``, whose result is an opaque server-side item) cannot be replayed; this is
the inline compaction Codex runs with any other provider.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from abridged.core.model import Message, Reasoning, Text, Usage
from policy_kit import Kit, Rejected, Window

NAME = "codex"

AUTO_COMPACT_PERCENT = 90  # ``context_window * 9 / 10``
COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000

SUMMARIZATION_PROMPT = """You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.

Include:
- Goal / user objective
- Current progress and key decisions made
- Important context, constraints, or user preferences
- What remains to be done (clear next steps)
- Any critical data, examples, or references needed to continue

Be concise, structured, and focused on helping the next LLM seamlessly continue the work.
"""  # noqa: E501 (the template verbatim)

SUMMARY_PREFIX = "Another language model started to solve this problem and produced a summary of its thinking process. You also have access to the state of the tools that were used by that language model. Use this to build on the work that has already been done and avoid duplicating work. Here is the summary produced by the other language model, use the information in this summary to  assist with your own analysis:"  # noqa: E501 (verbatim, its double space included)


def auto_compact_limit(window: Window) -> int:
    """Codex's auto-compact token limit for ``window``: 90% of its input budget."""
    return window.limit * AUTO_COMPACT_PERCENT // 100


def user_message_budget(window: Window) -> int:
    """``COMPACT_USER_MESSAGE_MAX_TOKENS``, as Codex uses it at any window."""
    return COMPACT_USER_MESSAGE_MAX_TOKENS


def approx_token_count(text: str) -> int:
    """Codex's ``approx_token_count``: UTF-8 bytes / 4, rounded up."""
    return (len(text.encode("utf-8", "surrogatepass")) + 3) // 4


def truncate_middle(text: str, max_tokens: int) -> str:
    """Codex's ``truncate_text`` with a token budget: the head and the tail, each half of
    ``max_tokens * 4`` bytes, around ``…N tokens truncated…``."""
    data = text.encode("utf-8", "surrogatepass")
    budget = max_tokens * 4
    if len(data) <= budget:
        return text
    left = budget // 2
    right = len(data) - (budget - left)
    # Cut on character boundaries (never inside a UTF-8 sequence), as Codex does.
    while left > 0 and data[left] & 0xC0 == 0x80:
        left -= 1
    while right < len(data) and data[right] & 0xC0 == 0x80:
        right += 1
    removed = math.ceil((len(data) - budget) / 4)
    head = data[:left].decode("utf-8", "surrogatepass")
    tail = data[right:].decode("utf-8", "surrogatepass")
    return f"{head}…{removed} tokens truncated…{tail}"


def _items(message: Message) -> list[dict[str, Any]]:
    """``message`` as the Responses items Codex keeps in its history (for the byte estimate)."""
    items: list[dict[str, Any]] = []
    if message.role == "tool" or message.tool_results:
        for result in message.tool_results:
            items.append(
                {"type": "function_call_output", "call_id": result.call_id, "output": result.text}
            )
        return items
    kind = "output_text" if message.role == "assistant" else "input_text"
    for part in message.parts:
        if isinstance(part, Reasoning) and (part.text or part.summary):
            summary = [{"type": "summary_text", "text": s} for s in part.summary or (part.text,)]
            items.append({"type": "reasoning", "summary": summary})
    texts = [{"type": kind, "text": p.text} for p in message.parts if isinstance(p, Text)]
    if texts:
        items.append({"type": "message", "role": message.role, "content": texts})
    for call in message.tool_calls:
        items.append(
            {
                "type": "function_call",
                "name": call.name,
                "arguments": call.arguments,
                "call_id": call.id,
            }
        )
    return items


def estimate_tokens(message: Message) -> int:
    """Codex's ``estimate_item_token_count`` summed over ``message``'s items: each item's JSON
    bytes / 4, rounded up."""
    return sum(
        approx_token_count(json.dumps(item, ensure_ascii=False, separators=(",", ":")))
        for item in _items(message)
    )


def usage_total(usage: Usage) -> int:
    """A response's ``total_tokens`` as Codex reads it: input (cached included) plus output."""
    return usage.input + usage.cache_read + usage.cache_write + usage.output


def _is_user_text(message: Message) -> bool:
    """A user message in Codex's sense (``TurnItem::UserMessage``): user text, not tool output."""
    return message.role == "user" and not message.tool_results and bool(message.text)


def is_summary(message: Message) -> bool:
    """Whether ``message`` is a compaction summary (``is_summary_message``: the prefix and a
    newline)."""
    return message.role == "user" and message.text.startswith(SUMMARY_PREFIX + "\n")


class CodexPolicy:
    """Codex's inline auto-compact over a replayed session (see the module docstring)."""

    name = NAME

    def __init__(self, kit: Kit, *, user_message_max_tokens: int | None = None) -> None:
        self.kit = kit
        self.limit = auto_compact_limit(kit.window)
        self.user_budget = (
            user_message_budget(kit.window)
            if user_message_max_tokens is None
            else user_message_max_tokens
        )
        self.instructions: list[Message] = []  # the base instructions (system messages)
        self.history: list[Message] = []
        # ``last_token_usage.total_tokens``: the last response's, or after a compaction the
        # estimate of the new history; ``None`` before the first response.
        self.last_total: int | None = None
        self._compactions = 0
        self._trimmed = 0
        self._failed = 0
        self._summaries = 0
        self._rejections = 0

    # -- the policy interface ---------------------------------------------------------------

    def prepare(self, new: Sequence[Message]) -> list[Message]:
        """Record ``new``; compact first when Codex would before this sampling request."""
        incoming = list(new)
        self.instructions.extend(m for m in incoming if m.role == "system")
        incoming = [m for m in incoming if m.role != "system"]
        turn_start = next((i for i, m in enumerate(incoming) if _is_user_text(m)), None)
        if turn_start is None:
            self.history.extend(incoming)
            # Mid-turn: the previous sample needs a follow-up (this call is it).
            if self.history and self._over_limit():
                self._compact()
        else:
            # The model's output of the previous turn is recorded first; the pre-turn check
            # (``run_pre_sampling_compact``) runs before the new user message is.
            self.history.extend(incoming[:turn_start])
            if self.history and self._over_limit():
                self._compact()
            self.history.extend(incoming[turn_start:])
        return self._context()

    def observe(self, usage: Usage) -> None:
        """Keep the response's total tokens, as ``update_token_info_from_usage`` does."""
        self.last_total = usage_total(usage)

    def recover(self, error: Rejected) -> list[Message] | None:
        """None: a ``ContextWindowExceeded`` sampling request ends Codex's turn, unretried.

        Codex marks the context full first (``set_total_tokens_full``: the last total becomes
        the context window), so the next request, when the session goes on, compacts before it
        is sent."""
        self.last_total = self.kit.window.limit
        self._rejections += 1
        return None

    def stats(self) -> dict[str, int]:
        """Compactions, prunes (Codex has none), items trimmed from compaction requests, failed
        compactions, summary requests and rejected requests (each ended a Codex turn)."""
        return {
            "compactions": self._compactions,
            "prunes": 0,
            "trimmed_items": self._trimmed,
            "failed_compactions": self._failed,
            "summary_requests": self._summaries,
            "rejections": self._rejections,
        }

    # -- Codex's token accounting -----------------------------------------------------------

    def total_usage_tokens(self) -> int:
        """``get_total_token_usage``: the last total plus the estimate of the items recorded
        after the last model-generated one (none until a response has been observed)."""
        if self.last_total is None:
            return 0
        last_model = max(
            (i for i, m in enumerate(self.history) if m.role == "assistant"), default=None
        )
        # No model-generated item (a fresh compacted history): nothing is after one.
        after = [] if last_model is None else self.history[last_model + 1 :]
        return self.last_total + sum(estimate_tokens(m) for m in after)

    def _over_limit(self) -> bool:
        return self.total_usage_tokens() >= self.limit

    def _context(self) -> list[Message]:
        return [*self.instructions, *self.history]

    # -- the compaction ---------------------------------------------------------------------

    def _compact(self) -> None:
        """``run_compact_task_inner``: summarize the history (trimming its oldest items while the
        request is too long) and replace it with the recent user messages and the summary."""
        prompt = Message.user(SUMMARIZATION_PROMPT)
        sent = list(self.history)
        while True:
            request = [*self.instructions, *sent, prompt]
            if self.kit.count(request) <= self.kit.window.limit:
                break
            if not sent:  # only the prompt is left: Codex reports the error, the turn ends
                self._failed += 1
                return
            sent = _remove_first_item(sent)
            self._trimmed += 1
        self._summaries += 1
        summary = self.kit.summarize(
            sent,
            previous=None,  # an earlier summary is one of the history's user messages
            request=request,
            max_tokens=self.kit.window.max_output,
        )
        summary_text = f"{SUMMARY_PREFIX}\n{summary}"
        self.history = self._compacted_history(summary_text)
        # ``recompute_token_usage``: the new history's estimate, base instructions included.
        self.last_total = sum(approx_token_count(m.text) for m in self.instructions) + sum(
            estimate_tokens(m) for m in self.history
        )
        self._compactions += 1

    def _compacted_history(self, summary_text: str) -> list[Message]:
        """``build_compacted_history_with_limit``: the newest user messages within the budget
        (the oldest of them cut in the middle), then the summary."""
        user_messages = [m.text for m in self.history if _is_user_text(m) and not is_summary(m)]
        selected: list[str] = []
        remaining = self.user_budget
        for text in reversed(user_messages):
            if remaining <= 0:
                break
            tokens = approx_token_count(text)
            if tokens <= remaining:
                selected.append(text)
                remaining -= tokens
            else:
                selected.append(truncate_middle(text, remaining))
                break
        selected.reverse()
        summary = Message.user(summary_text, meta={"kind": "summary"})
        # The initial context would go before the last real user message; this harness has none.
        return [*(Message.user(text) for text in selected), summary]


def _remove_first_item(items: list[Message]) -> list[Message]:
    """``ContextManager::remove_first_item``: drop the oldest item, and with a call its outputs
    (``normalize_history`` drops outputs whose call is gone)."""
    first, rest = items[0], items[1:]
    calls = {c.id for c in first.tool_calls}
    if not calls and not first.tool_results:
        return rest
    kept: list[Message] = []
    for message in rest:
        if message.tool_results and all(r.call_id in calls for r in message.tool_results):
            continue
        kept.append(message)
    return kept


def make(kit: Kit) -> CodexPolicy:
    """Codex's auto-compact for ``kit``."""
    return CodexPolicy(kit)
