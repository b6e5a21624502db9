"""The rows of a composed placement: each is a term of the classes' step.

placements/tp-llama-3.1-70b-h100-tp4-vs-tp8 types nothing about its step: kb derives
its rows from flops/tp-decode-allreduce-time and flops/decode-kv-cache-read. That the
total is the class's step_time, which `kb calc` prints, is tests/ledger/test_one_answer.py;
here each row is held to its hand-worked term.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli

ROOT = Path(__file__).resolve().parents[2] / "records"
PLACEMENT = "placements/tp-llama-3.1-70b-h100-tp4-vs-tp8"
MS = Fraction(1, 1000)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*args, "--root", str(ROOT)])
    return result.exit_code, result.output


def calc(*args: str) -> Fraction:
    """`kb calc ... --format json`: the exact value, in seconds."""
    code, out = run("calc", *args, "--format", "json")
    assert code == 0, out
    value = json.loads(out)["value"]
    assert value["unit"] == "ms", value
    return Fraction(value["exact"]) * MS


@pytest.fixture(scope="module")
def ledger() -> dict[str, dict[str, object]]:
    code, out = run("ledger", PLACEMENT, "--format", "json")
    assert code == 0, out
    return {side["option"]: side for side in json.loads(out)["ledgers"]}


def test_tp8_rows_are_the_class_terms(ledger: dict[str, dict[str, object]]) -> None:
    """TP8 at batch 64: t_w = P*b_w/(8*BW), L*t_o = 80 x 98.5 us, c*L*t_ar = 160 x 33.8 us;
    the overhead row also holds the non-matmul kernels' growth at 64 tokens (session 26,
    Llama-2-70B's H100 TP8 rows of the same kernel shape: 17.0 us at 1, 20.0 at 128)."""
    rows = {r["row"]: r for r in ledger["tp8"]["rows"]}  # type: ignore[attr-defined]
    weight_read = Fraction(2 * 70_552_387_584, 8 * 2_970 * 10**9)
    kv = Fraction(64 * 2048 * 2 * 80 * 1 * 128 * 2, 2_970 * 10**9)  # one KV head per rank
    assert Fraction(rows["useful"]["value"]["exact"]) == weight_read + kv
    kernels = 80 * Fraction(3, 10**6) * 63 / 127
    assert Fraction(rows["overhead"]["value"]["exact"]) == 80 * Fraction(985, 10**7) + kernels
    assert rows["overhead"]["provenance"] == "estimated"
    assert Fraction(rows["exposed"]["value"]["exact"]) == 160 * Fraction(338, 10**7)
    assert rows["exposed"]["provenance"] == "measured"
    # the per-layer overhead is read from the calibrating claim, not retyped
    assert "flops/tp-decode-allreduce-time" in rows["overhead"]["formula"]


def test_the_step_moves_with_the_batch_through_every_term() -> None:
    """--set batch=32: the KV read halves and the all-reduce is the 512 KiB row's."""
    code, out = run("ledger", PLACEMENT, "--set", "batch=32", "--format", "json")
    assert code == 0, out
    side = next(s for s in json.loads(out)["ledgers"] if s["option"] == "tp8")
    rows = {r["row"]: r for r in side["rows"]}
    kv = Fraction(32 * 2048 * 2 * 80 * 128 * 2, 2_970 * 10**9)
    weight_read = Fraction(2 * 70_552_387_584, 8 * 2_970 * 10**9)
    assert Fraction(rows["useful"]["value"]["exact"]) == weight_read + kv
    assert "S = 524288 B" in side["transfers"][0]["pricing"]


def test_above_the_ridge_the_step_is_the_matmul_time() -> None:
    """Batch 1024 at a 128-token context: 2*P*1024 FLOP over 8 x 989 TFLOP/s beats the weight
    read, and the KV read (the attention, a kernel of its own) adds to the matmuls."""
    code, out = run(
        "ledger", PLACEMENT, "--set", "batch=1024", "--set", "context=128", "--format", "json"
    )
    assert code == 0, out
    side = next(s for s in json.loads(out)["ledgers"] if s["option"] == "tp8")
    useful = next(r for r in side["rows"] if r["row"] == "useful")
    math = Fraction(2 * 1024 * 70_552_387_584, 8 * 989 * 10**12)
    weights = Fraction(2 * 70_552_387_584, 8 * 2_970 * 10**9)
    kv = Fraction(1024 * 128 * 2 * 80 * 128 * 2, 2_970 * 10**9)
    assert math > weights + kv
    assert Fraction(useful["value"]["exact"]) == math + kv
    assert "compute-bound" in useful["formula"]
