"""One model, one answer (issue 35 item 5): `kb ledger` and `kb calc` price one decode step.

`kb ledger placements/tp-llama-3.1-70b-h100-tp4-vs-tp8` evaluates
flops/tp-decode-allreduce-time's step equation (roofline_step, below the ridge its
step_time_parts) at the terms it derives from the workload (kb/ledger/workload.py
`StepModel`). `kb calc flops/tp-decode-allreduce-time step_time`, given the same raw
inputs by hand, evaluates that class's step_time, which states the weight read, the KV
read over min(N, n_kv) ranks, the all-reduces and the overhead in one expression. The
two must print the same figure, to the last digit, and that figure is pinned to the
hand-worked fraction below: if the ledger changes alone (a term dropped or doubled, a
binding moved), or the class's step_time changes alone, or both move together, a test
here fails. Since session 26 the placement names the non-matmul kernel profile
(kb/data/end-to-end.json `prefill_kernels.same_shapes`: Llama-2-70B's H100 rows price
Llama 3.1 70B, the same kernel shape), so the ledger is the class's step plus the
composition's measured term L*max(0, t_k(B) - t_k(1)) (`decode_kernels`, no symbol of the
class), held here by hand beside it.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.api import open_kb, validate
from kb.cli import cli
from kb.equations.evaluate import evaluate
from kb.ledger.analysis import PlacementAnalysis, analyze_placement
from kb.ledger.workload import exact_spec

ROOT = Path(__file__).resolve().parents[2] / "records"
PLACEMENT = "placements/tp-llama-3.1-70b-h100-tp4-vs-tp8"
TP = "flops/tp-decode-allreduce-time"
MODEL = "models/llama-3.1-70b"
RECEIPT = "receipts/sglang-custom-all-reduce-h100-latency"
ROW = {4: 12, 8: 3}  # the receipt's 1 MiB rows at TP4 and TP8
MS = Fraction(1, 1000)

P, BW, L, HD = 70_552_387_584, 2_970 * 10**9, 80, 128  # BW: the H100's measured Triad rate
AR = {4: Fraction(311, 10**7), 8: Fraction(338, 10**7)}  # 31.1 us, 33.8 us
T_O = Fraction(985, 10**7)  # 98.5 us, fitted against the measured rate
# receipts/vidur-llama-2-non-matmul-kernel-time, Llama-2-70B on H100: (1 token, 128 tokens)
TK = {4: (Fraction(20, 10**6), Fraction(22, 10**6)), 8: (Fraction(17, 10**6), Fraction(20, 10**6))}


def hand_step(n: int, batch: int = 64, context: int = 2048) -> Fraction:
    """t_w + t_kv + c*L*t_ar + L*t_o at bf16 weights and cache, n_kv = 8, in seconds."""
    weight_read = Fraction(P * 2, n * BW)
    kv_read = Fraction(batch * context * 2 * L * 8 * HD * 2, min(n, 8) * BW)
    return weight_read + kv_read + 2 * L * AR[n] + L * T_O


def hand_kernels(n: int, batch: int = 64) -> Fraction:
    """L * max(0, t_k(B) - t_k(1)), linear between the 1- and 128-token rows (B <= 128)."""
    one, at_128 = TK[n]
    return L * (at_128 - one) * (batch - 1) / 127


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*args, "--root", str(ROOT)])
    return result.exit_code, result.output


def calc_inputs(n: int) -> list[str]:
    """The raw inputs of the placement's step, as a user types them for `kb calc`."""
    pairs = {
        "P": f"{MODEL}#derived.params_total",
        "b_w": "2 B",
        "N": str(n),
        "BW_hbm": "hardware/nvidia-h100-sxm#memory.bandwidth_achieved",
        "B": "64",
        "S": "2048",
        "L": f"{MODEL}#geometry.layers",
        "n_kv": f"{MODEL}#geometry.kv_heads",
        "h_d": f"{MODEL}#geometry.head_dim",
        "b_kv": "2 B",
        "c": "2",
        "t_ar": f"{RECEIPT}#results.{ROW[n]}.latency",
        "t_o": f"{TP}#claims.0.expect",  # engines/nemo's per-layer overhead
    }
    return [arg for name, value in pairs.items() for arg in ("--set", f"{name}={value}")]


@pytest.fixture(scope="module")
def ledger_json() -> dict[str, Any]:
    code, out = run("ledger", PLACEMENT, "--format", "json")
    assert code == 0, out
    return {side["option"]: side for side in json.loads(out)["ledgers"]}


@pytest.mark.parametrize(("option", "n"), [("tp8", 8), ("tp4", 4)])
def test_kb_ledger_and_kb_calc_print_the_same_tpot(
    ledger_json: dict[str, Any], option: str, n: int
) -> None:
    code, out = run("calc", TP, "step_time", *calc_inputs(n), "--format", "json")
    assert code == 0, out
    value = json.loads(out)["value"]
    assert value["unit"] == "ms"
    calc = Fraction(value["exact"]) * MS
    ledger = Fraction(ledger_json[option]["total"]["exact"])
    assert calc == hand_step(n)
    assert ledger == calc + hand_kernels(n)
    # and the text each prints is its figure
    code, text = run("calc", TP, "step_time", *calc_inputs(n))
    shown = "21.03 ms" if n == 8 else "28.35 ms"
    assert f"t_step = {shown}" in text
    code, printed = run("ledger", PLACEMENT)
    section = printed.split(f"  {option}:\n", 2)[-1]
    total = "21.15 ms" if n == 8 else "28.43 ms"
    assert f"T_total                           {total}" in section


def test_the_ledger_says_which_equation_gives_its_total(ledger_json: dict[str, Any]) -> None:
    formula = ledger_json["tp8"]["total_formula"]
    assert formula.startswith(f"{TP} roofline_step: t_roof = max(t_w, T_math) + t_kv")


def test_the_claim_of_the_class_is_the_ledger_figure(ledger_json: dict[str, Any]) -> None:
    """tp8-custom-70b-b64 binds the placement's batch, context and cache: the same step,
    which the ledger prices plus the measured non-matmul kernels' growth."""
    code, out = run("calc", TP, "--claim", "tp8-custom-70b-b64", "--format", "json")
    assert code == 0, out
    assert Fraction(json.loads(out)["value"]["exact"]) * MS + hand_kernels(8) == Fraction(
        ledger_json["tp8"]["total"]["exact"]
    )


@pytest.fixture(scope="module")
def shipped():  # type: ignore[no-untyped-def]
    return open_kb(ROOT, checked=validate(ROOT))


def _analysis(kb: Any, record_id: str, batch: int, context: int) -> PlacementAnalysis:
    result = analyze_placement(
        kb.get(record_id), kb, {"batch": str(batch), "context": str(context)}
    )
    assert isinstance(result, PlacementAnalysis), result
    return result


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n_index=st.sampled_from([0, 1]),
    batch=st.integers(min_value=1, max_value=128),
    context=st.integers(min_value=1, max_value=4096),  # TP4 holds 128 x 4096
)
def test_the_step_agrees_with_step_time_at_any_batch_and_context(
    shipped: Any, n_index: int, batch: int, context: int
) -> None:
    """Over random batches and contexts: the ledger's total is step_time at the same inputs
    plus the measured kernels' growth at the batch (zero at batch one).

    t_ar is whatever the curves priced for that message size (an exact row, an
    interpolation, or the line rate beyond the curve); it is read off the ledger's
    all-reduce and bound into `kb calc`'s evaluation, every other input is raw.
    """
    side = _analysis(shipped, PLACEMENT, batch, context).sides[n_index]
    assert side.ledger is not None
    n = 4 if n_index == 0 else 8
    (all_reduce,) = side.ledger.transfers
    t_ar = Fraction(all_reduce.exposed) / (2 * L)
    bindings = {
        "P": f"{MODEL}#derived.params_total",
        "b_w": {"value": 2, "unit": "B"},
        "N": {"value": n, "unit": "1"},
        "BW_hbm": "hardware/nvidia-h100-sxm#memory.bandwidth_achieved",
        "B": {"value": batch, "unit": "1"},
        "S": {"value": context, "unit": "1"},
        "L": f"{MODEL}#geometry.layers",
        "n_kv": f"{MODEL}#geometry.kv_heads",
        "h_d": f"{MODEL}#geometry.head_dim",
        "b_kv": {"value": 2, "unit": "B"},
        "c": {"value": 2, "unit": "1"},
        "t_ar": exact_spec(t_ar, "s"),
        "t_o": f"{TP}#claims.0.expect",
    }
    result = evaluate(shipped, shipped.get(TP), "step_time", bindings)
    assert result.unit == "ms"
    # below the ridge at these batches
    assert Fraction(side.ledger.total) == result.value * MS + hand_kernels(n, batch)
    assert side.ledger.rows_sum == side.ledger.total  # the rows split the class's step


COMPOSED = [
    "placements/tp-llama-3.1-70b-h100-tp4-vs-tp8",
    "placements/llama-3.1-70b-16x-h100-two-nodes",
    "placements/llama-2-7b-h100-nemo-tp2-tp4-tp8",
    "placements/deepseek-v3-fp8-8x-h200-vs-8x-l40s",
]


@pytest.mark.parametrize("record_id", COMPOSED)
def test_every_composed_ledger_is_the_class_step_and_its_rows_split_it(
    shipped: Any, record_id: str
) -> None:
    """PP stage sends, DP replicas, MoE reads: the total is the class's step plus the rest."""
    result = analyze_placement(shipped.get(record_id), shipped)
    assert isinstance(result, PlacementAnalysis)
    computed = [s.ledger for s in result.sides if s.ledger is not None]
    assert computed
    for ledger in computed:
        assert ledger.composed is not None
        assert ledger.composed_formula.startswith(TP)
        assert ledger.rows_sum == ledger.total


def test_a_measured_row_stands_in_for_its_term_of_the_step(tmp_path: Path) -> None:
    """measured_terms: the measured useful row replaces t_w + t_kv in the class's step."""
    import yaml

    cases = Path(__file__).resolve().parents[1] / "rules" / "cases" / "measured_term_disagrees.yaml"
    files = yaml.safe_load(cases.read_text(encoding="utf-8"))["cases"][
        "measured_useful_within_the_band"
    ]["files"]
    root = tmp_path / "records"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["ledger", "placements/p", "--format", "json", "--root", str(root)]
    )
    assert result.exit_code == 0, result.output
    side = next(s for s in json.loads(result.output)["ledgers"] if s["option"] == "other")
    rows = {r["row"]: r for r in side["rows"]}
    assert rows["useful"]["provenance"] == "measured"
    assert Fraction(side["total"]["exact"]) == sum(
        (Fraction(r["value"]["exact"]) for r in side["rows"]), Fraction(0)
    )
    measured = Fraction(rows["useful"]["value"]["exact"])
    derived = Fraction(rows["useful"]["inputs"]["derived"])
    assert measured != derived  # the class's t_w + t_kv is replaced, not added to
    others = sum(
        (Fraction(r["value"]["exact"]) for n, r in rows.items() if n != "useful"), Fraction(0)
    )
    assert Fraction(side["total"]["exact"]) == measured + others
    assert "with the measured useful in place of its derived term" in side["total_formula"]
