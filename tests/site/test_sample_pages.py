"""The crawl's sample of pages holds what the whole site holds (tests/site/sample_pages.py).

Per push: on the built site, the premise of the sample (every template, every feature a
template's pages show and the extreme of each measure per template are in the sample);
on small sites, that a fault put on a page outside the sample moves that page into it,
and that the crawl of the sample then finds it in chromium. With KB_FULL=1: on the built
site as built and with faults put on pages outside its sample, the crawl of the sample
finds what the crawl of every page finds. One limit, measured there: a cell whose text
overflows is found on the template's page with the longest token in a cell, not on every
page with one (the shipped site: 4 of 11 such flop pages per push, the fault on each
template that has it); tests/site/test_phone_tables.py lists the 11.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.site.crawl import Crawl, crawl_site, full_run
from tests.site.crawl_fixtures import PROBE, crawled, named
from tests.site.sample_pages import (
    EXTREMES,
    PageFacts,
    cached_facts,
    choose,
    chosen,
    page_facts,
    site_facts,
)
from tests.site.test_phone_and_a11y import AUDITS, HELD, SHOTS, axe_source

HEAD = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{0}</title>'
    '<meta name="viewport" content="width=device-width, initial-scale=1">'
    '<link rel="icon" href="data:,"></head>'
    '<body data-template="{1}"><main><h1>{0}</h1>'
)
ROW = "<tr><td>cell</td><td>cell</td></tr>"
# A token wider than a page: the probe pages link no stylesheet, so nothing breaks it.
WIDE = "<table><tr><td>" + "W" * 400 + "</td></tr></table>"  # longer than any shipped


def _write(site: Path, name: str, template: str, body: str) -> Path:
    page = site / name
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(HEAD.format(name, template) + body + "</main></body></html>", "utf-8")
    return page


def _by_template(facts: list[PageFacts]) -> dict[str, list[PageFacts]]:
    found: dict[str, list[PageFacts]] = {}
    for fact in facts:
        found.setdefault(fact.template, []).append(fact)
    return found


def test_the_sample_holds_every_template_feature_and_extreme_of_the_built_site(
    built_site: Path,
) -> None:
    """The premise of the per-push crawl, on the site it crawls."""
    every = cached_facts(built_site)  # as the crawl read them (one read per process)
    sampled = {p.relative_to(built_site).as_posix() for p in chosen(built_site)}
    everywhere = _by_template(every)
    in_sample = _by_template([f for f in every if f.path in sampled])
    assert "(none)" not in everywhere  # every page names the template that wrote it
    assert {"record.html", "home.html", "kind_index.html", "search.html"} <= set(everywhere)
    assert sorted(in_sample) == sorted(everywhere)
    for template, pages in everywhere.items():
        shown = set().union(*(f.features for f in in_sample[template]))
        assert set().union(*(f.features for f in pages)) - shown == set(), template
        for name in EXTREMES:
            top = max(f.extreme(name) for f in pages)
            assert max(f.extreme(name) for f in in_sample[template]) == top, (template, name)
    # What the sample is for: a fraction of the pages (a few per template and component).
    assert len(sampled) * 5 < len(every), (len(sampled), len(every))
    # The facts are read, not assumed: the components the tests know of are seen.
    features = set().union(*(f.features for f in every))
    assert {"figure.chart", "math", "script:calc.js", "table.claims", "kind:flop class"} <= (
        features
    ), sorted(features)[:40]


def test_the_crawl_loads_the_sample_and_the_tests_named_pages(built_site: Path) -> None:
    pages = {p.relative_to(built_site).as_posix() for p in crawled(built_site)}
    assert {PROBE, *SHOTS.values()} <= pages
    if not full_run():
        from tests.site.test_phone_tables import PAGES  # read at phone width, not audited

        sample = chosen(built_site, named(built_site))
        assert pages == {p.relative_to(built_site).as_posix() for p in sample} | set(PAGES)


def test_a_page_with_a_new_extreme_or_component_joins_the_sample(tmp_path: Path) -> None:
    """A fault on a page outside the sample changes the facts that pick it."""
    for i in range(6):
        _write(tmp_path, f"p{i}.html", "t.html", f"<p>page {i}</p><table>{ROW * 3}</table>")
    _write(tmp_path, "other.html", "u.html", "<p>another template</p>")
    base = choose(site_facts(tmp_path))
    assert base == ["other.html", "p0.html"]  # one per template: nothing tells the rest apart
    probes = {
        "p3.html": WIDE,  # the longest unbroken token
        "p4.html": f"<table>{ROW * 40}</table>",  # the longest table
        "p5.html": '<p class="new-component">x</p>',  # a class no other page shows
        "p2.html": '<script src="boom.js"></script>',  # a script no other page runs
    }
    for name, body in probes.items():
        _write(tmp_path, name, "t.html", body)
        assert name in choose(site_facts(tmp_path)), name
    facts = page_facts(tmp_path, tmp_path / "p3.html")
    assert facts.token == facts.cell_token == 400 and facts.template == "t.html"
    # A token inside a scroll region does not widen the page: not an extreme.
    _write(tmp_path, "p1.html", "t.html", "<pre>" + "W" * 500 + "</pre>")
    assert page_facts(tmp_path, tmp_path / "p1.html").token == len("p1.html")  # its <h1>


def _faults(crawl: Crawl) -> set[str]:
    found = set()
    for page, visit in crawl.phone.items():
        assert visit.widest is not None
        scroll, width, _ = visit.widest
        if scroll > width:
            found.add(f"{page}: scrolls sideways")
        found.update(f"{page}: {problem}" for problem in visit.problems)
        found.update(f"{page}: {cell}" for cell in visit.reads.get("clipped", []))
    return found


def _phone(site: Path, pages: list[Path]) -> set[str]:
    """What the crawl finds at phone width on `pages`: sideways scrolling, what went wrong
    while each loaded, and table cells whose content overflows (test_phone_tables.CLIPPED)."""
    from tests.site.test_phone_tables import CLIPPED

    crawl = crawl_site(
        site,
        [],
        [],
        axe_source=axe_source(),
        audits=AUDITS,
        held=HELD,
        first_screen="",
        first_screen_pages=[],
        pages=pages,
        reads={"phone": {"clipped": CLIPPED}},
        widths=("phone",),
    )
    return _faults(crawl)


@pytest.mark.browser
def test_the_crawl_of_the_sample_finds_a_fault_put_on_a_page_outside_it(tmp_path: Path) -> None:
    """Per push, a probe: a wide token and a console error, each on a page of a template
    that the sample would not have loaded; the sampled crawl finds both."""
    for i in range(5):
        _write(tmp_path, f"p{i}.html", "t.html", f"<p>page {i}</p>")
    (tmp_path / "boom.js").write_text('console.error("boom");', "utf-8")
    assert choose(site_facts(tmp_path)) == ["p0.html"]
    _write(tmp_path, "p3.html", "t.html", WIDE)
    _write(tmp_path, "p4.html", "t.html", '<script src="boom.js"></script>')
    pages = [tmp_path / name for name in choose(site_facts(tmp_path))]
    assert [p.name for p in pages] == ["p0.html", "p3.html", "p4.html"]
    faults = _phone(tmp_path, pages)
    assert faults == _phone(tmp_path, sorted(tmp_path.glob("*.html")))
    assert "p3.html: scrolls sideways" in faults
    assert any(f.startswith("p4.html: console: boom") for f in faults), faults


def _kinds(faults: set[str], site: Path) -> set[str]:
    """Faults by kind: a cell that overflows named by its template (the sample holds the
    template's longest token in a cell, not every page with a long one); the rest by page."""
    template = {fact.path: fact.template for fact in site_facts(site)}
    return {
        f"{template[f.split(': ', 1)[0]]}: a cell overflows" if ": overflows: " in f else f
        for f in faults
    }


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not full_run(), reason="every page of the built site: KB_FULL=1")
def test_the_sampled_and_the_full_crawl_find_the_same_faults(
    built_site: Path, tmp_path: Path
) -> None:
    """On the built site, and on a copy with three faults each put on a page outside the
    sample (a long token in a table cell, an element wider than a phone, a script that logs
    an error): the same faults, sampled or not (a cell that overflows: the same templates)."""
    every = sorted(built_site.rglob("*.html"))
    shipped_sample, shipped_full = _phone(built_site, chosen(built_site)), _phone(built_site, every)
    print("\nshipped, sampled:", sorted(shipped_sample), "\nshipped, full:", sorted(shipped_full))
    assert _kinds(shipped_sample, built_site) == _kinds(shipped_full, built_site)

    broken = tmp_path / "site"
    shutil.copytree(built_site, broken)
    before = {broken / p.relative_to(built_site) for p in chosen(built_site)}
    outside = [p for p in sorted(broken.glob("records/*/*.html")) if p not in before]
    # The longest token in a card table's cell beside an element wider than the cell (the
    # token alone no longer overflows: a cell breaks a token wider than itself), an element
    # wider than a phone, a script that logs an error: each on a page outside the sample.
    token, wide, noisy = outside[0], outside[len(outside) // 3], outside[2 * len(outside) // 3]
    (broken / "static" / "boom.js").write_text('console.error("boom");', "utf-8")
    faults = {
        token: '<table class="claims"><tbody><tr><td>a</td><td>' + "W" * 400 + '<svg width="600" '
        'height="8" aria-hidden="true"></svg></td></tr></tbody></table>',  # wider than its cell
        wide: '<svg width="1200" height="8" aria-hidden="true"></svg>',
        noisy: '<script src="../../static/boom.js"></script>',
    }
    for page, fault in faults.items():
        page.write_text(page.read_text("utf-8").replace("</main>", fault + "</main>", 1), "utf-8")
    picked = [broken / path for path in choose(site_facts(broken))]  # read afresh
    assert set(faults) <= set(picked), sorted(set(faults) - set(picked))
    sampled = _phone(broken, picked)
    full = _phone(broken, sorted(broken.rglob("*.html")))
    assert _kinds(sampled, broken) == _kinds(full, broken)
    relative = {page: page.relative_to(broken).as_posix() for page in faults}
    for found in (sampled, full):
        assert any(f.startswith(f"{relative[token]}: overflows: W") for f in found), found
        assert f"{relative[wide]}: scrolls sideways" in found, found
        assert any(f.startswith(f"{relative[noisy]}: console: boom") for f in found), found
