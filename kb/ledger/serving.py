"""Serving at a fixed concurrency: the steady state of a closed loop of C clients.

A serving benchmark at concurrency C (vllm bench serve --max-concurrency, AIPerf's
concurrency mode) keeps C requests in flight: each client sends its next request when
the last one finishes. At steady state each request runs one cycle of length R (its
prefill of `input_tokens`, then O = `output_tokens` tokens), and by Little's law the
system completes C requests per R. Over one request's O - 1 decode steps each of the
other C - 1 clients therefore runs (about) one prefill, whose work lands in those steps:

    TPOT = t_dec(C) + (C_r - 1) * d_s / (O - 1)
    TTFT = d_1 + t_dec(C)/2 + rho * d_s/2,   rho = (TPOT - t_dec(C)) / TPOT
    R    = TTFT + (O - 1) * TPOT,            output rate = C * O / R

with C_r = C/dp the requests per replica, t_dec(C) the composed decode step at batch C
(the ledger's T_total at the mean context), d_1 the composed prefill pass of one prompt
per replica (the request's TTFT at batch dp: the read or matmuls and attention, the
per-layer overhead and the prompt's all-reduces), and d_s what one prefill takes from the
decodes: all of d_1 where the engine runs a prefill as a step of its own (`stalled`),
d_1 less the per-layer overhead L*t_o where the prompt's tokens ride in the decode steps
(`mixed`: chunked prefill, in-flight batching), since a mixed step pays the overhead once.
A new prompt waits, on average, for the rest of the decode step in flight (t_dec/2) and,
with the share rho of the engine's time prefills take, for the rest of another prompt's
prefill (d_s/2). The share of a cycle a request spends decoding (D/R) is taken as one:
an upper bound on the prefills its decode steps meet, by TTFT/R.

These are flops/serving-steady-state-concurrency's equations (tpot_steady, share,
ttft_steady, request), where kb derives the TPOT from the decode window's time balance
and Little's law. `class_models` prepares them once with kb's evaluator (as the decode
step is prepared from flops/tp-decode-allreduce-time, kb/ledger/workload.py), and
`steady_state` evaluates them; without them it does the same arithmetic by hand, and
tests/ledger/test_serving_steady_state.py holds the two equal, so neither changes alone.
Which scheduler each engine runs, and the whole rule, are declared in
kb/data/end-to-end.json (`serving_steady_state`) with their sources, before any row was
priced with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kb.ledger.workload import StepModel
    from kb.model import KnowledgeBase

SERVING_CLASS = "flops/serving-steady-state-concurrency"
# each equation of the class the ledger evaluates, with the terms it binds
CLASS_EQUATIONS = (
    ("tpot_steady", ("t_dec", "d_s", "n_c", "n_out")),
    ("share", ("t_tpot", "t_dec")),
    ("ttft_steady", ("d_1", "t_dec", "rho", "d_s")),
    ("request", ("t_ttft", "n_out", "t_tpot")),
)

MIXED = "mixed"
STALLED = "stalled"
SCHEDULERS = (MIXED, STALLED)


@dataclass(frozen=True)
class SteadyState:
    """One request's figures in a closed loop of C clients at steady state (seconds)."""

    scheduler: str  # mixed | stalled
    per_replica: int  # C_r = C / dp requests in flight on one replica
    output_tokens: int  # O
    decode_step: Fraction  # t_dec(C): the composed decode step at batch C
    prefill_pass: Fraction  # d_1: one prompt's composed prefill pass
    prefill_stall: Fraction  # d_s: what one prefill takes from the decode steps
    prefill_share: Fraction  # rho: the share of a decode step's time that is prefill work
    tpot: Fraction
    ttft: Fraction
    latency: Fraction  # TTFT + (O - 1) * TPOT

    def formula(self) -> str:
        """The rule with its values, for a row's assumptions."""
        return (
            f"serving steady state of {self.per_replica} requests per replica ({self.scheduler} "
            f"prefill; {SERVING_CLASS}): TPOT = t_dec + (n_c - 1)*d_s/(n_out - 1), t_dec = "
            f"{float(self.decode_step) * 1e3:.4g} ms, d_s = {float(self.prefill_stall) * 1e3:.4g} "
            f"ms of a {float(self.prefill_pass) * 1e3:.4g} ms prompt pass; TTFT = d_1 + t_dec/2 + "
            f"rho*d_s/2, rho = {float(self.prefill_share):.3g}"
        )


@dataclass(frozen=True)
class ClassModels:
    """flops/serving-steady-state-concurrency's equations, prepared by kb's evaluator."""

    tpot: StepModel
    share: StepModel
    ttft: StepModel
    request: StepModel


def class_models(kb: KnowledgeBase) -> ClassModels | str:
    """The class's equations over the terms the ledger binds, or why they cannot be used."""
    from kb.equations.compose import compose
    from kb.equations.evaluate import EvaluationError, prepare
    from kb.equations.system import system_of
    from kb.ledger.workload import StepModel

    record = kb.get(SERVING_CLASS)
    if record is None or record.kind != "flop_class":
        return f"the serving steady state is {SERVING_CLASS}'s equations: not in the tree"
    composed = compose(kb, record).record
    system = system_of(kb, composed.data)
    models = []
    for equation, terms in CLASS_EQUATIONS:
        try:
            plan = prepare(composed, system, equation, dict.fromkeys(terms), strict=True)
        except (EvaluationError, ArithmeticError) as exc:
            return f"{SERVING_CLASS} {equation}: {exc}"
        extra = sorted(s.name for s in plan.expanded.free_symbols if s.name not in terms)
        if extra:
            return f"{SERVING_CLASS} {equation} needs {', '.join(extra)}, which kb does not bind"
        text = f"{plan.symbol} = {plan.equation}"
        models.append(StepModel(SERVING_CLASS, equation, text, plan.expanded, terms))
    return ClassModels(*models)


def _exact(value: object, equation: str) -> Fraction:
    if not isinstance(value, Fraction):
        raise ValueError(f"{SERVING_CLASS} {equation} is not a number at these inputs: {value}")
    return value


def steady_state(
    scheduler: str,
    per_replica: int,
    output_tokens: int,
    decode_step: Fraction,
    prefill_pass: Fraction,
    overhead: Fraction,
    models: ClassModels | None = None,
) -> SteadyState:
    """The steady state of `per_replica` clients per replica (module docstring).

    `decode_step` is t_dec at batch C, `prefill_pass` d_1 (one prompt's pass) and
    `overhead` the per-layer overhead L*t_o inside that pass; with `models` the class's
    prepared equations are evaluated, else the same arithmetic is done by hand. ValueError
    on a scheduler that is neither `mixed` nor `stalled`, fewer than one client, fewer
    than one output token or a negative time.
    """
    if scheduler not in SCHEDULERS:
        raise ValueError(f"scheduler {scheduler!r}: expected one of {', '.join(SCHEDULERS)}")
    if per_replica < 1 or output_tokens < 1:
        raise ValueError(
            f"per_replica = {per_replica}, output_tokens = {output_tokens}: at least 1 each"
        )
    if min(decode_step, prefill_pass, overhead) < 0 or overhead > prefill_pass:
        raise ValueError("times must be non-negative, and the overhead part of the pass")
    stall = prefill_pass if scheduler == STALLED else prefill_pass - overhead
    steps = output_tokens - 1
    others = per_replica - 1
    if not others or not steps:  # the request alone, or no decode step to share
        tpot, share = decode_step, Fraction(0)
        ttft = prefill_pass + (decode_step / 2 if others else Fraction(0))
        latency = ttft + steps * tpot
    elif models is not None:
        tpot = _exact(
            models.tpot.value(
                {"t_dec": decode_step, "d_s": stall, "n_c": others + 1, "n_out": output_tokens}
            ),
            "tpot_steady",
        )
        share = _exact(models.share.value({"t_tpot": tpot, "t_dec": decode_step}), "share")
        ttft = _exact(
            models.ttft.value(
                {"d_1": prefill_pass, "t_dec": decode_step, "rho": share, "d_s": stall}
            ),
            "ttft_steady",
        )
        latency = _exact(
            models.request.value({"t_ttft": ttft, "n_out": output_tokens, "t_tpot": tpot}),
            "request",
        )
    else:
        tpot = decode_step + Fraction(others) * stall / steps
        share = (tpot - decode_step) / tpot if tpot else Fraction(0)
        ttft = prefill_pass + decode_step / 2 + share * stall / 2
        latency = ttft + steps * tpot
    return SteadyState(
        scheduler,
        per_replica,
        output_tokens,
        decode_step,
        prefill_pass,
        stall,
        share,
        tpot,
        ttft,
        latency,
    )


@lru_cache(maxsize=1)
def schedulers() -> Mapping[str, str]:
    """Each engine's declared scheduler (kb/data/end-to-end.json `serving_steady_state`)."""
    from kb.resources import ResourceMissing, end_to_end, end_to_end_path

    table = end_to_end(
        "serving_steady_state",
        lambda entry: {str(engine): str(kind) for engine, kind in entry["scheduler"].items()},
    )
    bad = sorted(e for e, kind in table.items() if kind not in SCHEDULERS)
    if bad:
        path = end_to_end_path()
        raise ResourceMissing(f"{path}: scheduler of {', '.join(bad)} is not mixed or stalled")
    return table
