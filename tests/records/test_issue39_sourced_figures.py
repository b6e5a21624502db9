"""Issue 39 item 1: the figures sourced in session 13 say what their sources say.

Each test re-derives a record's figure from the numbers its source is quoted for (in the
record's own note or its source record), so an edit that breaks the arithmetic, or that puts
back a typed `unverified` latency the link records now hold, fails here.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import pytest

from kb.api import open_kb
from kb.commands.listing import unverified_figures
from kb.model import KnowledgeBase
from tests.conftest import SHIPPED_RECORDS


@pytest.fixture(scope="module")
def shipped() -> KnowledgeBase:
    return open_kb(SHIPPED_RECORDS, with_references=False)


def figure(kb: KnowledgeBase, record_id: str, *path: str | int) -> dict[str, Any]:
    record = kb.get(record_id)
    assert record is not None, record_id
    node: Any = record.data
    for key in path:
        node = node[key]
    assert isinstance(node, dict), (record_id, path)
    return node


def quoted_numbers(text: str) -> list[Fraction]:
    """Every decimal number inside the "..." quotations of a note."""
    return [
        Fraction(number)
        for quote in re.findall(r'"([^"]*)"', text)
        for number in re.findall(r"\d+\.\d+|\d+", quote)
    ]


def test_pcie4_latency_is_the_quoted_all_reduce_over_its_ring_steps(shipped: KnowledgeBase) -> None:
    latency = figure(shipped, "interconnects/pcie-4-x16", "latency")
    assert latency["basis"] == "estimated" and latency["unit"] == "us"
    assert latency["source"] == "sources/nccl-issue-1530"
    assert Fraction("42.14") in quoted_numbers(latency["note"])
    ranks = 8
    per_step = Fraction("42.14") / (2 * (ranks - 1))
    assert abs(Fraction(str(latency["value"])) - per_step) < Fraction(1, 20)


def test_roce_latency_is_deepseeks_same_leaf_cell(shipped: KnowledgeBase) -> None:
    latency = figure(shipped, "interconnects/ethernet-400g-roce", "latency")
    assert latency["unit"] == "us" and latency["basis"] != "unverified"
    assert '"RoCE | 3.6us | 5.6us"' in latency["note"]
    assert Fraction(str(latency["value"])) == Fraction("3.6")
    # the same table's InfiniBand cell is what interconnects/infiniband-ndr states: one table
    ndr = figure(shipped, "interconnects/infiniband-ndr", "latency")
    assert ndr["source"] == latency["source"] and Fraction(str(ndr["value"])) < Fraction("3.6")


@pytest.mark.parametrize(
    ("placement", "pointer"),
    [
        ("placements/coherent-host-vs-two-hosts-8b", ("candidates", 0, "transfers", 0)),
        ("placements/coherent-host-vs-two-hosts-70b", ("candidates", 0, "transfers", 0)),
        ("placements/tp-llama-3.1-70b-nvswitch-vs-pcie", ("candidates", 0, "transfers", 0)),
        ("placements/tp-llama-3.1-70b-nvswitch-vs-pcie", ("candidates", 1, "transfers", 0)),
        ("placements/deepseek-v3-fp8-8x-h200-vs-8x-l40s", ("candidates", 0, "tp_collective")),
    ],
)
def test_the_placements_take_the_link_records_latency(
    shipped: KnowledgeBase, placement: str, pointer: tuple[str | int, ...]
) -> None:
    node = figure(shipped, placement, *pointer)
    assert "link_latency" not in node, "a typed latency would shadow the link record's"
    link = figure(shipped, node["link"], "latency")
    assert link["basis"] != "unverified"


def test_no_latency_the_link_records_hold_is_listed_unverified(shipped: KnowledgeBase) -> None:
    listed = [(f["id"], f["pointer"]) for f in unverified_figures(shipped)]
    latencies = [pair for pair in listed if pair[1].endswith("link_latency")]
    # the PCIe 5.0 candidate's typed figure went in session 15 (interconnects/pcie-5-x16 v5)
    assert latencies == []


def test_h20_capacity_is_the_device_total_read_as_h100s_is(shipped: KnowledgeBase) -> None:
    """97871 MiB of a 96 GiB H20 is the same share as 81559 MiB of an 80 GiB H100 SXM."""
    capacity = figure(shipped, "hardware/nvidia-h20", "memory", "capacity")
    assert capacity["basis"] == "derived" and capacity["unit"] == "GiB"
    assert Fraction(97871) in quoted_numbers(capacity["note"])
    h20 = Fraction(97871, capacity["value"] * 1024)
    h100_capacity = figure(shipped, "hardware/nvidia-h100-sxm", "memory", "capacity")
    h100 = Fraction(81559, h100_capacity["value"] * 1024)
    assert abs(h20 - h100) < Fraction(1, 10_000)


def test_h20_power_is_the_cap_its_nvidia_smi_reports(shipped: KnowledgeBase) -> None:
    power = figure(shipped, "hardware/nvidia-h20", "power")
    assert '"72W / 500W"' in power["note"] and power["value"] == 500


def test_h20_links_are_eighteen_nvlink4_links(shipped: KnowledgeBase) -> None:
    per_link = figure(shipped, "interconnects/nvlink-4", "bandwidth", "per_link")
    link = figure(shipped, "hardware/nvidia-h20", "links", 0)
    assert '"NV18"' in link["per_device"]["note"]
    assert link["per_device"]["value"] == 18 * per_link["value"]
    assert link["bidirectional_quoted"]["value"] == 2 * link["per_device"]["value"]


@pytest.mark.parametrize(
    ("path", "measured"),
    [
        (("memory", "bandwidth"), 3000),  # FlashMLA, GB/s
        (("compute", "bf16"), 660),  # FlashMLA, TFLOP/s
        (("compute", "fp8"), 1550),  # DeepGEMM, TFLOP/s
    ],
)
def test_h800_estimates_sit_above_what_deepseek_measured_on_it(
    shipped: KnowledgeBase, path: tuple[str, str], measured: int
) -> None:
    """An estimated peak below a kernel's measured rate on the same part would be refuted."""
    estimate = figure(shipped, "hardware/nvidia-h800", *path)
    assert estimate["basis"] == "estimated"
    assert Fraction(measured) in quoted_numbers(estimate["note"])
    assert estimate["value"] >= measured
    h100 = figure(shipped, "hardware/nvidia-h100-sxm", *path)
    assert estimate["value"] == h100["value"]
