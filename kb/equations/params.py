"""A model's parameter count and KV-cache size, component by component, from its geometry.

Pure integer arithmetic on the record's `geometry` block (no SymPy, no I/O). Every
count is a sum of named components (`Counts`), so a test can check that the total is
exactly the sum of its parts and that each part moves with its own field only.

Notation: d = d_model, H = heads, K = kv_heads, h = head_dim (or d/H), F = d_ff (the
dense MLP width), F_e = d_ff_expert (each routed and shared expert's width; F when
absent), E = experts, k = experts_active, S = shared_experts, V = vocab, m = 3 for a
gated (SwiGLU) MLP and 2 for a plain one.

Attention, per layer (weight matrices):

- GQA/MHA (`attention: gqa`, the default): q and o are d x H*h, k and v are
  d x K*h, so A = d*h*(2H + 2K). Bias terms (`attention_bias: true`, gpt-oss):
  + H*h + 2*K*h (q, k, v) + d (o). Attention sinks (`attention_sinks: true`,
  gpt-oss): one learned logit per head, + H.
- MLA (`attention: mla`, DeepSeek-V2/V3), with r_q = q_lora_rank, r_kv =
  kv_lora_rank, n = qk_nope_head_dim, r = qk_rope_head_dim, v = v_head_dim:
  queries are down-projected to r_q and up-projected to H heads of n + r,
  d*r_q + r_q*H*(n + r) (a full d*H*(n + r) without q_lora_rank); keys and values
  share one compressed latent of r_kv plus one decoupled RoPE key of r for all
  heads, d*(r_kv + r), up-projected to H heads of n (keys) and v (values),
  r_kv*H*(n + v); the output is H*v x d. Norm weights: r_q + r_kv (the latent
  RMSNorms).

MLP, per layer:

- dense: m*d*F; MLP biases (`mlp_bias`) add (m - 1)*F + d;
- MoE: E routed experts and S shared experts of m*d*F_e each, a router d*E
  (+ E with `router_bias`: gpt-oss's gate bias, DeepSeek-V3's
  e_score_correction_bias), and with `mlp_bias` (gpt-oss) (m - 1)*F_e + d per expert.
  Active per token: the k routed experts, all S shared experts and the whole router.

Which layers are MoE: none without `experts`; otherwise the first `dense_layers`
are dense (DeepSeek-V3's first_k_dense_replace) and of the rest, layer i (0-based)
is MoE when (i + 1) is a multiple of `moe_layer_step` (Llama 4's
interleave_moe_layer_step, Qwen3's decoder_sparse_step; 1 = every layer).

Norm weights (counted under `matrices+norms` and `all`): two d-vectors per layer
(before attention and before the MLP), qk-norm (`qk_norm: true`, Qwen3: one RMSNorm
of h on queries and one on keys, shared by the heads) 2*h, the MLA latent norms,
and the final norm d. Bias vectors and sinks are counted under `all` only.

Embeddings: V*d, twice unless `tied_embeddings`.

Multi-token prediction (`mtp_modules`, DeepSeek-V3's num_nextn_predict_layers):
each module is one more transformer layer like the last one, a projection of the
concatenated [h; emb] (2d) to d, 2*d*d, and (norms) the two input RMSNorms plus
the shared head's norm, 3d; it shares the embedding and output head with the main
model, so they are not counted again. MTP parameters are reported apart
(`params_mtp`), never inside `params_total`.

KV cache per token of context (elements; multiply by bytes per element):
GQA stores a key and a value per KV head, 2*K*h per layer; MLA stores the
compressed latent and the shared RoPE key, r_kv + r per layer. With
`local_attention_layers` L_loc (sliding-window or chunked layers, which keep at
most `local_attention_window` tokens), `kv_elements_per_token` counts every layer
(a context within the window) and `kv_elements_per_token_long` only the others
(the growth per token beyond the window).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

CONVENTIONS = ("matrices", "matrices+norms", "all")


class GeometryError(ValueError):
    """The geometry lacks a field a count needs, or its fields contradict each other."""


@dataclass(frozen=True)
class Counts:
    """Named parameter components; `total` is their sum."""

    parts: Mapping[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.parts.values())

    def plus(self, other: Counts, times: int = 1) -> Counts:
        merged = dict(self.parts)
        for name, value in other.parts.items():
            merged[name] = merged.get(name, 0) + times * value
        return Counts(merged)


def integer(geometry: Mapping[str, Any], key: str) -> int | None:
    """A positive integer field, or None when absent or not a positive integer."""
    value = geometry.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _need(geometry: Mapping[str, Any], key: str) -> int:
    value = integer(geometry, key)
    if value is None:
        raise GeometryError(f"geometry lacks {key}")
    return value


def _flag(geometry: Mapping[str, Any], key: str) -> bool:
    return geometry.get(key) is True


@dataclass(frozen=True)
class Convention:
    """What a count includes: norm weights, bias vectors and sinks."""

    norms: bool
    biases: bool

    @classmethod
    def named(cls, name: str) -> Convention:
        return cls(norms=name != "matrices", biases=name == "all")


def head_width(geometry: Mapping[str, Any]) -> int:
    """head_dim, or d_model/heads when the geometry does not state it."""
    head = integer(geometry, "head_dim")
    if head is not None:
        return head
    d, heads = _need(geometry, "d_model"), _need(geometry, "heads")
    if d % heads:
        raise GeometryError("d_model is not a multiple of heads; state head_dim")
    return d // heads


def attention(geometry: Mapping[str, Any], conv: Convention) -> Counts:
    """One layer's attention parameters (see the module docstring)."""
    if geometry.get("attention") == "mla":
        return _mla(geometry, conv)
    d, heads = _need(geometry, "d_model"), _need(geometry, "heads")
    kv, h = integer(geometry, "kv_heads") or heads, head_width(geometry)
    parts = {"attention": d * h * (2 * heads + 2 * kv)}
    if conv.biases and _flag(geometry, "attention_bias"):
        parts["attention_bias"] = heads * h + 2 * kv * h + d
    if conv.biases and _flag(geometry, "attention_sinks"):
        parts["attention_sinks"] = heads
    if conv.norms and _flag(geometry, "qk_norm"):
        parts["qk_norm"] = 2 * h
    return Counts(parts)


def _mla(geometry: Mapping[str, Any], conv: Convention) -> Counts:
    d, heads = _need(geometry, "d_model"), _need(geometry, "heads")
    r_kv, rope = _need(geometry, "kv_lora_rank"), _need(geometry, "qk_rope_head_dim")
    nope, v = _need(geometry, "qk_nope_head_dim"), _need(geometry, "v_head_dim")
    r_q = integer(geometry, "q_lora_rank")
    q = d * r_q + r_q * heads * (nope + rope) if r_q else d * heads * (nope + rope)
    parts = {
        "attention_q": q,
        "attention_kv": d * (r_kv + rope) + r_kv * heads * (nope + v),
        "attention_o": heads * v * d,
    }
    if conv.norms:
        parts["latent_norms"] = r_kv + (r_q or 0)
    return Counts(parts)


def _gate_matrices(geometry: Mapping[str, Any]) -> int:
    return 3 if geometry.get("mlp", "gated") == "gated" else 2


def _one_mlp(geometry: Mapping[str, Any], width: int, conv: Convention) -> int:
    m, d = _gate_matrices(geometry), _need(geometry, "d_model")
    bias = (m - 1) * width + d if conv.biases and _flag(geometry, "mlp_bias") else 0
    return m * d * width + bias


def dense_mlp(geometry: Mapping[str, Any], conv: Convention) -> Counts:
    """A dense layer's MLP: m*d*F."""
    return Counts({"mlp": _one_mlp(geometry, _need(geometry, "d_ff"), conv)})


def moe_mlp(geometry: Mapping[str, Any], conv: Convention, active: bool = False) -> Counts:
    """A MoE layer's experts, shared experts and router (only k experts when `active`)."""
    experts, d = _need(geometry, "experts"), _need(geometry, "d_model")
    width = integer(geometry, "d_ff_expert") or _need(geometry, "d_ff")
    used = (integer(geometry, "experts_active") or experts) if active else experts
    if used > experts:
        raise GeometryError("experts_active exceeds experts")
    one = _one_mlp(geometry, width, conv)
    parts = {"routed_experts": used * one, "router": d * experts}
    shared = integer(geometry, "shared_experts")
    if shared:
        parts["shared_experts"] = shared * one
    if conv.biases and _flag(geometry, "router_bias"):
        parts["router_bias"] = experts
    return Counts(parts)


def layer_kinds(geometry: Mapping[str, Any]) -> list[str]:
    """`dense` or `moe` for every layer, in order (see the module docstring)."""
    layers = _need(geometry, "layers")
    if integer(geometry, "experts") is None:
        if "dense_layers" in geometry or "moe_layer_step" in geometry:
            raise GeometryError("dense_layers and moe_layer_step need experts")
        return ["dense"] * layers
    first = integer(geometry, "dense_layers") or 0
    step = integer(geometry, "moe_layer_step") or 1
    if first >= layers:
        raise GeometryError("dense_layers must be fewer than layers")
    return ["dense" if i < first or (i + 1) % step else "moe" for i in range(layers)]


def layer(geometry: Mapping[str, Any], kind: str, conv: Convention, active: bool = False) -> Counts:
    """One layer of `kind` (dense or moe): attention + MLP + its two norms."""
    mlp = moe_mlp(geometry, conv, active) if kind == "moe" else dense_mlp(geometry, conv)
    counts = attention(geometry, conv).plus(mlp)
    if conv.norms:
        counts = counts.plus(Counts({"layer_norms": 2 * _need(geometry, "d_model")}))
    return counts


def embeddings(geometry: Mapping[str, Any], conv: Convention) -> Counts:
    """Input embedding and output head (one matrix when tied), and the final norm."""
    d, vocab = _need(geometry, "d_model"), _need(geometry, "vocab")
    parts = {"embeddings": vocab * d * (1 if _flag(geometry, "tied_embeddings") else 2)}
    if conv.norms:
        parts["final_norm"] = d
    return Counts(parts)


def model(geometry: Mapping[str, Any], conv: Convention, active: bool = False) -> Counts:
    """Every layer plus the embeddings: params_total (or params_active when `active`)."""
    counts = embeddings(geometry, conv)
    kinds = layer_kinds(geometry)
    for kind in ("dense", "moe"):
        if kinds.count(kind):
            counts = counts.plus(layer(geometry, kind, conv, active), kinds.count(kind))
    return counts


def mtp(geometry: Mapping[str, Any], conv: Convention) -> Counts | None:
    """The multi-token-prediction modules' own parameters; None without `mtp_modules`."""
    modules = integer(geometry, "mtp_modules")
    if modules is None:
        return None
    d = _need(geometry, "d_model")
    one = layer(geometry, layer_kinds(geometry)[-1], conv).plus(
        Counts({"mtp_projection": 2 * d * d})
    )
    if conv.norms:
        one = one.plus(Counts({"mtp_norms": 3 * d}))
    return Counts().plus(one, modules)


def kv_elements_per_token(geometry: Mapping[str, Any], long: bool = False) -> int:
    """KV-cache elements per token of context (all layers, or beyond the local window)."""
    layers = _need(geometry, "layers")
    if long:
        local = integer(geometry, "local_attention_layers")
        if local is None:
            raise GeometryError("geometry lacks local_attention_layers")
        if local >= layers:
            raise GeometryError("local_attention_layers must be fewer than layers")
        layers -= local
    if geometry.get("attention") == "mla":
        return layers * (_need(geometry, "kv_lora_rank") + _need(geometry, "qk_rope_head_dim"))
    kv = integer(geometry, "kv_heads") or _need(geometry, "heads")
    return layers * 2 * kv * head_width(geometry)
