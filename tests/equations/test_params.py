"""The parameter counter (kb.equations.params): hand-derived counts, additivity, refusals.

The expected numbers are worked out by hand from the shapes in each model's own code
(DeepSeek-V3 inference/model.py, gpt-oss torch/model.py, Llama 4 llama-models), not
produced by the counter; the property tests check that every count is the sum of its
named components and that each component moves only with its own fields.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.equations import params
from kb.equations.figures import check_model
from kb.equations.params import Convention, GeometryError

ALL, MATRICES, NORMS = (Convention.named(n) for n in ("all", "matrices", "matrices+norms"))

DEEPSEEK_V3: dict[str, Any] = {
    "d_model": 7168, "d_ff": 18432, "layers": 61, "heads": 128, "kv_heads": 128,
    "vocab": 129280, "attention": "mla", "q_lora_rank": 1536, "kv_lora_rank": 512,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "experts": 256,
    "experts_active": 8, "shared_experts": 1, "d_ff_expert": 2048, "dense_layers": 3,
    "router_bias": True, "mtp_modules": 1,
}  # fmt: skip
GPT_OSS_120B: dict[str, Any] = {
    "d_model": 2880, "d_ff": 2880, "layers": 36, "heads": 64, "kv_heads": 8, "head_dim": 64,
    "vocab": 201088, "experts": 128, "experts_active": 4, "attention_bias": True,
    "attention_sinks": True, "router_bias": True, "mlp_bias": True,
}  # fmt: skip


def test_mla_attention_matches_the_shapes_of_deepseeks_code() -> None:
    # wq_a 7168x1536, wq_b 1536x(128*192), wkv_a 7168x(512+64), wkv_b 512x(128*256), wo 16384x7168
    counts = params.attention(DEEPSEEK_V3, MATRICES)
    assert counts.parts == {
        "attention_q": 7168 * 1536 + 1536 * 128 * 192,
        "attention_kv": 7168 * 576 + 512 * 128 * 256,
        "attention_o": 128 * 128 * 7168,
    }
    assert counts.total == 187_105_280
    assert params.attention(DEEPSEEK_V3, NORMS).parts["latent_norms"] == 1536 + 512


def test_mla_without_a_query_rank_projects_queries_in_full() -> None:
    geometry = {**DEEPSEEK_V3, "q_lora_rank": None}
    assert params.attention(geometry, MATRICES).parts["attention_q"] == 7168 * 128 * 192
    assert "latent_norms" not in params.attention(geometry, MATRICES).parts
    assert params.attention(geometry, NORMS).parts["latent_norms"] == 512


def test_deepseek_v3_main_model_and_mtp_by_hand() -> None:
    dense = 187_105_280 + 3 * 7168 * 18432
    moe = 187_105_280 + 257 * 3 * 7168 * 2048 + 256 * 7168 + 256
    embeddings = 2 * 129280 * 7168
    norms_per_layer = 2 * 7168 + 1536 + 512
    total = 3 * dense + 58 * moe + embeddings + 61 * norms_per_layer + 7168
    assert params.model(DEEPSEEK_V3, ALL).total == total == 671_026_419_200
    mtp = moe + norms_per_layer + 2 * 7168 * 7168 + 3 * 7168
    assert params.mtp(DEEPSEEK_V3, ALL) is not None
    assert params.mtp(DEEPSEEK_V3, ALL).total == mtp == 11_610_068_224  # type: ignore[union-attr]
    active = 187_105_280 + 9 * 3 * 7168 * 2048 + 256 * 7168 + 256 + norms_per_layer
    assert params.layer(DEEPSEEK_V3, "moe", ALL, active=True).total == active


def test_kv_cache_is_the_latent_for_mla_and_keys_and_values_for_gqa() -> None:
    assert params.kv_elements_per_token(DEEPSEEK_V3) == 61 * (512 + 64)
    assert params.kv_elements_per_token(GPT_OSS_120B) == 36 * 2 * 8 * 64
    windowed = {**GPT_OSS_120B, "local_attention_layers": 18, "local_attention_window": 128}
    assert params.kv_elements_per_token(windowed, long=True) == 18 * 2 * 8 * 64
    with pytest.raises(GeometryError, match="local_attention_layers"):
        params.kv_elements_per_token(GPT_OSS_120B, long=True)


def test_gpt_oss_biases_and_sinks_are_counted_under_all_only() -> None:
    attention = 2880 * 64 * (2 * 64 + 2 * 8)
    bias = 64 * 64 + 2 * 8 * 64 + 2880
    expert = 3 * 2880 * 2880 + 2 * 2880 + 2880  # mlp1 (2F x d) + bias 2F, mlp2 (d x F) + bias d
    per_layer = attention + bias + 64 + 128 * expert + 2880 * 128 + 128 + 2 * 2880
    assert params.layer(GPT_OSS_120B, "moe", ALL).total == per_layer
    total = 36 * per_layer + 2 * 201088 * 2880 + 2880
    assert params.model(GPT_OSS_120B, ALL).total == total == 116_829_156_672
    plain = params.layer(GPT_OSS_120B, "moe", MATRICES).total
    assert plain == attention + 128 * 3 * 2880 * 2880 + 2880 * 128


def test_interleaved_moe_layers_follow_the_step_after_the_dense_prefix() -> None:
    maverick = {"layers": 48, "experts": 128, "moe_layer_step": 2}
    kinds = params.layer_kinds(maverick)
    assert kinds[:4] == ["dense", "moe", "dense", "moe"] and kinds.count("moe") == 24
    assert params.layer_kinds({"layers": 5, "experts": 4, "dense_layers": 3}) == [
        *["dense"] * 3,
        *["moe"] * 2,
    ]
    with pytest.raises(GeometryError, match="need experts"):
        params.layer_kinds({"layers": 4, "dense_layers": 1})
    with pytest.raises(GeometryError, match="fewer than layers"):
        params.layer_kinds({"layers": 4, "experts": 2, "dense_layers": 4})


def test_qk_norm_is_a_norm_of_the_head_width() -> None:
    qwen = {"d_model": 5120, "heads": 64, "kv_heads": 8, "head_dim": 128, "qk_norm": True}
    assert params.attention(qwen, NORMS).parts["qk_norm"] == 256
    assert "qk_norm" not in params.attention(qwen, MATRICES).parts


def test_experts_active_above_experts_is_refused() -> None:
    with pytest.raises(GeometryError, match="exceeds"):
        params.moe_mlp({"d_model": 8, "d_ff": 8, "experts": 2, "experts_active": 3}, ALL, True)


POSITIVE = st.integers(min_value=1, max_value=4096)


@st.composite
def geometries(draw: st.DrawFn) -> dict[str, Any]:
    layers = draw(st.integers(min_value=2, max_value=80))
    geometry: dict[str, Any] = {
        "d_model": draw(POSITIVE),
        "d_ff": draw(POSITIVE),
        "layers": layers,
        "heads": draw(st.integers(min_value=1, max_value=128)),
        "head_dim": draw(st.integers(min_value=1, max_value=256)),
        "vocab": draw(POSITIVE),
        "mlp": draw(st.sampled_from(["gated", "plain"])),
        "tied_embeddings": draw(st.booleans()),
    }
    for flag in ("attention_bias", "attention_sinks", "router_bias", "mlp_bias", "qk_norm"):
        geometry[flag] = draw(st.booleans())
    if draw(st.booleans()):
        geometry.update(
            attention="mla",
            kv_lora_rank=draw(POSITIVE),
            qk_nope_head_dim=draw(POSITIVE),
            qk_rope_head_dim=draw(POSITIVE),
            v_head_dim=draw(POSITIVE),
        )
        if draw(st.booleans()):
            geometry["q_lora_rank"] = draw(POSITIVE)
    if draw(st.booleans()):
        experts = draw(st.integers(min_value=1, max_value=256))
        geometry.update(
            experts=experts,
            experts_active=draw(st.integers(min_value=1, max_value=experts)),
            d_ff_expert=draw(POSITIVE),
            dense_layers=draw(st.integers(min_value=1, max_value=layers - 1)),
            moe_layer_step=draw(st.integers(min_value=1, max_value=4)),
        )
        if draw(st.booleans()):
            geometry["shared_experts"] = draw(st.integers(min_value=1, max_value=4))
    return geometry


CONVENTIONS = st.sampled_from([ALL, MATRICES, NORMS])


@settings(max_examples=200, deadline=None)
@given(geometries(), CONVENTIONS)
def test_the_total_is_the_embeddings_plus_every_layer(
    geometry: dict[str, Any], conv: Convention
) -> None:
    total = params.model(geometry, conv)
    layers = sum(params.layer(geometry, kind, conv).total for kind in params.layer_kinds(geometry))
    assert total.total == params.embeddings(geometry, conv).total + layers
    assert total.total == sum(total.parts.values()) and all(v > 0 for v in total.parts.values())
    active = params.model(geometry, conv, active=True).total
    assert active <= total.total
    sparse = "moe" in params.layer_kinds(geometry)
    assert (active < total.total) == (sparse and geometry["experts_active"] < geometry["experts"])


@settings(max_examples=200, deadline=None)
@given(geometries(), CONVENTIONS, st.integers(min_value=1, max_value=1000))
def test_each_component_moves_with_its_own_field_only(
    geometry: dict[str, Any], conv: Convention, extra: int
) -> None:
    before = params.model(geometry, conv).parts
    wider = {**geometry, "vocab": geometry["vocab"] + extra}
    after = params.model(wider, conv).parts
    changed = {name for name in before if before[name] != after[name]}
    assert changed == {"embeddings"}
    expected = extra * geometry["d_model"] * (1 if geometry["tied_embeddings"] else 2)
    assert after["embeddings"] - before["embeddings"] == expected
    if "experts" in geometry and "moe" in params.layer_kinds(geometry):
        more = params.model({**geometry, "experts": geometry["experts"] + extra}, conv).parts
        moved = {name for name in before if before[name] != more[name]}
        assert moved <= {"routed_experts", "router", "router_bias"} and "routed_experts" in moved


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([*DEEPSEEK_V3, *GPT_OSS_120B, "moe_layer_step", "local_attention_layers"]),
        st.one_of(st.integers(-3, 10**6), st.booleans(), st.none(), st.text(max_size=3)),
    ),
    st.dictionaries(
        st.sampled_from(["params_total", "params_mtp", "kv_elements_per_token_long", "x"]),
        st.fixed_dictionaries({"value": st.integers(0, 10**12), "unit": st.just("1")}),
    ),
)
def test_any_geometry_gives_items_or_issues_never_an_exception(
    geometry: dict[str, Any], derived: dict[str, Any]
) -> None:
    published = {"p": {"value": 5, "unit": "1", "compare": "params_total + params_mtp"}}
    data = {"geometry": geometry, "derived": derived, "counting": "all", "published": published}
    items, issues = check_model(data)
    assert {i.id for i in items if i.section == "figure"} <= {*derived, "p"}
    assert all(i.code in ("EQ013", "EQ026") for i in issues)


MODELS = Path(__file__).resolve().parents[2] / "records" / "models"


@pytest.mark.parametrize("path", sorted(MODELS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_shipped_model_figure_is_recomputed_and_every_gap_explained(path: Path) -> None:
    items, issues = check_model(yaml.safe_load(path.read_text(encoding="utf-8")))
    assert issues == []
    derived = [i for i in items if i.pointer.startswith("/derived/")]
    assert derived and all(i.state == "recomputed" for i in derived), derived
    for item in (i for i in items if i.pointer.startswith("/published/")):
        assert item.state in ("recomputed", "explained"), item
        assert (item.state == "explained") == ("explained:" in item.detail)


def test_a_published_total_may_subtract_a_figure() -> None:
    """gpt-oss counts the unembedding but not the embedding as active: params_active less
    the input embedding (V*d) is what the published "5.1B" is compared with."""
    geometry = {**GPT_OSS_120B, "mlp": "gated", "tied_embeddings": False}
    entry = {
        "value": 5_132_849_472,
        "unit": "1",
        "compare": "params_active - params_input_embedding",
    }
    items, issues = check_model(
        {"geometry": geometry, "counting": "all", "published": {"a": entry}}
    )
    assert issues == [] and [i.state for i in items] == ["recomputed"]
    assert "5,132,849,472" in items[0].detail
    entry["compare"] = "params_active -"
    items, issues = check_model(
        {"geometry": geometry, "counting": "all", "published": {"a": entry}}
    )
    assert [i.code for i in issues] == ["EQ026"] and "names no derived figure" in issues[0].message
