"""The one crawl of the built site per run (tests/site/crawl.py), on its sample of pages.

`site_crawl` visits the sample (tests/site/sample_pages.py: per template, the pages at
each data extreme and a cover of every component; every page with KB_FULL=1) at phone
width over HTTP and at desktop width from file://, with axe at both widths; the pages
of SHOTS in the dark palette; and the pages the layout tests name, without axe
(`crawled`, `loaded`). Each calculator page's load is watched by
tests/site/test_calculator_browser.py, which loads every one (calc.js runs on each
page's own data).
`phone_crawl` and `desktop_crawl` are the same record, named for what their tests read;
their tests are kept on one xdist worker (tests/site/conftest.py's `SITE_GROUP`).

With KB_FULL=1 every page is visited at phone width, axe audits the sample and the
pages it audited before the sample (`full_audited`: every top-level page, flop class and
placement, three of every other kind) and every flop class's first screen is read, so the
full run holds what the crawl held before.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.site.crawl import Crawl, Shots, crawl_site, full_run
from tests.site.sample_pages import chosen, sample

PROBE = "records/flops/xss-probe.html"  # the hostile record (tests/site/conftest.py)


def _pages(site: Path, relatives: list[str]) -> list[Path]:
    return sorted({site / relative for relative in relatives if (site / relative).is_file()})


def named(site: Path) -> list[Path]:
    """The pages the tests name for the audits: the dark audit's pages (SHOTS), the probe,
    the planner's pages whose audits test_explorer_browser.py reads (AUDITED)."""
    from tests.site import test_explorer_browser as planner
    from tests.site import test_phone_and_a11y as a11y

    return _pages(site, [*a11y.SHOTS.values(), PROBE, *planner.AUDITED])


def reads() -> dict[str, dict[str, str]]:
    """What the crawl reads on each page it visits, per width, for the layout tests: table
    cells and cards at phone width (test_phone_tables.py), chart labels at desktop width
    (test_chart_labels.py) and, on the seed alone (null elsewhere), its cards
    (test_phone_tables.py) and its first screen's B* grid, caption and verdict
    (test_answer_first.py): read in the crawl's visit, not in a load of their own."""
    from tests.site import test_answer_first as first
    from tests.site import test_chart_labels as labels
    from tests.site import test_phone_tables as tables
    from tests.site.conftest import SEED_FLOP

    cards = f"({tables.CARD_BOXES})({json.dumps(tables.CARDS)})"
    charts = "() => document.querySelectorAll('figure.chart svg').length"
    path = json.dumps(f"/records/{SEED_FLOP}.html")
    seed = f"""() => !location.pathname.endsWith({path}) ? null : {{
  cards: {cards}, grid: ({first.SEED_GRID})(),
  caption: document.querySelector("#answer caption").innerText,
  verdict: document.querySelector("#verdict").innerText}}"""
    return {
        "phone": {"clipped": tables.CLIPPED, "wrapped": tables.WRAPPED, "cards": f"() => {cards}"},
        "desktop": {"overlaps": labels.OVERLAPS, "charts": charts, "seed": seed},
    }


def crawled(site: Path) -> list[Path]:
    """The pages the crawl loads at phone width: the sample (every page with KB_FULL=1) and
    the pages whose tables test_phone_tables.py names (PAGES; not audited)."""
    from tests.site import test_phone_tables as tables

    return sorted(set(sample(site, named(site))) | set(_pages(site, list(tables.PAGES))))


def full_audited(site: Path) -> list[Path]:
    """The pages axe audited before the sample (with KB_FULL=1 it still does): every top-level
    page, every flop class and placement, three of every other kind and shape of page."""
    shapes: dict[tuple[str, int, bool], list[Path]] = {}
    for page in sorted(site.rglob("*.html")):
        parts = page.relative_to(site).parts
        if parts[0] != "records":
            shape = (parts[0], len(parts), page.name == "index.html")
            shapes.setdefault(shape if len(parts) > 1 else (parts[0], 1, False), []).append(page)
    pages = sorted(page for group in shapes.values() for page in group[:3])
    for kind in sorted(p for p in (site / "records").iterdir() if p.is_dir()):
        records = sorted(kind.glob("*.html"))
        pages += records if kind.name in ("flops", "placements") else records[:3]
    return pages


def audited(site: Path) -> list[Path]:
    """The pages axe audits at both widths: the sample (and, with KB_FULL=1, `full_audited`)."""
    pages = set(chosen(site, named(site)))
    return sorted(pages | set(full_audited(site))) if full_run() else sorted(pages)


def loaded(site: Path) -> list[Path]:
    """The pages the crawl loads at desktop width without axe (when not audited): the pages
    whose charts test_chart_labels.py names (PAGES); with KB_FULL=1 also every flop class
    (its first screen: tests/site/test_answer_first.py)."""
    from tests.site import test_chart_labels as labels
    from tests.site.test_answer_first import _flop_pages

    flops = _flop_pages(site) if full_run() else []
    return sorted(set(_pages(site, list(labels.PAGES))) | set(flops))


def shots(folder: Path) -> Shots:
    """The screenshots of SHOTS at both widths (test_phone_and_a11y.py): the first screen per
    push; the whole page with KB_FULL=1 or when a person asks (KB_SCREENSHOTS=folder)."""
    from tests.site import test_phone_and_a11y as a11y

    wanted = os.environ.get("KB_SCREENSHOTS")
    target = Path(wanted) if wanted else folder
    target.mkdir(parents=True, exist_ok=True)
    pages = {relative: name for name, relative in a11y.SHOTS.items()}
    return Shots(target, pages, whole=bool(wanted) or full_run())


def _crawl(site: Path, folder: Path) -> Crawl:
    """`site` crawled at both widths (tests/site/crawl.py), in the worker's shared browser.

    The pages and axe's options are the tests' own (test_phone_and_a11y, test_answer_first).
    """
    from tests.site import test_answer_first as first
    from tests.site import test_phone_and_a11y as a11y

    pages = crawled(site)
    return crawl_site(
        site,
        audited(site),
        [site / relative for relative in a11y.SHOTS.values()],
        axe_source=a11y.axe_source(),
        audits=a11y.AUDITS,
        held=a11y.HELD,
        first_screen=first.FIRST_SCREEN,
        first_screen_pages=first._flop_pages(site),
        pages=pages,
        loaded=loaded(site),
        reads=reads(),
        shots=shots(folder),
    )


@pytest.fixture(scope="session")
def site_crawl(built_site: Path, tmp_path_factory: pytest.TempPathFactory) -> Crawl:
    """The sample of `built_site` at both widths, once a run (its tests share one worker)."""
    return _crawl(built_site, tmp_path_factory.mktemp("screenshots"))


@pytest.fixture(scope="session")
def phone_crawl(site_crawl: Crawl) -> Crawl:
    """`site_crawl`, read at phone width."""
    return site_crawl


@pytest.fixture(scope="session")
def desktop_crawl(site_crawl: Crawl) -> Crawl:
    """`site_crawl`, read at desktop width, light and dark."""
    return site_crawl
