"""kb.equations.evalmemo: a repeated question gets the same answer (or error), computed once."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import pytest

from kb.equations.evalmemo import MAX_BITS, Evaluations
from kb.model import Record


@dataclass(frozen=True)
class Answer:
    value: Fraction
    trail: list[str] = field(default_factory=list)


class Boom(ValueError):
    pass


RECORD = Record("flops/x", "flop_class", "flops/x.yaml", {})


def test_the_same_question_is_computed_once_and_its_trail_is_a_copy() -> None:
    memo, calls = Evaluations(), []

    def compute() -> Answer:
        calls.append(1)
        return Answer(Fraction(3, 7), ["t = 3/7"])

    first = memo.of(RECORD, "t", {"B": {"value": 1, "unit": "1"}}, None, compute, (Boom,))
    first.trail.append("changed by a caller")
    again = memo.of(RECORD, "t", {"B": {"value": 1, "unit": "1"}}, None, compute, (Boom,))
    assert calls == [1] and again.value == Fraction(3, 7) and again.trail == ["t = 3/7"]
    other = memo.of(RECORD, "t", {"B": {"value": 1.0, "unit": "1"}}, None, compute, (Boom,))
    assert calls == [1, 1] and other.value == first.value  # 1.0 is another input than 1
    copy = Record("flops/x", "flop_class", "flops/x.yaml", {})
    memo.of(copy, "t", {"B": {"value": 1, "unit": "1"}}, None, compute, (Boom,))
    assert len(calls) == 3  # another record object is another question


def test_an_error_is_raised_again_and_a_huge_value_is_not_kept() -> None:
    memo, calls = Evaluations(), []

    def fail() -> Answer:
        calls.append(1)
        raise Boom("outside validity")

    for _ in range(2):
        with pytest.raises(Boom, match="outside validity"):
            memo.of(RECORD, "t", {}, None, fail, (Boom,))
    assert calls == [1]

    def huge() -> Answer:
        calls.append(2)
        return Answer(Fraction(1, 2 ** (MAX_BITS + 1)))

    memo.of(RECORD, "u", {}, None, huge, (Boom,))
    memo.of(RECORD, "u", {}, None, huge, (Boom,))
    assert calls == [1, 2, 2]
