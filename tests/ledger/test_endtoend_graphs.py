"""A row under CUDA/HIP graphs whose all-reduces fall to the stock curves.

kb/data/end-to-end.json declares (`collective.under_graphs`) that such a row is priced by
the stock library's curves, timed outside graphs (an upper bound on its all-reduces), and
says so; its per-layer overhead fallback follows the row's stated graphs state. These
tests hold both halves: the row is evaluable (not dropped for want of a curve of its own
state), it names the assumption and the graphs state, and its overhead is the graphs
fallback's, not the eager one's.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from kb.ledger.endtoend import declaration, evaluate_row
from kb.model import KnowledgeBase

ROCM_70B = "receipts/rocm-vllm-llama-3.1-70b-mi300x-tp8-latency-by-batch"
GPT_FAST_7B = "receipts/gpt-fast-llama-2-7b-a100-tp-sweep-batch1"


def _evaluate(kb: KnowledgeBase, receipt: str, index: int, **patch: object) -> object:
    record = kb.get(receipt)
    assert record is not None
    row = copy.deepcopy(dict(record.data["results"][index]))
    row.update(patch)
    return evaluate_row(kb, record, index, row, False)


def test_the_assumption_is_declared() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    assert "upper bound" in data["collective"]["under_graphs"]


@pytest.mark.parametrize(("receipt", "index"), [(ROCM_70B, 0), (GPT_FAST_7B, 3)])
def test_a_graphs_row_on_stock_curves_is_priced_and_says_so(
    shipped: KnowledgeBase, receipt: str, index: int
) -> None:
    result = _evaluate(shipped, receipt, index)
    assert result.predicted is not None, result.reason  # type: ignore[attr-defined]
    assert result.conditions["cuda_graphs"] is True  # type: ignore[attr-defined]
    assert any("under graphs" in a for a in result.assumed)  # type: ignore[attr-defined]
    overhead = next(r for r in result.outcome.rows if r.name == "overhead")  # type: ignore[attr-defined]
    if receipt == GPT_FAST_7B:  # no overhead of its own: the graphs fallback, said
        assert declaration().overhead_graphs in overhead.formula
    else:  # engines/vllm has its own fit
        assert "calibrated for engines/vllm" in overhead.formula


def test_the_stated_state_chooses_the_overhead(shipped: KnowledgeBase) -> None:
    graphs = _evaluate(shipped, GPT_FAST_7B, 3)
    eager = _evaluate(shipped, GPT_FAST_7B, 3, cuda_graphs=None)  # no state stated: eager fallback
    on = next(r for r in graphs.outcome.rows if r.name == "overhead")  # type: ignore[attr-defined]
    off = next(r for r in eager.outcome.rows if r.name == "overhead")  # type: ignore[attr-defined]
    assert declaration().overhead_otherwise in off.formula
    assert on.value < off.value  # SGLang's graphs figure is below NeMo's eager one
    assert not any("under graphs" in a for a in eager.assumed)  # type: ignore[attr-defined]
    # the all-reduces are the same stock curve either way
    exposed = [
        next(r for r in x.outcome.rows if r.name == "exposed").value  # type: ignore[attr-defined]
        for x in (graphs, eager)
    ]
    assert exposed[0] == exposed[1]


def test_the_receipts_state_graphs_as_their_sources_do(shipped: KnowledgeBase) -> None:
    for receipt in (ROCM_70B, GPT_FAST_7B):
        record = shipped.get(receipt)
        assert record is not None
        assert all(row.get("cuda_graphs") is True for row in record.data["results"])
