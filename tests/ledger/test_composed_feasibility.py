"""Feasibility first, composed: weights and KV cache per device from the model and the classes.

The shipped placement placements/deepseek-v3-fp8-8x-h200-vs-8x-l40s is run as a user
would (`kb ledger`), and edited copies of it are resolved against the shipped records
to show what a bad composed option reports.
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
DSV3 = "placements/deepseek-v3-fp8-8x-h200-vs-8x-l40s"
GIB = 2**30


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*args, "--root", str(ROOT)])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def shipped() -> KnowledgeBase:
    from kb.checker import schema_stage

    kb = open_kb(ROOT, with_references=False)
    schema_stage(kb)  # the ledger reads typed views
    return kb


def _resolve(kb: KnowledgeBase, data: dict[str, Any]) -> PlacementSpec | Unresolved:
    record = Record(data["id"], "placement", "edited.yaml", data, "")
    return resolve_view(placement(record), record, kb)


def _model_figures(kb: KnowledgeBase, model: str) -> dict[str, Any]:
    record = kb.get(model)
    assert record is not None
    return {
        "P": Fraction(record.get("derived.params_total")["value"]),
        "kv_elements": record.get("derived.kv_elements_per_token"),
    }


def test_deepseek_v3_fp8_on_eight_l40s_does_not_fit_and_says_by_how_much() -> None:
    code, out = run("ledger", DSV3)
    assert code == 0, out
    weights_gib = 671026419200 / 8 / GIB  # FP8: one byte per parameter, over tp = 8
    kv_gib = 35136 * 2 * 4096 / GIB  # the MLA latent of one 4096-token sequence, BF16
    capacity_gib = 48e9 / GIB  # the L40S's 48 GB label (decimal: GDDR6)
    assert (
        f"does not fit: needs {weights_gib + kv_gib:.2f} GiB per device, has {capacity_gib:.2f} GiB"
        in out
    )
    assert "l40s-tp8: not computed: infeasible counterfactual" in out
    assert "withheld: l40s-tp8 cannot hold the state" in out


def test_composed_feasibility_json_has_the_parts_and_the_headroom() -> None:
    code, out = run("ledger", DSV3, "--format", "json")
    assert code == 0, out
    doc = json.loads(out)
    h200, l40s = doc["feasibility"]
    assert (h200["feasible"], l40s["feasible"]) == (True, False)
    device = h200["devices"][0]
    weights = Fraction(671026419200, 8)
    per_token = Fraction(35136 * 2)  # every TP rank holds the whole MLA latent
    assert Fraction(device["parts"]["weights"]["exact"]) == weights
    assert Fraction(device["parts"]["kv_cache"]["exact"]) == per_token * 4096
    free = 141 * GIB - weights
    assert device["max_batch"] == math.floor(free / (per_token * 4096))
    assert device["max_context"] == math.floor(free / per_token)
    assert doc["ledgers"][1] == {
        "option": "l40s-tp8",
        "computed": False,
        "reason": "infeasible counterfactual",
    }
    assert l40s["devices"][0]["fits"] is False


def test_batch_beyond_the_headroom_turns_the_h200_infeasible_too(
    shipped: KnowledgeBase,
) -> None:
    record = shipped.get(DSV3)
    assert record is not None
    code, out = run("ledger", DSV3, "--format", "json")
    max_batch = json.loads(out)["feasibility"][0]["devices"][0]["max_batch"]
    code, out = run("ledger", DSV3, "--set", f"batch={max_batch}", "--format", "json")
    assert json.loads(out)["feasibility"][0]["feasible"] is True
    code, out = run("ledger", DSV3, "--set", f"batch={max_batch + 1}", "--format", "json")
    assert json.loads(out)["feasibility"][0]["feasible"] is False


def test_gqa_kv_heads_shard_over_tp_and_replicate_past_n_kv(shipped: KnowledgeBase) -> None:
    """Llama 3.1 70B has 8 KV heads: TP8 holds one per rank, TP16 still one (replicated)."""
    record = shipped.get(DSV3)
    assert record is not None
    data = copy.deepcopy(dict(record.data))
    data["envelope"]["model"] = "models/llama-3.1-70b"
    data["envelope"]["workload"]["kv_bytes"] = {"value": 2, "unit": "B", "basis": "assumed"}
    data["reference"]["devices"][0]["count"] = 16
    data["reference"]["degrees"] = {"tp": 16}
    data["candidates"][0]["devices"][0]["count"] = 4
    data["candidates"][0]["degrees"] = {"tp": 4}
    spec = _resolve(shipped, data)
    assert isinstance(spec, PlacementSpec), spec
    tp16, tp4 = (o.derived for o in spec.options)
    assert tp16 is not None and tp4 is not None
    per_head = 2 * 80 * 128 * 2  # 2 (K and V) * layers * head_dim * bytes
    assert tp16.kv_per_token.value == per_head * 1
    assert tp4.kv_per_token.value == per_head * 2
    analysis = analyze_spec(spec)
    assert analysis.sides[1].feasibility.devices[0].parts[1] == ("kv_cache", per_head * 2 * 4096)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["reference"].pop("degrees"), "states its degrees"),
        (lambda d: d["reference"].update(degrees={"tp": 4}), "tp*pp*dp = 4*1*1 = 4"),
        (lambda d: d["reference"].update(degrees={"tp": 4, "dp": 2}), "does not split evenly"),
        (lambda d: d["reference"].pop("tp_collective"), "need tp_collective"),
        (lambda d: d["reference"].update(degrees={"tp": 4, "pp": 2}), "need stage_link"),
    ],
)
def test_an_option_kb_cannot_compose_is_a_gap_not_a_guess(
    shipped: KnowledgeBase, edit: Any, message: str
) -> None:
    record = shipped.get(DSV3)
    assert record is not None
    data = copy.deepcopy(dict(record.data))
    edit(data)
    spec = _resolve(shipped, data)
    assert isinstance(spec, Unresolved)
    assert any(message in gap.message for gap in spec.gaps), spec.gaps


def test_kv_fit_below_zero_is_refused_with_the_reason() -> None:
    code, out = run(
        "calc",
        "flops/decode-kv-cache-read",
        "fit",
        "--set",
        "N=8",
        "--set",
        "Cap=hardware/nvidia-l40s#memory.capacity",
        "--set",
        "P=models/deepseek-v3#derived.params_total",
        "--set",
        "b_w=1 B",
        "--set",
        "kv_tok=70272 B",
    )
    assert code == 1, out
    assert "weights-fit" in out and "does not fit" in out
    code, out = run("calc", "flops/decode-kv-cache-read", "fit", "--claim", "fit-70b-8xh100")
    assert code == 0 and "validity weights-fit holds" in out, out


def test_measured_terms_on_a_typed_option_are_a_gap(shipped: KnowledgeBase) -> None:
    """Only a composed option has derived rows a measurement can replace."""
    record = shipped.get("placements/coherent-host-vs-two-hosts-8b")
    assert record is not None
    data = copy.deepcopy(dict(record.data))
    data["reference"]["measured_terms"] = {
        "useful": {
            "time": {"value": 1, "unit": "ms", "basis": "measured"},
            "receipt": "receipts/sglang-llama-3-8b-decode-cuda-graphs",
        }
    }
    spec = _resolve(shipped, data)
    gaps = spec.gaps
    assert any("only an option of a placement with an envelope workload" in g.message for g in gaps)


def test_an_moe_step_reads_the_experts_its_batch_touches() -> None:
    """DeepSeek-V3 FP8 on 8 H200: moe-decode-expert-read's bound at batch 1 and 64, over TP8."""
    e, k, layers, d, d_ff = 256, 8, 61 - 3, 7168, 2048
    experts = 3 * layers * e * d * d_ff
    rest = 671026419200 - experts
    for batch in (1, 64):
        code, out = run("ledger", DSV3, "--set", f"batch={batch}", "--format", "json")
        assert code == 0, out
        rows = {r["row"]: r for r in json.loads(out)["ledgers"][0]["rows"]}
        touched = 1 - (1 - Fraction(k, e)) ** batch
        weight_read = (rest + touched * experts) / Fraction(8 * 4_150 * 10**9)  # FP8: 1 B each
        kv = Fraction(batch * 4096 * 35136 * 2, 4_150 * 10**9)
        assert Fraction(rows["useful"]["value"]["exact"]) == weight_read + kv
        assert "moe-decode-expert-read" in rows["useful"]["formula"]


def test_set_context_varies_the_cache_of_a_composed_placement_only() -> None:
    tp = "placements/tp-llama-3.1-70b-h100-tp4-vs-tp8"
    code, out = run("ledger", tp, "--set", "context=8192", "--format", "json")
    assert code == 0, out
    parts = json.loads(out)["feasibility"][1]["devices"][0]["parts"]
    assert Fraction(parts["kv_cache"]["exact"]) == 64 * 8192 * 2 * 80 * 1 * 128 * 2
    code, out = run("ledger", "placements/coherent-host-vs-two-hosts-8b", "--set", "context=8")
    assert code == 2 and "only a placement with an envelope workload" in out
    code, out = run("ledger", tp, "--set", "context=0")
    assert code == 2 and "expected a whole number of tokens" in out
