"""Chart geometry, and the seed flop class's chart: B* over link bandwidth per accelerator."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.model import KnowledgeBase
from kb.sitegen.charts import PLOT, Axis, Bar, Chart, nice_ticks, stacked_bars, tick_label
from kb.sitegen.flop_chart import compiled, sympy_value
from tests.site.conftest import SEED_FLOP, load

SVG = "{http://www.w3.org/2000/svg}"


def test_log_axis_maps_decades_evenly_and_ticks_follow_1_2_5() -> None:
    axis = Axis(10.0, 1000.0, 0.0, 200.0, log=True)
    assert (axis(10.0), axis(100.0), axis(1000.0)) == (0.0, 100.0, 200.0)
    assert nice_ticks(3.0, 120.0, log=True) == [5.0, 10.0, 20.0, 50.0, 100.0]
    assert nice_ticks(0.0, 17.6, log=False) == [0.0, 5.0, 10.0, 15.0]
    assert [tick_label(v) for v in (2000.0, 0.5, 25.0)] == ["2k", "0.5", "25"]


def test_stacked_bars_skip_infeasible_options_and_mark_them() -> None:
    chart = Chart("c", "t", "d", "x", "y")
    bars = [Bar("ref", (("T_useful", 3.0), ("T_exposed", 1.0))), Bar("cand", (), "too small")]
    data = stacked_bars(chart, bars)
    rects = [r for s in data["series"] for r in s["bars"]]
    assert len(rects) == 2 and all(r["h"] > 0 for r in rects)
    assert [m["title"] for m in data["marks"] if m["infeasible"]] == ["too small"]
    assert min(r["y"] for r in rects) >= PLOT["top"]


def test_evaluate_walks_sympy_exactly() -> None:
    import sympy as sp

    p, bw, d = sp.symbols("P_layer BW_link d", positive=True)
    value = sympy_value(
        p * bw / (2 * d), {"P_layer": Fraction(10), "BW_link": Fraction(3), "d": Fraction(4)}
    )
    assert value == Fraction(30, 8)


NAMES = ("a", "b", "c")


def _expressions() -> st.SearchStrategy[object]:
    import sympy as sp

    leaves = st.one_of(
        st.sampled_from([sp.Symbol(n, positive=True) for n in NAMES]),
        st.fractions(Fraction(1, 50), 50, max_denominator=50).map(sp.Rational),
    )
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, min_size=2, max_size=3).map(lambda a: sp.Add(*a)),
            st.lists(inner, min_size=2, max_size=3).map(lambda a: sp.Mul(*a)),
            st.tuples(inner, st.integers(-3, 3)).map(lambda a: sp.Pow(a[0], a[1])),
            st.tuples(inner, st.sampled_from(["1/2", "3/2"])).map(
                lambda a: sp.Pow(a[0], sp.Rational(a[1]))
            ),
            st.lists(inner, min_size=2, max_size=3).map(lambda a: sp.Max(*a)),
            st.lists(inner, min_size=2, max_size=3).map(lambda a: sp.Min(*a)),
            inner.map(sp.ceiling),  # positive leaves: every value stays a positive real
        ),
        max_leaves=8,
    )


def _outcome(evaluate: object, *args: object) -> object:
    try:
        return ("value", evaluate(*args))  # type: ignore[operator]
    except Exception as exc:  # noqa: BLE001 - the error is part of what must agree
        return ("error", type(exc).__name__, str(exc))


@settings(max_examples=200, deadline=None)
@given(
    _expressions(),
    st.lists(st.fractions(min_value=Fraction(1, 100), max_value=100), min_size=3, max_size=3),
)
def test_a_compiled_chart_function_is_sympy_value_exactly(expr: object, xs: list[Fraction]) -> None:
    """The chart samples a compiled function: same values (and same errors) as the walk."""
    values = dict(zip(NAMES, xs, strict=True))
    assert _outcome(compiled(expr), values) == _outcome(sympy_value, expr, values)


@pytest.fixture(scope="module")
def seed_svg(built_site: Path) -> ET.Element:
    html = (built_site / f"records/{SEED_FLOP}.html").read_text(encoding="utf-8")
    match = re.search(r'<svg xmlns="http://www.w3.org/2000/svg".*?</svg>', html, re.S)
    assert match, "the seed flop class has no chart"
    return ET.fromstring(match.group(0))


def test_seed_chart_has_a_title_a_text_alternative_and_a_line_per_accelerator(
    seed_svg: ET.Element, repo_kb: KnowledgeBase
) -> None:
    kb = repo_kb
    named = kb.get(SEED_FLOP).data["affected_by_hardware"]
    with_bandwidth = [i for i in named if kb.get(i) and kb.get(i).get("memory.bandwidth")]
    assert seed_svg.get("role") == "img"
    assert "B_tp" in seed_svg.find(f"{SVG}title").text  # kb's crossover, not the seed's B_star
    assert "interconnect" in seed_svg.find(f"{SVG}desc").text
    series = [g for g in seed_svg.iter(f"{SVG}g") if "series" in (g.get("class") or "").split()]
    lines = [path for g in series for path in g.findall(f"{SVG}path")]
    assert len(lines) == len(with_bandwidth) >= 3


def test_seed_chart_marks_the_fabrics_of_the_drawn_accelerators_and_the_claims(
    seed_svg: ET.Element, repo_kb: KnowledgeBase
) -> None:
    kb = repo_kb
    seed = kb.get(SEED_FLOP)
    expected = {
        spec.partition("#")[0]
        for claim in seed.data["claims"]
        for name, spec in claim.get("bind", {}).items()
        if name == "W" and claim.get("of") == "b_star_tp"
    }
    for accelerator_id in seed.data["affected_by_hardware"]:
        accelerator = kb.get(accelerator_id)
        expected.update(link["interconnect"] for link in accelerator.data.get("links", []))
    marks = [g for g in seed_svg.iter(f"{SVG}g") if "mark" in (g.get("class") or "").split()]
    titles = " ".join(g.find(f"{SVG}title").text for g in marks)
    for link_id in expected:
        assert kb.get(link_id).title in titles, link_id
    assert "claim" in titles
    assert len([g for g in marks if g.find(f"{SVG}line") is not None]) < 3 * len(expected)


def test_seed_chart_draws_only_the_claims_at_its_lines_operating_point(
    seed_svg: ET.Element,
) -> None:
    titles = [t.text or "" for t in seed_svg.iter(f"{SVG}title")]
    claimed = {t.split(":")[0] for t in titles if t.startswith("claim ")}
    assert "claim b-star-tp8-alpha0" in claimed  # TP8 at the line rate: the held bindings
    assert "claim b-star-tp4-alpha0" not in claimed  # TP4 is not on the TP8 lines
    assert "claim b-star-tp2-alpha0" not in claimed


def test_seed_chart_draws_the_seeds_refuted_figure_as_an_erratum_never_as_a_claim(
    seed_svg: ET.Element, built_site: Path, repo_kb: KnowledgeBase
) -> None:
    kb = repo_kb
    seed = kb.get(SEED_FLOP)
    errata = {c["id"] for c in seed.data["claims"] if "erratum" in c}
    marks = [g for g in seed_svg.iter(f"{SVG}g") if "mark" in (g.get("class") or "").split()]
    circles = [g for g in marks if g.find(f"{SVG}circle") is not None]
    crosses = [g for g in marks if "mark-erratum" in (g.get("class") or "")]
    for g in circles:  # every circle is one of kb's own claims
        claim = g.find(f"{SVG}title").text.split(":")[0].removeprefix("claim ")
        assert claim not in errata, claim
    drawn = {g.find(f"{SVG}title").text.split(":")[0].removeprefix("claim ") for g in crosses}
    assert "seed-b-star-nvlink-full" in drawn and drawn <= errata
    label = "erratum: the source says 3318; kb computes 237"
    for g in crosses:
        assert g.find(f"{SVG}circle") is None and g.find(f"{SVG}path") is not None
    assert any(label in "".join(g.itertext()) for g in crosses)  # on the chart
    html = (built_site / f"records/{SEED_FLOP}.html").read_text(encoding="utf-8")
    figure = html[
        html.index('<figure class="chart"') : html.index(
            "</details>", html.index('<figure class="chart"')
        )
    ]
    legend = figure[figure.index('<ul class="legend">') : figure.index("</ul>")]
    assert label in legend  # in the legend
    table = figure[figure.index("Errata drawn") :]
    assert "seed-b-star-nvlink-full" in table and label in table  # and in the data table
    claims_table = figure[figure.index("Claims drawn") : figure.index("Errata drawn")]
    assert "3318" not in claims_table


def test_seed_chart_keeps_the_marks_only_errata_bind(
    seed_svg: ET.Element, repo_kb: KnowledgeBase
) -> None:
    """A field only an erratum binds still gets its rules: the binding itself holds.

    Of the seed's numeric B* claims, only its refuted figures (184 on one NVLink
    link, 232 on PCIe 4.0) read `W` from a link's `bandwidth.per_link`; that a
    single link's bandwidth is a per-rank bandwidth is not what kb refutes, so
    the per-link rules (PCIe among them) stay on the chart.
    """
    kb = repo_kb
    seed = kb.get(SEED_FLOP)

    def bound_fields(errata: bool) -> set[str]:
        return {
            spec.partition("#")[2] for c in seed.data["claims"]
            if ("erratum" in c) == errata and c.get("of") == "b_star_tp"
            and c.get("kind") == "numeric"
            for name, spec in c.get("bind", {}).items() if name == "W"
        }  # fmt: skip

    assert bound_fields(True) - bound_fields(False) == {"bandwidth.per_link"}
    titles = [t.text or "" for t in seed_svg.iter(f"{SVG}title")]
    per_link = [t for t in titles if ": bandwidth.per_link: " in t]
    assert any("PCI Express 4.0" in t for t in per_link), per_link
    assert any("PCI Express 5.0" in t for t in per_link), per_link


def test_every_flop_class_draws_its_chart_or_its_page_says_why(
    built_site: Path, repo_kb: KnowledgeBase
) -> None:
    from kb.sitegen.flop_chart import chart_or_reason

    kb = repo_kb
    flops = kb.of_kind("flop_class")
    drawn = []
    for record in flops:
        charts, reason = chart_or_reason(record, kb)
        html = (built_site / f"records/{record.id}.html").read_text(encoding="utf-8")
        section = re.search(r'<section id="charts".*?</section>', html, re.S)
        assert section, f"{record.id}: neither a chart nor a reason"
        if charts:
            assert reason == "" and "<svg" in section.group(0), record.id
            drawn.append(record.id)
        else:
            assert reason and "No chart: " in section.group(0), record.id
            assert "could not be computed" not in reason, (record.id, reason)  # a known cause
    assert "flops/dp-gradient-allreduce" in drawn  # it binds W, drawn over W (not G*BW_nic)
    assert len(drawn) >= 8


def test_a_chart_missing_a_binding_says_which(repo_copy: Path) -> None:
    """On its own load: kb keeps a record's typed view by its id for the run (kb.kinds), so
    the shared `repo_kb` would draw the unchanged record's chart for the changed one."""
    import dataclasses

    from kb.sitegen.flop_chart import chart_or_reason

    kb, _ = load(repo_copy / "records")
    record = kb.get("flops/dp-gradient-allreduce")
    claims = [dict(c) for c in record.data["claims"]]
    first = next(c for c in claims if c.get("of") == "threshold_many")
    first["bind"] = {k: v for k, v in first["bind"].items() if k != "C"}
    for claim in claims:
        if claim.get("of") == "threshold_many":
            claim["bind"] = first["bind"]
    changed = dataclasses.replace(record, data={**record.data, "claims": claims})
    charts, reason = chart_or_reason(changed, kb)
    assert charts == [] and "needs C" in reason and first["id"] in reason
