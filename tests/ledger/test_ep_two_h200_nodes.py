"""DeepSeek-V3 across two H200 nodes: expert-parallel transfers priced by measured rows (issue 39).

placements/deepseek-v3-prefill-two-h200-nodes-ep16-fp8-vs-bf16-dispatch is run as a user would
(`kb ledger`); the expected times are computed here from the receipts' own figures (each row's
size over its measured bandwidth, once per MoE layer), independently of kb.ledger.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from click.testing import CliRunner

from kb.api import open_kb
from kb.cli import cli

ROOT = Path(__file__).resolve().parents[2] / "records"
PLACEMENT = "placements/deepseek-v3-prefill-two-h200-nodes-ep16-fp8-vs-bf16-dispatch"
DISPATCH = "receipts/deepep-h200-2node-normal-dispatch"
COMBINE = "receipts/deepep-h200-2node-normal-combine"


def _row_time(receipt: str, row: int) -> Fraction:
    kb = open_kb(ROOT, with_references=False)
    record = kb.get(receipt)
    assert record is not None
    size = Fraction(str(record.get(f"results.{row}.message_size")["value"]))
    rate = record.get(f"results.{row}.algorithm_bandwidth")
    assert rate["unit"] == "GB/s"
    return size / (Fraction(str(rate["value"])) * 10**9)


def _ledger() -> dict[str, object]:
    result = CliRunner().invoke(cli, ["ledger", PLACEMENT, "--format", "json", "--root", str(ROOT)])
    assert result.exit_code == 0, result.output
    doc: dict[str, object] = json.loads(result.output)
    return doc


def test_every_cross_node_transfer_is_priced_by_a_measured_h200_row() -> None:
    result = CliRunner().invoke(cli, ["ledger", PLACEMENT, "--root", str(ROOT)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.count("priced by measured: receipts/deepep-h200-2node-normal-") == 4
    assert "line rate" not in out and "unverified" not in out
    assert "870 messages x 0 s" in out  # the rows' time holds the latency: none is added


def test_the_exposed_time_is_the_rows_time_once_per_moe_layer() -> None:
    layers = 61 - 3  # models/deepseek-v3: layers less dense_layers
    fp8 = layers * (_row_time(DISPATCH, 0) + _row_time(COMBINE, 0))
    bf16 = layers * (_row_time(DISPATCH, 1) + _row_time(COMBINE, 0))
    doc = _ledger()
    ledgers = {entry["option"]: entry for entry in doc["ledgers"]}  # type: ignore[attr-defined]
    rows = {o: {r["row"]: r for r in ledgers[o]["rows"]} for o in ledgers}
    exposed_fp8 = Fraction(rows["ep16-fp8-dispatch"]["exposed"]["value"]["exact"])
    exposed_bf16 = Fraction(rows["ep16-bf16-dispatch"]["exposed"]["value"]["exact"])
    assert exposed_fp8 == fp8
    assert exposed_bf16 == bf16
    assert exposed_bf16 > exposed_fp8  # twice the dispatch bytes at a rate only 7% higher
