"""The one crawl of the site records what goes wrong (tests/site/crawl.py).

The browser tests assert that the crawl's record of the built site is clean; here a
small site with one fault per page shows that each fault lands in the record, at the
width and in the audit it belongs to, and that each page is visited where it should be.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.site.crawl import crawl_site, full_run
from tests.site.test_phone_and_a11y import AUDITS, HELD, axe_source

pytestmark = pytest.mark.browser

HEAD = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{0}</title>'
HEAD += '<meta name="viewport" content="width=device-width"></head><body><main><h1>{0}</h1>'
# A page's own policy, in its head: no inline script (tests/site/test_csp.py).
HEADS = {"inline.html": '<meta http-equiv="Content-Security-Policy" content="script-src \'self\'">'}
PAGES = {
    "ok.html": "<p>fine</p>",
    "wide.html": '<div style="width: 1000px">too wide for a phone</div>',
    "broken.html": '<img src="missing.png" alt="gone"><script>console.error("boom")</script>',
    "unlabelled.html": "<input>",
    "grey.html": '<p style="color: #bbb; background: #fff">grey on white</p>',
    "inline.html": "<script>document.title = 'inline'</script><p>refused</p>",
    # A box that scrolls on a phone only, not reachable by keyboard: a layout fault.
    "narrow.html": '<div style="overflow: auto"><p style="white-space: nowrap">'
    + "a line wider than a phone, " * 3
    + "</p></div>",
    # A script that writes another page on a phone: an image without alt text there only.
    "phoneonly.html": "<script>if (innerWidth < 600) document.write('<img src=\"data:,\">')"
    "</script>",
    "dim.html": "<style>p { color: #111; background: #fff }"
    " @media (prefers-color-scheme: dark) { p { background: #000 } }</style><p>dim</p>",
}
# The like (another colour: the crawl's contrast sample checks a style group once across its
# pages), audited in light too: the dark audit draws it in dark after its light visit.
PAGES["drawn.html"] = PAGES["dim.html"].replace("#111", "#181818")


def test_each_fault_is_recorded_at_its_width_and_in_its_audit(tmp_path: Path) -> None:
    for name, body in PAGES.items():
        head = HEAD.format(name).replace("</head>", HEADS.get(name, "") + "</head>")
        (tmp_path / name).write_text(head + body + "</main></body></html>")
    audited = [tmp_path / name for name in ("ok.html", "broken.html", "unlabelled.html")]
    audited += [tmp_path / "grey.html", tmp_path / "narrow.html", tmp_path / "phoneonly.html"]
    audited += [tmp_path / "drawn.html"]
    crawl = crawl_site(
        tmp_path,
        audited,
        [tmp_path / "ok.html", tmp_path / "dim.html", tmp_path / "drawn.html"],
        axe_source=axe_source(),
        audits=AUDITS,
        held=HELD,
        first_screen="() => ({title: document.title, width: innerWidth})",
        first_screen_pages=[tmp_path / "ok.html"],
    )
    assert sorted(crawl.phone) == sorted(PAGES)  # every page at phone width
    assert sorted(crawl.desktop) == sorted(p.name for p in audited)
    assert sorted(crawl.dark) == ["dim.html", "drawn.html", "ok.html"]

    phone, desktop, dark = crawl.phone, crawl.desktop, crawl.dark
    assert all(v.widest is not None for v in phone.values())
    wide = phone["wide.html"].widest
    assert wide is not None and wide[0] > wide[1] and wide[2]  # scrolls sideways, culprit named
    ok = phone["ok.html"].widest
    assert ok is not None and ok[0] <= ok[1] and ok[2] == []

    broken = phone["broken.html"].problems
    assert any("HTTP 404" in p and "missing.png" in p for p in broken), broken  # over http
    assert any("boom" in p for p in broken), broken
    assert any("missing.png" in p for p in desktop["broken.html"].problems)  # from file://
    assert phone["ok.html"].problems == [] and desktop["ok.html"].problems == []
    # A CSP violation is a console error: the crawl holds test_csp's pages to the policy.
    inline = phone["inline.html"].problems
    assert any("Content Security Policy" in p for p in inline), inline

    # axe runs on the audited pages only, and at phone width without colour contrast.
    assert phone["wide.html"].axe is None and phone["ok.html"].axe == []
    assert all(v.axe_versions == {"4.12.1"} for v in desktop.values())
    # An unlabelled input is the DOM's fault, found at desktop width (at phone width too
    # with KB_FULL=1; per push the phone audit's rules are the layout's: PHONE_RULES).
    for visits in (phone, desktop) if full_run() else (desktop,):
        found = visits["unlabelled.html"].axe
        assert found is not None and any(v.startswith("label: ") for v in found), found
    grey_desk, grey_phone = desktop["grey.html"].axe, phone["grey.html"].axe
    assert grey_desk is not None and any(v.startswith("color-contrast: ") for v in grey_desk)
    assert grey_phone == []

    # At phone width axe runs PHONE_RULES where the DOM is the desktop's, and finds the box
    # that scrolls on a phone only; every rule where a script wrote another DOM on a phone.
    layout = "full" if full_run() else "layout"  # KB_FULL=1: every rule on every page
    assert phone["ok.html"].rules == phone["narrow.html"].rules == layout
    assert phone["phoneonly.html"].rules == "full"
    assert desktop["narrow.html"].axe == desktop["phoneonly.html"].axe == []
    narrow, only = phone["narrow.html"].axe, phone["phoneonly.html"].axe
    assert narrow is not None and any(v.startswith("scrollable-region-focusable: ") for v in narrow)
    assert only is not None and any(v.startswith("image-alt: ") for v in only), only

    # The first screen is read where asked, at desktop width; the dark audit sees the dark.
    assert desktop["ok.html"].first_screen == {"title": "ok.html", "width": 1280}
    assert desktop["grey.html"].first_screen is None
    # In a dark context (dim.html, not audited in light) and drawn in dark after its light
    # visit (drawn.html, clean in light).
    for name in ("dim.html", "drawn.html"):
        dim = dark[name].axe
        assert dim is not None and any(v.startswith("color-contrast: ") for v in dim), dim
    assert desktop["drawn.html"].axe == [] and dark["ok.html"].axe == []
    assert all(v.axe_versions == {"4.12.1"} and v.problems == [] for v in dark.values())
