"""Llama 3.1 70B on 16 x H100 across two nodes: TP8 x PP2, TP16 and DP2 x TP8, each composed.

`kb ledger placements/llama-3.1-70b-16x-h100-two-nodes --format json`, as a user runs it;
each expectation is the arithmetic of the derived rows, worked here by hand.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kb.cli import cli

ROOT = Path(__file__).resolve().parents[2] / "records"
PLACEMENT = "placements/llama-3.1-70b-16x-h100-two-nodes"
BW = 2_970 * 10**9  # H100 SXM HBM, measured Triad (memory.bandwidth_achieved), B/s
WEIGHTS = 2 * 70_552_387_584  # bf16
KV_HEAD_TOKEN = 2 * 80 * 128 * 2  # K and V, 80 layers, head_dim 128, bf16: one KV head
T_O = 80 * Fraction(985, 10**7)  # engines/nemo: 98.5 us per layer
# The non-matmul kernels' growth (session 26: Llama-2-70B's H100 TP8 rows, the same kernel
# shape, 17.0 us at 1 token and 20.0 at 128): 80 layers x 3.0 us x (tokens - 1)/127.
KERNEL_STEP_US = Fraction(3, 10**6)
TWO_NODE_CURVE = "receipts/jingchaozhang-nd-h100-v5-2node-torch-nccl-all-reduce"


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["ledger", PLACEMENT, "--format", "json", "--root", str(ROOT)])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


def _side(doc: dict[str, Any], name: str) -> dict[str, Any]:
    side: dict[str, Any] = next(s for s in doc["ledgers"] if s["option"] == name)
    return side


def _row(side: dict[str, Any], name: str) -> Fraction:
    return Fraction(next(r for r in side["rows"] if r["row"] == name)["value"]["exact"])


def test_every_two_node_mapping_fits_and_is_priced(doc: dict[str, Any]) -> None:
    assert [f["feasible"] for f in doc["feasibility"]] == [True, True, True, True]
    assert [s["computed"] for s in doc["ledgers"]] == [True, True, True, True]
    fits = {f["option"]: f["devices"][0]["parts"] for f in doc["feasibility"]}
    assert Fraction(fits["tp8-pp2"]["weights"]["exact"]) == Fraction(WEIGHTS, 16)
    assert Fraction(fits["tp16"]["weights"]["exact"]) == Fraction(WEIGHTS, 16)
    # TP16 past the 8 KV heads: one (replicated) head per rank, as TP8; PP2 halves the layers
    assert Fraction(fits["tp16"]["kv_cache"]["exact"]) == 64 * 2048 * KV_HEAD_TOKEN
    assert Fraction(fits["tp8-pp2"]["kv_cache"]["exact"]) == 64 * 2048 * KV_HEAD_TOKEN / 2
    assert Fraction(fits["dp2-tp8"]["kv_cache"]["exact"]) == 32 * 2048 * KV_HEAD_TOKEN


def test_pipeline_adds_one_stage_send_and_keeps_the_reads_of_the_whole_model(
    doc: dict[str, Any],
) -> None:
    tp8, pp = _side(doc, "tp8-one-node"), _side(doc, "tp8-pp2")
    assert _row(pp, "useful") == _row(tp8, "useful")  # both stages' reads, in turn
    assert _row(pp, "useful") == Fraction(WEIGHTS, 8 * BW) + Fraction(64 * 2048 * KV_HEAD_TOKEN, BW)
    send = next(t for t in pp["transfers"] if t["name"] == "pp-stage-send")
    assert send["messages"] == 1
    # 64 sequences x d_model 8192 x 2 B = 1 MiB: the measured row of that size, 54 us
    assert Fraction(send["raw"]["exact"]) == Fraction(54, 10**6)
    assert send["provenance"] == "measured"
    assert "receipts/vidur-h100-dgx-inter-node-send-recv row" in send["pricing"]
    total = Fraction(pp["total"]["exact"]) - Fraction(tp8["total"]["exact"])
    assert total == Fraction(send["exposed"]["exact"])


def test_data_parallel_halves_each_replicas_batch(doc: dict[str, Any]) -> None:
    dp = _side(doc, "dp2-tp8")
    assert _row(dp, "useful") == Fraction(WEIGHTS, 8 * BW) + Fraction(32 * 2048 * KV_HEAD_TOKEN, BW)
    assert _row(dp, "overhead") == T_O + 80 * KERNEL_STEP_US * 31 / 127  # 32 tokens a replica
    assert "S = 524288 B" in dp["transfers"][0]["pricing"]  # the 512 KiB row: 32 x 16 KiB
    assert _row(dp, "exposed") == 160 * Fraction(221, 10**7)


def test_tp16_prices_every_all_reduce_across_infiniband_from_the_two_node_curve(
    doc: dict[str, Any],
) -> None:
    tp16 = _side(doc, "tp16")
    (ar,) = tp16["transfers"]
    assert ar["link"] == "interconnects/infiniband-ndr"
    assert ar["messages"] == 160 * 2 * 15  # ring all-reduce: 2(n - 1) steps each
    # the 16-rank two-node curve covers 1 MiB (since session 24): linear in time between its
    # 256 KB (0.13 ms) and 4 MB (0.20 ms) rows, the latency inside the measured time
    assert ar["provenance"] == "measured" and ar["receipts"] == [TWO_NODE_CURVE]
    assert Fraction(ar["latency"]["exact"]) == 0
    size, low, high = 64 * 8192 * 2, 256 * 1024, 4 * 1024 * 1024
    each = Fraction(13, 10**5) + Fraction(7, 10**5) * Fraction(size - low, high - low)
    assert Fraction(ar["raw"]["exact"]) == 160 * each  # 23.04 ms a step
    assert "linear in time between rows 1" in ar["pricing"] and "rails" not in ar["pricing"]
    assert _row(tp16, "useful") == Fraction(WEIGHTS, 16 * BW) + Fraction(
        64 * 2048 * KV_HEAD_TOKEN, BW
    )


def test_a_request_prefills_the_prompt_across_the_stage_link_too() -> None:
    """With a request, the prefill pass all-reduces and sends the whole prompt (x input tokens).

    Batch 2 with 32-token prompts: the prefill matmuls (2 x 32 tokens) stay below the weight
    read, so TTFT is the read, the overhead, the prompt's all-reduces and stage send, and
    (since session 26) the 64-token pass's non-matmul kernels beyond one token.
    """
    import copy

    from kb.api import open_kb
    from kb.checker import schema_stage
    from kb.kinds.placement import placement
    from kb.ledger.analysis import analyze_spec
    from kb.ledger.inputs import PlacementSpec, resolve_view
    from kb.model import Record

    kb = open_kb(ROOT, with_references=False)
    schema_stage(kb)
    record = kb.get(PLACEMENT)
    assert record is not None
    data = copy.deepcopy(dict(record.data))
    data["envelope"]["batch"] = 2
    data["envelope"]["workload"]["request"] = {"input_tokens": 32, "output_tokens": 8}
    edited = Record(PLACEMENT, "placement", "edited.yaml", data, "")
    spec = resolve_view(placement(edited), edited, kb)
    assert isinstance(spec, PlacementSpec) and not spec.gaps, spec
    analysis = analyze_spec(spec)
    requests = {r.option: r for r in analysis.requests}
    assert set(requests) == {"tp8-one-node", "tp8-pp2", "tp16", "dp2-tp8"}
    pp = requests["tp8-pp2"]
    assert len(pp.pricing) == 2  # the all-reduces and the stage send of the prompt
    send = Fraction(54, 10**6)  # 2 x 32 tokens x d x 2 B = 1 MiB: the measured send/recv row
    ar = 160 * Fraction(338, 10**7)  # 2 x 32 x 16 KiB = 1 MiB: the TP8 1 MiB row
    weight_read = Fraction(WEIGHTS, 8 * BW)
    assert pp.prefill_collectives == ar + send
    kernels = 80 * KERNEL_STEP_US * 63 / 127
    assert pp.prefill_kernels == kernels
    assert pp.ttft == weight_read + T_O + ar + send + kernels
    side = next(s for s in analysis.sides if s.option.name == "tp8-pp2")
    assert side.ledger is not None
    assert pp.latency == pp.ttft + 7 * side.ledger.total
