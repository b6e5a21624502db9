"""Issue 39, session 15: the figures sourced this session say what their sources say.

Each test re-derives a figure from the numbers its note or source record quotes, so an edit that
breaks the arithmetic, or puts a figure back to `basis: unverified`, fails here. The sources:
DeepSeek's profiler trace (the H800's memory), NVBench's device summary of an H20 and NVBench's
own formula (the H20's HBM bandwidth), an nccl-tests run on RTX 5090s (PCIe 5.0's per-message
latency) and the body of NVIDIA's NVSwitch post (the 70B ratio, modeled by NVIDIA).
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


def node(kb: KnowledgeBase, record_id: str, *path: str | int) -> Any:
    record = kb.get(record_id)
    assert record is not None, record_id
    value: Any = record.data
    for key in path:
        value = value[key]
    return value


def quoted(text: str) -> list[str]:
    """The "..." and `...` quotations of a note (a backslash-escaped quote stays inside)."""
    return re.findall(r'"((?:[^"\\]|\\.)*)"', text) + re.findall(r"`([^`]*)`", text)


def number_after(text: str, label: str) -> Fraction:
    """The number that follows `label` inside one of the note's quotations."""
    for quote in quoted(text):
        found = re.search(re.escape(label) + r"\D*?(\d+(?:\.\d+)?)", quote)
        if found:
            return Fraction(found.group(1))
    raise AssertionError(f"no quotation with {label!r}")


def test_h800_capacity_is_the_devices_reported_memory_rounded_up_to_binary_gib(
    shipped: KnowledgeBase,
) -> None:
    capacity = node(shipped, "hardware/nvidia-h800", "memory", "capacity")
    assert capacity["basis"] == "derived" and capacity["unit"] == "GiB"
    source = node(shipped, capacity["source"], "notes")
    reported = number_after(capacity["note"], '"totalGlobalMem": ')
    assert reported == number_after(source, '"totalGlobalMem": ') == 84943110144
    fitted = capacity["value"] * 2**30
    # what CUDA can allocate is just under the HBM fitted: the driver keeps less than 1 GiB
    assert reported < fitted and fitted - reported < 2**30


def test_h20_bandwidth_is_nvbenchs_peak_from_the_reported_bus(shipped: KnowledgeBase) -> None:
    bandwidth = node(shipped, "hardware/nvidia-h20", "memory", "bandwidth")
    assert bandwidth["basis"] == "derived" and bandwidth["unit"] == "GB/s"
    summary = next(q for q in quoted(bandwidth["note"]) if "Global Memory Bus Peak" in q)
    peak, width, clock = (
        Fraction(n) for n in re.findall(r"(\d+) GB/sec \((\d+)-bit DDR @(\d+)MHz", summary)[0]
    )
    # NVBench: 2 (DDR) x clock x bus width in bytes, printed in whole GB/s
    computed = 2 * clock * 10**6 * (width / 8)
    assert int(computed / 10**9) == peak == bandwidth["value"]
    formula = node(shipped, "sources/github-nvidia-nvbench-device-info", "notes")
    assert "2 * get_global_memory_bus_peak_clock_rate()" in formula


def test_pcie5_latency_is_the_quoted_all_reduce_over_its_ring_steps(
    shipped: KnowledgeBase,
) -> None:
    latency = node(shipped, "interconnects/pcie-5-x16", "latency")
    assert latency["basis"] == "estimated" and latency["unit"] == "us"
    smallest = number_after(latency["note"], "8  2  float  sum  -1  ")
    ranks = 4
    assert Fraction(str(latency["value"])) == smallest / (2 * (ranks - 1))
    # the links ran at PCIe 5.0: the quoted host-staged copy rate is above PCIe 4.0's line rate
    copies = re.search(r'"(\d+\.\d+)" GB/s one way', latency["note"])
    assert copies is not None
    pcie4 = node(shipped, "interconnects/pcie-4-x16", "bandwidth", "per_link")
    assert Fraction(copies.group(1)) > Fraction(str(pcie4["value"]))


def test_nvswitch_ratio_is_the_posts_sentence_and_its_modeled_tables(
    shipped: KnowledgeBase,
) -> None:
    value = node(shipped, "receipts/nvidia-nvswitch-vs-p2p-llama-3.1-70b", "results", 0, "value")
    assert value["basis"] == "estimated"
    assert "up to 1.5x greater than a comparable GPU without NVSwitch" in value["note"]
    assert "Throughput modeled using internal measurements" in value["note"]
    # Table 3's last row: 168 / 112 tok/s/GPU is the ratio the post rounds to 1.5x
    row = next(q for q in quoted(value["note"]) if q.startswith("32 |"))
    batch, p2p, switched, benefit = (cell.strip() for cell in row.split("|"))
    assert (
        Fraction(switched) / Fraction(p2p)
        == Fraction(str(value["value"]))
        == Fraction(benefit.rstrip("x"))
    )


def test_the_405b_receipt_keeps_only_its_title_ratio(shipped: KnowledgeBase) -> None:
    results = node(shipped, "receipts/nvidia-llama-3.1-405b-pp-vs-tp-h200", "results")
    assert len(results) == 1 and results[0]["value"]["basis"] != "unverified"


def test_no_figure_sourced_this_session_is_listed_unverified(shipped: KnowledgeBase) -> None:
    listed = {(f["id"], f["pointer"]) for f in unverified_figures(shipped)}
    sourced = {
        ("hardware/nvidia-h800", "/memory/capacity"),
        ("hardware/nvidia-h20", "/memory/bandwidth"),
        ("placements/tp-llama-3.1-70b-nvswitch-vs-pcie", "/candidates/0/transfers/0/link_latency"),
        ("receipts/nvidia-llama-3.1-405b-pp-vs-tp-h200", "/results/1/value"),
        ("receipts/nvidia-nvswitch-vs-p2p-llama-3.1-70b", "/results/0/value"),
    }
    assert not listed & sourced
    # what stays: the H20's tensor rates, for which no document states a figure
    assert {pointer for record, pointer in listed if record == "hardware/nvidia-h20"} <= {
        "/compute/fp16",
        "/compute/int8",
    }
