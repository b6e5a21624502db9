"""Colour contrast on one element per style group finds what it finds on every element.

The crawl's axe audits (tests/site/crawl.py) run colour contrast on one element of each
group of text-bearing elements with the same computed text and background styles
(crawl.STYLE_GROUPS), not on every element: on the seed flop class that is ~3 CPU-s
instead of ~12. The argument: axe's contrast verdict on an element is a function of the
computed values the grouping reads (colour, size, weight, shadow; the backgrounds,
opacity, filters, clipping, stacking and visibility of it and its ancestors), so equal
values give equal verdicts, on any page (a group decided on one page of the crawl is not
checked again on the next: crawl.ContrastSample). Here it is checked, not assumed: axe's
colour contrast runs on every element of each page and as the crawl runs it (the sample,
across the pages, in one run with the audit's other rules), and each violating element is
mapped to its group across pages; the two runs must name the same groups. Probe rules
(PROBES) make low-contrast text by the routes a stylesheet could take (a structural
selector on colour, a background, an opacity) so the comparison is made where there are
violations to find, not only on a clean page. Per push: two flop classes of the built
site light, one dark. With KB_FULL=1: every audited page light
(test_phone_and_a11y._audited) and the dark pages (SHOTS), in the crawl's order.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.site.chromium import chromium
from tests.site.crawl import AXE_RUN, DESKTOP, STYLE_GROUPS, ContrastSample, axe_audit, full_run
from tests.site.test_phone_and_a11y import AUDITS, AXE_VERSION, SHOTS, _audited, axe_source

pytestmark = pytest.mark.browser

# Low-contrast text made by a structural selector (only some rows), by a background
# behind ordinary text, and by an ancestor's opacity: each makes some groups fail.
PROBES = """
tbody tr:nth-child(2n) td { color: #8f8f8f !important; }
main section:nth-of-type(2) p { background: #6a6a6a !important; }
main h2:nth-of-type(1) { opacity: 0.35 !important; }
"""
ADD_PROBES = """(css) => {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
}"""
# Each colour-contrast violation's node (axe's selector), named by its style group across
# pages (STYLE_GROUPS' __kbStable), on the page as it is now.
NAMED = """(targets) => targets.map((t) => window.__kbStable.get(
  window.__kbGroupOf.get(document.querySelector(t))) ?? "not grouped: " + t)"""
CONTRAST_ONLY = {"runOnly": {"type": "rule", "values": ["color-contrast"]}}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as instance:
        yield instance


def _violating(tab: Any, results: list[dict[str, Any]]) -> set[str]:
    """The style groups (across pages) of the colour-contrast violations in `results`."""
    targets = [
        node["target"][0]
        for result in results
        for violation in result["violations"]
        if violation["id"] == "color-contrast"
        for node in violation["nodes"]
    ]
    return set(tab.evaluate(NAMED, targets))


def _compare(browser: Any, pages: list[Path], scheme: str, probes: bool) -> list[str]:
    """Where colour contrast on every element of `pages` and the crawl's sample of them
    (crawl.ContrastSample with the crawl's audit of `scheme`: the other rules in the same
    run, each group once across the pages) differ: the groups only one of them found."""
    context = browser.new_context(viewport={"width": DESKTOP, "height": 900}, color_scheme=scheme)
    context.add_init_script(script=axe_source())
    tab = context.new_page()
    every: set[str] = set()
    sampled: set[str] = set()
    crawl_sample, skipped = ContrastSample(), 0
    options = AUDITS[f"desktop-{scheme}"][2]
    for path in pages:
        tab.goto(path.as_uri())
        if probes:
            tab.evaluate(ADD_PROBES, PROBES)
        groups = tab.evaluate(STYLE_GROUPS)
        assert groups > 0, path
        every |= _violating(tab, [tab.evaluate(AXE_RUN, CONTRAST_ONLY)])  # every element
        sampled |= _violating(tab, crawl_sample.run(tab, options))
        skipped += groups - tab.evaluate("() => window.__kbSample.length")  # settled before
    context.close()
    found = [] if every == sampled else [f"full only {every - sampled}, sample {sampled - every}"]
    if probes and not every:
        found.append("the probes made no violation")
    if len(pages) > 1 and not skipped:
        found.append("no group was settled on an earlier page: the sample across pages is idle")
    return found


# Tables, sections, paragraphs (every probe) and MathML, whose one-letter <mi> axe leaves
# undecided where a longer name fails, and a table cell partly covered by its neighbour
# (undecided) in a group whose other cells fail (the full run on every page found both).
SMALL = "records/flops/serving-tpot-slo-batch.html"


# A second flop class, the smallest: most of its groups are SMALL's, settled there.
SECOND = "records/flops/serving-steady-state-concurrency.html"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_sample_finds_the_groups_every_element_finds_on_probed_pages(
    browser: Any, built_site: Path, scheme: str
) -> None:
    """Light on two pages (groups settled on the first are not checked on the second), dark
    on the first: the sample across pages does not depend on the palette."""
    pages = [built_site / SMALL, built_site / SECOND][: 2 if scheme == "light" else 1]
    assert _compare(browser, pages, scheme, probes=True) == []


def test_a_group_left_out_of_the_sample_would_be_noticed(browser: Any, tmp_path: Path) -> None:
    """The comparison is live: two elements alike but for a background are two groups; a
    group settled on an earlier page is not checked again, a new one is, and a group wrongly
    taken for settled loses its violation."""
    main = '<html lang="en"><title>t</title><main><p>dark on white</p>{}</main></html>'
    (tmp_path / "one.html").write_text(main.format(""), encoding="utf-8")
    grey = '<div style="background: #777"><p>dark on grey</p></div>'
    (tmp_path / "two.html").write_text(main.format(grey), encoding="utf-8")
    context = browser.new_context()
    context.add_init_script(script=axe_source())
    tab = context.new_page()
    sample = ContrastSample()
    tab.goto((tmp_path / "one.html").as_uri())
    tab.evaluate(ADD_PROBES, "p { color: #333 }")
    assert _violating(tab, sample.run(tab, CONTRAST_ONLY)) == set()
    assert len(sample.settled) == 1
    audit = axe_audit(CONTRAST_ONLY, set(), sample=True)  # the crawl's audit, its own sample
    assert audit(tab) == ([], AXE_VERSION)
    assert audit(tab) == ([], AXE_VERSION)  # nothing left to run: axe's version all the same
    tab.goto((tmp_path / "two.html").as_uri())
    tab.evaluate(ADD_PROBES, "p { color: #333 }")
    assert tab.evaluate(STYLE_GROUPS) == 2
    every = _violating(tab, [tab.evaluate(AXE_RUN, CONTRAST_ONLY)])
    assert len(every) == 1
    assert _violating(tab, sample.run(tab, CONTRAST_ONLY)) == every
    assert tab.evaluate("() => window.__kbSample.length") == 1  # the grey group alone
    # Had the grey group been settled before, the violation would be lost: a difference.
    assert _violating(tab, ContrastSample(set(sample.settled)).run(tab, CONTRAST_ONLY)) == set()
    context.close()


@pytest.mark.slow
@pytest.mark.skipif(not full_run(), reason="every audited page: KB_FULL=1")
@pytest.mark.parametrize("probes", [False, True], ids=["as-built", "probed"])
def test_the_sample_finds_what_every_element_finds_on_every_audited_page(
    browser: Any, built_site: Path, probes: bool
) -> None:
    dark = [built_site / relative for relative in SHOTS.values()]
    assert _compare(browser, _audited(built_site), "light", probes) == []
    assert _compare(browser, dark, "dark", probes) == []
