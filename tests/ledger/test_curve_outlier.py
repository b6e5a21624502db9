"""A receipt row marked `outlier` is no point of any curve, and a price that skipped it says so.

The one rule is kb/ledger/curves.py `outlier`: the collective curves by message size and the
prefill's matmul curve by tokens (kb/ledger/prefill.py) both skip a marked row; the reason
(from the row's source) is named in the pricing text. The shipped case: the "2MB" row of
receipts/torch-nccl-all-reduce-h100-latency-by-size (290.73 us between 32.42 us at 1 MiB and
59.43 us at 4 MiB).
"""

from __future__ import annotations

from fractions import Fraction

from kb.kinds import views
from kb.ledger.curves import duplicate_sizes, outlier
from kb.ledger.prefill import MATMUL_TIME_METRIC, curve_rows, skipped_rows
from kb.ledger.transfers import Conditions, priced_by_receipts
from kb.model import KnowledgeBase, Record
from tests.ledger.ledger_fixtures import q
from tests.ledger.test_curves import LINK, receipt, row

REASON = "the source's own table: five times both neighbours, no cause given"
WHEN = Conditions("all-reduce", 8)
MIB = 1024 * 1024
US = Fraction(1, 10**6)

CURVE = [row(1024, 32), row(2048, 290), row(4096, 59)]
MARKED = [row(1024, 32), row(2048, 290, outlier=REASON), row(4096, 59)]


def test_an_unmarked_row_prices_through_it() -> None:
    """Without the mark the 2 MiB row is a point: 3 MiB lies between 290 us and 59 us."""
    measured, how = priced_by_receipts([receipt(CURVE)], LINK, Fraction(3 * MIB), WHEN)
    assert measured is not None and measured.pricing.time == Fraction(1745, 10) * US
    assert "outlier" not in how


def test_a_marked_row_is_skipped_and_named() -> None:
    """Marked, 3 MiB lies between 1 MiB (32 us) and 4 MiB (59 us): 32 + 27 * 2/3 = 50 us."""
    measured, how = priced_by_receipts([receipt(MARKED)], LINK, Fraction(3 * MIB), WHEN)
    assert measured is not None and measured.pricing.time == 50 * US
    assert "between rows 0" in how and "and 2" in how
    assert f"row 1 skipped as an outlier ({REASON})" in how


def test_a_marked_row_of_the_exact_size_does_not_price_it() -> None:
    measured, how = priced_by_receipts([receipt(MARKED)], LINK, Fraction(2 * MIB), WHEN)
    assert measured is not None and measured.pricing.time == 41 * US  # 32 + 27/3
    assert "row 1 skipped" in how


def test_a_marked_duplicate_size_is_not_ambiguous() -> None:
    twice = [row(1024, 32), row(1024, 90), row(4096, 59)]
    assert duplicate_sizes(receipt(twice)) == [(0, 1)]
    twice[1]["outlier"] = REASON
    assert duplicate_sizes(receipt(twice)) == []


def test_the_rule_reads_views_and_mappings_alike() -> None:
    view = receipt(MARKED)
    assert [outlier(r) for r in view.rows] == [None, REASON, None]
    assert outlier({"outlier": REASON}) == REASON
    assert outlier({"outlier": "  "}) is None and outlier({}) is None


def _matmul(tokens: int, us: float, **extra: object) -> dict[str, object]:
    return {
        "metric": MATMUL_TIME_METRIC,
        "model": "models/m",
        "hardware": "hardware/h",
        "tp": 1,
        "precision": "bf16",
        "input_tokens": tokens,
        "value": q(us, "us", "measured"),
        **extra,
    }


def test_the_prefill_matmul_curve_skips_a_marked_row() -> None:
    rows = [_matmul(128, 10), _matmul(256, 99), _matmul(512, 30)]
    record = Record("receipts/mm", "receipt", "records/receipts/mm.yaml", {"results": rows})
    assert [r[0] for r in curve_rows(record, "models/m", "hardware/h", 1)] == [128, 256, 512]
    rows[1]["outlier"] = REASON
    assert [r[0] for r in curve_rows(record, "models/m", "hardware/h", 1)] == [128, 512]
    assert skipped_rows(record, "models/m", "hardware/h", 1) == [(1, REASON)]


def test_the_shipped_2mb_row_is_marked_and_skipped(shipped: KnowledgeBase) -> None:
    record = shipped.get("receipts/torch-nccl-all-reduce-h100-latency-by-size")
    assert record is not None
    view = views(shipped).receipt(record)
    assert view is not None
    marked = [r.index for r in view.rows if outlier(r) is not None]
    assert marked == [9] and "290.73" in (view.rows[9].outlier or "")
    when = Conditions("all-reduce", 8, frozenset({"hardware/nvidia-h100-sxm"}))
    measured, how = priced_by_receipts([view], view.interconnect or "", Fraction(3 * MIB), when)
    assert measured is not None
    assert "between rows 8" in how and "and 10" in how and "row 9 skipped as an outlier" in how
    # 1 MiB 32.42 us, 4 MiB 59.43 us: 32.42 + 27.01 * 2/3 = 50.42 us, not through 290.73 us
    assert measured.pricing.time == (Fraction("32.42") + Fraction("27.01") * Fraction(2, 3)) * US


def test_an_end_to_end_row_priced_past_it_says_so(shipped: KnowledgeBase) -> None:
    """TensorRT-LLM v0.8's 70B TP8 128-token TTFT: its 2 MiB prefill all-reduces."""
    from kb.ledger.endtoend import evaluate_row

    record = shipped.get("receipts/trtllm-v0.8-first-token-latency-batch1")
    assert record is not None
    row = record.data["results"][6]
    result = evaluate_row(shipped, record, 6, row, False)
    curve = shipped.get("receipts/torch-nccl-all-reduce-h100-latency-by-size")
    assert curve is not None
    reason = curve.data["results"][9]["outlier"]
    notes = [a for a in result.assumed if "skipped as an outlier" in a]
    assert notes == [f"{curve.id}: row 9 skipped as an outlier ({reason})"]
