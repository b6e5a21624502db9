"""Issue 39 (session 14): Blackwell Ultra's tensor rates follow NVIDIA's own system files.

NVIDIA's AIConfigurator system files for B300 SXM and GB300 (each citing the Blackwell Ultra
datasheet) state B300's dense FP4 and INT8 and GB300's INT8. Each test reads the figure kb holds,
the number the record's note quotes from that file, and the quotation in the source record,
and holds all three equal, so an edit that drifts from the source, or that puts the figure
back to `unverified`, fails here.
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

SOURCE = "sources/github-aiconfigurator-systems"


@pytest.fixture(scope="module")
def shipped() -> KnowledgeBase:
    return open_kb(SHIPPED_RECORDS, with_references=False)


def figure(kb: KnowledgeBase, record_id: str, *path: str) -> dict[str, Any]:
    record = kb.get(record_id)
    assert record is not None, record_id
    node: Any = record.data
    for key in path:
        node = node[key]
    assert isinstance(node, dict), (record_id, path)
    return node


def stated_rate(text: str, field: str) -> Fraction:
    """The value NVIDIA's file gives `field` (ops/s), as quoted in `text`, in T ops/s."""
    match = re.search(rf"{field}: (\d+) #", text)
    assert match, (field, text)
    return Fraction(int(match.group(1)), 10**12)


@pytest.mark.parametrize(
    ("record_id", "precision", "field"),
    [
        ("hardware/nvidia-b300", "fp4", "fp4_tc_flops"),
        ("hardware/nvidia-b300", "int8", "int8_tc_flops"),
        ("hardware/nvidia-gb300", "int8", "int8_tc_flops"),
    ],
)
def test_rate_is_the_one_nvidias_file_states(
    shipped: KnowledgeBase, record_id: str, precision: str, field: str
) -> None:
    held = figure(shipped, record_id, "compute", precision)
    assert held["basis"] == "vendor-spec" and held["source"] == SOURCE and held["tier"] == "T2"
    assert held["sparsity"] == "dense" and held["unit"] == "TFLOP/s"
    from_note = stated_rate(held["note"], field)
    source = shipped.get(SOURCE)
    assert source is not None
    notes = " ".join(str(source.data["notes"]).split())
    # The source record quotes both files; the record's quotation must be one of them.
    assert f"{field}: {int(from_note * 10**12)} #" in notes
    assert Fraction(str(held["value"])) == from_note


def test_b300_dense_fp4_is_below_gb300s(shipped: KnowledgeBase) -> None:
    """B300 runs a lower power limit than GB300: its dense FP4 may not exceed GB300's."""
    b300 = Fraction(str(figure(shipped, "hardware/nvidia-b300", "compute", "fp4")["value"]))
    gb300 = Fraction(str(figure(shipped, "hardware/nvidia-gb300", "compute", "fp4")["value"]))
    assert b300 < gb300


def test_none_of_them_is_listed_unverified(shipped: KnowledgeBase) -> None:
    listed = {(f["id"], f["pointer"]) for f in unverified_figures(shipped)}
    for pointer in (
        ("hardware/nvidia-b300", "/compute/fp4"),
        ("hardware/nvidia-b300", "/compute/int8"),
        ("hardware/nvidia-gb300", "/compute/int8"),
    ):
        assert pointer not in listed
