"""Phone, keyboard and screen reader: axe-core at two widths, screenshots, dark colours.

axe-core comes from PyPI (axe-playwright-python, pinned in the test extra, which
bundles axe.min.js); its version and checksum are pinned here, and a missing or
different copy fails the test (it is never skipped). The site's audits read the one
crawl of the site (tests/site/crawl.py) on its sample of pages (tests/site/sample_pages.py:
per template, the pages at each data extreme and a cover of every component; with
KB_FULL=1 also every top-level page, flop class and placement and three of every other
kind): at desktop width pages load from file://, at phone width over http (no sideways
scrolling, no console error: tests/site/test_browser.py); the probes here load their own
pages.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.site.chromium import PHONE, chromium, watched
from tests.site.conftest import SEED_FLOP
from tests.site.crawl import (
    AXE_RUN,
    STYLE_GROUPS,
    UNSHOWN,
    Crawl,
    Visit,
    _shown,
    axe_audit,
    full_run,
)
from tests.site.crawl_fixtures import audited as _audited

pytestmark = pytest.mark.browser

DESKTOP = 1280
AXE_VERSION = "4.12.1"  # axe-playwright-python 0.1.8
AXE_SHA256 = "84494fec757e4710dc751c8d7a636e457f4532f08f85c86dc9070133fbff53bc"
SHOTS = {
    "home": "index.html",
    "seed": f"records/{SEED_FLOP}.html",
    "hardware": "records/hardware/nvidia-h100-sxm.html",
    "placement": "records/placements/tp-llama-3.1-70b-h100-tp4-vs-tp8.html",
    "charts": "charts/index.html",
}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as instance:
        yield instance


def axe_source() -> str:
    """The pinned axe.min.js from the PyPI package (fails when absent or different)."""
    import axe_playwright_python

    path = Path(axe_playwright_python.__file__).with_name("axe.min.js")
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == AXE_SHA256, f"{path} is not the pinned axe-core"
    assert data.startswith(f"/*! axe v{AXE_VERSION}".encode()), data[:40]
    return data.decode("utf-8")


# Colour contrast is most of axe's time on a long page (every text node's colours and the
# backgrounds behind it). It runs at desktop width in both colour schemes; at phone width
# no colour, background, opacity or filter differs (asserted below), so it is not run again.
# "phone-light" is every other rule; the crawl runs it where a page's DOM differs from the
# desktop's, elsewhere crawl.PHONE_RULES (the rules that read what 390 px changes).
# The dark audit runs the rules whose inputs are colours: contrast, and links told apart
# from their text.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
AUDITS: dict[str, tuple[int, str, dict[str, Any]]] = {
    "desktop-light": (DESKTOP, "light", {}),
    "phone-light": (PHONE, "light", {"rules": {"color-contrast": {"enabled": False}}}),
    "desktop-dark": (DESKTOP, "dark", {"runOnly": {"type": "rule", "values": COLOUR_RULES}}),
}
# Moderate rules held too: two scroll regions of a page with one name cannot be told apart
# by a screen reader's landmark list (scrollers.js numbers them).
HELD = {"landmark-unique"}
COLOUR_PROPERTIES = re.compile(r"(?:^|[;{\s])(color|background[\w-]*|opacity|filter|--[\w-]+)\s*:")


def _phone_block(css: str) -> str:
    """The body of the stylesheet's max-width (phone) @media block (it closes at column 0)."""
    start = css.index("{", css.index("@media (max-width")) + 1
    return css[start : css.index("\n}", start)]


def test_the_phone_layout_changes_no_colour() -> None:
    """Why colour contrast need not run again at phone width."""
    css = (REPO / "kb" / "theme" / "static" / "style.css").read_text(encoding="utf-8")
    assert css.count("@media (max-width") == 1
    block = _phone_block(css)
    assert "padding" in block  # the block was found
    assert COLOUR_PROPERTIES.findall(block) == []
    assert COLOUR_PROPERTIES.findall("a { color: red; }") == ["color"]  # the pattern is live


def _violations(browser, site: Path, pages: list[Path], audit: str) -> list[str]:
    width, scheme, options = AUDITS[audit]
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    context.add_init_script(script=axe_source())
    page = context.new_page()
    problems = watched(page)  # console errors, page errors, failed requests at this width
    run_axe = axe_audit(options, HELD)
    found = []
    for path in pages:
        page.goto(path.as_uri())
        found += (f"{path.relative_to(site)}: {problem}" for problem in problems)
        violations, version = run_axe(page)
        assert version == AXE_VERSION
        found += (f"{path.relative_to(site)}: {violation}" for violation in violations)
        # axe itself fetches the stylesheet, which the page's CSP refuses (connect-src): only
        # what the page did while it loaded is the page's.
        problems.clear()
    context.close()
    return found


def test_axe_finds_no_serious_or_critical_violation_at_desktop_width(
    desktop_crawl: Crawl, built_site: Path
) -> None:
    """Every audited page (the sample: tests/site/sample_pages.py), every rule, in the
    desktop crawl of the site (tests/site/crawl.py)."""
    pages = [p.relative_to(built_site).as_posix() for p in _audited(built_site)]
    assert len(pages) >= 20
    assert _found(desktop_crawl.desktop, pages) == []


def test_axe_finds_no_serious_or_critical_violation_at_phone_width(
    phone_crawl: Crawl, built_site: Path
) -> None:
    """Every audited page (the sample) in the phone crawl: the rules that read what 390 px
    changes where the page's DOM is the desktop's (crawl.PHONE_RULES: the desktop audit
    ran the others on that DOM), every rule but colour contrast elsewhere and with KB_FULL=1."""
    pages = [p.relative_to(built_site).as_posix() for p in _audited(built_site)]
    assert len(pages) >= 20
    assert _found(phone_crawl.phone, pages) == []


def _found(visits: dict[str, Visit], pages: list[str]) -> list[str]:
    """Each page's problems while it loaded and its axe violations (every page audited)."""
    found = []
    for relative in pages:
        visit = visits[relative]
        assert visit.axe is not None and visit.axe_versions == {AXE_VERSION}, relative
        found += (f"{relative}: {problem}" for problem in [*visit.problems, *visit.axe])
    return found


def test_dark_colours_have_the_contrast_axe_asks_for(desktop_crawl: Crawl) -> None:
    """The dark palette on the pages that show every component (tables, charts, maths)."""
    assert _found(desktop_crawl.dark, list(SHOTS.values())) == []


# What a script would read the colour scheme or the colours by.
SCHEME_READERS = re.compile(r"matchMedia|prefers-color-scheme|colorScheme|getComputedStyle")
STABLE = "() => [...window.__kbStable.values()].sort()"


def test_a_page_drawn_in_dark_after_loading_in_light_is_the_page_loaded_in_dark(
    browser: Any, built_site: Path
) -> None:
    """Why the dark audit draws the light crawl's pages in dark (crawl.in_dark): no script of
    the site reads the colour scheme or a computed style (the palette is style.css's alone;
    the pages run no inline script: test_csp.py), and a page drawn in dark after loading in
    light has the computed styles of its load in dark (STYLE_GROUPS' groups: the values
    colour contrast reads). Per push the home page; every page of SHOTS with KB_FULL=1."""
    scripts = sorted((REPO / "kb" / "theme" / "static").glob("*.js"))
    assert scripts and [p.name for p in scripts if SCHEME_READERS.search(p.read_text())] == []
    assert SCHEME_READERS.search("matchMedia('(prefers-color-scheme: dark)')")
    groups: dict[str, list[list[str]]] = {}
    pages = list(SHOTS.values()) if full_run() else [SHOTS["home"]]
    for scheme in ("light", "dark"):
        context = browser.new_context(
            viewport={"width": DESKTOP, "height": 900}, color_scheme=scheme
        )
        tab = context.new_page()
        for relative in pages:
            tab.goto((built_site / relative).as_uri())
            tab.evaluate(STYLE_GROUPS)
            groups.setdefault(scheme, []).append(tab.evaluate(STABLE))
            if scheme == "light":
                tab.emulate_media(color_scheme="dark")
                tab.evaluate(STYLE_GROUPS)
                groups.setdefault("drawn", []).append(tab.evaluate(STABLE))
                tab.emulate_media(color_scheme="light")  # kept across loads, as in_dark does
        context.close()
    assert groups["drawn"] == groups["dark"]
    assert all(light != dark for light, dark in zip(groups["light"], groups["dark"], strict=True))


def test_an_axe_audit_can_fail(browser) -> None:
    """The audit is live: a page with an unlabelled input and an empty link is flagged."""
    context = browser.new_context()
    context.add_init_script(script=axe_source())
    page = context.new_page()
    page.set_content('<html lang="en"><title>t</title><main><input><a href="x"></a></main></html>')
    result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    assert {"label", "link-name"} <= {v["id"] for v in result["violations"]}
    context.close()


# Violations of rules of each impact: critical (an unlabelled input), serious (an empty
# link), moderate (text outside any landmark: region; a heading level skipped), minor (an
# image's alt repeating its link's text) and moderate but held (two navigations of one name).
IMPACTS = (
    '<html lang="en"><title>t</title><body><p>outside every landmark</p>'
    '<nav aria-label="pages"><a href="a">a</a></nav><nav aria-label="pages"><a href="b">b</a>'
    '</nav><main><h1>t</h1><h4>skipped</h4><input><a href="x"></a>'
    '<a href="y">Logo<img src="data:," alt="Logo"></a></main></body></html>'
)


def test_the_rules_an_audit_leaves_out_never_show_a_violation(browser: Any) -> None:
    """axe_audit does not run the rules named by crawl.UNSHOWN (declared moderate or minor,
    not held) unless KB_FULL=1: each violation takes its rule's declared impact, so theirs
    are never among the violations shown; on a page with violations of every impact the
    audit shows what every rule shows."""
    context = browser.new_context()
    context.add_init_script(script=axe_source())
    page = context.new_page()
    page.set_content(IMPACTS)
    declared = dict(page.evaluate("() => axe._audit.rules.map((r) => [r.id, r.impact])"))
    unshown = set(page.evaluate(UNSHOWN, sorted(HELD)))
    assert unshown == {r for r, i in declared.items() if i in ("moderate", "minor")} - HELD
    assert "region" in unshown and "landmark-unique" not in unshown
    assert None not in declared.values()  # every rule decides its violations' impact
    every = page.evaluate(AXE_RUN, {})
    impacts = {v["id"]: v["impact"] for v in every["violations"]}
    assert impacts == {rule: declared[rule] for rule in impacts}
    assert {"critical", "serious", "moderate", "minor"} <= set(impacts.values()), impacts
    assert unshown & set(impacts) and HELD <= set(impacts)  # the page is live
    shown = _shown(every, HELD)
    assert axe_audit({}, HELD, sample=False)(page) == (shown, AXE_VERSION)
    assert {v.split(":")[0] for v in shown} == {r for r in impacts if r not in unshown}
    context.close()


@pytest.mark.slow
@pytest.mark.skipif(not full_run(), reason="every audited page: KB_FULL=1")
def test_every_violation_on_every_audited_page_has_its_rules_impact(
    browser: Any, built_site: Path
) -> None:
    """The premise of UNSHOWN on the site: every rule's violations take the impact their rule
    declares, at both widths (but colour contrast's: declared serious, never left out)."""
    wrong = []
    for width in (DESKTOP, PHONE):
        context = browser.new_context(viewport={"width": width, "height": 900})
        context.add_init_script(script=axe_source())
        page = context.new_page()
        for path in _audited(built_site):
            page.goto(path.as_uri())
            declared = dict(page.evaluate("() => axe._audit.rules.map((r) => [r.id, r.impact])"))
            every = page.evaluate(AXE_RUN, {"rules": {"color-contrast": {"enabled": False}}})
            wrong += [
                (path.name, v["id"])
                for v in every["violations"]
                if v["impact"] != declared[v["id"]]
            ]
        context.close()
    assert wrong == []


def test_scroll_regions_get_names_of_their_own(browser, tmp_path: Path) -> None:
    """Two wide code blocks under one heading: two regions, two names (landmark-unique)."""
    script = (REPO / "kb" / "theme" / "static" / "scrollers.js").read_text(encoding="utf-8")
    wide = "<pre>" + "x" * 400 + "</pre>"
    page = tmp_path / "regions.html"
    page.write_text(
        f'<html lang="en"><title>t</title><main><section><h2>Code</h2>{wide}{wide}{wide}'
        f"</section></main><script>{script}</script></html>",
        encoding="utf-8",
    )
    context = browser.new_context(viewport={"width": PHONE, "height": 900})
    tab = context.new_page()
    tab.goto(page.as_uri())
    labels = tab.eval_on_selector_all("[role=region]", "els => els.map(e => e.ariaLabel)")
    context.close()
    base = "Code: scrolls sideways"
    assert labels == [base, f"{base} (2)", f"{base} (3)"]
    assert _violations(browser, tmp_path, [page], "phone-light") == []


def test_the_dark_audit_sees_the_dark_palette(browser, tmp_path: Path) -> None:
    """Text readable in light but not in dark is flagged only by the dark audit."""
    page = tmp_path / "dark-probe.html"
    page.write_text(
        '<html lang="en"><title>t</title><style>p { color: #111; background: #fff }'
        " @media (prefers-color-scheme: dark) { p { background: #000 } }</style>"
        "<main><p>dim in the dark</p></main></html>",
        encoding="utf-8",
    )
    assert _violations(browser, tmp_path, [page], "desktop-light") == []
    assert _violations(browser, tmp_path, [page], "desktop-dark") != []


def test_screenshots_at_desktop_and_phone_width(
    site_crawl: Crawl, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each page of SHOTS drawn at both widths, for a person to look at, taken in the one
    crawl of the site as it visits the page (tests/site/crawl_fixtures.py `shots`).

    The whole length of each page when a person asks for them (KB_SCREENSHOTS=folder) or
    with KB_FULL=1; per push the first screen (the seed's full page alone was ~10 CPU-s),
    which shows each page renders at each width.
    """
    names = {f"{name}-{width}.png" for name in SHOTS for width in (DESKTOP, PHONE)}
    assert sorted(shot.name for shot in site_crawl.shots) == sorted(names)
    for shot in site_crawl.shots:
        assert shot.stat().st_size > 10_000, shot
    whole = bool(os.environ.get("KB_SCREENSHOTS")) or full_run()
    with capsys.disabled():  # the path is for a person: shown even when output is captured
        what = "whole pages" if whole else "first screens"
        folder = site_crawl.shots[0].parent
        print(f"\nscreenshots: {folder} ({len(SHOTS) * 2} {what} at {DESKTOP} and {PHONE} px)")
