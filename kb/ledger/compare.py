"""A feasible candidate against the explicit feasible reference, one dimension at a time.

Dimensions stay separate (latency, useful-work throughput, monetary cost, energy,
capacity headroom, SLO slack): each gets a candidate-minus-reference delta and, where
both values are positive, a candidate/reference ratio. Latency placement efficiency is
T_r / T_c. There is never a combined score, and never a ratio against an infeasible
placement: such a comparison is withheld with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from kb.ledger.feasibility import Feasibility
from kb.ledger.inputs import Envelope, OptionSpec
from kb.ledger.ledger import Ledger


@dataclass(frozen=True)
class Dimension:
    name: str
    unit: str
    better: str  # lower | higher
    reference: Fraction | None
    candidate: Fraction | None

    @property
    def delta(self) -> Fraction | None:
        if self.reference is None or self.candidate is None:
            return None
        return self.candidate - self.reference

    @property
    def ratio(self) -> Fraction | None:
        if self.reference is None or self.candidate is None:
            return None
        if self.reference <= 0 or self.candidate <= 0:
            return None
        return self.candidate / self.reference


@dataclass(frozen=True)
class Comparison:
    reference: str
    candidate: str
    dimensions: tuple[Dimension, ...] = field(default=())
    efficiency: Fraction | None = None
    withheld: str = ""  # why no comparison is reported (an infeasible side)


@dataclass(frozen=True)
class Side:
    """Everything the comparison needs about one option."""

    option: OptionSpec
    feasibility: Feasibility
    ledger: Ledger | None


def _per_step(rate: Fraction | None, total: Fraction) -> Fraction | None:
    return None if rate is None else rate * total


def _dimensions(envelope: Envelope, ref: Side, cand: Side) -> tuple[Dimension, ...]:
    assert ref.ledger is not None and cand.ledger is not None
    tr, tc = ref.ledger.total, cand.ledger.total
    slo = envelope.slo.value if envelope.slo else None
    r_opt, c_opt = ref.option, cand.option
    return (
        Dimension("latency", "s", "lower", tr, tc),
        Dimension(
            "throughput",
            "tokens/s" if envelope.workload is not None else "items/s",
            "higher",
            envelope.batch / tr,
            envelope.batch / tc,
        ),
        Dimension(
            "cost",
            "USD/step",
            "lower",
            _per_step(r_opt.cost_rate.value if r_opt.cost_rate else None, tr),
            _per_step(c_opt.cost_rate.value if c_opt.cost_rate else None, tc),
        ),
        _energy(ref, cand, tr, tc),
        Dimension("headroom", "B", "higher", ref.feasibility.headroom, cand.feasibility.headroom),
        Dimension(
            "slo_slack",
            "s",
            "higher",
            None if slo is None else slo - tr,
            None if slo is None else slo - tc,
        ),
    )


def _energy(ref: Side, cand: Side, tr: Fraction, tc: Fraction) -> Dimension:
    """Energy per output token where both ledgers price it (composed), else per step from power."""
    assert ref.ledger is not None and cand.ledger is not None
    mine = [s.ledger.energy.value if s.ledger and s.ledger.energy else None for s in (ref, cand)]
    if mine[0] is not None and mine[1] is not None:
        return Dimension("energy", "J/token", "lower", mine[0], mine[1])
    r_opt, c_opt = ref.option, cand.option
    return Dimension(
        "energy",
        "J/step",
        "lower",
        _per_step(r_opt.power.value if r_opt.power else None, tr),
        _per_step(c_opt.power.value if c_opt.power else None, tc),
    )


def withheld_reason(ref: Side, cand: Side) -> str:
    """Why no ratio may be emitted, or '' when both sides are feasible."""
    bad = [s.option.name for s in (ref, cand) if not s.feasibility.feasible]
    if not bad:
        return ""
    return (
        f"{' and '.join(bad)} cannot hold the state: an infeasible counterfactual, "
        "so no speedup or penalty ratio is reported"
    )


def compare(envelope: Envelope, ref: Side, cand: Side) -> Comparison:
    """Deltas and per-dimension ratios, or a withheld comparison with its reason."""
    reason = withheld_reason(ref, cand)
    if reason:
        return Comparison(ref.option.name, cand.option.name, withheld=reason)
    assert ref.ledger is not None and cand.ledger is not None  # both feasible
    tr, tc = ref.ledger.total, cand.ledger.total
    return Comparison(
        ref.option.name, cand.option.name, _dimensions(envelope, ref, cand), tr / tc if tc else None
    )
