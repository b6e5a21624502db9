"""The shipped placements, run as a user would: `kb ledger` on records/ and `kb validate`."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from click.testing import CliRunner

from kb.cli import cli
from tests.ledger.ledger_fixtures import write_tree

ROOT = Path(__file__).resolve().parents[2] / "records"
TWO_HOSTS_8B = "placements/coherent-host-vs-two-hosts-8b"
TWO_HOSTS_70B = "placements/coherent-host-vs-two-hosts-70b"
TP_70B = "placements/tp-llama-3.1-70b-nvswitch-vs-pcie"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*args, "--root", str(ROOT)])
    return result.exit_code, result.output


def test_seed_example_break_even_is_printed_with_interconnects_on_each_side() -> None:
    """Llama 3.1 8B: reference 16.05999 GB / 800 GB/s = 20.07499 ms; the pair reads half each
    (10.037494 ms) and pays 64 all-reduces of 8192 B on 2 ranks over 400GbE: 128 messages x
    L + 524,288 B / 50 GB/s = 128*L + 10.48576 us. Tie in latency when
    128*L + 10.48576 us = 20.07499 - 10.037494 ms, i.e. L = 78.336 us (exactly)."""
    code, out = run("ledger", TWO_HOSTS_8B)
    assert code == 0, out
    assert "4. Break-even envelope" in out
    assert "latency of interconnects/ethernet-400g-roce: tie at 78.34 µs" in out
    assert "candidate faster: " in out and "interconnects/pcie-4-x16 (31.5 GB/s)" in out
    doc = json.loads(run("ledger", TWO_HOSTS_8B, "--format", "json")[1])
    latency = next(b for b in doc["break_even"] if b["parameter"] == "latency")
    assert Fraction(latency["values"][0]["exact"]) == Fraction(78336, 10**9)


def test_tp_break_even_places_interconnects_on_both_sides() -> None:
    code, out = run("ledger", TP_70B)
    assert code == 0, out
    doc = json.loads(run("ledger", TP_70B, "--format", "json")[1])
    pcie5, pcie4 = (b for b in doc["break_even"] if b["parameter"] == "bandwidth")
    # PCIe 4.0's per-message latency equals NVLink 4's (3 us): NVLink 4's bandwidth ties it
    sides = {p["interconnect"]: p["side"] for p in pcie4["sides"]}
    assert Fraction(pcie4["values"][0]["exact"]) == 450 * 10**9
    assert sides["interconnects/nvlink-5"] == "candidate faster"
    assert sides["interconnects/nvlink-4"] == "tie"
    assert sides["interconnects/pcie-4-x16"] == "reference faster"
    # PCIe 5.0's is lower (2.6 us), so it ties at less bandwidth and NVLink 4's would win
    sides = {p["interconnect"]: p["side"] for p in pcie5["sides"]}
    assert Fraction(pcie5["values"][0]["exact"]) < 450 * 10**9
    assert sides["interconnects/nvlink-4"] == "candidate faster"
    assert sides["interconnects/pcie-5-x16"] == "reference faster"


def test_seed_example_infeasible_side_has_no_ratio() -> None:
    code, out = run("ledger", TWO_HOSTS_70B)
    assert code == 0, out
    assert "INFEASIBLE" in out and "short by 2.552 GB" in out
    assert "ratio c/r" not in out and "T_r/T_c" not in out


def test_shipped_ledger_records_validate_clean() -> None:
    paths = [str(ROOT / p) for p in ("placements", "proposals", "strategies")]
    result = CliRunner().invoke(cli, ["validate", *paths, "--root", str(ROOT)])
    assert result.exit_code == 0, result.output


def test_host_crossing_proposal_without_placement_fails_validation(tmp_path: Path) -> None:
    proposal = {
        "kind": "proposal",
        "id": "proposals/bad",
        "title": "Bad",
        "version": 1,
        "status": "draft",
        "text": "Shard across two hosts.",
        "crosses": ["host"],
        "history": [{"version": 1, "date": "2026-11-30", "change": "Test."}],
    }
    root = write_tree(tmp_path, {"proposals/bad": proposal}) / "records"
    result = CliRunner().invoke(cli, ["validate", "--root", str(root)])
    assert result.exit_code == 1
    assert "LG002" in result.output and "bad.yaml:" in result.output


def test_one_receipt_prices_tp4_and_tp8_on_the_same_basis() -> None:
    """TP=4 and TP=8 at batch 64: S = 16384 B x 64 = 1 MiB, the 1 MiB rows (4 and 8 GPUs) of
    receipts/sglang-custom-all-reduce-h100-latency: 31.1 us and 33.8 us per all-reduce, latency
    inside them. Exposed = 160 x 31.1 us = 4.976 ms (TP4) and 160 x 33.8 us = 5.408 ms (TP8);
    the composed rows (tests/ledger/test_composed_step.py): T_useful = 141,104,775,168 B /
    (N * 2970 GB/s, the measured Triad rate) plus the KV read of 64 sequences of 2048 tokens
    (8/N KV heads per rank), T_per_layer_overhead = 80 x 98.5 us plus, since session 26, the
    non-matmul kernels' growth at 64 tokens: 80 x (t_k(128) - t_k(1)) x 63/127 from Llama-2-70B's
    H100 rows (the same kernel shape): 2.0 us at TP4 (20.0 to 22.0), 3.0 at TP8 (17.0 to 20.0).
    """
    doc = json.loads(
        run("ledger", "placements/tp-llama-3.1-70b-h100-tp4-vs-tp8", "--format", "json")[1]
    )
    for option, ranks, per_call, kernel_growth in (
        ("tp4", 4, Fraction(311, 10**7), Fraction(2, 10**6)),
        ("tp8", 8, Fraction(338, 10**7), Fraction(3, 10**6)),
    ):
        side = next(x for x in doc["ledgers"] if x["option"] == option)
        exposed = next(r for r in side["rows"] if r["row"] == "exposed")
        assert exposed["provenance"] == "measured"
        assert exposed["receipts"] == ["receipts/sglang-custom-all-reduce-h100-latency"]
        assert Fraction(exposed["value"]["exact"]) == 160 * per_call
        useful = Fraction(141_104_775_168, ranks * 2_970 * 10**9)
        kv = Fraction(64 * 2048 * 2 * 80 * (8 // ranks) * 128 * 2, 2_970 * 10**9)
        overhead = 80 * Fraction(985, 10**7) + 80 * kernel_growth * 63 / 127
        assert Fraction(side["total"]["exact"]) == useful + kv + overhead + 160 * per_call
        assert "S = 1048576 B" in side["transfers"][0]["pricing"]


def test_hybrid_plan_contributes_two_components_each_priced_on_its_own_hardware() -> None:
    """405B: the H200 node's all-reduce is priced by the H200 receipt, the H100 nodes' by the
    H100 receipt (same link, pattern, 8 ranks and 512 KiB NVLS row: the accelerators decide),
    and the pipeline hop over InfiniBand (16 * 32768 B = 524,288 B) is measured: linear in
    time between the two-node send/recv receipt's 264,192 B (27 us) and 526,336 B (33 us)
    rows, 27 us + 6 us * 260,096 / 262,144.
    The all-reduces: 252 x 7/4 x 524,288 B = 231,211,008 B over 29.38 GB/s (H200) and
    21.35 GB/s (H100), the receipts' own 512 KiB rows, not their 1 MiB rows."""
    doc = json.loads(
        run(
            "ledger",
            "placements/llama-3.1-405b-one-h200-node-vs-two-h100-nodes",
            "--format",
            "json",
        )[1]
    )
    ref, cand = doc["ledgers"]
    assert ref["transfers"][0]["receipts"] == ["receipts/azure-nd-h200-v5-nccl-all-reduce"]
    tp, pp = cand["transfers"]
    assert tp["receipts"] == ["receipts/azure-nd-h100-v5-nccl-all-reduce"]
    assert pp["provenance"] == "measured"
    assert pp["receipts"] == ["receipts/vidur-h100-dgx-inter-node-send-recv"]
    us = Fraction(1, 10**6)
    assert Fraction(pp["raw"]["exact"]) == 27 * us + 6 * us * Fraction(260_096, 262_144)
    exposed = next(r for r in cand["rows"] if r["row"] == "exposed")
    assert Fraction(exposed["value"]["exact"]) == Fraction(tp["exposed"]["exact"]) + Fraction(
        pp["exposed"]["exact"]
    )
    moved = Fraction(252 * 7 * 524_288, 4)
    assert Fraction(ref["transfers"][0]["raw"]["exact"]) == moved / Fraction(29_380_000_000)
    assert Fraction(tp["raw"]["exact"]) == moved / Fraction(21_350_000_000)


def test_pcie_transfers_take_their_link_records_estimated_latency() -> None:
    """Each PCIe side takes its link record's estimate (PCIe 5.0's since session 15); a typed
    unverified latency still says so (tests/ledger/test_unverified_latency_rows.py)."""
    doc = json.loads(run("ledger", TP_70B, "--format", "json")[1])
    for side in doc["ledgers"][1:]:
        assert "unverified" not in side["transfers"][0]["pricing"]
        assert side["transfers"][0]["provenance"] == "estimated"


def test_hbm_capacity_is_the_label_in_gib() -> None:
    """docs/record-format.md: an H100's "80 GB" is 80 GiB = 85,899,345,920 B and an H200's
    "141 GB" is 141 GiB; the 405B state of 811,698,487,296 B splits 16 and 8 ways."""
    doc = json.loads(
        run(
            "ledger",
            "placements/llama-3.1-405b-one-h200-node-vs-two-h100-nodes",
            "--format",
            "json",
        )[1]
    )
    h200, h100 = (side["devices"][0] for side in doc["feasibility"])
    assert Fraction(h200["capacity"]["exact"]) == 141 * 2**30
    assert Fraction(h100["capacity"]["exact"]) == 80 * 2**30
    assert Fraction(h100["headroom"]["exact"]) == 80 * 2**30 - Fraction(811_698_487_296, 16)


def test_rows_fed_by_estimated_latencies_say_estimated() -> None:
    """No shipped transfer types an unverified latency any more (session 15): the PCIe 5.0
    all-reduce and the 8B pair over 400GbE take their link records' estimates, and their
    transfers and T_exposed say estimated. A row fed by an unverified figure is held to saying
    unverified in tests/ledger/test_unverified_latency_rows.py, on a copy that types one."""
    code, out = run("ledger", TP_70B)
    assert code == 0, out
    assert "unverified" not in out
    doc = json.loads(run("ledger", TP_70B, "--format", "json")[1])
    pcie5 = doc["ledgers"][1]
    assert pcie5["transfers"][0]["provenance"] == "estimated"
    assert next(r for r in pcie5["rows"] if r["row"] == "exposed")["provenance"] == "estimated"
    pair = json.loads(run("ledger", TWO_HOSTS_8B, "--format", "json")[1])["ledgers"][1]
    assert pair["transfers"][0]["provenance"] == "estimated"
