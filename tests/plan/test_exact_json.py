"""Exact values too long for Python's int->str limit still reach the JSON (issue 36, the hole).

Python refuses to turn an int of more than 4,300 digits into text. A feasible MoE
option can carry one: the prefill pass of Llama 4 Maverick (k = 1 of E = 128 routed
experts) reads f = 1 - (127/128)^B of its experts at B = 2,048 prompt tokens, whose
exact fraction has a numerator of about 14,300 bits (4,309 digits). `kb plan --format
json` raised "Exceeds the limit (4300 digits)" on it; kb.ledger.render.exact is the one
place that turns exact values into JSON, and it now applies one declared rule
(kb.ledger.render.printable): a value with more than EXACT_BITS bits is written as its
nearest fraction with a denominator of at most 2^64, and its JSON says so (`rounded`).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import jsonschema
from click.testing import CliRunner

from kb.cli import cli
from kb.ledger.render import EXACT_BITS, ROUNDED_DENOMINATOR, exact, printable

ROOT = Path(__file__).resolve().parents[2] / "records"
SCHEMAS = Path(__file__).resolve().parents[2] / "kb" / "data" / "output"
HUGE = 1 - Fraction(127, 128) ** 2048  # the prefill's expert fraction, 4,309 digits over


def test_the_huge_value_is_past_pythons_limit() -> None:
    assert HUGE.denominator.bit_length() > EXACT_BITS
    assert HUGE.denominator.bit_length() * 0.30103 > 4300  # decimal digits: past the limit


def test_a_huge_value_is_written_rounded_and_says_so() -> None:
    huge = HUGE * Fraction(3, 1000)  # seconds
    bits = max(huge.numerator.bit_length(), huge.denominator.bit_length())
    written = exact(huge, "s")
    assert written is not None
    text = json.dumps(written)  # no ValueError from the int->str limit
    back = json.loads(text)
    value = Fraction(back["exact"])
    assert value.denominator <= ROUNDED_DENOMINATOR
    assert abs(value - huge) < Fraction(1, ROUNDED_DENOMINATOR)
    assert back["value"] == float(huge)
    assert "rounded" in back and f"{bits} bits" in back["rounded"]


def test_a_printable_value_is_written_exactly_with_no_rounding_note() -> None:
    value = Fraction(3**300, 7**200)  # long, but under EXACT_BITS
    written = exact(value, "s")
    assert written == {"exact": str(value), "value": float(value), "unit": "s"}
    assert printable(value) == (value, None)


def test_kb_plan_json_prints_a_feasible_moe_option_past_the_limit() -> None:
    args = ["plan", "models/llama-4-maverick", "--on", "hardware/nvidia-h200-sxm"]
    args += ["--count", "8", "--tp", "8", "--ep", "1", "--batch", "1"]
    args += ["--context", "2048/256", "--engine", "engines/vllm"]
    result = CliRunner().invoke(cli, [*args, "--format", "json", "--root", str(ROOT)])
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.output)
    schema = json.loads((SCHEMAS / "plan.v1.schema.json").read_text())
    jsonschema.validate(report, schema)
    (option,) = report["options"]
    assert option["status"] == "feasible"
    rounded = [key for key, v in option["values"].items() if v is not None and "rounded" in v]
    assert "ttft" in rounded  # the prefill read of 2,048 tokens is the huge one
    ttft = option["values"]["ttft"]
    assert abs(float(Fraction(ttft["exact"])) - ttft["value"]) <= 1e-12 * ttft["value"]
