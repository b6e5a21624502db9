"""Derived figures of other kinds, recomputed: a model's parameter counts from its geometry.

The counting itself is kb.equations.params (component by component, formulas in its
docstring); this module compares a record's `derived` figures and its `published`
totals with what the geometry gives.

Conventions (the record states one in `counting`; absent means `matrices`):

- `matrices`: weight matrices only (attention, MLP/experts, router, embeddings);
- `matrices+norms`: also the norm weight vectors (two per layer, qk-norm, MLA's
  latent norms, the final norm);
- `all`: every parameter tensor a checkpoint holds: also bias vectors and
  attention sinks (what published totals count).

Derived figures kb recomputes (unit "1" unless said):

- params_per_layer: one layer, when every layer is alike; params_per_dense_layer and
  params_per_moe_layer when dense and MoE layers are mixed (one of each kind);
- params_active_per_layer / params_active_per_moe_layer: a MoE layer with only its
  experts_active routed experts (shared experts and the router whole);
- params_total, params_active, params_embeddings (the embedding matrices: V*d,
  twice unless tied), params_input_embedding (the input embedding alone, V*d),
  params_non_embedding (params_total less the embeddings), params_mtp
  (multi-token-prediction modules, apart);
- kv_elements_per_token (and kv_elements_per_token_long beyond a local window).

A figure kb cannot recompute (unknown name, or the geometry lacks a field) is an
`unverified` item with the reason. A `published` figure is compared with the sum of
the derived figures its `compare` names (`a + b - c`), recomputed from the geometry: within 0.1%
it is `recomputed`; beyond, the record must say why in `explanation` (then the item
is `explained`, neutral), or EQ026 reports it. Pure integer arithmetic; no SymPy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from kb.equations import codes, params
from kb.equations.params import CONVENTIONS, Convention, GeometryError
from kb.equations.results import EXPLAINED, RECOMPUTED, REFUTED, UNVERIFIED, Issue, Item

PUBLISHED_TOLERANCE = Fraction(1, 1000)
Geometry = Mapping[str, Any]


def _homogeneous(geometry: Geometry) -> str:
    kinds = set(params.layer_kinds(geometry))
    if len(kinds) > 1:
        raise GeometryError("dense and MoE layers are mixed: use params_per_dense_layer/_moe_layer")
    return kinds.pop()


def _of_kind(geometry: Geometry, kind: str) -> str:
    if kind not in params.layer_kinds(geometry):
        raise GeometryError(f"the geometry has no {kind} layer")
    return kind


def _moe_only(geometry: Geometry) -> str:
    if _homogeneous(geometry) != "moe":
        raise GeometryError("the model has no MoE layers")
    return "moe"


def _mtp(geometry: Geometry, conv: Convention) -> int:
    counts = params.mtp(geometry, conv)
    if counts is None:
        raise GeometryError("geometry lacks mtp_modules")
    return counts.total


def _non_embedding(geometry: Geometry, conv: Convention) -> int:
    counts = params.model(geometry, conv)
    return counts.total - counts.parts["embeddings"]


def _embeddings(geometry: Geometry, conv: Convention) -> int:
    return params.embeddings(geometry, conv).parts["embeddings"]


def _one_matrix(geometry: Geometry) -> int:
    d, vocab = params.integer(geometry, "d_model"), params.integer(geometry, "vocab")
    if d is None or vocab is None:
        raise GeometryError("geometry lacks d_model or vocab")
    return vocab * d


FIGURES: Mapping[str, Callable[[Geometry, Convention], int]] = {
    "params_per_layer": lambda g, c: params.layer(g, _homogeneous(g), c).total,
    "params_per_dense_layer": lambda g, c: params.layer(g, _of_kind(g, "dense"), c).total,
    "params_per_moe_layer": lambda g, c: params.layer(g, _of_kind(g, "moe"), c).total,
    "params_active_per_layer": lambda g, c: params.layer(g, _moe_only(g), c, True).total,
    "params_active_per_moe_layer": lambda g, c: params.layer(g, _of_kind(g, "moe"), c, True).total,
    "params_total": lambda g, c: params.model(g, c).total,
    "params_active": lambda g, c: params.model(g, c, active=True).total,
    "params_non_embedding": _non_embedding,
    "params_embeddings": _embeddings,
    "params_input_embedding": lambda g, c: _one_matrix(g),
    "params_mtp": _mtp,
    "kv_elements_per_token": lambda g, c: params.kv_elements_per_token(g),
    "kv_elements_per_token_long": lambda g, c: params.kv_elements_per_token(g, long=True),
}


def check_model(data: Mapping[str, Any]) -> tuple[list[Item], list[Issue]]:
    """Recompute a model record's `derived` figures and compare its `published` ones."""
    geometry, derived = data.get("geometry"), data.get("derived")
    if not isinstance(geometry, Mapping):
        return [], []
    convention = str(data.get("counting") or "matrices").split()[0].rstrip(":;,.")
    if convention not in CONVENTIONS:
        issue = Issue(
            codes.MODEL_FIGURE_MISMATCH,
            "/counting",
            f"counting convention {convention!r} is unknown",
            "start counting: with 'matrices', 'matrices+norms' or 'all'",
        )
        return [], [issue]
    conv = Convention.named(convention)
    items: list[Item] = []
    issues: list[Issue] = []
    for name, quantity in (derived or {}).items() if isinstance(derived, Mapping) else ():
        _check_derived(geometry, conv, str(name), quantity, convention, items, issues)
    published = data.get("published")
    for name, entry in published.items() if isinstance(published, Mapping) else ():
        _check_published(geometry, conv, str(name), entry, items, issues)
    return items, issues


def _recompute(geometry: Geometry, conv: Convention, name: str) -> int | str:
    """The figure `name` from the geometry, or the reason kb cannot compute it."""
    figure = FIGURES.get(name)
    if figure is None:
        return f"kb does not recompute a figure named {name}"
    try:
        return figure(geometry, conv)
    except GeometryError as error:
        return str(error)


def _check_derived(
    geometry: Geometry,
    conv: Convention,
    name: str,
    quantity: Any,
    convention: str,
    items: list[Item],
    issues: list[Issue],
) -> None:
    if not isinstance(quantity, Mapping):
        return
    pointer = f"/derived/{name}/value"
    computed = _recompute(geometry, conv, name)
    if isinstance(computed, str):
        items.append(Item("figure", name, pointer, UNVERIFIED, computed))
        return
    claimed = quantity.get("value")
    if claimed == computed and quantity.get("unit") == "1":
        detail = f"{computed:,} from geometry ({convention})"
        items.append(Item("figure", name, pointer, RECOMPUTED, detail, str(claimed), str(computed)))
        return
    detail = (
        f"{name} is {claimed!r} {quantity.get('unit')!r}, geometry gives {computed:,} "
        f"(unit 1, counting {convention})"
    )
    items.append(Item("figure", name, pointer, REFUTED, detail, str(claimed), str(computed)))
    hint = "correct the figure, or the geometry, or state the counting convention"
    issues.append(Issue(codes.MODEL_FIGURE_MISMATCH, pointer, detail, hint))


def _check_published(
    geometry: Geometry,
    conv: Convention,
    name: str,
    entry: Any,
    items: list[Item],
    issues: list[Issue],
) -> None:
    if not isinstance(entry, Mapping):
        return
    pointer = f"/published/{name}"
    value, compare = entry.get("value"), str(entry.get("compare") or "")
    computed = _published_sum(geometry, conv, compare)
    if isinstance(computed, str) or not isinstance(value, (int, float)) or value <= 0:
        reason = computed if isinstance(computed, str) else "the published value is not positive"
        hint = "name kb's derived figures in compare (e.g. params_total + params_mtp)"
        issues.append(Issue(codes.PUBLISHED_FIGURE_UNEXPLAINED, pointer, reason, hint))
        return
    gap = (Fraction(computed) - Fraction(value)) / Fraction(value)
    detail = f"published {value:,} vs {compare} = {computed:,} from geometry ({float(gap):+.3%})"
    if abs(gap) <= PUBLISHED_TOLERANCE:
        items.append(Item("figure", name, pointer, RECOMPUTED, detail, str(value), str(computed)))
        return
    explanation = str(entry.get("explanation") or "").strip()
    if explanation:
        detail = f"{detail}; explained: {explanation}"
        items.append(Item("figure", name, pointer, EXPLAINED, detail, str(value), str(computed)))
        return
    items.append(Item("figure", name, pointer, REFUTED, detail, str(value), str(computed)))
    hint = "explain the difference in `explanation` (rounding, vision encoder, MTP ...)"
    issues.append(Issue(codes.PUBLISHED_FIGURE_UNEXPLAINED, pointer, detail, hint))


def _published_sum(geometry: Geometry, conv: Convention, compare: str) -> int | str:
    """The signed sum of the derived figures `compare` names (`a + b - c`)."""
    terms = re.split(r"\s*([+-])\s*", "+" + compare.strip())
    signed = list(zip(terms[1::2], terms[2::2], strict=True))
    if not signed or not all(name for _, name in signed):
        return "compare names no derived figure (e.g. compare: params_total)"
    total = 0
    for sign, name in signed:
        computed = _recompute(geometry, conv, name)
        if isinstance(computed, str):
            return f"compare: {computed}"
        total += computed if sign == "+" else -computed
    return total
