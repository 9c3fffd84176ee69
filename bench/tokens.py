"""Benchmark: predict the provider's prompt_tokens of every call in real agent sessions.

    .venv/bin/python bench/tokens.py [--data PATH] [--limit N] [--json] [--results PATH]

For every assistant message with a usage report (one model call), predict the provider's
``prompt_tokens`` (the size of everything sent before that message):

- cold: the estimate of all messages before it (``estimate``: abridged's estimator; ``baseline``:
  chars/4 + 4 per message; ``o200k``: the exact o200k_base tokenizer plus the same overheads, a
  reference for what a perfect o200k estimate would do against this provider);
- cold calibrated: the cold estimate scaled by the per-conversation calibration learned from the
  earlier reports of the same session only (what abridged does after a compaction);
- hybrid: the previous call's real count plus the estimate of the messages added since (the
  previous assistant message by its own output count, the rest calibrated; the baseline adds
  chars/4 + 4 per message, uncalibrated).

Errors are relative, |pred - real| / real. Also reported: how often the provider's count went
down between consecutive calls although messages were only added, what the data says about
re-sent reasoning, the estimator's accuracy against o200k per content class on text that ships
with Python, and the estimator's throughput. The table goes to stdout and to the ``## tokens``
section of ``bench/RESULTS.md``; with ``--json`` the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import statistics
import sys
import sysconfig
import time
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from abridged.core.calibration import Calibration, model_prior  # noqa: E402
from abridged.core.model import Message, Text, ToolResult  # noqa: E402
from abridged.core.protocols import Tokenizer  # noqa: E402
from abridged.core.tokens import (  # noqa: E402
    REPLY_PRIMING,
    TokenCounter,
    hybrid_context_tokens,
    reported_tokens,
    text_cost,
)
from abridged.providers.tokenizers import load_tokenizer  # noqa: E402
from results import add_output_options, save_section  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "swebench-gemini3" / "trajectories.jsonl"
SECTION = "## tokens"


# -- loading --------------------------------------------------------------------------------


def _sessions_direct(path: Path) -> Iterator[tuple[str, str | None, list[Message]]]:
    """The sessions built straight from the JSONL (used when the transcript loader is absent):
    plain messages, the same texts and usage the loader gives."""
    from abridged.formats.usage import usage_from_openai

    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            obj = json.loads(line)
            messages: list[Message] = []
            for item in obj["messages"]:
                role, content = item["role"], item.get("content") or ""
                if role == "assistant":
                    usage = usage_from_openai(item.get("usage"))
                    messages.append(Message.assistant(content, usage=usage))
                elif role == "system":
                    messages.append(Message.system(content))
                else:
                    messages.append(Message.user(content))
            yield str(obj.get("instance_id", lineno)), obj.get("model"), messages


def load_sessions(
    path: Path,
) -> tuple[str, Iterator[tuple[str, str | None, Sequence[Message]]]]:
    """``(loader name, sessions)``: the transcript loader when it exists, else the direct reader."""
    try:
        from abridged.formats.transcripts import load_swebench_jsonl
    except ImportError:
        return "direct", _sessions_direct(path)
    return "abridged.formats.transcripts", (
        (t.id, t.meta.get("model"), t.messages) for t in load_swebench_jsonl(path)
    )


# -- predictions ----------------------------------------------------------------------------


def wire_text_chars(message: Message) -> int:
    """Characters of the text a message sends (what chars/4 divides)."""
    n = 0
    for part in message.parts:
        if isinstance(part, Text | ToolResult):
            n += len(part.text)
    return n


def baseline_tokens(message: Message) -> int:
    return wire_text_chars(message) // 4 + 4


@dataclass
class Series:
    """Relative errors (and signed ones, for the bias) of one predictor."""

    errors: list[float] = field(default_factory=list)
    signed: list[float] = field(default_factory=list)

    def add(self, predicted: float, real: int) -> None:
        self.signed.append((predicted - real) / real)
        self.errors.append(abs(predicted - real) / real)

    def quantile(self, q: float) -> float:
        xs = sorted(self.errors)
        if not xs:
            return math.nan
        return xs[min(len(xs) - 1, max(0, math.ceil(q * len(xs)) - 1))]

    def summary(self) -> dict[str, float]:
        return {
            "median": self.quantile(0.5),
            "p90": self.quantile(0.9),
            "p99": self.quantile(0.99),
            "bias": statistics.fmean(self.signed) if self.signed else math.nan,
            "n": len(self.errors),
        }


@dataclass
class Findings:
    """What the data says about the provider's counts."""

    pairs: int = 0
    went_down: int = 0
    reasoning_calls: int = 0
    # For calls whose previous call reported reasoning tokens: residual of the delta when the
    # previous message counts as its visible output vs. its whole completion (reasoning re-sent).
    residual_visible: list[float] = field(default_factory=list)
    residual_completion: list[float] = field(default_factory=list)
    delta_ratio: list[float] = field(default_factory=list)  # (delta - visible) / estimate


def run_session(
    messages: Sequence[Message],
    model: str | None,
    series: dict[str, Series],
    findings: Findings,
    exact: Tokenizer | None,
) -> float:
    """Predict every call of one session; returns the calibration factor learned by its end."""
    counter = TokenCounter(model=model)
    prior = Calibration.for_model(model)
    exact_counter = TokenCounter(tokenizer=exact, model=model) if exact is not None else None
    est = [counter.message_tokens(m) for m in messages]
    base = [baseline_tokens(m) for m in messages]
    prefix_est = [0]
    prefix_base = [0]
    for e, b in zip(est, base, strict=True):
        prefix_est.append(prefix_est[-1] + e)
        prefix_base.append(prefix_base[-1] + b)
    reports = [(i, t) for i, m in enumerate(messages) if (t := reported_tokens(m)) is not None]
    previous: tuple[int, int] | None = None
    for i, real in reports:
        cold = prefix_est[i] + REPLY_PRIMING
        series["cold"].add(prior.apply(cold), real)
        series["cold_estimate"].add(cold, real)
        series["cold_calibrated"].add(counter.calibration.apply(cold), real)
        series["baseline_cold"].add(prefix_base[i], real)
        if exact_counter is not None:
            exact_cold = exact_counter.estimate_context(messages[:i])
            series["o200k_cold"].add(exact_cold, real)
            series["o200k_cold_prior"].add(prior.apply(exact_cold), real)
        if previous is not None:
            j, before = previous
            head = messages[:i]
            series["hybrid"].add(
                hybrid_context_tokens(
                    head,
                    j,
                    before,
                    calibration=counter.calibration,
                    estimate=counter.message_tokens,
                ),
                real,
            )
            series["hybrid_estimate_only"].add(
                hybrid_context_tokens(
                    head,
                    j,
                    before,
                    calibration=counter.calibration,
                    estimate=counter.message_tokens,
                    use_output_tokens=False,
                ),
                real,
            )
            series["baseline_hybrid"].add(before + prefix_base[i] - prefix_base[j], real)
            if exact_counter is not None:
                series["o200k_hybrid"].add(
                    hybrid_context_tokens(
                        head,
                        j,
                        before,
                        calibration=exact_counter.calibration,
                        estimate=exact_counter.message_tokens,
                    ),
                    real,
                )
            _findings(messages, j, before, i, real, est, counter.calibration, findings)
        counter.observe(messages, i)
        if exact_counter is not None:
            exact_counter.observe(messages, i)
        previous = (i, real)
    return counter.calibration.factor


def _findings(  # noqa: PLR0917
    messages: Sequence[Message],
    j: int,
    before: int,
    i: int,
    real: int,
    est: Sequence[int],
    calibration: Calibration,
    findings: Findings,
) -> None:
    findings.pairs += 1
    delta = real - before
    if delta < 0:
        findings.went_down += 1
    usage = messages[j].usage
    if usage is None:
        return
    visible = usage.output - usage.reasoning
    rest = sum(est[j + 1 : i])
    if usage.reasoning > 0:
        findings.reasoning_calls += 1
        # Only where the new observation is small, so that its estimate's error cannot hide
        # a reasoning-sized difference.
        if rest <= 300:
            added = calibration.apply(rest)
            findings.residual_visible.append(abs(delta - visible - added))
            findings.residual_completion.append(abs(delta - usage.output - added))
    if rest >= 200 and delta > 0:
        findings.delta_ratio.append((delta - visible) / rest)


# -- estimator vs o200k per content class, on text that ships with Python --------------------


def class_samples() -> dict[str, list[str]]:
    """Varied text from the Python installation: English docs, stdlib source, generated JSON,
    CJK text (the stdlib's CJK codec test texts, when the test package is installed)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    samples: dict[str, list[str]] = {"prose": [], "code": [], "json": [], "cjk": []}
    try:
        from pydoc_data.topics import topics

        samples["prose"] = [t for t in topics.values() if len(t) > 500]
    except ImportError:
        pass
    for name in sorted(glob.glob(str(stdlib / "*.py")))[::4]:
        samples["code"].append(Path(name).read_text(encoding="utf-8", errors="replace"))
    records = [
        {
            "codepoint": cp,
            "char": chr(cp),
            "name": unicodedata.name(chr(cp), ""),
            "category": unicodedata.category(chr(cp)),
            "numeric": unicodedata.numeric(chr(cp), None),
        }
        for cp in range(0x20, 0x2800, 5)
    ]
    for k in range(0, len(records), 50):
        chunk = records[k : k + 50]
        samples["json"].append(json.dumps(chunk, indent=2 if k % 100 else None))
    config = {k: str(v) for k, v in sysconfig.get_config_vars().items()}
    samples["json"].append(json.dumps(config, indent=2))
    for name in sorted(glob.glob(str(stdlib / "test" / "cjkencodings" / "*-utf8.txt"))):
        samples["cjk"].append(Path(name).read_text(encoding="utf-8", errors="replace"))
    return {k: v for k, v in samples.items() if v}


def class_accuracy(exact: Tokenizer) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name, texts in class_samples().items():
        real = exact.count(texts)
        est = [text_cost(t) for t in texts]
        pairs = [(e, r) for e, r in zip(est, real, strict=True) if r > 0]
        errs = sorted(abs(e - r) / r for e, r in pairs)
        out[name] = {
            "texts": len(pairs),
            "chars": sum(len(t) for t in texts),
            "total_error": sum(e for e, _ in pairs) / sum(r for _, r in pairs) - 1,
            "median_doc_error": errs[len(errs) // 2],
            "chars4_total_error": sum(len(t) / 4 for t in texts) / sum(real) - 1,
            "chars_per_token": sum(len(t) for t in texts) / sum(real),
        }
    return out


# -- throughput -----------------------------------------------------------------------------


def throughput(texts: Sequence[str], fn: Callable[[str], Any], min_seconds: float = 1.0) -> float:
    """MB/s (UTF-8) of ``fn`` over ``texts``, repeated until ``min_seconds`` have passed."""
    size = sum(len(t.encode("utf-8")) for t in texts)
    if size == 0:
        return math.nan
    done = 0
    start = time.perf_counter()
    while True:
        for t in texts:
            fn(t)
        done += size
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return done / 1e6 / elapsed


# -- output ---------------------------------------------------------------------------------

ROWS = [
    ("cold", "estimate x model prior, cold"),
    ("cold_estimate", "estimate alone, cold"),
    ("cold_calibrated", "estimate, cold, calibrated on earlier reports"),
    ("hybrid", "estimate, hybrid (previous report + output count + calibrated estimate)"),
    ("hybrid_estimate_only", "estimate, hybrid without the output count"),
    ("baseline_cold", "baseline chars/4 + 4, cold"),
    ("baseline_hybrid", "baseline chars/4 + 4, hybrid"),
    ("o200k_cold", "exact o200k_base + overheads, cold (reference)"),
    ("o200k_cold_prior", "exact o200k_base x model prior, cold (reference)"),
    ("o200k_hybrid", "exact o200k_base, hybrid (reference)"),
]
TARGETS = {"cold": (0.06, 0.12, None), "hybrid": (None, 0.015, 0.05)}


def render(result: dict[str, Any]) -> str:
    lines = [
        SECTION,
        "",
        f"`{result['command']}` ({result['sessions']} sessions, {result['calls']} calls, "
        f"loader: {result['loader']}, {result['seconds']:.1f} s)",
        "",
        "Models and their calibration prior (published chars/token rule vs o200k's 4.4 on "
        "English; 1.0 when none is published): "
        + ", ".join(f"{m} {p:.3f}" for m, p in result["models"].items()),
        "",
        "Relative error |pred - real| / real of the provider's `prompt_tokens`; bias is the mean "
        "signed error.",
        "",
        "| predictor | median | p90 | p99 | bias | n |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key, label in ROWS:
        s = result["series"].get(key)
        if s is None or not s["n"]:
            continue
        lines.append(
            f"| {label} | {s['median']:.4f} | {s['p90']:.4f} | {s['p99']:.4f} | "
            f"{s['bias']:+.4f} | {s['n']} |"
        )
    lines += [
        "",
        "Targets: cold median <= 0.06, cold p90 <= 0.12, hybrid p90 <= 0.015, hybrid p99 <= 0.05.",
    ]
    for key, (med, p90, p99) in TARGETS.items():
        s = result["series"][key]
        checks = []
        for name, limit in (("median", med), ("p90", p90), ("p99", p99)):
            if limit is not None:
                verdict = "met" if s[name] <= limit else f"missed by {s[name] - limit:.4f}"
                checks.append(f"{name} {s[name]:.4f} ({verdict})")
        lines.append(f"- {key}: " + ", ".join(checks))
    f = result["findings"]
    lines += [
        "",
        "Provider counts:",
        f"- went down between consecutive calls although messages were only added: "
        f"{f['went_down']} of {f['pairs']} ({f['went_down_rate']:.2%})",
        f"- calls reporting reasoning tokens: {f['reasoning_calls']}; where the next "
        f"observation is small ({f['residual_pairs']} calls), median |residual| of the next "
        f"count when the message counts as its visible output (completion - reasoning): "
        f"{f['residual_visible_median']:.0f} tokens; as its whole completion (reasoning "
        f"re-sent): {f['residual_completion_median']:.0f} tokens",
        f"- (delta - visible output) / estimate of the new observation, median "
        f"{f['delta_ratio_median']:.3f} (p10 {f['delta_ratio_p10']:.3f}, p90 "
        f"{f['delta_ratio_p90']:.3f}): the provider's tokenizer against the estimator",
        f"- calibration factor learned at the end of each session, median "
        f"{f['final_factor_median']:.3f}",
    ]
    acc = result.get("classes")
    if acc:
        lines += [
            "",
            "Estimator vs exact o200k_base by content class (text shipped with Python):",
            "",
            "| class | texts | chars | chars/token | estimate total error | median per text "
            "| chars/4 total error |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name, a in acc.items():
            lines.append(
                f"| {name} | {a['texts']} | {a['chars']} | {a['chars_per_token']:.2f} | "
                f"{a['total_error']:+.3f} | {a['median_doc_error']:.3f} | "
                f"{a['chars4_total_error']:+.3f} |"
            )
    lines += [
        "",
        f"Estimator throughput: {result['throughput_mb_s']:.1f} MB/s "
        f"(exact o200k via toktok: {result['exact_throughput_mb_s']:.1f} MB/s).",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None, help="only the first N sessions")
    add_output_options(parser)
    parser.add_argument("--no-classes", action="store_true", help="skip the per-class check")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    exact = load_tokenizer("o200k_base", backends=("toktok",))
    names = [key for key, _ in ROWS if exact is not None or not key.startswith("o200k")]
    series = {key: Series() for key in names}
    findings = Findings()
    loader, sessions = load_sessions(args.data)
    n_sessions = 0
    factors: list[float] = []
    all_texts: list[str] = []
    models: set[str] = set()
    for _sid, model, messages in sessions:
        if args.limit is not None and n_sessions >= args.limit:
            break
        n_sessions += 1
        factors.append(run_session(messages, model, series, findings, exact))
        models.add(str(model))
        for m in messages:
            for part in m.parts:
                if isinstance(part, Text | ToolResult):
                    all_texts.append(part.text)
    seconds = time.perf_counter() - started

    unique = list(dict.fromkeys(all_texts))
    mb_s = throughput(unique, text_cost)
    exact_mb_s = (
        throughput(unique, lambda t: exact.count([t]), 0.5) if exact is not None else math.nan
    )

    def q(xs: list[float], p: float) -> float:
        ys = sorted(xs)
        return ys[min(len(ys) - 1, int(p * len(ys)))] if ys else math.nan

    summaries = {k: s.summary() for k, s in series.items()}
    result: dict[str, Any] = {
        "command": "python bench/tokens.py"
        + (f" --data {args.data}" if args.data != DEFAULT_DATA else "")
        + (f" --limit {args.limit}" if args.limit is not None else ""),
        "data": str(args.data),
        "loader": loader,
        "sessions": n_sessions,
        "models": {m: model_prior(m) for m in sorted(models)},
        "calls": summaries["cold"]["n"],
        "seconds": seconds,
        "series": summaries,
        "findings": {
            "pairs": findings.pairs,
            "went_down": findings.went_down,
            "went_down_rate": findings.went_down / findings.pairs if findings.pairs else 0.0,
            "reasoning_calls": findings.reasoning_calls,
            "residual_pairs": len(findings.residual_visible),
            "residual_visible_median": q(findings.residual_visible, 0.5),
            "residual_completion_median": q(findings.residual_completion, 0.5),
            "delta_ratio_median": q(findings.delta_ratio, 0.5),
            "delta_ratio_p10": q(findings.delta_ratio, 0.1),
            "delta_ratio_p90": q(findings.delta_ratio, 0.9),
            "final_factor_median": q(factors, 0.5),
        },
        "throughput_mb_s": mb_s,
        "exact_throughput_mb_s": exact_mb_s,
    }
    if exact is not None and not args.no_classes:
        result["classes"] = class_accuracy(exact)
    table = render(result)
    print(table)
    save_section(args, table)
    if args.json:
        cold, hybrid = summaries["cold"], summaries["hybrid"]
        bc, bh = summaries["baseline_cold"], summaries["baseline_hybrid"]
        out = {
            "cold_median": cold["median"],
            "cold_p90": cold["p90"],
            "hybrid_median": hybrid["median"],
            "hybrid_p90": hybrid["p90"],
            "hybrid_p99": hybrid["p99"],
            "baseline": {
                "cold_median": bc["median"],
                "cold_p90": bc["p90"],
                "hybrid_median": bh["median"],
                "hybrid_p90": bh["p90"],
                "hybrid_p99": bh["p99"],
            },
            "calls": result["calls"],
            "sessions": n_sessions,
            "went_down": findings.went_down,
            "went_down_rate": result["findings"]["went_down_rate"],
            "throughput_mb_s": mb_s,
            "series": summaries,
            "findings": result["findings"],
            "classes": result.get("classes"),
            "seconds": seconds,
        }
        print(json.dumps(out, default=lambda x: None if isinstance(x, float) else str(x)))
    return result


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
