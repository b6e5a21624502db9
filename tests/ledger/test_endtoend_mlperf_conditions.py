"""MLPerf Inference v4.1's rows: what their sources state, and why kb still cannot price them.

Session 19 read the engine's limits and the dataset's lengths for the 25 MLPerf rows
(NVIDIA DGX H100 and 8 x H200 Llama 2 70B, DGX H100 Mixtral 8x7B, AMD MI300X Llama 2 70B)
from the submitters' code (mlcommons/inference_results_v4.1 a2f5d66) and the benchmark's
reference (mlcommons/inference c7db1c3): the in-flight ceilings (gpu_batch_size,
max_num_seqs), the scheduler, the token budget, the longest input and output, and the mean
output length. No source read states the dataset's mean input length, so no Offline row is
priced; the Server rows are Poisson arrivals (an open loop kb has no queueing model for);
the p99 rows are tails. kb/data/end-to-end.json `unpriced` says so per row, after kb's own
reason for a row that states its measure (`unpriced.with_measures`).

Each test fails if a row becomes priced or changes state alone, if a declared reason stops
naming what is missing, or if a receipt's stated arithmetic and its measured row part.
"""

from __future__ import annotations

import re
from dataclasses import replace
from fractions import Fraction

import pytest

from kb.ledger.endtoend import NOT_EVALUABLE, evaluate_row, unpriced_reasons
from kb.model import KnowledgeBase

RECEIPTS = {  # receipt -> its rows: Offline (O), Server mean (S), Server p99 (P)
    "receipts/mlperf-v4.1-dgx-h100-llama2-70b": "OSSPSP",
    "receipts/mlperf-v4.1-h200-llama2-70b": "OSSPSP",
    "receipts/mlperf-v4.1-dgx-h100-mixtral-8x7b": "OSSPSP",
    "receipts/mlperf-v4.1-mi300x-llama2-70b": "OSSPSPO",
}
GENERIC = "the source states neither the batch nor the concurrency"
NAMED = {  # what each kind of row's declared reason must name
    "O": ("MLPerf Offline run", "mean input length"),
    "S": ("MLPerf Server run", "Poisson arrivals", "no queueing model"),
    "P": ("99th percentile", "no queueing model"),
}
ROWS = [(r, index, kind) for r, kinds in RECEIPTS.items() for index, kind in enumerate(kinds)]


@pytest.mark.parametrize(("receipt", "index", "kind"), ROWS)
def test_each_mlperf_row_says_what_is_missing(
    shipped: KnowledgeBase, receipt: str, index: int, kind: str
) -> None:
    record = shipped.records[receipt]
    row = record.data["results"][index]
    assert ("measures" in row) == (kind != "P"), row["label"]
    declared = unpriced_reasons()[f"{receipt}#results.{index}"]
    assert all(words in declared for words in NAMED[kind]), (row["label"], declared)
    result = evaluate_row(shipped, record, index, row, False)
    assert result.state == NOT_EVALUABLE and result.predicted is None
    assert result.reason == (declared if kind == "P" else f"{GENERIC}; {declared}")


def test_every_mlperf_row_is_declared(shipped: KnowledgeBase) -> None:
    """The 25 rows, no more and no fewer, among the declared reasons."""
    found = {k for k in unpriced_reasons() if k.startswith("receipts/mlperf-v4.1-")}
    assert found == {f"{r}#results.{i}" for r, i, _ in ROWS}
    for receipt, kinds in RECEIPTS.items():
        assert len(shipped.records[receipt].data["results"]) == len(kinds)


@pytest.mark.parametrize("receipt", [r for r in RECEIPTS if "mi300x" not in r])
def test_given_its_ceiling_an_offline_row_lacks_the_input_length_next(
    shipped: KnowledgeBase, receipt: str
) -> None:
    """The premise of the Offline reason: given a batch, kb stops at the input length.

    The Offline row is given its engines' ceiling as a concurrency (the largest in-flight
    batch the harness allows, times the engines, read from the receipt's provenance); kb
    then names the input length as what it lacks, and is not evaluable for it. Nothing is
    priced here: the concurrency is only the premise of a rule, not a measured condition.
    """
    record = shipped.records[receipt]
    row = record.data["results"][0]
    found = re.search(r"gpu_batch_size (\d+)", record.data["provenance"]["batch_concurrency"])
    assert found is not None
    ceiling = int(found[1])
    engines = 8 // int(row["tp"])
    given = {**row, "concurrency": ceiling * engines}
    result = evaluate_row(shipped, record, 0, given, False)
    assert result.state == NOT_EVALUABLE
    assert result.reason.startswith("the source does not state the input length"), result.reason


@pytest.mark.parametrize("receipt", list(RECEIPTS))
def test_the_stated_mean_output_is_the_offline_rows_tokens_over_samples(
    shipped: KnowledgeBase, receipt: str
) -> None:
    """The newest history entry's 'tokens / samples = mean' holds, on the row's own value."""
    record = shipped.records[receipt]
    change = record.data["history"][-1]["change"]
    stated = re.findall(r"(\d+\.\d+) / (\d+\.\d+) = (\d+\.\d+)", change)
    assert stated, change
    offline = {
        Fraction(str(r["value"]["value"]))
        for r in record.data["results"]
        if "Offline" in r["label"]
    }
    for tokens, samples, mean in stated:
        assert Fraction(tokens) in offline, (tokens, offline)
        assert round(float(tokens) / float(samples), 1) == float(mean)


def test_a_declared_reason_follows_kbs_own_and_never_replaces_it(shipped: KnowledgeBase) -> None:
    """A row with `measures` whose missing condition changes shows the new one first."""
    receipt = "receipts/mlperf-v4.1-h200-llama2-70b"
    record = shipped.records[receipt]
    row = {k: v for k, v in record.data["results"][1].items() if k != "gpus"}
    result = evaluate_row(shipped, record, 1, row, False)
    declared = unpriced_reasons()[f"{receipt}#results.1"]
    assert result.reason == f"the source does not state the number of devices; {declared}"
    unlisted = replace(record, id="receipts/mlperf-v4.1-not-declared")  # no reason declared
    assert evaluate_row(shipped, unlisted, 1, record.data["results"][1], False).reason == GENERIC
