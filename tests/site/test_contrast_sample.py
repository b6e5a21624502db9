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

A group axe left undecided on its checked element is checked on every element; where the
crawl expects that (crawl.UNSETTLED: SVG text, a group left undecided on an earlier page) in
the page's one axe run: a violation of another element of such a group is found per push
(test_a_group_left_undecided_is_checked_whole_in_the_first_run_of_a_later_page).

The same for link-in-text-block's colour check, which the crawl skips on links its style
check passes (crawl.LINK_STYLE_FIRST): per push on links of every kind, with KB_FULL=1 on
every audited page and the dark pages, each link's verdict is the one both checks give.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.site.chromium import chromium
from tests.site.crawl import (
    AXE_RUN,
    DESKTOP,
    LINK_STYLE_FIRST,
    STYLE_GROUPS,
    ContrastSample,
    axe_audit,
    full_run,
    run_options,
)
from tests.site.test_phone_and_a11y import AUDITS, AXE_VERSION, HELD, SHOTS, _audited, axe_source

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
    for path in pages:
        tab.goto(path.as_uri())
        if probes:
            tab.evaluate(ADD_PROBES, PROBES)
        groups = tab.evaluate(STYLE_GROUPS)
        assert groups > 0, path
        every |= _violating(tab, [tab.evaluate(AXE_RUN, CONTRAST_ONLY)])  # every element
        # the crawl's run: its audit's rules less those never shown, links styled first
        options = run_options(tab, AUDITS[f"desktop-{scheme}"][2], HELD)
        assert options is not None
        if not full_run():
            tab.evaluate(LINK_STYLE_FIRST)
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


# A group axe leaves undecided on its checked element (the first paragraph, partly covered:
# bgOverlap) whose other element fails, and text in an SVG (axe: an image node, undecided).
UNDECIDED = (
    '<html lang="en"><title>t</title><style>main {{ position: relative }} p {{ color: #777;'
    " background: #fff; margin: 0 }}</style><main><p>covered grey</p><p>{0} grey on white</p>"
    '<div style="position: absolute; top: 0; left: 0; width: 3em; height: 1em; background: #fff">'
    '</div><svg width="300" height="60"><text x="5" y="20">{0} one</text><text x="5" y="50">'
    "{0} two</text></svg></main></html>"
)


def test_a_group_left_undecided_is_checked_whole_in_the_first_run_of_a_later_page(
    browser: Any, tmp_path: Path
) -> None:
    """crawl.UNSETTLED: every element of a group axe left undecided on an earlier page, and of
    SVG text, is checked in the page's one axe run (no second run and its map of boxes), and
    the violation of an element other than the group's checked one is found as every element
    finds it."""
    context = browser.new_context()
    context.add_init_script(script=axe_source())
    tab = context.new_page()
    sample, runs = ContrastSample(), []
    for name in ("first", "second"):
        (tmp_path / f"{name}.html").write_text(UNDECIDED.format(name), encoding="utf-8")
        tab.goto((tmp_path / f"{name}.html").as_uri())
        tab.evaluate(STYLE_GROUPS)
        every = _violating(tab, [tab.evaluate(AXE_RUN, CONTRAST_ONLY)])
        results = sample.run(tab, CONTRAST_ONLY)
        assert len(every) == 1 and _violating(tab, results) == every, name
        runs.append(len(results))
    assert runs == [2, 1]  # the covered group's second element: a second run on the first page
    assert len(sample.undecided) == 2 and not sample.undecided & sample.settled  # SVG, covered
    context.close()


# Links of every kind link-in-text-block tells apart: told apart by style (underline, border,
# weight) and not (no underline): the text's own colour, a colour too close to it, one far
# enough from it; and a link that is its block's only text (not in a text block).
LINKS = (
    '<html lang="en"><title>t</title><style>p { color: #222 } a { text-decoration: none }'
    " .u { text-decoration: underline } .b { border-bottom: 1px solid } .w { font-weight: 700 }"
    " .same { color: inherit } .near { color: #444 } .far { color: #4da3ff }</style><main>"
    + "".join(
        f'<p>Text before <a href="#{c}" class="{c}">a link</a> and after.</p>'
        for c in ("u", "b", "w", "same", "near", "far")
    )
    + '<p><a href="#alone" class="near">alone</a></p></main></html>'
)
LINK_ONLY = {"runOnly": {"type": "rule", "values": ["link-in-text-block"]}}
VERDICTS = """(options) => axe.run(document, options).then((r) => Object.fromEntries(
  ["passes", "violations", "incomplete"].map((k) => [k, r[k].flatMap((v) => v.nodes)
    .map((n) => k === "passes" ? n.target.join(" ") : JSON.stringify(n))])))"""


def _link_verdicts(tab: Any) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """link-in-text-block's verdict on each link of the loaded page, with both of its checks
    on every link and with the colour check only where style does not pass (crawl.py)."""
    every = tab.evaluate(VERDICTS, LINK_ONLY)
    assert tab.evaluate(LINK_STYLE_FIRST) is True
    return every, tab.evaluate(VERDICTS, LINK_ONLY)


def test_links_told_apart_by_style_get_the_same_verdicts_without_the_colour_check(
    browser: Any,
) -> None:
    """crawl.LINK_STYLE_FIRST: each link passes, fails or is left undecided as with both of
    link-in-text-block's checks on it (a violation reported with the same checks and data),
    on links of every kind; on every audited page with KB_FULL=1 (below)."""
    context = browser.new_context(viewport={"width": DESKTOP, "height": 900})
    context.add_init_script(script=axe_source())
    tab = context.new_page()
    tab.set_content(LINKS)
    every, styled_first = _link_verdicts(tab)
    assert styled_first == every
    assert {".u", ".b", ".w", ".far"} <= set(every["passes"]), every  # it is live
    assert ['a[href$="#near"]'] in [json.loads(node)["target"] for node in every["violations"]]
    assert tab.evaluate(LINK_STYLE_FIRST) is False  # installed once a page
    context.close()


@pytest.mark.slow
@pytest.mark.skipif(not full_run(), reason="every audited page: KB_FULL=1")
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_links_get_the_same_verdicts_without_the_colour_check_on_every_audited_page(
    browser: Any, built_site: Path, scheme: str
) -> None:
    pages = _audited(built_site) if scheme == "light" else [built_site / p for p in SHOTS.values()]
    context = browser.new_context(viewport={"width": DESKTOP, "height": 900}, color_scheme=scheme)
    context.add_init_script(script=axe_source())
    tab = context.new_page()
    differ = []
    for page in pages:
        tab.goto(page.as_uri())
        every, styled_first = _link_verdicts(tab)
        differ += [page.name] if every != styled_first else []
    context.close()
    assert differ == []


@pytest.mark.slow
@pytest.mark.skipif(not full_run(), reason="every audited page: KB_FULL=1")
@pytest.mark.parametrize("probes", [False, True], ids=["as-built", "probed"])
def test_the_sample_finds_what_every_element_finds_on_every_audited_page(
    browser: Any, built_site: Path, probes: bool
) -> None:
    dark = [built_site / relative for relative in SHOTS.values()]
    assert _compare(browser, _audited(built_site), "light", probes) == []
    assert _compare(browser, dark, "dark", probes) == []
