"""MLPerf Inference v4.1 Offline rows: the benchmark's own rules, held to the receipts.

Session 22 looked again for the mean input length of the llama2-70b and mixtral-8x7b
datasets, which the five Offline rows lack (docs/ledger.md, "the mean input length searched
again"). No source read states it, so no row was priced and no rule declared. What the
search did settle is recorded in sources/mlperf-inference-rules-v4.1: the benchmark's rules
define each dataset by its longest sequence and its reference mean output, never by a mean
input. These tests hold that record to the receipts: the figures both state agree, and
each fails if one of them changes alone; the Offline rows stay not evaluable for the reason
the rules leave open. The rows' states themselves are held per row in
test_endtoend_mlperf_conditions.py.
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from kb.ledger.endtoend import NOT_EVALUABLE, evaluate_row, unpriced_reasons
from kb.model import KnowledgeBase

RULES = "sources/mlperf-inference-rules-v4.1"
LLAMA = ("receipts/mlperf-v4.1-dgx-h100-llama2-70b", "receipts/mlperf-v4.1-h200-llama2-70b")
MIXTRAL = "receipts/mlperf-v4.1-dgx-h100-mixtral-8x7b"
OFFLINE = [(r, 0) for r in (*LLAMA, MIXTRAL)] + [
    ("receipts/mlperf-v4.1-mi300x-llama2-70b", 0),
    ("receipts/mlperf-v4.1-mi300x-llama2-70b", 6),
]


def _notes(shipped: KnowledgeBase) -> str:
    return " ".join(str(shipped.records[RULES].data["notes"]).split())


def _sizes(shipped: KnowledgeBase, receipt: str) -> str:
    return str(shipped.records[receipt].data["provenance"]["message_sizes"])


def _number(text: str) -> Fraction:
    return Fraction(text.replace(",", ""))


def test_the_rules_llama_figures_are_the_receipts(shipped: KnowledgeBase) -> None:
    """OpenOrca's longest input, sample count and mean output, as the rules and receipts say."""
    pattern = r"OpenOrca \(max_seq_len=(\d+)\) \| (\d+) \|.*?tokens_per_sample=([\d.]+)\)"
    row = re.search(pattern, _notes(shipped))
    assert row is not None
    longest, samples, mean_out = (_number(g) for g in row.groups())
    for receipt in LLAMA:
        sizes = _sizes(shipped, receipt)
        stated = re.search(r"([\d,]+) OpenOrca samples.*?at most ([\d,]+) input tokens", sizes)
        assert stated is not None, sizes
        assert (_number(stated[1]), _number(stated[2])) == (samples, longest)
        output = re.search(r"mean output ([\d.]+) tokens", sizes)
        assert output is not None and _number(output[1]) == mean_out, sizes


def test_the_mixtral_receipt_keeps_the_reference_mean_not_the_rules(
    shipped: KnowledgeBase,
) -> None:
    """The v4.1 rules repeat Llama 2's 294.45 for Mixtral; the run's own counts side with the
    reference's figure, which the receipt states (a receipt 'corrected' to the rules fails)."""
    notes = _notes(shipped)
    mixtral = re.search(r"Mixtral-8x7B \|.*?tokens_per_sample=([\d.]+)\)", notes)
    assert mixtral is not None
    rules_mean = _number(mixtral[1])
    sizes = _sizes(shipped, MIXTRAL)
    output = re.search(r"mean output ([\d.]+) tokens", sizes)
    assert output is not None
    receipt_mean = _number(output[1])
    assert f"{{'tokens_per_sample': {output[1]}}}" in notes  # the reference, quoted
    tokens = re.search(r'"Tokens per second: ([\d.]+)"', notes)
    samples = re.search(r'"Samples per second: ([\d.]+)"', notes)
    assert tokens is not None and samples is not None
    counted = _number(tokens[1]) / _number(samples[1])
    assert round(float(counted), 1) == float(receipt_mean)
    offline = shipped.records[MIXTRAL].data["results"][0]["value"]["value"]
    assert _number(str(offline)) == _number(tokens[1])  # the row's own measured value
    assert abs(rules_mean / counted - 1) > Fraction(1, 10)  # outside the rules' own +-10%


@pytest.mark.parametrize(("receipt", "index"), OFFLINE)
def test_an_offline_row_still_lacks_what_the_rules_leave_open(
    shipped: KnowledgeBase, receipt: str, index: int
) -> None:
    """No row gained an input length: each stays not evaluable, naming the mean input."""
    assert "do not state: a mean input length" in _notes(shipped)
    record = shipped.records[receipt]
    row = record.data["results"][index]
    assert "Offline" in row["label"]
    assert not {"input_tokens", "output_tokens"} & set(row)
    assert "the mean input length is stated by no source read" in _sizes(shipped, receipt)
    result = evaluate_row(shipped, record, index, row, False)
    assert result.state == NOT_EVALUABLE and result.predicted is None
    assert "mean input length" in unpriced_reasons()[f"{receipt}#results.{index}"]
