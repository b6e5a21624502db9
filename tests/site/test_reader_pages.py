"""What a reader sees first and can follow: verdicts, placements in full, links out, search."""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path


def page_text(site: Path, relative: str) -> str:
    raw = (site / relative).read_text(encoding="utf-8")
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", raw)).split())


def test_a_row_says_the_basis_of_the_figures_that_feed_it_on_the_site(built_site: Path) -> None:
    """The PCIe 5.0 all-reduce takes interconnects/pcie-5-x16's estimated latency (since issue
    39, session 15; it typed an unverified 3 us before), so its T_exposed row says estimated.
    A row fed by an unverified figure is held to saying so by the page data the template
    writes the badge from (tests/ledger/test_unverified_latency_rows.py)."""
    page = "records/placements/tp-llama-3.1-70b-nvswitch-vs-pcie.html"
    raw = (built_site / page).read_text()
    after = raw.split('id="option-pcie-5-point-to-point"')[1]
    row = re.search(r"<tr><td[^>]*>T_exposed</td>.*?</tr>", after)
    assert row and "basis-estimated" in row.group(0) and ">estimated<" in row.group(0)
    assert "basis-unverified" not in row.group(0)
    text = page_text(built_site, "records/placements/coherent-host-vs-two-hosts-8b.html")
    assert "128 messages x 3.6 µs + 524.3 kB / 50 GB/s (line rate, estimated)" in text
    assert "latency of interconnects/ethernet-400g-roce: tie at 78.34 µs" in text


def _index(site: Path) -> list[dict[str, object]]:
    import json

    script = (site / "search-index.js").read_text(encoding="utf-8")
    return json.loads(script[script.index("[") : script.rindex("]") + 1])  # type: ignore[no-any-return]


def test_the_search_index_holds_rendered_text_not_templates(
    built_site: Path, repo_copy: Path
) -> None:
    import yaml

    entries = {e["id"]: e for e in _index(built_site)}
    raw = yaml.safe_load(
        (repo_copy / "records/receipts/azure-nd-a100-v4-hbm-bandwidth.yaml").read_text()
    )
    assert "{" in raw["summary"]  # the record's summary is written with templates
    text = str(entries["receipts/azure-nd-a100-v4-hbm-bandwidth"]["text"])
    assert "{" not in text and "TB/s" in text
    assert not [i for i, e in entries.items() if re.search(r"\{[a-z_]+/[^}]*\}", str(e["text"]))]


def test_no_search_entry_holds_a_template_of_any_form(built_site: Path, repo_copy: Path) -> None:
    """Own-record `{#field}`, other records' `{id#field}` and `{claim:c}`: all shown as values."""
    import yaml

    from kb.prose.scan import templates

    entries = {e["id"]: e for e in _index(built_site)}
    raw = yaml.safe_load(
        (repo_copy / "records/receipts/nemo-llama-2-7b-h100-tp-latency.yaml").read_text()
    )
    assert "{#results.0.input_tokens}" in raw["summary"]  # an own-record template
    text = str(entries["receipts/nemo-llama-2-7b-h100-tp-latency"]["text"])
    assert "(128 prompt tokens, 20 generated)" in text
    found = {
        record_id: [t.raw for t in templates(str(entry[key]))]
        for record_id, entry in entries.items()
        for key in ("text", "figures", "terms")
        if templates(str(entry[key]))
    }
    assert found == {}
    assert not [i for i, e in entries.items() if "{{" in str(e) or "}}" in str(e)]


def test_the_search_index_holds_figures_in_both_units_and_terms(built_site: Path) -> None:
    entries = {e["id"]: e for e in _index(built_site)}
    h100 = entries["hardware/nvidia-h100-sxm"]
    assert "3350 GB/s" in str(h100["figures"]) and "3.35 TB/s" in str(h100["figures"])
    assert "HBM3" in str(h100["terms"]).split()
    assert "HBM3e" in str(entries["hardware/nvidia-h200-sxm"]["terms"]).split()


def _raw(site: Path, relative: str) -> str:
    return (site / relative).read_text(encoding="utf-8")


def test_a_record_page_opens_with_verdict_summary_and_key_results(built_site: Path) -> None:
    from tests.site.conftest import SEED_FLOP

    html = _raw(built_site, f"records/{SEED_FLOP}.html")
    order = [  # issue 38: the answer first; calculator, then derivations and claims; errata apart
        html.index('id="verdict"'),
        html.index('id="answer"'),
        html.index('class="lede"'),
        html.index('id="key-results"'),
        html.index('id="calculator"'),
        html.index('id="equations"'),
        html.index('<section id="errata"'),
        html.index('id="fields"'),
        html.index('id="history"'),
    ]
    assert order == sorted(order)
    assert '<details class="fields-details"' in html and '<details class="history-details"' in html


def test_the_key_results_of_an_accelerator_carry_units_and_provenance(built_site: Path) -> None:
    html = _raw(built_site, "records/hardware/nvidia-h100-sxm.html")
    block = html.split('id="key-results"', 1)[1].split("</section>", 1)[0]
    text = " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", block)).split())
    assert "Memory bandwidth 3350 GB/s vendor-spec source" in text
    assert "BF16 dense 989 TFLOP/s" in text


def test_a_placement_page_opens_with_each_options_total(built_site: Path) -> None:
    text = page_text(built_site, "records/placements/coherent-host-vs-two-hosts-8b.html")
    head = text.split("Key results", 1)[1].split("Placement-tax ledger", 1)[0]
    assert "T_total, one-large-host (reference) 20.07 ms" in head
    assert "T_total, two-hosts (candidate) 10.51 ms" in head and "T_r/T_c" in head
    assert "Speed per step, two-hosts against one-large-host" in head and "\u00d7 faster" in head


def test_predicted_vs_measured_comes_before_the_equations(built_site: Path) -> None:
    html = _raw(built_site, "records/flops/decode-kv-cache-read.html")
    assert html.count('id="predictions"') == 1
    assert html.index('id="key-results"') < html.index('id="predictions"')
    assert html.index('id="predictions"') < html.index('id="equations"')


def test_errata_show_the_erroneous_statement_and_link_to_it(built_site: Path) -> None:
    from tests.site.conftest import SEED_FLOP

    html = _raw(built_site, f"records/{SEED_FLOP}.html")
    block = html.split('id="errata"', 1)[1].split("</ul>", 1)[0]
    assert 'href="#f-scales_with.0.erratum"' in block and 'id="f-scales_with.0.erratum"' in html
    text = " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", block)).split())
    assert "the cost is LINEAR in B" in text and "erratum seed-comm-linear-in-b" in text


def test_infinity_units_and_starred_names_render_for_readers(built_site: Path) -> None:
    from tests.site.conftest import SEED_FLOP

    html = _raw(built_site, f"records/{SEED_FLOP}.html")
    assert "[4, ∞)" in html and "&#39;oo&#39;" not in html
    assert "<mi>B^" not in html  # B^*_k is a sub- and superscript, not literal text
    assert "<msubsup><mi>B</mi><mi>k</mi><mo>*</mo></msubsup>" in html
    assert 'class="unit">µs<' in _raw(built_site, "records/flops/allreduce-latency-floor.html")


def test_every_row_of_the_hardware_comparison_shows_one_unit(built_site: Path) -> None:
    raw = _raw(built_site, "compare/hardware.html")
    rows = re.findall(r'<tr><th scope="row">([^<]*)</th>(.*?)</tr>', raw, re.S)
    checked = 0
    for label, cells in rows:
        units = set(re.findall(r'<span class="unit">([^<]*)</span>', cells))
        if units:
            assert len(units) == 1 and label.endswith(f"({units.pop()})"), (label, units)
            checked += 1
    assert checked >= 8


def test_a_converted_cell_is_the_exact_figure_in_the_row_unit() -> None:
    from kb.sitegen.tables import column_unit, in_unit

    values = [{"value": 3.35, "unit": "TB/s"}, {"value": 4.8, "unit": "TB/s"}]
    values.append({"value": 900, "unit": "GB/s", "basis": "vendor-spec"})
    assert column_unit(values) == "TB/s"
    shown = in_unit(values[2], "TB/s")
    assert shown["value"] == "0.9" and shown["unit"] == "TB/s" and shown["basis"] == "vendor-spec"
    assert shown["authored as"] == "900 GB/s"
    assert in_unit({"value": 80, "unit": "GiB"}, "GB")["value"] == "85.9"
    assert in_unit({"value": 700, "unit": "W"}, "TB/s") == {"value": 700, "unit": "W"}


def test_the_index_tables_name_one_unit_per_column(built_site: Path) -> None:
    raw = _raw(built_site, "records/hardware/index.html")
    assert '<th scope="col">Memory bandwidth (TB/s)</th>' in raw or "Memory bandwidth (GB/s)" in raw
    assert 'class="table-filter"' in raw and "static/sort.js" in raw
