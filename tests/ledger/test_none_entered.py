"""Rows a placement does not enter say so, and throughput is tokens per second with its unit.

A row nothing feeds (no transfers, no entered overhead) prints `none entered` where a value
would be, never a 0 that reads like a measured zero; a comparison cell whose inputs are not
entered (cost rate, power, SLO) says the same, and `n/a` is left for a ratio that exists but
is undefined. A composed placement's throughput is batch / T_total tokens per second, for
the system and per device, in text and JSON.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from click.testing import CliRunner

from kb.cli import cli

ROOT = Path(__file__).resolve().parents[2] / "records"
PLACEMENT = "placements/tp-llama-3.1-70b-h100-tp4-vs-tp8"


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--root", str(ROOT)])
    assert result.exit_code == 0, result.output
    return result.output


def test_rows_not_entered_print_none_entered_not_zero() -> None:
    out = run("ledger", PLACEMENT)
    assert (
        "    T_sync                        none entered  none; not entered in the placement" in out
    )
    assert " 0 s  none" not in out
    costs = next(line for line in out.splitlines() if line.strip().startswith("cost "))
    assert costs.split()[1:] == ["none", "entered"] * 4
    slo = next(line for line in out.splitlines() if line.strip().startswith("slo_slack"))
    assert "n/a" not in slo and "none entered" in slo


def test_throughput_is_tokens_per_second_for_the_system_and_per_device() -> None:
    out = run("ledger", PLACEMENT)
    # since session 26 each step holds the non-matmul kernels' growth (decode_kernels)
    assert "    Throughput                    3026 tokens/s  batch / T_total: 64 sequences" in out
    assert "378.2 tokens/s per device" in out
    assert "throughput  2251 tokens/s  3026 tokens/s" in out
    doc = json.loads(run("ledger", PLACEMENT, "--format", "json"))
    tp8 = next(s for s in doc["ledgers"] if s["option"] == "tp8")
    total = Fraction(tp8["total"]["exact"])
    assert tp8["throughput"]["unit"] == "tokens/s"
    assert Fraction(tp8["throughput"]["exact"]) == 64 / total
    assert Fraction(tp8["throughput_per_device"]["exact"]) == 64 / total / 8
    rows = {r["row"]: r for r in tp8["rows"]}
    assert rows["sync"]["provenance"] == "none"  # JSON keeps the exact 0 beside its provenance
