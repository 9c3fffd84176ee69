"""Generate ``agent-session.jsonl``: a deterministic, made-up mini-swe-agent style session.

The session is written for abridged's examples (it is not copied from any real run): one user
task, then many bash steps whose outputs (file listings, source files, test runs) grow the context
the way real coding agents do. ``usage`` beside each assistant message is counted with the real
o200k tokenizer (``toktok``), standing in for the provider's report.

Run ``python examples/make_agent_session.py`` to rewrite the file; the output is byte-identical
every time.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SYSTEM = (
    "You are a helpful assistant that can interact multiple times with a computer shell to solve "
    "programming tasks.\nYour response must contain exactly ONE bash code block with ONE command "
    "(or commands connected with && or ||).\n\nInclude a THOUGHT section before your command where "
    "you explain your reasoning process.\nFailure to follow these rules will cause your response "
    "to be rejected."
)

TASK = """<pr_description>
Consider the following PR description:
`invoices.totals.round_total()` loses a cent on totals that end in .xx5

When an invoice total such as 10.005 is rounded, `round_total` returns 10.00 instead of 10.01.
Finance rounds half up (ROUND_HALF_UP), never to even. Please fix `round_total` in
`ledger/invoices/totals.py` and make sure the existing tests in `tests/test_totals.py` still pass.
Do not change the public signature of `round_total(amount, places=2)`.
</pr_description>

<instructions>
Work in /testbed. Make the smallest change that fixes the issue, verify it with a reproduction
script, and when you are done run `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A &&
git diff --cached`.
</instructions>"""

MODULES = ["invoices", "payments", "customers", "reports", "tax", "currency", "audit", "exports"]
# Packages checked for callers after the fix (more than the listing shows: sub-packages too).
CALLERS = [*MODULES, "billing", "refunds", "vat", "statements"]


def _source_file(rng: random.Random, module: str, lines: int) -> str:
    out = [
        f'"""{module.capitalize()} helpers for the ledger."""',
        "",
        "from decimal import Decimal",
        "",
    ]
    for n in range(lines // 6):
        name = f"{rng.choice(['load', 'compute', 'render', 'check', 'apply'])}_{module}_{n}"
        out += [
            f"def {name}(record, places=2):",
            f'    """Return the {module} value of ``record`` rounded to ``places``."""',
            f"    value = Decimal(str(record.get('{module}_{n}', 0)))",
            f"    return value.quantize(Decimal(10) ** -places)  # step {n}",
            "",
            "",
        ]
    return "\n".join(out)


def _listing(rng: random.Random) -> str:
    rows = []
    for module in MODULES:
        for n in range(rng.randint(6, 14)):
            rows.append(f"ledger/{module}/{module}_{n:02d}.py")
        rows.append(f"tests/test_{module}.py")
    return "\n".join(sorted(rows))


def _test_run(rng: random.Random, failing: bool) -> str:
    lines = ["============================= test session starts =============================="]
    for module in MODULES:
        for n in range(rng.randint(8, 16)):
            lines.append(f"tests/test_{module}.py::test_{module}_{n} PASSED")
    if failing:
        lines += [
            "tests/test_totals.py::test_round_half_up FAILED",
            "",
            "    def test_round_half_up():",
            ">       assert round_total(Decimal('10.005')) == Decimal('10.01')",
            "E       AssertionError: assert Decimal('10.00') == Decimal('10.01')",
            "",
            "======================== 1 failed, 97 passed in 2.41s =========================",
        ]
    else:
        lines.append("======================== 98 passed in 2.38s =========================")
    return "\n".join(lines)


def _step(thought: str, command: str) -> str:
    return f"THOUGHT: {thought}\n\n```bash\n{command}\n```"


def _observation(output: str, returncode: int = 0) -> str:
    return f"<returncode>{returncode}</returncode>\n<output>\n{output}\n</output>"


PLAN = (
    " The plan stays the same: keep the public signature round_total(amount, places=2), change "
    "only the rounding mode in ledger/invoices/totals.py, check every package that calls it, "
    "then run the whole suite once more before submitting."
)


def _callers(rng: random.Random) -> list[tuple[str, str]]:
    """After the fix: check, package by package, that no caller relied on half-even rounding.

    Short outputs and longer reasoning: too small to prune, they add up until the session has to
    compact (which is what the README's replay shows)."""
    steps: list[tuple[str, str]] = []
    for k, module in enumerate(CALLERS):
        hits = [
            f"ledger/{module}/{module}_{n:02d}.py:{rng.randint(3, 200)}:"
            f"    total = round_total(record['{module}_total'])"
            for n in range(rng.randint(2, 4))
        ]
        previous = CALLERS[k - 1] if k else "invoices"
        steps.append(
            (
                _step(
                    f"The {previous} package only passes plain totals to round_total and never "
                    "relies on the rounding mode, so the switch to ROUND_HALF_UP cannot change "
                    f"its results except on exact halves, which is the fix itself. Next I check "
                    f"the {module} package the same way: a caller that compares a rounded total "
                    "with a value computed under half-even rounding would now fail, and such a "
                    "comparison usually sits next to the call." + PLAN,
                    f"grep -rn 'round_total' ledger/{module} | head -20",
                ),
                _observation("\n".join(hits)),
            )
        )
        steps.append(
            (
                _step(
                    f"{len(hits)} call sites in {module}, all passing the stored total unchanged "
                    "with the default two places. None of them re-rounds or compares the result "
                    "against a half-even value in the same function. Its tests are the other "
                    "place where an expectation could encode the old behaviour, so I look at "
                    "the assertions on totals there." + PLAN,
                    f"grep -n -A2 'def test_{module}_total' tests/test_{module}.py",
                ),
                _observation(
                    f"def test_{module}_total_rounds_half_up():\n"
                    f"    assert compute_{module}_total({{'{module}_total': "
                    f"Decimal('2.675')}}) == Decimal('2.68')"
                ),
            )
        )
        caller = hits[0].split(":")[0]
        line = int(hits[0].split(":")[1])
        steps.append(
            (
                _step(
                    f"That test already expects half-up rounding (2.675 -> 2.68), so it agrees "
                    f"with the fix. One last look at the first caller in {caller}, to be sure "
                    "the total is not rounded a second time on its way out." + PLAN,
                    f"sed -n '{max(1, line - 3)},{line + 4}p' {caller}",
                ),
                _observation(
                    "\n".join(
                        [
                            f"def compute_{module}_total(record, places=2):",
                            f'    """The {module} total of ``record``, rounded for invoices."""',
                            f"    total = round_total(record['{module}_total'])",
                            f"    audit.log('{module}', total)",
                            "    return total",
                        ]
                    )
                ),
            )
        )
    return steps


def build_steps(rng: random.Random) -> list[tuple[str, str]]:
    """The (assistant text, observation) pairs of the session, in order."""
    steps: list[tuple[str, str]] = [
        (
            _step(
                "Let me look at the repository layout first.",
                "find ledger tests -name '*.py' | sort",
            ),
            _observation(_listing(rng)),
        ),
    ]
    for i, module in enumerate(MODULES):
        path = f"ledger/{module}/{module}_{i:02d}.py"
        steps.append(
            (
                _step(f"I'll read {path} to see how {module} values are rounded.", f"cat {path}"),
                _observation(_source_file(rng, module, rng.randint(90, 160))),
            )
        )
        steps.append(
            (
                _step(
                    f"Search for rounding calls in the {module} package.",
                    f"grep -rn 'quantize\\|round(' ledger/{module} | head -80",
                ),
                _observation(
                    "\n".join(
                        f"ledger/{module}/{module}_{n:02d}.py:{rng.randint(3, 200)}:"
                        f"    return value.quantize(Decimal(10) ** -places)"
                        for n in range(rng.randint(20, 60))
                    )
                ),
            )
        )
    steps.append(
        (
            _step("Now the file named in the task.", "cat ledger/invoices/totals.py"),
            _observation(
                '"""Invoice totals."""\n\nfrom decimal import Decimal, ROUND_HALF_EVEN\n\n\n'
                "def round_total(amount, places=2):\n"
                '    """Round an invoice total to ``places`` decimals."""\n'
                "    return Decimal(str(amount)).quantize(Decimal(10) ** -places, "
                "rounding=ROUND_HALF_EVEN)\n"
            ),
        )
    )
    steps.append(
        (
            _step("Reproduce the bug with a failing test run.", "python -m pytest -q tests"),
            _observation(_test_run(rng, failing=True), returncode=1),
        )
    )
    steps.append(
        (
            _step(
                "The function uses ROUND_HALF_EVEN; finance wants ROUND_HALF_UP. Fix it in place.",
                "sed -i 's/ROUND_HALF_EVEN/ROUND_HALF_UP/g' ledger/invoices/totals.py && "
                "git diff ledger/invoices/totals.py",
            ),
            _observation(
                "diff --git a/ledger/invoices/totals.py b/ledger/invoices/totals.py\n"
                "-from decimal import Decimal, ROUND_HALF_EVEN\n"
                "+from decimal import Decimal, ROUND_HALF_UP\n"
                "-    return Decimal(str(amount)).quantize(Decimal(10) ** -places, "
                "rounding=ROUND_HALF_EVEN)\n"
                "+    return Decimal(str(amount)).quantize(Decimal(10) ** -places, "
                "rounding=ROUND_HALF_UP)"
            ),
        )
    )
    steps += _callers(rng)
    steps.append(
        (
            _step("Run the whole suite again to confirm the fix.", "python -m pytest -q tests"),
            _observation(_test_run(rng, failing=False)),
        )
    )
    return steps


def build_session() -> dict[str, object]:
    """The whole session as one JSON object in the shape of the shared SWE-bench file."""
    import toktok  # noqa: PLC0415 - the real o200k tokenizer stands in for the provider's count

    rng = random.Random(20261122)
    messages: list[dict[str, object]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": TASK},
    ]

    def prompt_tokens() -> int:
        texts = [str(m["content"]) for m in messages]
        return sum(toktok.batch_count(texts, "o200k_base")) + 4 * len(messages) + 3

    final = _step(
        "The fix is verified; submitting.",
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
    )
    cached = 0
    for text, observation in [*build_steps(rng), (final, None)]:
        prompt = prompt_tokens()
        completion = int(toktok.batch_count([text], "o200k_base")[0])
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cached_tokens": cached,
            "reasoning_tokens": 0,
        }
        messages.append({"role": "assistant", "content": text, "usage": usage})
        cached = prompt // 128 * 128
        if observation is not None:
            messages.append({"role": "user", "content": observation})
    return {
        "instance_id": "example__ledger-rounding",
        "model": "example/o200k-counted",
        "exit_status": "Submitted",
        "messages": messages,
    }


def main() -> None:
    """Write the session next to this script."""
    out = Path(__file__).with_name("agent-session.jsonl")
    out.write_text(json.dumps(build_session(), ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
