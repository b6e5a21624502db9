"""Every page carries a Content-Security-Policy that runs only the site's own script and
style files; the calculators and search still work under it (issue 37, item 5).

A violation is also a console error in chromium, so the one crawl of the site
(tests/site/crawl.py) sees every violation a page makes while it loads: the sample of
pages over HTTP at phone width (an inline script or style is a template's or a
component's, and every component is in the sample; the static test below reads every
page for both) and the same pages from file:// at desktop width (tests/site/test_crawl.py
shows a violation landing in the record); every calculator page's load is watched by
tests/site/test_calculator_browser.py. The browser test
here listens for `securitypolicyviolation` (the event a blocked inline script, inline
style or foreign request raises) while the calculator and the search are used and a
record page's field links are revealed, opened from file:// (as a reader opens a
downloaded site) and over HTTP.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape

from kb.sitegen.render import CONTENT_SECURITY_POLICY
from tests.site.chromium import chromium, watched
from tests.site.conftest import SEED_FLOP

META = f'<meta http-equiv="Content-Security-Policy" content="{escape(CONTENT_SECURITY_POLICY)}">'
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", re.I)
INLINE_STYLE = re.compile(r"<style\b|\sstyle=\"|\son[a-z]+=\"", re.I)
LISTEN = (
    "window.__csp = [];"
    "document.addEventListener('securitypolicyviolation',"
    " e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
)


def test_the_policy_allows_only_the_site_s_own_files() -> None:
    directives = dict(d.strip().split(" ", 1) for d in CONTENT_SECURITY_POLICY.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert "unsafe" not in CONTENT_SECURITY_POLICY and "*" not in CONTENT_SECURITY_POLICY


def test_every_page_carries_the_policy_and_nothing_inline(built_site: Path) -> None:
    pages = sorted(built_site.rglob("*.html"))
    assert len(pages) > 50
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert text.count(META) == 1, page
        assert text.index(META) < text.index("<script") if "<script" in text else True, page
        assert not INLINE_SCRIPT.search(text), page
        assert not INLINE_STYLE.search(text), page


def _calculator_pages(site: Path) -> list[Path]:
    return [
        page
        for page in sorted((site / "records" / "flops").glob("*.html"))
        if 'data-calc="calc-data"' in page.read_text(encoding="utf-8")
    ]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        pass


@pytest.fixture(scope="module")
def served(built_site: Path) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(built_site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join(10)  # no thread outlives the module (kb.workers.can_fork)


def test_every_calculator_page_has_one_result_and_is_loaded_by_a_browser_test(
    built_site: Path,
) -> None:
    """What the browser test's loop over the calculator pages held, and who holds it now.

    Each calculator page has its one result (written by the build, filled by calc.js), and
    each is among the pages tests/site/test_calculator_browser.py loads from file:// and
    watches (console errors, page errors, failed requests: a CSP violation on load is a
    console error), where calc.js runs on the page's own data.
    """
    from tests.site.test_calculator_browser import _calculators

    calculators = _calculator_pages(built_site)
    assert calculators
    for page in calculators:
        assert page.read_text(encoding="utf-8").count('class="calc-result') == 1, page
    assert set(_calculators(built_site).values()) == set(calculators)


@pytest.mark.browser
@pytest.mark.parametrize("route", ["file", "http"])
def test_calculators_and_search_work_without_a_violation(
    built_site: Path, served: str, route: str
) -> None:
    def url(page: Path) -> str:
        relative = page.relative_to(built_site).as_posix()
        return page.as_uri() if route == "file" else served + relative

    with chromium() as browser:
        tab: Any = browser.new_page()
        problems = watched(tab)
        tab.add_init_script(LISTEN)
        seed = built_site / "records" / f"{SEED_FLOP}.html"
        tab.goto(url(seed))
        tab.select_option("#calc-target", "b_star_tp")
        tab.select_option("#calc-pick-accelerator", "hardware/nvidia-h200-sxm")
        assert tab.locator(".calc-result").get_attribute("data-exact")  # the script computed
        assert tab.evaluate("window.__csp") == []
        tab.goto(url(built_site / "search.html") + "?q=nvlink")
        found = tab.evaluate("kbSearch('nvlnk').map(p => p[1].id)")
        assert any(i.startswith("interconnects/nvlink") for i in found), found
        assert tab.evaluate("window.__csp") == []
        tab.goto(url(seed) + "#equations")
        assert tab.evaluate("window.__csp") == []
        assert problems == []
