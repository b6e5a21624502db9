"""Debian's chromium through Playwright, for the browser tests (no `playwright install`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"]
PHONE = 390  # px: the phone width every page is laid out at (tests/site/test_browser.py)
# [scrollWidth, clientWidth, the first three elements wider than the screen] of a page;
# scroll regions (tables, code, display maths) may be wider: they scroll inside themselves.
WIDEST = """() => {
  const width = document.documentElement.clientWidth, wide = [];
  for (const e of document.querySelectorAll("body *")) {
    const box = e.getBoundingClientRect();
    if (box.right > width + 1 && !e.closest(".table-scroll, pre, .math-display, .inline-math"))
      wide.push(e.tagName.toLowerCase() + "." + e.className + " " + Math.round(box.right));
  }
  return [document.documentElement.scrollWidth, width, wide.slice(0, 3)];
}"""


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless browser; fails (never skips) when scripts/install-browser.sh has not run."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "run scripts/install-browser.sh first"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def watched(page: Any) -> list[str]:
    """Collect a page's console errors, uncaught errors and failed requests."""
    problems: list[str] = []
    page.on(
        "console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"requestfailed: {r.url}"))
    return problems
