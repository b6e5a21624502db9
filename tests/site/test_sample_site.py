"""The premise of the rebuild tests' per-push sample (tests/site/sample_site.py).

The sample stands for the shipped records because it has every kind of edge along which
a page reads another record that the shipped records have, and its build renders every
template of the theme that a build without the plan menus renders; it must also check
without an error, as the shipped records do.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.model import KINDS
from tests.site.conftest import REPO, load
from tests.site.sample_site import page_edges, templates_loaded, write_records
from tests.small_tree import shipped_kb

# Rendered only when a build is given the plan menus (`kb build`; tests/commands/
# test_build_plans.py): the rebuild tests build without them, on any tree.
PLAN_TEMPLATES = {
    "explore.html",
    "plan_table.html",
    "plans_hardware.html",
    "plans_index.html",
    "plans_model.html",
}


def test_the_rebuild_sample_has_every_edge_kind_and_template_and_checks_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped_stores: Path
) -> None:
    from kb.sitegen.build import build
    from tests.warm import seed

    seed(shipped_stores, tmp_path / ".kb-cache")  # the SymPy work spared; every file checked
    kb, findings = load(write_records(tmp_path / "records", full=False))
    assert [f for f in findings if f.severity.value == "error"] == []
    assert {record.kind for record in kb} == set(KINDS)
    shipped = page_edges(shipped_kb())
    assert len(shipped) > 100  # the measure sees the shipped tree's edges (141 today)
    assert shipped - page_edges(kb) == set()
    monkeypatch.setenv("KB_JOBS", "1")  # every page rendered in this process, where it is seen
    with templates_loaded() as loaded:
        build(kb, tmp_path / "_site")
    theme = REPO / "kb" / "theme" / "templates"
    assert {p.name for p in theme.glob("*.html")} - loaded == PLAN_TEMPLATES
