"""Every flop-class page opens with its answer.

In chromium at 1280 x 900 (file://; the one crawl of the site: the flop classes of its
sample per push, every one with KB_FULL=1; the HTML of every one per push), on every
flop-class page: the first screen holds the verdict
line (at most two lines) and at least one headline result with a value; the seed's
first screen holds a B* value from its grid (kb calc's b_star_tp, refused above the
ridge as kb calc refuses it); errata have a section of their own, not inside the key
results; the calculator comes before the derivations and claims.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.site.conftest import SEED_FLOP
from tests.site.crawl import Crawl, full_run

pytestmark = pytest.mark.browser

FIRST_SCREEN = """() => {
  const v = document.querySelector("#verdict"), a = document.querySelector("#answer");
  const box = v ? v.getBoundingClientRect() : null;
  const lines = v ? Math.round(box.height / parseFloat(getComputedStyle(v).lineHeight)) : 0;
  const values = [];
  if (a) for (const c of a.querySelectorAll("td.num")) {
    const b = c.getBoundingClientRect();
    if (/[0-9]/.test(c.textContent) && b.bottom <= innerHeight && b.height > 0)
      values.push(c.textContent.trim());
  }
  return {verdict: v && box.bottom <= innerHeight ? v.textContent.trim() : "", lines, values};
}"""
SEED_GRID = """() => [...document.querySelectorAll("#answer table.headline-grid tbody tr")]
  .flatMap(r => [...r.cells].slice(2))
  .filter(c => c.getBoundingClientRect().bottom <= innerHeight)
  .filter(c => /^[0-9.]+$/.test(c.textContent.trim()))
  .map(c => c.textContent.trim())"""


def _flop_pages(site: Path) -> list[Path]:
    return [
        p
        for p in sorted((site / "records" / "flops").glob("*.html"))
        if p.stem not in ("index", "xss-probe")
    ]


def test_every_flop_class_opens_with_its_verdict_and_a_headline_value(
    desktop_crawl: Crawl, built_site: Path
) -> None:
    """Each flop page's first screen as the one crawl of the site read it (crawl_fixtures.py).

    Per push the flop classes of the crawl's sample: per template the page with the longest
    verdict, the most text before its first table and the largest page (what pushes the
    answer down or the verdict past two lines), and every component; every flop class with
    KB_FULL=1. The DOM facts it rests on (a verdict, then the headline results with a
    value) are read on every flop page: test_every_flop_page_puts_its_verdict_then_values_first.
    """
    pages = [p.relative_to(built_site).as_posix() for p in _flop_pages(built_site)]
    assert len(pages) >= 20
    read = [relative for relative in pages if relative in desktop_crawl.desktop]
    assert len(read) == len(pages) if full_run() else len(read) >= 3, read
    problems, missing = [], []
    for relative in read:
        visit = desktop_crawl.desktop[relative]
        shown = visit.first_screen
        assert shown is not None, relative
        problems += visit.problems
        if not shown["verdict"] or shown["lines"] > 2 or not shown["values"]:
            missing.append((relative, shown))
    assert problems == []
    assert missing == []


VERDICT = re.compile(r'<p class="record-verdict[^"]*" id="verdict">([^<]+)</p>')
VALUE = re.compile(r'<td class="num"[^>]*>[^<]*[0-9]')


def test_every_flop_page_puts_its_verdict_then_values_first(built_site: Path) -> None:
    """On every flop page, in the HTML: a verdict line in the record's header, then the
    headline results (#answer) with at least one number, before anything else of the page."""
    wrong = []
    for page in _flop_pages(built_site):
        html = page.read_text(encoding="utf-8")
        verdict = VERDICT.search(html)
        answer = html.find('<section class="answer" id="answer"')
        main = html[html.index("<main") :]
        if verdict is None or not verdict.group(1).strip() or answer < verdict.end():
            wrong.append(f"{page.name}: no verdict before the answer")
            continue
        first = main.index("<section") == main.index('<section class="answer"')
        if not VALUE.search(html[answer : html.index("</section>", answer)]) or not first:
            wrong.append(f"{page.name}: the answer has no value or is not the first section")
    assert wrong == []
    assert VALUE.search('<td class="num">237</td>') and not VALUE.search('<td class="num">-</td>')


def test_the_seed_opens_with_b_star_values(desktop_crawl: Crawl) -> None:
    """The seed's first screen at 1280 x 900 as the crawl's visit read it (crawl_fixtures.py
    `reads`: SEED_GRID, the grid's caption and the verdict)."""
    visit = desktop_crawl.desktop[f"records/{SEED_FLOP}.html"]
    read = visit.reads["seed"]
    values, caption, verdict = read["grid"], read["caption"], read["verdict"]
    assert "B*" in caption and values, values
    assert "237" in values  # Llama 2 7B on H100 SXM at TP8: the class's own claim b-star-tp8
    assert ".;" not in verdict and "\n" not in verdict.strip()
    assert visit.problems == []


def test_the_seed_grid_is_what_kb_calc_gives(built_site: Path, repo_copy: Path) -> None:
    from kb.equations.evaluate import OutsideValidity, binding_spec, evaluate
    from kb.numfmt import significant
    from kb.sitegen.headline import CROSSOVER, _bindings

    from .conftest import load

    kb, _ = load(repo_copy / "records")
    record = kb.get(SEED_FLOP)
    html = (built_site / "records" / f"{SEED_FLOP}.html").read_text(encoding="utf-8")
    refused = 0
    for model in CROSSOVER.models:
        for accelerator in CROSSOVER.accelerators:
            for degree in CROSSOVER.degrees:
                given = {
                    k: binding_spec(v) for k, v in _bindings(model, accelerator, degree).items()
                }
                try:
                    value = evaluate(kb, record, CROSSOVER.target, given).value
                except OutsideValidity:
                    refused += 1
                    continue
                assert f'<td class="num">{significant(value)}</td>' in html
    assert 0 < refused < 30
    assert html.count('<span class="refused">above ridge</span>') == refused


def test_errata_have_their_own_section_after_the_calculator(built_site: Path) -> None:
    html = (built_site / "records" / f"{SEED_FLOP}.html").read_text(encoding="utf-8")
    key = html.index('id="key-results"') if 'id="key-results"' in html else -1
    answer, calc = html.index('id="answer"'), html.index('id="calculator"')
    equations, errata = html.index('id="equations"'), html.index('<section id="errata"')
    assert answer < calc < equations < errata
    if key >= 0:
        key_section = html[key : html.index("</section>", key)]
        assert 'class="errata"' not in key_section
