"""The model summarizer: prompts a ``ChatModel``, never overflows it, and never fails silently.

``LLMSummarizer(model, max_output_tokens=..., input_budget_tokens=...)`` summarizes a
``SummaryRequest`` with one model call when it can, and otherwise by map-reduce:

1. **Sized before calling.** Every call's input (system prompt, prompt, transcript, tool
   definitions, reply priming) is estimated with the one estimator (``call_tokens``) and must fit
   ``input_budget_tokens``: the compaction call itself can never overflow. The transcript is
   clipped ever tighter (``render_transcript``) to fit.
2. **Map-reduce** when even the tightest transcript does not fit: the messages are cut into
   chunks on message boundaries, each chunk is summarized (map), and the partial summaries,
   the previous summary first, are folded together with the update wording (reduce) in groups
   that fit the budget, until one is left. The depth is bounded (``max_depth`` levels in all): the
   partial summaries' ceiling is chosen so that the groups fan in fast enough, and the last level
   clips its inputs to fit whatever happens. The folded summary has the same output ceiling.
3. **Output ceiling**: ``min(max_output_tokens, request.max_tokens)`` is passed as
   ``max_output_tokens``. A summary cut off there (``finish_reason == "length"``) is kept and
   flagged ``truncated``; so is one whose inputs had to be clipped at the last reduce level.
4. **Cache-reusing mode** (``cache_reuse=True``): the call is the conversation's own prefix
   (``request.prefix``: same system prompt and messages in the same order, and ``request.tools``)
   followed by one user message with the summarize instruction, so that a provider with prompt
   caching reads the history from cache. ``tool_choice="none"`` is passed (providers that do not
   know it ignore it). Used only when the prefix plus the instruction fits the budget; otherwise
   the transcript mode runs, and so it does when the prefix holds a tool call without its
   result (a user message cannot follow it). Tool output is untrusted: the prefix is sent as it
   is only up to the first message holding something the transcript would escape (a reserved
   tag, a summary heading: ``needs_escaping``), moved back to a step boundary; from there on the
   conversation goes, as an escaped transcript, inside the instruction. The part the provider
   cached stays byte-identical and is still read from cache; nothing untrusted reaches the
   model unescaped.
5. **Failure never loses history.** If a call raises (any ``Exception``), returns no text, was
   stopped by a content filter, or returns text without any of the section headings (an error
   message or a refusal rather than a summary), the ``fallback`` summarizer (by default the
   ``ExtractiveSummarizer``) makes the summary and ``fallback_reason`` says why. An error text is
   never returned as a summary. Without a fallback, ``ProviderError`` is raised and the caller
   keeps its history as it was.

6. **The safety net.** The ``safety_net`` summarizer (by default the extractive one) summarizes
   the same request first; the model is asked for the ceiling less the room the net's sections
   take (at least ``LEDGER_SHARE`` of the ceiling, at most ``NET_MAX_SHARE``). In the room the
   model's summary leaves (the net made again within it when it does not fit), whatever of the
   user's requests and constraints (verbatim), the fact ledger and the exact references the
   model's summary does not hold is added to it (``safety_net.add_net``). A model summary that
   says nothing keeps what the extractive path keeps; the whole stays within the ceiling (cut
   and flagged ``truncated`` if the estimate of the joined text passes it).

Every summary is redacted (``redact``), and its *Files read / modified* section lists every
tracked file (missing ones are appended).

**Concurrency.** The summarizer keeps no state between calls, so the split-turn summary (kind
``turn_prefix``) and the main one can run concurrently: the caller does
``await asyncio.gather(s.summarize(main), s.summarize(prefix))`` (the engine itself does no I/O
and imports no event loop).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from abridged.core.model import Message, Usage
from abridged.core.protocols import (
    ChatModel,
    FileOps,
    Summarizer,
    Summary,
    SummaryKind,
    SummaryRequest,
    ToolSpec,
)
from abridged.core.tokens import (
    REPLY_PRIMING,
    TokenCounter,
    estimate_context_tokens,
    estimate_text_tokens,
    estimate_tools_tokens,
)
from abridged.engine.summarize.extractive import ExtractiveSummarizer
from abridged.engine.summarize.fileops import (
    DEFAULT_EXTRACTORS,
    FileOpsExtractor,
    extract_file_ops,
)
from abridged.engine.summarize.ledger import LEDGER_SHARE
from abridged.engine.summarize.prompts import (
    SYSTEM_PROMPT,
    add_to_section,
    cache_reuse_instruction,
    find_headings,
    merge_prompt,
    transcript_prompt,
)
from abridged.engine.summarize.redact import redact
from abridged.engine.summarize.safety_net import add_net, net_tokens
from abridged.engine.summarize.transcript import (
    Transcript,
    TranscriptOptions,
    clip_middle,
    leading_summaries,
    needs_escaping,
    render_message,
    render_transcript,
    truncate_tokens,
    wrap,
)
from abridged.errors import ProviderError, SettingError, SummaryFailedError

#: The fallback used when none is given: the extractive summarizer with its defaults.
DEFAULT_FALLBACK: Summarizer = ExtractiveSummarizer()

#: Tokens kept free in every call's budget, for the estimator's rounding between pieces.
SLACK_TOKENS = 16
#: A partial summary (map output) smaller than this would say nothing useful.
MIN_PARTIAL_TOKENS = 96
#: Tokens kept free between a model's summary and the net added to it (joins, rounding).
NET_MARGIN_TOKENS = 8
#: Room under the ceiling below which no safety net is built (it could hold nothing useful).
MIN_NET_TOKENS = 32
#: The most of a summary's ceiling kept for the safety net (the model is asked for the rest).
NET_MAX_SHARE = 0.5


def tool_definitions(tools: Sequence[ToolSpec] | None) -> list[dict[str, Any]]:
    """Tool specs as plain definitions, for the estimator."""
    return [
        {"name": t.name, "description": t.description, "parameters": dict(t.parameters)}
        for t in tools or ()
    ]


def call_tokens(messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None) -> int:
    """The estimated input of one model call: messages, tool definitions and reply priming."""
    return estimate_context_tokens(messages, tool_definitions(tools) or None)


_FENCED = re.compile(r"^\s*```(?:markdown|md)?\s*\n(?P<body>.*)\n\s*```\s*$", re.DOTALL)
_WRAPPED = re.compile(r"^\s*<summary>\s*(?P<body>.*?)\s*</summary>\s*$", re.DOTALL | re.IGNORECASE)


def failure_reason(text: str, finish_reason: str | None) -> str | None:
    """Why ``text`` is not a summary, or ``None`` when it is one: empty, stopped by a content
    filter, or without any section heading (an error message or a refusal)."""
    if finish_reason == "content_filter":
        return "the provider's content filter stopped the summary"
    if not text.strip():
        if finish_reason == "length":  # a small window or ceiling, spent before any text
            return "the model returned no text: it stopped at its output limit"
        if finish_reason is None:  # the stream was cut (a dropped connection, a server error)
            return "the model returned no text: the reply ended without a finish reason"
        return "the model returned no text"
    if not find_headings(text):
        # redacted before it is cut (no half secret survives), as it is stored and shown
        first = truncate_tokens(" ".join(redact(text).split()), 24)
        return f"the reply has none of the section headings (an error or a refusal?): {first!r}"
    return None


def clean_reply(text: str) -> str:
    """The summary inside a reply: surrounding code fences or ``<summary>`` tags removed."""
    for pattern in (_FENCED, _WRAPPED):
        m = pattern.match(text)
        if m:
            text = m.group("body")
    return text.strip()


def ensure_files(text: str, file_ops: FileOps) -> str:
    """``text`` whose *Files read / modified* section names every tracked file: the missing ones
    are appended to the section (which is added, in its place, when absent)."""
    if not file_ops.read and not file_ops.modified:
        return text
    missing_mod = [p for p in sorted(file_ops.modified) if not _mentions(text, p)]
    missing_read = [p for p in sorted(file_ops.read) if not _mentions(text, p)]
    if not missing_mod and not missing_read:
        return text
    lines = []
    if missing_mod:
        lines.append("Modified (tracked): " + ", ".join(missing_mod))
    if missing_read:
        lines.append("Read (tracked): " + ", ".join(missing_read))
    return add_to_section(text, "files", "\n".join(lines))


def _mentions(text: str, path: str) -> bool:
    """Whether ``text`` names ``path`` as a whole (``a.py`` is not named by ``data.py``)."""
    return re.search(rf"(?<![\w./-]){re.escape(path)}(?![\w/-])", text) is not None


def _add_usage(total: Usage | None, more: Usage | None) -> Usage | None:
    if more is None:
        return total
    if total is None:
        return more
    return Usage(
        input=total.input + more.input,
        output=total.output + more.output,
        cache_read=total.cache_read + more.cache_read,
        cache_write=total.cache_write + more.cache_write,
        reasoning=total.reasoning + more.reasoning,
    )


@dataclass
class _Run:
    """What one summarize() has spent and noticed so far."""

    usage: Usage | None = None
    truncated: bool = False
    #: map-reduce parts whose summary failed (and why): the others were folded without them
    lost: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Prompting:
    kind: SummaryKind
    previous: str | None
    file_ops: FileOps
    focus: str | None
    ceiling: int


class LLMSummarizer:
    """Summarizes with a chat model (which may be a cheaper one than the conversation's).

    - ``model``: any ``ChatModel``.
    - ``max_output_tokens`` (>= 64): the ceiling on a summary (the request's ``max_tokens`` may
      lower it).
    - ``input_budget_tokens`` (>= the prompt's own size + 512): the most any one call may send.
    - ``fallback`` (default: ``ExtractiveSummarizer()``; ``None`` to raise instead): who makes the
      summary when the model fails.
    - ``safety_net`` (default: ``ExtractiveSummarizer()``; ``None``: the model's summary alone):
      the deterministic summarizer whose user requests, constraints, facts and references are
      added where an accepted model summary lacks them, within the ceiling (``safety_net``).
    - ``cache_reuse`` (default ``False``): send the conversation's prefix and a final instruction
      (see the module docstring); meant for when ``model`` is the conversation's own model.
    - ``name`` (default ``"llm:<model name>"``).
    - ``transcript`` (default ``TranscriptOptions()``): how messages are rendered.
    - ``max_depth`` (default 3; >= 2): levels of calls in a map-reduce, the map included.
    - ``options``: extra options passed to every model call (``temperature=0``, ...).
    - ``extractors``: file-operation extractors (see ``fileops``).
    - ``counter`` (default ``None``: the plain estimate): the conversation's ``TokenCounter``;
      its per-message cache makes sizing a cache-reusing request (the whole context) cheap.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        max_output_tokens: int,
        input_budget_tokens: int,
        fallback: Summarizer | None = DEFAULT_FALLBACK,
        safety_net: Summarizer | None = DEFAULT_FALLBACK,
        cache_reuse: bool = False,
        name: str | None = None,
        transcript: TranscriptOptions | None = None,
        max_depth: int = 3,
        options: Mapping[str, Any] | None = None,
        extractors: Sequence[FileOpsExtractor] = DEFAULT_EXTRACTORS,
        counter: TokenCounter | None = None,
    ) -> None:
        if isinstance(max_output_tokens, bool) or not isinstance(max_output_tokens, int):
            raise SettingError("max_output_tokens", max_output_tokens, "an integer >= 64")
        if max_output_tokens < 64:
            raise SettingError("max_output_tokens", max_output_tokens, "an integer >= 64")
        if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 2:
            raise SettingError("max_depth", max_depth, "an integer >= 2")
        minimum = self._base_prompt_tokens() + 512
        if (
            isinstance(input_budget_tokens, bool)
            or not isinstance(input_budget_tokens, int)
            or input_budget_tokens < minimum
        ):
            raise SettingError(
                "input_budget_tokens", input_budget_tokens, f"an integer >= {minimum}"
            )
        self.model = model
        self.max_output_tokens = max_output_tokens
        self.input_budget_tokens = input_budget_tokens
        self.fallback = fallback
        self.safety_net = safety_net
        self.cache_reuse = cache_reuse
        self._name = name or f"llm:{model.name}"
        self.transcript = transcript or TranscriptOptions()
        self.max_depth = max_depth
        self.options: Mapping[str, Any] = dict(options or {})
        self.extractors = tuple(extractors)
        self.counter = counter

    @property
    def name(self) -> str:
        """Who summarizes, for reports."""
        return self._name

    @staticmethod
    def _base_prompt_tokens() -> int:
        prompt = transcript_prompt(
            "update", wrap([]), max_tokens=4_000, previous_summary="x", focus=None
        )
        return call_tokens([Message.system(SYSTEM_PROMPT), Message.user(prompt)])

    # -- the entry point -----------------------------------------------------------------------

    async def summarize(self, request: SummaryRequest) -> Summary:
        """The summary of ``request``; never raises for a failed model call when a fallback is
        set (see the module docstring)."""
        if isinstance(request.max_tokens, bool) or request.max_tokens < 1:
            raise SettingError("SummaryRequest.max_tokens", request.max_tokens, "an integer >= 1")
        previous, messages = request.previous_summary, request.messages
        leading, rest = leading_summaries(messages)
        if leading is not None:
            previous = f"{previous}\n\n{leading}" if previous else leading
            messages = rest
        file_ops = extract_file_ops(messages, extractors=self.extractors, previous=request.file_ops)
        ceiling = min(self.max_output_tokens, request.max_tokens)
        # Room is kept for the safety net added to the reply: what its sections need, at least
        # LEDGER_SHARE of the ceiling and at most NET_MAX_SHARE (the model keeps the rest).
        reserve, probe = int(ceiling * LEDGER_SHARE), None
        if self.safety_net is not None:
            probe = await self.safety_net.summarize(request)
            reserve = min(max(reserve, net_tokens(probe.text)), int(ceiling * NET_MAX_SHARE))
        prompting = _Prompting(
            kind=request.kind,
            previous=previous,
            file_ops=file_ops,
            focus=request.focus,
            ceiling=max(1, ceiling - reserve),
        )
        run = _Run()
        try:
            if not any(m.role != "system" for m in messages) and not previous:
                raise SummaryFailedError("nothing to summarize")
            text = None
            if self.cache_reuse and request.prefix:
                text = await self._cache_mode(request, prompting, run)
            if text is None:
                text = await self._transcript_mode(messages, prompting, run)
        except SummaryFailedError as failure:
            return await self._fall_back(request, failure.reason, run)
        except Exception as exc:  # any failure of the model call: never lose history
            reason = f"the model call failed: {type(exc).__name__}: {exc}"
            return await self._fall_back(request, truncate_tokens(redact(reason), 120), run)
        text = ensure_files(text, file_ops)
        room = ceiling - estimate_text_tokens(text) - NET_MARGIN_TOKENS
        if self.safety_net is not None and probe is not None and room >= MIN_NET_TOKENS:
            # The net within the room the model's summary left: the whole stays within the
            # ceiling, and what the model dropped is back (``safety_net``).
            if net_tokens(probe.text) > room:
                probe = await self.safety_net.summarize(replace(request, max_tokens=room))
            text = add_net(text, probe.text)
        text = redact(text)
        if estimate_text_tokens(text) > ceiling:  # the estimate of the parts is not additive
            text, run.truncated = truncate_tokens(text, ceiling), True
        return Summary(
            text=text,
            summarizer=self.name,
            file_ops=file_ops,
            truncated=run.truncated,
            usage=run.usage,
            fallback_reason="; ".join(run.lost) or None,
        )

    async def _fall_back(self, request: SummaryRequest, reason: str, run: _Run) -> Summary:
        # Every reason, whatever its source, is stored, logged and shown: never with a secret.
        reason = redact(reason)
        if self.fallback is None:
            raise ProviderError(
                "the summary failed and there is no fallback summarizer",
                summarizer=self.name,
                reason=reason,
            )
        summary = await self.fallback.summarize(request)
        return replace(
            summary,
            fallback_reason=reason,
            usage=_add_usage(run.usage, summary.usage),
        )

    # -- one call ------------------------------------------------------------------------------

    def _call_tokens(self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None) -> int:
        """``call_tokens``, through the conversation's counter (cached per message) if given."""
        if self.counter is None:
            return call_tokens(messages, tools)
        definitions = tool_definitions(tools) or None
        return (
            self.counter.messages_tokens(messages)
            + estimate_tools_tokens(definitions)
            + REPLY_PRIMING
        )

    async def _call(
        self,
        messages: Sequence[Message],
        run: _Run,
        *,
        ceiling: int,
        tools: Sequence[ToolSpec] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> str:
        size = self._call_tokens(messages, tools)
        if size > self.input_budget_tokens:  # a bug if it happens: the engine sized it
            raise SummaryFailedError(
                f"internal: a summarizer call of {size} tokens exceeds the input budget "
                f"of {self.input_budget_tokens}"
            )
        options = {**self.options, **(extra or {})}
        completion = await self.model.complete(
            list(messages),
            tools=list(tools) if tools else None,
            max_output_tokens=ceiling,
            **options,
        )
        run.usage = _add_usage(run.usage, completion.usage)
        text = clean_reply(completion.message.text)
        reason = failure_reason(text, completion.finish_reason)
        if reason is not None:
            raise SummaryFailedError(reason)
        if completion.finish_reason == "length":
            run.truncated = True
        return text

    # -- cache-reusing mode ----------------------------------------------------------------------

    def cache_messages(
        self,
        request: SummaryRequest,
        *,
        ceiling: int | None = None,
        file_ops: FileOps | None = None,
    ) -> list[Message]:
        """The messages of the cache-reusing call: the prefix exactly, then the instruction;
        from the first message with something to escape on, the prefix goes, as an escaped
        transcript, inside the instruction (``_escape_cut``)."""
        cut = _escape_cut(request.prefix)
        rest = request.prefix[cut:]
        instruction = cache_reuse_instruction(
            request.kind,
            max_tokens=ceiling or min(self.max_output_tokens, request.max_tokens),
            file_ops=request.file_ops if file_ops is None else file_ops,
            focus=request.focus,
            up_to=_first_kept(request),
            continuation=render_transcript(rest, self.transcript).text if rest else None,
        )
        return [*request.prefix[:cut], Message.user(instruction)]

    async def _cache_mode(
        self, request: SummaryRequest, prompting: _Prompting, run: _Run
    ) -> str | None:
        cut = _escape_cut(request.prefix)
        if _unanswered_calls(request.prefix) or all(
            m.role == "system" for m in request.prefix[:cut]
        ):
            return None  # nothing of the conversation itself would be read from the cache
        messages = self.cache_messages(
            request, ceiling=prompting.ceiling, file_ops=prompting.file_ops
        )
        if self._call_tokens(messages, request.tools) > self.input_budget_tokens - SLACK_TOKENS:
            return None
        return await self._call(
            messages,
            run,
            ceiling=prompting.ceiling,
            tools=request.tools or None,
            extra={"tool_choice": "none"},
        )

    # -- transcript mode -------------------------------------------------------------------------

    def _prompt_messages(self, prompt: str) -> list[Message]:
        return [Message.system(SYSTEM_PROMPT), Message.user(prompt)]

    def _prompt(
        self,
        p: _Prompting,
        transcript: str,
        *,
        ceiling: int,
        part: tuple[int, int] | None = None,
        previous: bool = True,
    ) -> str:
        return transcript_prompt(
            p.kind,
            transcript,
            max_tokens=ceiling,
            previous_summary=p.previous if previous else None,
            file_ops=p.file_ops,
            focus=p.focus,
            part=part,
        )

    def plan_transcript(
        self, messages: Sequence[Message], p: _Prompting
    ) -> tuple[list[Message] | None, Transcript, int]:
        """The single call when the whole transcript fits (else ``None``), the transcript at the
        tightest clipping reached, and the budget left for a chunk of it in a map call."""
        budget = self.input_budget_tokens - SLACK_TOKENS
        fixed = call_tokens(self._prompt_messages(self._prompt(p, wrap([]), ceiling=p.ceiling)))
        transcript = render_transcript(messages, self.transcript, budget_tokens=budget - fixed)
        single = None
        if transcript.fits:
            candidate = self._prompt_messages(self._prompt(p, transcript.text, ceiling=p.ceiling))
            if call_tokens(candidate) <= budget:
                single = candidate
        map_fixed = call_tokens(
            self._prompt_messages(
                self._prompt(p, wrap([]), ceiling=p.ceiling, part=(999, 999), previous=False)
            )
        )
        return single, transcript, budget - map_fixed

    async def _transcript_mode(self, messages: Sequence[Message], p: _Prompting, run: _Run) -> str:
        single, transcript, chunk_budget = self.plan_transcript(messages, p)
        if single is not None:
            return await self._call(single, run, ceiling=p.ceiling)
        return await self._map_reduce(messages, transcript, p, run, chunk_budget)

    @staticmethod
    def chunks(
        messages: Sequence[Message], transcript: Transcript, chunk_budget: int
    ) -> list[list[str]]:
        """The transcript's blocks (one per message of ``messages``) grouped, in order, into
        chunks that each fit ``chunk_budget`` with their ``<conversation>`` tags; a message too
        big for a chunk on its own is rendered again, clipped harder, until it fits."""
        wrap_cost = estimate_text_tokens(wrap([])) + 2
        per_block = max(16, chunk_budget - wrap_cost - 8)
        chunks: list[list[str]] = []
        current: list[str] = []
        used = wrap_cost
        for index, rendered, rendered_size in zip(
            transcript.indices, transcript.blocks, transcript.block_tokens, strict=True
        ):
            block, size = rendered, rendered_size
            if size > per_block:
                block, size = _fit_block(messages[index], transcript.options, per_block)
            if current and used + size > chunk_budget:
                chunks.append(current)
                current, used = [], wrap_cost
            current.append(block)
            used += size
        if current:
            chunks.append(current)
        return chunks

    async def _map_reduce(
        self,
        messages: Sequence[Message],
        transcript: Transcript,
        p: _Prompting,
        run: _Run,
        chunk_budget: int,
    ) -> str:
        if chunk_budget < 64:
            raise SummaryFailedError("the input budget leaves no room for a transcript chunk")
        chunks = self.chunks(messages, transcript, chunk_budget)
        items = len(chunks) + (1 if p.previous else 0)
        # The reduce levels must fold `items` summaries into one: fan-in k per level.
        reduce_fixed = call_tokens(
            self._prompt_messages(
                merge_prompt(
                    [], max_tokens=p.ceiling, kind=p.kind, file_ops=p.file_ops, focus=p.focus
                )
            )
        )
        available = self.input_budget_tokens - SLACK_TOKENS - reduce_fixed
        levels = self.max_depth - 1
        fan_in = max(2, math.ceil(items ** (1 / levels)))
        per_item = available // fan_in - 24  # room for the <partial_summary> wrapper
        partial_ceiling = min(p.ceiling, per_item)
        if partial_ceiling < MIN_PARTIAL_TOKENS:
            raise SummaryFailedError(
                f"the transcript needs {len(chunks)} chunks, too many to fold within "
                f"{self.max_depth} levels in the input budget"
            )
        summaries: list[str] = [p.previous] if p.previous else []
        for index, chunk in enumerate(chunks, 1):
            prompt = self._prompt(
                p, wrap(chunk), ceiling=partial_ceiling, part=(index, len(chunks)), previous=False
            )
            # A part that fails loses that part only: the others are folded without it (the
            # fact ledger still covers every message), and the summary says which was lost.
            try:
                summaries.append(
                    await self._call(self._prompt_messages(prompt), run, ceiling=partial_ceiling)
                )
            except SummaryFailedError as failure:
                run.lost.append(f"map-reduce part {index} of {len(chunks)}: {failure.reason}")
            except Exception as exc:  # any failure of the model call
                reason = f"the model call failed: {type(exc).__name__}: {exc}"
                run.lost.append(
                    f"map-reduce part {index} of {len(chunks)}: "
                    + truncate_tokens(redact(reason), 120)
                )
        if len(run.lost) == len(chunks):
            more = f" (and the {len(chunks) - 1} other parts)" if len(chunks) > 1 else ""
            raise SummaryFailedError(run.lost[0] + more)
        return await self._reduce(
            summaries, p, run, available=available, partial_ceiling=partial_ceiling, levels=levels
        )

    async def _reduce(
        self,
        summaries: list[str],
        p: _Prompting,
        run: _Run,
        *,
        available: int,
        partial_ceiling: int,
        levels: int,
    ) -> str:
        if len(summaries) == 1:
            return summaries[0]
        level = 1
        while True:
            last = level >= levels
            groups = _group(summaries, available, must_be_one=last)
            if len(groups) == 1:
                group, clipped = _fit_group(groups[0], available)
                run.truncated = run.truncated or clipped
                return await self._merge(group, p, run, ceiling=p.ceiling)
            merged = []
            for group in groups:
                if len(group) == 1:
                    merged.append(group[0])
                    continue
                fitted, clipped = _fit_group(group, available)
                run.truncated = run.truncated or clipped
                merged.append(await self._merge(fitted, p, run, ceiling=partial_ceiling))
            summaries = merged
            level += 1

    async def _merge(self, group: Sequence[str], p: _Prompting, run: _Run, *, ceiling: int) -> str:
        prompt = merge_prompt(
            group, max_tokens=ceiling, kind=p.kind, file_ops=p.file_ops, focus=p.focus
        )
        return await self._call(self._prompt_messages(prompt), run, ceiling=ceiling)


def _fit_block(message: Message, options: TranscriptOptions, per_block: int) -> tuple[str, int]:
    """One message rendered with every text clipped ever harder until the block fits."""
    limit = per_block
    while True:
        clip = max(16, limit)
        opts = replace(
            options,
            message_tokens=clip,
            tool_result_tokens=min(options.tool_result_tokens, clip),
            tool_call_tokens=min(options.tool_call_tokens, clip),
        )
        block = render_message(message, opts)
        size = estimate_text_tokens(block) + 1
        if size <= per_block or clip == 16:
            return block, size
        limit = limit * 2 // 3


def _item_tokens(summary: str) -> int:
    return estimate_text_tokens(summary) + 24


def _group(summaries: Sequence[str], available: int, *, must_be_one: bool) -> list[list[str]]:
    """Consecutive groups of summaries whose sizes fit ``available`` (each group of at least two
    when there are two or more, so that every level folds); one group when ``must_be_one``."""
    if must_be_one or len(summaries) <= 1:
        return [list(summaries)]
    groups: list[list[str]] = []
    current: list[str] = []
    used = 0
    for summary in summaries:
        size = _item_tokens(summary)
        if current and used + size > available and len(current) >= 2:
            groups.append(current)
            current, used = [], 0
        current.append(summary)
        used += size
    if current:
        if len(current) == 1 and groups:
            groups[-1].append(current[0])
        else:
            groups.append(current)
    return groups


def _fit_group(group: Sequence[str], available: int) -> tuple[list[str], bool]:
    """The group clipped (largest first, evenly) so that it fits ``available``; whether it was."""
    sizes = [_item_tokens(s) for s in group]
    if sum(sizes) <= available:
        return list(group), False
    # Water level: every item clipped to at most `level` tokens.
    lo, hi = 32, max(sizes)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(min(s, mid) for s in sizes) <= available:
            lo = mid
        else:
            hi = mid - 1
    fitted = [
        s if size <= lo else clip_middle(s, max(16, lo - 24))
        for s, size in zip(group, sizes, strict=True)
    ]
    return fitted, True


def _unanswered_calls(messages: Sequence[Message]) -> bool:
    """Whether a tool call in ``messages`` has no result (appending a user message after it
    would be rejected by the provider). Text-protocol calls are text on the wire: not counted."""
    answered = {r.call_id for m in messages for r in m.tool_results}
    return any(
        call.id not in answered
        for m in messages
        if not m.meta.get("text_protocol")
        for call in m.tool_calls
    )


def _escape_cut(prefix: Sequence[Message]) -> int:
    """How many messages of ``prefix`` the cache-reusing call sends as they are: those before
    the first one with something to escape (``needs_escaping``), fewer when a tool call there
    waits for a result after the cut (a user message cannot follow it); all of them when
    nothing needs escaping."""
    cut = next((i for i, m in enumerate(prefix) if needs_escaping(m)), len(prefix))
    while cut > 0 and cut < len(prefix) and _unanswered_calls(prefix[:cut]):
        cut -= 1
    return cut


def _first_kept(request: SummaryRequest) -> str | None:
    """The start of the first prefix message after the summarized ones (for the cache mode)."""
    if not request.messages or not request.prefix:
        return None
    last = request.messages[-1]
    for index, message in enumerate(request.prefix):
        if message.id == last.id or message is last:
            if index + 1 < len(request.prefix):
                following = request.prefix[index + 1]
                text = following.text or render_message(following, TranscriptOptions())
                return truncate_tokens(" ".join(text.split()), 40) if text.strip() else None
            return None
    return None
