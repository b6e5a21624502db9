"""Each kind of wrong maths gets its own code, with the computed value in the message."""

from __future__ import annotations

from kb.equations.engine import analyse
from tests.equations.helpers import HARDWARE, NUMERIC, flop, issues, knowledge_base


def codes(kb) -> list[str]:
    return sorted(i.code for i in issues(kb))


def test_the_right_maths_has_no_issues() -> None:
    extra = (
        NUMERIC.replace("EXPECTED", "3318")
        + """
  - {id: s, kind: scaling, of: b_star, var: BW_link, law: proportional}
  - {id: e, kind: effect, of: b_star, change: {d: "d/2"}, factor: 2}
derivations:
  - id: closed
    steps:
      - {rule: solve_for, from: crossover, var: B, result: b_star}
"""
    )
    kb = knowledge_base("/nonexistent", ("flops/x", flop(extra)), ("hardware/gpu", HARDWARE))
    assert codes(kb) == []
    items = analyse(kb, use_cache=False).results["flops/x"].items
    states = {(i.section, i.kind): i.state for i in items}
    assert states == {
        ("equation", ""): "consistent",
        ("derivation", ""): "derived",
        ("claim", "numeric"): "recomputed",
        ("claim", "scaling"): "recomputed",
        ("claim", "effect"): "recomputed",
    }


def test_wrong_closed_form_is_refuted_with_the_right_form() -> None:
    extra = """
derivations:
  - id: closed
    steps:
      - {rule: solve_for, from: crossover, var: B, result: wrong}
"""
    data = flop(extra)
    data["equations"]["wrong"] = {"expr": "B_star = P_layer*BW_link/(4*d*BW_hbm)"}
    found = issues(knowledge_base("/x", ("flops/x", data)))
    assert [i.code for i in found] == ["EQ005"]
    assert "B = BW_link*P_layer/(2*BW_hbm*d)" in found[0].message
    assert found[0].pointer == "/derivations/0/steps/0"


def test_wrong_numeric_claim_names_the_computed_value_and_the_bound_file() -> None:
    extra = NUMERIC.replace("EXPECTED", "3000")
    kb = knowledge_base("/x", ("flops/x", flop(extra)), ("hardware/gpu", HARDWARE))
    found = issues(kb)
    assert [i.code for i in found] == ["EQ007"]
    assert "3318.4478" in found[0].message and "222336/67" in found[0].message
    assert [loc.path for loc in found[0].related] == ["records/hardware/gpu.yaml"]
    assert found[0].related[0].pointer == "/memory/bandwidth"


def test_wrong_scaling_claim() -> None:
    extra = """
claims:
  - {id: s, kind: scaling, of: b_star, var: d, law: proportional}
"""
    found = issues(knowledge_base("/x", ("flops/x", flop(extra))))
    assert [i.code for i in found] == ["EQ008"]
    assert "elasticity -1" in found[0].message


TRANSFER = """
symbols:
  T: {meaning: time, unit: s}
  t_0: {meaning: fixed latency, unit: s}
  n: {meaning: bytes, unit: B}
  BW: {meaning: bandwidth, unit: GB/s}
equations:
  transfer: {expr: "T = t_0 + n/BW"}
claims:
  - {id: affine, kind: scaling, of: transfer, var: n, law: affine}
  - {id: proportional, kind: scaling, of: transfer, var: n, law: proportional}
"""


def test_affine_is_told_apart_from_proportional() -> None:
    base = TRANSFER + (
        "  - {id: asymptotic, kind: scaling, of: transfer, var: n, law: proportional,"
        " asymptotic: true}\n"
    )
    found = issues(knowledge_base("/x", ("flops/x", flop(base=base))))
    assert [(i.code, i.pointer) for i in found] == [("EQ008", "/claims/1")]


def test_wrong_effect_claim() -> None:
    extra = """
claims:
  - {id: e, kind: effect, of: b_star, change: {d: "d/2"}, factor: 0.5}
"""
    found = issues(knowledge_base("/x", ("flops/x", flop(extra))))
    assert [i.code for i in found] == ["EQ009"]
    assert "factor 2" in found[0].message


def test_dimensionally_inconsistent_equation() -> None:
    data = flop()
    data["equations"]["bad"] = {"expr": "B_star = P_layer + BW_link"}
    found = issues(knowledge_base("/x", ("flops/x", data)))
    assert [i.code for i in found] == ["EQ004"]
    assert "B·s^-1" in found[0].message


def test_binding_problems_have_their_own_codes() -> None:
    cases = {
        "hardware/gpu#memory.nothing": "EQ010",
        "hardware/none#memory.bandwidth": "RF001",  # the engine defers a missing record to RF001
        "hardware/gpu#memory": "EQ011",
        "hardware/gpu#memory.capacity": "EQ012",
    }
    for spec, code in cases.items():
        extra = NUMERIC.replace("EXPECTED", "3318").replace("hardware/gpu#memory.bandwidth", spec)
        kb = knowledge_base("/x", ("flops/x", flop(extra)), ("hardware/gpu", HARDWARE))
        found = issues(kb)
        assert [i.code for i in found] == [code], spec
        assert found[0].pointer == "/claims/0/bind/BW_hbm"


def test_approximation_beyond_its_tolerance_is_refuted() -> None:
    base = """
symbols:
  N: {meaning: ranks, unit: "1"}
  s: {meaning: message, unit: B}
  V: {meaning: exact volume, unit: B}
  V_inf: {meaning: large-N volume, unit: B}
equations:
  ring: {expr: "V = 2*(N - 1)/N*s"}
  large: {expr: "V_inf = 2*s"}
derivations:
  - id: saturation
    steps:
      - {rule: approximate, from: ring, var: N, range: [4, oo], tolerance: 0.25, result: large}
"""
    found = issues(knowledge_base("/x", ("flops/x", flop(base=base))))
    assert [i.code for i in found] == ["EQ005"]
    assert "1/3" in found[0].message and "N=4" in found[0].message


def test_derived_model_figures_are_recomputed() -> None:
    model = {
        "kind": "model",
        "geometry": {
            "d_model": 4096,
            "d_ff": 14336,
            "layers": 32,
            "heads": 32,
            "kv_heads": 8,
            "vocab": 128256,
            "mlp": "gated",
        },
        "derived": {
            "params_per_layer": {"value": 218103808, "unit": "1"},
            "params_total": {"value": 8030261248, "unit": "1"},
        },
        "counting": "matrices+norms",
    }
    found = issues(knowledge_base("/x", ("models/m", model)), "models/m")
    # matrices+norms adds 2*d per layer: the per-layer figure omits it, the total
    # (the published 8,030,261,248) includes the norms and the final norm
    assert [(i.code, i.pointer) for i in found] == [("EQ013", "/derived/params_per_layer/value")]
    assert "218,112,000" in found[0].message
    model["counting"] = "matrices"
    model["derived"]["params_total"]["value"] = 8029995008
    assert issues(knowledge_base("/x", ("models/m", model)), "models/m") == []


def test_hostile_record_text_is_reported_and_never_run(tmp_path) -> None:
    sentinel = tmp_path / "PWNED"
    data = flop()
    data["symbols"][f"__import__('os').system('touch {sentinel}')"] = {"meaning": "x", "unit": "1"}
    data["equations"]["evil"] = {"expr": f"B = __import__('os').system('touch {sentinel}')"}
    data["equations"]["huge"] = {"expr": "B = 9**9**9**9"}
    data["claims"] = [
        {
            "id": "c",
            "kind": "numeric",
            "expr": "B.__class__",
            "bind": {},
            "expect": {"value": 1, "unit": "1"},
        }
    ]
    found = issues(knowledge_base("/x", ("flops/x", data)))
    assert sorted(i.pointer for i in found if i.code == "EQ001") == [
        "/claims/0/expr",
        "/equations/evil/expr",
        "/equations/huge/expr",
        f"/symbols/__import__('os').system('touch {str(sentinel).replace('/', '~1')}')",
    ]
    assert not sentinel.exists()


def test_effect_of_replacing_a_term_solves_again() -> None:
    claims = """
claims:
  - {id: halves, kind: effect, of: crossover, replace: {"4*B*d": "2*B*d"}, var: B, factor: 0.5}
  - {id: doubles, kind: effect, of: crossover, replace: {"4*B*d": "2*B*d"}, var: B, factor: 2}
  - {id: missing, kind: effect, of: crossover, replace: {"8*B*d": "2*B*d"}, var: B, factor: 2}
"""
    found = issues(knowledge_base("/x", ("flops/x", flop(claims))))
    assert [(i.code, i.pointer) for i in found] == [
        ("EQ009", "/claims/0"),
        ("EQ001", "/claims/2/replace"),
    ]
    assert "factor 2" in found[0].message


UNDECIDABLE = TRANSFER + (
    '  - {id: halved, kind: effect, of: transfer, change: {BW: "2*BW"}, factor: 0.5}\n'
)


def test_a_claim_kb_cannot_decide_is_unverified_never_refuted(monkeypatch) -> None:
    # decide_zero gives up (a timeout in simplify, or no proof and no counterexample):
    # these claims used to come out refuted, with no word of a timeout, and were cached.
    import kb.equations.claims as claims
    from kb.equations.algebra import UNKNOWN, ZeroVerdict

    monkeypatch.setattr(claims, "decide_zero", lambda e: ZeroVerdict(UNKNOWN, e, None, True))
    monkeypatch.setenv("KB_JOBS", "1")
    kb = knowledge_base("/x", ("flops/x", flop(base=UNDECIDABLE)))
    items = analyse(kb, use_cache=False).results["flops/x"].items
    claimed = {i.id: (i.state, i.detail) for i in items if i.section == "claim"}
    assert set(claimed) == {"affine", "proportional", "halved"}, claimed
    assert all(state == "unverified" for state, _ in claimed.values()), claimed
    assert "(timeout)" in claimed["affine"][1] and "(timeout)" in claimed["proportional"][1]
    assert [i.code for i in issues(kb) if i.code in ("EQ008", "EQ009")] == []
