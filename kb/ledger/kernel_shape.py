"""The kernel shape of a model record: which profiled model's non-matmul kernel rows it may read.

kb/data/end-to-end.json `prefill_kernels.same_shapes`: a per-layer profile of the two
RMSNorms, the rotary embedding, the gated activation and the residual add (Vidur's
input_layernorm, post_attention_layernorm, attn_rope, mlp_act, add) times work set by
d_model, the query and KV heads and their head_dim, d_ff, the MLP's gating and
activation function, and the norm type; the tp degree is the row's own. A model whose
record states all of these equal to a profiled model's (no experts, GQA/MHA attention)
runs the same kernels on the same tensors, so it reads that model's rows. The match is
made from the two model records, never from a list of ids; a field missing on either side
matches nothing. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kb.model import KnowledgeBase

# The geometry fields that set the work of the five timed kernels (same_shapes.shape).
SHAPE_FIELDS = ("d_model", "heads", "kv_heads", "head_dim", "d_ff", "mlp", "activation", "norm")


def kernel_shape(model: Any) -> tuple[Any, ...] | None:
    """The model record's SHAPE_FIELDS, or None: a field missing, experts, or not GQA/MHA.

    head_dim is d_model/heads where the record states none (as Vidur computes it); the
    attention is `gqa` where the record states none (the schema's default).
    """
    geometry = model.get("geometry") if model is not None else None
    if not isinstance(geometry, dict) or geometry.get("experts") is not None:
        return None
    if geometry.get("attention", "gqa") != "gqa":
        return None
    fields = {name: geometry.get(name) for name in SHAPE_FIELDS}
    d_model, heads = fields["d_model"], fields["heads"]
    if fields["head_dim"] is None and isinstance(d_model, int) and isinstance(heads, int):
        fields["head_dim"] = d_model // heads if heads > 0 and d_model % heads == 0 else None
    if any(value is None for value in fields.values()):
        return None
    return tuple(fields[name] for name in SHAPE_FIELDS)


def same_shape_model(
    kb: KnowledgeBase, record: Any, model: str, has_rows: Callable[[str], bool]
) -> str | None:
    """The model whose rows price a case: `model` itself, else a profiled model, or None.

    The profiled model is the first (by id) of the receipt's row models that `has_rows`
    for the case (accelerator, tp) and whose `kernel_shape` equals the model's.
    """
    if has_rows(model):
        return model
    shape = kernel_shape(kb.get(model))
    if shape is None:
        return None
    rows = record.get("results") if record is not None else None
    profiled = sorted(
        {row.get("model") for row in rows if isinstance(row, dict)} - {model}
        if isinstance(rows, list)
        else set(),
        key=str,
    )
    return next(
        (
            other
            for other in profiled
            if isinstance(other, str) and kernel_shape(kb.get(other)) == shape and has_rows(other)
        ),
        None,
    )
