"""A model's derived parameter counts equal what its geometry gives under its convention.

Why: P_layer feeds every per-layer equation. kb recomputes params_per_layer
(attention q/k/v/o + MLP, 3 matrices gated or 2 plain, MoE experts + router,
plus norms under `counting: matrices+norms`) and params_total (layers, embeddings
twice unless tied, final norm) from `geometry`.

Bad:

    geometry: {d_model: 4096, d_ff: 11008, heads: 32, kv_heads: 32, layers: 32,
               vocab: 32000, mlp: gated}
    counting: matrices
    derived:
      params_per_layer: {value: 202383360, unit: "1", basis: derived, source: sources/x}

Good:

    geometry: {d_model: 4096, d_ff: 11008, heads: 32, kv_heads: 32, layers: 32,
               vocab: 32000, mlp: gated}
    counting: matrices
    derived:
      params_per_layer: {value: 202375168, unit: "1", basis: derived, source: sources/x}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.MODEL_FIGURE_MISMATCH
NAME = "model-derived-figure-mismatch"
SEVERITY = Severity.ERROR
HINT = "correct the figure, or the geometry it is derived from"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
