"""docs/ledger.md's worked example: workload -> ledger -> prediction -> the measured receipt.

placements/llama-2-7b-h100-nemo-tp2-tp4-tp8 is composed at the conditions of NVIDIA's
NeMo Llama-2-7B table; output tokens x T_total predicts each request, set beside the
receipt's measured row. The numbers are the ones docs/ledger.md prints, and the test
reads the receipt rather than typing the measurements.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kb.cli import cli

ROOT = Path(__file__).resolve().parents[2]
PLACEMENT = "placements/llama-2-7b-h100-nemo-tp2-tp4-tp8"
RECEIPT = ROOT / "records" / "receipts" / "nemo-llama-2-7b-h100-tp-latency.yaml"
DOC = (ROOT / "docs" / "ledger.md").read_text(encoding="utf-8")


def _measured() -> dict[int, tuple[int, Fraction]]:
    """tp -> (output tokens, measured request latency in ms) of the batch-one rows."""
    rows = yaml.safe_load(RECEIPT.read_text(encoding="utf-8"))["results"]
    return {
        r["tp"]: (r["output_tokens"], Fraction(str(r["value"]["value"])))
        for r in rows
        if r["batch"] == 1
    }


@pytest.mark.parametrize(
    ("option", "tp", "predicted", "error"),
    [
        ("tp2", 2, "118.9 ms", "-7.6%"),
        ("tp4", 4, "98.5 ms", "-8.3%"),
        ("tp8", 8, "91.1 ms", "-6.6%"),
    ],
)
def test_the_composed_step_predicts_the_measured_request(
    option: str, tp: int, predicted: str, error: str
) -> None:
    result = CliRunner().invoke(
        cli, ["ledger", PLACEMENT, "--format", "json", "--root", str(ROOT / "records")]
    )
    assert result.exit_code == 0, result.output
    side = next(s for s in json.loads(result.output)["ledgers"] if s["option"] == option)
    outputs, measured = _measured()[tp]
    request = outputs * Fraction(side["total"]["exact"]) * 1000  # ms
    relative = (request - measured) / measured
    assert abs(relative) <= Fraction(1, 4)  # the band the class's predictions use
    assert f"{float(request):.1f} ms" == predicted
    assert f"{float(relative) * 100:.1f}%" == error
    assert f"| {option.upper()} |" in DOC and predicted in DOC and error in DOC
