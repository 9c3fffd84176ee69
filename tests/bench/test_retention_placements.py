"""Tests of ``bench/retention.py``'s placements (user, tool, assistant), the stale rule, the
engine figures (missed target, recoveries) and a small in-process run."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from abridged.core.model import Message, Text, ToolCall, Usage
from abridged.core.summary import summary_message
from abridged.core.tokens import estimate_message_tokens
from abridged.events.engine import CompactionStarted, OverflowRecovered
from abridged.formats.openai_chat import messages_to_openai
from abridged.formats.transcripts import messages_from_text_protocol

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def _bench() -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # the benchmark imports its neighbour ``results``
    loaded = sys.modules.get("bench_retention")
    if loaded is not None:  # one module object: the worker processes pickle its classes
        return loaded
    spec = importlib.util.spec_from_file_location("bench_retention", BENCH / "retention.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


R = _bench()


def _canary(cid: str, at: float, text: str, keep: str, **kw: str) -> object:
    return R.Canary(cid, kw.get("kind", "identifier"), at, text, (keep,), kw.get("supersedes"))


def _mini_swe_agent(outputs: Sequence[str | None]) -> list[Message]:
    """A mini-swe-agent session as the loader gives it (text protocol): one step per entry of
    ``outputs``, whose observation is that text; ``None`` is a reply with two bash blocks,
    answered by the harness's format-error notice (a step without an observation)."""
    items: list[dict[str, object]] = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "<pr_description>Fix the parser.</pr_description>"},
    ]
    for k, output in enumerate(outputs):
        usage = {"prompt_tokens": 1_000 + 100 * k, "completion_tokens": 20}
        if output is None:
            reply = f"THOUGHT: two at once.\n\n```bash\nls {k}\n```\n\n```bash\npwd\n```"
            items.append({"role": "assistant", "content": reply, "usage": usage})
            items.append({"role": "user", "content": "Please always provide EXACTLY ONE action."})
            continue
        reply = f"THOUGHT: step {k}.\n\n```bash\ncat src/mod_{k}.py\n```"
        items.append({"role": "assistant", "content": reply, "usage": usage})
        items.append({"role": "user", "content": output})
    messages, _ = messages_from_text_protocol(items, transcript_id="hand-made")
    return messages


def _native(steps: int) -> list[Message]:
    """System, task, then ``steps`` steps of a native tool call and its ``ToolResult``."""
    messages = [Message.system("You are an agent."), Message.user("Fix the bug in parser.py.")]
    for k in range(steps):
        call = ToolCall(f"c{k}", "bash", json.dumps({"command": f"cat src/mod_{k}.py"}))
        usage = Usage(input=1_000 + 100 * k, output=20)
        messages.append(Message.assistant(f"Reading module {k}.", tool_calls=[call], usage=usage))
        messages.append(Message.tool(f"c{k}", f"contents of module {k}", name="bash"))
    return messages


def _sent(message: Message) -> str:
    (item,) = messages_to_openai([message])
    content = item["content"]
    assert isinstance(content, str)
    return content


# -- tool placement -------------------------------------------------------------------------------


def test_tool_placement_goes_before_the_closing_output_tag() -> None:
    outputs = [
        "<returncode>0</returncode>\n<output>\na.py\nb.py\n</output>",
        "<returncode>0</returncode>\n<output_head>\nhead\n</output_head>\n<elided_chars>\n"
        "900 characters elided\n</elided_chars>\n<output_tail>\ntail\n</output_tail>",
        "<returncode>1</returncode>\n<output>\nTraceback</output>",
        "Submitted: no tags here",
    ] + ["<returncode>0</returncode>\n<output>\nok\n</output>"] * 6
    original = _mini_swe_agent(outputs)
    canaries = [
        _canary("first", 0.0, "Ticket OPS-1 is the one.", "OPS-1"),
        _canary("b", 0.1, "Branch is release/9.", "release/9"),
        _canary("c", 0.1, "Owner is ann@example.org.", "ann@example.org"),
        _canary("tail", 0.2, "Budget is 250 microseconds.", "250 microseconds"),
        _canary("raw", 0.3, "Build 7.14.2 ships it.", "7.14.2"),
        _canary("end", 0.4, "Scratch is /srv/x.", "/srv/x"),
    ]
    seeded = R.insert_canaries(original, canaries, "tool")
    # written into the recorded messages: nothing inserted, ids and order kept
    assert [m.id for m in seeded.messages] == [m.id for m in original]
    assert seeded.fallbacks == 0 and seeded.as_user == 0
    steps = R.split_steps(original)
    # at = 0 (no step before it): the first step's observation
    assert seeded.positions["first"] == steps[0].start + 1
    # floor(0.1 * 10) = 1 step before: that step's observation, with both in file order
    assert seeded.positions["b"] == seeded.positions["c"] == steps[0].start + 1
    assert _sent(seeded.messages[steps[0].start + 1]) == (
        "<returncode>0</returncode>\n<output>\na.py\nb.py\nTicket OPS-1 is the one.\n"
        "Branch is release/9.\nOwner is ann@example.org.\n</output>"
    )
    # an observation whose last tag is </output_tail>: before it
    assert _sent(seeded.messages[seeded.positions["tail"]]).endswith(
        "\ntail\nBudget is 250 microseconds.\n</output_tail>"
    )
    # no newline before </output>: the canary still gets a line of its own
    assert _sent(seeded.messages[seeded.positions["raw"]]).endswith(
        "\nTraceback\nBuild 7.14.2 ships it.\n</output>"
    )
    # no closing tag at all: at the end
    assert (
        _sent(seeded.messages[seeded.positions["end"]])
        == "Submitted: no tags here\nScratch is /srv/x."
    )
    for pos in set(seeded.positions.values()):
        assert seeded.messages[pos].role == "tool"
        assert seeded.messages[pos].meta == original[pos].meta
        assert seeded.grown[pos] is original[pos]


def test_tool_placement_appends_to_a_native_tool_result() -> None:
    original = _native(10)
    seeded = R.insert_canaries(original, [_canary("d", 0.35, "Ticket OPS-2.", "OPS-2")], "tool")
    pos = seeded.positions["d"]
    # floor(0.35 * 10) = 3 steps before: the third step's result (index 2 + 2 * 2 + 1)
    assert pos == 7
    (result,) = seeded.messages[pos].tool_results
    assert result.call_id == "c2" and result.content == (
        Text("contents of module 2\nTicket OPS-2."),
    )
    assert seeded.messages[pos].tool_calls == () and seeded.messages[pos].id == original[pos].id


def test_tool_placement_falls_back_to_the_next_step_with_an_observation() -> None:
    outputs: list[str | None] = ["<returncode>0</returncode>\n<output>\nok\n</output>"] * 10
    outputs[2] = None  # the harness rejected that reply: no observation
    original = _mini_swe_agent(outputs)
    steps = R.split_steps(original)
    canaries = [_canary("d", 0.3, "Ticket OPS-3.", "OPS-3"), _canary("e", 0.5, "Use v2.", "v2")]
    seeded = R.insert_canaries(original, canaries, "tool")
    assert seeded.fallbacks == 1
    # step 2 has none: the observation of step 3
    assert seeded.positions["d"] == steps[3].start + 1
    assert "Ticket OPS-3." in _sent(seeded.messages[steps[3].start + 1])
    assert seeded.positions["e"] == steps[4].start + 1
    # the format-error notice is left alone
    assert all("OPS-3" not in m.text for m in seeded.messages if m.role == "user")


def test_a_session_without_observations_gets_user_messages() -> None:
    original = [Message.system("s"), Message.user("hi"), Message.assistant("hello")]
    seeded = R.insert_canaries(original, [_canary("d", 0.5, "Ticket OPS-4.", "OPS-4")], "tool")
    assert seeded.as_user == 1 and len(seeded.messages) == 4
    assert seeded.messages[seeded.positions["d"]].role == "user"


# -- assistant placement --------------------------------------------------------------------------


def test_assistant_placement_goes_first_in_the_reply() -> None:
    original = _mini_swe_agent(["<returncode>0</returncode>\n<output>\nok\n</output>"] * 10)
    steps = R.split_steps(original)
    canaries = [
        _canary("a", 0.0, "Ticket OPS-5 it is.", "OPS-5"),
        _canary("b", 0.25, "I will keep to Python 3.9.", "Python 3.9"),
        _canary("c", 0.25, "And option B.", "option B"),
    ]
    seeded = R.insert_canaries(original, canaries, "assistant")
    assert seeded.positions["a"] == steps[0].assistant
    # floor(0.25 * 10) = 2 steps before: the second step's reply, both in file order
    pos = steps[1].assistant
    assert seeded.positions["b"] == seeded.positions["c"] == pos
    message = seeded.messages[pos]
    assert message.text == (
        "I will keep to Python 3.9.\n\nAnd option B.\n\nTHOUGHT: step 1.\n\n```bash\n"
        "cat src/mod_1.py\n```"
    )
    assert _sent(message) == message.text  # text protocol: the wire form is the text
    # the recovered tool call and the recorded usage stay
    assert message.tool_calls == original[pos].tool_calls
    assert message.usage == original[pos].usage


def test_assistant_placement_in_a_reply_without_text() -> None:
    call = ToolCall("c0", "bash", json.dumps({"command": "ls"}))
    original = [
        Message.system("s"),
        Message.user("go"),
        Message.assistant(tool_calls=[call]),
        Message.tool("c0", "a.py", name="bash"),
    ]
    seeded = R.insert_canaries(original, [_canary("d", 0.0, "Ticket OPS-6.", "OPS-6")], "assistant")
    assert seeded.messages[2].parts == (Text("Ticket OPS-6."), call)


def test_unknown_placement_is_refused() -> None:
    with pytest.raises(ValueError, match="placement"):
        R.insert_canaries(_native(2), [], "system")


def test_usage_is_raised_after_the_message_that_grew() -> None:
    messages = _native(4)
    raised = R._with_canary_usage(messages, {3: 40.0})
    for i, (before, after) in enumerate(zip(messages, raised, strict=True)):
        if before.usage is None:
            assert after.usage is None
        elif i <= 3:
            assert after.usage == before.usage
        else:
            assert after.usage.input == before.usage.input + 40


# -- stale rule -----------------------------------------------------------------------------------


def test_strip_replaced_drops_both_markers() -> None:
    text = (
        "release branch: release/2026-q4-hotfix (was release/2026-q4)\n"
        "- [superseded by a later message] The release branch is release/2026-q4.\n"
        "owner: ann"
    )
    assert R.strip_replaced(text) == "release branch: release/2026-q4-hotfix \nowner: ann"
    # a parenthetical that is not a (was ...) marker stays
    assert R.strip_replaced("branch (current) release/2026-q4") == (
        "branch (current) release/2026-q4"
    )


@pytest.mark.parametrize(
    ("summary", "stale"),
    [
        ("- release branch: release/2026-q4-hotfix (was release/2026-q4)", False),
        (
            "- release branch: release/2026-q4-hotfix\n"
            "- [superseded by a later message] The release branch is release/2026-q4.",
            False,
        ),
        (
            "- The release branch for this fix is release/2026-q4.\n"
            "- Now the release branch is release/2026-q4-hotfix.",
            True,
        ),
        ("- release branch: release/2026-q4-hotfix; earlier: release/2026-q4", True),
    ],
)
def test_stale_only_when_the_old_value_is_unmarked(summary: str, stale: bool) -> None:
    old = _canary("d15", 0.1, "Branch release/2026-q4.", "release/2026-q4", kind="update")
    new = _canary(
        "d16", 0.5, "Now release/2026-q4-hotfix.", "release/2026-q4-hotfix", supersedes="d15"
    )
    canaries = [old, new]
    index = R.KeepIndex(canaries)
    context = [Message.system("s"), summary_message(summary), Message.user("go on")]
    present = index.of_context(context)
    scores = {
        s.canary.id: s
        for s in R.score_context(present, canaries, {"d15": 3, "d16": 8}, cut=10, said_before=10)
    }
    assert scores["d15"].status == "superseded"
    assert scores["d15"].stale is stale
    # the correction survives either way
    assert scores["d16"].status == "kept"


# -- engine figures -------------------------------------------------------------------------------


def _sized_result(call_id: str, tokens: int) -> Message:
    """A tool result of about ``tokens`` by the engine's estimator."""
    lines: list[str] = []
    message = Message.tool(call_id, "", name="bash")
    while estimate_message_tokens(message) < tokens:
        lines.append(f"value_{len(lines)} = compute(alpha_{len(lines)}, beta)  # step")
        message = Message.tool(call_id, "\n".join(lines), name="bash")
    return message


def _overflowing(steps: int, step_tokens: int, last_tokens: int) -> list[Message]:
    """``steps`` steps of ``step_tokens`` each, then one whose result is ``last_tokens``."""
    messages = [Message.system("You are an agent."), Message.user("Fix the bug in parser.py.")]
    for k in range(steps):
        call = ToolCall(f"c{k}", "bash", json.dumps({"command": f"cat src/mod_{k}.py"}))
        messages.append(Message.assistant(f"Reading module {k}.", tool_calls=[call]))
        messages.append(_sized_result(f"c{k}", step_tokens))
    call = ToolCall("big", "bash", json.dumps({"command": "pytest -x"}))
    messages.append(Message.assistant("Running the tests.", tool_calls=[call]))
    messages.append(_sized_result("big", last_tokens))
    messages.append(Message.assistant("Done."))
    return messages


def _talky(steps: int, tokens: int) -> list[Message]:
    """``steps`` steps whose reply text is about ``tokens`` (nothing to prune) and whose result
    is short, then a final reply."""
    messages = [Message.system("You are an agent."), Message.user("Fix the bug in parser.py.")]
    for k in range(steps):
        call = ToolCall(f"c{k}", "bash", json.dumps({"command": f"cat src/mod_{k}.py"}))
        body = " ".join(f"Step {k} needs part {i} of the change." for i in range(tokens // 10))
        messages.append(Message.assistant(body, tool_calls=[call]))
        messages.append(Message.tool(f"c{k}", f"ok {k}", name="bash"))
    messages.append(Message.assistant("Done."))
    return messages


def _replay(messages: list[Message]) -> Any:
    return R.run_session(
        "synthetic", None, messages, [], keep_index=R.KeepIndex([]), ruler=R.Ruler(), trim=None
    )


def test_summaries_that_reach_the_target_are_not_missed() -> None:
    result = _replay(_talky(24, 600))
    assert result.summaries and result.recoveries == []
    figures = R.engine_figures([result])
    assert figures["missed_target"] == 0 and figures["missed_target_share"] == 0.0
    assert figures["recoveries"] == figures["recoveries_excused"] == 0
    assert all(s.tokens_after <= s.target for s in result.summaries)
    assert figures["summary_tokens_max"] == max(s.summary_tokens for s in result.summaries)


def test_an_overflow_the_tail_cannot_fix_is_a_forced_compaction() -> None:
    """Under the trigger, then one observation below the target but too big to fit next to the
    history: an ordinary cut runs before the call (no emergency stage), and what it keeps stays
    above the target."""
    budget = R.compute_budget(R.WINDOW, R.MAX_OUTPUT)
    steps = 12
    messages = _overflowing(steps, 600, budget.target - 300)
    assert steps * 600 < budget.trigger < budget.input_budget < steps * 600 + budget.target - 300
    result = _replay(messages)
    assert result.recoveries == []
    (forced,) = result.forced_compactions
    assert forced.stages == ("compaction",) and not forced.excused
    assert forced.largest_message <= budget.target
    # at the call right after the big observation (the last reply)
    assert result.calls[forced.call].index == len(messages) - 1
    (summary,) = result.summaries
    assert summary.missed and summary.emergency
    figures = R.engine_figures([result])
    assert figures["recoveries"] == 0 and figures["recoveries_excused"] == 0
    assert figures["forced_compactions"] == 1 and figures["forced_compactions_excused"] == 0
    assert figures["missed_target"] == 1 and figures["missed_target_share"] == 1.0


def test_one_message_above_the_target_excuses_the_recovery() -> None:
    budget = R.compute_budget(R.WINDOW, R.MAX_OUTPUT)
    result = _replay(_overflowing(10, 600, budget.target + 800))
    (forced,) = result.forced_compactions
    assert forced.excused and forced.largest_message > budget.target
    figures = R.engine_figures([result])
    assert figures["forced_compactions"] == 0 and figures["forced_compactions_excused"] == 1
    # an observation above the input budget: an emergency stage, excused
    result = _replay(_overflowing(10, 600, budget.input_budget + 500))
    (recovery,) = result.recoveries
    assert recovery.excused and recovery.stages and "compaction" not in recovery.stages
    figures = R.engine_figures([result])
    assert figures["recoveries"] == 0 and figures["recoveries_excused"] == 1


def test_recovery_stages_from_events() -> None:
    started = CompactionStarted("overflow", "too big", 12_000, 40, forced=True, emergency="force")
    recovered = OverflowRecovered(12_000, 5_000, 11_264, "force")
    assert R.recovery_stages([started, recovered]) == ("force",)
    # an emergency compaction that did not report a recovery still counts
    assert R.recovery_stages([started]) == ("force",)
    assert R.recovery_stages([OverflowRecovered(12_000, 5_000, 11_264, "compaction")]) == (
        "compaction",
    )
    plain = CompactionStarted("tokens", "context 9k >= trigger 8.8k", 9_100, 40)
    assert R.recovery_stages([plain]) == ()


# -- a run ----------------------------------------------------------------------------------------


def test_main_reports_every_placement(
    swebench_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the two longest sessions (they compact at least five times), of which --limit keeps one
    lines = [ln for ln in swebench_path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    lines.sort(key=lambda ln: -len(json.loads(ln)["messages"]))
    data = tmp_path / "long.jsonl"
    data.write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")
    R.main(["--data", str(data), "--limit", "1", "--no-results", "--json"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["placements"] == ["user", "tool", "assistant"]
    by = out["survival_after_5_by_placement"]
    assert set(by) == {"user", "tool", "assistant"}
    assert all(0.0 <= v <= 1.0 for v in by.values())
    assert out["survival_after_5"] == min(by.values())
    assert 0.0 <= out["stale_share"] <= 1.0 and 0.0 <= out["missed_target_share"] <= 1.0
    assert out["summary_max_ratio"] > 0.0
    assert set(out["stale_by_placement"]) == set(by)
    assert all(0.0 <= v <= 1.0 for v in out["stale_by_placement"].values())
    assert all(0.0 <= v <= 1.0 for v in out["missed_target_by_placement"].values())
    assert isinstance(out["recoveries"], int) and isinstance(out["recoveries_excused"], int)
    assert out["recoveries"] >= 0 and out["recoveries_excused"] >= 0
    assert out["summary_tokens_median"] <= out["summary_tokens_max"]
    for method in ("last_n", "trim_messages"):
        row = out["baselines"][method]
        assert set(row["survival_after_5_by_placement"]) == set(by)
        assert all(0.0 <= v <= 1.0 for v in row["survival_after_5_by_placement"].values())
        assert row["survival_after_5"] == min(row["survival_after_5_by_placement"].values())
    assert set(out["by_placement"]) == set(by)
    assert out["sessions"] == 1
    assert out["calls"] == sum(p["calls"] for p in out["by_placement"].values())
