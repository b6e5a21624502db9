"""What the pages say: equation states, claims, the hardware table, index sort keys, methodology."""

from __future__ import annotations

import re
from pathlib import Path

from tests.site.conftest import SEED_FLOP, load


def page(site: Path, relative: str) -> str:
    return (site / relative).read_text(encoding="utf-8")


def test_seed_page_shows_equation_states_and_claimed_vs_computed(built_site: Path) -> None:
    html = page(built_site, f"records/{SEED_FLOP}.html")
    block = html[html.index('id="eq-b_star"') :]
    block = block[: block.index("</div>\n</div>") if "</div>\n</div>" in block else 4000]
    assert 'class="state state-consistent"' in block and 'alttext="B_star = ' in block
    rows = re.findall(r'<tr id="claim-[^"]+">(.*?)</tr>', html, re.S)
    assert rows, "no claims table"
    assert any("b-star-tp8-alpha0" in row and "state-recomputed" in row for row in rows)
    errata = re.findall(r'<tr id="claim-[^"]+" class="claim-erratum">(.*?)</tr>', html, re.S)
    full = next(row for row in errata if "seed-b-star-nvlink-full" in row)
    assert "state-erratum" in full and "the source says 3318; kb computes 237.03" in full
    assert not any("3318" in row and "state-recomputed" in row for row in rows + errata)


def test_hardware_table_has_every_accelerator_side_by_side(
    built_site: Path, repo_copy: Path
) -> None:
    kb, _ = load(repo_copy / "records")
    html = page(built_site, "compare/hardware.html")
    heads = re.findall(r'<th scope="col"><a href="\.\./records/hardware/([^"]+)\.html">', html)
    assert sorted(f"hardware/{h}" for h in heads) == [r.id for r in kb.of_kind("accelerator")]
    assert "Memory bandwidth (spec)" in html and "basis-vendor-spec" in html


def test_index_sort_keys_are_numbers_in_base_units(built_site: Path, repo_copy: Path) -> None:
    kb, _ = load(repo_copy / "records")
    h100 = kb.get("hardware/nvidia-h100-sxm")
    bandwidth = h100.get("memory.bandwidth")
    scale = {"GB/s": 1e9, "TB/s": 1e12}[bandwidth["unit"]]
    html = page(built_site, "records/hardware/index.html")
    row = html[html.index('data-sort="hardware/nvidia-h100-sxm"') :]
    row = row[: row.index("</tr>")]
    assert f'data-sort="{float(bandwidth["value"]) * scale!r}"' in row


def test_methodology_page_prints_the_seed_equations_and_the_strategy_table(
    built_site: Path,
) -> None:
    html = page(built_site, "methodology.html")
    for name in ("Traw", "Texposed", "Ttotal"):
        assert f'alttext="{name} = ' in html
    assert html.count("<tr>") >= 6 and "Sequence/context parallel" in html
    assert "<h1>Compute-placement tax</h1>" in html


def test_prose_inside_claims_shows_template_values_not_braces(built_site: Path) -> None:
    html = page(built_site, f"records/{SEED_FLOP}.html")
    assert "{claim:" not in html  # erratum reasons and claim notes are templated prose
    row = html[html.index('id="claim-seed-tp-free"') :]
    reason = row[row.index('class="erratum">') : row.index("</p>", row.index('class="erratum">'))]
    target = "../../records/flops/sched-tensor-parallel-crossover.html#claim-comm-compute-tp8"
    # the claim's value at its own round step (w10-suite: claim templates; was 1.2455023)
    assert f'href="{target}"' in reason and '<span class="value">1.25</span>' in reason
