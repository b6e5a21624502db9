"""What kb says it checked: a record's verdict and each item's state text (verdict.py)."""

from __future__ import annotations

import pytest

from kb.equations.results import Item
from kb.equations.verdict import erratum_text, has_verdict, record_verdict, state_text


def _claim(state: str, kind: str = "numeric", **extra: str) -> Item:
    return Item(
        "claim", f"c-{state}", "/claims/0", state, extra.pop("detail", ""), kind=kind, **extra
    )


@pytest.mark.parametrize(
    ("states", "data", "text", "tone"),
    [
        ([], {}, "not validated", "none"),
        (
            [],
            {"unvalidated": "no receipt measures it yet"},
            "not validated: no receipt measures it yet",
            "none",
        ),
        (
            ["recomputed", "validated", "validated"],
            {},
            "validated against 2 measurements",
            "validated",
        ),
        (["contradicted"], {}, "contradicted by 1 measurement", "contradicted"),
        (
            ["accepted", "validated"],
            {},
            "contradicted by 1 measurement (1 accepted); validated against 1 measurement",
            "contradicted",
        ),
        (
            ["holds", "holds"],
            {},
            "not validated; 2 bounds hold against their measurements",
            "none",
        ),
        (
            ["erratum", "erratum", "recomputed"],
            {"unvalidated": "why"},
            "not validated: why; carries 2 errata",
            "erratum",
        ),
        (
            ["erratum", "validated"],
            {},
            "validated against 1 measurement; carries 1 erratum",
            "erratum",
        ),
        (["refuted"], {}, "not validated; 1 claim refuted", "contradicted"),
    ],
)
def test_the_verdict_counts_predictions_and_errata(
    states: list[str], data: dict[str, str], text: str, tone: str
) -> None:
    kinds = {"validated": "prediction", "contradicted": "prediction", "holds": "bound"}
    items = [
        _claim("contradicted", "prediction", accepted="known")
        if s == "accepted"
        else _claim(s, kinds.get(s, "numeric"))
        for s in states
    ]
    items.append(Item("equation", "e", "/equations/e", "consistent", "ok"))  # not counted
    verdict = record_verdict(items, data)
    assert (verdict.text, verdict.tone) == (text, tone)
    assert verdict.as_json()["text"] == text


def test_unverified_carries_its_reason_and_an_erratum_says_both_values() -> None:
    assert state_text(_claim("unverified", detail="depends on the regime")) == (
        "unverified (depends on the regime)"
    )
    assert state_text(_claim("recomputed", detail="computed 3")) == "recomputed"
    erratum = _claim("erratum", claimed="3318", computed="237.02")
    assert erratum_text(erratum) == "the source says 3318; kb computes 237.02"


def test_only_records_with_a_model_have_a_verdict() -> None:
    assert has_verdict("flop_class", {}) and has_verdict("strategy", {})
    assert not has_verdict("accelerator", {"memory": {}})
