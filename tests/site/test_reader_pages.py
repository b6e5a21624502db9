"""What a reader sees first and can follow: verdicts, placements in full, links out, search."""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path


def page_text(site: Path, relative: str) -> str:
    raw = (site / relative).read_text(encoding="utf-8")
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", raw)).split())


def test_a_row_fed_by_an_unverified_figure_says_unverified_on_the_site(built_site: Path) -> None:
    """The 8B pair's all-reduce uses the 400GbE record's unverified 10 us latency."""
    raw = (built_site / "records/placements/coherent-host-vs-two-hosts-8b.html").read_text()
    row = re.search(r"<tr><td>T_exposed</td>.*?</tr>", raw.split('id="option-two-hosts"')[1])
    assert row and "basis-unverified" in row.group(0) and ">unverified<" in row.group(0)
    text = page_text(built_site, "records/placements/coherent-host-vs-two-hosts-8b.html")
    assert "128 messages x 10 µs + 524.3 kB / 50 GB/s (line rate, unverified)" in text
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


def test_the_search_index_holds_figures_in_both_units_and_terms(built_site: Path) -> None:
    entries = {e["id"]: e for e in _index(built_site)}
    h100 = entries["hardware/nvidia-h100-sxm"]
    assert "3350 GB/s" in str(h100["figures"]) and "3.35 TB/s" in str(h100["figures"])
    assert "HBM3" in str(h100["terms"]).split()
    assert "HBM3e" in str(entries["hardware/nvidia-h200-sxm"]["terms"]).split()
