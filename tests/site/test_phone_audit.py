"""The phone audit runs the axe rules that read what 390 px changes (tests/site/crawl.py).

Per push, statically: the premise of crawl.PHONE_RULES, that the phone layout hides
nothing from a screen reader (the stylesheet's phone block sets no display: none,
visibility or content-visibility) and that PHONE_RULES are rules axe runs by default
(so the phone audit runs no rule the full audit did not). Per push in chromium
(tests/site/test_crawl.py): a box that scrolls on a phone only is found by PHONE_RULES,
and a page whose script writes another DOM on a phone gets every rule there.

With KB_FULL=1: on the per-push sample of the built site, and on three of its pages
with a fault planted on each, in a copy (an unlabelled input, a box that scrolls on a
phone only, a script that writes an image without alt text on a phone only), the crawl
with the per-push phone audit and the crawl with every rule at phone width find the
same faults (page and rule, at either width).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.site.crawl import PHONE_RULES, Crawl, crawl_site, full_run
from tests.site.crawl_fixtures import named
from tests.site.sample_pages import chosen
from tests.site.test_phone_and_a11y import AUDITS, HELD, _phone_block, axe_source

HIDING = re.compile(r"display\s*:\s*none|visibility\s*:|content-visibility\s*:")


def test_the_phone_layout_hides_nothing_from_a_screen_reader() -> None:
    """Why the rules outside PHONE_RULES see one page at both widths (with AXE_DOM's check)."""
    css = (REPO / "kb" / "theme" / "static" / "style.css").read_text(encoding="utf-8")
    block = _phone_block(css)
    assert "table.claims" in block  # the phone block was found
    assert HIDING.findall(block) == []
    assert HIDING.findall("p { display: none }") and HIDING.findall("p { visibility: hidden }")


def test_the_phone_rules_are_rules_axe_runs_by_default() -> None:
    source = axe_source()
    for rule in PHONE_RULES:
        found = re.search(r'\{id:"' + re.escape(rule) + r'",[^{}]*?tags:\[([^\]]*)\]', source)
        assert found is not None, rule
        definition, tags = found.group(0), found.group(1)
        assert "enabled:!1" not in definition and "experimental" not in tags, rule
        assert "deprecated" not in tags, rule
    assert len(set(PHONE_RULES)) == len(PHONE_RULES)


def _faults(crawl: Crawl) -> set[str]:
    """Every page's axe violations at either width, as "page: rule"."""
    found = set()
    for visits in (crawl.desktop, crawl.phone):
        for page, visit in visits.items():
            found.update(f"{page}: {v.split(':', 1)[0]}" for v in visit.axe or [])
    return found


def _both_ways(site: Path, pages: list[Path]) -> tuple[set[str], set[str]]:
    def crawl(every_rule: bool) -> Crawl:
        return crawl_site(
            site,
            pages,
            [],
            axe_source=axe_source(),
            audits=AUDITS,
            held=HELD,
            first_screen="",
            first_screen_pages=[],
            pages=pages,
            every_phone_rule=every_rule,
        )

    sampled = crawl(False)
    assert {v.rules for v in sampled.phone.values()} <= {"layout", "full"}
    return _faults(sampled), _faults(crawl(True))


PLANTED = {
    "label": "<input>",
    "scrollable-region-focusable": '<div style="overflow: auto"><p style="white-space: nowrap">'
    + "a line wider than a phone, " * 3
    + "</p></div>",
    "image-alt": "<script>if (innerWidth < 600) document.write('<img src=\"data:,\">')</script>",
}


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not full_run(), reason="the sample crawled twice: KB_FULL=1")
def test_the_phone_audit_finds_what_every_rule_finds(built_site: Path, tmp_path: Path) -> None:
    pages = chosen(built_site, named(built_site))  # what the crawl audits per push
    sampled, every = _both_ways(built_site, pages)
    print("\nshipped, per push:", sorted(sampled), "\nshipped, every rule:", sorted(every))
    assert sampled == every

    copy = tmp_path / "site"
    shutil.copytree(built_site, copy)
    targets = [copy / p.relative_to(built_site) for p in pages if "records" in p.parts][:3]
    for fault, page in zip(PLANTED.values(), targets, strict=True):
        text = page.read_text(encoding="utf-8")
        # the site's policy refuses inline scripts and style attributes: the planted pages
        # have none
        text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
        page.write_text(text.replace("</main>", fault + "</main>", 1), encoding="utf-8")
    sampled, every = _both_ways(copy, targets)
    print("\nplanted, per push:", sorted(sampled), "\nplanted, every rule:", sorted(every))
    assert sampled == every
    for (rule, _), page in zip(PLANTED.items(), targets, strict=True):
        assert f"{page.relative_to(copy).as_posix()}: {rule}" in sampled, (rule, sorted(sampled))
