"""Search in a real browser, opened from file:// (no server, no network): it finds what a
reader types, with prefixes, typos, figures and units, and filters by kind."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.site.chromium import chromium

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def tab(built_site: Path) -> Iterator[object]:
    with chromium() as browser:
        context = browser.new_context()
        context.route("http*://**", lambda route: route.abort())  # offline: no network at all
        page = context.new_page()
        page.problems = []
        page.on("pageerror", lambda e: page.problems.append(str(e)))
        page.goto((built_site / "search.html").as_uri())
        yield page
        assert not page.problems, page.problems


def ids(tab: object, query: str) -> list[str]:
    return tab.evaluate("q => kbSearch(q).map(p => p[1].id)", query)  # type: ignore[attr-defined]


def test_a_typo_finds_the_nvlink_records(tab: object) -> None:
    found = ids(tab, "nvlnk")
    assert {"interconnects/nvlink-4", "interconnects/nvlink-5"} <= set(found), found[:10]
    assert "nvlink" in found[0], found[:5]  # an NVLink interconnect or a class named for it


def test_a_figure_finds_the_h100(tab: object) -> None:
    found = ids(tab, "3350")
    assert "hardware/nvidia-h100-sxm" in found[:3], found[:10]
    assert "hardware/nvidia-h100-sxm" in ids(tab, "3.35 TB/s")  # its readable unit


def test_prefixes_plurals_and_memory_types(tab: object) -> None:
    assert "interconnects/nvlink-4" in ids(tab, "nvl")
    assert ids(tab, "bandwidths")  # one letter off a word of the index
    hbm3e = ids(tab, "HBM3e")
    assert "hardware/nvidia-h200-sxm" in hbm3e  # HBM3e memory
    if "hardware/nvidia-h100-sxm" in hbm3e:  # HBM3, one typo away: ranked below every HBM3e
        h100 = hbm3e.index("hardware/nvidia-h100-sxm")
        assert hbm3e.index("hardware/nvidia-h200-sxm") < h100


def test_numbers_are_never_matched_by_typo(tab: object) -> None:
    assert "hardware/nvidia-h100-sxm" not in ids(tab, "3351")


def test_the_page_shows_results_and_filters_by_kind(tab: object) -> None:
    page = tab
    page.fill("#q", "nvlink")  # type: ignore[attr-defined]
    everything = page.locator("#search-results li").count()  # type: ignore[attr-defined]
    page.check('input[name=kind][value="interconnect"]')  # type: ignore[attr-defined]
    links = page.locator("#search-results li > a")  # type: ignore[attr-defined]
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert hrefs and all(h.startswith("records/interconnects/") for h in hrefs), hrefs
    assert len(hrefs) < everything
    assert "results for" in page.inner_text("#search-status")  # type: ignore[attr-defined]
    page.uncheck('input[name=kind][value="interconnect"]')  # type: ignore[attr-defined]


def test_the_hardware_comparison_filters_columns_and_rows(tab: object, built_site: Path) -> None:
    page = tab
    page.goto((built_site / "compare/hardware.html").as_uri())  # type: ignore[attr-defined]
    page.fill("#filter-columns", "amd")  # type: ignore[attr-defined]
    heads = page.locator("#compare-table thead th:not([hidden]) a")  # type: ignore[attr-defined]
    names = [heads.nth(i).inner_text() for i in range(heads.count())]
    assert names and all("AMD" in n for n in names), names
    page.fill("#filter-fields", "bandwidth")  # type: ignore[attr-defined]
    rows = page.locator("#compare-table tbody tr:not([hidden]) th")  # type: ignore[attr-defined]
    labels = [rows.nth(i).inner_text() for i in range(rows.count())]
    assert labels and all("bandwidth" in label.lower() for label in labels), labels
    assert "of" in page.inner_text("#filter-fields-status")  # type: ignore[attr-defined]


def test_an_index_table_filters_rows(tab: object, built_site: Path) -> None:
    page = tab
    page.goto((built_site / "records/interconnects/index.html").as_uri())  # type: ignore[attr-defined]
    page.fill("#filter-rows", "nvlink")  # type: ignore[attr-defined]
    rows = page.locator("#kind-table tbody tr:not([hidden])")  # type: ignore[attr-defined]
    assert rows.count() >= 3
    assert all("nvlink" in rows.nth(i).inner_text().lower() for i in range(rows.count()))
