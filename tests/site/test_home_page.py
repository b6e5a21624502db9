"""The home page answers and teaches; the validation detail lives on a status page of its own.

In chromium at 1280 x 900 (file://): the first screen names at least three
questions, each a link to a page the site has; the narrative walks seed 000's
ledger to a worked placement whose numbers kb.ledger computed; the findings list
is on status.html, not on the home page.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.site.chromium import chromium, watched

pytestmark = pytest.mark.browser

FIRST_SCREEN = """() => {
  const shown = [];
  for (const a of document.querySelectorAll(".home-questions a")) {
    const box = a.getBoundingClientRect();
    if (box.bottom <= window.innerHeight && box.width > 0)
      shown.push([a.textContent.trim(), a.getAttribute("href")]);
  }
  return shown;
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as instance:
        yield instance


def test_the_first_screen_names_three_questions_with_links(browser: Any, built_site: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems = watched(page)
    page.goto((built_site / "index.html").as_uri())
    questions = page.evaluate(FIRST_SCREEN)
    page.close()
    assert problems == []
    assert len(questions) >= 3, questions
    for text, href in questions:
        assert text.endswith("?"), text
        target, _, anchor = href.partition("#")
        page_file = built_site / target
        assert page_file.is_file(), href
        if anchor:
            assert f'id="{anchor}"' in page_file.read_text(encoding="utf-8"), href


def test_the_narrative_reaches_a_worked_example_computed_by_the_ledger(built_site: Path) -> None:
    html = (built_site / "index.html").read_text(encoding="utf-8")
    assert html.count("<math") >= 3  # T_raw, T_exposed, T_total rendered as maths
    assert 'id="worked-example"' in html
    assert "placements/tp-llama-3.1-70b-h100-tp4-vs-tp8.html" in html


def test_the_worked_example_shows_what_kb_ledger_prints(built_site: Path, repo_copy: Path) -> None:
    from kb.ledger.analysis import analyze_placement
    from kb.ledger.render import text
    from kb.sitegen import home

    from .conftest import load

    kb, _ = load(repo_copy / "records")
    example = home.worked_example(kb)
    assert example is not None
    printed = text(analyze_placement(kb.get(example["record"]), kb))  # what `kb ledger` prints
    html = (built_site / "index.html").read_text(encoding="utf-8")
    for side in example["sides"]:
        for key in ("useful", "exposed", "total"):
            assert side[key] in html and f" {side[key]} " in printed, (side, key)
    assert f"{example['comparisons'][0]['speedup']}&times; faster" in html


def test_the_validation_detail_is_on_the_status_page(built_site: Path) -> None:
    home_html = (built_site / "index.html").read_text(encoding="utf-8")
    status_html = (built_site / "status.html").read_text(encoding="utf-8")
    assert 'class="findings"' not in home_html
    assert 'href="status.html"' in home_html
    assert "Findings per rule" in status_html and 'class="findings"' in status_html
