"""Templates on the site: a templated number follows its figure, linked, and is escaped.

The receipt `receipts/azure-nd-h100-v5-hbm-bandwidth` states its spec as
`{hardware/nvidia-h100-sxm#memory.bandwidth|TB/s}`: editing H100's HBM
bandwidth in a copy of the records and rebuilding must change the number on
the receipt's page (and re-render it), with no other edit.

Each test is about one receipt's page, and what that page shows of other records comes
from the records it references, so per push each builds the receipt's reference closure
(tests/sample.py's, 45 records) rather than the 446 shipped ones; each test asserts the
page shows the templated value it is about before editing. `KB_FULL=1` builds the
shipped records.
"""

from __future__ import annotations

import re
from pathlib import Path

from kb.sitegen.build import build
from tests.site.conftest import load
from tests.site.sample_site import seeded_records

HOT = "records/hardware/nvidia-h100-sxm.yaml"
PAGE = "records/receipts/azure-nd-h100-v5-hbm-bandwidth.html"
SPEC = re.compile(
    r'<a class="templated basis-vendor-spec" href="../../records/hardware/'
    r'nvidia-h100-sxm.html#f-memory.bandwidth" title="[^"]*"><span class="value">'
    r'([^<]*)</span> <span class="unit">TB/s</span></a> spec'
)


def lede(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    found = re.search(r'<p class="lede">(.*?)</p>', text, re.S)
    assert found, "the page has no summary"
    return found.group(1)


def receipt_tree(root: Path, stores: Path, page: str) -> Path:
    """The closure of the receipt shown at `page` (KB_FULL=1: every shipped record) at `root`."""
    receipt = page.removeprefix("records/").removesuffix(".html")
    seeded_records(root, stores, roots=(receipt,))
    return root


def test_a_templated_number_changes_when_its_figure_does(
    tmp_path: Path, shipped_stores: Path
) -> None:
    root = receipt_tree(tmp_path / "repo", shipped_stores, PAGE)
    out = tmp_path / "_site"
    kb, _ = load(root / "records")
    build(kb, out)
    before = SPEC.search(lede(out / PAGE))
    assert before and before.group(1) == "3.35", lede(out / PAGE)
    hot = root / HOT
    text = hot.read_text(encoding="utf-8")
    hot.write_text(
        text.replace("bandwidth: {value: 3350,", "bandwidth: {value: 3351,", 1), encoding="utf-8"
    )
    kb, _ = load(root / "records")
    report = build(kb, out)
    assert PAGE in report.rendered
    after = SPEC.search(lede(out / PAGE))
    assert after and after.group(1) == "3.351", lede(out / PAGE)


def test_template_parts_and_quotations_are_escaped(tmp_path: Path, shipped_stores: Path) -> None:
    shown_at = "records/receipts/azure-nd-h100-v5-host-device-copy.html"
    root = receipt_tree(tmp_path / "repo", shipped_stores, shown_at)
    target = root / "records" / "receipts" / "azure-nd-h100-v5-host-device-copy.yaml"
    text = target.read_text(encoding="utf-8")
    hostile = (
        'summary: "<i>x</i> {#results.0.value} \\"<b>quoted</b>\\" {#results.0.value|<script>}"'
    )
    target.write_text(
        re.sub(r"summary: >-\n(  .*\n)+", hostile + "\n", text, count=1), encoding="utf-8"
    )
    kb, _ = load(root / "records")
    out = tmp_path / "_site"
    build(kb, out)
    shown = lede(out / shown_at)
    assert "<script>" not in shown and "<b>" not in shown and "<i>" not in shown
    assert "&lt;i&gt;x&lt;/i&gt;" in shown
    assert '<q class="verbatim">&#34;&lt;b&gt;quoted&lt;/b&gt;&#34;</q>' in shown
    assert '<span class="value">51</span> <span class="unit">GB/s</span>' in shown
    assert '<span class="broken-ref"' in shown and "{#results.0.value|&lt;script&gt;}" in shown
