"""The explorer tests' site: the run's one `kb build` of the shipped records (`built_site`).

`kb build` writes the placement explorer and the worked tables by default, so the site
the crawl reads (tests/site/conftest.py `built_site`, built once a run with the default
menus, kb.sitegen.explorer.DEFAULT_MENUS) is the one the explorer tests read: what a
reader of the default site gets, not a build of smaller menus of the tests' own. `kb plan`
answers the same questions from the same records copy (`plan_json`): kb plan prices
from flop classes it names and from receipts it scans by pattern, so only the shipped
tree itself prices as the site does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kb.sitegen.explorer import DEFAULT_MENUS

MENUS = DEFAULT_MENUS  # what `kb build` prices


def explorer_site(repo_copy: Path, built_site: Path) -> tuple[Path, Path]:
    """(records folder, site folder): the shipped records and `kb build`'s site of them."""
    return repo_copy / "records", built_site


def plan_json(records: Path, *args: str) -> dict[str, Any]:
    """`kb plan ARGS --format json` on `records`, parsed (exit 0, or 1: nothing fits)."""
    from kb.cli import cli

    result = CliRunner().invoke(cli, ["plan", *args, "--format", "json", "--root", str(records)])
    assert result.exit_code in (0, 1), result.output
    found: dict[str, Any] = json.loads(result.output)
    return found


def data_of(site: Path, model: str) -> dict[str, Any]:
    """A model's explorer data file, parsed (the script assigns one JSON object)."""
    from kb.sitegen import urls

    text = (site / urls.explore_data(model)).read_text(encoding="utf-8")
    payload = text.split(f"window.KB_EXPLORE_DATA[{json.dumps(model)}] = ", 1)[1]
    found: dict[str, Any] = json.loads(payload.rstrip().removesuffix(";"))
    return found


def priced_models(monkeypatch: Any) -> list[str]:
    """The ids of the models the planner prices from now on, in order (each model pass counted).

    KB_JOBS=1 keeps the passes in this process, where the count is kept.
    """
    import kb.sitegen.plan_pages as plan_pages

    monkeypatch.setenv("KB_JOBS", "1")
    priced: list[str] = []
    real = plan_pages.model_pass

    def counted(kb: Any, model: Any, hardware: Any, menus: Any) -> Any:
        priced.append(model.id)
        return real(kb, model, hardware, menus)

    monkeypatch.setattr(plan_pages, "model_pass", counted)
    return priced
