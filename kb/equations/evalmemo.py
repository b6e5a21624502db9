"""What `kb.equations.evaluate.evaluate` answered in this run, kept for the same question.

The planner prices every mapping of every question of the explorer's menus through
the composed ledger (kb.plan, kb.sitegen.explorer), and each mapping evaluates the
same few flop-class targets: the weight read of a tp degree, the KV read of a context,
the all-reduce of a message size. Most of those evaluations repeat with identical
inputs across the batches, shapes and mappings of one build (a 70B model's pass asks
854 of them, 102 distinct), so the run keeps each answer (`Evaluations`, under
EVALUATIONS in the run context `kb.run`) and gives a copy when the same question is
asked again. There is no second evaluator: an answer is what `evaluate` returned for
these very inputs (or the EvaluationError it raised, raised again).

A question is the same when it names the same record object of the same frozen
knowledge base (its records, and so every `id#field` a binding reads and every
`uses` a composition resolves, cannot change), the same target and claim, and equal
bindings, compared by type and value (`1` and `1.0` are different inputs: their
trails differ). Only a frozen knowledge base keeps answers (an unfrozen one may
still gain records), a binding that cannot be frozen into a key is evaluated every
time, and a value whose numerator or denominator exceeds MAX_BITS (an exact
`(1 - k/E)^B` of a long prompt) is not kept: it is rarely asked twice and is large.

The same memo keeps what a record of the frozen knowledge base always gives for one
question and every scenario would otherwise compute again (`Evaluations.derived`:
a flop class's equation prepared over the terms the composed ledger binds, with its
compiled tree): one cache per run, one rule for what may be kept.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, is_dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeVar

from kb.run import Kept

if TYPE_CHECKING:
    from kb.model import KnowledgeBase, Record

A = TypeVar("A")  # kb.equations.evaluate.Evaluation (a dataclass with `value` and `trail`)
B = TypeVar("B")  # what `Evaluations.derived` keeps: an immutable value

MAX_EVALUATIONS = 20_000  # answers one run keeps (dropped whole past it)
MAX_BITS = 4096  # a larger numerator or denominator is not kept


class Unkeyable(Exception):
    """A binding that cannot be frozen into a key: the question is evaluated every time."""


_PLAIN = frozenset({bool, int, float, str, Fraction, type(None)})


def frozen(value: Any) -> Hashable:
    """A hashable key equal for equal inputs of the same types (Unkeyable otherwise)."""
    kind = type(value)
    if kind in _PLAIN:  # the common case first: no abstract-class check (a pass asks ~10^5)
        return (kind.__name__, value)
    if kind is dict:
        items = [(str(k), frozen(v)) for k, v in value.items()]
        return ("map", tuple(sorted(items, key=lambda kv: kv[0])))
    if kind is tuple or kind is list:  # exact types before the abstract Mapping check
        return ("seq", tuple(frozen(v) for v in value))
    declared = getattr(kind, "__dataclass_fields__", None)
    if declared is not None:  # a dataclass instance (its class has the fields), as below
        return (kind.__qualname__, tuple(frozen(getattr(value, f)) for f in declared))
    if isinstance(value, Mapping):
        items = [(str(k), frozen(v)) for k, v in value.items()]
        return ("map", tuple(sorted(items, key=lambda kv: kv[0])))
    if isinstance(value, list | tuple):
        return ("seq", tuple(frozen(v) for v in value))
    if is_dataclass(value) and not isinstance(value, type):
        fields = tuple(frozen(getattr(value, f)) for f in value.__dataclass_fields__)
        return (type(value).__qualname__, fields)
    if value is None or isinstance(value, bool | int | float | str | Fraction):
        return (type(value).__name__, value)
    raise Unkeyable(type(value).__name__)


@dataclass(frozen=True)
class _Kept:
    record: Record  # the very object asked about (identity is part of the question)
    answer: Any  # an Evaluation, or None
    error: Exception | None


class Evaluations:
    """One run's answers by question; `asked` and `reused` count its use."""

    def __init__(self) -> None:
        self.known: dict[Hashable, _Kept] = {}
        self.asked = 0
        self.reused = 0

    def of(
        self,
        record: Record,
        target: str | None,
        bindings: Mapping[str, Any],
        claim: str | None,
        compute: Callable[[], A],
        errors: tuple[type[Exception], ...],
    ) -> A:
        """`compute()`'s answer for this question: kept from an earlier ask, or computed now.

        An exception of `errors` (kb's EvaluationError) is kept and raised again.
        """
        self.asked += 1
        try:
            key: Hashable = (record.id, id(record), target, claim, frozen(bindings))
        except Unkeyable:
            return compute()
        found = self.known.get(key)
        if found is not None and found.record is record:
            self.reused += 1
            if found.error is not None:
                raise type(found.error)(*found.error.args)
            kept: A = replace(found.answer, trail=list(found.answer.trail))
            return kept
        try:
            answer = compute()
        except errors as exc:
            self._keep(key, _Kept(record, None, exc))
            raise
        value: Fraction = getattr(answer, "value")  # noqa: B009 (A is any dataclass)
        if max(value.numerator.bit_length(), value.denominator.bit_length()) <= MAX_BITS:
            trail = list(getattr(answer, "trail"))  # noqa: B009
            self._keep(key, _Kept(record, replace(answer, trail=trail), None))  # type: ignore[type-var]
        return answer

    def derived(self, record: Record, question: Hashable, compute: Callable[[], B]) -> B:
        """`compute()`, a pure function of this very `record` and `question`, kept for the run.

        For what a frozen knowledge base's record always gives the same answer to and
        that every scenario of a pass asks again (a flop class's equation prepared over
        the terms the ledger binds): computed once, then the same object is given back.
        """
        key: Hashable = ("derived", record.id, id(record), question)
        found = self.known.get(key)
        if found is not None and found.record is record:
            self.reused += 1
            answer: B = found.answer
            return answer
        answer = compute()
        self._keep(key, _Kept(record, answer, None))
        return answer

    def _keep(self, key: Hashable, kept: _Kept) -> None:
        if len(self.known) >= MAX_EVALUATIONS:
            self.known.clear()
        self.known[key] = kept


EVALUATIONS: Kept[Evaluations] = Kept("evaluations by their question")


def evaluations(kb: KnowledgeBase) -> Evaluations | None:
    """The run's answers when `kb` is frozen (its records cannot change), else None."""
    return kb.run.once(EVALUATIONS, Evaluations) if kb.frozen else None
