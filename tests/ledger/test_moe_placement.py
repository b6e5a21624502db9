"""The shipped MoE placement, worked by hand: DeepSeek-V3 decode on one H200 node vs two H100 nodes.

Useful work (weight bytes of one batch-16 decode step): the non-routed weights
17,117,648,384 B plus f = 1 - (31/32)^16 of the routed experts' 653,908,770,816 B,
277,562,774,295 B (rounded to the byte in the record). Read by 8 GPUs at a time on
both sides: 277,562,774,295 / (8 * 4.8e12) s on the H200s, / (8 * 3.35e12) s on the
H100s (the FP8 roofline term, 16 * 75,104,594,944 / (8 * 1979e12) s, is smaller).

All-reduces: 122 per step (2 per layer x 61) of 16 * 14,336 = 229,376 B, between the
receipts' 128 KiB and 256 KiB NVLS rows, linear in time:
t = t1 + (t2 - t1) * (229376 - 131072) / 131072 with t = S * 7/4 / busbw:
H200 7.39 and 14.75 GB/s, H100 5.40 and 10.86 GB/s. The pipeline hop over NDR: the
measured send/recv between two H100 nodes, linear in time between its 133,120 B (24 us)
and 264,192 B (27 us) rows.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kb.cli import cli

ROOT = Path(__file__).resolve().parents[2] / "records"
PLACEMENT = "placements/deepseek-v3-one-h200-node-vs-two-h100-nodes"


def ledger() -> Any:
    args = ["ledger", PLACEMENT, "--format", "json", "--root", str(ROOT)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def interpolated(busbw_128k: str, busbw_256k: str) -> Fraction:
    t1 = Fraction(131072) * Fraction(7, 4) / (Fraction(busbw_128k) * 10**9)
    t2 = Fraction(262144) * Fraction(7, 4) / (Fraction(busbw_256k) * 10**9)
    return t1 + (t2 - t1) * Fraction(229376 - 131072, 131072)


def exact(node: Any) -> Fraction:
    return Fraction(node["exact"])


def test_the_expert_read_fraction_gives_the_useful_work() -> None:
    routed, shared = 58 * 256 * 3 * 7168 * 2048, 17_117_648_384
    fraction = 1 - Fraction(31, 32) ** 16
    assert shared + routed == 671_026_419_200  # models/deepseek-v3 params_total
    assert round(shared + routed * fraction) == 277_562_774_295


def test_each_row_is_the_hand_worked_value() -> None:
    doc = ledger()
    h200, h100 = doc["ledgers"]
    work = Fraction(277_562_774_295)
    assert exact(h200["rows"][0]["value"]) == work / (8 * Fraction(48, 10) * 10**12)
    assert exact(h100["rows"][0]["value"]) == work / (8 * Fraction(335, 100) * 10**12)
    assert exact(h200["transfers"][0]["raw"]) == 122 * interpolated("7.39", "14.75")
    assert exact(h100["transfers"][0]["raw"]) == 122 * interpolated("5.40", "10.86")
    # 16 x 14,336 B = 229,376 B across InfiniBand: linear in time between the two-node
    # send/recv receipt's 133,120 B (24 us) and 264,192 B (27 us) rows
    us = Fraction(1, 10**6)
    hop = 24 * us + 3 * us * Fraction(229_376 - 133_120, 264_192 - 133_120)
    assert exact(h100["transfers"][1]["raw"]) == hop
    assert h100["transfers"][1]["provenance"] == "measured"
    for side in (h200, h100):
        assert exact(side["total"]) == sum(exact(r["value"]) for r in side["rows"])


def test_both_fit_and_the_h200_node_is_faster() -> None:
    doc = ledger()
    h200, h100 = (side["devices"][0] for side in doc["feasibility"])
    assert exact(h200["headroom"]) == 141 * 2**30 - Fraction(671_026_419_200, 8)
    assert exact(h100["headroom"]) == 80 * 2**30 - Fraction(671_026_419_200, 16)
    reference, candidate = (exact(side["total"]) for side in doc["ledgers"])
    assert 1.40 < candidate / reference < 1.42
