"""Tests of the token estimator, the per-message cache, calibration and hybrid context sizes."""

from __future__ import annotations

import inspect
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.core import calibration as cal_mod
from abridged.core.calibration import (
    MAX_FACTOR,
    MIN_FACTOR,
    Calibration,
    model_prior,
)
from abridged.core.model import Image, Message, Reasoning, Text, ToolCall, ToolResult, Usage
from abridged.core.tokens import (
    DEFAULT_IMAGE_SIZE,
    FILE_TOKENS_DEFAULT,
    MESSAGE_OVERHEAD,
    REPLY_PRIMING,
    TokenCounter,
    calibration_sample,
    estimate_context_tokens,
    estimate_image_tokens,
    estimate_message_tokens,
    estimate_text_tokens,
    estimate_tools_tokens,
    find_last_report,
    hybrid_context_tokens,
    known_message_tokens,
    output_sample,
    text_cost,
)

PROJECT_ROOT = Path(__file__).resolve().parents[2]

# -- basic properties ---------------------------------------------------------------------------


def test_empty_text_is_zero_and_empty_message_is_its_overhead() -> None:
    assert estimate_text_tokens("") == 0
    assert text_cost("") == 0.0
    assert estimate_message_tokens(Message.user("")) == MESSAGE_OVERHEAD
    assert estimate_context_tokens([]) == 0
    assert estimate_tools_tokens([]) == 0
    assert estimate_tools_tokens(None) == 0


def test_common_short_texts_are_close_to_o200k() -> None:
    # o200k_base counts: 2, 10, 12 (checked against the real tokenizer in test_tokenizers).
    assert estimate_text_tokens("hello world") == 2
    assert 9 <= estimate_text_tokens("The quick brown fox jumps over the lazy dog.") <= 11
    assert 10 <= estimate_text_tokens('{"key": [1, 2, 3]}') <= 14


texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=200)


@given(a=texts, b=texts)
def test_monotone_in_added_content(a: str, b: str) -> None:
    """Adding content never lowers the estimate: text after a separator, or a whole message."""
    assert text_cost(a + "\n" + b) >= text_cost(a) - 1e-9
    assert text_cost(b + " " + a) >= text_cost(b) - 1e-9
    messages = [Message.user(a)]
    longer = [*messages, Message.assistant(b)]
    assert estimate_context_tokens(longer) > estimate_context_tokens(messages)


@given(st.text(alphabet="abcdefghij klmnop,.\n", min_size=1, max_size=300))
def test_repeating_text_grows_the_estimate(text: str) -> None:
    once = text_cost(text)
    assert text_cost(text + "\n" + text) >= once
    assert once > 0


def test_cjk_costs_more_per_character_than_prose() -> None:
    prose = "The committee will meet on Thursday to discuss the budget for next year. " * 5
    cjk = "委员会将于星期四开会讨论明年的预算。" * 5
    assert estimate_text_tokens(cjk) / len(cjk) > 2 * estimate_text_tokens(prose) / len(prose)
    japanese = "委員会は木曜日に来年の予算について話し合います。" * 5
    korean = "위원회는 목요일에 내년 예산을 논의할 예정입니다." * 5
    for text in (japanese, korean):
        assert estimate_text_tokens(text) / len(text) > estimate_text_tokens(prose) / len(prose)


def test_long_and_rare_words_cost_more_than_one_token() -> None:
    assert estimate_text_tokens(" the") == 1
    assert estimate_text_tokens(" antidisestablishmentarianism") >= 3
    assert estimate_text_tokens("HTTPSCONNECTIONPOOL") >= 3
    # Numbers are groups of up to three digits.
    assert estimate_text_tokens("123456789") == 3


# -- accuracy against the real o200k tokenizer on generated samples -----------------------------


def _samples() -> dict[str, list[str]]:
    import email.message
    import json as json_mod
    import textwrap

    rng = random.Random(7)
    vocabulary = (
        "the of and to in is that for it as with was on be by this are or from at an have which "
        "not but they were can all been has one their more when there what will would about into "
        "than them only other new some could time these two may then first any system message "
        "context window tokens model summary conversation history agent"
    )
    words = vocabulary.split(" ")
    prose = []
    for _ in range(20):
        sentences = []
        for _ in range(30):
            n = rng.randint(6, 18)
            s = " ".join(rng.choice(words) for _ in range(n))
            sentences.append(s[0].upper() + s[1:] + rng.choice([".", ".", ",", "?"]))
        prose.append(" ".join(sentences))
    for module in (textwrap, json_mod, email.message):
        prose.extend(
            inspect.getdoc(obj) or ""
            for _, obj in inspect.getmembers(module)
            if (inspect.isfunction(obj) or inspect.isclass(obj))
            and len(inspect.getdoc(obj) or "") > 300
        )
    code = [inspect.getsource(m) for m in (textwrap, json_mod.decoder, json_mod.encoder)]
    records = [
        {
            "id": f"call_{rng.getrandbits(48):012x}",
            "path": "/".join(rng.choice(words) for _ in range(3)) + ".py",
            "line": rng.randint(1, 9999),
            "score": round(rng.random(), 4),
            "tags": [rng.choice(words) for _ in range(rng.randint(0, 4))],
            "ok": rng.random() < 0.5,
        }
        for _ in range(400)
    ]
    json_texts = [
        json_mod.dumps(records[k : k + 40], indent=2 if k % 80 else None) for k in range(0, 400, 40)
    ]
    cjk = [
        "Python（派森）语言是一种功能强大而完善的通用型计算机程序设计语言，已经具有十多年的"
        "发展历史，成熟且稳定。这种语言具有非常简捷而清晰的语法特点，适合完成各种高层任务。" * 3,
        "Pythonは、オランダ人のグイド・ヴァンロッサムが作ったオープンソースのプログラミング"
        "言語です。オブジェクト指向スクリプト言語の一種であり、ヨーロッパではよく使われています。"
        * 3,
        "파이썬은 배우기 쉽고, 강력한 프로그래밍 언어입니다. 파이썬은 효율적인 고수준 데이터 "
        "구조와 간단하지만 효율적인 객체지향프로그래밍을 지원합니다." * 3,
    ]
    return {"prose": prose, "code": code, "json": json_texts, "cjk": cjk}


# Generous bounds on the total relative error per class (measured: within a few percent).
BOUNDS = {"prose": 0.12, "code": 0.12, "json": 0.12, "cjk": 0.25}


@pytest.mark.parametrize("cls", sorted(BOUNDS))
def test_estimate_is_close_to_o200k_per_content_class(cls: str) -> None:
    toktok = pytest.importorskip("toktok")
    samples = _samples()[cls]
    real = sum(toktok.batch_count(samples, "o200k_base"))
    estimated = sum(text_cost(t) for t in samples)
    error = estimated / real - 1
    assert abs(error) <= BOUNDS[cls], f"{cls}: {error:+.3f}"
    # ...and content-aware: better than the flat chars/4 rule where that rule is far off.
    chars4 = sum(len(t) for t in samples) / 4 / real - 1
    if abs(chars4) > 0.15:
        assert abs(error) < abs(chars4)


# -- messages -----------------------------------------------------------------------------------


def test_tool_calls_and_results_count_names_ids_and_arguments() -> None:
    bare = Message.assistant("ok")
    call = ToolCall("call_abc123", "read_file", json.dumps({"path": "src/abridged/core/x.py"}))
    with_call = Message.assistant("ok", tool_calls=[call])
    added = estimate_message_tokens(with_call) - estimate_message_tokens(bare)
    assert added >= estimate_text_tokens(call.arguments) + estimate_text_tokens(call.name)
    result = Message.tool("call_abc123", "file contents here", name="read_file")
    assert estimate_message_tokens(result) > estimate_message_tokens(
        Message.user("file contents here")
    )


def test_text_protocol_counts_the_wire_text_only() -> None:
    text = "THOUGHT: list the files.\n\n```bash\nls -la\n```"
    structured = Message(
        "assistant",
        (Text(text), ToolCall("call_1", "bash", json.dumps({"command": "ls -la"}))),
        meta={"text_protocol": True},
    )
    assert estimate_message_tokens(structured) == estimate_message_tokens(Message.assistant(text))
    observation = "<returncode>0</returncode>\n<output>\na.py\nb.py\n</output>"
    tool = Message(
        "tool",
        (ToolResult("call_1", "bash", (Text(observation),)),),
        meta={"text_protocol": True, "wire_role": "user"},
    )
    assert estimate_message_tokens(tool) == estimate_message_tokens(Message.user(observation))
    plain_tool = Message("tool", (ToolResult("call_1", "bash", (Text(observation),)),))
    assert estimate_message_tokens(plain_tool) > estimate_message_tokens(tool)


def test_reasoning_counts_text_and_encrypted_payload_but_not_the_signature() -> None:
    thinking = "Let me think about which file to open first."
    base = estimate_message_tokens(Message.assistant("x"))
    with_text = estimate_message_tokens(Message.assistant("x", reasoning=[Reasoning(thinking)]))
    signed = estimate_message_tokens(
        Message.assistant("x", reasoning=[Reasoning(thinking, signature="A" * 400)])
    )
    encrypted = estimate_message_tokens(
        Message.assistant("x", reasoning=[Reasoning(encrypted="B" * 1600, redacted=True)])
    )
    assert with_text - base == estimate_text_tokens(thinking)
    assert signed == with_text
    assert encrypted - base == 300  # 1600 base64 chars = 1200 bytes = 300 tokens


def test_tool_definitions_count() -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file from the workspace and return its text.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "File path"}},
                "required": ["path"],
            },
        },
    }
    one = estimate_tools_tokens([tool])
    two = estimate_tools_tokens([tool, tool])
    assert one > 30
    assert two > one
    messages = [Message.user("hi")]
    assert estimate_context_tokens(messages, [tool]) == (estimate_context_tokens(messages) + one)


# -- images -------------------------------------------------------------------------------------


def test_openai_image_formula() -> None:
    assert estimate_image_tokens(1024, 1024) == 85 + 170 * 4
    # OpenAI's published example: 2048 x 4096 high detail -> 768 x 1536 -> 6 tiles -> 1105.
    assert estimate_image_tokens(2048, 4096) == 1105
    assert estimate_image_tokens(4096, 8192, detail="low") == 85
    assert estimate_image_tokens(500, 300) == 85 + 170


def test_anthropic_and_gemini_image_formulas() -> None:
    assert estimate_image_tokens(1000, 1000, provider="anthropic") == 1334  # 1000*1000/750
    assert estimate_image_tokens(200, 200, provider="anthropic") == 54
    # Long edge capped at 1568 px and area at 1.15 MP: a huge image costs about 1.5k at most.
    assert estimate_image_tokens(8000, 8000, provider="anthropic") <= 1534
    assert estimate_image_tokens(300, 300, provider="gemini") == 258
    assert estimate_image_tokens(1024, 1024, provider="gemini") == 258 * 4


def test_unknown_image_size_uses_the_documented_default() -> None:
    w, h = DEFAULT_IMAGE_SIZE
    for provider in ("openai", "anthropic", "gemini"):
        assert estimate_image_tokens(None, None, provider=provider) == estimate_image_tokens(
            w, h, provider=provider
        )
    message = Message("user", (Text("look"), Image(url="https://example.invalid/a.png")))
    assert estimate_message_tokens(message) == (
        estimate_message_tokens(Message.user("look")) + estimate_image_tokens(None, None)
    )
    anthropic = estimate_message_tokens(message, image_provider="anthropic")
    assert anthropic == estimate_message_tokens(Message.user("look")) + estimate_image_tokens(
        None, None, provider="anthropic"
    )


def test_images_inside_tool_results_and_files() -> None:
    from abridged.core.model import File

    result = ToolResult("c1", "screenshot", (Text("done"), Image(width=512, height=512)))
    message = Message("tool", (result,))
    text_only = Message("tool", (ToolResult("c1", "screenshot", (Text("done"),)),))
    assert estimate_message_tokens(message) - estimate_message_tokens(text_only) == 85 + 170
    with_file = Message("user", (Text("see"), File(file_id="file-1")))
    assert estimate_message_tokens(with_file) == (
        estimate_message_tokens(Message.user("see")) + FILE_TOKENS_DEFAULT
    )


# -- the cache ----------------------------------------------------------------------------------


def test_cache_returns_the_same_numbers_and_does_not_recompute() -> None:
    counter = TokenCounter()
    messages = [Message.user(f"message number {k} " * 20) for k in range(50)]
    first = [counter.message_tokens(m) for m in messages]
    assert counter.computed == 50
    again = [counter.message_tokens(m) for m in messages]
    assert again == first
    assert counter.computed == 50
    assert first == [estimate_message_tokens(m) for m in messages]
    # Equal content in a new object is the same entry; one more message costs one computation.
    copy = Message.user("message number 3 " * 20)
    assert counter.message_tokens(copy) == first[3]
    counter.messages_tokens([*messages, Message.assistant("new")])
    assert counter.computed == 51


def test_cache_key_includes_the_wire_meta() -> None:
    counter = TokenCounter()
    parts = (Text("run it"), ToolCall("c1", "bash", '{"command": "ls"}'))
    structured = Message("assistant", parts)
    wire = Message("assistant", parts, meta={"text_protocol": True})
    assert structured.fingerprint == wire.fingerprint
    assert counter.message_tokens(structured) > counter.message_tokens(wire)
    assert counter.computed == 2


def test_cache_is_bounded() -> None:
    counter = TokenCounter(max_entries=3)
    messages = [Message.user(str(k)) for k in range(5)]
    counter.messages_tokens(messages)
    counter.message_tokens(messages[0])  # evicted: computed again
    assert counter.computed == 6
    with pytest.raises(ValueError):
        TokenCounter(max_entries=0)


# -- calibration ----------------------------------------------------------------------------------


def test_calibration_learns_a_consistent_ratio() -> None:
    c = Calibration()
    assert c.factor == 1.0
    for _ in range(20):
        c = c.update(real=1300, estimated=1000)
    assert c.factor == pytest.approx(1.3, rel=0.03)
    assert c.samples == 20
    assert c.apply(1000) == round(1000 * c.factor)


def test_calibration_ignores_noise_and_tiny_samples() -> None:
    c = Calibration().update(real=1200, estimated=1000)
    assert c.update(real=-50, estimated=400) == c  # the provider's count went down
    assert c.update(real=0, estimated=400) == c
    assert c.update(real=5, estimated=3) == c  # too small to say anything


@given(
    st.lists(st.tuples(st.integers(-10_000, 1_000_000), st.integers(-10, 1_000_000)), max_size=40)
)
def test_calibration_is_bounded(samples: list[tuple[int, int]]) -> None:
    c = Calibration()
    for real, estimated in samples:
        c = c.update(real, estimated)
        assert MIN_FACTOR <= c.factor <= MAX_FACTOR


def test_recent_samples_outweigh_old_ones() -> None:
    c = Calibration()
    for _ in range(10):
        c = c.update(real=1000, estimated=1000)
    for _ in range(10):
        c = c.update(real=1500, estimated=1000)
    assert c.factor > 1.35


def test_model_prior() -> None:
    assert model_prior("google/gemini-3-pro-preview") == pytest.approx(1.1)
    assert model_prior("gemini-2.5-flash") == pytest.approx(1.1)
    assert model_prior("gpt-4o") == 1.0
    assert model_prior(None) == 1.0
    assert Calibration.for_model("gpt-4o") == Calibration()
    assert Calibration.for_model("gemini-2.5-pro").factor == pytest.approx(1.1)
    assert TokenCounter(model="gemini-2.5-pro").calibration.factor == pytest.approx(1.1)
    assert Calibration.with_factor(50.0).factor == cal_mod.MAX_FACTOR


# -- hybrid context size --------------------------------------------------------------------------


def _session() -> list[Message]:
    return [
        Message.system("You are a helpful assistant that runs shell commands."),
        Message.user("Find the bug in the parser and fix it."),
        Message.assistant(
            "I will list the files first.", usage=Usage(input=900, output=12, reasoning=4)
        ),
        Message.user("<output>\nparser.py\nlexer.py\ntests/\n</output>"),
        Message.assistant("Now read parser.py.", usage=Usage(input=960, output=9)),
        Message.user("<output>\n" + "def parse(x):\n    return x\n" * 20 + "</output>"),
    ]


def test_hybrid_is_last_report_plus_estimate_of_what_was_added() -> None:
    messages = _session()
    # Without the output count: the report plus the plain estimate of the two newer messages.
    plain = hybrid_context_tokens(messages, 4, 960, use_output_tokens=False)
    assert plain == 960 + estimate_message_tokens(messages[4]) + estimate_message_tokens(
        messages[5]
    )
    # With it: the reported assistant message counts by its output (9) plus its overhead.
    hybrid = hybrid_context_tokens(messages, 4, 960)
    assert hybrid == 960 + 9 + MESSAGE_OVERHEAD + estimate_message_tokens(messages[5])
    # Calibration scales the estimated part only.
    doubled = hybrid_context_tokens(
        messages, 4, 960, calibration=Calibration.with_factor(2.0, weight=1e9)
    )
    assert doubled == 960 + 9 + MESSAGE_OVERHEAD + round(estimate_message_tokens(messages[5]) * 2.0)


def test_hybrid_without_a_report_is_the_calibrated_cold_estimate() -> None:
    messages = [m.replace(usage=None) for m in _session()]
    assert find_last_report(messages) is None
    cold = hybrid_context_tokens(messages, None, None)
    assert cold == estimate_context_tokens(messages)
    counter = TokenCounter()
    assert counter.context_tokens(messages) == cold
    assert hybrid_context_tokens([], None, None) == 0


def test_stale_usage_before_a_compaction_boundary_is_ignored() -> None:
    messages = _session()
    assert find_last_report(messages) == (4, 960)
    assert find_last_report(messages, boundary=5) is None
    # A report older than the boundary is not used, even when passed explicitly.
    stale = hybrid_context_tokens(messages, 4, 960, boundary=5)
    assert stale == estimate_context_tokens(messages)
    counter = TokenCounter()
    assert counter.context_tokens(messages, boundary=5) == stale
    assert counter.context_tokens(messages, boundary=3) == hybrid_context_tokens(messages, 4, 960)
    # A huge stale report cannot trigger anything after the boundary.
    inflated = [*messages[:4], messages[4].replace(usage=Usage(input=10**6)), *messages[5:]]
    assert counter.context_tokens(inflated, boundary=5) < 2_000


def test_known_output_tokens_are_used_only_when_trustworthy() -> None:
    text = "I will run the tests now to see what fails."
    produced = Message.assistant(text, usage=Usage(input=100, output=15, reasoning=3))
    estimate = estimate_message_tokens(produced)
    assert known_message_tokens(produced, estimate) == 12 + MESSAGE_OVERHEAD
    assert output_sample(produced, estimate) == (12, estimate - MESSAGE_OVERHEAD)
    with_reasoning = Message.assistant(
        text, reasoning=[Reasoning("hidden")], usage=Usage(input=100, output=15)
    )
    assert known_message_tokens(with_reasoning, estimate) is None
    implausible = Message.assistant(text, usage=Usage(input=100, output=5_000))
    assert known_message_tokens(implausible, estimate) is None
    assert known_message_tokens(Message.user(text), estimate) is None


def test_calibration_samples_from_consecutive_reports() -> None:
    messages = _session()
    first = calibration_sample(messages, 2)
    assert first == (900, sum(estimate_message_tokens(m) for m in messages[:2]) + REPLY_PRIMING)
    real, estimated = calibration_sample(messages, 4) or (0, 0)
    # 960 - 900 tokens were added: the assistant message by its output (8 + overhead) and the
    # observation by estimate.
    assert real == 960 - 900 - (8 + MESSAGE_OVERHEAD)
    assert estimated == estimate_message_tokens(messages[3])
    assert calibration_sample(messages, 3) is None  # no report there


def test_counter_learns_from_reports() -> None:
    # A provider that counts 1.4x the estimate: after a few steps the hybrid tracks it.
    counter = TokenCounter()
    messages: list[Message] = [Message.user("Fix the failing test in tests/test_io.py please.")]
    real_total = round(counter.estimate_context(messages) * 1.4)
    errors = []
    for step in range(12):
        output = f"Step {step}: I will inspect the next file and run the tests again."
        output_tokens = round(estimate_text_tokens(output) * 1.4)
        produced = Message.assistant(output, usage=Usage(input=real_total, output=output_tokens))
        messages.append(produced)
        counter.observe(messages, len(messages) - 1)
        lines = "line of output text " * (20 + step * 7)
        observation = Message.user(f"<output>\n{lines}\n</output>")
        messages.append(observation)
        predicted = counter.context_tokens(messages)
        real_total += (
            output_tokens + MESSAGE_OVERHEAD + round(counter.message_tokens(observation) * 1.4)
        )
        errors.append(abs(predicted - real_total) / real_total)
    assert counter.calibration.factor == pytest.approx(1.4, rel=0.05)
    assert errors[-1] < errors[0]
    assert errors[-1] < 0.01


# -- the benchmark ------------------------------------------------------------------------------


def test_bench_runs_on_a_slice(swebench_path: Path, tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\n## other\n\nkeep me\n", encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            str(PROJECT_ROOT / "bench" / "tokens.py"),
            "--data",
            str(swebench_path),
            "--limit",
            "3",
            "--json",
            "--no-classes",
            "--results",
            str(results),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    last = json.loads(proc.stdout.strip().splitlines()[-1])
    keys = {"cold_median", "cold_p90", "hybrid_median", "hybrid_p90", "hybrid_p99"}
    assert keys <= set(last)
    assert keys <= set(last["baseline"])
    assert last["sessions"] == 3
    assert last["calls"] > 10
    assert 0 <= last["went_down_rate"] <= 1
    assert last["throughput_mb_s"] > 0
    for key in keys:
        assert 0 <= last[key] < 1
    # The hybrid prediction is far better than the cold one, and than the baseline's.
    assert last["hybrid_p90"] < last["cold_p90"]
    assert last["hybrid_p90"] <= last["baseline"]["hybrid_p90"]
    text = results.read_text(encoding="utf-8")
    assert "## other\n\nkeep me" in text
    assert text.count("## tokens") == 1
