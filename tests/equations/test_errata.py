"""Errata: a source's refuted statement kept as a claim, judged by the same path as any claim.

Refuted is its right state (`erratum`, no finding); holding is EQ017. The plan
path (plan.py) and the symbolic path (claims.py) give the same bytes.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.equations import engine
from tests.equations.helpers import HARDWARE, flop, knowledge_base, symbolic_alone

ERRATUM = {"source": "sources/seed", "reason": "the source halves it; kb doubles it"}


def _kb(claims: str) -> Any:
    return knowledge_base("/x", ("flops/x", flop(claims)), ("hardware/gpu", HARDWARE))


def _claim_items(kb: Any) -> list[Any]:
    return [
        i
        for i in engine.analyse(kb, use_cache=False).results["flops/x"].items
        if i.section == "claim"
    ]


def _numeric(expected: float, erratum: bool) -> str:
    claim = {
        "id": "b-star",
        "kind": "numeric",
        "of": "b_star",
        "bind": {
            "P_layer": {"value": 202375168, "unit": "1"},
            "d": {"value": 4096, "unit": "1"},
            "BW_link": {"value": 450, "unit": "GB/s"},
            "BW_hbm": "hardware/gpu#memory.bandwidth",
        },
        "expect": {"value": expected, "unit": "1", "round": 1},
    }
    if erratum:
        claim["erratum"] = ERRATUM
    return yaml.safe_dump({"claims": [claim]})


@pytest.mark.parametrize(
    ("claim", "state", "codes"),
    [
        (
            '{id: e, kind: effect, of: b_star, change: {d: "d/2"}, factor: 0.5, erratum: ERR}',
            "erratum",
            [],
        ),
        (
            '{id: e, kind: effect, of: b_star, change: {d: "d/2"}, factor: 2, erratum: ERR}',
            "recomputed",
            ["EQ017"],
        ),
        (
            "{id: s, kind: scaling, of: b_star, var: d, law: proportional, erratum: ERR}",
            "erratum",
            [],
        ),
        (
            "{id: s, kind: scaling, of: b_star, var: d, law: inverse, erratum: ERR}",
            "recomputed",
            ["EQ017"],
        ),
    ],
)
def test_effect_and_scaling_errata(claim: str, state: str, codes: list[str]) -> None:
    text = "claims:\n  - " + claim.replace("ERR", "{source: sources/seed, reason: why}") + "\n"
    kb = _kb(text)
    (item,) = _claim_items(kb)
    assert (item.state, item.source) == (state, "sources/seed")
    assert [i.code for i in engine.analyse(kb, use_cache=False).results["flops/x"].issues] == codes


def test_an_erratum_item_says_what_the_source_says_and_what_kb_computes() -> None:
    (item,) = _claim_items(_kb(_numeric(1659, erratum=True)))
    assert item.state == "erratum"
    assert (item.claimed, item.computed) == ("1659", "3318.4478 (exact 222336/67)")
    assert item.detail.startswith("erratum: computed 3318.4478")


@settings(max_examples=30, deadline=None)
@given(expected=st.integers(3300, 3340), erratum=st.booleans())
def test_an_erratum_is_the_claim_turned_around_on_both_paths(expected: int, erratum: bool) -> None:
    kb = _kb(_numeric(expected, erratum))
    record = kb.records["flops/x"]
    resolver = lambda spec: engine.resolve(kb, spec)  # noqa: E731
    symbolic, plan = engine.run_record(record, resolver)
    assert plan is not None
    assert engine._to_json(symbolic_alone(record, resolver)) == engine._to_json(symbolic)
    planned = engine.run_planned(record, plan, resolver)
    assert planned is not None and engine._to_json(planned) == engine._to_json(symbolic)
    (item,) = [i for i in symbolic.items if i.section == "claim"]
    holds = expected == 3318
    codes = [i.code for i in symbolic.issues]
    if erratum:
        assert (item.state, codes) == (("recomputed", ["EQ017"]) if holds else ("erratum", []))
    else:
        assert (item.state, codes) == (("recomputed", []) if holds else ("refuted", ["EQ007"]))
