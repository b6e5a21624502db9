"""A claim template shows kb's computed value at the claim's own rounding (prose helpers, issue 33).

Before, `{claim:fraction-b8}` printed the engine's 0.89988708 in prose beside a claim
whose own comparison rounds to 0.01; without a stated `round` it shows 4 significant digits.
"""

from __future__ import annotations

from fractions import Fraction

from kb.prose.render import _at_claim_precision, value_text


def test_the_claims_round_step_sets_what_prose_shows() -> None:
    value = Fraction("0.89988708")
    assert value_text(_at_claim_precision(value, 0.01), 0.01) == "0.9"
    assert value_text(_at_claim_precision(Fraction("19.8407"), 0.01), 0.01) == "19.84"
    assert value_text(_at_claim_precision(Fraction("274.72222"), 1), 1) == "275"


def test_without_a_step_four_significant_digits() -> None:
    assert value_text(Fraction("274.72222"), None) == "274.7"
    assert value_text(Fraction("0.17929372"), None) == "0.1793"
    assert value_text(Fraction(3), True) == "3"  # a YAML boolean is no step
