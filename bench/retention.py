"""Benchmark: do planted user instructions survive repeated compaction of real agent sessions?

    .venv/bin/python bench/retention.py [--data PATH] [--canaries PATH] [--limit N] [--json]
                                        [--no-langchain] [--no-results] [--results PATH]

**Canaries.** Each canary of ``--canaries`` (``../shared/data/canaries/canaries.json``) is a user
message inserted into every session after the step at fraction ``at`` of its steps: with ``S``
steps (``abridged.core.turns.split_steps`` of the recorded session: an assistant message and the
observation it asked for), after the first ``floor(at * S)`` steps (``at = 0``: before the first
step), canaries at the same place in file order. The recorded usage of each later call is raised
by the size of the canaries before it (the real provider would have counted them).

**Replay.** Each seeded session is replayed call by call with ``ContextManager.replay`` (16k
window = 16,384 tokens, 4,096 max output, default settings, ``ExtractiveSummarizer``, recorded
usage while the context is the recorded one). The engine knows nothing about canaries.

**Scoring, as the canary file says.** A canary survives a compaction when every ``keep`` string
appears verbatim in the context sent right after it (the first call after the compaction: the
summary then stays and the tail only grows until the next one), counting only canaries inserted
before that compaction's cut. A canary whose value was superseded (another canary names it in
``supersedes``) by a canary already said before that call is not required any more (it is
counted apart, with whether its stale value is still in the context). Survival is reported per
canary kind after the 1st, 2nd, ... compaction; ``survival_after_5`` is over all kinds at the
fifth compaction of the sessions that reached five. A keep string that also occurs in the
recorded session itself (for example ``signature`` in code) can survive without the canary:
those (session, canary) pairs are counted, and a strict figure leaves them out.

**Size.** Every context is measured two ways: the engine's own size (its last provider report
plus its calibrated estimate), and an independent one: the local provider's o200k count of the
context as sent (``abridged.testing.counting``) times the session's ratio of the recorded
``prompt_tokens`` to the o200k count of the recorded contexts (median over its calls).

**Baselines**, at the same calls and budget (the independent measure): keep the system prompt
and the last N messages, N fixed per session as the largest for which every context of the
session fits the input budget; LangChain's ``trim_messages`` (``strategy="last"``,
``include_system=True``, ``start_on="human"``) with the same token counter. For them the scoring
point is the call right after abridged's k-th compaction, with the same canaries. Every method
is also scored at every call, on all the canaries said before it (*every call*).

Also reported: the files modified (``extract_file_ops`` on the real tool calls) before each
compaction's cut that the summary does not name. The table goes to stdout and to the
``## retention`` section of ``bench/RESULTS.md``; with ``--json`` the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from abridged.core.budget import compute_budget  # noqa: E402
from abridged.core.model import Message  # noqa: E402
from abridged.core.tokens import reported_tokens  # noqa: E402
from abridged.core.turns import head_length, split_steps  # noqa: E402
from abridged.engine.summarize.fileops import extract_file_ops  # noqa: E402
from abridged.formats.openai_chat import messages_to_openai  # noqa: E402
from abridged.formats.transcripts import load_transcripts  # noqa: E402
from abridged.runtime.context_manager import ContextManager  # noqa: E402
from results import RESULTS, write_section  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "swebench-gemini3" / "trajectories.jsonl"
DEFAULT_CANARIES = ROOT.parent / "shared" / "data" / "canaries" / "canaries.json"
SECTION = "## retention"
WINDOW = 16_384
MAX_OUTPUT = 4_096
CYCLES = 5  # columns 1..5, then "6+"
TARGET = 0.95
METHODS = ("abridged", "last_n", "trim_messages")
LABELS = {
    "abridged": "abridged (extractive summary)",
    "last_n": "keep system + last N messages",
    "trim_messages": "LangChain trim_messages",
}


# -- canaries -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Canary:
    """One planted user message and the strings that must survive."""

    id: str
    kind: str
    at: float
    text: str
    keep: tuple[str, ...]
    supersedes: str | None = None


def load_canaries(path: Path) -> list[Canary]:
    data = json.loads(path.read_text(encoding="utf-8"))
    items = data["canaries"] if isinstance(data, dict) else data
    return [
        Canary(
            id=str(c["id"]),
            kind=str(c["kind"]),
            at=float(c["at"]),
            text=str(c["text"]),
            keep=tuple(str(k) for k in c["keep"]),
            supersedes=c.get("supersedes"),
        )
        for c in items
    ]


@dataclass(frozen=True, slots=True)
class Seeded:
    """A session with the canaries inserted: ``positions[id]`` is each canary's index."""

    messages: list[Message]
    positions: dict[str, int]
    steps: int


def insertion_step(at: float, steps: int) -> int:
    """How many of ``steps`` steps come before a canary at fraction ``at``."""
    return max(0, min(steps, math.floor(at * steps)))


def insert_canaries(messages: Sequence[Message], canaries: Sequence[Canary]) -> Seeded:
    """``messages`` with each canary inserted as a user message after the step at fraction
    ``at`` of the session's steps (before the first step for ``at = 0``)."""
    steps = split_steps(messages)
    at_index: dict[int, list[Canary]] = defaultdict(list)
    for canary in sorted(canaries, key=lambda c: c.at):  # stable: file order at equal ``at``
        k = insertion_step(canary.at, len(steps))
        if not steps:
            index = len(messages)
        elif k == 0:
            index = steps[0].start
        else:
            index = steps[k - 1].end
        at_index[index].append(canary)
    out: list[Message] = []
    positions: dict[str, int] = {}
    for i in range(len(messages) + 1):
        for canary in at_index.get(i, ()):
            positions[canary.id] = len(out)
            out.append(Message.user(canary.text, id=f"canary-{canary.id}"))
        if i < len(messages):
            out.append(messages[i])
    return Seeded(out, positions, len(steps))


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


class KeepIndex:
    """Which keep strings (and stale superseded values) each message holds, computed once per
    message content."""

    def __init__(self, canaries: Sequence[Canary]) -> None:
        self.strings = sorted({s for c in canaries for s in c.keep})
        by_id = {c.id: c for c in canaries}
        # stale check: the superseded value, with the superseder's own strings removed first
        # (``release/2026-q4`` is a prefix of ``release/2026-q4-hotfix``)
        self.stale: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []
        for c in canaries:
            if c.supersedes and c.supersedes in by_id:
                self.stale.append((c.supersedes, by_id[c.supersedes].keep, c.keep))
        self._cache: dict[str, frozenset[str]] = {}

    def of(self, message: Message) -> frozenset[str]:
        key = message.fingerprint
        found = self._cache.get(key)
        if found is None:
            text = wire_text(message)
            hits = {s for s in self.strings if s in text}
            for old_id, old_keep, new_keep in self.stale:
                cleaned = text
                for s in new_keep:
                    cleaned = cleaned.replace(s, "")
                if any(s in cleaned for s in old_keep):
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
    superseded value is still in the context."""

    canary: Canary
    status: str
    stale: bool = False


def score_context(
    present: frozenset[str],
    canaries: Sequence[Canary],
    positions: dict[str, int],
    *,
    cut: int,
    said_before: int,
) -> list[Score]:
    """Score the canaries inserted before history index ``cut`` against the keep strings
    ``present`` in a context (``KeepIndex.of_context``). A canary superseded by one inserted
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
        out.append(Score(c, "kept" if kept else "lost"))
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


def _with_canary_usage(seeded: Seeded, canary_tokens: dict[str, float]) -> list[Message]:
    """The seeded messages with each recorded usage raised by the canaries before it."""
    at = sorted((pos, canary_tokens[cid]) for cid, pos in seeded.positions.items())
    out: list[Message] = []
    extra = 0.0
    k = 0
    for i, m in enumerate(seeded.messages):
        while k < len(at) and at[k][0] < i:
            extra += at[k][1]
            k += 1
        usage = m.usage
        if usage is not None and extra and usage.context_tokens > 0:
            out.append(m.replace(usage=replace(usage, input=usage.input + round(extra))))
        else:
            out.append(m)
    return out


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
) -> SessionResult:
    started = time.perf_counter()
    seeded = insert_canaries(original, canaries)
    ratio = ruler.session_ratio(original)
    o200k = ruler.count(seeded.messages)
    sizes = [ratio * n for n in o200k]
    canary_tokens = {cid: sizes[pos] for cid, pos in seeded.positions.items()}
    messages = _with_canary_usage(seeded, canary_tokens)
    budget = compute_budget(WINDOW, MAX_OUTPUT)
    limit = budget.input_budget - ratio * ruler.priming
    head = head_length(messages)
    cm = ContextManager(context_window=WINDOW, max_output_tokens=MAX_OUTPUT, model=model)

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

    calls: list[CallRecord] = []
    cycles: list[Cycle] = []
    done = 0
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
        while done < step.state.compactions:
            done += 1
            cycle = Cycle(done, len(calls) - 1, step.state.cut)
            summary = step.state.summary or ""
            modified = extract_file_ops(messages[: step.state.cut]).modified
            cycle.files_modified = len(modified)
            cycle.files_missing = sorted(p for p in modified if p not in summary)
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


def aggregate(results: Sequence[SessionResult], canaries: Sequence[Canary]) -> dict[str, Any]:
    kinds = list(dict.fromkeys(c.kind for c in canaries))
    columns = [_column(k) for k in range(1, CYCLES + 2)]
    by_kind: dict[str, dict[str, dict[str, Tally]]] = {
        m: {k: {c: Tally() for c in columns} for k in [*kinds, "all"]} for m in METHODS
    }
    after_5 = {m: Tally() for m in METHODS}
    after_5_strict = {m: Tally() for m in METHODS}
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
        for m in METHODS:
            if not r.calls or m not in r.calls[0].present:
                continue
            for call in r.calls:
                scores = score_context(
                    call.present[m], canaries, r.positions, cut=call.index, said_before=call.index
                )
                for s in scores:
                    if s.status != "superseded":
                        every_call[m].add(s.status == "kept")
                        if call.compactions > 0:
                            after_first[m].add(s.status == "kept")
            for cycle in r.cycles:
                call = r.calls[cycle.call]
                scores = score_context(
                    call.present[m], canaries, r.positions, cut=cycle.cut, said_before=call.index
                )
                column = _column(cycle.number)
                for s in scores:
                    if s.status == "superseded":
                        superseded[m]["excluded"] += 1
                        superseded[m]["stale_in_context"] += s.stale
                        continue
                    kept = s.status == "kept"
                    by_kind[m][s.canary.kind][column].add(kept)
                    by_kind[m]["all"][column].add(kept)
                    if cycle.number == CYCLES:
                        after_5[m].add(kept)
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
            "survival_after_5_strict": after_5_strict[m].share,
            "survival_by_kind": share_table(by_kind[m]),
            "retention_every_call": every_call[m].share,
            "retention_after_first_compaction": after_first[m].share,
            "max_context_ratio": max(sizes[m]) / budget,
            "contexts_over_budget": sum(1 for s in sizes[m] if s > budget),
            "contexts": len(sizes[m]),
            "superseded_excluded": superseded[m]["excluded"],
            "superseded_stale_in_context": superseded[m]["stale_in_context"],
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
    }


# -- output ---------------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _cell(cell: dict[str, Any]) -> str:
    return "-" if not cell["n"] else f"{cell['share']:.3f} ({cell['n']})"


def render(result: dict[str, Any]) -> str:
    a = result["figures"]
    m = a["methods"]
    ours = m["abridged"]
    budget = a["input_budget"]
    lines = [
        SECTION,
        "",
        f"`{result['command']}` ({a['sessions']} sessions, {a['calls']} calls, "
        f"{a['compactions']} compactions, {result['canaries']} canaries per session; "
        f"{result['seconds']:.0f} s)",
        "",
        f"Window 16k (16,384), max output 4,096, default settings, extractive summarizer: input "
        f"budget {budget:,} tokens. Canaries inserted after the step at fraction `at` of each "
        "session's steps; a canary survives a compaction when all its `keep` strings are in the "
        "context sent right after it (only canaries inserted before the cut count).",
        "",
        "Sessions by number of compactions: "
        + ", ".join(f"{k}: {v}" for k, v in a["sessions_by_compactions"].items() if v)
        + "; reaching at least k: "
        + ", ".join(f">={k}: {v}" for k, v in a["sessions_reaching"].items())
        + ".",
        "",
        "Survival per canary kind after the k-th compaction, abridged (share kept, (canaries "
        "scored)):",
        "",
    ]
    columns = list(next(iter(ours["survival_by_kind"].values())).keys())
    lines.append("| kind | " + " | ".join(f"after {c}" for c in columns) + " |")
    lines.append("| --- |" + " ---: |" * len(columns))
    for kind, cols in ours["survival_by_kind"].items():
        name = f"**{kind}**" if kind == "all" else kind
        lines.append(f"| {name} | " + " | ".join(_cell(cols[c]) for c in columns) + " |")
    lines += [
        "",
        "Against the baselines at the same calls, same canaries, same input budget (sizes by "
        "the independent measure: o200k count of the context as sent x the session's "
        "provider/o200k ratio):",
        "",
        "| method | survival after 5 | strict | all cycles | every call | calls after 1st "
        "compaction | max context / budget | contexts over budget |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key, row in m.items():
        all_cycles = row["survival_by_kind"]["all"]
        kept = sum((c["share"] or 0) * c["n"] for c in all_cycles.values())
        n = sum(c["n"] for c in all_cycles.values())
        lines.append(
            f"| {LABELS[key]} | {_pct(row['survival_after_5'])} ({row['survival_after_5_n']}) | "
            f"{_pct(row['survival_after_5_strict'])} | {_pct(kept / n if n else None)} | "
            f"{_pct(row['retention_every_call'])} | "
            f"{_pct(row['retention_after_first_compaction'])} | "
            f"{row['max_context_ratio']:.3f} | {row['contexts_over_budget']} of "
            f"{row['contexts']} |"
        )
    survival = ours["survival_after_5"]
    met = survival is not None and survival >= TARGET and ours["contexts_over_budget"] == 0
    lines += [
        "",
        "- calls: one per recorded model call, plus one after the last message of a session "
        "that ends with an observation (`ContextManager.replay`).",
        "- *every call*: over every call, the canaries said before it; *strict*: leaving out "
        f"the {a['ambiguous_pairs']} (session, canary) pairs whose keep strings all occur in "
        "the recorded session itself.",
        f"- last N: N per session is the largest that fits every call (median "
        f"{a['last_n_median']}, smallest {a['last_n_min']}; when the newest message alone "
        "exceeds the budget no N fits, and the context goes over); session ratio "
        f"provider/o200k median {a['ratio_median']:.3f}.",
        f"- abridged by its own measure (last provider report + calibrated estimate): max "
        f"{a['engine_max_context_ratio']:.3f} of the budget, "
        f"{a['engine_contexts_over_budget']} contexts over it.",
        f"- superseded (`supersedes`): {ours['superseded_excluded']} scorings of a superseded "
        f"canary were not required; its stale value was still in abridged's context in "
        f"{ours['superseded_stale_in_context']} of them (next to the correction, which is "
        "scored like any canary).",
        f"- files modified before a cut (from the real tool calls) missing from the summary: "
        f"{a['files_missing_from_summary']} of {a['files_modified_before_cut']} over all "
        f"compactions; at each session's last compaction {a['files_missing_last_compaction']} "
        f"of {a['files_modified_last_compaction']}"
        + (
            "; by session: "
            + ", ".join(f"{k} {v}" for k, v in a["files_missing_by_session"].items())
            + " (e.g. "
            + "; ".join(f"`{x}`" for x in a["files_missing_examples"])
            + ")"
            if a["files_missing_by_session"]
            else ""
        )
        + ".",
        "",
        f"Target: survival after 5 compactions >= {TARGET} with every context within the input "
        f"budget: survival {_pct(survival)} over {a['sessions_with_5']} sessions, "
        f"{ours['contexts_over_budget']} contexts over budget (max "
        f"{ours['max_context_ratio']:.3f}): {'met' if met else 'missed'}.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--canaries", type=Path, default=DEFAULT_CANARIES)
    parser.add_argument("--limit", type=int, default=None, help="only the first N sessions")
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--no-results", action="store_true", help="do not write RESULTS.md")
    parser.add_argument("--no-langchain", action="store_true", help="skip trim_messages")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be >= 1")

    started = time.perf_counter()
    canaries = load_canaries(args.canaries)
    keep_index = KeepIndex(canaries)
    ruler = Ruler()
    trim: Callable[..., Any] | None = None
    if not args.no_langchain:
        try:
            from langchain_core.messages import trim_messages

            trim = trim_messages
        except ImportError:
            print("langchain-core is not installed: trim_messages is skipped", file=sys.stderr)
    transcripts = load_transcripts(args.data)
    if args.limit is not None:
        transcripts = transcripts[: args.limit]
    results: list[SessionResult] = []
    for t in transcripts:
        results.append(
            run_session(
                t.id,
                t.meta.get("model"),
                t.messages,
                canaries,
                keep_index=keep_index,
                ruler=ruler,
                trim=trim,
            )
        )
    figures = aggregate(results, canaries)
    seconds = time.perf_counter() - started
    command = "python bench/retention.py"
    if args.data != DEFAULT_DATA:
        command += f" --data {args.data}"
    if args.canaries != DEFAULT_CANARIES:
        command += f" --canaries {args.canaries}"
    if args.limit is not None:
        command += f" --limit {args.limit}"
    result = {
        "command": command,
        "seconds": seconds,
        "canaries": len(canaries),
        "figures": figures,
    }
    table = render(result)
    print(table)
    if not args.no_results:
        write_section(table, args.results)
    if args.json:
        ours = figures["methods"]["abridged"]
        out = {
            "survival_after_5": ours["survival_after_5"],
            "survival_after_5_strict": ours["survival_after_5_strict"],
            "sessions_with_5": figures["sessions_with_5"],
            "sessions": figures["sessions"],
            "calls": figures["calls"],
            "compactions": figures["compactions"],
            "max_context_ratio": ours["max_context_ratio"],
            "contexts_over_budget": ours["contexts_over_budget"],
            "engine_max_context_ratio": figures["engine_max_context_ratio"],
            "engine_contexts_over_budget": figures["engine_contexts_over_budget"],
            "input_budget": figures["input_budget"],
            "survival_by_kind": {
                kind: {col: cell["share"] for col, cell in cols.items()}
                for kind, cols in ours["survival_by_kind"].items()
            },
            "sessions_by_compactions": figures["sessions_by_compactions"],
            "sessions_reaching": figures["sessions_reaching"],
            "files_modified_before_cut": figures["files_modified_before_cut"],
            "files_missing_from_summary": figures["files_missing_from_summary"],
            "files_missing_share": figures["files_missing_share"],
            "files_missing_by_session": figures["files_missing_by_session"],
            "baselines": {
                key: {k: v for k, v in row.items() if k != "survival_by_kind"}
                | {
                    "survival_by_cycle": {
                        col: cell["share"] for col, cell in row["survival_by_kind"]["all"].items()
                    }
                }
                for key, row in figures["methods"].items()
                if key != "abridged"
            },
            "abridged": {k: v for k, v in ours.items() if k != "survival_by_kind"},
            "superseded_excluded": ours["superseded_excluded"],
            "superseded_stale_in_context": ours["superseded_stale_in_context"],
            "ambiguous_pairs": figures["ambiguous_pairs"],
            "seconds": seconds,
        }
        print(json.dumps(out))
    return result


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
