"""Per-node rates and the declared reasons of rows kb cannot price (issue 35, session 18).

kb/data/end-to-end.json `per_node` declares two measures: a prefill-only run's prompt
tokens per second per node (batch x input / TTFT / nodes) and a decode-only run's output
tokens per second per node (batch / TPOT / nodes), from the composed pass and step alone.
`unpriced` gives, for rows whose metric kb cannot price at their source's conditions,
the precise reason shown instead of the generic one.
"""

from __future__ import annotations

import json
from fractions import Fraction as F

from kb.ledger.endtoend import (
    CONTRADICTED,
    NOT_EVALUABLE,
    UNITS,
    VALIDATED,
    evaluate_row,
    unpriced_reasons,
)
from kb.model import KnowledgeBase
from kb.resources import _package_dir

WIDE = "receipts/sglang-deepseek-v3-h100-wide-ep"


def _declared() -> dict[str, object]:
    text = (_package_dir("data") / "end-to-end.json").read_text(encoding="utf-8")
    data: dict[str, object] = json.loads(text)
    return data


def test_the_measures_are_declared_in_the_data_the_schema_and_the_code() -> None:
    data = _declared()
    schema = json.loads((_package_dir("schemas") / "receipt.schema.json").read_text("utf-8"))
    enum = schema["properties"]["results"]["items"]["properties"]["measures"]["enum"]
    for name in ("prefill_tokens_per_s_per_node", "decode_tokens_per_s_per_node"):
        assert name in data["measures"]  # type: ignore[operator]
        assert name in enum and UNITS[name] == "1/s"
    rule = data["per_node"]
    assert isinstance(rule, dict) and all(rule[k] for k in ("applies_to", "what", "rows", "reason"))


def test_a_prefill_row_is_its_prompts_over_the_pass_per_node(shipped: KnowledgeBase) -> None:
    record = shipped.records[WIDE]
    result = evaluate_row(shipped, record, 0, record.data["results"][0], False)
    assert result.state in (VALIDATED, CONTRADICTED) and result.outcome is not None
    s = result.outcome.scenario
    assert (s.batch, s.input_tokens, s.nodes, s.dp, s.ep) == (128, 4096, 4, 32, 32)
    assert result.outcome.ttft is not None
    assert result.predicted == F(128 * 4096) / result.outcome.ttft / 4


def test_a_decode_row_is_its_batch_over_the_step_per_node(shipped: KnowledgeBase) -> None:
    record = shipped.records[WIDE]
    result = evaluate_row(shipped, record, 2, record.data["results"][2], False)
    assert result.state in (VALIDATED, CONTRADICTED) and result.outcome is not None
    s = result.outcome.scenario
    assert (s.batch, s.context, s.nodes) == (18432, 2000, 9)  # no output length: the KV length
    assert result.outcome.tpot is not None
    assert result.predicted == F(18432) / result.outcome.tpot / 9


def test_the_two_routers_get_one_prediction_each_shown_against_its_own(
    shipped: KnowledgeBase,
) -> None:
    """kb's router is even: the default and the perfect-EPLB rows share one prediction."""
    record = shipped.records[WIDE]
    default, perfect = (
        evaluate_row(shipped, record, i, record.data["results"][i], False) for i in (0, 1)
    )
    assert default.predicted == perfect.predicted
    assert default.measured != perfect.measured and default.error != perfect.error


# The rows session 18 declared a reason for (none states a measure).
SESSION_18 = {
    "receipts/deepseek-v3-r1-h800-wide-ep-serving#results.0",
    "receipts/deepseek-v3-r1-h800-wide-ep-serving#results.1",
    f"{WIDE}#results.3",
    "receipts/nvidia-llama-3.1-405b-pp-vs-tp-h200#results.0",
    "receipts/nvidia-nvswitch-vs-p2p-llama-3.1-70b#results.0",
    "receipts/mlenergy-v3-llama-3.1-8b-h100-energy-per-token#results.0",
    "receipts/mlenergy-v3-llama-3.1-8b-h100-energy-per-token#results.1",
}


def test_every_declared_reason_is_shown_on_its_shipped_row(shipped: KnowledgeBase) -> None:
    """Without `measures` the declared reason is the row's; with it, kb's own comes first.

    Since session 19 (`unpriced.with_measures`) a row that states its measure but not the
    conditions kb needs keeps kb's reason, followed by the declared one.
    """
    declared = unpriced_reasons()
    assert SESSION_18 <= set(declared)
    for key, reason in declared.items():
        receipt, _, index = key.partition("#results.")
        record = shipped.records[receipt]
        rows = record.data["results"]
        indices = [int(index)] if index else range(len(rows))  # a whole receipt's: every row
        for i in indices:
            row = rows[i]
            result = evaluate_row(shipped, record, i, row, False)
            assert result.state == NOT_EVALUABLE, (key, i)
            if "measures" in row:
                assert key not in SESSION_18, key
                assert result.reason.endswith(f"; {reason}") and result.reason != reason, key
            else:
                assert result.reason == reason, key


def test_a_row_whose_scenario_prices_nothing_shows_its_receipts_reason(
    shipped: KnowledgeBase,
) -> None:
    """The H20 rows become scenarios (the model, devices and engine resolve) but price nothing:
    kb's own reason (the unresolved BF16 binding) comes first, then the receipt's declared one."""
    receipt = "receipts/qwen3-speed-benchmark-qwen3-32b-h20-sglang-batch1"
    record = shipped.records[receipt]
    result = evaluate_row(shipped, record, 0, record.data["results"][0], False)
    assert result.state == NOT_EVALUABLE
    own, _, declared = result.reason.partition("; the Qwen team's runs are on an H20")
    assert "compute.bf16" in own and declared, result.reason
    assert result.reason.endswith(unpriced_reasons()[receipt])


def test_a_declared_reason_never_hides_a_row_that_states_its_measure(
    shipped: KnowledgeBase,
) -> None:
    record = shipped.records["receipts/mlenergy-v3-llama-3.1-8b-h100-energy-per-token"]
    row = {**record.data["results"][0], "measures": "output_tokens_per_s"}
    result = evaluate_row(shipped, record, 0, row, False)
    assert result.state == NOT_EVALUABLE
    assert result.reason != unpriced_reasons()[f"{record.id}#results.0"]


def test_the_operators_decode_rate_says_what_kb_lacks(shipped: KnowledgeBase) -> None:
    record = shipped.records["receipts/deepseek-v3-r1-h800-wide-ep-serving"]
    result = evaluate_row(shipped, record, 0, record.data["results"][0], False)
    assert result.state == NOT_EVALUABLE and "no engine record" in result.reason
    assert "per_node" in result.reason  # the metric composes; the conditions are missing


def test_a_per_node_rate_needs_its_batch_not_a_concurrency(shipped: KnowledgeBase) -> None:
    record = shipped.records[WIDE]
    row = {k: v for k, v in record.data["results"][2].items() if k != "batch"}
    result = evaluate_row(shipped, record, 2, {**row, "concurrency": 18432}, False)
    assert result.state == NOT_EVALUABLE and "per-node rate" in result.reason
