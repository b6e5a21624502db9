"""kb.ledger.endtoend: every end-to-end receipt row gets a composed prediction and a state.

The prediction of a row is the Scenario its conditions state, priced by the composed
ledger (no second path, no value typed per row); its state follows the band declared in
kb/data/end-to-end.json; rows of a receipt an engine was fitted to are calibration and
never validate; a row kb cannot evaluate says why.
"""

from __future__ import annotations

import copy
import json
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.ledger.endtoend import (
    CALIBRATION,
    CONTRADICTED,
    NOT_EVALUABLE,
    UNDETERMINED,
    VALIDATED,
    RowResult,
    calibration_receipts,
    declaration,
    distribution,
    evaluate_row,
    percent,
)
from kb.ledger.scenario import Scenario, outcome
from kb.model import KnowledgeBase
from tests.conftest import SHIPPED_RECORDS
from tests.shipped_outputs import ONE_WORKER, end_to_end_json, end_to_end_results, end_to_end_text

ROOT = Path(__file__).resolve().parents[2] / "records"
NEMO_TP = "receipts/nemo-llama-2-7b-h100-tp-latency"
NEMO_TP1 = "receipts/nemo-llama-2-7b-h100-tp1-latency"
pytestmark = ONE_WORKER  # the shipped rows priced once a run (tests/shipped_outputs.py)


@pytest.fixture(scope="module")
def results() -> list[RowResult]:
    """`evaluate_all` on the shipped records, priced once per worker (tests/shipped_outputs.py)."""
    return list(end_to_end_results())


def _row(kb: KnowledgeBase, receipt: str, index: int) -> tuple[Any, dict[str, Any]]:
    record = kb.get(receipt)
    assert record is not None
    return record, copy.deepcopy(dict(record.data["results"][index]))


def test_every_end_to_end_row_has_a_state(shipped: KnowledgeBase, results: list[RowResult]) -> None:
    rows = sum(
        len(r.data["results"])
        for r in shipped.of_kind("receipt")
        if r.data.get("pattern") == "end-to-end"
    )
    assert len(results) == rows
    for r in results:
        assert r.state in (VALIDATED, CONTRADICTED, NOT_EVALUABLE, CALIBRATION, UNDETERMINED)
        if r.state == UNDETERMINED:  # priced under each layout its source leaves open
            assert r.layouts and r.error is None and not r.validation
        if r.state == NOT_EVALUABLE:
            assert r.reason, r
        if r.error is not None:
            assert r.predicted is not None and r.measured is not None
            assert r.error == (r.predicted - r.measured) / r.measured
            band = declaration().band
            if r.state == VALIDATED:
                assert abs(r.error) <= band
            if r.state == CONTRADICTED:
                assert abs(r.error) > band
    assert any(r.state == VALIDATED for r in results)


def test_a_row_is_priced_by_the_scenario_its_conditions_state(
    shipped: KnowledgeBase, results: list[RowResult]
) -> None:
    """The NeMo TP8 batch-1 request: the row's prediction is the scenario's latency, exactly."""
    row = next(r for r in results if r.receipt == NEMO_TP and r.label == "Llama-2-7B, TP8, batch 1")
    question = Scenario(
        "models/llama-2-7b",
        "hardware/nvidia-h100-sxm",
        8,
        tp=8,
        batch=1,
        input_tokens=128,
        output_tokens=20,
        context=128 + 20 // 2,  # the declared mean context
        engine="engines/nemo",
        stock_collective=True,  # engines/nemo names no collective receipt of its own
        overhead_fallback="engines/nemo",
    )
    priced = outcome(question, shipped)
    assert row.predicted == priced.latency
    assert row.measured == Fraction(976, 10000)
    assert row.state in (VALIDATED, CONTRADICTED)


def test_calibration_receipts_never_validate(
    shipped: KnowledgeBase, results: list[RowResult]
) -> None:
    fitted = calibration_receipts(shipped)
    assert NEMO_TP1 in fitted and "receipts/sglang-llama-3-8b-decode-cuda-graphs" in fitted
    for r in results:
        if r.receipt in fitted:
            assert r.state == CALIBRATION and not r.validation
    # the same row, not declared calibration, would be a validation row
    record, row = _row(shipped, NEMO_TP1, 0)
    assert evaluate_row(shipped, record, 0, row, calibration=False).state == VALIDATED
    assert evaluate_row(shipped, record, 0, row, calibration=True).state == CALIBRATION
    found = distribution(results)
    assert found.rows == sum(1 for r in results if r.state in (VALIDATED, CONTRADICTED))


def test_the_declared_band_decides_the_state(shipped: KnowledgeBase) -> None:
    record, row = _row(shipped, NEMO_TP, 8)
    predicted = evaluate_row(shipped, record, 8, row, False).predicted
    assert predicted is not None and declaration().band == Fraction(1, 4)
    for over, state in ((Fraction(6, 5), VALIDATED), (Fraction(13, 10), CONTRADICTED)):
        edited = dict(row)
        measured = predicted / over  # error = over - 1: +20% inside the band, +30% outside
        edited["value"] = {"value": str(measured * 1000), "unit": "ms", "basis": "measured"}
        found = evaluate_row(shipped, record, 8, edited, False)
        assert found.error == over - 1 and found.state == state


@pytest.mark.parametrize(
    ("drop", "words"),
    [
        ("measures", "measures 'average request latency', which the composed ledger does not"),
        ("batch", "the source states neither the batch nor the concurrency"),
        ("tp", "the source does not state the tensor-parallel degree"),
        ("input_tokens", "the source does not state the input length"),
    ],
)
def test_a_row_without_a_condition_says_why(shipped: KnowledgeBase, drop: str, words: str) -> None:
    record, row = _row(shipped, NEMO_TP, 8)
    del row[drop]
    found = evaluate_row(shipped, record, 8, row, False)
    assert found.state == NOT_EVALUABLE and words in found.reason
    assert found.predicted is None


def test_expert_parallel_rows_are_priced_by_the_composed_ledger(results: list[RowResult]) -> None:
    """EP is composed (kb/ledger/expert.py): its rows are judged, none refused for being EP."""
    ep = [r for r in results if (r.conditions or {}).get("ep", 1) > 1]
    assert ep and not [r for r in ep if "expert parallelism" in r.reason]
    judged = [r for r in ep if r.validation]
    assert judged and any(r.predicted is not None for r in judged)


def test_percent_is_exact_to_a_tenth() -> None:
    assert percent(Fraction(8, 100)) == "+8.0%"
    assert percent(Fraction(-2779, 10000)) == "-27.8%"
    assert percent(None) == ""


def test_kb_list_end_to_end_prints_every_row(results: list[RowResult]) -> None:
    """The command's own run (its JSON and its text, each printed once per worker) agrees
    with `evaluate_all`'s rows and distribution."""
    document = end_to_end_json()
    assert len(document["rows"]) == len(results)
    found = distribution(results)
    assert document["summary"]["validation_rows"] == found.rows
    assert document["summary"]["exact"]["median_abs_error"] == str(found.median_abs_error)
    first = document["rows"][0]
    for key in ("receipt", "label", "conditions", "predicted", "measured", "error", "state"):
        assert key in first
    median = percent(found.median_abs_error).lstrip("+")
    assert f"{found.rows} validation rows: median |error| {median}" in end_to_end_text()


ODD = (
    NEMO_TP,  # its engine named as a model record
    "receipts/lmdeploy-llama-2-7b-a100-tp1-static",  # a value in the wrong dimension
    "receipts/vllm-ci-llama-3-70b-h200-tp4-latency-batch8",  # off its schema
)


def test_odd_rows_are_states_with_reasons_never_a_traceback(tmp_path: Path) -> None:
    """A row whose engine record is a model, a value in the wrong dimension, a broken receipt.

    Per push on the three receipts and every shipped record they reach by reference
    (tests/small_tree.closure, ~140 records): a row's state is decided by its receipt,
    its row and the records they name (engine, model, hardware, calibration receipts),
    all carried by the closure, so the other receipts' rows change nothing asserted
    here; the three files are read and edited below (a missing one fails) and the
    edited receipt's rows must be listed. `KB_FULL=1`: a copy of the whole shipped tree.
    """
    from tests.small_tree import FULL, closure, shipped_file

    shipped_copy = tmp_path / "records"
    if FULL:
        shutil.copytree(SHIPPED_RECORDS, shipped_copy)
    else:
        for record_id in sorted(closure((*ODD, "models/llama-2-7b"))):
            relative = shipped_file(record_id)
            (shipped_copy / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(SHIPPED_RECORDS / relative, shipped_copy / relative)
    nemo = shipped_copy / "receipts" / "nemo-llama-2-7b-h100-tp-latency.yaml"
    text = nemo.read_text()
    text = text.replace("record: engines/nemo", "record: models/llama-2-7b", 1)
    nemo.write_text(text)
    lmdeploy = shipped_copy / "receipts" / "lmdeploy-llama-2-7b-a100-tp1-static.yaml"
    lines = lmdeploy.read_text().split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith("  - {label:"))
    lines[first] = lines[first].replace("unit: s,", "unit: GB,", 1)
    lmdeploy.write_text("\n".join(lines))
    broken = shipped_copy / "receipts" / "vllm-ci-llama-3-70b-h200-tp4-latency-batch8.yaml"
    broken.write_text(broken.read_text().replace("measures: request_latency", "measures: 7", 1))
    out = CliRunner().invoke(
        cli, ["list", "--end-to-end", "--format", "json", "--root", str(shipped_copy)]
    )
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)["rows"]
    by_receipt: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_receipt.setdefault(row["receipt"], []).append(row)
    assert by_receipt[NEMO_TP]
    for row in by_receipt[NEMO_TP]:
        assert row["state"] == NOT_EVALUABLE
        assert "engine models/llama-2-7b is a model record, not an engine" in row["reason"]
    odd = by_receipt["receipts/lmdeploy-llama-2-7b-a100-tp1-static"][0]
    assert odd["state"] == NOT_EVALUABLE and "not a positive figure in s" in odd["reason"]
    # a receipt that fails its schema has its own finding (SC001) and no rows here
    assert "receipts/vllm-ci-llama-3-70b-h200-tp4-latency-batch8" not in by_receipt
