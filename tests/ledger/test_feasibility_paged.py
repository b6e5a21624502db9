"""Feasibility by the engine's paging and reserve (issue 39 item 1).

placements/llama-3.1-70b-vllm-h100-tp8-vs-tp4-b64-8k is run as a user would (`kb ledger`),
and edited copies of it are resolved against the shipped records: the expected figures
are computed here from the records' own numbers (vLLM's share of each GPU and its block,
the H100's capacity, the model's geometry), independently of kb.ledger.feasibility.
"""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kb.api import open_kb
from kb.cli import cli
from kb.kinds.placement import placement
from kb.ledger.analysis import analyze_spec
from kb.ledger.inputs import PlacementSpec, Unresolved, resolve_view
from kb.model import KnowledgeBase, Record

ROOT = Path(__file__).resolve().parents[2] / "records"
PLACEMENT = "placements/llama-3.1-70b-vllm-h100-tp8-vs-tp4-b64-8k"
GIB = 2**30


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*args, "--root", str(ROOT)])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def shipped() -> KnowledgeBase:
    from kb.checker import schema_stage

    kb = open_kb(ROOT, with_references=False)
    schema_stage(kb)
    return kb


def _figure(kb: KnowledgeBase, record_id: str, path: str) -> Fraction:
    record = kb.get(record_id)
    assert record is not None
    return Fraction(str(record.get(path)["value"]))


def _expected(kb: KnowledgeBase, tp: int, context: int) -> dict[str, Any]:
    """The paged arithmetic from the records' figures: reserve, blocks, largest batch."""
    u = _figure(kb, "engines/vllm", "memory.utilization")
    blk = int(_figure(kb, "engines/vllm", "memory.block_tokens"))
    capacity = _figure(kb, "hardware/nvidia-h100-sxm", "memory.capacity") * GIB
    params = _figure(kb, "models/llama-3.1-70b", "derived.params_total")
    weights = params * 2 / tp
    per_token = 2 * 80 * 128 * 2 * Fraction(max(8, tp), tp)  # K and V, layers, head, bf16
    reserve = (1 - u) * capacity
    # vLLM's workspace: its share less the weights and the pool of the calibrating start-up
    fit = "receipts/jingchaozhang-qwen2.5-72b-h100-vllm-kv-pool-tp4"
    workspace = (
        u * capacity
        - (_figure(kb, fit, "results.0.value") + _figure(kb, fit, "results.1.value")) * GIB
    )
    blocks = math.floor((capacity - reserve - weights - workspace) / (per_token * blk))
    per_seq = math.ceil(context / blk)
    return {
        "workspace": workspace,
        "reserve": reserve,
        "weights": weights,
        "per_token": per_token,
        "alloc": per_seq * blk,
        "max_batch": blocks // per_seq,
        "no_reserve": math.floor((capacity - weights) / (per_token * context)),
    }


def _resolve(kb: KnowledgeBase, data: dict[str, Any]) -> PlacementSpec | Unresolved:
    record = Record(data["id"], "placement", "edited.yaml", data, "")
    return resolve_view(placement(record), record, kb)


def _edited(kb: KnowledgeBase) -> dict[str, Any]:
    record = kb.get(PLACEMENT)
    assert record is not None
    return copy.deepcopy(dict(record.data))


def test_four_h100_do_not_hold_batch_64_at_8k_inside_vllms_share(shipped: KnowledgeBase) -> None:
    code, out = run("ledger", PLACEMENT)
    assert code == 0, out
    e = _expected(shipped, 4, 8192)
    needs = (e["weights"] + e["per_token"] * e["alloc"] * 64 + e["workspace"] + e["reserve"]) / GIB
    assert f"does not fit: needs {float(needs):.2f} GiB per device, has 80.00 GiB" in out
    assert f"largest batch at this context {e['max_batch']}" in out
    assert "engines/vllm (0.9 of each device, 16-token blocks, workspace 5.12 GiB)" in out
    assert "tp4: not computed: infeasible counterfactual" in out
    # the acceptance figure: fewer than 64 sequences of 8k tokens fit four H100 under vLLM
    assert e["max_batch"] == 54 < 64 <= e["no_reserve"]


def test_the_feasible_tp8_reports_its_headroom_in_whole_blocks(shipped: KnowledgeBase) -> None:
    code, out = run("ledger", PLACEMENT, "--format", "json")
    assert code == 0, out
    tp8, tp4 = json.loads(out)["feasibility"]
    assert (tp8["feasible"], tp4["feasible"]) == (True, False)
    device = tp8["devices"][0]
    e = _expected(shipped, 8, 8192)
    assert Fraction(device["reserve"]["exact"]) == e["reserve"]
    assert Fraction(device["parts"]["kv_cache"]["exact"]) == e["per_token"] * e["alloc"] * 64
    assert device["max_batch"] == e["max_batch"]
    assert (
        device["paging"] == "engines/vllm (0.9 of each device, 16-token blocks, workspace 5.12 GiB)"
    )
    assert Fraction(device["parts"]["workspace"]["exact"]) == e["workspace"]
    free = 80 * GIB - e["reserve"] - e["weights"] - e["workspace"]
    blocks = math.floor(free / (e["per_token"] * 16))
    assert device["max_context"] == (blocks // 64) * 16


def test_a_context_off_the_block_is_rounded_up_to_whole_blocks(shipped: KnowledgeBase) -> None:
    data = _edited(shipped)
    data["envelope"]["workload"]["context"] = 8193  # one token into a new block
    spec = _resolve(shipped, data)
    assert isinstance(spec, PlacementSpec), spec
    fit = analyze_spec(spec).sides[0].feasibility.devices[0]
    e = _expected(shipped, 8, 8193)
    assert e["alloc"] == 8208
    assert fit.parts[1] == ("kv_cache", e["per_token"] * 8208 * 64)
    assert fit.max_batch == e["max_batch"]


def test_without_the_engines_memory_the_old_count_says_batch_64_fits(
    shipped: KnowledgeBase,
) -> None:
    """engines/nemo states no memory: the cache is counted against the whole capacity."""
    data = _edited(shipped)
    data["envelope"]["workload"]["engine"] = "engines/nemo"
    data["envelope"]["workload"].pop("overhead_fallback")
    spec = _resolve(shipped, data)
    assert isinstance(spec, PlacementSpec), spec
    sides = analyze_spec(spec).sides
    assert sides[1].feasibility.feasible is True
    tp4 = sides[1].feasibility.devices[0]
    assert tp4.reserve == 0 and tp4.paging == ""
    assert tp4.max_batch == _expected(shipped, 4, 8192)["no_reserve"]


@pytest.mark.parametrize(
    ("memory", "message"),
    [
        ({"utilization": {"value": 1.5, "unit": "1", "basis": "assumed", "note": "x"}}, "(0, 1]"),
        ({"workspace": {"value": 2, "unit": "s", "basis": "assumed", "note": "x"}}, "dimension"),
        ({"block_tokens": {"value": 2.5, "unit": "1", "basis": "assumed", "note": "x"}}, "whole"),
        (
            {"utilization": {"value": 90, "unit": "GB", "basis": "assumed", "note": "x"}},
            "dimension",
        ),
    ],
)
def test_a_bad_engine_memory_is_a_gap_not_a_traceback(
    shipped: KnowledgeBase, memory: dict[str, Any], message: str
) -> None:
    from kb.checker import schema_stage

    kb = open_kb(ROOT, with_references=False)
    engine = kb.get("engines/vllm")
    assert engine is not None
    data = copy.deepcopy(dict(engine.data))
    data["memory"] = memory
    kb.records["engines/vllm"] = Record("engines/vllm", "engine", engine.path, data, "")
    schema_stage(kb)
    spec = _resolve(kb, _edited(shipped))
    gaps = spec.gaps if isinstance(spec, PlacementSpec) else spec.gaps
    assert any(message in g.message and "engines/vllm" in g.message for g in gaps), gaps
