"""docs/ledger.md's worked example: workload -> ledger -> prediction -> the measured receipt.

placements/llama-2-7b-h100-nemo-tp2-tp4-tp8 is composed at the conditions of NVIDIA's
NeMo Llama-2-7B table (batch one, 128 prompt and 20 output tokens); `kb ledger` prices
each request (a prefill pass, then a decode step per further token), which is set
beside the receipt's measured row. The numbers are the ones docs/ledger.md prints, and
the test reads the receipt rather than typing the measurements. The request is also
held to flops/tp-decode-allreduce-time's own request_latency (`kb calc`, the inputs of
its prediction claims): they differ by exactly the decode steps' KV reads, which the
class leaves out.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kb.cli import cli

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "records"
PLACEMENT = "placements/llama-2-7b-h100-nemo-tp2-tp4-tp8"
RECEIPT = RECORDS / "receipts" / "nemo-llama-2-7b-h100-tp-latency.yaml"
DOC = (ROOT / "docs" / "ledger.md").read_text(encoding="utf-8")
MS = Fraction(1, 1000)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*args, "--root", str(RECORDS)])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    code, out = run("ledger", PLACEMENT, "--format", "json")
    assert code == 0, out
    data: dict[str, Any] = json.loads(out)
    return data


def _measured() -> dict[int, tuple[int, Fraction]]:
    """tp -> (output tokens, measured request latency in ms) of the batch-one rows."""
    rows = yaml.safe_load(RECEIPT.read_text(encoding="utf-8"))["results"]
    return {
        r["tp"]: (r["output_tokens"], Fraction(str(r["value"]["value"])))
        for r in rows
        if r["batch"] == 1
    }


@pytest.mark.parametrize(
    ("option", "tp", "ttft", "tpot", "predicted", "error"),
    [
        ("tp2", 2, "6.694 ms", "5.688 ms", "114.8 ms", "-10.8%"),
        ("tp4", 4, "6.277 ms", "4.539 ms", "92.5 ms", "-13.9%"),
        ("tp8", 8, "5.882 ms", "4.106 ms", "83.9 ms", "-14.0%"),
    ],
)
def test_the_composed_request_predicts_the_measured_one(
    doc: dict[str, Any], option: str, tp: int, ttft: str, tpot: str, predicted: str, error: str
) -> None:
    request = next(r for r in doc["requests"] if r["option"] == option)
    outputs, measured = _measured()[tp]
    assert request["output_tokens"] == outputs
    latency = Fraction(request["latency"]["exact"]) * 1000  # ms
    relative = (latency - measured) / measured
    assert abs(relative) <= Fraction(1, 4)  # the band the class's predictions use
    assert f"{float(Fraction(request['ttft']['exact']) * 1000):.3f} ms" == ttft
    assert f"{float(Fraction(request['tpot']['exact']) * 1000):.3f} ms" == tpot
    assert f"{float(latency):.1f} ms" == predicted
    assert f"{float(relative) * 100:.1f}%" == error
    row = f"| {option.upper()} | {ttft} | {tpot} | {predicted} | {float(measured)} ms | {error} |"
    assert row in DOC, row


@pytest.mark.parametrize("tp", [2, 4, 8])
def test_the_request_is_the_classes_request_latency_plus_the_kv_reads(
    doc: dict[str, Any], tp: int
) -> None:
    option = f"tp{tp}"
    side = next(s for s in doc["ledgers"] if s["option"] == option)
    decode = next(t for t in side["transfers"] if t["name"] == "tp-all-reduce")
    t_ar = Fraction(decode["raw"]["exact"]) / (2 * 32)  # c*L all-reduces per step
    code, out = run(
        "calc",
        "flops/tp-decode-allreduce-time",
        "request_latency",
        "--claim",
        f"nemo-llama-2-7b-h100-tp{tp}-b1",
        "--set",
        f"t_ar={t_ar.numerator} s / {t_ar.denominator}",
        "--format",
        "json",
    )
    assert code == 0, out
    value = json.loads(out)["value"]
    assert value["unit"] == "ms"
    by_class = Fraction(value["exact"]) * MS
    kv_step = Fraction(138 * 2 * 32 * 32 * 128 * 2, tp * 2_970 * 10**9)  # MHA: 32 KV heads
    request = next(r for r in doc["requests"] if r["option"] == option)
    assert Fraction(request["latency"]["exact"]) == by_class + 19 * kv_step
