"""Derived figures of other kinds, recomputed: a model's parameter counts from its geometry.

Convention (the model record states it in `counting`; absent means `matrices`):

- `matrices`: params_per_layer counts the weight matrices of one layer only:
  attention q, k, v, o = d*h*(2*heads + 2*kv_heads) with head width
  h = head_dim or d_model/heads (2*d*d + 2*d*(d*kv_heads/heads) when h = d/heads),
  and the MLP: 3*d*d_ff gated or 2*d*d_ff plain; a MoE layer has experts *
  MLP(d_ff_expert or d_ff) + shared_experts * MLP + a router d*experts.
- `matrices+norms`: also two RMSNorm/LayerNorm weight vectors per layer (2*d)
  and the final norm (d) in the total.

params_total = layers * params_per_layer + embeddings (vocab*d, twice unless
tied_embeddings) [+ final norm]. Pure integer arithmetic; no SymPy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kb.equations import codes
from kb.equations.results import RECOMPUTED, REFUTED, UNVERIFIED, Issue, Item

CONVENTIONS = ("matrices", "matrices+norms")


def check_model(data: Mapping[str, Any]) -> tuple[list[Item], list[Issue]]:
    """Recompute `derived.params_per_layer` and `derived.params_total` of a model record."""
    geometry, derived = data.get("geometry"), data.get("derived")
    if not isinstance(geometry, Mapping) or not isinstance(derived, Mapping):
        return [], []
    convention = str(data.get("counting") or "matrices").split()[0].rstrip(":;,.")
    if convention not in CONVENTIONS:
        issue = Issue(
            codes.MODEL_FIGURE_MISMATCH,
            "/counting",
            f"counting convention {convention!r} is unknown",
            "start counting: with 'matrices' or 'matrices+norms'",
        )
        return [], [issue]
    per_layer = layer_params(geometry, convention == "matrices+norms")
    if per_layer is None:
        return [
            Item(
                "figure",
                "params_per_layer",
                "/derived",
                UNVERIFIED,
                "geometry lacks d_ff or heads to recompute",
            )
        ], []
    total = total_params(geometry, per_layer, convention == "matrices+norms")
    checks = [("params_per_layer", per_layer), ("params_total", total)]
    items: list[Item] = []
    issues: list[Issue] = []
    for name, computed in checks:
        _compare(derived.get(name), name, computed, convention, items, issues)
    return items, issues


def _compare(
    quantity: Any,
    name: str,
    computed: int | None,
    convention: str,
    items: list[Item],
    issues: list[Issue],
) -> None:
    if not isinstance(quantity, Mapping) or computed is None:
        return
    pointer = f"/derived/{name}/value"
    claimed = quantity.get("value")
    if claimed == computed and quantity.get("unit") == "1":
        items.append(
            Item(
                "figure",
                name,
                pointer,
                RECOMPUTED,
                f"{computed:,} from geometry ({convention})",
                str(claimed),
                str(computed),
            )
        )
        return
    detail = (
        f"{name} is {claimed!r} {quantity.get('unit')!r}, geometry gives {computed:,} "
        f"(unit 1, counting {convention})"
    )
    items.append(Item("figure", name, pointer, REFUTED, detail, str(claimed), str(computed)))
    issues.append(
        Issue(
            codes.MODEL_FIGURE_MISMATCH,
            pointer,
            detail,
            "correct the figure, or the geometry, or state the counting convention",
        )
    )


def _int(geometry: Mapping[str, Any], key: str) -> int | None:
    value = geometry.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def layer_params(geometry: Mapping[str, Any], norms: bool) -> int | None:
    """Parameters of one transformer layer under the stated convention."""
    d, heads = _int(geometry, "d_model"), _int(geometry, "heads")
    d_ff = _int(geometry, "d_ff") or _int(geometry, "d_ff_expert")
    if d is None or heads is None or d_ff is None:
        return None
    kv_heads = _int(geometry, "kv_heads") or heads
    head = _int(geometry, "head_dim")
    attention = (
        d * head * (2 * heads + 2 * kv_heads)
        if head
        else (2 * d * d + 2 * d * (d * kv_heads // heads))
    )
    return attention + _mlp_params(geometry, d) + (2 * d if norms else 0)


def _mlp_params(geometry: Mapping[str, Any], d: int) -> int:
    matrices = 3 if geometry.get("mlp", "gated") == "gated" else 2
    experts = _int(geometry, "experts")
    if experts is None:
        return matrices * d * (_int(geometry, "d_ff") or 0)
    width = _int(geometry, "d_ff_expert") or _int(geometry, "d_ff") or 0
    shared = _int(geometry, "shared_experts") or 0
    return (experts + shared) * matrices * d * width + d * experts


def total_params(geometry: Mapping[str, Any], per_layer: int, norms: bool) -> int | None:
    """All parameters: layers, embeddings (tied or not) and the final norm."""
    d, layers, vocab = (_int(geometry, k) for k in ("d_model", "layers", "vocab"))
    if d is None or layers is None or vocab is None or "dense_layers" in geometry:
        return None
    embeddings = vocab * d * (1 if geometry.get("tied_embeddings") else 2)
    return layers * per_layer + embeddings + (d if norms else 0)
