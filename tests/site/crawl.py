"""One visit per page and width of the built site in chromium, recorded for the tests to read.

Three browser tests used to crawl the same pages, each with its own browser, contexts
and page loads: pages at phone width (tests/site/test_browser.py), axe-core at desktop
and phone width on the audited pages and in the dark palette
(tests/site/test_phone_and_a11y.py), and the first screen of every flop class
(tests/site/test_answer_first.py). `crawl_site` visits each page once per width and
records everything those tests assert on; they assert on the record (`Crawl`). Which
pages: tests/site/crawl_fixtures.py (the sample of tests/site/sample_pages.py).

- Phone, 390 px, over http (tests/site/test_browser.py's server): `pages`. Recorded:
  the page's widths (chromium.WIDEST), what went wrong while it loaded (console errors,
  page errors, failed requests, HTTP errors, dialogs) and, on an audited page, axe's
  phone audit (every rule but colour contrast: tests/site/test_phone_and_a11y.py says why).
- Desktop, 1280 x 900, light, from file://: the audited pages, then the `loaded` pages
  not audited (no axe). Recorded: what went wrong while each loaded, the first screen
  (test_answer_first.FIRST_SCREEN) and, audited, every axe rule.
- Desktop, dark, from file://: the pages that show every component, the colour rules.

One browser context per width and palette (axe's script only in the ones that run it),
one tab in each, reused from page to page.

Colour contrast runs on one element per computed-style group (STYLE_GROUPS; every
element with KB_FULL=1; tests/site/test_contrast_sample.py holds the sample to the full
run). axe-core is injected only where it runs (a context's init script: it bypasses the
pages' CSP as before); its own fetch of the stylesheet, which the CSP refuses, happens
after a page's problems are recorded, as before.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.site.chromium import PHONE, WIDEST, chromium, close_shared, shared_is_running

DESKTOP = 1280


@dataclass
class Visit:
    """What one page showed at one width: each list empty when all is well."""

    problems: list[str] = field(default_factory=list)
    widest: tuple[int, int, list[str]] | None = None  # scrollWidth, clientWidth, culprits
    axe: list[str] | None = None  # serious, critical and held violations (None: not audited)
    axe_versions: set[str] = field(default_factory=set)
    first_screen: dict[str, Any] | None = None
    reads: dict[str, Any] = field(default_factory=dict)  # the crawl's `reads` at this width


@dataclass
class Crawl:
    """Per width, each visited page (its path under the site) and what it showed."""

    phone: dict[str, Visit]
    desktop: dict[str, Visit]
    dark: dict[str, Visit]
    shots: list[Path] = field(default_factory=list)  # the screenshots written, in order


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        pass


@contextmanager
def served(site: Path) -> Iterator[str]:
    """The site from http.server on 127.0.0.1 and an ephemeral port; yields its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def watch_all(page: Any) -> list[str]:
    """chromium.watched's problems, and HTTP errors and dialogs (a dialog is dismissed)."""
    problems: list[str] = []
    page.on(
        "console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"requestfailed: {r.url}"))
    page.on(
        "response",
        lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None,
    )

    def dialog(d: Any) -> None:
        problems.append(f"dialog: {d.message}")
        d.dismiss()

    page.on("dialog", dialog)
    return problems


Audit = Callable[[Any], tuple[list[str], str]]  # page -> (violations shown, axe's version)
Shot = tuple[Path, bool]  # where a page's screenshot goes, and whether of the whole page


@dataclass(frozen=True)
class Shots:
    """Screenshots the crawl takes of pages it visits in the light palette, at each width.

    `pages` maps a page (relative to the site) to a name; `<name>-<width>.png` is written in
    `folder`, of the first screen or, `whole`, of the whole page.
    """

    folder: Path
    pages: dict[str, str]
    whole: bool = False

    def of(self, relative: str, width: int) -> Shot | None:
        name = self.pages.get(relative)
        return None if name is None else (self.folder / f"{name}-{width}.png", self.whole)


def full_run() -> bool:
    """Whether KB_FULL=1 asks for the full versions of the sampled checks (CONTRIBUTING.md)."""
    return os.environ.get("KB_FULL") == "1"


# Colour contrast is ~3/4 of axe's time on a long page (the seed flop class: ~12 CPU-s of
# ~16), and it depends only on computed styles: the text's colour, size, weight and
# shadow, and the backgrounds, opacity, filters, clipping and stacking of the element and
# its ancestors (and their ::before/::after). STYLE_GROUPS groups the page's text-bearing
# elements (a non-blank text node of their own, or a form control) by exactly those
# computed values (and whether its own text is one character, which axe leaves undecided)
# and keeps the first element of each group; axe's colour contrast then
# runs on those alone (with their descendants). tests/site/test_contrast_sample.py shows
# on probe pages per push, and on every audited page with KB_FULL=1, that the groups with
# a violation are the same in the sampled and in the full run.
STYLE_GROUPS = """() => {
  const ids = new Map(), chainOf = new Map();
  const intern = (s) => {
    let i = ids.get(s);
    if (i === undefined) ids.set(s, (i = ids.size));
    return i;
  };
  const BOX = ["background-color", "background-image", "background-clip", "opacity", "filter",
    "mix-blend-mode", "backdrop-filter", "position", "z-index", "overflow-x", "overflow-y",
    "clip", "clip-path", "visibility", "display", "content-visibility", "transform"];
  const chain = (e) => {  // the id of the element's and its ancestors' box styles
    if (!e) return -1;
    let id = chainOf.get(e);
    if (id !== undefined) return id;
    const s = getComputedStyle(e);
    let own = BOX.map((p) => s.getPropertyValue(p)).join("|");
    for (const pseudo of ["::before", "::after"]) {
      const p = getComputedStyle(e, pseudo);
      if (p.content !== "none" && p.content !== "normal")
        own += "|" + pseudo + BOX.map((q) => p.getPropertyValue(q)).join("|");
    }
    id = intern(chain(e.parentElement) + "/" + own);
    chainOf.set(e, id);
    return id;
  };
  const TEXT = ["color", "fill", "font-size", "font-weight", "text-shadow",
    "-webkit-text-fill-color", "-webkit-text-stroke-width", "-webkit-text-stroke-color"];
  const groups = new Map(), of = new Map();
  for (const e of document.querySelectorAll("body *")) {
    const control = /^(INPUT|SELECT|TEXTAREA)$/.test(e.tagName);
    if (!control && ![...e.childNodes].some((n) => n.nodeType === 3 && n.data.trim())) continue;
    const s = getComputedStyle(e);
    // axe leaves one character, or only symbols outside the BMP, undecided: its own text's
    // length class is part of the group (found by the full comparison on MathML's <mi>).
    const own = [...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.data).join("")
      .replace(/\\s+/g, " ").trim();
    const symbols = /^[\\u{10000}-\\u{10FFFF}\\uE000-\\uF8FF ]+$/u;
    const length = own.length <= 1 ? "short" : symbols.test(own) ? "symbols" : "";
    const group = chain(e) + "#" + TEXT.map((p) => s.getPropertyValue(p)).join("|") + "#"
      + length + (control ? e.tagName + e.type : "") + (e.closest("svg") ? "svg" : "")
      + (e.checkVisibility({checkOpacity: true, checkVisibilityCSS: true}) ? "" : "hidden");
    of.set(e, group);
    if (!groups.has(group)) groups.set(group, e);
  }
  window.__kbGroupOf = of;
  window.__kbSample = [...groups.values()];
  return window.__kbSample.length;
}"""
# Colour contrast on the sample; then, for each group whose checked element axe left
# undecided (partly covered by another element, say: geometry, not style) on every other
# element of the group. One-character groups stay sampled: axe leaves each such element
# undecided or passes it by its colours alone. Returns axe's results.
SAMPLED_CONTRAST = """async (options) => {
  const run = (nodes) =>
    axe.run({include: nodes}, {...options, resultTypes: ["violations", "incomplete"]});
  const first = await run(window.__kbSample);
  const undecided = new Set();
  for (const v of first.incomplete) for (const n of v.nodes) {
    const group = window.__kbGroupOf.get(document.querySelector(n.target[0]));
    if (group !== undefined && !group.includes("#short")) undecided.add(group);
  }
  const checked = new Set(window.__kbSample);
  const rest = [...window.__kbGroupOf]
    .filter(([e, group]) => undecided.has(group) && !checked.has(e)).map(([e]) => e);
  return rest.length ? [first, await run(rest)] : [first];
}"""
CONTRAST = "color-contrast"


def _without_contrast(options: dict[str, Any]) -> dict[str, Any] | None:
    """`options` minus colour contrast; None when colour contrast was all they ran."""
    only = options.get("runOnly")
    if only is not None:
        rest = [rule for rule in only["values"] if rule != CONTRAST]
        return {**options, "runOnly": {**only, "values": rest}} if rest else None
    rules = {**options.get("rules", {}), CONTRAST: {"enabled": False}}
    return {**options, "rules": rules}


def _runs_contrast(options: dict[str, Any]) -> bool:
    only = options.get("runOnly")
    if only is not None:
        return CONTRAST in only["values"]
    return bool(options.get("rules", {}).get(CONTRAST, {}).get("enabled", True))


def axe_audit(options: dict[str, Any], held: set[str], *, sample: bool | None = None) -> Audit:
    """Run axe on a loaded page with `options`; keep serious, critical and `held` violations.

    Colour contrast runs on one element of each style group (STYLE_GROUPS) unless `sample`
    is False (by default: unless KB_FULL=1); every other rule runs on the whole page.
    """
    sampled = (not full_run()) if sample is None else sample

    def audit(page: Any) -> tuple[list[str], str]:
        runs: list[tuple[str, dict[str, Any]]] = [("document", options)]
        if sampled and _runs_contrast(options):
            rest = _without_contrast(options)
            runs = [("document", rest)] if rest is not None else []
            contrast = {**options, "runOnly": {"type": "rule", "values": [CONTRAST]}}
            contrast.pop("rules", None)
            # A page without text: the whole (empty) page, as axe would see it.
            runs.append(("sample" if page.evaluate(STYLE_GROUPS) else "document", contrast))
        found, version = [], ""
        for context, run_options in runs:
            if context == "sample":
                results = page.evaluate(SAMPLED_CONTRAST, run_options)
            else:
                results = [
                    page.evaluate(
                        "(options) => axe.run(document, {...options, resultTypes: ['violations']})",
                        run_options,
                    )
                ]
            for result in results:
                version = str(result["testEngine"]["version"])
                found += _shown(result, held)
        return found, version

    return audit


def _shown(result: dict[str, Any], held: set[str]) -> list[str]:
    """axe's serious, critical and `held` violations, each with its first two nodes."""
    found = []
    for violation in result["violations"]:
        if violation["impact"] in ("serious", "critical") or violation["id"] in held:
            nodes = "; ".join(n["html"][:120] for n in violation["nodes"][:2])
            found.append(f"{violation['id']}: {nodes}")
    return found


def _visit(
    page: Any,
    problems: list[str],
    url: str,
    *,
    widest: bool = False,
    first_screen: str = "",
    audit: Audit | None = None,
    reads: dict[str, str] | None = None,
    shot: Shot | None = None,
) -> Visit:
    problems.clear()
    page.goto(url, wait_until="load")
    visit = Visit()
    if widest:
        scroll, width, culprits = page.evaluate(WIDEST)
        visit.widest = (scroll, width, culprits)
    if first_screen:
        visit.first_screen = page.evaluate(first_screen)
    for name, script in (reads or {}).items():
        visit.reads[name] = page.evaluate(script)
    if shot is not None:
        target, whole = shot
        page.screenshot(path=str(target), full_page=whole, timeout=180_000)  # a long page
    visit.problems = list(problems)  # what the page did while it loaded and was read
    if audit is not None:
        visit.axe, version = audit(page)
        visit.axe_versions.add(version)
    problems.clear()  # axe's fetch of the stylesheet, refused by the CSP, is not the page's
    return visit


def crawl_site(
    site: Path,
    audited: list[Path],
    dark: list[Path],
    *,
    axe_source: str,
    audits: dict[str, tuple[int, str, dict[str, Any]]],
    held: set[str],
    first_screen: str,
    first_screen_pages: list[Path],
    pages: list[Path] | None = None,
    loaded: Sequence[Path] = (),
    reads: dict[str, dict[str, str]] | None = None,
    shots: Shots | None = None,
    widths: tuple[str, ...] = ("phone", "desktop"),
) -> Crawl:
    """Visit `pages` (every page of `site` when None) at phone width, `audited` at desktop
    width, `dark` in dark; `loaded` at desktop width too, without axe (what went wrong while
    each loaded, its first screen).

    `reads` names, per width ("phone", "desktop"), scripts evaluated on every page visited
    at that width in the light palette, each result kept under its name (`Visit.reads`):
    the tests that read a page's layout read it in the crawl instead of loading it again.
    `shots` takes screenshots of the pages it names at each width (light palette).
    `widths` picks the phone crawl, the desktop crawls (light and dark) or both.
    """
    reads = reads or {}
    phone: dict[str, Visit] = {}
    desktop: dict[str, Visit] = {}
    dark_visits: dict[str, Visit] = {}
    running = shared_is_running()  # a module's browser, if any, is left as it was
    with chromium() as browser:
        if "phone" in widths:
            every = sorted(site.rglob("*.html")) if pages is None else pages
            phone = _phone_crawl(
                browser, site, every, set(audited), audits, held, axe_source, reads.get("phone"),
                shots,
            )  # fmt: skip
        if "desktop" in widths:
            desktop = _file_crawl(
                browser,
                site,
                audited,
                "light",
                axe_audit(audits["desktop-light"][2], held),
                axe_source,
                first_screen=first_screen,
                screened=set(first_screen_pages),
                reads=reads.get("desktop"),
                shots=shots,
            )
            unaudited = [path for path in loaded if path not in set(audited)]
            desktop |= _file_crawl(
                browser,
                site,
                unaudited,
                "light",
                None,
                "",
                first_screen=first_screen,
                screened=set(first_screen_pages),
                reads=reads.get("desktop"),
                shots=shots,
            )
            dark_visits = _file_crawl(
                browser, site, dark, "dark", axe_audit(audits["desktop-dark"][2], held), axe_source
            )
    if not running:
        close_shared()  # no Playwright thread outlives the crawl (tests/site/conftest.py)
    written = [
        s[0] for s in _shots_of(shots, [*phone], PHONE) + _shots_of(shots, [*desktop], DESKTOP)
    ]
    return Crawl(phone=phone, desktop=desktop, dark=dark_visits, shots=written)


def _shots_of(shots: Shots | None, pages: list[str], width: int) -> list[Shot]:
    found = [shots.of(page, width) for page in pages] if shots is not None else []
    return [shot for shot in found if shot is not None]


def _phone_crawl(
    browser: Any,
    site: Path,
    pages: list[Path],
    audited: set[Path],
    audits: dict[str, tuple[int, str, dict[str, Any]]],
    held: set[str],
    axe_source: str,
    reads: dict[str, str] | None,
    shots: Shots | None,
) -> dict[str, Visit]:
    phone: dict[str, Visit] = {}
    axe_width, _, phone_options = audits["phone-light"]
    assert axe_width == PHONE
    # Two contexts (one page each, reused from page to page): axe's script is injected only
    # where it runs; when every page is audited (the sample) the plain one loads nothing.
    plain = browser.new_context(viewport={"width": PHONE, "height": 800})
    with_axe = browser.new_context(viewport={"width": PHONE, "height": 900})
    with_axe.add_init_script(script=axe_source)
    tabs = {False: plain.new_page(), True: with_axe.new_page()}
    watched = {audit: watch_all(tab) for audit, tab in tabs.items()}
    phone_audit = axe_audit(phone_options, held)
    with served(site) as base:
        for path in pages:
            relative = path.relative_to(site).as_posix()
            audit = path in audited
            phone[relative] = _visit(
                tabs[audit],
                watched[audit],
                base + relative,
                widest=True,
                audit=phone_audit if audit else None,
                reads=reads,
                shot=shots.of(relative, PHONE) if shots is not None else None,
            )
    plain.close()
    with_axe.close()
    return phone


def _file_crawl(
    browser: Any,
    site: Path,
    pages: list[Path],
    scheme: str,
    audit: Audit | None,
    axe_source: str,
    *,
    first_screen: str = "",
    screened: set[Path] | None = None,
    reads: dict[str, str] | None = None,
    shots: Shots | None = None,
) -> dict[str, Visit]:
    if not pages:
        return {}
    context = browser.new_context(viewport={"width": DESKTOP, "height": 900}, color_scheme=scheme)
    if audit is not None:
        context.add_init_script(script=axe_source)
    page = context.new_page()
    problems = watch_all(page)
    visits = {}
    for path in pages:
        relative = path.relative_to(site).as_posix()
        visits[relative] = _visit(
            page,
            problems,
            path.as_uri(),
            first_screen=first_screen if path in (screened or set()) else "",
            audit=audit,
            reads=reads,
            shot=shots.of(relative, DESKTOP) if shots is not None else None,
        )
    context.close()
    return visits
