"""Benchmark: do planted instructions survive repeated compaction of real agent sessions?

    .venv/bin/python bench/retention.py [--data PATH] [--seed N] [--canary-count N]
                                        [--canaries PATH] [--limit N] [--json]
                                        [--placements user,tool,assistant] [--jobs N]
                                        [--no-langchain] [--no-results] [--results PATH]
                                        [--ablate SIGNAL[,SIGNAL...]|none]

**Canaries.** By default each session gets its own generated set
(``canary_generator.generate(seed, count, variant=session index)``: ``--canary-count`` facts,
24 by default, from templates over ten kinds and ten surface styles, values drawn fresh, with
corrections phrased many ways and pairs of facts that both hold), from ``--seed`` or a fresh
random seed printed first and in ``--json`` (``seed``): a figure cannot come from fitting one
file's wording or values, and any run is reproduced from its seed. ``--canaries PATH`` plants
one file's canaries in every session instead: the fixed sets
(``../shared/data/canaries/canaries.json``, ``bench/canaries-second-set.json``) stay as
regression sets.

**Placements.** Each canary is planted into every session at fraction ``at`` of
its steps (``S`` steps of ``abridged.core.turns.split_steps``: an assistant message and the
observation it asked for; ``k = floor(at * S)`` steps come before the canary). Each placement is
its own pass over every session:

- ``user``: a new user message after the first ``k`` steps (before the first step for ``k = 0``);
- ``tool``: the canary's text appended inside the observation of the ``k``-th step (the step
  before the insertion point; the first step for ``k = 0``), as if a file, ticket or log the
  agent read said it. A text-protocol observation (``meta["text_protocol"]``, mini-swe-agent's
  ``<returncode>0</returncode><output>...</output>``, or such a user message not recovered as a
  tool result) gets it as its own line right before the closing ``</output>`` (or
  ``</output_tail>``) when that is its last tag, else at its end; a native ``ToolResult`` (other
  transcript formats) gets it as a last line of its content. A step without an observation (a
  reply the agent's harness rejected) passes the canary on to the next step that has one
  (counted; an earlier one when no later step has one);
- ``assistant``: the canary's text put at the start of that step's assistant message (its first
  text, the rest kept after a blank line), as if the agent restated it.

Canaries at the same place go in file order. A canary's position is the index of the message that
holds it. The recorded usage of each later call is raised by what the canaries added to the
messages before it (the real provider would have counted them).

**Replay.** Each seeded session is replayed call by call with ``ContextManager.replay`` (16k
window = 16,384 tokens, 4,096 max output, default settings, ``ExtractiveSummarizer``, recorded
usage while the context is the recorded one). The engine knows nothing about canaries.

**Scoring, as the canary file says.** A canary survives a compaction when every ``keep`` string
appears verbatim in the context sent right after it (the first call after the compaction: the
summary then stays and the tail only grows until the next one), counting only canaries planted
before that compaction's cut. A canary whose value was superseded (another canary names it in
``supersedes``) by a canary already said before that call is not required any more; it is
counted apart, as *stale* when its old value is still presented as current: one of its keep
strings occurs in the context outside a replaced-marker, after the correcting canary's own keep
strings are removed (``release/2026-q4`` is a prefix of ``release/2026-q4-hotfix``). The two
replaced-markers (``strip_replaced``): a parenthetical ``(was ...)`` (``release/2026-q4-hotfix
(was release/2026-q4)``), and any line holding ``[superseded`` (``- [superseded by a later
message] ... release/2026-q4.``); text inside them does not count. Survival is reported per
canary kind after the 1st, 2nd, ... compaction; ``survival_after_5`` is over all kinds at the
fifth compaction of the sessions that reached five, per placement, and overall the lowest of the
placements. A keep string that also occurs in the recorded session itself (for example
``signature`` in code) can survive without the canary: those (session, canary) pairs are
counted, and a strict figure leaves them out (generated values are made-up words and long
numbers: they should not occur by chance). A correction's own text may name the value it
replaces ("use B instead of A"); quoted whole, it does not make A stale. Generated canaries are
also reported after 5 compactions by placement x kind, x style and x template, for every
method; the pairs that both hold (``coexists``), whose loss shows a memory that replaces by
template rather than by subject; and the stale share by how the value was corrected.

**Engine figures**, from the events of each replayed call (``ReplayStep.events``):

- *missed target*: summary compactions (``CompactionEnded`` with status ``compacted``; prune-only
  ones are not counted) whose ``tokens_after`` is above the target (``target_ratio *
  input_budget``, ``Budget.target``); also by the engine's size of the call right after;
- *recoveries*: calls where the emergency path ran (an ``OverflowRecovered`` event, or a
  compaction started with an ``emergency`` stage: ``force``, ``drop``, ``minimal``, or a size the
  provider reported). A call is *excused* when one message alone of the context the engine had to
  fit (the previous call's context plus the messages since) is above the target by the engine's
  estimator (``estimate_message_tokens``): no compaction can then reach the target.
  ``recoveries`` counts the others, by stage;
- *forced compactions*: calls where an ordinary cut (no emergency stage) ran before the call
  because the newest messages had taken the context over the input budget (``CompactionStarted``
  with trigger ``overflow``). Nothing too large was sent, but the check before the step could not
  see the step coming; counted and excused like recoveries;
- *summary size*: ``CompactionEnded.summary_tokens`` of each summary compaction (the summary
  message as the engine counts it: calibrated, header included; median, max, max / the budget's
  ``summary_max``), and the summary text by ``estimate_text_tokens`` (the estimate the
  summarizer fits its ceiling with) against that compaction's ceiling
  (``CompactionPlan.summary_max_tokens``, taken through an ``after_compact`` hook).

**Size.** Every context is measured two ways: the engine's own size (its last provider report
plus its calibrated estimate), and an independent one: the local provider's o200k count of the
context as sent (``abridged.testing.counting``) times the session's ratio of the recorded
``prompt_tokens`` to the o200k count of the recorded contexts (median over its calls).

**Baselines**, at the same calls and budget (the independent measure), in every placement pass:
keep the system prompt and the last N messages, N fixed per session as the largest for which
every context of the session fits the input budget; LangChain's ``trim_messages``
(``strategy="last"``, ``include_system=True``, ``start_on="human"``) with the same token counter.
For them the scoring point is the call right after abridged's k-th compaction, with the same
canaries. Every method is also scored at every call, on all the canaries said before it (*every
call*).

Also reported: the files modified (``extract_file_ops`` on the real tool calls) before each
compaction's cut that the summary does not name. The passes run in ``--jobs`` processes (default
2; the output does not depend on it). The table goes to stdout and to the ``## retention``
section of ``bench/RESULTS.md``; with ``--json`` the last line is one JSON object: headline
figures over all placements (counts summed over the passes), ``*_by_placement``, and the whole
figures of each pass under ``by_placement``.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import math
import os
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from abridged.core.budget import compute_budget  # noqa: E402
from abridged.core.model import Message, Reasoning, Text, ToolResult  # noqa: E402
from abridged.core.tokens import (  # noqa: E402
    estimate_message_tokens,
    estimate_text_tokens,
    reported_tokens,
)
from abridged.core.turns import Step, head_length, split_steps  # noqa: E402
from abridged.engine.compaction import CompactionHooks, CompactionResult  # noqa: E402
from abridged.engine.summarize.extractive import ExtractiveSummarizer  # noqa: E402
from abridged.engine.summarize.fileops import extract_file_ops  # noqa: E402
from abridged.engine.summarize.signals import SIGNALS, without  # noqa: E402
from abridged.errors import SettingError  # noqa: E402
from abridged.events.engine import (  # noqa: E402
    CompactionEnded,
    CompactionStarted,
    OverflowRecovered,
)
from abridged.formats.openai_chat import messages_to_openai  # noqa: E402
from abridged.formats.transcripts import load_transcripts  # noqa: E402
from abridged.runtime.context_manager import ContextManager  # noqa: E402
from results import add_output_options, save_section  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "swebench-gemini3" / "trajectories.jsonl"
DEFAULT_CANARIES = ROOT.parent / "shared" / "data" / "canaries" / "canaries.json"
SECTION = "## retention"
WINDOW = 16_384
MAX_OUTPUT = 4_096
CYCLES = 5  # columns 1..5, then "6+"
TARGET = 0.95
PLACEMENTS = ("user", "tool", "assistant")
METHODS = ("abridged", "last_n", "trim_messages")
LABELS = {
    "abridged": "abridged (extractive summary)",
    "last_n": "keep system + last N messages",
    "trim_messages": "LangChain trim_messages",
}
SHORT = {"abridged": "abridged", "last_n": "last N", "trim_messages": "trim_messages"}


# -- canaries -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Canary:
    """One planted instruction and the strings that must survive."""

    id: str
    kind: str
    at: float
    text: str
    keep: tuple[str, ...]
    supersedes: str | None = None
    # generated canaries (bench/canary_generator.py) also say how they are written, which
    # template made them, and the other canary of a pair that both hold
    style: str | None = None
    template: str | None = None
    coexists: str | None = None


def canaries_from(data: Any) -> list[Canary]:
    """The canaries of a canary file's JSON (``{"canaries": [...]}`` or the bare list)."""
    items = data["canaries"] if isinstance(data, dict) else data
    return [
        Canary(
            id=str(c["id"]),
            kind=str(c["kind"]),
            at=float(c["at"]),
            text=str(c["text"]),
            keep=tuple(str(k) for k in c["keep"]),
            supersedes=c.get("supersedes"),
            style=c.get("style"),
            template=c.get("template"),
            coexists=c.get("coexists"),
        )
        for c in items
    ]


def load_canaries(path: Path) -> list[Canary]:
    return canaries_from(json.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True, slots=True)
class CanarySource:
    """Where each session's canaries come from: one file for every session (``path``), or a
    generated set per session (``seed``: session ``i`` gets ``canary_generator.generate(seed,
    count, variant=i)``, so no two sessions carry the same values and every template is
    exercised in one run)."""

    path: Path | None = None
    seed: int | None = None
    count: int = 24
    # another generator of the same shape (a file defining ``generate(seed, count, variant)``):
    # facts written by someone else, run through the same benchmark
    generator: Path | None = None

    def for_session(self, index: int) -> list[Canary]:
        if self.path is not None:
            return load_canaries(self.path)
        assert self.seed is not None
        generate = _generator(self.generator)
        return canaries_from(generate(self.seed, self.count, variant=index))


@functools.cache
def _generator(path: Path | None) -> Callable[..., Any]:
    """``generate`` of the generator file ``path`` (default ``bench/canary_generator.py``)."""
    if path is None:
        from canary_generator import generate

        return generate
    spec = importlib.util.spec_from_file_location(f"canary_generator_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--generator {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    generate = getattr(module, "generate", None)
    if not callable(generate):
        raise SystemExit(f"--generator {path}: defines no generate(seed, count, variant)")
    return generate


@dataclass(frozen=True, slots=True)
class Seeded:
    """A session with the canaries planted.

    ``positions[id]`` is the index of the message holding each canary; ``grown[index]`` the
    recorded message a canary was written into (``None`` for a new user message);
    ``fallbacks`` how many canaries went to a later (or earlier) step than their own, because
    their step had no observation (``tool``) or no assistant message (``assistant``), and
    ``as_user`` how many became user messages because no step had one.
    """

    messages: list[Message]
    positions: dict[str, int]
    steps: int
    placement: str = "user"
    grown: dict[int, Message | None] = field(default_factory=dict)
    fallbacks: int = 0
    as_user: int = 0


def insertion_step(at: float, steps: int) -> int:
    """How many of ``steps`` steps come before a canary at fraction ``at``."""
    return max(0, min(steps, math.floor(at * steps)))


# mini-swe-agent's observations start with a return code (after an optional exception)
_RAW_OBSERVATION = re.compile(r"\s*(?:<exception>.*?</exception>\s*)?<returncode>", re.DOTALL)
_CLOSING_TAG = re.compile(r"</([A-Za-z_][\w-]*)>")
OUTPUT_TAGS = ("output", "output_tail")


def _append_line(text: str, line: str) -> str:
    """``line`` as the last line of ``text``."""
    if not text:
        return line
    sep = "" if text.endswith("\n") else "\n"
    return f"{text}{sep}{line}"


def insert_in_output(text: str, line: str) -> str:
    """``line`` as its own line right before the closing ``</output>`` (or ``</output_tail>``)
    of a text-protocol observation when that is its last tag; else as its last line.

    >>> insert_in_output("<returncode>0</returncode>\\n<output>\\nok\\n</output>", "NOTE")
    '<returncode>0</returncode>\\n<output>\\nok\\nNOTE\\n</output>'
    """
    tags = list(_CLOSING_TAG.finditer(text))
    last = tags[-1] if tags else None
    if last is None or last.group(1) not in OUTPUT_TAGS:
        return _append_line(text, line)
    before, after = text[: last.start()], text[last.start() :]
    sep = "" if not before or before.endswith("\n") else "\n"
    return f"{before}{sep}{line}\n{after}"


def observation_index(messages: Sequence[Message], step: Step) -> int | None:
    """The index of ``step``'s observation: its last message holding a tool result, else a raw
    text-protocol observation (a user message starting with ``<returncode>``) right after it;
    ``None`` when it has none."""
    for index in range(step.end - 1, step.start - 1, -1):
        if any(isinstance(p, ToolResult) for p in messages[index].parts):
            return index
    after = step.end
    if (
        step.assistant is not None
        and after < len(messages)
        and messages[after].role == "user"
        and _RAW_OBSERVATION.match(messages[after].text)
    ):
        return after
    return None


def add_to_observation(message: Message, texts: Sequence[str]) -> Message:
    """``message`` (an observation) with each of ``texts`` added as its own line, in order: into
    its last tool result (before a text-protocol ``</output>``, else at the end of the content),
    or into the text of a raw text-protocol user message."""
    parts = list(message.parts)
    results = [i for i, p in enumerate(parts) if isinstance(p, ToolResult)]
    protocol = bool(message.meta.get("text_protocol")) or not results

    def grow(text: str) -> str:
        for line in texts:
            text = insert_in_output(text, line) if protocol else _append_line(text, line)
        return text

    if results:
        result = parts[results[-1]]
        assert isinstance(result, ToolResult)
        content = list(result.content)
        if content and isinstance(content[-1], Text):
            content[-1] = Text(grow(content[-1].text))
        else:
            content.append(Text(grow("")))
        parts[results[-1]] = ToolResult(
            result.call_id, result.name, tuple(content), result.is_error
        )
    else:
        texts_at = [i for i, p in enumerate(parts) if isinstance(p, Text)]
        if texts_at:
            last = parts[texts_at[-1]]
            assert isinstance(last, Text)
            parts[texts_at[-1]] = Text(grow(last.text))
        else:
            parts.append(Text(grow("")))
    return message.replace(parts=tuple(parts))


def add_to_assistant(message: Message, texts: Sequence[str]) -> Message:
    """``message`` (an assistant message) with ``texts`` at the start of its first text, in
    order, each followed by a blank line; a message without text gets one (after its
    reasoning)."""
    head = "\n\n".join(texts)
    parts = list(message.parts)
    for i, part in enumerate(parts):
        if isinstance(part, Text):
            parts[i] = Text(f"{head}\n\n{part.text}" if part.text else head)
            break
    else:
        at = next((i for i, p in enumerate(parts) if not isinstance(p, Reasoning)), len(parts))
        parts.insert(at, Text(head))
    return message.replace(parts=tuple(parts))


def _holder(
    messages: Sequence[Message], steps: Sequence[Step], k: int, placement: str
) -> tuple[int | None, bool]:
    """The index of the message of step ``k`` that takes a canary in ``placement`` (or of the
    nearest later step that has one, else the nearest earlier), and whether it moved."""

    def find(step: Step) -> int | None:
        if placement == "tool":
            return observation_index(messages, step)
        return step.assistant

    order = [*range(k, len(steps)), *range(k - 1, -1, -1)]
    for j in order:
        index = find(steps[j])
        if index is not None:
            return index, j != k
    return None, True


def insert_canaries(
    messages: Sequence[Message], canaries: Sequence[Canary], placement: str = "user"
) -> Seeded:
    """``messages`` with each canary planted in ``placement`` (see the module docstring):
    ``user`` as a user message after the step at fraction ``at`` of the session's steps (before
    the first step for ``at = 0``); ``tool`` inside the observation and ``assistant`` at the
    start of the assistant message of the step before that point (the first step for ``at =
    0``)."""
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r}: one of {', '.join(PLACEMENTS)}")
    steps = split_steps(messages)
    new_at: dict[int, list[Canary]] = defaultdict(list)  # user messages before index
    into: dict[int, list[Canary]] = defaultdict(list)  # written into message index
    fallbacks = as_user = 0
    for canary in sorted(canaries, key=lambda c: c.at):  # stable: file order at equal ``at``
        k = insertion_step(canary.at, len(steps))
        if placement != "user" and steps:
            index, moved = _holder(messages, steps, max(0, k - 1), placement)
            if index is not None:
                into[index].append(canary)
                fallbacks += moved
                continue
        if placement != "user":
            as_user += 1
        if not steps:
            new_at[len(messages)].append(canary)
        elif k == 0:
            new_at[steps[0].start].append(canary)
        else:
            new_at[steps[k - 1].end].append(canary)
    out: list[Message] = []
    positions: dict[str, int] = {}
    grown: dict[int, Message | None] = {}
    for i in range(len(messages) + 1):
        for canary in new_at.get(i, ()):
            positions[canary.id] = len(out)
            grown[len(out)] = None
            out.append(Message.user(canary.text, id=f"canary-{canary.id}"))
        if i == len(messages):
            break
        message = messages[i]
        planted = into.get(i)
        if planted:
            texts = [c.text for c in planted]
            grown[len(out)] = message
            for canary in planted:
                positions[canary.id] = len(out)
            if placement == "tool":
                message = add_to_observation(message, texts)
            else:
                message = add_to_assistant(message, texts)
        out.append(message)
    return Seeded(out, positions, len(steps), placement, grown, fallbacks, as_user)


def wire_text(message: Message) -> str:
    """Everything the model reads of ``message``: its wire form's texts and tool arguments."""
    pieces: list[str] = []
    for item in messages_to_openai([message]):
        content = item.get("content")
        if isinstance(content, str):
            pieces.append(content)
        elif isinstance(content, list):
            pieces.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
        for call in item.get("tool_calls") or ():
            fn = call.get("function") or {}
            pieces.append(f"{fn.get('name', '')} {fn.get('arguments', '')}")
    return "\n".join(pieces)


REPLACED_MARK = "[superseded"
_WAS = re.compile(r"\(was [^()\n]*\)")
_WAS_VALUE = re.compile(r"\(was ([^()\n]*)\)")


def own_text_marks(summary: str, canaries: Sequence[Canary]) -> tuple[int, int]:
    """How many ``(was X)`` marks ``summary`` puts on the session's own text: those whose ``X``
    holds no keep string of the session's ``canaries`` and is no part of a canary's text. The
    recorded sessions correct almost nothing of their own, so nearly every such mark calls a
    thing the agent works on replaced (*if `x` is `(was None)`*). Counted apart: a mark inside
    a line (it changes what the line says), and one at a line's end (a fact's *was* note).

    >>> c = Canary("c1", "update", 0.5, "Use branch v1.", ("v1",))
    >>> own_text_marks("if x is (was None) here\\nport 5433 (was 5432)\\nb (was v1)", [c])
    (1, 1)
    """
    keep = [s for c in canaries for s in c.keep if s]
    texts = [c.text for c in canaries]
    inline = suffix = 0
    for line in summary.split("\n"):
        end = len(line.rstrip().rstrip(".`")) - 1
        for m in _WAS_VALUE.finditer(line):
            value = m.group(1).strip()
            if any(k in value for k in keep) or any(value in t for t in texts):
                continue
            if m.end() - 1 >= end:
                suffix += 1
            else:
                inline += 1
    return inline, suffix


def strip_replaced(text: str) -> str:
    """``text`` without what it marks as replaced, the two ways a summary does:

    - a line holding ``[superseded`` (``- [superseded by a later message] The release branch
      ... is release/2026-q4.``) is dropped whole;
    - a parenthetical ``(was ...)`` (``release/2026-q4-hotfix (was release/2026-q4)``) is
      removed (every match of ``\\(was [^()\\n]*\\)``).

    A superseded value left in what remains is presented as current (stale).

    >>> strip_replaced("branch: v2 (was v1)\\n- [superseded] branch is v1\\nowner: ann")
    'branch: v2 \\nowner: ann'
    """
    lines = [line for line in text.split("\n") if REPLACED_MARK not in line]
    return _WAS.sub("", "\n".join(lines))


def presents_as_current(text: str, old_keep: Sequence[str], new_keep: Sequence[str]) -> bool:
    """Whether ``text`` presents a superseded value (``old_keep``) as current: one of its strings
    occurs outside a replaced-marker (``strip_replaced``), once the correcting value's own
    strings (``new_keep``, which may contain the old ones) are removed."""
    cleaned = strip_replaced(text)
    for s in new_keep:
        cleaned = cleaned.replace(s, "")
    return any(s in cleaned for s in old_keep)


class KeepIndex:
    """Which keep strings (and stale superseded values) each message holds, computed once per
    message content."""

    def __init__(self, canaries: Sequence[Canary]) -> None:
        self.strings = sorted({s for c in canaries for s in c.keep})
        by_id = {c.id: c for c in canaries}
        # (old id, old keep, new keep, the correction's own text)
        self.stale: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = []
        for c in canaries:
            if c.supersedes and c.supersedes in by_id:
                self.stale.append((c.supersedes, by_id[c.supersedes].keep, c.keep, c.text))
        self._cache: dict[str, frozenset[str]] = {}

    def of(self, message: Message) -> frozenset[str]:
        key = message.fingerprint
        found = self._cache.get(key)
        if found is None:
            text = wire_text(message)
            hits = {s for s in self.strings if s in text}
            # which of them stand outside a replaced-marker (``current:``): a fact shown only
            # as ``(was X)`` is presented as no longer current
            current = (
                strip_replaced(text)
                if hits and ("(was " in text or REPLACED_MARK in text)
                else text
            )
            hits |= {f"current:{s}" for s in list(hits) if s in current}
            for old_id, old_keep, new_keep, correction in self.stale:
                # the correction itself may name the value it replaces ("use B instead of
                # A"): quoted whole, that does not present A as current
                rest = text.replace(correction, "") if correction else text
                if any(s in rest for s in old_keep) and presents_as_current(
                    rest, old_keep, new_keep
                ):
                    hits.add(f"stale:{old_id}")
            found = frozenset(hits)
            self._cache[key] = found
        return found

    def of_context(self, messages: Iterable[Message]) -> frozenset[str]:
        out: set[str] = set()
        for m in messages:
            out |= self.of(m)
        return frozenset(out)


@dataclass(frozen=True, slots=True)
class Score:
    """One canary at one scoring point: ``kept``, ``lost`` or ``superseded``; ``stale`` when a
    superseded value is still presented as current in the context."""

    canary: Canary
    status: str
    stale: bool = False
    # kept, but every place holding one of its keep strings marks it replaced (``(was X)``)
    as_replaced: bool = False


def score_context(
    present: frozenset[str],
    canaries: Sequence[Canary],
    positions: dict[str, int],
    *,
    cut: int,
    said_before: int,
) -> list[Score]:
    """Score the canaries planted before history index ``cut`` against the keep strings
    ``present`` in a context (``KeepIndex.of_context``). A canary superseded by one planted
    before ``said_before`` (the call's index) is ``superseded``, not required."""
    superseded = {
        c.supersedes: c.id
        for c in canaries
        if c.supersedes and c.id in positions and positions[c.id] < said_before
    }
    out: list[Score] = []
    for c in canaries:
        at = positions.get(c.id)
        if at is None or at >= cut:
            continue
        if c.id in superseded:
            out.append(Score(c, "superseded", stale=f"stale:{c.id}" in present))
            continue
        kept = all(s in present for s in c.keep)
        as_replaced = kept and not all(f"current:{s}" in present for s in c.keep)
        out.append(Score(c, "kept" if kept else "lost", as_replaced=as_replaced))
    return out


# -- token ruler ----------------------------------------------------------------------------------


class Ruler:
    """The independent size of a context: the local provider's o200k count of the context as
    sent (``abridged.testing.counting``) times the session's provider/o200k ratio."""

    def __init__(self) -> None:
        from abridged.testing.counting import REPLY_PRIMING, TokenCounter

        self.counter = TokenCounter("o200k")
        self.priming = REPLY_PRIMING
        self._cache: dict[str, int] = {}

    def count(self, messages: Sequence[Message]) -> list[int]:
        """o200k tokens of each message as sent (blocks and per-message overhead)."""
        from abridged.testing.counting import chat_segments, measure

        todo = [m for m in messages if m.fingerprint not in self._cache]
        if todo:
            segments = [chat_segments({"messages": messages_to_openai([m])}) for m in todo]
            flat = [s for seg in segments for s in seg]
            measured = measure(flat, self.counter)
            k = 0
            for m, seg in zip(todo, segments, strict=True):
                self._cache[m.fingerprint] = sum(s.tokens for s in measured[k : k + len(seg)])
                k += len(seg)
        return [self._cache[m.fingerprint] for m in messages]

    def session_ratio(self, messages: Sequence[Message]) -> float:
        """Median of recorded ``prompt_tokens`` / o200k count of the context it was sent."""
        counts = self.count(messages)
        ratios: list[float] = []
        total = 0
        for i, m in enumerate(messages):
            real = reported_tokens(m)
            if real is not None and total > 0:
                ratios.append(real / (total + self.priming))
            total += counts[i]
        return statistics.median(ratios) if ratios else 1.0


# -- one session ----------------------------------------------------------------------------------


@dataclass(slots=True)
class CallRecord:
    """One call of a replayed session, for every method."""

    index: int
    compactions: int
    cut: int
    engine_tokens: int
    size: dict[str, float] = field(default_factory=dict)
    present: dict[str, frozenset[str]] = field(default_factory=dict)


@dataclass(slots=True)
class Cycle:
    """The k-th compaction of a session and the call right after it."""

    number: int
    call: int  # position in SessionResult.calls
    cut: int
    files_modified: int = 0
    files_missing: list[str] = field(default_factory=list)
    # ``(was X)`` marks on the session's own text (``own_text_marks``): in place, at a line's end
    own_marks: tuple[int, int] = (0, 0)


@dataclass(frozen=True, slots=True)
class SummaryRecord:
    """One summary compaction of abridged (a ``CompactionEnded`` with status ``compacted``):
    the size the engine reported right after it, the engine's size of the call, and the
    summary's size: as the engine counts the summary message (``summary_tokens``: calibrated,
    header included), and its text by the estimator the summarizer fits its ceiling with
    (``text_tokens``, against ``ceiling``, the plan's ``summary_max_tokens``)."""

    call: int  # position in SessionResult.calls
    tokens_after: int
    engine_tokens: int
    target: int
    summary_tokens: int
    summary_max: int
    emergency: bool
    text_tokens: int | None
    ceiling: int | None
    truncated: bool

    @property
    def missed(self) -> bool:
        return self.tokens_after > self.target


@dataclass(frozen=True, slots=True)
class Recovery:
    """A call where abridged's emergency path ran: its stages, and whether one message alone
    of the context it had to fit was above the target (``excused``)."""

    call: int  # position in SessionResult.calls
    stages: tuple[str, ...]
    excused: bool
    largest_message: int
    target: int


@dataclass(slots=True)
class SessionResult:
    id: str
    steps: int
    messages: int
    ratio: float
    last_n: int
    calls: list[CallRecord]
    cycles: list[Cycle]
    ambiguous: set[str]  # canary ids whose keep strings all occur in the recorded session
    positions: dict[str, int]
    input_budget: int
    seconds: float
    placement: str = "user"
    fallbacks: int = 0
    as_user: int = 0
    summaries: list[SummaryRecord] = field(default_factory=list)
    recoveries: list[Recovery] = field(default_factory=list)
    # ordinary cuts made before a call because the newest messages went over the input budget
    forced_compactions: list[Recovery] = field(default_factory=list)
    canaries: list[Canary] = field(default_factory=list)  # the ones planted in this session


def _with_canary_usage(messages: Sequence[Message], extra: dict[int, float]) -> list[Message]:
    """``messages`` with each recorded usage raised by ``extra[i]`` for every ``i`` before it
    (the tokens the canaries added to message ``i``)."""
    at = sorted(extra.items())
    out: list[Message] = []
    added = 0.0
    k = 0
    for i, m in enumerate(messages):
        while k < len(at) and at[k][0] < i:
            added += at[k][1]
            k += 1
        usage = m.usage
        if usage is not None and added and usage.context_tokens > 0:
            out.append(m.replace(usage=replace(usage, input=usage.input + round(added))))
        else:
            out.append(m)
    return out


def recovery_stages(events: Iterable[object]) -> tuple[str, ...]:
    """The emergency stages a call's events show: each ``OverflowRecovered``'s stage, and each
    compaction started with an ``emergency`` stage that no ``OverflowRecovered`` reports."""
    recovered: list[str] = []
    started: list[str] = []
    for event in events:
        if isinstance(event, OverflowRecovered):
            recovered.append(event.stage)
        elif isinstance(event, CompactionStarted) and event.emergency:
            started.append(event.emergency)
    extra = list(started)
    for stage in recovered:
        if stage in extra:
            extra.remove(stage)
    return (*recovered, *extra)


class _Sizes:
    """The engine's estimate of single messages, once per message content."""

    def __init__(self) -> None:
        self._cache: dict[str, int] = {}

    def largest(self, messages: Iterable[Message]) -> int:
        best = 0
        for m in messages:
            size = self._cache.get(m.fingerprint)
            if size is None:
                size = self._cache[m.fingerprint] = estimate_message_tokens(m)
            best = max(best, size)
        return best


def last_n_for(head: int, sizes: Sequence[float], calls: Sequence[int], limit: float) -> int:
    """The largest N such that head + the last N messages before every call fit ``limit``
    (at least 1)."""
    prefix = [0.0]
    for s in sizes:
        prefix.append(prefix[-1] + s)
    fixed = prefix[head]
    best = max((c - head for c in calls), default=1)
    for c in calls:
        if fixed + prefix[c] - prefix[head] <= limit:
            continue  # everything fits: no constraint from this call
        lo, hi = 0, c - head  # largest n with fixed + sum(sizes[c-n:c]) <= limit
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fixed + prefix[c] - prefix[c - mid] <= limit:
                lo = mid
            else:
                hi = mid - 1
        best = min(best, lo)
    return max(1, best)


def _langchain(messages: Sequence[Message]) -> list[Any]:
    """The messages as LangChain messages, as they are sent (text protocol: observations are
    user messages)."""
    from langchain_core.messages import convert_to_messages

    out: list[Any] = []
    for m in messages:
        wire = messages_to_openai([m])
        if len(wire) != 1:
            raise ValueError(f"message {m.id} does not map to one wire message")
        item = dict(wire[0])
        if item.get("content") is None:
            item["content"] = ""
        out.extend(convert_to_messages([item]))
    return out


def run_session(
    transcript_id: str,
    model: str | None,
    original: Sequence[Message],
    canaries: Sequence[Canary],
    *,
    keep_index: KeepIndex,
    ruler: Ruler,
    trim: Callable[..., Any] | None,
    placement: str = "user",
    ledger_weights: dict[str, float] | None = None,
) -> SessionResult:
    started = time.perf_counter()
    seeded = insert_canaries(original, canaries, placement)
    ratio = ruler.session_ratio(original)
    o200k = ruler.count(seeded.messages)
    sizes = [ratio * n for n in o200k]
    extra: dict[int, float] = {}
    for pos, before in seeded.grown.items():
        base = ratio * ruler.count([before])[0] if before is not None else 0.0
        extra[pos] = sizes[pos] - base
    messages = _with_canary_usage(seeded.messages, extra)
    budget = compute_budget(WINDOW, MAX_OUTPUT)
    limit = budget.input_budget - ratio * ruler.priming
    head = head_length(messages)
    made: list[tuple[int, int]] = []  # each summary's text tokens and ceiling, in order

    def after_compact(result: CompactionResult) -> None:
        if result.status == "compacted" and result.summary_text is not None:
            made.append((estimate_text_tokens(result.summary_text), result.plan.summary_max_tokens))

    cm = ContextManager(
        context_window=WINDOW,
        max_output_tokens=MAX_OUTPUT,
        model=model,
        hooks=CompactionHooks(after_compact=after_compact),
        # --ablate: the ledger ranked with some signals removed (the same summarizer otherwise)
        summarizer=None
        if ledger_weights is None
        else ExtractiveSummarizer(ledger_weights=ledger_weights),
    )

    # the recorded session's own text: keep strings that occur without any canary
    session_keys = keep_index.of_context(original)
    ambiguous = {c.id for c in canaries if all(s in session_keys for s in c.keep)}

    steps = list(cm.replay(messages))
    call_indexes = [s.index for s in steps]
    n_keep = last_n_for(head, sizes, call_indexes, limit)
    lc_messages = _langchain(messages) if trim is not None else []
    lc_tokens = {id(lc): size for lc, size in zip(lc_messages, sizes, strict=False)}
    lc_position = {id(lc): i for i, lc in enumerate(lc_messages)}

    def lc_count(items: Sequence[Any]) -> int:
        return math.ceil(sum(lc_tokens[id(x)] for x in items))

    single = _Sizes()
    calls: list[CallRecord] = []
    cycles: list[Cycle] = []
    summaries: list[SummaryRecord] = []
    recoveries: list[Recovery] = []
    forced_compactions: list[Recovery] = []
    done = 0
    made_seen = 0
    previous: tuple[int, list[Message]] = (0, [])
    for step in steps:
        i = step.index
        rec = CallRecord(i, step.state.compactions, step.state.cut, step.tokens)
        context = step.context
        rec.size["abridged"] = ratio * (sum(ruler.count(context)) + ruler.priming)
        rec.present["abridged"] = keep_index.of_context(context)
        start = max(head, i - n_keep)
        kept = list(range(head)) + list(range(start, i))
        rec.size["last_n"] = sum(sizes[k] for k in kept) + ratio * ruler.priming
        rec.present["last_n"] = keep_index.of_context(messages[k] for k in kept)
        if trim is not None:
            trimmed = trim(
                lc_messages[:i],
                max_tokens=math.floor(limit),
                token_counter=lc_count,
                strategy="last",
                include_system=True,
                start_on="human",
                allow_partial=False,
            )
            kept = [lc_position[id(x)] for x in trimmed]
            rec.size["trim_messages"] = sum(sizes[k] for k in kept) + ratio * ruler.priming
            rec.present["trim_messages"] = keep_index.of_context(messages[k] for k in kept)
        calls.append(rec)
        emergency: str | None = None
        for event in step.events:
            if isinstance(event, CompactionStarted):
                emergency = event.emergency
            elif isinstance(event, CompactionEnded) and event.status == "compacted":
                text_tokens, ceiling = made[made_seen] if made_seen < len(made) else (None, None)
                made_seen += 1
                summaries.append(
                    SummaryRecord(
                        call=len(calls) - 1,
                        tokens_after=event.tokens_after,
                        engine_tokens=step.tokens,
                        target=step.budget.target,
                        summary_tokens=event.summary_tokens,
                        summary_max=step.budget.summary_max,
                        emergency=emergency is not None or event.trigger == "overflow",
                        text_tokens=text_tokens,
                        ceiling=ceiling,
                        truncated=event.truncated,
                    )
                )
        stages = recovery_stages(step.events)
        forced = not stages and any(
            isinstance(e, CompactionStarted) and e.trigger == "overflow" for e in step.events
        )
        if stages or forced:
            # the context the engine had to fit: the previous call's, and what came since
            before_index, before_context = previous
            largest = single.largest([*before_context, *messages[before_index:i]])
            target = step.budget.target
            record = Recovery(
                len(calls) - 1, stages or ("compaction",), largest > target, largest, target
            )
            (recoveries if stages else forced_compactions).append(record)
        previous = (i, context)
        while done < step.state.compactions:
            done += 1
            cycle = Cycle(done, len(calls) - 1, step.state.cut)
            summary = step.state.summary or ""
            modified = extract_file_ops(messages[: step.state.cut]).modified
            cycle.files_modified = len(modified)
            cycle.files_missing = sorted(p for p in modified if p not in summary)
            cycle.own_marks = own_text_marks(summary, canaries)
            cycles.append(cycle)
    return SessionResult(
        id=transcript_id,
        steps=seeded.steps,
        messages=len(original),
        ratio=ratio,
        last_n=n_keep,
        calls=calls,
        cycles=cycles,
        ambiguous=ambiguous,
        positions=seeded.positions,
        input_budget=budget.input_budget,
        seconds=time.perf_counter() - started,
        placement=placement,
        fallbacks=seeded.fallbacks,
        as_user=seeded.as_user,
        summaries=summaries,
        recoveries=recoveries,
        forced_compactions=forced_compactions,
        canaries=list(canaries),
    )


# -- aggregation ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Tally:
    kept: int = 0
    total: int = 0

    def add(self, kept: bool) -> None:
        self.kept += kept
        self.total += 1

    @property
    def share(self) -> float | None:
        return self.kept / self.total if self.total else None


def _column(number: int) -> str:
    return str(number) if number <= CYCLES else f"{CYCLES + 1}+"


def _cell_table(tallies: dict[str, Tally]) -> dict[str, dict[str, Any]]:
    return {key: {"share": t.share, "n": t.total} for key, t in tallies.items()}


def aggregate(results: Sequence[SessionResult], canaries: Sequence[Canary]) -> dict[str, Any]:
    """One pass's figures. Each session is scored on its own canaries (``SessionResult.
    canaries``; ``canaries`` for a session that has none recorded)."""
    planted = [*canaries, *(c for r in results for c in r.canaries)]
    kinds = list(dict.fromkeys(c.kind for c in planted))
    styles = sorted({c.style for c in planted if c.style is not None})
    templates = sorted({c.template for c in planted if c.template is not None})
    kind_5 = {m: {k: Tally() for k in kinds} for m in METHODS}
    style_5 = {m: {k: Tally() for k in styles} for m in METHODS}
    template_5 = {m: {k: Tally() for k in templates} for m in METHODS}
    kind_style_5: dict[str, defaultdict[str, Tally]] = {m: defaultdict(Tally) for m in METHODS}
    coexisting_5 = {m: Tally() for m in METHODS}
    stale_by_correction: dict[str, defaultdict[str, Tally]] = {
        m: defaultdict(Tally) for m in METHODS
    }
    columns = [_column(k) for k in range(1, CYCLES + 2)]
    by_kind: dict[str, dict[str, dict[str, Tally]]] = {
        m: {k: {c: Tally() for c in columns} for k in [*kinds, "all"]} for m in METHODS
    }
    after_5 = {m: Tally() for m in METHODS}
    after_5_strict = {m: Tally() for m in METHODS}
    kept_as_replaced = dict.fromkeys(METHODS, 0)
    superseded = {m: Counter[str]() for m in METHODS}
    every_call = {m: Tally() for m in METHODS}
    after_first = {m: Tally() for m in METHODS}
    sizes: dict[str, list[float]] = {m: [] for m in METHODS}
    engine_sizes: list[int] = []
    compactions = Counter[int]()
    files_modified = files_missing = 0
    last_modified = last_missing = 0
    missing_by_session = Counter[str]()
    missing_examples: list[str] = []
    ambiguous_pairs = 0
    for r in results:
        compactions[len(r.cycles)] += 1
        ambiguous_pairs += len(r.ambiguous)
        for call in r.calls:
            engine_sizes.append(call.engine_tokens)
            for m in METHODS:
                if m in call.size:
                    sizes[m].append(call.size[m])
        mine = r.canaries or list(canaries)
        # how each superseded canary was corrected (the correcting canary's template)
        corrected_by = {c.supersedes: c.template or c.id for c in mine if c.supersedes}
        correction_of = {c.supersedes: c.id for c in mine if c.supersedes}
        for m in METHODS:
            if not r.calls or m not in r.calls[0].present:
                continue
            for call in r.calls:
                scores = score_context(
                    call.present[m], mine, r.positions, cut=call.index, said_before=call.index
                )
                for s in scores:
                    if s.status != "superseded":
                        every_call[m].add(s.status == "kept")
                        if call.compactions > 0:
                            after_first[m].add(s.status == "kept")
            for cycle in r.cycles:
                call = r.calls[cycle.call]
                scores = score_context(
                    call.present[m], mine, r.positions, cut=cycle.cut, said_before=call.index
                )
                column = _column(cycle.number)
                for s in scores:
                    if s.status == "superseded":
                        superseded[m]["excluded"] += 1
                        superseded[m]["stale_in_context"] += s.stale
                        # the correction before the cut: whatever summarized it saw both
                        fixer = r.positions.get(correction_of.get(s.canary.id, ""), cycle.cut)
                        if fixer < cycle.cut:
                            superseded[m]["excluded_summarized"] += 1
                            superseded[m]["stale_summarized"] += s.stale
                        stale_by_correction[m][corrected_by.get(s.canary.id, "?")].add(s.stale)
                        continue
                    kept = s.status == "kept"
                    by_kind[m][s.canary.kind][column].add(kept)
                    by_kind[m]["all"][column].add(kept)
                    if cycle.number == CYCLES:
                        after_5[m].add(kept)
                        # kept only as ``(was X)``: in the survival figure, shown as replaced
                        kept_as_replaced[m] += s.as_replaced
                        kind_5[m][s.canary.kind].add(kept)
                        if s.canary.style is not None:
                            style_5[m][s.canary.style].add(kept)
                            kind_style_5[m][f"{s.canary.kind}/{s.canary.style}"].add(kept)
                        if s.canary.template is not None:
                            template_5[m][s.canary.template].add(kept)
                        if s.canary.coexists is not None:
                            coexisting_5[m].add(kept)
                        if s.canary.id not in r.ambiguous:
                            after_5_strict[m].add(kept)
        for cycle in r.cycles:
            files_modified += cycle.files_modified
            files_missing += len(cycle.files_missing)
            missing_by_session[r.id] += len(cycle.files_missing)
            for p in cycle.files_missing:
                if len(missing_examples) < 4 and not any(r.id in x for x in missing_examples):
                    missing_examples.append(f"{r.id}: {p}")
        if r.cycles:
            last_modified += r.cycles[-1].files_modified
            last_missing += len(r.cycles[-1].files_missing)
    budget = results[0].input_budget if results else compute_budget(WINDOW, MAX_OUTPUT).input_budget
    reached = {k: sum(v for n, v in compactions.items() if n >= k) for k in range(1, CYCLES + 1)}

    def share_table(tallies: dict[str, dict[str, Tally]]) -> dict[str, dict[str, Any]]:
        return {
            kind: {col: {"share": t.share, "n": t.total} for col, t in cols.items()}
            for kind, cols in tallies.items()
        }

    methods: dict[str, Any] = {}
    for m in METHODS:
        if not sizes[m]:
            continue
        methods[m] = {
            "survival_after_5": after_5[m].share,
            "survival_after_5_n": after_5[m].total,
            "kept_only_as_replaced_after_5": kept_as_replaced[m],
            "survival_after_5_strict": after_5_strict[m].share,
            "survival_by_kind": share_table(by_kind[m]),
            "retention_every_call": every_call[m].share,
            "retention_after_first_compaction": after_first[m].share,
            "max_context_ratio": max(sizes[m]) / budget,
            "contexts_over_budget": sum(1 for s in sizes[m] if s > budget),
            "contexts": len(sizes[m]),
            "superseded_excluded": superseded[m]["excluded"],
            "superseded_stale_in_context": superseded[m]["stale_in_context"],
            "stale_share": _share(superseded[m]["stale_in_context"], superseded[m]["excluded"]),
            "superseded_summarized": superseded[m]["excluded_summarized"],
            "superseded_stale_summarized": superseded[m]["stale_summarized"],
            "stale_share_summarized": _share(
                superseded[m]["stale_summarized"], superseded[m]["excluded_summarized"]
            ),
            "survival_after_5_by_kind": _cell_table(kind_5[m]),
            "survival_after_5_by_style": _cell_table(style_5[m]),
            "survival_after_5_by_template": _cell_table(template_5[m]),
            "survival_after_5_by_kind_style": _cell_table(dict(sorted(kind_style_5[m].items()))),
            "coexisting_after_5": coexisting_5[m].share,
            "coexisting_after_5_n": coexisting_5[m].total,
            "stale_by_correction": _cell_table(dict(sorted(stale_by_correction[m].items()))),
        }
    return {
        "input_budget": budget,
        "sessions": len(results),
        "calls": sum(len(r.calls) for r in results),
        "compactions": sum(len(r.cycles) for r in results),
        "sessions_by_compactions": {
            str(k): compactions.get(k, 0) for k in range(max(compactions, default=0) + 1)
        },
        "sessions_reaching": {str(k): v for k, v in reached.items()},
        "sessions_with_5": reached[CYCLES],
        "methods": methods,
        "engine_max_context_ratio": max(engine_sizes) / budget if engine_sizes else None,
        "engine_contexts_over_budget": sum(1 for s in engine_sizes if s > budget),
        "files_modified_before_cut": files_modified,
        "files_missing_from_summary": files_missing,
        "files_missing_share": files_missing / files_modified if files_modified else None,
        "files_modified_last_compaction": last_modified,
        "files_missing_last_compaction": last_missing,
        "files_missing_examples": missing_examples,
        "files_missing_by_session": {k: v for k, v in missing_by_session.most_common() if v},
        "ambiguous_pairs": ambiguous_pairs,
        "ratio_median": statistics.median(r.ratio for r in results) if results else None,
        "last_n_median": statistics.median(r.last_n for r in results) if results else None,
        "last_n_min": min((r.last_n for r in results), default=None),
        "engine_target": compute_budget(WINDOW, MAX_OUTPUT).target,
        "engine": engine_figures(results),
    }


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def _over(s: SummaryRecord) -> bool:
    return s.text_tokens is not None and s.ceiling is not None and s.text_tokens > s.ceiling


def _own_marks(cycles: Sequence[Cycle]) -> dict[str, Any]:
    """The ``(was X)`` marks on the session's own text over ``cycles`` (``own_text_marks``):
    the share of summaries with one inside a line, and the marks per summary."""
    return {
        "summaries": len(cycles),
        "with_inline": sum(1 for c in cycles if c.own_marks[0]),
        "with_inline_share": _share(sum(1 for c in cycles if c.own_marks[0]), len(cycles)),
        "inline_per_summary": _share(sum(c.own_marks[0] for c in cycles), len(cycles)),
        "suffix_per_summary": _share(sum(c.own_marks[1] for c in cycles), len(cycles)),
    }


def engine_figures(results: Sequence[SessionResult]) -> dict[str, Any]:
    """abridged's own figures over ``results``: summaries above the target, emergency
    recoveries (and those excused by one message above the target), summary sizes, and how
    many canaries could not go to their own step."""
    summaries = [s for r in results for s in r.summaries]
    measured = [s for s in summaries if s.text_tokens is not None and s.ceiling]
    recoveries = [x for r in results for x in r.recoveries]
    forced = [x for r in results for x in r.forced_compactions]
    missed = sum(s.missed for s in summaries)
    missed_engine = sum(s.engine_tokens > s.target for s in summaries)
    sizes = [s.summary_tokens for s in summaries]
    ceiling = max((s.summary_max for s in summaries), default=None)
    excused = sum(x.excused for x in recoveries)
    stages = Counter(stage for x in recoveries for stage in x.stages)
    return {
        "summary_compactions": len(summaries),
        "emergency_compactions": sum(s.emergency for s in summaries),
        "missed_target": missed,
        "missed_target_share": _share(missed, len(summaries)),
        "missed_target_engine": missed_engine,
        "missed_target_share_engine": _share(missed_engine, len(summaries)),
        "recovery_calls": len(recoveries),
        "recoveries": len(recoveries) - excused,
        "recoveries_excused": excused,
        "forced_compactions": len(forced) - sum(x.excused for x in forced),
        "forced_compactions_excused": sum(x.excused for x in forced),
        "recoveries_by_stage": dict(sorted(stages.items())),
        "recovery_examples": [
            f"{r.id} call {r.calls[x.call].index}: {'+'.join(x.stages)}, largest message "
            f"{x.largest_message} vs target {x.target}"
            for r in results
            for x in r.recoveries
            if not x.excused
        ][:4],
        "summary_tokens_median": statistics.median(sizes) if sizes else None,
        "summary_tokens_max": max(sizes) if sizes else None,
        "summary_ceiling": ceiling,
        "summary_max_ratio": max(sizes) / ceiling if sizes and ceiling else None,
        "summary_text_tokens_max": max(
            (s.text_tokens for s in summaries if s.text_tokens is not None), default=None
        ),
        "summary_text_max_ratio": max(
            (
                s.text_tokens / s.ceiling
                for s in measured
                if s.text_tokens is not None and s.ceiling
            ),
            default=None,
        ),
        "own_text_marks": _own_marks([c for r in results for c in r.cycles]),
        "summaries_over_ceiling": sum(1 for s in measured if _over(s)),
        "summaries_over_ceiling_unflagged": sum(
            1 for s in measured if _over(s) and not s.truncated
        ),
        "fallbacks": sum(r.fallbacks for r in results),
        "as_user": sum(r.as_user for r in results),
    }


def _lowest(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return min(known) if known else None


def _by_placement_cells(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A method's survival after 5 compactions by kind, style, template and kind x style
    (``"kind/style"``) over its placement passes (``rows``): per placement, and the lowest of
    the placements; its coexisting pairs; and the stale share by how the value was corrected,
    over all placements."""
    out: dict[str, Any] = {}
    for axis in ("kind", "style", "template", "kind_style"):
        key = f"survival_after_5_by_{axis}"
        names = list(dict.fromkeys(k for row in rows.values() for k in row[key]))
        out[f"survival_after_5_by_placement_{axis}"] = {
            p: {k: row[key][k]["share"] for k in names if k in row[key]} for p, row in rows.items()
        }
        out[key] = {
            k: _lowest(row[key][k]["share"] for row in rows.values() if k in row[key])
            for k in names
        }
    out["coexisting_after_5_by_placement"] = {
        p: row["coexisting_after_5"] for p, row in rows.items()
    }
    out["coexisting_after_5"] = _lowest(out["coexisting_after_5_by_placement"].values())
    stale: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows.values():
        for name, cell in row["stale_by_correction"].items():
            stale[name][0] += round((cell["share"] or 0) * cell["n"])
            stale[name][1] += cell["n"]
    out["stale_by_correction"] = {
        name: {"share": _share(k, n), "n": n} for name, (k, n) in sorted(stale.items())
    }
    return out


def combine(passes: dict[str, dict[str, Any]], results: Sequence[SessionResult]) -> dict[str, Any]:
    """The figures over every placement pass (``passes``: each pass's ``aggregate``; ``results``
    every session of every pass): per placement, the lowest, and totals."""
    placements = list(passes)
    methods: dict[str, Any] = {}
    for m in METHODS:
        have = [p for p in placements if m in passes[p]["methods"]]
        if not have:
            continue
        rows = {p: passes[p]["methods"][m] for p in have}
        excluded = sum(row["superseded_excluded"] for row in rows.values())
        stale = sum(row["superseded_stale_in_context"] for row in rows.values())
        methods[m] = {
            "survival_after_5": _lowest(row["survival_after_5"] for row in rows.values()),
            "survival_after_5_by_placement": {
                p: row["survival_after_5"] for p, row in rows.items()
            },
            "survival_after_5_strict": _lowest(
                row["survival_after_5_strict"] for row in rows.values()
            ),
            "survival_after_5_strict_by_placement": {
                p: row["survival_after_5_strict"] for p, row in rows.items()
            },
            "stale_share": _share(stale, excluded),
            "stale_by_placement": {p: row["stale_share"] for p, row in rows.items()},
            "stale_share_summarized": _share(
                sum(row["superseded_stale_summarized"] for row in rows.values()),
                sum(row["superseded_summarized"] for row in rows.values()),
            ),
            "stale_summarized_by_placement": {
                p: row["stale_share_summarized"] for p, row in rows.items()
            },
            "superseded_excluded": excluded,
            "superseded_stale_in_context": stale,
            "max_context_ratio": max(row["max_context_ratio"] for row in rows.values()),
            "contexts_over_budget": sum(row["contexts_over_budget"] for row in rows.values()),
            "contexts": sum(row["contexts"] for row in rows.values()),
            **_by_placement_cells(rows),
        }
    ours = {p: passes[p]["methods"]["abridged"]["survival_by_kind"] for p in placements}
    first = ours[placements[0]]
    by_kind = {
        kind: {col: _lowest(ours[p][kind][col]["share"] for p in placements) for col in cols}
        for kind, cols in first.items()
    }
    engine_sizes = [p["engine_max_context_ratio"] for p in passes.values()]
    return {
        "placements": placements,
        "input_budget": passes[placements[0]]["input_budget"],
        "sessions": passes[placements[0]]["sessions"],
        "methods": methods,
        "survival_by_kind_lowest": by_kind,
        "engine": engine_figures(results),
        "engine_by_placement": {p: passes[p]["engine"] for p in placements},
        "engine_max_context_ratio": max((v for v in engine_sizes if v is not None), default=None),
        "engine_contexts_over_budget": sum(
            p["engine_contexts_over_budget"] for p in passes.values()
        ),
        "passes": passes,
    }


# -- output ---------------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _cell(cell: dict[str, Any]) -> str:
    return "-" if not cell["n"] else f"{cell['share']:.3f} ({cell['n']})"


def _of(part: int, whole: int) -> str:
    return f"{part} of {whole}" + (f" ({part / whole:.3f})" if whole else "")


def render(result: dict[str, Any]) -> str:
    a = result["figures"]
    passes: dict[str, dict[str, Any]] = a["passes"]
    placements: list[str] = a["placements"]
    first = passes[placements[0]]
    budget = a["input_budget"]
    eng = a["engine"]
    own = eng["own_text_marks"]
    lines = [
        SECTION,
        "",
        f"`{result['command']}` ({a['sessions']} sessions, "
        f"{result['canaries']} canaries per session, one pass per placement: "
        + ", ".join(
            f"{p} {passes[p]['calls']} calls / {passes[p]['compactions']} compactions"
            for p in placements
        )
        + f"; {result['seconds']:.0f} s)",
        "",
        f"Window 16k (16,384), max output 4,096, default settings, extractive summarizer: input "
        f"budget {budget:,} tokens. Canaries planted at fraction `at` of each session's steps, "
        "in three placements, each its own pass: *user* (a new user message after that step), "
        "*tool* (a line inside the observation of that step, as if a file or log the agent read "
        "said it), *assistant* (at the start of that step's assistant message, as if the agent "
        "restated it). A canary survives a compaction when all its `keep` strings are in the "
        "context sent right after it (only canaries planted before the cut count).",
        "",
        "Sessions by number of compactions: "
        + "; ".join(
            f"{p}: "
            + ", ".join(f"{k}: {v}" for k, v in passes[p]["sessions_by_compactions"].items() if v)
            for p in placements
        )
        + ". Reaching at least k: "
        + "; ".join(
            f"{p}: " + ", ".join(f">={k}: {v}" for k, v in passes[p]["sessions_reaching"].items())
            for p in placements
        )
        + ".",
        "",
        "Survival after 5 compactions by placement (share kept (canaries scored); *min*: the "
        "lowest placement):",
        "",
        "| method | " + " | ".join(placements) + " | min |",
        "| --- |" + " ---: |" * (len(placements) + 1),
    ]
    for key, row in a["methods"].items():
        cells = []
        for p in placements:
            one = passes[p]["methods"].get(key)
            cells.append(
                "-"
                if one is None
                else f"{_pct(one['survival_after_5'])} ({one['survival_after_5_n']})"
            )
        lines.append(
            f"| {SHORT[key]} | " + " | ".join(cells) + f" | {_pct(row['survival_after_5'])} |"
        )
    ours = a["methods"]["abridged"]
    mine = {p: passes[p]["methods"]["abridged"] for p in placements}
    engines = {p: passes[p]["engine"] for p in placements}
    stale_by = ", ".join(
        f"{p} {_of(mine[p]['superseded_stale_in_context'], mine[p]['superseded_excluded'])}"
        for p in placements
    )
    missed_by = ", ".join(
        f"{p} {_of(engines[p]['missed_target'], engines[p]['summary_compactions'])}"
        for p in placements
    )
    stale = _of(ours["superseded_stale_in_context"], ours["superseded_excluded"])
    recov_by = ", ".join(
        f"{p} {passes[p]['engine']['recoveries']} (+{passes[p]['engine']['recoveries_excused']} "
        "excused)"
        for p in placements
    )
    stages = ", ".join(f"{k} {v}" for k, v in eng["recoveries_by_stage"].items()) or "none"
    as_replaced = ", ".join(
        f"{p} {mine[p]['kept_only_as_replaced_after_5']} of {mine[p]['survival_after_5_n']}"
        for p in placements
    )
    lines += [
        "",
        f"- kept only as replaced (abridged): facts no correction replaced, counted as kept after "
        f"5 compactions, whose every keep string stands inside a `(was ...)` or a `[superseded` "
        f"line (shown to the reader as no longer current): {as_replaced}.",
        f"- stale (abridged): a superseded value still presented as current after its correction "
        f"(a keep string of the old canary in the context outside a `(was ...)` parenthetical "
        f"and outside lines marked `[superseded`): {stale} "
        f"scorings; {stale_by}. Baselines: "
        + ", ".join(
            f"{SHORT[k]} {_pct(row['stale_share'])}"
            for k, row in a["methods"].items()
            if k != "abridged"
        )
        + ". Of them, where the correction itself was before the cut (what summarized it saw "
        "both): "
        + ", ".join(
            f"{p} {_of(mine[p]['superseded_stale_summarized'], mine[p]['superseded_summarized'])}"
            for p in placements
        )
        + "; the rest had the correction in the kept tail (which the summarizer is also "
        "given, as `SummaryRequest.later`).",
        f"- missed target: summary compactions whose size right after (the engine's "
        f"`CompactionEnded.tokens_after`) is above the target ({first['engine_target']:,} = "
        f"target ratio x input budget): {_of(eng['missed_target'], eng['summary_compactions'])}; "
        f"{missed_by}; by the engine's size of the call right after: "
        f"{_of(eng['missed_target_engine'], eng['summary_compactions'])}.",
        f"- emergency recoveries (`OverflowRecovered`, or a compaction with an emergency stage), "
        f"not counting calls where one message alone is above the target: {eng['recoveries']} "
        f"(+{eng['recoveries_excused']} excused); {recov_by}; stages: {stages}.",
        f"- forced compactions (an ordinary cut before the call, because the newest messages took "
        f"the context over the input budget; nothing too large was sent): "
        f"{eng['forced_compactions']} (+{eng['forced_compactions_excused']} excused).",
        f"- summary size after each compaction, as the engine counts the summary message "
        f"(calibrated, header included): median {_pct_tokens(eng['summary_tokens_median'])}, "
        f"max {_pct_tokens(eng['summary_tokens_max'])} tokens, max / ceiling "
        f"({_pct_tokens(eng['summary_ceiling'])}) {_pct(eng['summary_max_ratio'])}; by the "
        f"estimate the summarizer fits its ceiling with (the text alone): max "
        f"{_pct_tokens(eng['summary_text_tokens_max'])}, max / that compaction's ceiling "
        f"{_pct(eng['summary_text_max_ratio'])}, {eng['summaries_over_ceiling']} of "
        f"{eng['summary_compactions']} summaries over their ceiling "
        f"({eng['summaries_over_ceiling_unflagged']} of them not flagged truncated).",
        f"- marks on the session's own text (`own_text_marks`: a `(was X)` whose X is no canary's; "
        f"the recorded sessions correct almost nothing of their own): "
        f"{_of(own['with_inline'], own['summaries'])} summaries with one inside a line "
        f"({own['inline_per_summary'] or 0:.2f} a summary), "
        f"{own['suffix_per_summary'] or 0:.2f} a summary at a line's end.",
        "- canaries that went to another step (theirs had no observation / no assistant "
        "message): "
        + ", ".join(f"{p} {passes[p]['engine']['fallbacks']}" for p in placements if p != "user")
        + ".",
        "",
        "Survival per canary kind after the k-th compaction, abridged, the lowest of the "
        "placements (share kept; the counts per placement are in `--json`):",
        "",
    ]
    by_kind = a["survival_by_kind_lowest"]
    columns = list(next(iter(by_kind.values())).keys())
    lines.append("| kind | " + " | ".join(f"after {c}" for c in columns) + " |")
    lines.append("| --- |" + " ---: |" * len(columns))
    for kind, cols in by_kind.items():
        name = f"**{kind}**" if kind == "all" else kind
        lines.append(f"| {name} | " + " | ".join(_pct(cols[c]) for c in columns) + " |")
    lines += _axis_tables(a, placements)
    lines += [
        "",
        "Against the baselines at the same calls, same canaries, same input budget (sizes by "
        "the independent measure: o200k count of the context as sent x the session's "
        "provider/o200k ratio):",
        "",
        "| method | placement | survival after 5 | strict | all cycles | every call | calls "
        "after 1st compaction | max context / budget | contexts over budget | stale |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key in a["methods"]:
        for p in placements:
            row = passes[p]["methods"].get(key)
            if row is None:
                continue
            all_cycles = row["survival_by_kind"]["all"]
            kept = sum((c["share"] or 0) * c["n"] for c in all_cycles.values())
            n = sum(c["n"] for c in all_cycles.values())
            lines.append(
                f"| {LABELS[key]} | {p} | {_pct(row['survival_after_5'])} "
                f"({row['survival_after_5_n']}) | {_pct(row['survival_after_5_strict'])} | "
                f"{_pct(kept / n if n else None)} | {_pct(row['retention_every_call'])} | "
                f"{_pct(row['retention_after_first_compaction'])} | "
                f"{row['max_context_ratio']:.3f} | {row['contexts_over_budget']} of "
                f"{row['contexts']} | {_pct(row['stale_share'])} |"
            )
    files = ", ".join(
        f"{p} {passes[p]['files_missing_from_summary']} of {passes[p]['files_modified_before_cut']}"
        for p in placements
    )
    survival = ours["survival_after_5"]
    met = survival is not None and survival >= TARGET and ours["contexts_over_budget"] == 0
    lines += [
        "",
        "- calls: one per recorded model call, plus one after the last message of a session "
        "that ends with an observation (`ContextManager.replay`).",
        "- *every call*: over every call, the canaries said before it; *strict*: leaving out "
        f"the {first['ambiguous_pairs']} (session, canary) pairs whose keep strings all occur in "
        "the recorded session itself.",
        f"- last N: N per session is the largest that fits every call ({placements[0]} pass: "
        f"median {first['last_n_median']}, smallest {first['last_n_min']}; when the newest "
        "message alone exceeds the budget no N fits, and the context goes over); session ratio "
        f"provider/o200k median {first['ratio_median']:.3f}.",
        f"- abridged by its own measure (last provider report + calibrated estimate): max "
        f"{a['engine_max_context_ratio']:.3f} of the budget, "
        f"{a['engine_contexts_over_budget']} contexts over it.",
        f"- files modified before a cut (from the real tool calls) missing from the summary, over "
        f"all compactions: {files}"
        + (
            f"; the most by session ({placements[0]}): "
            + ", ".join(f"{k} {v}" for k, v in list(first["files_missing_by_session"].items())[:5])
            + (
                f" and {len(first['files_missing_by_session']) - 5} more"
                if len(first["files_missing_by_session"]) > 5
                else ""
            )
            + " (e.g. "
            + "; ".join(f"`{x}`" for x in first["files_missing_examples"])
            + ")"
            if first["files_missing_by_session"]
            else ""
        )
        + ".",
        "",
        f"Target: survival after 5 compactions >= {TARGET} in every placement with every "
        f"context within the input budget: lowest survival {_pct(survival)} ("
        + ", ".join(f"{p} {_pct(v)}" for p, v in ours["survival_after_5_by_placement"].items())
        + f"), {ours['contexts_over_budget']} contexts over budget (max "
        f"{ours['max_context_ratio']:.3f}): {'met' if met else 'missed'}.",
        "",
    ]
    return "\n".join(lines)


def _axis_tables(a: dict[str, Any], placements: Sequence[str]) -> list[str]:
    """Survival after 5 compactions by kind and by style (generated canaries have a style),
    every method in every placement; coexisting pairs; stale share by correction phrasing."""
    passes: dict[str, dict[str, Any]] = a["passes"]
    methods = list(a["methods"])
    lines: list[str] = []
    for axis, what in (("kind", "canary kind"), ("style", "surface style")):
        key = f"survival_after_5_by_{axis}"
        names = list(
            dict.fromkeys(
                k for p in placements for row in passes[p]["methods"].values() for k in row[key]
            )
        )
        if not names:
            continue
        header = [f"{SHORT[m]} {p}" for m in methods for p in placements]
        lines += [
            "",
            f"Survival after 5 compactions by {what} and placement, every method (share kept "
            "(canaries scored)):",
            "",
            f"| {axis} | " + " | ".join(header) + " |",
            "| --- |" + " ---: |" * len(header),
        ]
        for name in names:
            cells = []
            for m in methods:
                for p in placements:
                    row = passes[p]["methods"].get(m)
                    cell = row[key].get(name) if row is not None else None
                    cells.append("-" if cell is None else _cell(cell))
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    mine = a["methods"]["abridged"]
    if any(
        n for n in (passes[p]["methods"]["abridged"]["coexisting_after_5_n"] for p in placements)
    ):
        lines += [
            "",
            "- pairs of facts that both hold (same template, two subjects; no correction), "
            "survival after 5: "
            + ", ".join(
                f"{p} {_pct(passes[p]['methods']['abridged']['coexisting_after_5'])} "
                f"({passes[p]['methods']['abridged']['coexisting_after_5_n']})"
                for p in placements
            )
            + "; baselines: "
            + ", ".join(
                f"{SHORT[m]} {_pct(a['methods'][m]['coexisting_after_5'])}"
                for m in methods
                if m != "abridged"
            )
            + ".",
        ]
    by_template = {k: v for k, v in mine["survival_after_5_by_template"].items() if v is not None}
    if by_template:
        worst = sorted(by_template.items(), key=lambda kv: (kv[1], kv[0]))[:6]
        lines.append(
            f"- by template (abridged, the lowest placement; {len(by_template)} templates "
            f"scored): median {_pct(statistics.median(by_template.values()))}, the lowest: "
            + ", ".join(f"{k} {_pct(v)}" for k, v in worst)
            + " (counts per placement in `--json`)."
        )
    stale = mine["stale_by_correction"]
    if stale:
        lines.append(
            "- stale share by how the value was corrected (abridged, all placements): "
            + ", ".join(f"{k} {_cell(v)}" for k, v in stale.items())
            + "."
        )
    return lines


def _pct_tokens(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def json_figures(result: dict[str, Any]) -> dict[str, Any]:
    """The ``--json`` line: headline figures over every placement (counts summed over the
    passes), the same per placement, and each pass's whole figures under ``by_placement``."""
    a = result["figures"]
    passes: dict[str, dict[str, Any]] = a["passes"]
    ours = a["methods"]["abridged"]
    eng = a["engine"]

    def total(key: str) -> int:
        return sum(int(p[key]) for p in passes.values())

    def per_pass(p: dict[str, Any]) -> dict[str, Any]:
        mine = p["methods"]["abridged"]
        return {
            "survival_after_5": mine["survival_after_5"],
            "survival_after_5_strict": mine["survival_after_5_strict"],
            "sessions_with_5": p["sessions_with_5"],
            "calls": p["calls"],
            "compactions": p["compactions"],
            "max_context_ratio": mine["max_context_ratio"],
            "contexts_over_budget": mine["contexts_over_budget"],
            "engine_max_context_ratio": p["engine_max_context_ratio"],
            "engine_contexts_over_budget": p["engine_contexts_over_budget"],
            "survival_by_kind": {
                kind: {col: cell["share"] for col, cell in cols.items()}
                for kind, cols in mine["survival_by_kind"].items()
            },
            "sessions_by_compactions": p["sessions_by_compactions"],
            "sessions_reaching": p["sessions_reaching"],
            "files_modified_before_cut": p["files_modified_before_cut"],
            "files_missing_from_summary": p["files_missing_from_summary"],
            "files_missing_share": p["files_missing_share"],
            "files_missing_by_session": p["files_missing_by_session"],
            "superseded_excluded": mine["superseded_excluded"],
            "superseded_stale_in_context": mine["superseded_stale_in_context"],
            "stale_share": mine["stale_share"],
            "kept_only_as_replaced_after_5": mine["kept_only_as_replaced_after_5"],
            **p["engine"],
            "methods": {
                key: {k: v for k, v in row.items() if k != "survival_by_kind"}
                | {
                    "survival_by_cycle": {
                        col: cell["share"] for col, cell in row["survival_by_kind"]["all"].items()
                    }
                }
                for key, row in p["methods"].items()
            },
        }

    modified = total("files_modified_before_cut")
    missing = total("files_missing_from_summary")
    return {
        "placements": a["placements"],
        "survival_after_5": ours["survival_after_5"],
        "survival_after_5_by_placement": ours["survival_after_5_by_placement"],
        "survival_after_5_strict": ours["survival_after_5_strict"],
        "survival_after_5_strict_by_placement": ours["survival_after_5_strict_by_placement"],
        "stale_share": ours["stale_share"],
        "stale_by_placement": ours["stale_by_placement"],
        "stale_share_summarized": ours["stale_share_summarized"],
        "stale_summarized_by_placement": ours["stale_summarized_by_placement"],
        "superseded_excluded": ours["superseded_excluded"],
        "superseded_stale_in_context": ours["superseded_stale_in_context"],
        "missed_target_share": eng["missed_target_share"],
        "missed_target_by_placement": {
            p: e["missed_target_share"] for p, e in a["engine_by_placement"].items()
        },
        "missed_target": eng["missed_target"],
        "missed_target_share_engine": eng["missed_target_share_engine"],
        "summary_compactions": eng["summary_compactions"],
        "recoveries": eng["recoveries"],
        "recoveries_excused": eng["recoveries_excused"],
        "recoveries_by_placement": {
            p: {"recoveries": e["recoveries"], "recoveries_excused": e["recoveries_excused"]}
            for p, e in a["engine_by_placement"].items()
        },
        "forced_compactions": eng["forced_compactions"],
        "forced_compactions_excused": eng["forced_compactions_excused"],
        "recoveries_by_stage": eng["recoveries_by_stage"],
        "summary_tokens_median": eng["summary_tokens_median"],
        "summary_tokens_max": eng["summary_tokens_max"],
        "summary_ceiling": eng["summary_ceiling"],
        "summary_max_ratio": eng["summary_max_ratio"],
        "summary_text_max_ratio": eng["summary_text_max_ratio"],
        "summaries_over_ceiling": eng["summaries_over_ceiling"],
        "summaries_over_ceiling_unflagged": eng["summaries_over_ceiling_unflagged"],
        "own_text_marks": eng["own_text_marks"],
        "placement_fallbacks": {p: e["fallbacks"] for p, e in a["engine_by_placement"].items()},
        "sessions": a["sessions"],
        "sessions_with_5": min(p["sessions_with_5"] for p in passes.values()),
        "calls": total("calls"),
        "compactions": total("compactions"),
        "max_context_ratio": ours["max_context_ratio"],
        "contexts_over_budget": ours["contexts_over_budget"],
        "engine_max_context_ratio": a["engine_max_context_ratio"],
        "engine_contexts_over_budget": a["engine_contexts_over_budget"],
        "input_budget": a["input_budget"],
        "survival_by_kind": a["survival_by_kind_lowest"],
        "files_modified_before_cut": modified,
        "files_missing_from_summary": missing,
        "files_missing_share": _share(missing, modified),
        "baselines": {key: row for key, row in a["methods"].items() if key != "abridged"},
        "by_placement": {p: per_pass(passes[p]) for p in a["placements"]},
        "ambiguous_pairs": passes[a["placements"][0]]["ambiguous_pairs"],
        "seconds": result["seconds"],
        "seed": result.get("seed"),
        "canary_source": result.get("canary_source"),
        "canary_count": result["canaries"],
        **{
            key: ours[key]
            for key in (
                "survival_after_5_by_kind",
                "survival_after_5_by_style",
                "survival_after_5_by_template",
                "survival_after_5_by_placement_kind",
                "survival_after_5_by_placement_style",
                "survival_after_5_by_placement_template",
                "survival_after_5_by_placement_kind_style",
                "coexisting_after_5",
                "coexisting_after_5_by_placement",
                "stale_by_correction",
            )
        },
    }


# -- running --------------------------------------------------------------------------------------

_WORKER: dict[str, Any] = {}


def _load_trim(langchain: bool) -> Callable[..., Any] | None:
    if not langchain:
        return None
    try:
        from langchain_core.messages import trim_messages
    except ImportError:
        return None
    return trim_messages


def _setup(
    data: Path,
    source: CanarySource,
    limit: int | None,
    langchain: bool,
    ablate: str | None = None,
) -> None:
    """Load what every pass needs, once per process (the parent, or each worker)."""
    transcripts = load_transcripts(data)
    _WORKER["weights"] = None
    if ablate is not None:
        _WORKER["weights"] = without(*(() if ablate == "none" else ablate.split(",")))
    fixed = source.for_session(0) if source.path is not None else None
    _WORKER.update(
        source=source,
        canaries=fixed,
        keep_index=KeepIndex(fixed) if fixed is not None else None,
        ruler=Ruler(),
        trim=_load_trim(langchain),
        transcripts=transcripts[:limit] if limit is not None else transcripts,
    )


def _run_task(task: tuple[int, str]) -> SessionResult:
    """One session (by its position) in one placement."""
    index, placement = task
    t = _WORKER["transcripts"][index]
    canaries = _WORKER["canaries"]
    keep_index = _WORKER["keep_index"]
    if canaries is None:  # generated: this session's own set
        canaries = _WORKER["source"].for_session(index)
        keep_index = KeepIndex(canaries)
    return run_session(
        t.id,
        t.meta.get("model"),
        t.messages,
        canaries,
        keep_index=keep_index,
        ruler=_WORKER["ruler"],
        trim=_WORKER["trim"],
        placement=placement,
        ledger_weights=_WORKER["weights"],
    )


def run_passes(
    data: Path,
    source: CanarySource,
    *,
    limit: int | None,
    placements: Sequence[str],
    langchain: bool,
    jobs: int,
    ablate: str | None = None,
) -> dict[str, list[SessionResult]]:
    """Every session in every placement, in ``jobs`` processes; the results by placement, in
    session order (the same whatever ``jobs``)."""
    _setup(data, source, limit, langchain, ablate)
    tasks = [(i, p) for i in range(len(_WORKER["transcripts"])) for p in placements]
    if jobs <= 1 or len(tasks) <= 1:
        results = [_run_task(t) for t in tasks]
    else:
        with ProcessPoolExecutor(
            max_workers=jobs, initializer=_setup, initargs=(data, source, limit, langchain, ablate)
        ) as pool:
            results = list(pool.map(_run_task, tasks, chunksize=len(placements)))
    return {p: [r for r in results if r.placement == p] for p in placements}


def _placements(text: str) -> list[str]:
    wanted = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in wanted if p not in PLACEMENTS]
    if unknown or not wanted:
        raise argparse.ArgumentTypeError(
            f"a comma-separated list of {', '.join(PLACEMENTS)} (got {text!r})"
        )
    return [p for p in PLACEMENTS if p in wanted]


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--canaries",
        type=Path,
        default=None,
        help="a canary file for every session (e.g. the regression sets "
        f"{DEFAULT_CANARIES.name} and bench/canaries-second-set.json); default: generated",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of the generated canaries (each session its own set); default: a fresh "
        "random seed, printed",
    )
    parser.add_argument(
        "--generator",
        type=Path,
        default=None,
        help="a Python file defining generate(seed, count, variant) in the shape of "
        "bench/canary_generator.py (default: that one)",
    )
    parser.add_argument(
        "--canary-count",
        type=int,
        default=24,
        help="generated canaries per session (>= 6, default 24)",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N sessions")
    parser.add_argument(
        "--placements",
        type=_placements,
        default=list(PLACEMENTS),
        help="comma-separated: user,tool,assistant (default all three, one pass each)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (1: none)")
    add_output_options(parser)
    parser.add_argument("--no-langchain", action="store_true", help="skip trim_messages")
    parser.add_argument(
        "--ablate",
        default=None,
        help="rank the ledger without these signals (comma-separated, of "
        f"{', '.join(SIGNALS)}; 'none': all signals, the summarizer passed the same way)",
    )
    args = parser.parse_args(argv)
    if args.ablate is not None and args.ablate != "none":
        try:
            without(*args.ablate.split(","))
        except SettingError as exc:
            parser.error(str(exc))
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be >= 1")
    if args.jobs < 1:
        parser.error("--jobs must be >= 1")
    if args.canary_count < 6:
        parser.error("--canary-count must be >= 6")
    if args.canaries is not None and args.seed is not None:
        parser.error("--seed generates the canaries: not with --canaries")
    if args.canaries is not None and args.generator is not None:
        parser.error("--generator makes the canaries: not with --canaries")
    if args.generator is not None and not args.generator.is_file():
        parser.error(f"--generator {args.generator}: no such file")

    started = time.perf_counter()
    if args.canaries is not None:
        source = CanarySource(path=args.canaries)
        canaries = load_canaries(args.canaries)
    else:
        from canary_generator import fresh_seed

        seed = args.seed if args.seed is not None else fresh_seed()
        source = CanarySource(seed=seed, count=args.canary_count, generator=args.generator)
        canaries = []
        print(f"canaries: generated, seed {seed} (--seed {seed} reproduces this run)", flush=True)
    langchain = not args.no_langchain
    if langchain and _load_trim(True) is None:
        print("langchain-core is not installed: trim_messages is skipped", file=sys.stderr)
        langchain = False
    by_placement = run_passes(
        args.data,
        source,
        limit=args.limit,
        placements=args.placements,
        langchain=langchain,
        jobs=args.jobs,
        ablate=args.ablate,
    )
    passes = {p: aggregate(results, canaries) for p, results in by_placement.items()}
    figures = combine(passes, [r for results in by_placement.values() for r in results])
    seconds = time.perf_counter() - started
    command = "python bench/retention.py"
    if args.data != DEFAULT_DATA:
        command += f" --data {args.data}"
    if source.path is not None:
        command += f" --canaries {args.canaries}"
    else:
        command += f" --seed {source.seed}"
        if source.generator is not None:
            command += f" --generator {source.generator}"
        if source.count != 24:
            command += f" --canary-count {source.count}"
    if args.limit is not None:
        command += f" --limit {args.limit}"
    if list(args.placements) != list(PLACEMENTS):
        command += f" --placements {','.join(args.placements)}"
    if args.ablate is not None:
        command += f" --ablate {args.ablate}"
    result = {
        "command": command,
        "seconds": seconds,
        "canaries": len(canaries) if source.path is not None else source.count,
        "seed": source.seed,
        "canary_source": str(source.path)
        if source.path is not None
        else f"generated by {source.generator}"
        if source.generator is not None
        else "generated",
        "figures": figures,
    }
    table = render(result)
    print(table)
    save_section(args, table)
    if args.json:
        print(json.dumps(json_figures(result)))
    return result


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
