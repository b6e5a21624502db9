"""gpt-fast keeps the token embedding and the output head whole on every tensor-parallel rank.

kb/data/end-to-end.json `tp_unsharded_weights` (issue 35, session 24): gpt-fast's tp.py shards
only the transformer blocks, so each engine step of a tp > 1 row also reads, on each rank,
t_u = U*b_w*(1 - 1/tp)/BW_hbm with U = 2*vocab*d. These tests hold the premise against the
engine's own printed bytes, which rows the rule reaches, one row's whole decode step against
a hand composition from the records, and that the 8-rank A100 curve pricing that row is
never read outside its measured sizes.
"""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest

from kb.kinds import views
from kb.ledger.curves import curves, price
from kb.ledger.endtoend import evaluate_row
from kb.ledger.quantities import figure
from kb.ledger.unsharded import covers, declared_versions, unsharded_parameters
from kb.model import KnowledgeBase, Record

GPT_FAST = "engines/gpt-fast"
R7B = "receipts/gpt-fast-llama-2-7b-a100-tp-sweep-batch1"
R70B = "receipts/gpt-fast-llama-2-70b-a100-tp-sweep-batch1"
NCCL = "receipts/gpt-fast-llama-2-a100-tp-sweep-nccl-batch1"
MIXTRAL = "receipts/gpt-fast-mixtral-8x7b-a100-tp-sweep-batch1"
MIXTRAL_LATER = "receipts/gpt-fast-mixtral-8x7b-a100-tp-sweep-batch1-4f98fe0"
RECEIPTS = (R7B, R70B, NCCL, MIXTRAL, MIXTRAL_LATER)
AZURE = "receipts/azure-nd-a100-v4-nccl-all-reduce"
A100 = "hardware/nvidia-a100-80gb-sxm4"
NOTE = "(tp_unsharded_weights)"
GB = Fraction(10**9)

# The README's tensor-parallel rows as sources/gpt-fast-readme quotes them: tokens per second
# and the printed "Memory Bandwidth (GB/s)" = model_size * tokens/s, model_size being the
# rank's parameters and buffers (generate.py line 289).
README_TP_ROWS = {
    ("models/llama-2-7b", 2): ("| | 2 | 168.84 | 1181.99 |", "168.84", "1181.99"),
    ("models/llama-2-7b", 4): ("| | 4 | 254.02 | 955.83 |", "254.02", "955.83"),
    ("models/llama-2-7b", 8): ("| | 8 | 328.43 | 704.10 |", "328.43", "704.10"),
    ("models/llama-2-70b", 2): ("| | 2 | 21.32 | 1481.87 |", "21.32", "1481.87"),
    ("models/llama-2-70b", 4): ("| | 4 | 38.01 | 1340.76 |", "38.01", "1340.76"),
    ("models/llama-2-70b", 8): ("| | 8 | 62.50 | 1135.29 |", "62.50", "1135.29"),
}


def _record(kb: KnowledgeBase, record_id: str) -> Record:
    record = kb.get(record_id)
    assert record is not None, record_id
    return record


def _params(kb: KnowledgeBase, model: str) -> int:
    return int(_record(kb, model).data["derived"]["params_total"]["value"])


def test_the_declaration_names_gpt_fast_versions_of_all_five_receipts(
    shipped: KnowledgeBase,
) -> None:
    versions = declared_versions()[GPT_FAST]
    for receipt in RECEIPTS:
        assert _record(shipped, receipt).get("engine.version") in versions, receipt
    assert set(declared_versions()) == {GPT_FAST}


@pytest.mark.parametrize(("model", "tp"), sorted(README_TP_ROWS))
def test_the_premise_the_engines_printed_bytes_per_rank(
    shipped: KnowledgeBase, model: str, tp: int
) -> None:
    """(P - U)*2/tp + U*2 is the rank's bytes the README prints; P*2/tp is short by U*2*(1-1/tp)."""
    quoted, rate, bandwidth = README_TP_ROWS[(model, tp)]
    notes = str(_record(shipped, "sources/gpt-fast-readme").data["notes"])
    assert quoted in " ".join(notes.split())  # the source record quotes the row
    printed = Fraction(bandwidth) * GB / Fraction(rate)
    params, unsharded = _params(shipped, model), unsharded_parameters(shipped, model)
    assert unsharded is not None
    ruled = (params - unsharded) * 2 / Fraction(tp) + unsharded * 2
    assert abs(ruled / printed - 1) < Fraction(2, 1000)  # the README's two decimals
    shortfall = printed - Fraction(params * 2, tp)  # what kb's P*2/tp leaves out: t_u's bytes
    assert abs(shortfall / (unsharded * 2 * (1 - Fraction(1, tp))) - 1) < Fraction(2, 100)


def test_exactly_the_tp_rows_of_the_five_receipts_get_it(shipped: KnowledgeBase) -> None:
    covered = []
    for receipt in RECEIPTS:
        record = _record(shipped, receipt)
        for index, row in enumerate(record.data["results"]):
            result = evaluate_row(shipped, record, index, copy.deepcopy(dict(row)), False)
            noted = any(NOTE in a for a in result.assumed)
            assert noted == (row["tp"] > 1) == covers(record, row["tp"]), (receipt, index)
            covered += [(receipt, index)] if noted else []
    assert len(covered) == 26
    vllm = _record(shipped, "receipts/vllm-custom-all-reduce-a100-e2e")
    assert not covers(vllm, 4)


def _hand_step_7b_tp8(kb: KnowledgeBase) -> Fraction:
    """The 7B tp 8 decode step composed by hand from the records, not from kb's ledger."""
    bandwidth = figure(_record(kb, A100).data["memory"]["bandwidth_achieved"], A100).value
    geometry = _record(kb, "models/llama-2-7b").data["geometry"]
    layers, d, tp = geometry["layers"], geometry["d_model"], 8
    head_dim = d // geometry["heads"]
    t_w = Fraction(_params(kb, "models/llama-2-7b") * 2, tp) / bandwidth
    kv_token = 2 * layers * (geometry["kv_heads"] // tp) * head_dim * 2  # K and V, bf16
    t_kv = 5 * kv_token / bandwidth  # the five-token prompt's cache
    pointer = _record(kb, "engines/sglang").data["per_layer_overhead"]["figure"]
    claim = int(pointer.split("#claims.")[1].split(".")[0])
    t_o = figure(_record(kb, pointer.split("#")[0]).data["claims"][claim]["expect"], "").value
    azure = _record(kb, AZURE).data["results"][0]  # 8 GPUs, 8 KiB: the curve's first row
    assert azure["gpus"] == tp and d * 2 == figure(azure["message_size"], AZURE).value
    t_ar = Fraction(d * 2) * Fraction(2 * (tp - 1), tp) / figure(azure["bus_bandwidth"], "").value
    t_u = Fraction(2 * geometry["vocab"] * d * 2) * (1 - Fraction(1, tp)) / bandwidth
    return t_w + t_kv + layers * t_o + 2 * layers * t_ar + t_u


def test_one_rows_ledger_equals_the_hand_composition(shipped: KnowledgeBase) -> None:
    """7B tp 8: t_w + t_kv + L*t_o + 2L*t_AR(8 KiB, 8 ranks) + t_u, exactly."""
    record = _record(shipped, R7B)
    row = copy.deepcopy(dict(record.data["results"][3]))
    assert (row["tp"], row["batch"], row["input_tokens"]) == (8, 1, 5)
    result = evaluate_row(shipped, record, 3, row, False)
    assert result.outcome is not None and result.outcome.tpot is not None
    hand = _hand_step_7b_tp8(shipped)
    assert result.outcome.tpot == hand
    assert result.predicted == 1 / hand
    assert any(AZURE in p for p in result.outcome.pricing)


def test_the_eight_rank_curve_is_never_read_outside_its_sizes(shipped: KnowledgeBase) -> None:
    receipt = views(shipped).receipt(_record(shipped, AZURE))
    assert receipt is not None
    eight = [p for key, p in curves(receipt, lambda n: Fraction(2 * (n - 1), n)).items()]
    assert len(eight) == 1 and eight[0][0].size == 8192
    points = eight[0]
    assert price(points, Fraction(8192), AZURE) is not None  # the 7B's message: its first row
    assert price(points, Fraction(4096), AZURE) is None  # below the smallest: not extrapolated
    assert price(points, points[-1].size * 2, AZURE) is None  # beyond the largest: likewise
