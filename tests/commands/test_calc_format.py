"""`kb calc` prints a readable unit with four significant digits, and the exact value beside it."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.commands.calc import result_text
from kb.ledger.quantities import amount
from kb.quantities import parse_unit
from tests.conftest import SHIPPED_RECORDS, read_shown_number
from tests.inprocess import kb_in_process


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (Fraction(23301689, 10**13), "s", "2.33 µs (exact 23301689/10000000000000 s)"),
        (Fraction(76690781, 1485000), "us", "51.64 µs (exact 76690781/1485000 us)"),
        (Fraction(32768), "B", "32.77 kB (exact 32768 B)"),
        (Fraction(32000), "B", "32 kB"),  # exact: no second form
        (Fraction(5, 2), "GB/s", "2.5 GB/s"),
        (Fraction(21248, 78125), "MB", "272 kB (exact 21248/78125 MB)"),
        (Fraction(7, 3), "TFLOP/s", "2.333 TFLOP/s (exact 7/3 TFLOP/s)"),  # no scale: declared
        (Fraction(222336, 67), "1", "3318 (exact 222336/67)"),
        (Fraction(21), "1", "21"),
        (Fraction(0), "ms", "0 s"),
        (Fraction(1659, 10**23), "J", "1.659×10⁻²⁰ J"),
        (Fraction(1, 3 * 10**20), "J", "3.333×10⁻²¹ J (exact 1/300000000000000000000 J)"),
    ],
)
def test_result_text(value: Fraction, unit: str, text: str) -> None:
    assert result_text(value, unit) == text


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.fractions(min_value=Fraction(1, 10**12), max_value=10**6, max_denominator=10**12),
    st.sampled_from(["s", "ms", "us", "ns", "B", "GB", "MiB", "GB/s", "1", "FLOP"]),
)
def test_the_exact_part_is_the_value_and_the_readable_part_is_within_rounding(
    value: Fraction, unit: str
) -> None:
    text = result_text(value, unit)
    readable, _, rest = text.partition(" (exact ")
    number, _, shown_unit = readable.partition(" ")
    base = value * parse_unit(unit).factor
    approx = read_shown_number(number) * parse_unit(shown_unit.replace("µ", "u") or "1").factor
    assert abs(approx - base) <= abs(base) * Fraction(5, 10**4)  # four significant digits
    if rest:
        exact_text = rest.removesuffix(")").removesuffix(f" {unit}")
        assert Fraction(exact_text) == value
    else:
        assert approx == base
    mantissa = number.partition("×")[0]
    digits = mantissa.lstrip("-").replace(".", "").lstrip("0")
    assert len(digits) <= 4 or "." not in mantissa  # integers are printed whole


def test_ledger_amount_keeps_a_dimensionless_number_whole() -> None:
    assert amount(Fraction(21), "1") == "21"  # `rstrip(" 1")` once printed "2"
    assert amount(Fraction(11), "FLOP") == "11 FLOP"


def test_calc_text_and_json(tmp_path: Path) -> None:
    args = ["calc", "flops/tp-decode-allreduce-time", "--root", str(SHIPPED_RECORDS)]
    args += ["--claim", "overhead-calibration"]
    done = kb_in_process(args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "t_o = 51.64 µs (exact 76690781/1485000 us)"
    done = kb_in_process([*args, "--format", "json"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["value"] == {
        "exact": "76690781/1485000",
        "value": 76690781 / 1485000,
        "unit": "us",
    }
    assert document["target"] == "t_o" and document["trail"][0].startswith("t_o = ")
