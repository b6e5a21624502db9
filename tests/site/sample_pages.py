"""The pages of a built site the browser crawl loads per push: a deterministic sample per template.

What a page can do wrong in a browser (scroll sideways on a phone, log a console error,
fail a request, break an axe rule, push its verdict off the first screen) is a function
of the template that wrote it, of the components it shows (each a piece of markup, a
class, a script, a data attribute that a script or the stylesheet acts on) and of the
extremes of the data it renders: the longest unbreakable token outside a scroll region
(anywhere, and in a table cell, where the stylesheet does not break it), the widest
element of fixed width, the widest table (columns), the longest table (rows), the largest
page, the longest verdict and the most text before the first table. Two pages of one
template with the same components and smaller data lay out inside what the extreme
pages lay out, and run the same scripts on the same markup.

So the sample is, per template (the generator names it: `<body data-template>`,
kb/sitegen/render.py), the page at each extreme (the first in path order on a tie) and
then, greedily, the pages that add a feature (a tag, a class, an attribute name, a script
or stylesheet, an id of a control or section) no sampled page of that template shows yet,
until the sample shows every feature the template's pages show; plus the pages a caller
names (the tests' probes). Everything is read statically from the HTML (stdlib parser,
no browser), so the sample is fixed for a given site: never load- or time-dependent.
Its cost grows with templates and features, not with pages of an already covered template.

`KB_FULL=1` samples every page (crawl.full_run). tests/site/test_sample_pages.py checks
the premise per push on the built site (every template, every feature and every extreme
of the whole site is in the sample) and that a fault on a page outside the sample is
noticed by the static facts that pick it.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

from tests.site.crawl import full_run

# Regions that scroll inside themselves: a token inside them does not widen the page
# (chromium.WIDEST does not name them as culprits either).
SCROLLERS = {"pre"}
SCROLLER_CLASSES = {"table-scroll", "math-display", "inline-math"}
VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}
# ids whose element a script or a reader's eye acts on as a component (not a record's name).
COMPONENT_IDS = {"section", "form", "select", "input", "table", "nav", "details", "button"}
EXTREMES = ("token", "cell_token", "fixed_width", "columns", "rows", "size", "verdict", "lead")
TOKEN = re.compile(r"\S+")
# A record page's kind (its sections differ by kind): a feature of its own, so every kind
# of record is in the sample even where its components all appear on other kinds' pages.
KIND = re.compile(r'<p class="kind"><a href="[^"]*">([^<]*)</a>')


@dataclass
class PageFacts:
    """What the sample is chosen by: a page's template, its features and its extremes."""

    path: str  # relative to the site, posix
    template: str
    features: set[str] = field(default_factory=set)
    token: int = 0  # longest unbroken run of text outside a scroll region
    # ... of it in a table cell, not in code: the stylesheet breaks long words anywhere in
    # <main>, but in a table cell only a token wider than the cell (style.css `main td
    # { overflow-wrap: break-word }`, so columns keep their widths); the page with the
    # longest is where a cell would overflow first (test_phone_tables.py).
    cell_token: int = 0
    fixed_width: int = 0  # the largest width="..." outside a scroll region (px)
    columns: int = 0  # cells in the widest row of any table (colspan counted)
    rows: int = 0  # rows of the longest table
    size: int = 0  # bytes of the HTML
    verdict: int = 0  # characters of the verdict line (#verdict)
    lead: int = 0  # characters of text in <main> before its first table
    ids: set[str] = field(default_factory=set)  # every id (tests/site/linkcheck.py)
    links: list[str] = field(default_factory=list)  # every href, src and form action

    def extreme(self, name: str) -> int:
        return int(getattr(self, name))


# The generator's HTML, tag by tag: a comment or doctype, a start or end tag (attribute
# values quoted, so a ">" inside one is not the tag's end), or text. A script's or style's
# body is skipped whole. Faster than html.parser by ~4x on the shipped site's 18 MB.
PIECE = re.compile(
    r"<!--.*?-->|<![^>]*>|<(/?)([a-zA-Z][\w:-]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>|([^<]+|<)",
    re.S,
)
ATTRIBUTE = re.compile(r"""([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?""")
LINK, LINKS = ("href", "src"), {"form": ("action",)}  # as tests/site/linkcheck.py reads them
RAW = {"script": re.compile(r"</script\s*>", re.I), "style": re.compile(r"</style\s*>", re.I)}


def _attributes(text: str) -> dict[str, str]:
    return {
        m.group(1).lower(): html.unescape(m.group(2) or m.group(3) or m.group(4) or "")
        for m in ATTRIBUTE.finditer(text)
    }


def page_facts(site: Path, page: Path) -> PageFacts:
    """The template, features and extremes of one built page, read from its HTML."""
    text = page.read_text(encoding="utf-8")
    facts = PageFacts(path=page.relative_to(site).as_posix(), template="(none)")
    features = facts.features
    stack: list[str] = []  # the open tags
    tables: list[list[int]] = []  # per open table: [rows, cells of the open row]
    in_main = seen_table = False
    # How many open tags scroll, are the verdict, are a table cell, are code.
    open_: dict[str, int] = {"scrolls": 0, "verdict": 0, "cell": 0, "code": 0}
    kinds: list[tuple[str, ...]] = []  # per open tag, which of those it is
    position = 0
    while position < len(text):
        match = PIECE.match(text, position)
        assert match is not None  # the last alternative matches any character
        position = match.end()
        closing, tag, attributes, data = match.groups()
        if data is not None:
            if not data.strip():
                continue
            data = html.unescape(data)
            if not open_["scrolls"]:
                longest = max(len(t) for t in TOKEN.findall(data))
                facts.token = max(facts.token, longest)
                if open_["cell"] and not open_["code"]:
                    facts.cell_token = max(facts.cell_token, longest)
            if open_["verdict"]:
                facts.verdict += len(data.strip())
            if in_main and not seen_table:
                facts.lead += len(data.strip())
            continue
        if tag is None:
            continue  # a comment or doctype
        tag = tag.lower()
        if closing:
            if tag == "table" and tables:
                facts.rows = max(facts.rows, tables.pop()[0])
            if tag == "main":
                in_main = False
            for i in range(len(stack) - 1, -1, -1):  # close up to the matching open tag
                if stack[i] == tag:
                    for closed in kinds[i:]:
                        for kind in closed:
                            open_[kind] -= 1
                    del stack[i:], kinds[i:]
                    break
            continue
        values = _attributes(attributes)
        classes = values.get("class", "").split()
        if values.get("id"):
            facts.ids.add(values["id"])
        facts.links += (values[name] for name in LINKS.get(tag, LINK) if values.get(name))
        if tag == "body":
            facts.template = values.get("data-template") or "(none)"
        features.add(tag)
        features.update(f"{tag}.{c}" for c in classes)
        features.update(f"@{name}" for name in values if name not in ("class", "id"))
        if tag in COMPONENT_IDS and values.get("id"):
            features.add(f"#{values['id']}")
        if tag == "script" and values.get("src"):
            features.add("script:" + values["src"].rsplit("/", 1)[-1])
        if tag == "link" and values.get("href", "").endswith(".css"):
            features.add("css:" + values["href"].rsplit("/", 1)[-1])
        if tag == "main":
            in_main = True
        width = values.get("width", "")
        if width.isdigit() and not open_["scrolls"]:
            facts.fixed_width = max(facts.fixed_width, int(width))
        if tag == "table":
            tables.append([0, 0])
            seen_table = seen_table or in_main
        elif tag == "tr" and tables:
            tables[-1][0] += 1
            tables[-1][1] = 0
        elif tag in ("td", "th") and tables:
            span = values.get("colspan", "1")
            tables[-1][1] += int(span) if span.isdigit() else 1
            facts.columns = max(facts.columns, tables[-1][1])
        if tag in RAW:  # its body is not text a reader sees
            end = RAW[tag].search(text, position)
            position = end.end() if end else len(text)
            continue
        if tag in VOID or attributes.rstrip().endswith("/"):
            continue
        scrolls = tag in SCROLLERS or bool(SCROLLER_CLASSES & set(classes))
        is_verdict = values.get("id") == "verdict"
        marks = (
            ("scrolls",) * scrolls
            + ("verdict",) * is_verdict
            + ("cell",) * (tag in ("td", "th"))
            + ("code",) * (tag == "code")
        )
        stack.append(tag)
        kinds.append(marks)
        for mark in marks:
            open_[mark] += 1
    shown_kind = KIND.search(text)
    if shown_kind:
        features.add("kind:" + shown_kind.group(1))
    facts.size = len(text.encode("utf-8"))
    return facts


def site_facts(site: Path) -> list[PageFacts]:
    """Every page's facts, in path order."""
    return [page_facts(site, page) for page in sorted(site.rglob("*.html"))]


def choose(facts: list[PageFacts], named: AbstractSet[str] = frozenset()) -> list[str]:
    """The sample of `facts` (paths, sorted): per template its extremes and a feature cover."""
    chosen = {f.path for f in facts if f.path in named}
    by_template: dict[str, list[PageFacts]] = {}
    for fact in facts:
        by_template.setdefault(fact.template, []).append(fact)
    for pages in by_template.values():
        picked = [f for f in pages if f.path in chosen]
        for name in EXTREMES:
            top = max(f.extreme(name) for f in pages)
            if top and not any(f.extreme(name) == top for f in picked):
                picked.append(next(f for f in pages if f.extreme(name) == top))
        picked = picked or pages[:1]
        shown = set().union(*(f.features for f in picked))
        while True:
            best = max(pages, key=lambda f: len(f.features - shown))  # first on a tie
            if not best.features - shown:
                break
            picked.append(best)
            shown |= best.features
        chosen.update(f.path for f in picked)
    return sorted(chosen)


def chosen(site: Path, named: Sequence[Path] = ()) -> list[Path]:
    """The sample of `site`'s pages (with the `named` pages), KB_FULL=1 or not."""
    picked = choose(cached_facts(site), {p.relative_to(site).as_posix() for p in named})
    return [site / path for path in picked]


def sample(site: Path, named: Sequence[Path] = ()) -> list[Path]:
    """The pages of `site` the crawl loads: the sample (every page with KB_FULL=1)."""
    return sorted(site.rglob("*.html")) if full_run() else chosen(site, named)


@functools.cache
def cached_facts(site: Path) -> list[PageFacts]:
    """`site_facts`, read once per process (the built site is read-only in the tests)."""
    return site_facts(site)
