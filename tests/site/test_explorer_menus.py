"""`kb build` writes the planner's pages by default, for a bounded number of models, and says so.

The default menus (kb.sitegen.explorer.DEFAULT_MENUS) hold at most MODEL_LIMIT models,
those the most records reference (`chosen_models`): on a generated corpus of more models
than that, the menus hold exactly MODEL_LIMIT, none left out outranks one chosen, and the
site states the rule, names every model it left out and how to ask for any of them (kb
plan). A build through the command prices only the chosen models (counted), and
`--no-plans` writes none of the planner's pages nor links to them. On the shipped tree
every model is in the menus: tests/site/test_explorer.py.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import kb.sitegen.explorer as explorer
import kb.sitegen.plan_pages as plan_pages
from kb.cli import cli
from kb.sitegen import urls
from tests.site.conftest import REPO, small_corpus
from tests.site.explorer_site import priced_models


def corpus(folder: Path, n: int) -> Path:
    """bench/make_corpus.py's n records (5% of them models) under folder/records."""
    sys.path.insert(0, str(REPO / "bench"))
    import make_corpus

    make_corpus.write_corpus(n, folder)
    return folder / "records"


def test_the_default_menus_hold_at_most_the_limit_the_most_named_first(tmp_path: Path) -> None:
    from kb.api import open_kb
    from kb.reads import graph_of

    kb = open_kb(corpus(tmp_path / "corpus", 600)).freeze()  # 30 models
    models = kb.of_kind("model")
    assert len(models) > explorer.MODEL_LIMIT
    menus = explorer.DEFAULT_MENUS
    chosen = explorer.planned_models(kb, menus)
    missing = explorer.left_out(kb, menus)
    assert len(chosen) == explorer.MODEL_LIMIT  # the bound: what a cold build prices
    assert [m.id for m in chosen] == sorted(m.id for m in chosen)  # shown by id
    assert {m.id for m in chosen} | {m.id for m in missing} == {m.id for m in models}
    assert len(missing) == len(models) - explorer.MODEL_LIMIT

    def named(model: Any) -> tuple[int, str]:
        return (-len(graph_of(kb).referrers(model.id)), model.id)

    assert max(named(m) for m in chosen) < min(named(m) for m in missing)
    text = explorer.left_out_text(kb, menus)
    assert f"the {explorer.MODEL_LIMIT} models that the most records name" in text
    assert f"{len(missing)} more models of this knowledge base are not priced here" in text
    assert "kb plan MODEL --on ACCELERATOR" in text
    assert text in explorer.summary(kb, menus)
    # which models are chosen is part of the build's salt (a model page shows its link)
    assert plan_pages.menus_salt(kb, menus) != menus.identity()
    every = dataclasses.replace(menus, model_limit=None)
    assert explorer.left_out(kb, every) == [] and explorer.left_out_text(kb, every) == ""
    assert plan_pages.menus_salt(kb, every) == every.identity()


def build(records: Path, out: Path, *extra: str) -> None:
    result = CliRunner().invoke(cli, ["build", "--root", str(records), "--out", str(out), *extra])
    assert result.exit_code == 0, result.output


def test_kb_build_prices_the_chosen_models_and_lists_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(
        explorer, "DEFAULT_MENUS", dataclasses.replace(explorer.DEFAULT_MENUS, model_limit=1)
    )
    records = small_corpus(tmp_path / "corpus")  # two models
    priced = priced_models(monkeypatch)
    out = tmp_path / "site"
    build(records, out)  # the default: the planner's pages
    assert len(priced) == 1
    models = sorted(f"models/{p.stem}" for p in (records / "models").glob("*.yaml"))
    [other] = [m for m in models if m != priced[0]]
    assert (out / urls.explore_data(priced[0])).is_file()
    assert not (out / urls.explore_data(other)).exists()
    assert not (out / urls.plan_model(other)).exists()
    planned = (out / urls.record_page(priced[0])).read_text(encoding="utf-8")
    assert 'class="plan-link"' in planned
    page = (out / urls.record_page(other)).read_text(encoding="utf-8")
    assert 'class="plan-link"' not in page  # not priced: no table to link
    summary = (out / urls.EXPLORE).read_text(encoding="utf-8")
    assert "The menus hold the 1 model that the most records name: 1 more model of" in summary
    index = (out / urls.PLANS).read_text(encoding="utf-8")
    left = index[index.index('id="left-out"') :]
    assert f'href="../{urls.record_page(other)}"' in left  # named, linked to its record
    assert f'href="../{urls.record_page(priced[0])}"' not in left

    bare = tmp_path / "bare"
    build(records, bare, "--no-plans")
    assert not (bare / "explore").exists() and not (bare / "plans").exists()
    assert ">explorer</a>" not in (bare / urls.HOME).read_text(encoding="utf-8")
    assert 'class="plan-link"' not in (bare / urls.record_page(priced[0])).read_text()
    assert len(priced) == 1  # nothing priced without the plans
