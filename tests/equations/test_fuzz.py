"""Malformed equation sections never crash the engine: every problem becomes an issue."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.equations import derive
from tests.equations.helpers import HARDWARE, flop, issues, knowledge_base

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 10**6),
    st.floats(allow_nan=True),
    st.sampled_from(
        [
            "B",
            "d",
            "BW_link",
            "b_star",
            "crossover",
            "oo",
            "x__y",
            "1e9",
            "",
            "hardware/gpu#memory.bandwidth",
            "hardware/gpu#memory",
            "63 GB/s",
            "B*d",
            "max(B, d)",
            "B <= d",
            "GB/s",
            "proportional",
            "power",
        ]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["value", "unit", "B", "d", "BW_link", "x"]), inner, max_size=3
        ),
    ),
    max_leaves=6,
)
CLAIM_KEYS = [
    "id",
    "kind",
    "of",
    "expr",
    "bind",
    "expect",
    "var",
    "law",
    "exponent",
    "asymptotic",
    "change",
    "factor",
    "round",
    "rel_tol",
]
STEP_KEYS = ["rule", "from", "result", "var", "factor", "to", "range", "tolerance", "condition"]
CLAIMS = st.lists(st.dictionaries(st.sampled_from(CLAIM_KEYS), VALUES, max_size=8), max_size=3)
STEPS = st.lists(st.dictionaries(st.sampled_from(STEP_KEYS), VALUES, max_size=6), max_size=3)
KINDS = st.sampled_from(["numeric", "scaling", "effect"])
RULES = st.sampled_from([*derive.RULES, "unknown-rule"])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    CLAIMS, STEPS, st.lists(KINDS, min_size=3, max_size=3), st.lists(RULES, min_size=3, max_size=3)
)
def test_malformed_sections_become_issues_not_crashes(claims, steps, kinds, rules) -> None:
    for claim, kind in zip(claims, kinds, strict=False):
        claim.setdefault("kind", kind)
    for step, rule in zip(steps, rules, strict=False):
        step.setdefault("rule", rule)
    data = flop()
    data["claims"] = claims
    data["derivations"] = [{"id": "d", "steps": steps}]
    found = issues(knowledge_base("/x", ("flops/x", data), ("hardware/gpu", HARDWARE)))
    assert all(issue.code.startswith("EQ") for issue in found)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(
        st.sampled_from(["B", "d", "x y", "_x", "lambda", "BW_link", "5"]), VALUES, max_size=4
    ),
    st.dictionaries(st.sampled_from(["crossover", "e1", "e2"]), VALUES, max_size=3),
)
def test_malformed_symbols_and_equations_become_issues(symbols, equations) -> None:
    data = flop()
    data["symbols"].update(symbols)
    data["equations"].update(equations)
    found = issues(knowledge_base("/x", ("flops/x", data)))
    assert all(issue.code.startswith("EQ") for issue in found)
