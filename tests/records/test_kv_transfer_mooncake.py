"""flops/kv-transfer held to Mooncake's Transfer Engine (issue 39, session 14).

The receipts' times are their stated bytes over their stated rates; the predictions' bytes are
Llama 3.1 70B's bf16 KV cache at 2^17 tokens, which must be the stated "40 GB" read in GiB (the
reading the prediction's note gives); the line-rate time is recomputed here by hand and by kb's
evaluator, and its error against each receipt lands on the side of the band the record says
(four NICs within, eight NICs outside and accepted). The class is no longer listed unvalidated.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from kb.api import open_kb
from kb.commands.listing import unvalidated_classes
from kb.equations.evaluate import evaluate
from kb.model import KnowledgeBase
from tests.conftest import SHIPPED_RECORDS

CLASS = "flops/kv-transfer"
RECEIPT = "receipts/mooncake-transfer-engine-kv-cache-{}"


@pytest.fixture(scope="module")
def shipped() -> KnowledgeBase:
    return open_kb(SHIPPED_RECORDS, with_references=False)


def _claim(kb: KnowledgeBase, claim_id: str) -> dict[str, Any]:
    record = kb.get(CLASS)
    assert record is not None
    return next(c for c in record.data["claims"] if c["id"] == claim_id)


def _row(kb: KnowledgeBase, nics: str) -> dict[str, Any]:
    record = kb.get(RECEIPT.format(nics))
    assert record is not None
    rows = record.data["results"]
    assert len(rows) == 1
    row: dict[str, Any] = rows[0]
    return row


@pytest.mark.parametrize("nics", ["4x200g", "8x400g"])
def test_the_time_is_the_stated_bytes_over_the_stated_rate(
    shipped: KnowledgeBase, nics: str
) -> None:
    row = _row(shipped, nics)
    assert row["message_size"]["unit"] == "GB" and row["algorithm_bandwidth"]["unit"] == "GB/s"
    time = Fraction(str(row["message_size"]["value"])) / Fraction(
        str(row["algorithm_bandwidth"]["value"])
    )
    held = Fraction(str(row["latency"]["value"]))
    assert row["latency"]["unit"] == "s" and abs(held - time) <= Fraction(5, 10**5)


def test_the_stated_size_is_the_70b_cache_at_two_to_the_17_tokens_in_gib(
    shipped: KnowledgeBase,
) -> None:
    model = shipped.get("models/llama-3.1-70b")
    assert model is not None
    geometry = model.data["geometry"]
    tokens = _claim(shipped, "mooncake-4x200g")["bind"]["S"]["value"]
    assert tokens == 2**17
    cache = tokens * 2 * geometry["layers"] * geometry["kv_heads"] * geometry["head_dim"] * 2
    assert Fraction(cache, 2**30) == Fraction(str(_row(shipped, "4x200g")["message_size"]["value"]))


@pytest.mark.parametrize(
    ("claim_id", "nics", "lanes_gbit", "within"),
    [("mooncake-4x200g", "4x200g", 800, True), ("mooncake-8x400g", "8x400g", 3200, False)],
)
def test_the_line_rate_time_lands_where_the_record_says(
    shipped: KnowledgeBase, claim_id: str, nics: str, lanes_gbit: int, within: bool
) -> None:
    claim = _claim(shipped, claim_id)
    assert claim["kind"] == "prediction" and claim["band"] == {"rel": 0.25}
    assert claim["measured"] == f"{RECEIPT.format(nics)}#results.0.latency"
    bound = claim["bind"]["BW_link"]
    assert (bound["value"], bound["unit"]) == (lanes_gbit, "Gbit/s")
    record = shipped.get(CLASS)
    assert record is not None
    assert record.data["symbols"]["t_kv"]["unit"] == "ms"  # evaluate answers in it
    kb_time = Fraction(evaluate(shipped, record, claim["of"], claim["bind"]).value) / 1000
    by_hand = Fraction(2**17 * 327680, lanes_gbit * 10**9 // 8)
    assert kb_time == by_hand
    measured = Fraction(str(_row(shipped, nics)["latency"]["value"]))
    error = by_hand / measured - 1
    assert (abs(error) <= Fraction(1, 4)) is within
    assert ("accepted" in claim) is not within


def test_the_class_is_no_longer_listed_unvalidated(shipped: KnowledgeBase) -> None:
    assert CLASS not in {row["id"] for row in unvalidated_classes(shipped)}
    record = shipped.get(CLASS)
    assert record is not None and "unvalidated" not in record.data
