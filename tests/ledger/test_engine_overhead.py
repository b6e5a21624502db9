"""The per-layer overhead comes from the placement's engine, a named fallback, or nowhere: said.

Edited copies of placements/tp-llama-3.1-70b-h100-tp4-vs-tp8 are resolved against the
shipped records: engines/nemo and engines/vllm are calibrated (each fitted to a named-H100
receipt), engines/gpt-fast and engines/tensorrt-llm are not, so naming them prices no
overhead unless the workload names a fallback, which the row then shows as an estimate
that names it.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from kb.api import open_kb
from kb.kinds.placement import placement
from kb.ledger.analysis import analyze_spec
from kb.ledger.inputs import PlacementSpec, Unresolved, resolve_view
from kb.model import KnowledgeBase, Record

ROOT = Path(__file__).resolve().parents[2] / "records"
TP = "placements/tp-llama-3.1-70b-h100-tp4-vs-tp8"


@pytest.fixture(scope="module")
def shipped() -> KnowledgeBase:
    from kb.checker import schema_stage

    kb = open_kb(ROOT, with_references=False)
    schema_stage(kb)
    return kb


def _overhead_row(kb: KnowledgeBase, **workload: Any) -> Any:
    record = kb.get(TP)
    assert record is not None
    data = copy.deepcopy(dict(record.data))
    data["envelope"]["workload"].pop("engine")
    # the per-layer overhead alone: the non-matmul kernels' growth the placement also adds to
    # this row (decode_kernels) is held by tests/ledger/test_kernel_shapes.py
    data["envelope"]["workload"].pop("prefill_kernels", None)
    data["envelope"]["workload"].update(workload)
    edited = Record(TP, "placement", "edited.yaml", data, "")
    spec = resolve_view(placement(edited), edited, kb)
    if isinstance(spec, Unresolved) or spec.gaps:  # as analyze_placement: no ledger
        return spec if isinstance(spec, Unresolved) else Unresolved(spec.id, spec.path, spec.gaps)
    assert isinstance(spec, PlacementSpec)
    ledger = analyze_spec(spec).sides[1].ledger
    assert ledger is not None
    return ledger.row("overhead")


def test_a_calibrated_engine_prices_the_overhead_and_says_what_it_was_fitted_to(
    shipped: KnowledgeBase,
) -> None:
    row = _overhead_row(shipped, engine="engines/nemo")
    assert row.value == 80 * Fraction(985, 10**7)
    assert "calibrated for engines/nemo" in row.formula
    assert "receipts/nemo-llama-2-7b-h100-tp1-latency" in row.formula
    sglang = _overhead_row(shipped, engine="engines/sglang")
    assert sglang.value == 80 * Fraction(516, 10**7)
    assert "GPU not named" in sglang.formula and "CUDA graphs" in sglang.formula


def test_an_uncalibrated_engine_borrows_nothing_silently(shipped: KnowledgeBase) -> None:
    row = _overhead_row(shipped, engine="engines/gpt-fast")
    assert row.value == 0 and row.provenance == "none"
    assert "engines/gpt-fast has no calibrated per-layer overhead" in row.formula


def test_a_named_fallback_is_an_estimate_that_names_it(shipped: KnowledgeBase) -> None:
    row = _overhead_row(shipped, engine="engines/gpt-fast", overhead_fallback="engines/nemo")
    assert row.value == 80 * Fraction(985, 10**7)
    assert row.provenance == "estimated"
    assert "estimated: engines/gpt-fast has no calibrated per-layer overhead" in row.formula
    assert "fallback engines/nemo" in row.formula


def test_a_fallback_without_a_calibration_is_a_gap(shipped: KnowledgeBase) -> None:
    found = _overhead_row(
        shipped, engine="engines/gpt-fast", overhead_fallback="engines/tensorrt-llm"
    )
    assert isinstance(found, Unresolved)
    assert any("engines/tensorrt-llm has no calibrated" in g.message for g in found.gaps)


def test_vllm_is_priced_by_its_own_fit_and_says_so(shipped: KnowledgeBase) -> None:
    """engines/vllm's t_o is flops/serving-tp-vs-dp's fit to one TP4 request, shown as such."""
    row = _overhead_row(shipped, engine="engines/vllm")
    assert row.value == 80 * Fraction(3500, 10**8)
    assert "calibrated for engines/vllm" in row.formula
    assert "receipts/jingchaozhang-qwen2.5-72b-h100-vllm-batch1-tp4" in row.formula
    assert "CUDA graphs" in row.formula
