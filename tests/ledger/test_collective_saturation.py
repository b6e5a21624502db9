"""Above a saturated curve's largest row, its bus bandwidth (`collective_saturation`).

Declared in kb/data/end-to-end.json (issue 35, session 25): a collective no curve prices
in range, whose size lies above a matching curve's largest row S_max, is priced at that
row's bus bandwidth, t(S) = t(S_max)*S/S_max, when the curve has flattened (the top row's
bus bandwidth at most 1.05 times the row's below it); else at the line rate as before.
Each test is a hand check of one message size on a shipped curve.
"""

from __future__ import annotations

from fractions import Fraction

from kb.kinds.receipt import Receipt
from kb.ledger import saturation
from kb.ledger.curves import Point
from kb.ledger.endtoend import evaluate_row
from kb.ledger.transfers import (
    Conditions,
    extended_by_receipts,
    priced_by_receipts,
    receipts_on,
)
from kb.model import KnowledgeBase
from kb.resources import end_to_end

GIB = 2**30
B200 = Conditions("all-reduce", 8, frozenset({"hardware/nvidia-b200"}))
H100_8 = Conditions("all-reduce", 8, frozenset({"hardware/nvidia-h100-sxm"}))
B200_SWEEP = "receipts/stas00-b200-all-reduce-bench-sweep"


def _b200(shipped: KnowledgeBase) -> list[Receipt]:
    return receipts_on(shipped, "interconnects/nvlink-5", "all-reduce")


def test_the_rule_is_declared_with_its_limit_rows_and_band() -> None:
    entry = end_to_end(saturation.SECTION, dict)
    assert all(entry[k] for k in ("applies_to", "rule", "reason", "rows", "band", "expected"))
    assert saturation.growth() == Fraction(21, 20)
    assert "+-25%" in entry["band"]


def test_32_gib_on_8_b200_at_the_16_gib_row_bus_bandwidth(shipped: KnowledgeBase) -> None:
    """By hand: 16 GiB at 845.67 GB/s busbw takes 16 GiB*1.75/845.67e9 = 35.55 ms; 32 GiB twice."""
    receipts = _b200(shipped)
    size = Fraction(32 * GIB)
    measured, why = priced_by_receipts(receipts, "interconnects/nvlink-5", size, B200)
    assert measured is None and "outside the measured range" in why
    found = extended_by_receipts(receipts, "interconnects/nvlink-5", size, B200)
    assert found is not None
    bandwidth, receipt, said = found
    assert receipt == B200_SWEEP
    assert bandwidth.value == Fraction("845.67") * 10**9  # the row's bus bandwidth, exactly
    time = Fraction(7, 4) * size / bandwidth.value
    assert round(float(time) * 1e3, 2) == 71.10  # 2 x 35.55 ms
    assert said.startswith(f"{saturation.EXTENDED}{B200_SWEEP} row 19 ")
    assert "(1.008 x row 18)" in said and bandwidth.basis == "derived"


def test_in_range_the_curve_itself_prices_and_nothing_is_extended(
    shipped: KnowledgeBase,
) -> None:
    """By hand: 1 GiB is the sweep's row 15, 723.34 GB/s busbw."""
    size = Fraction(GIB)
    measured, _ = priced_by_receipts(_b200(shipped), "interconnects/nvlink-5", size, B200)
    assert measured is not None and measured.receipt == B200_SWEEP
    assert measured.bandwidth.value == Fraction("723.34") * 10**9


def test_below_the_smallest_row_nothing_is_extended(shipped: KnowledgeBase) -> None:
    """16 KiB is under the sweep's 32 KiB row: the line rate, as before."""
    size = Fraction(16 * 1024)
    assert extended_by_receipts(_b200(shipped), "interconnects/nvlink-5", size, B200) is None


def test_a_curve_still_climbing_at_its_end_is_not_extended(shipped: KnowledgeBase) -> None:
    """By hand: the 8 x H100 torch curve's 16 MiB row runs 16/135.68 MiB/us against 8/90.51 at
    8 MiB, 1.334 times the rate (> 1.05); vidur's H100 curve ends at 2 MiB still climbing and
    jax's is one row: a 64 MiB all-reduce on 8 x H100 stays at the line rate."""
    receipts = receipts_on(shipped, "interconnects/nvlink-4", "all-reduce")
    size = Fraction(64 * 2**20)
    assert extended_by_receipts(receipts, "interconnects/nvlink-4", size, H100_8) is None
    top = Point(Fraction(16 * 2**20), Fraction("135.68") / 10**6, 12)
    below = Point(Fraction(8 * 2**20), Fraction("90.51") / 10**6, 11)
    assert not saturation.saturated([below, top])
    assert round(float(saturation.rate(top) / saturation.rate(below)), 3) == 1.334


def test_the_largest_top_row_wins_then_the_receipt_id() -> None:
    flat = [Point(Fraction(1), Fraction(1), 0), Point(Fraction(2), Fraction(2), 1)]
    wide = [Point(Fraction(2), Fraction(2), 0), Point(Fraction(4), Fraction(4), 1)]
    found = saturation.extension(Fraction(8), [("r/b", flat, ()), ("r/c", wide, ())])
    assert found is not None and found.receipt == "r/c" and found.time == 8
    tie = saturation.extension(Fraction(8), [("r/z", wide, ()), ("r/a", wide, ())])
    assert tie is not None and tie.receipt == "r/a"
    assert saturation.extension(Fraction(3), [("r/c", wide, ())]) is None  # in range


def test_an_end_to_end_row_says_which_curve_it_was_extended_from(
    shipped: KnowledgeBase,
) -> None:
    record = shipped.get("receipts/trtllm-v0.20-llama-3.3-70b-throughput-b200-tp1-8")
    assert record is not None
    result = evaluate_row(shipped, record, 34, record.data["results"][34], False)
    notes = [a for a in result.assumed if a.startswith("a collective extended: ")]
    assert notes and notes[0].startswith(f"a collective extended: {B200_SWEEP} row 19 ")


def test_a_4_rank_h100_stock_all_reduce_reads_the_new_nccl_tests_curve(
    shipped: KnowledgeBase,
) -> None:
    """By hand: 1.5 MiB lies between the in-place rows 1 MiB (27.36 us) and 2 MiB (32.07 us):
    27.36 + (32.07 - 27.36)/2 = 29.715 us. Before session 25 no 4-rank H100 curve existed."""
    receipts = receipts_on(shipped, "interconnects/nvlink-4", "all-reduce")
    when = Conditions("all-reduce", 4, frozenset({"hardware/nvidia-h100-sxm"}))
    size = Fraction(3 * 2**19)
    measured, _ = priced_by_receipts(receipts, "interconnects/nvlink-4", size, when)
    assert measured is not None
    assert measured.receipt == "receipts/lambda-h100-4gpu-nccl-tests-all-reduce"
    assert measured.pricing.time == Fraction("29.715") / 10**6


def test_the_labelled_8_gib_b200_rows_price_no_stock_transfer(shipped: KnowledgeBase) -> None:
    """receipts/stas00-b200-nccl-all-reduce states `nvls`/`ring` on its two 8 GiB rows: a stock
    transfer (no algorithm) never reads them, even at exactly 8 GiB; the sweep prices it."""
    size = Fraction(8 * GIB)
    measured, _ = priced_by_receipts(_b200(shipped), "interconnects/nvlink-5", size, B200)
    assert measured is not None and measured.receipt == B200_SWEEP
    nvls = Conditions("all-reduce", 8, frozenset({"hardware/nvidia-b200"}), "nvls")
    labelled, _ = priced_by_receipts(_b200(shipped), "interconnects/nvlink-5", size, nvls)
    assert labelled is not None and labelled.receipt == "receipts/stas00-b200-nccl-all-reduce"
