"""Charts a reader can read: no two chart text boxes overlap; axes fitted to the data.

In chromium at 1280 px (file://; read in the one crawl of the site,
tests/site/crawl_fixtures.py), on the charts page, the pages with charts named below and
every other page the desktop crawl loads, every pair of text elements in one chart SVG
(ticks, axis titles, rule labels, erratum labels) has disjoint boxes. Log axes end at the 1-2-5 step
next to the data, not at the next decade.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kb.sitegen.charts import _padded
from tests.site.chromium import chromium
from tests.site.conftest import SEED_FLOP
from tests.site.crawl import Crawl

PAGES = (
    "charts/index.html",
    f"records/{SEED_FLOP}.html",
    "records/placements/tp-llama-3.1-70b-h100-tp4-vs-tp8.html",
    "records/flops/pipeline-bubble.html",
)
OVERLAPS = """() => {
  const out = [];
  document.querySelectorAll("figure.chart svg").forEach(svg => {
    const texts = [...svg.querySelectorAll("text")].filter(t => t.textContent.trim())
      .map(t => [t.textContent.trim(), t.getBoundingClientRect()]);
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
      const [a, r] = texts[i], [b, s] = texts[j];
      const w = Math.min(r.right, s.right) - Math.max(r.left, s.left);
      const h = Math.min(r.bottom, s.bottom) - Math.max(r.top, s.top);
      if (w > 1 && h > 1) out.push(svg.closest("figure").id + ": " + a + " | " + b);
    }
  });
  return out;
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as instance:
        yield instance


@pytest.mark.browser
@pytest.mark.parametrize("path", PAGES)
def test_no_two_chart_labels_overlap(desktop_crawl: Crawl, path: str) -> None:
    """Read in the crawl at desktop width (tests/site/crawl_fixtures.py `reads`)."""
    visit = desktop_crawl.desktop[path]
    assert visit.problems == []
    assert visit.reads["charts"] >= 1
    assert visit.reads["overlaps"] == []


@pytest.mark.browser
def test_no_two_chart_labels_overlap_on_any_page_the_crawl_loads(desktop_crawl: Crawl) -> None:
    """Every chart of every page the desktop crawl loads: the sample (every component, the
    largest page per template), every flop class and every calculator page."""
    charted = {path: v.reads for path, v in desktop_crawl.desktop.items() if v.reads["charts"]}
    assert set(PAGES) <= set(charted)
    assert [(path, read["overlaps"]) for path, read in charted.items() if read["overlaps"]] == []


@pytest.mark.browser
def test_the_overlap_check_can_fail(browser: Any, tmp_path: Path) -> None:
    html = tmp_path / "overlap.html"
    html.write_text(
        '<figure class="chart" id="c"><svg width="200" height="50">'
        '<text x="10" y="20">first label</text><text x="30" y="22">second</text>'
        "</svg></figure>",
        encoding="utf-8",
    )
    page = browser.new_page()
    page.goto(html.as_uri())
    assert page.evaluate(OVERLAPS) == ["c: first label | second"]
    page.close()


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([12.0, 1800.0], (10.0, 2000.0)),
        ([2.7, 3318.0], (2.0, 5000.0)),
        ([1.0, 100.0], (1.0, 100.0)),
    ],
)
def test_a_log_axis_ends_at_the_step_next_to_its_data(
    values: list[float], expected: tuple[float, float]
) -> None:
    low, high = _padded(values, log=True)
    assert (low, high) == pytest.approx(expected)
    assert low <= min(values) and high >= max(values)
