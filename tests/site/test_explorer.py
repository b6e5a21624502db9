"""The planner on the site (issue 36 items 3, 4): its pages, its data, kb plan's numbers.

Read from the run's one `kb build` of the shipped records (`built_site`, the default
menus: tests/site/explorer_site.py). Structural: every page of the menus is written; a
worked table shows, option for option, what `kb plan --format json` prints for the same
question (exact values), its answer first; the explorer's data holds every option of
every question; record pages link the tables; an unchanged rebuild asks kb plan nothing.
A build without the planner has none of it, and the menus' bound on models is stated on
the site: tests/site/test_explorer_menus.py. The browser side is
tests/site/test_explorer_browser.py.
"""

from __future__ import annotations

import html as html_lib
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from kb.sitegen import explorer, plan_pages, urls
from tests.site.explorer_site import MENUS, data_of, explorer_site, plan_json

H100 = "hardware/nvidia-h100-sxm"
LLAMA = "models/llama-3.1-70b"
DEEPSEEK = "models/deepseek-v3"


@pytest.fixture(scope="module")
def site(repo_copy: Path, built_site: Path) -> tuple[Path, Path]:
    return explorer_site(repo_copy, built_site)


def _rows(page: str) -> dict[str, str]:
    """Each option row of a worked table by its id (`option-NAME`)."""
    return dict(re.findall(r'<tr id="option-([^"]+)">(.*?)</tr>', page, re.S))


def _text(fragment: str) -> str:
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def test_every_page_of_the_menus_is_written(site: tuple[Path, Path]) -> None:
    records, out = site
    shipped = sorted(f"models/{p.stem}" for p in (records / "models").glob("*.yaml"))
    assert len(shipped) <= explorer.MODEL_LIMIT  # so the default menus hold every one
    expected = [urls.EXPLORE, urls.PLANS]
    expected += [urls.plan_hardware(h) for h in MENUS.hardware]
    for model in shipped:
        expected += [urls.explore_data(model), urls.plan_model(model)]
        expected += [
            urls.plan_table(model, h, c, n) for h in MENUS.hardware for c, n in MENUS.shapes
        ]
    missing = [p for p in expected if not (out / p).is_file()]
    assert missing == []
    assert sorted(p for p in (out / "explore" / "data").rglob("*") if p.is_file()) == sorted(
        out / urls.explore_data(m) for m in shipped
    )
    assert (out / "static/explore.js").is_file() and (out / "static/explore.css").is_file()
    # the page says which models it covers: every one of the shipped tree, none left out
    page = (out / urls.EXPLORE).read_text(encoding="utf-8")
    assert f"The menus cover {len(shipped)} models on {len(MENUS.hardware)} accelerators" in page
    assert "not priced here" not in page
    assert 'id="left-out"' not in (out / urls.PLANS).read_text(encoding="utf-8")


@pytest.mark.parametrize("shape", [(8, 1), (16, 2)])
def test_a_worked_table_is_kb_plans_report_option_for_option(
    site: tuple[Path, Path], shape: tuple[int, int]
) -> None:
    records, out = site
    count, nodes = shape
    query = MENUS.table_query(LLAMA, H100, count, nodes)
    report = plan_json(records, *query.argv())
    page = (out / urls.plan_table(LLAMA, H100, count, nodes)).read_text(encoding="utf-8")
    rows = _rows(page)
    assert list(rows) == [o["name"] for o in report["options"]]  # kb plan's order
    for option in report["options"]:
        row = rows[option["name"]]
        assert f"state-{option['status']}" in row
        shown = re.findall(r'data-exact="([^"]*)"', row)
        expected = [
            (option["values"].get(key) or {}).get("exact") for key, _ in plan_pages.TABLE_FIGURES
        ]
        assert shown == [e for e in expected if e is not None]
    assert report["summary"]["feasible"] > 0
    best = min(
        (o for o in report["options"] if o["status"] == "feasible"),
        key=lambda o: Fraction(o["values"]["tpot"]["exact"]),
    )
    answer = page[page.index('id="answer"') : page.index('id="table"')]
    assert f'Best TPOT: <a href="#option-{best["name"]}">{best["name"]}</a>' in answer
    assert f"{report['summary']['feasible']} of {len(report['options'])} mappings fit" in answer
    assert page.index('id="answer"') < page.index('id="table"')  # the answer first


def test_an_infeasible_model_says_no_mapping_fits_with_the_gib(site: tuple[Path, Path]) -> None:
    records, out = site
    query = MENUS.table_query(DEEPSEEK, H100, 8, 1)
    report = plan_json(records, *query.argv())
    assert report["summary"]["feasible"] == 0
    least = min(report["options"], key=lambda o: Fraction(o["memory"]["need_per_device"]["exact"]))
    page = (out / urls.plan_table(DEEPSEEK, H100, 8, 1)).read_text(encoding="utf-8")
    start = page.index('class="plan-verdict"')
    verdict = _text(page[start : page.index("</p>", start)])
    assert "No mapping fits." in verdict
    assert f"needs {least['memory']['need_gib']} per device ({least['name']})" in verdict
    assert f"a device has {least['memory']['have_gib']}" in verdict


def test_the_data_holds_every_option_of_every_question_as_kb_plan_prints_it(
    site: tuple[Path, Path],
) -> None:
    records, out = site
    data = data_of(out, LLAMA)
    query = explorer.Query(LLAMA, H100, 16, 2, 1, 2048, 256, "engines/vllm", MENUS.inter_link)
    report = plan_json(records, *query.argv())
    names = [o["name"] for o in report["options"]]
    key = f"{H100}|16|2|{{}}|1|2048/256|engines/vllm"
    menu = [e[0] for e in data["options"][f"{H100}|16|2"]]
    assert sorted(n for n in menu if key.format(n) in data["results"]) == sorted(names)
    assert set(names) < set(menu)  # batch 1 leaves out dp > 1; batch 64 has them
    keys = [key.format(name) for name in names]
    strings = data["strings"]
    for key, option in zip(keys, report["options"], strict=True):
        found = data["results"][key]
        assert found["status"] == option["status"]
        assert found["need"] == [
            option["memory"]["need_per_device"]["exact"],
            option["memory"]["need_gib"],
        ]
        for (name, _), figure in zip(explorer.FIGURES, found["figures"], strict=True):
            value = option["values"].get(name)
            assert (figure[0] if figure else None) == (value["exact"] if value else None)
        assert [strings[r[0]] for r in found["rows"]] == [r["name"] for r in option["rows"]]
        assert [r[1] for r in found["rows"]] == [r["value"]["exact"] for r in option["rows"]]
        assert [strings[p] for p in found["problems"]] == option["problems"]
    at_batch_1 = [k for k in data["results"] if k.startswith(f"{H100}|16|2|") and "|1|" in k]
    assert len(at_batch_1) == len(names)  # no option kb plan did not print


def test_record_pages_link_the_tables_of_what_was_planned(site: tuple[Path, Path]) -> None:
    _, out = site
    model_page = (out / urls.record_page(LLAMA)).read_text(encoding="utf-8")
    assert f'class="plan-link" href="../../{urls.plan_model(LLAMA)}"' in model_page
    # at the top: under the title, before the record's identifiers and its headline results
    link = model_page.index('class="plan-link"')
    assert model_page.index("</h1>") < link < model_page.index('class="record-id"')
    assert f'href="../../{urls.EXPLORE}">explore placements</a>' in model_page
    hw_page = (out / urls.record_page(H100)).read_text(encoding="utf-8")
    assert f'href="../../{urls.plan_hardware(H100)}"' in hw_page
    assert hw_page.index('class="plan-link"') < hw_page.index('class="record-id"')
    other = (out / urls.record_page("hardware/nvidia-l40s")).read_text(encoding="utf-8")
    assert 'class="plan-link"' not in other  # not a common node: no table to link
    assert f'href="{urls.EXPLORE}">explorer</a>' in (out / urls.HOME).read_text(encoding="utf-8")


def test_an_unchanged_rebuild_asks_kb_plan_nothing(
    site: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Into a copy of the shared site (the crawl reads the original): every planner file kept."""
    import shutil

    from kb.sitegen.build import build
    from tests.site.conftest import load

    records, shared = site
    out = shutil.copytree(shared, tmp_path / "_site")

    def refused(*args: Any) -> Any:
        raise AssertionError("kb plan was asked again")

    monkeypatch.setattr(plan_pages, "model_pass", refused)
    kb, findings = load(records)
    shown = [f for f in findings if f.severity.value != "error"]
    report = build(kb, out, findings=shown, plans=MENUS)
    assert urls.explore_data(LLAMA) in report.kept
    assert not [p for p in report.written if p.startswith(("explore/data/", "plans/"))]


def test_kb_plans_error_becomes_the_tables_answer() -> None:
    table = plan_pages.worked_table("MODEL 'models/x': no such record")
    assert table["answer"] == "Not planned: MODEL 'models/x': no such record"
    assert table["options"] == []


def test_receipt_rows_are_the_end_to_end_validations_rows(site: tuple[Path, Path]) -> None:
    """Each row shows what `kb list --end-to-end` holds it to: one prediction per row, on
    every model's data (a row fitted to an engine's rate shows `calibration` there too).

    The rows are `kb list --end-to-end`'s as kept by the build (kb.ledger.kept: the copy's
    store, keyed by everything they read), not priced again; tests/ledger/test_kept.py
    holds the kept rows equal to a cold pricing."""
    from kb.ledger.endtoend import report_row
    from kb.ledger.kept import end_to_end_rows, stored
    from tests.site.conftest import load

    records, out = site
    kb, _ = load(records)
    assert stored(kb) is not None  # the build kept them: this test reads, it does not price

    def model_of(receipt: str, index: int) -> Any:
        record = kb.get(receipt)
        return record.get("results")[index].get("model") or record.get("model")

    expected: dict[str, dict[tuple[str, int], dict[str, Any]]] = {}
    for r in end_to_end_rows(kb):
        expected.setdefault(model_of(r.receipt, r.index), {})[(r.receipt, r.index)] = report_row(r)
    models = sorted(f"models/{p.stem}" for p in (records / "models").glob("*.yaml"))
    states = set()
    for model in models:
        rows, wanted = data_of(out, model)["receipts"], expected.get(model, {})
        assert {(r["receipt"], r["row"]) for r in rows} == set(wanted), model
        for row in rows:
            shown = wanted[(row["receipt"], row["row"])]
            assert (row["state"], row["predicted"], row["error"]) == (
                shown["state"],
                shown["predicted"],
                shown["error"],
            )
            assert row["figure"] == explorer.MEASURES.get(shown["measures"])
            states.add(row["state"])
    assert LLAMA in models and expected.get(LLAMA) and "calibration" in states


MIXTRAL = "models/mixtral-8x7b"  # four of its rows calibrate an engine's MoE rate


def test_the_explorers_rows_priced_per_model_are_the_kept_rows(site: tuple[Path, Path]) -> None:
    """A build that prices a few models (no kept rows in its run) prices each model's rows
    itself: the same rows as the kept ones (`kb list --end-to-end`'s), calibration included.

    Per push LLAMA's and MIXTRAL's rows; with KB_FULL=1 every model's."""
    from kb.ledger.kept import end_to_end_rows, in_run
    from tests.sample import full
    from tests.site.conftest import load

    records, _ = site
    kept, _ = load(records)
    end_to_end_rows(kept)  # from the build's store
    priced, _ = load(records)  # another run's: it never asked for the kept rows
    assert in_run(kept) is not None and in_run(priced) is None
    every = sorted(f"models/{p.stem}" for p in (records / "models").glob("*.yaml"))
    for model in every if full() else [LLAMA, MIXTRAL]:
        assert explorer.receipt_rows(priced, model) == explorer.receipt_rows(kept, model), model
    assert in_run(priced) is None  # priced per model: nothing kept in its run
    states = [r["state"] for r in explorer.receipt_rows(priced, MIXTRAL)]
    assert states.count("calibration") == 4


def test_the_planner_pages_carry_the_policy_and_nothing_inline(site: tuple[Path, Path]) -> None:
    from tests.site.test_csp import INLINE_SCRIPT, INLINE_STYLE, META

    _, out = site
    pages = [out / urls.EXPLORE, *sorted((out / "plans").rglob("*.html"))]
    models, hardware = len(list((out / "explore" / "data").iterdir())), len(MENUS.hardware)
    tables = models * (1 + hardware * len(MENUS.shapes))  # each model's index and tables
    assert len(pages) == 1 + 1 + hardware + tables  # explorer, indexes
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert text.count(META) == 1, page
        assert not INLINE_SCRIPT.search(text) and not INLINE_STYLE.search(text), page


def test_the_explorer_script_evaluates_no_text() -> None:
    from kb.resources import theme_dir

    text = (theme_dir() / "static" / "explore.js").read_text(encoding="utf-8")
    source = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
    assert "kbExplore" in source
    banned = ("eval(", "new Function", "Function(", "innerHTML", "outerHTML", "fetch(")
    banned += ("insertAdjacentHTML", "document.write", "XMLHttpRequest", "import(")
    assert [b for b in banned if b in source] == []
