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
