"""A symbol's binding kept for the run gives the very value, trail line and error of binding it.

kb.equations.evaluate binds each free symbol of an evaluation from its (spec, origin);
on a frozen knowledge base the run's evaluation memo keeps each binding by the record,
the symbol and the spec (`_bound`), so the batches of one planner pass bind the model's
fields once. Here the same flop class is evaluated at several bindings that share some
symbols' specs (the second evaluation binds those from the memo), and one whose spec
is refused (a bandwidth bound to a count), twice (the second time from the memo):
every result, trail and error must equal what the evaluation gives with the memo
switched off.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import kb.equations.evalmemo as evalmemo
from kb.api import open_kb, validate
from kb.equations.evaluate import EvaluationError, evaluate, parse_quantity
from kb.model import KnowledgeBase

ROOT = Path(__file__).resolve().parents[2] / "records"
CLASS, TARGET = "flops/decode-weight-read", "step_bound_params"
MODEL, H100 = "models/llama-3.1-70b", "hardware/nvidia-h100-sxm"
ASKED: list[Mapping[str, Any]] = [
    {"P": f"{MODEL}#derived.params_total", "b_w": parse_quantity("2 B"), "N": 1},
    {"P": f"{MODEL}#derived.params_total", "b_w": parse_quantity("2 B"), "N": 8},
    {"P": f"{MODEL}#derived.params_total", "b_w": parse_quantity("1 B"), "N": 8},
    {"P": f"{MODEL}#derived.params_total", "b_w": parse_quantity("2 B"), "N": "8 GB/s"},
    {"P": f"{MODEL}#derived.params_total", "b_w": parse_quantity("1 B"), "N": "8 GB/s"},
]


def _asked(bindings: Mapping[str, Any]) -> dict[str, Any]:
    """The bindings with N as a count quantity (or the refused bandwidth) and BW_hbm."""
    n = bindings["N"]
    count = parse_quantity(n) if isinstance(n, str) else {"value": n, "unit": "1"}
    return {**bindings, "N": count, "BW_hbm": f"{H100}#memory.bandwidth"}


def _answers(kb: KnowledgeBase) -> list[tuple[str, Any, list[str]]]:
    record = kb.get(CLASS)
    assert record is not None
    found: list[tuple[str, Any, list[str]]] = []
    for bindings in ASKED:
        try:
            done = evaluate(kb, record, TARGET, _asked(bindings))
        except EvaluationError as exc:
            found.append((type(exc).__name__, str(exc), []))
            continue
        found.append(("value", done.value, list(done.trail)))
    return found


@pytest.fixture(scope="module")
def shipped() -> KnowledgeBase:
    kb = open_kb(ROOT, checked=validate(ROOT, remember=False))
    kb.freeze()
    return kb


def test_kept_bindings_give_the_values_trails_and_errors_of_binding_afresh(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = _answers(shipped) + _answers(shipped)  # the second round: every binding kept
    memo = shipped.run.kept(evalmemo.EVALUATIONS)
    assert memo is not None and any(
        isinstance(k, tuple) and k[0] == "derived" and k[3][0] == "bind" for k in memo.known
    )
    monkeypatch.setattr(evalmemo, "evaluations", lambda kb: None)
    afresh = _answers(shipped)
    assert kept == afresh + afresh
    kinds = [kind for kind, _, _ in afresh]
    assert kinds == ["value", "value", "value", "EvaluationError", "EvaluationError"]
    assert "N is declared" in afresh[3][1]  # the refused binding's own words
