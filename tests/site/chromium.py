"""Debian's chromium through Playwright, for the browser tests (no `playwright install`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PHONE = 390  # px: the phone width every page is laid out at (tests/site/test_browser.py)
# [scrollWidth, clientWidth, the first three elements wider than the screen] of a page;
# scroll regions (tables, code, display maths) may be wider: they scroll inside themselves.
# The culprits name what a failure is about; a page that does not scroll sideways has none
# to name, so its elements are not measured (a tenth of the phone crawl's CPU time).
WIDEST = """() => {
  const width = document.documentElement.clientWidth, wide = [];
  const scroll = document.documentElement.scrollWidth;
  if (scroll <= width) return [scroll, width, wide];
  for (const e of document.querySelectorAll("body *")) {
    const box = e.getBoundingClientRect();
    if (box.right > width + 1 && !e.closest(".table-scroll, pre, .math-display, .inline-math"))
      wide.push(e.tagName.toLowerCase() + "." + e.className + " " + Math.round(box.right));
  }
  return [scroll, width, wide.slice(0, 3)];
}"""


_SHARED: dict[str, Any] = {}


def _shared_browser() -> Any:
    """The worker's one browser (and its Playwright driver), launched on first use."""
    from playwright.sync_api import sync_playwright

    browser = _SHARED.get("browser")
    if browser is None or not browser.is_connected():
        assert Path(CHROMIUM).exists(), "run scripts/install-browser.sh first"
        playwright = _SHARED.get("playwright") or sync_playwright().start()
        _SHARED["playwright"] = playwright
        _SHARED["browser"] = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    return _SHARED["browser"]


def close_shared() -> None:
    """Close the shared browser and stop its driver (tests/site/conftest.py, after the last
    browser test of a run of them)."""
    browser, playwright = _SHARED.pop("browser", None), _SHARED.pop("playwright", None)
    if browser is not None and browser.is_connected():
        browser.close()
    if playwright is not None:
        playwright.stop()


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless browser; fails (never skips) when scripts/install-browser.sh has not run.

    Every block of a run of browser tests gets the same browser (a launch and a Playwright
    driver cost a few CPU-seconds each; tests/site/conftest.py closes it when the worker's
    next test is not a browser test of tests/site);
    each block's own contexts and pages are closed when it ends.
    """
    browser = _shared_browser()
    before = set(browser.contexts)
    try:
        yield browser
    finally:
        for context in browser.contexts:
            if context not in before:
                context.close()


def watched(page: Any) -> list[str]:
    """Collect a page's console errors, uncaught errors and failed requests."""
    problems: list[str] = []
    page.on(
        "console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"requestfailed: {r.url}"))
    return problems
