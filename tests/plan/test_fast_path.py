"""The build's fast path gives exactly the answers of `kb plan --format json`.

A site build asks kb.plan every question of the explorer's menus on one frozen
knowledge base: each evaluation of a flop class is answered once per run
(kb.equations.evalmemo), each scenario once per model pass (the pass's cache), and a
pair of dimensions' Pareto front is one sort (kb.plan.pareto). None of that may change
an answer. Here a sample of questions (a dense 70B across two nodes, an MoE model that
fits, DeepSeek-V3 where nothing fits, Llama 4 Maverick at one sequence, whose prefill's
exact values are written by kb.ledger.render's rounding rule) is asked in that order
on one knowledge base, as the build asks them, and each report must equal, as JSON,
what `kb plan --format json` prints for the same arguments with the memo switched off.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import kb.equations.evalmemo as evalmemo
from kb.api import open_kb, validate
from kb.cli import cli
from kb.equations.evaluate import coprime_fraction
from kb.model import KnowledgeBase
from kb.sitegen import explorer

ROOT = Path(__file__).resolve().parents[2] / "records"
IB = "interconnects/infiniband-ndr"
VLLM = "engines/vllm"
H100, H200 = "hardware/nvidia-h100-sxm", "hardware/nvidia-h200-sxm"
SAMPLE = [
    explorer.Query("models/llama-3.1-70b", H100, 16, 2, 64, 2048, 256, VLLM, IB),
    explorer.Query("models/llama-3.1-70b", H100, 8, 1, 8, 2048, 256, VLLM),
    explorer.Query("models/mixtral-8x7b", H200, 8, 1, 8, 2048, 256, VLLM),
    explorer.Query("models/deepseek-v3", H100, 8, 1, 8, 2048, 256, VLLM),
    # Llama 4 Maverick, one sequence: a prefill's exact value past Python's 4,300 digits
    explorer.Query("models/llama-4-maverick", H200, 8, 1, 1, 2048, 256, VLLM),
]


@pytest.fixture(scope="module")
def shipped() -> KnowledgeBase:
    kb = open_kb(ROOT, checked=validate(ROOT, remember=False))
    kb.freeze()
    return kb


@pytest.fixture(scope="module")
def fast(shipped: KnowledgeBase) -> list[dict[str, Any]]:
    """The sample's reports as a build asks them: one knowledge base, one pass cache."""
    cache: dict[Any, Any] = {}
    found = [json.loads(json.dumps(explorer.plan_report(shipped, q, cache))) for q in SAMPLE]
    memo = shipped.run.kept(evalmemo.EVALUATIONS)
    assert memo is not None and memo.reused > 0  # the fast path was taken
    return found


def slow(query: explorer.Query, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """`kb plan ... --format json` with every evaluation computed afresh."""
    with monkeypatch.context() as patch:
        patch.setattr(evalmemo, "evaluations", lambda kb: None)
        result = CliRunner().invoke(
            cli, ["plan", *query.argv(), "--format", "json", "--root", str(ROOT)]
        )
    assert result.exit_code in (0, 1), result.output  # 1: no placement fits
    found: dict[str, Any] = json.loads(result.output)
    return found


@pytest.mark.parametrize("index", range(len(SAMPLE)), ids=[q.model for q in SAMPLE])
def test_the_build_answers_what_kb_plan_prints(
    index: int, fast: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = slow(SAMPLE[index], monkeypatch)
    assert json.dumps(fast[index], sort_keys=True) == json.dumps(expected, sort_keys=True)


def test_the_sample_holds_an_infeasible_and_an_moe_question(fast: list[dict[str, Any]]) -> None:
    statuses = [{o["status"] for o in report["options"]} for report in fast]
    assert statuses[3] == {"infeasible"}  # DeepSeek-V3 in bf16 on eight H100
    assert "feasible" in statuses[2]  # Mixtral: an MoE model that fits, EP mappings priced
    assert any("ep" in o["name"] for o in fast[2]["options"] if o["status"] == "feasible")


def test_the_sample_holds_a_value_written_rounded(fast: list[dict[str, Any]]) -> None:
    values = [
        v
        for o in fast[4]["options"]
        if o["status"] == "feasible"
        for v in o["values"].values()
        if v is not None
    ]
    assert any("rounded" in v for v in values)  # printed, never a traceback


@pytest.mark.parametrize(
    ("p", "q"),
    [(0, 1), (7, 3), (-7, 3), (3**500 - 2**400, 2**700), (1, 10**40 + 1)],
)
def test_a_coprime_fraction_is_the_reduced_fraction(p: int, q: int) -> None:
    made = coprime_fraction(p, q)
    assert made == Fraction(p, q) and hash(made) == hash(Fraction(p, q))
    assert (made.numerator, made.denominator) == (
        Fraction(p, q).numerator,
        Fraction(p, q).denominator,
    )
