"""NIM 1.8's TTFT at concurrency 25 and 50 was not measured by the guide's 3 x C run as written.

Investigated, not composed (docs/ledger.md, session 22). AIPerf's concurrency mode issues its
first C requests at once (ai-dynamo/aiperf aiperf/timing/request_rate_strategy.py at 06440a38:
with no request rate, CONCURRENCY_BURST, `next_interval` 0 under a semaphore of C), and the
later, AIPerf version of NIM's benchmarking guide (docs.nvidia.com/nim/benchmarking/llm/latest/
quickstart.html, read in a stored copy) sweeps with `--request-count` 3 x C and no warm-up
requests inside a run (one separate warm-up run comes first). Under that run the C prompts of
the first wave arrive together, and whatever the engine's scheduler, the k-th of them to take
its first token waits for k prompts' worth of prefill work: at least k x d_min, d_min one
5,000-token prompt's matmul FLOPs (2 x params x tokens) at the datasheet FP8 peak of both
devices. The mean TTFT of the run is then at least (C(C+1)/2 + 2C) x d_min / 3C. These tests
hold that bound to the records: at concurrency 25 and 50 it exceeds the measured TTFT, so
these rows' run was not that one (another request count, a warm-up phase, a ramp: the 1.0.0
page's own command was not read); at concurrency 5 it does not. So no first-wave term is
priced: kb does not know the run the rows measured.
"""

from __future__ import annotations

from fractions import Fraction

from kb.ledger.endtoend import evaluate_row
from kb.ledger.quantities import figure
from kb.model import KnowledgeBase

NIM = "receipts/nim-1.8-llama-3.3-70b-h100-tp2-fp8-concurrency"
TTFT_ROWS = {5: 9, 25: 10, 50: 11}  # concurrency -> row
RUN = 3  # the guide's --request-count, in units of the concurrency


def _d_min(kb: KnowledgeBase) -> Fraction:
    """One prompt's matmul FLOPs (2 x params x tokens) at both devices' FP8 dense peak, s."""
    receipt = kb.get(NIM)
    model = kb.get("models/llama-3.3-70b")
    h100 = kb.get("hardware/nvidia-h100-sxm")
    assert receipt is not None and model is not None and h100 is not None
    row = receipt.data["results"][TTFT_ROWS[5]]
    params = figure(model.data["derived"]["params_total"], "").value
    peak = figure(h100.data["compute"]["fp8"], "").value
    assert h100.data["compute"]["fp8"]["sparsity"] == "dense"
    work = 2 * params * int(row["input_tokens"])
    return work / (int(row["tp"]) * peak)


def _bound(concurrency: int, d_min: Fraction) -> Fraction:
    """The mean TTFT of a run of RUN x C requests whose first C arrive at once (a lower bound)."""
    first_wave = Fraction(concurrency * (concurrency + 1), 2) * d_min
    rest = (RUN - 1) * concurrency * d_min
    return (first_wave + rest) / (RUN * concurrency)


def _measured(kb: KnowledgeBase, row: int) -> Fraction:
    receipt = kb.get(NIM)
    assert receipt is not None
    found = receipt.data["results"][row]
    assert found["measures"] == "ttft"
    return figure(found["value"], "").value


def test_one_prompt_takes_at_least_178_ms_at_the_fp8_peak(shipped: KnowledgeBase) -> None:
    d_min = _d_min(shipped)
    assert Fraction("0.178") < d_min < Fraction("0.179")
    assert d_min < _measured(shipped, 8)  # concurrency one: 406.77 ms, the prompt alone


def test_the_three_c_run_is_excluded_at_concurrency_25_and_50(shipped: KnowledgeBase) -> None:
    d_min = _d_min(shipped)
    for concurrency in (25, 50):
        measured = _measured(shipped, TTFT_ROWS[concurrency])
        assert _bound(concurrency, d_min) > measured, concurrency
    assert _bound(5, d_min) <= _measured(shipped, TTFT_ROWS[5])  # not excluded at 5


def test_the_rows_stay_priced_by_the_steady_state_too_fast(shipped: KnowledgeBase) -> None:
    receipt = shipped.get(NIM)
    assert receipt is not None
    for row in TTFT_ROWS.values():
        result = evaluate_row(shipped, receipt, row, receipt.data["results"][row], False)
        assert result.error is not None and result.error < 0  # kb too fast, as documented
        assert any("serving steady state" in a for a in result.assumed)
        assert not any("first wave" in a for a in result.assumed)
