"""Each derivation rule proves the right step and refutes a wrong one."""

from __future__ import annotations

import json
import re

import pytest

from kb.equations import derive
from kb.equations.derive import RULES
from kb.equations.engine import analyse
from tests.conftest import REPO
from tests.equations.helpers import flop, knowledge_base

BASE = """
symbols:
  T: {meaning: step time, unit: s}
  T_comp: {meaning: compute time, unit: s}
  T_comm: {meaning: communication time, unit: s}
  t_0: {meaning: fixed overhead, unit: s}
  F: {meaning: work, unit: FLOP}
  P_peak: {meaning: peak rate, unit: TFLOP/s}
  n: {meaning: bytes, unit: B}
  BW: {meaning: bandwidth, unit: GB/s}
  N: {meaning: ranks, unit: "1"}
  x: {meaning: a size, unit: "1"}
  y: {meaning: a result, unit: "1"}
equations:
  step: {expr: "T = max(T_comp, T_comm) + t_0"}
  step_comm: {expr: "T = T_comm + t_0"}
  step_comp: {expr: "T = T_comp + t_0"}
  comp: {expr: "T_comp = F/P_peak"}
  comm: {expr: "T_comm = n/BW"}
  step_full: {expr: "T = max(F/P_peak, n/BW) + t_0"}
  step_wrong: {expr: "T = max(F/P_peak, 2*n/BW) + t_0"}
  square: {expr: "y = x**2"}
  cube: {expr: "y = x**3"}
  ratio: {expr: "y = (N - 1)/N"}
  one: {expr: "y = 1"}
  half: {expr: "y = 1/2"}
"""


def states(steps: str, claims: str = "") -> dict[str, tuple[str, str]]:
    data = flop(base=BASE + "derivations:\n  - id: d\n    steps:\n" + steps + claims)
    result = analyse(knowledge_base("/x", ("flops/x", data)), use_cache=False).results["flops/x"]
    found = {i.id: (i.state, i.detail) for i in result.items if i.section != "equation"}
    return found


@pytest.mark.parametrize(
    ("step", "state"),
    [
        ('{rule: regime, from: step, condition: "T_comp <= T_comm", result: step_comm}', "derived"),
        ('{rule: regime, from: step, condition: "T_comm <= T_comp", result: step_comp}', "derived"),
        ('{rule: regime, from: step, condition: "T_comm <= T_comp", result: step_comm}', "refuted"),
        ('{rule: regime, from: step, condition: "t_0 <= T_comp", result: step_comm}', "unverified"),
        ("{rule: substitute, from: [step, comp, comm], result: step_full}", "derived"),
        ("{rule: substitute, from: [step, comp, comm], result: step_wrong}", "refuted"),
        ("{rule: limit, from: ratio, var: N, to: oo, result: one}", "derived"),
        ("{rule: limit, from: ratio, var: N, to: oo, result: half}", "refuted"),
        (
            "{rule: approximate, from: ratio, var: N, range: [2, oo], tolerance: 1, result: one}",
            "derived",
        ),
        (
            "{rule: approximate, from: ratio, var: N, range: [2, oo], tolerance: 0.5, result: one}",
            "refuted",
        ),
        ("{rule: rewrite, from: square, result: cube}", "refuted"),
        ('{rule: scale, from: comp, factor: "2", result: comp}', "refuted"),
    ],
)
def test_rules(step: str, state: str) -> None:
    found = states(f"      - {step}\n")
    assert found["d.1"][0] == state, found["d.1"][1]


def test_power_law_claims() -> None:
    claims = """claims:
  - {id: sq, kind: scaling, of: square, var: x, law: power, exponent: 2}
  - {id: sq-wrong, kind: scaling, of: square, var: x, law: power, exponent: 3}
"""
    found = states("      - {rule: define, result: square}\n", claims)
    assert found["sq"][0] == "recomputed" and found["sq-wrong"][0] == "refuted"
    assert "elasticity 2" in found["sq-wrong"][1]


def test_a_residual_with_max_min_is_not_called_nonzero_without_a_witness() -> None:
    import sympy as sp

    from kb.equations.algebra import NONZERO, decide_zero

    b = sp.Symbol("B", positive=True)
    unevaluated = sp.Min(b, sp.Max(1, 2, evaluate=False), evaluate=False)
    verdict = decide_zero(unevaluated - sp.Min(2, b))
    assert verdict.outcome != NONZERO, verdict  # it is zero: Max(1, 2) = 2
    assert decide_zero(sp.Min(b, 3) - sp.Min(2, b)).outcome == NONZERO  # B = 5: 3 - 2


@pytest.mark.parametrize("rule", ["approximately", "[define]", "{a: 1}", "null"])
def test_an_unknown_rule_is_invalid_and_runs_no_other_check(rule: str) -> None:
    # the step names real equations, so any fall-through to another rule would judge it;
    # the schema's enum reports the rule (SC001): the engine adds no second finding
    data = flop(
        base=BASE + f"derivations:\n  - id: d\n    steps:\n      - {{rule: {rule}, from: ratio, "
        "var: N, range: [2, oo], tolerance: 1, result: one}\n"
    )
    result = analyse(knowledge_base("/x", ("flops/x", data)), use_cache=False).results["flops/x"]
    assert [i for i in result.issues if i.pointer.startswith("/derivations")] == []
    steps = [i for i in result.items if i.section == "derivation"]
    assert [(s.state, s.detail.startswith("rule ")) for s in steps] == [("invalid", True)], steps


def _rule_enums(node: object) -> list[list[str]]:
    """Every `rule: {enum: [...]}` and `rule: {const: ...}` in a schema, at any depth."""
    found: list[list[str]] = []
    if isinstance(node, dict):
        rule = node.get("rule")
        if isinstance(rule, dict) and ("enum" in rule or "const" in rule):
            found.append(list(rule["enum"]) if "enum" in rule else [rule["const"]])
        for child in node.values():
            found.extend(_rule_enums(child))
    elif isinstance(node, list):
        for child in node:
            found.extend(_rule_enums(child))
    return found


def test_the_rule_table_is_the_one_list_schema_docs_and_readme_give() -> None:
    rules = list(RULES)
    schema = json.loads((REPO / "kb" / "schemas" / "equations.schema.json").read_text())
    enums = _rule_enums(schema)
    assert enums[0] == rules  # the step's `rule` enum: the table's rules, in its order
    assert all(set(e) <= set(rules) for e in enums[1:]), enums  # the if-branches name real ones
    docs = (REPO / "docs" / "equations.md").read_text(encoding="utf-8")
    assert re.findall(r"^\| `(\w+)` \|", docs, flags=re.M) == rules
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"re-derives every derivation step \(([^)]*)\)", " ".join(readme.split()))
    assert listed is not None
    assert [r.strip() for r in listed.group(1).split(",")] == [r for r in rules if r != "define"]
    documented = re.findall(r"^- `(\w+)`|; `(\w+)` \(", derive.__doc__ or "", flags=re.M)
    assert sorted(a or b for a, b in documented) == sorted(rules)
