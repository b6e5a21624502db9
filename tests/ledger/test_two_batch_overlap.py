"""SGLang's two-batch overlap on the rows its source says ran it (issue 35, session 19).

kb/data/end-to-end.json `two_batch_overlap` names three rows of
receipts/sglang-deepseek-v3-h100-wide-ep: each replica's batch runs as two micro-batches,
and the pass or step takes max(C, M) in place of C + M, C and M twice the composed
compute and the expert-parallel dispatch and combine of one micro-batch. These tests
recompute that from kb's composition at half the batch, independently of
kb/ledger/overlap.py, and hold the rule to its declared rows.
"""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction as F

from kb.ledger.endtoend import CONTRADICTED, VALIDATED, conditions, evaluate_row
from kb.ledger.expert import COMBINE, DISPATCH, PREFILL_COMBINE, PREFILL_DISPATCH
from kb.ledger.overlap import overlapped_rows, two_batch_overlap
from kb.ledger.scenario import Outcome, outcome
from kb.model import KnowledgeBase
from kb.resources import _package_dir

WIDE = "receipts/sglang-deepseek-v3-h100-wide-ep"


def _rule() -> dict[str, object]:
    text = (_package_dir("data") / "end-to-end.json").read_text(encoding="utf-8")
    rule: dict[str, object] = json.loads(text)["two_batch_overlap"]
    return rule


def _prefill_parts(result: Outcome) -> tuple[F, F]:
    """(the pass's read-or-matmul part, its dispatch + combine), read from the request."""
    assert result.request is not None
    names = (PREFILL_DISPATCH, PREFILL_COMBINE)
    sent = sum((c for n, c in result.request.prefill_costs if n in names), F(0))
    return result.request.prefill_read, sent


def _decode_parts(result: Outcome) -> tuple[F, F]:
    """(the step's useful row, its exposed dispatch + combine)."""
    rows = {row.name: row for row in result.rows}
    exposed = rows["exposed"].inputs
    return F(rows["useful"].value), F(exposed[DISPATCH]) + F(exposed[COMBINE])


def test_the_rule_is_declared_with_its_rows_and_sources() -> None:
    rule = _rule()
    assert all(rule[k] for k in ("applies_to", "rows", "split", "time", "bound", "reason"))
    assert overlapped_rows() == {f"{WIDE}#results.{i}" for i in (0, 1, 2)}
    sources = rule["sources"]
    assert isinstance(sources, list)
    assert any("lmsys-blog-large-scale-ep" in s for s in sources)
    assert any("two_batch_overlap.py" in s for s in sources)


def test_every_declared_row_is_expert_parallel_and_states_its_batch(
    shipped: KnowledgeBase,
) -> None:
    for key in overlapped_rows():
        receipt, _, index = key.partition("#results.")
        row = shipped.records[receipt].data["results"][int(index)]
        assert row["ep"] > 1 and row["batch"] // row["dp"] >= 2, key


def test_the_prefill_pass_is_the_rest_plus_the_larger_of_c_and_m(shipped: KnowledgeBase) -> None:
    record = shipped.records[WIDE]
    row = record.data["results"][0]
    scenario, _, _ = conditions(shipped, record, row)
    whole = outcome(scenario, shipped)
    half = outcome(replace(scenario, batch=scenario.batch // 2), shipped)
    (c, m), (c2, m2) = _prefill_parts(whole), _prefill_parts(half)
    assert whole.ttft is not None and m > c  # the pass is bound by its dispatch and combine
    expected = whole.ttft - c - m + max(2 * c2, 2 * m2)
    result = evaluate_row(shipped, record, 0, row, False)
    assert result.outcome is not None and result.outcome.ttft == expected
    assert result.predicted == F(128 * 4096) / expected / 4
    assert result.outcome.ttft < whole.ttft  # the overlap hides the compute
    assert any("two-batch overlap" in note for note in result.assumed)


def test_the_decode_step_reads_the_weights_once_per_micro_batch(shipped: KnowledgeBase) -> None:
    record = shipped.records[WIDE]
    row = record.data["results"][2]
    scenario, _, _ = conditions(shipped, record, row)
    whole = outcome(scenario, shipped)
    half = outcome(replace(scenario, batch=scenario.batch // 2), shipped)
    (c, m), (c2, m2) = _decode_parts(whole), _decode_parts(half)
    assert 2 * c2 > c  # two micro-batches cost more compute than one batch
    assert whole.tpot is not None
    expected = whole.tpot - c - m + max(2 * c2, 2 * m2)
    result = evaluate_row(shipped, record, 2, row, False)
    assert result.outcome is not None and result.outcome.tpot == expected
    assert result.predicted == F(18432) / expected / 9


def test_the_rows_are_shown_whichever_way_they_moved(shipped: KnowledgeBase) -> None:
    """Priced, the prefill rows came within the band and the decode row left it."""
    record = shipped.records[WIDE]
    states = [
        evaluate_row(shipped, record, i, record.data["results"][i], False).state for i in (0, 1, 2)
    ]
    assert states == [VALIDATED, VALIDATED, CONTRADICTED]


def test_a_row_not_declared_is_priced_in_series(shipped: KnowledgeBase) -> None:
    record = shipped.records[WIDE]
    row = record.data["results"][0]
    undeclared = evaluate_row(shipped, record, 99, row, False)  # not `#results.0`
    scenario, _, _ = conditions(shipped, record, row)
    serial = outcome(scenario, shipped).ttft
    assert serial is not None and undeclared.predicted == F(128 * 4096) / serial / 4
    assert not any("two-batch overlap" in note for note in undeclared.assumed)


def test_an_odd_replica_batch_splits_into_its_ceiling_and_floor(shipped: KnowledgeBase) -> None:
    record = shipped.records[WIDE]
    scenario, _, _ = conditions(shipped, record, record.data["results"][0])
    odd = replace(scenario, batch=3 * scenario.dp)
    found = two_batch_overlap(shipped, odd, outcome(odd, shipped))
    assert found is not None and found.sizes == (2, 1)
    one = replace(scenario, batch=scenario.dp)
    assert two_batch_overlap(shipped, one, outcome(one, shipped)) is None
