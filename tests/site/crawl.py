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
  phone audit: the rules that read what 390 px changes (PHONE_RULES says why), or every
  rule but colour contrast where the page's DOM differs from the desktop's (AXE_DOM) and
  with KB_FULL=1 (tests/site/test_phone_and_a11y.py says why not colour contrast).
- Desktop, 1280 x 900, light, from file:// (first: its AXE_DOM digests pick the phone
  audit): the audited pages, then the `loaded` pages not audited (no axe). Recorded: what
  went wrong while each loaded, the first screen (test_answer_first.FIRST_SCREEN) and,
  audited, every axe rule.
- Desktop, dark: the pages that show every component, the colour rules; each page of
  them the light crawl audits is drawn in dark there once its light visit is done
  (in_dark), the others loaded from file:// in a dark context (every one with KB_FULL=1).

One browser context per width and palette (axe's script in it when it audits a page), one
tab in each, reused from page to page.

Colour contrast runs on one element per computed-style group (STYLE_GROUPS; every
element with KB_FULL=1), and only on the groups no earlier page of the crawl at that width
and palette settled (ContrastSample); on every element of a group axe is expected to leave
undecided (SVG text, a group it left undecided on an earlier page) in the page's one run, not
in a second; tests/site/test_contrast_sample.py holds the sample to the full run.
axe-core is injected only where it runs (a context's init script: it bypasses the pages'
CSP as before); its own fetch of the stylesheet, which the CSP refuses, happens after a
page's problems are recorded, as before. link-in-text-block measures a link's colours only
where its style does not tell it apart (LINK_STYLE_FIRST).
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.site.chromium import PHONE, WIDEST, chromium

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
    dom: str = ""  # AXE_DOM's digest of an audited page ("" when not read)
    rules: str = ""  # at phone width: which audit ran, "layout" (PHONE_RULES) or "full"


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


# One 53-bit string hash (cyrb53: its length, then two 32-bit lanes in hex) for the scripts
# below that name a text across pages: STYLE_GROUPS' group names and AXE_DOM's digest.
DIGEST = """  const digest = (text) => {
    let h1 = 0xdeadbeef, h2 = 0x41c6ce57;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return text.length + ":" + (h2 >>> 0).toString(16) + (h1 >>> 0).toString(16);
  };
"""

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
STYLE_GROUPS = (
    """() => {
"""
    + DIGEST
    + """  const ids = new Map(), chainOf = new Map(), whole = new Map([[-1, ""]]);
  const intern = (parent, own) => {  // whole: each id's chain spelt out, for STABLE
    const s = parent + "/" + own;
    let i = ids.get(s);
    if (i === undefined) {
      ids.set(s, (i = ids.size));
      whole.set(i, whole.get(parent) + "/" + own);
    }
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
    id = intern(chain(e.parentElement), own);
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
  // Each group's name across pages: its chain spelt out (ids are the page's own), hashed.
  window.__kbStable = new Map([...groups.keys()].map((g) => {
    const at = g.indexOf("#");
    const text = whole.get(Number(g.slice(0, at))) + g.slice(at);
    return [g, digest(text)];
  }));
  return window.__kbSample.length;
}"""
)
# One axe run of `options` on the whole page, in which colour contrast (when among them)
# checks only the sample (and its descendants) and every element of the groups UNSETTLED
# expects axe to leave undecided (__kbWhole): axe builds its map of the page's boxes
# once a run, ~1-2 CPU-s on a long page, so the contrast sample and the other rules share
# one run. Then colour contrast again, for each group whose checked element axe left
# undecided (partly covered by another element, say: geometry, not style), on every other
# element of the group not checked yet (none when UNSETTLED expected it). One-character
# groups stay sampled: axe leaves each such element undecided or passes it by its colours
# alone. Returns axe's results.
SAMPLED_CONTRAST = """async (options) => {
  const types = {resultTypes: ["violations", "incomplete"]};
  const checked = new Set([...window.__kbSample, ...(window.__kbWhole || [])]);
  const inside = new Set();
  for (const e of checked) for (const d of [e, ...e.querySelectorAll("*")]) inside.add(d);
  const rule = axe._audit.rules.find((r) => r.id === "color-contrast");
  const matches = rule.matches;
  axe.configure({rules: [{id: "color-contrast", matches: function (node, ...rest) {
    return inside.has(node) && matches.call(this, node, ...rest);
  }}]});
  let first;
  try {
    first = await axe.run(document, {...options, ...types});
  } finally {
    axe.configure({rules: [{id: "color-contrast", matches}]});
  }
  const undecided = new Set();
  for (const v of first.incomplete) for (const n of v.nodes) {
    const group = window.__kbGroupOf.get(document.querySelector(n.target[0]));
    if (v.id === "color-contrast" && group !== undefined && !group.includes("#short"))
      undecided.add(group);
  }
  window.__kbUndecided = undecided;
  const rest = [...window.__kbGroupOf]
    .filter(([e, group]) => undecided.has(group) && !checked.has(e)).map(([e]) => e);
  const contrast = {runOnly: {type: "rule", values: ["color-contrast"]}, ...types};
  return rest.length ? [first, await axe.run({include: rest}, contrast)] : [first];
}"""
CONTRAST = "color-contrast"
LINK_RULE = "link-in-text-block"
# Across the pages of one crawl (one context, one palette): a group whose checked element
# axe decided (passed or failed) on an earlier page is settled, and its elements on later
# pages are not checked again (its name across pages: __kbStable, the group's computed
# values spelt out, hashed). UNSETTLED drops the settled groups from the page's sample,
# names in __kbWhole every other element of the groups left whose checked element axe is
# expected to leave undecided (SVG text, which axe takes for an image node, and the groups
# it left undecided on an earlier page: the elements the second run of SAMPLED_CONTRAST
# would check, ~1 CPU-s a long page for its map of boxes) and returns how many are left.
# DECIDED names the groups the page's run decided (all it checked but those left undecided
# and checked on every element), and those it left undecided.
UNSETTLED = """([settled, undecided]) => {
  const known = new Set(settled), expected = new Set(undecided);
  const name = (group) => window.__kbStable.get(group);
  window.__kbSample = window.__kbSample.filter((e) => !known.has(name(window.__kbGroupOf.get(e))));
  const whole = new Set(window.__kbSample.map((e) => window.__kbGroupOf.get(e)).filter((group) => {
    const last = group.slice(group.lastIndexOf("#"));  // length class, control, svg, hidden
    return !last.startsWith("#short") && (last.includes("svg") || expected.has(name(group)));
  }));
  const sampled = new Set(window.__kbSample);
  window.__kbWhole = [...window.__kbGroupOf]
    .filter(([e, group]) => whole.has(group) && !sampled.has(e)).map(([e]) => e);
  return window.__kbSample.length;
}"""
DECIDED = """() => ({
  settled: window.__kbSample.map((e) => window.__kbGroupOf.get(e))
    .filter((group) => !window.__kbUndecided.has(group))
    .map((group) => window.__kbStable.get(group)),
  undecided: [...window.__kbUndecided].map((group) => window.__kbStable.get(group)),
})"""


@dataclass
class ContrastSample:
    """Colour contrast as the crawl runs it on a run of pages: one element per style group
    (STYLE_GROUPS, SAMPLED_CONTRAST), and only the groups no earlier page settled.

    tests/site/test_contrast_sample.py holds it to axe's run on every element of every page.
    """

    settled: set[str] = field(default_factory=set)
    undecided: set[str] = field(default_factory=set)  # left undecided on an earlier page

    def run(self, page: Any, options: dict[str, Any]) -> list[dict[str, Any]]:
        """axe's results of `options` (colour contrast among them) on the loaded `page`."""
        if not page.evaluate(STYLE_GROUPS):  # a page without text: the whole (empty) page
            return [page.evaluate(AXE_RUN, options)]
        if not page.evaluate(UNSETTLED, [sorted(self.settled), sorted(self.undecided)]):
            rest = _without_contrast(options)
            return [page.evaluate(AXE_RUN, rest)] if rest is not None else []
        results: list[dict[str, Any]] = page.evaluate(SAMPLED_CONTRAST, options)
        decided = page.evaluate(DECIDED)
        self.settled.update(decided["settled"])
        self.undecided.update(decided["undecided"])
        return results


AXE_RUN = "(options) => axe.run(document, {...options, resultTypes: ['violations']})"

# The rules an audit runs for nothing: axe sets the impact of every violation of a rule that
# declares one to the rule's own (its Wa() in axe.min.js: each failed check takes the rule's
# impact), and the audit shows serious and critical violations and those of `held` rules
# (_shown). So a rule declared moderate or minor and not held never shows a violation; 27
# of axe's 96 default rules are (region, heading-order, the landmark rules, ...), ~6 CPU-s
# at desktop and ~4 at phone width over the sample (region walks every element). UNSHOWN
# names them, from the axe the page runs; axe_audit leaves them out, unless KB_FULL=1.
# tests/site/test_phone_and_a11y.py holds, per push, that each violation's impact is its
# rule's and that an audit without them shows what the audit with every rule shows.
UNSHOWN = """(held) => axe._audit.rules
  .filter((rule) => ["moderate", "minor"].includes(rule.impact) && !held.includes(rule.id))
  .map((rule) => rule.id)"""

# axe's link-in-text-block passes a link when either of its two checks passes: that the
# link is told apart from its block by style ("link-in-text-block-style": an underline,
# border, outline, background image, weight, size or font the block does not have, read
# from computed styles) or by colour ("link-in-text-block": the foreground and background
# colours of the link and of its block, each found through axe's stack of the boxes under
# it, ~10 ms a link). axe runs both on every link; on this site's underlined links the
# colour check was ~7 of the ~9 CPU-s the rule took over the sample, for nothing: the
# style check had passed them. LINK_STYLE_FIRST makes the colour check pass at once where
# the style check passes, asking what the style check asks (axe's own elementIsDistinct, on
# the block it finds), so every link gets the rule's verdict of the full run: a link the
# style check does not pass is checked by colour as before, and a violation is reported
# with the same checks. tests/site/test_contrast_sample.py holds the verdicts equal per
# push on probed pages; KB_FULL=1 runs both checks on every link (axe_audit), and holds
# them equal on every audited page.
LINK_STYLE_FIRST = """() => {
  const check = axe._audit.checks["link-in-text-block"];
  if (check.kbColour) return false;
  const colour = (check.kbColour = check.evaluate);
  const blocks = ["block", "list-item", "table", "flex", "grid", "inline-block"];
  const isBlock = (e) => {
    const display = getComputedStyle(e).getPropertyValue("display");
    return blocks.includes(display) || display.startsWith("table-");
  };
  const parent = axe.commons.dom.getComposedParent;
  const styled = (node) => {  // what link-in-text-block-style-evaluate passes
    if (isBlock(node)) return false;
    let block = parent(node);
    while (block && block.nodeType === 1 && !isBlock(block)) block = parent(block);
    return Boolean(block) && axe.commons.color.elementIsDistinct(node, block);
  };
  check.evaluate = function (node, ...rest) {
    let passed = false;
    try {
      passed = styled(node);
    } catch {}  // the style check's own error is its own: the colour check runs as before
    return passed || colour.call(this, node, ...rest);
  };
  return true;
}"""

# What 390 px changes for axe, and so which rules the phone audit runs (when not KB_FULL=1).
# axe's verdict on a rule is a function of the DOM (tags, attributes, text), of the styles
# it reads and of the geometry of the rules that measure. Going from 1280 to 390 px on
# this site changes three things: (1) the stylesheet's phone @media block restyles boxes,
# not colours (test_phone_and_a11y.test_the_phone_layout_changes_no_colour) and hides
# nothing from a screen reader (no display: none, visibility or content-visibility:
# tests/site/test_phone_audit.py), but it lays the card tables out as blocks and clips
# their heads (visually hidden); (2) which boxes overflow and scroll; (3) what
# scrollers.js marks on the boxes that do: tabindex, role=region, an aria-label. So the
# phone audit runs the rules that read those: overflow (scrollable-region-focusable);
# roles, ARIA attributes, tab order and landmarks (what the marks change, and the
# structure rules whose verdict follows a child's role); the table rules; and the rules
# that ask whether text is visible on screen (a clipped head, a heading, a link's or a
# button's text). Every other rule reads only the DOM and the styles the phone block does
# not touch, and the desktop audit ran it on the same DOM: AXE_DOM reads, at each width,
# the DOM axe sees (less scrollers.js's marks) and which elements a screen reader skips;
# where the phone's differs from the desktop's (a script that builds another page at
# another width, a block hidden on a phone), the phone audit runs every rule (but colour)
# on that page. KB_FULL=1 runs every rule at phone width on every audited page, and
# tests/site/test_phone_audit.py shows there that both find the same faults, on the
# shipped site and on a copy with faults planted.
PHONE_RULES = [
    "scrollable-region-focusable",
    "aria-allowed-attr",
    "aria-allowed-role",
    "aria-conditional-attr",
    "aria-deprecated-role",
    "aria-hidden-focus",
    "aria-prohibited-attr",
    "aria-required-attr",
    "aria-required-children",
    "aria-required-parent",
    "aria-roles",
    "aria-text",
    "aria-valid-attr",
    "aria-valid-attr-value",
    "presentation-role-conflict",
    "nested-interactive",
    "tabindex",
    "region",
    "landmark-unique",
    "landmark-banner-is-top-level",
    "landmark-contentinfo-is-top-level",
    "landmark-main-is-top-level",
    "landmark-no-duplicate-banner",
    "landmark-no-duplicate-contentinfo",
    "landmark-no-duplicate-main",
    "landmark-one-main",
    "list",
    "listitem",
    "definition-list",
    "dlitem",
    "th-has-data-cells",
    "td-headers-attr",
    "scope-attr-valid",
    "table-duplicate-name",
    "empty-table-header",
    "empty-heading",
    "link-name",
    "button-name",
    "summary-name",
]
# A digest of the DOM axe reads on a page, less the attributes scrollers.js sets on the
# boxes it marks (which differ by width: the phone audit's own rules read them), and of
# which elements of <body> a screen reader skips (display: none, visibility, content
# visibility). Equal digests at both widths: the rules outside PHONE_RULES see one page.
AXE_DOM = (
    """() => {
"""
    + DIGEST
    + """  const clone = document.documentElement.cloneNode(true);
  for (const e of clone.querySelectorAll("[data-scroller]"))
    for (const a of ["tabindex", "data-scroller", "role", "aria-label"]) e.removeAttribute(a);
  const skipped = [];
  document.querySelectorAll("body *").forEach((e, i) => {
    if (!e.checkVisibility({visibilityProperty: true, contentVisibilityAuto: true}))
      skipped.push(i);
  });
  const text = clone.outerHTML + "|" + skipped.join(",");
  return digest(text);
}"""
)


def layout_options(options: dict[str, Any]) -> dict[str, Any]:
    """`options` (the phone audit's) narrowed to PHONE_RULES."""
    rest = {k: v for k, v in options.items() if k not in ("rules", "runOnly")}
    return {**rest, "runOnly": {"type": "rule", "values": PHONE_RULES}}


def _without(options: dict[str, Any], rules: AbstractSet[str]) -> dict[str, Any] | None:
    """`options` minus `rules`; None when those were all they ran."""
    only = options.get("runOnly")
    if only is not None:
        rest = [rule for rule in only["values"] if rule not in rules]
        return {**options, "runOnly": {**only, "values": rest}} if rest else None
    off = {rule: {"enabled": False} for rule in sorted(rules)}
    return {**options, "rules": {**options.get("rules", {}), **off}}


def _without_contrast(options: dict[str, Any]) -> dict[str, Any] | None:
    """`options` minus colour contrast; None when colour contrast was all they ran."""
    return _without(options, {CONTRAST})


def _runs_rule(options: dict[str, Any], rule: str) -> bool:
    """Whether axe run with `options` runs `rule` (one of the rules it runs by default)."""
    only = options.get("runOnly")
    if only is not None:
        return rule in only["values"]
    return bool(options.get("rules", {}).get(rule, {}).get("enabled", True))


def _runs_contrast(options: dict[str, Any]) -> bool:
    return _runs_rule(options, CONTRAST)


def axe_audit(options: dict[str, Any], held: set[str], *, sample: bool | None = None) -> Audit:
    """Run axe on a loaded page with `options`; keep serious, critical and `held` violations.

    The rules whose violations are never kept (UNSHOWN: declared moderate or minor, not
    held) are not run, unless KB_FULL=1.

    Colour contrast runs on one element of each style group (STYLE_GROUPS) that no page
    this audit ran on before settled (ContrastSample) unless `sample` is False (by default:
    unless KB_FULL=1); every other rule runs on the whole page, link-in-text-block's colour
    check only on the links its style check does not pass (LINK_STYLE_FIRST; on every link
    with KB_FULL=1).
    """
    sampled = (not full_run()) if sample is None else sample
    contrast = ContrastSample()  # shared by the pages this audit runs on, in their order
    style_first = not full_run() and _runs_rule(options, LINK_RULE)
    shown: list[dict[str, Any] | None] = []  # `options` less the rules never shown, once read

    def audit(page: Any) -> tuple[list[str], str]:
        if not shown:
            shown.append(run_options(page, options, held))
        run = shown[0]
        if run is None:  # every rule asked for is one whose violations are never shown
            return [], str(page.evaluate("() => axe.version"))
        if style_first:
            page.evaluate(LINK_STYLE_FIRST)
        if sampled and _runs_contrast(run):
            results = contrast.run(page, run)
        else:
            results = [page.evaluate(AXE_RUN, run)]
        found = [shown for result in results for shown in _shown(result, held)]
        if not results:  # every group settled on an earlier page, and no other rule
            return found, str(page.evaluate("() => axe.version"))
        return found, str(results[-1]["testEngine"]["version"])

    return audit


def run_options(page: Any, options: dict[str, Any], held: set[str]) -> dict[str, Any] | None:
    """`options` as axe_audit runs them with the axe of `page`: less the rules UNSHOWN names
    (none with KB_FULL=1); None when those were all they ran."""
    return _without(options, set() if full_run() else set(page.evaluate(UNSHOWN, sorted(held))))


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
    dom: bool = False,
    choose: Callable[[str], tuple[str, Audit]] | None = None,
) -> Visit:
    """Load `url` in `page` and record what the crawl reads there. `dom`: read AXE_DOM (before
    the audit); `choose`: the audit is picked by that digest (the phone audit), and named."""
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
    if dom or choose is not None:
        visit.dom = str(page.evaluate(AXE_DOM))
    if choose is not None:
        visit.rules, audit = choose(visit.dom)
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
    every_phone_rule: bool | None = None,
) -> Crawl:
    """Visit `pages` (every page of `site` when None) at phone width, `audited` at desktop
    width, `dark` in dark; `loaded` at desktop width too, without axe (what went wrong while
    each loaded, its first screen).

    `reads` names, per width ("phone", "desktop"), scripts evaluated on every page visited
    at that width in the light palette, each result kept under its name (`Visit.reads`):
    the tests that read a page's layout read it in the crawl instead of loading it again.
    `shots` takes screenshots of the pages it names at each width (light palette).
    `widths` picks the phone crawl, the desktop crawls (light and dark) or both.
    `every_phone_rule`: the phone audit runs every rule but colour on every audited page
    (by default with KB_FULL=1), not PHONE_RULES where the DOM is the desktop's.
    """
    reads = reads or {}
    phone: dict[str, Visit] = {}
    desktop: dict[str, Visit] = {}
    dark_visits: dict[str, Visit] = {}
    dark_audit = axe_audit(audits["desktop-dark"][2], held)
    with chromium() as browser:
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
                dom=True,  # the phone audit is picked by it
                unaudited=[path for path in loaded if path not in set(audited)],
                dark=None if full_run() else (dark_audit, set(dark), dark_visits),
            )
            drawn = set() if full_run() else set(audited)  # KB_FULL=1: each loaded in dark
            others = [path for path in dark if path not in drawn]
            dark_visits |= _file_crawl(browser, site, others, "dark", dark_audit, axe_source)
        if "phone" in widths:  # after the desktop crawl: its AXE_DOM digests pick the audit
            every = sorted(site.rglob("*.html")) if pages is None else pages
            digests = {page: visit.dom for page, visit in desktop.items() if visit.dom}
            phone = _phone_crawl(
                browser, site, every, set(audited), audits, held, axe_source, reads.get("phone"),
                shots, digests, full_run() if every_phone_rule is None else every_phone_rule,
            )  # fmt: skip
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
    digests: dict[str, str],
    every_rule: bool,
) -> dict[str, Visit]:
    phone: dict[str, Visit] = {}
    axe_width, _, phone_options = audits["phone-light"]
    assert axe_width == PHONE
    # One context and one tab, reused from page to page (a second context's renderer, ~0.6
    # CPU-s, costs more than axe's script injected into the few pages it does not run on, as
    # in the desktop crawl): axe's script only when some page is audited. An audited page is
    # loaded 900 px high, the others 800 px, as when each had a context of its own.
    tabs: list[tuple[Any, list[str]]] = []

    def tab(audit: bool) -> tuple[Any, list[str]]:
        viewport = {"width": PHONE, "height": 900 if audit else 800}
        if not tabs:
            context = browser.new_context(viewport=viewport)
            if audited & set(pages):
                context.add_init_script(script=axe_source)
            page = context.new_page()
            tabs.append((page, watch_all(page)))
        page = tabs[0][0]
        if page.viewport_size != viewport:
            page.set_viewport_size(viewport)
        return tabs[0]

    phone_audit = axe_audit(phone_options, held)
    layout_audit = axe_audit(layout_options(phone_options), held)

    def choose(desktop: str) -> Callable[[str], tuple[str, Audit]]:
        """PHONE_RULES where the page's AXE_DOM digest is the desktop's; else every rule."""
        if every_rule:
            return lambda _: ("full", phone_audit)
        return lambda dom: ("layout", layout_audit) if dom == desktop else ("full", phone_audit)

    with served(site) as base:
        for path in pages:
            relative = path.relative_to(site).as_posix()
            audit = path in audited
            phone[relative] = _visit(
                *tab(audit),
                base + relative,
                widest=True,
                choose=choose(digests.get(relative, "")) if audit else None,
                reads=reads,
                shot=shots.of(relative, PHONE) if shots is not None else None,
            )
    for page, _ in tabs:
        page.context.close()
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
    dom: bool = False,
    unaudited: Sequence[Path] = (),
    dark: tuple[Audit, set[Path], dict[str, Visit]] | None = None,
) -> dict[str, Visit]:
    """`pages` visited from file:// with `audit`, then `unaudited` without it (nor AXE_DOM),
    in one tab of one context (a second context's renderer costs more than axe's script
    injected into a page it does not run on).

    `dark`: an audit, the pages of `pages` it runs on and where their visits go: each is
    drawn in the dark palette once its light visit is done (in_dark), not loaded again."""
    if not pages and not unaudited:
        return {}
    context = browser.new_context(viewport={"width": DESKTOP, "height": 900}, color_scheme=scheme)
    if audit is not None and pages:
        context.add_init_script(script=axe_source)
    page = context.new_page()
    problems = watch_all(page)
    visits, run = {}, set(pages)
    for path in [*pages, *unaudited]:
        relative = path.relative_to(site).as_posix()
        audited = path in run
        visits[relative] = _visit(
            page,
            problems,
            path.as_uri(),
            first_screen=first_screen if path in (screened or set()) else "",
            audit=audit if audited else None,
            reads=reads,
            shot=shots.of(relative, DESKTOP) if shots is not None else None,
            dom=dom and audited,
        )
        if dark is not None and audited and path in dark[1]:
            dark[2][relative] = in_dark(page, problems, dark[0])
    context.close()
    return visits


# The dark palette is the stylesheet's alone (style.css's prefers-color-scheme block; no
# script of the site reads the colour scheme: tests/site/test_phone_and_a11y.py), so a page
# loaded in light and then drawn in dark is the page loaded in dark: the dark audit runs on
# the light crawl's page, not on a load of its own in a dark context (~0.4 CPU-s a page).
def in_dark(page: Any, problems: list[str], audit: Audit) -> Visit:
    """`audit` on the loaded `page` drawn in the dark palette (then light again)."""
    problems.clear()
    page.emulate_media(color_scheme="dark")
    visit = Visit(problems=list(problems))  # what the page did as its palette changed
    visit.axe, version = audit(page)
    visit.axe_versions.add(version)
    page.emulate_media(color_scheme="light")
    problems.clear()  # axe's fetch of the stylesheet, refused by the CSP, is not the page's
    return visit
