"""A flop class's headline results: the answer a reader came for, at the top of its page.

Two parts, both computed by kb (nothing typed in):

* its claims kb recomputes or validates, each with kb's computed value (not the
  errata: those have a section of their own);
* for a class listed in GRIDS, a grid evaluated at build time by `kb calc`'s own
  evaluator (kb.equations.evaluate): the target for each model, accelerator and
  degree the class's records reference, refused where the class's `validity:`
  says the model stops applying (the cell then names where: the ridge batch).

A grid reads only records the class already references (kb.reads' graph), so
the page's inputs stay those kb.sitegen.deps knows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kb.model import KnowledgeBase, Record

HEADLINE_CLAIMS = 6
SHOWN_STATES = ("validated", "recomputed", "consistent", "proved", "holds")


@dataclass(frozen=True)
class Grid:
    """Evaluate `target` over models x accelerators x degrees; `limit` names the bound."""

    target: str
    title: str
    models: tuple[str, ...]
    accelerators: tuple[str, ...]
    degrees: tuple[int, ...]
    limit: str  # the target of the bound a refused cell shows (the ridge batch)
    note: str


CROSSOVER = Grid(
    target="b_star_tp",
    title="Crossover batch B* (alpha = 0) by model, accelerator and TP degree",
    models=("models/llama-2-7b", "models/llama-3.1-70b"),
    accelerators=(
        "hardware/nvidia-a100-80gb-sxm4",
        "hardware/nvidia-h100-sxm",
        "hardware/nvidia-h200-sxm",
        "hardware/nvidia-b200",
        "hardware/amd-instinct-mi300x",
    ),
    degrees=(2, 4, 8),
    limit="ridge",
    note=(
        "Each cell is kb calc's b_star_tp with the model's params_per_layer and d_model, the "
        "accelerator's HBM bandwidth, its scale-up link's per-direction line rate as W (as the "
        "class's claims bind it; an all-reduce achieves less, which lowers B*), bf16 (2 B, "
        "2 FLOP per multiply-add) and two all-reduces per layer. \u201cabove ridge\u201d: B* "
        "would exceed the ridge batch shown, where each rank's GEMMs outlast its weight read; "
        "the class's validity below-ridge says its crossover stops applying there, so kb "
        "refuses it, as kb calc does."
    ),
)
GRIDS: dict[str, Grid] = {"flops/sched-tensor-parallel-crossover": CROSSOVER}


def headline(record: Record, kb: KnowledgeBase, claims: Sequence[Mapping[str, Any]]) -> Any:
    """The headline of a flop class (claims and grid), or None when it has neither."""
    if record.kind != "flop_class":
        return None
    shown = [
        {
            "id": c["id"],
            "anchor": c["anchor"],
            "text": c["text"] or c["id"],
            "value": short(str(c["computed"])),
            "state": c["state"],
        }
        for c in claims
        if c["state"] in SHOWN_STATES and c["computed"] not in ("", "\u2014")
    ][:HEADLINE_CLAIMS]
    grid = grid_rows(record, kb, GRIDS[record.id]) if record.id in GRIDS else None
    if not shown and grid is None:
        return None
    return {"claims": shown, "grid": grid}


EXACT = re.compile(r"\A\S+ \(exact (-?\d+)(?:/(\d+))?\)(?: (.+))?\Z")


def short(computed: str) -> str:
    """An engine value `0.27197440 (exact 21248/78125) MB` at kb's 4 digits: `0.272 MB`.

    The page's claims table keeps the engine's full text; the headline reads as
    `kb calc` prints (kb.numfmt.DIGITS significant digits). Other text is kept.
    """
    from fractions import Fraction

    from kb.numfmt import significant

    match = EXACT.match(computed.strip())
    if match is None:
        return computed
    value = Fraction(int(match.group(1)), int(match.group(2) or 1))
    return significant(value) + (f" {match.group(3)}" if match.group(3) else "")


def grid_rows(record: Record, kb: KnowledgeBase, grid: Grid) -> dict[str, Any] | None:
    """The grid's head and rows, or None when a record it needs is absent or unreferenced."""
    from kb.reads import graph_of

    referenced = graph_of(kb).targets(record.id)
    needed = (*grid.models, *grid.accelerators)
    if any(kb.get(r) is None or r not in referenced for r in needed):
        return None
    models = [{"name": _title(kb, m), "degrees": list(grid.degrees)} for m in grid.models]
    rows = []
    for accelerator in grid.accelerators:
        ridge = _ridge(record, kb, grid, accelerator)
        cells = [
            _cell(record, kb, grid, model, accelerator, degree, ridge)
            for model in grid.models
            for degree in grid.degrees
        ]
        rows.append({"name": _title(kb, accelerator), "ridge": ridge, "cells": cells})
    return {"title": grid.title, "models": models, "rows": rows, "note": grid.note}


def _title(kb: KnowledgeBase, record_id: str) -> str:
    record = kb.get(record_id)
    return str(record.title or record_id) if record is not None else record_id


def _bindings(model: str | None, accelerator: str, degree: int | None) -> dict[str, str]:
    values = {
        "BW_hbm": f"{accelerator}#memory.bandwidth",
        "C": f"{accelerator}#compute.bf16",
        "f_mac": "2 FLOP",
        "s_elem": "2 B",
    }
    if model is not None and degree is not None:
        values.update(
            {
                "P_layer": f"{model}#derived.params_per_layer",
                "d": f"{model}#geometry.d_model",
                "W": f"{accelerator}#links.0.per_device",
                "N": str(degree),
                "c": "2",
            }
        )
    return values


def _evaluate(record: Record, kb: KnowledgeBase, target: str, values: Mapping[str, str]) -> Any:
    from kb.equations.evaluate import binding_spec, evaluate

    bindings = {name: binding_spec(text) for name, text in values.items()}
    return evaluate(kb, record, target, bindings)


def _ridge(record: Record, kb: KnowledgeBase, grid: Grid, accelerator: str) -> str:
    from kb.equations.evaluate import EvaluationError
    from kb.numfmt import significant

    try:
        bindings = _bindings(None, accelerator, None)
        return significant(_evaluate(record, kb, grid.limit, bindings).value)
    except (EvaluationError, ValueError, ArithmeticError):
        return ""


def _cell(
    record: Record,
    kb: KnowledgeBase,
    grid: Grid,
    model: str,
    accelerator: str,
    degree: int,
    ridge: str,
) -> dict[str, str]:
    from kb.equations.evaluate import EvaluationError, OutsideValidity
    from kb.numfmt import significant

    try:
        value = _evaluate(record, kb, grid.target, _bindings(model, accelerator, degree)).value
    except OutsideValidity as exc:
        above = "below-ridge" in str(exc) and ridge
        return {"value": "", "refused": "above ridge" if above else "outside", "why": str(exc)}
    except (EvaluationError, ValueError, ArithmeticError) as exc:
        return {"value": "", "refused": "not computed", "why": str(exc)}
    return {"value": significant(value), "refused": "", "why": ""}
