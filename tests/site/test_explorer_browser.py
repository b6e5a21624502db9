"""The explorer in chromium: the numbers it shows are `kb plan --format json`'s (issue 36 item 3).

At least ten configurations (infeasible, unpriced and feasible mappings; one and two
nodes; two batches; two models) are set through the page's controls' code path
(window.kbExplore.set) and every figure, the memory verdict and every ledger row
shown is compared with the same option of `kb plan --format json` for the same
question: the exact value (data-exact) and kb's text for it. The page loads under the
site's CSP from file:// at desktop width and over http at phone width (the crawl of
tests/site/crawl.py), and passes the axe audits the other pages pass. The site is the run's
one `kb build` of the shipped records (`built_site`: tests/site/explorer_site.py). Timing
is printed by bench/explorer.py, never asserted here.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from kb.sitegen import explorer, urls
from tests.site.chromium import PHONE, WIDEST, chromium, watched
from tests.site.crawl import Crawl
from tests.site.explorer_site import MENUS, explorer_site, plan_json
from tests.site.sample_pages import sample
from tests.site.test_phone_and_a11y import AUDITS, AXE_VERSION, HELD, axe_source

pytestmark = pytest.mark.browser

H100 = "hardware/nvidia-h100-sxm"
QUESTIONS = [  # (model, devices, nodes, batch)
    ("models/llama-3.1-70b", 16, 2, 64),
    ("models/llama-3.1-70b", 8, 1, 1),
    ("models/deepseek-v3", 8, 1, 64),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as instance:
        yield instance


@pytest.fixture(scope="module")
def site(repo_copy: Path, built_site: Path) -> tuple[Path, Path]:
    return explorer_site(repo_copy, built_site)


def _query(model: str, count: int, nodes: int, batch: int) -> explorer.Query:
    prompt, output = MENUS.lengths[0]
    inter = MENUS.inter_link if nodes > 1 else None
    return explorer.Query(model, H100, count, nodes, batch, prompt, output, MENUS.engines[0], inter)


def _configurations(records: Path) -> list[tuple[dict[str, str], dict[str, Any]]]:
    """Per question, its first two infeasible, first unpriced and first three feasible options."""
    found = []
    for model, count, nodes, batch in QUESTIONS:
        query = _query(model, count, nodes, batch)
        report = plan_json(records, *query.argv())
        picked: list[dict[str, Any]] = []
        for status, wanted in (("infeasible", 2), ("unpriced", 1), ("feasible", 3)):
            picked += [o for o in report["options"] if o["status"] == status][:wanted]
        for option in picked:
            values = {
                "model": model,
                "hardware": H100,
                "shape": explorer.shape_key(count, nodes),
                "degrees": option["name"],
                "batch": str(batch),
                "lengths": explorer.lengths_key(query.input_tokens, query.output_tokens),
                "engine": query.engine or "",
            }
            found.append((values, option))
    return found


SHOWN = """() => {
  const out = document.getElementById("explore-result");
  const pair = (e) => [e.getAttribute("data-exact"), e.textContent];
  const exact = (sel) => { const e = out.querySelector(sel); return e ? pair(e) : null; };
  const figures = {};
  out.querySelectorAll("td[data-figure]").forEach(e => {
    figures[e.getAttribute("data-figure")] = pair(e);
  });
  const rows = [...out.querySelectorAll("table.ledger:not(.explore-receipts) tbody tr")].map(
    tr => [tr.getAttribute("data-row"), ...pair(tr.children[1])]);
  return {state: out.getAttribute("data-state"), key: out.getAttribute("data-key"),
    need: exact('[data-figure="need_per_device"]'), have: exact('[data-figure="have_per_device"]'),
    verdict: out.querySelector(".explore-verdict").textContent, figures, rows};
}"""


def test_the_explorer_shows_kb_plans_numbers_for_ten_configurations_and_more(
    browser: Any, site: tuple[Path, Path]
) -> None:
    records, out = site
    configurations = _configurations(records)
    assert len(configurations) >= 10
    # unpriced ones where the menus still hold one: since EP and the reference node's network
    # are priced (session 12), these questions have none
    assert {"infeasible", "feasible"} <= {o["status"] for _, o in configurations}
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems = watched(page)
    page.goto((out / urls.EXPLORE).as_uri())
    compared = 0
    for values, option in configurations:
        page.evaluate("m => new Promise(done => kbExplore.ready(m, done))", values["model"])
        page.evaluate("v => kbExplore.set(v)", values)
        shown = page.evaluate(SHOWN)
        where = f"{values['model']} {values['shape']} {values['degrees']} batch {values['batch']}"
        assert shown["state"] == option["status"], where
        memory = option["memory"]
        assert shown["need"] == [memory["need_per_device"]["exact"], memory["need_gib"]], where
        assert shown["have"] == [memory["have_per_device"]["exact"], memory["have_gib"]], where
        if option["status"] == "infeasible":
            assert shown["verdict"].startswith("Does not fit."), where
            assert shown["figures"] == {} and shown["rows"] == [], where
        if option["status"] == "feasible":
            for key, _ in explorer.FIGURES:
                value = option["values"].get(key)
                expected = (
                    [
                        value["exact"],
                        explorer.quantity_text(Fraction(value["exact"]), value["unit"]),
                    ]
                    if value
                    else ["", "n/a"]
                )
                assert shown["figures"][key] == expected, f"{where}: {key}"
            assert shown["rows"] == [
                [r["name"], r["value"]["exact"], explorer.shown(r["value"])[1]]  # type: ignore[index]
                for r in option["rows"]
            ], where
        compared += 1
    assert compared >= 10
    assert problems == []  # no CSP refusal, no failed load, no script error


def test_a_reader_changes_the_batch_with_the_keyboard(
    browser: Any, site: tuple[Path, Path]
) -> None:
    _, out = site
    page = browser.new_page(viewport={"width": PHONE, "height": 900})
    problems = watched(page)
    hash_ = "#model=models/llama-3.1-70b&hardware=hardware/nvidia-h100-sxm&shape=8|1&batch=1"
    page.goto((out / urls.EXPLORE).as_uri() + hash_)
    page.wait_for_selector("#explore-result[data-state]")
    before = page.get_attribute("#explore-result", "data-key")
    assert "|1|2048/256|" in before
    page.focus("select[name=batch]")
    page.keyboard.press("ArrowDown")
    page.wait_for_function(
        f"document.getElementById('explore-result').getAttribute('data-key') !== {before!r}"
    )
    after = page.get_attribute("#explore-result", "data-key")
    following = MENUS.batches[MENUS.batches.index(1) + 1]  # the menu's next batch
    assert f"|{following}|2048/256|" in after
    assert page.evaluate("location.hash").count(f"batch={following}") == 1  # can be linked
    scroll, width, culprits = page.evaluate(WIDEST)
    assert scroll <= width, culprits
    assert problems == []


# The planner's pages whose audits are read here: tests/site/crawl_fixtures.py names them to
# the one crawl of the site, so they are audited at both widths whatever the sample picks.
AUDITED = (
    urls.EXPLORE,
    urls.PLANS,
    urls.plan_hardware(H100),
    urls.plan_model("models/llama-3.1-70b"),
    urls.plan_table("models/llama-3.1-70b", H100, 16, 2),
    urls.plan_table("models/deepseek-v3", H100, 8, 1),
)


@pytest.mark.parametrize("audit", ["desktop-light", "phone-light"])
def test_the_planner_pages_pass_the_axe_audits(site_crawl: Crawl, audit: str) -> None:
    """In the crawl of the site (tests/site/crawl.py): every rule at desktop width, the phone
    audit (crawl.PHONE_RULES where the DOM is the desktop's, every rule but colour elsewhere
    and with KB_FULL=1) at phone width."""
    visits = site_crawl.desktop if audit == "desktop-light" else site_crawl.phone
    found = []
    for relative in AUDITED:
        visit = visits[relative]
        assert visit.axe is not None and visit.axe_versions == {AXE_VERSION}, relative
        found += (f"{relative}: {problem}" for problem in [*visit.problems, *visit.axe])
    assert found == []


def test_a_feasible_result_passes_the_axe_audit_at_phone_width(
    browser: Any, site: tuple[Path, Path]
) -> None:
    """The rendered result (figures, ledger, receipts) is audited, not only the empty form."""
    _, out = site
    width, scheme, options = AUDITS["phone-light"]
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    context.add_init_script(script=axe_source())
    page = context.new_page()
    hash_ = "#model=models/llama-3.1-70b&hardware=hardware/nvidia-h100-sxm&shape=16|2"
    page.goto((out / urls.EXPLORE).as_uri() + hash_ + "&degrees=dp2-tp8&batch=64")
    page.wait_for_selector("#explore-result[data-state=feasible]")
    assert page.locator("#explore-result table.ledger tbody tr").count() > 0
    result = page.evaluate(
        "(options) => axe.run(document, {...options, resultTypes: ['violations']})", options
    )
    serious = [
        v["id"]
        for v in result["violations"]
        if v["impact"] in ("serious", "critical") or v["id"] in HELD
    ]
    context.close()
    assert serious == []


def test_no_planner_page_scrolls_sideways_on_a_phone(
    phone_crawl: Crawl, site: tuple[Path, Path]
) -> None:
    """The planner's pages of the crawl's sample (tests/site/sample_pages.py: per template,
    the page at each extreme of its data and a cover of its features; every page with
    KB_FULL=1), whose premise tests/site/test_sample_pages.py holds on this site.

    Read from the crawl's visit of each page at phone width (tests/site/crawl.py: the same
    WIDEST measure, its console errors, page errors and failed requests), not from a load of
    its own: a planner page of the sample the crawl did not visit fails here (KeyError).
    """
    _, out = site
    wide, problems = [], []
    planner = [p for p in sample(out) if p.relative_to(out).parts[0] in ("explore", "plans")]
    assert out / urls.EXPLORE in planner and len(planner) > 4  # each template's extremes
    for path in planner:
        visit = phone_crawl.phone[path.relative_to(out).as_posix()]
        assert visit.widest is not None, path
        scroll, width, culprits = visit.widest
        if scroll > width:
            wide.append(f"{path.relative_to(out)}: {scroll} px ({culprits})")
        problems += (f"{path.relative_to(out)}: {problem}" for problem in visit.problems)
    assert wide == []
    assert problems == []
