"""kb.lsp.engine: checking buffers against the disk snapshot says what a full run would.

For each edit, the engine's findings on every file of the tree (re-checked or kept
from the snapshot) equal `kb validate`'s full run with the buffer saved, while it
re-checks only the files the edit can reach.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.api import validate
from kb.lsp.engine import Engine
from tests.conftest import source_yaml, write_tree
from tests.diff.test_knowledge_diff import USER, _figure

EDITS = {
    "broken equation": ("flops/user.yaml", USER.replace('expr: "x = k*I"', 'expr: "x = k*I +"')),
    "figure changed": ("flops/source-figure.yaml", _figure(8, 2)),
    "source renamed away": (
        "sources/doc.yaml",
        source_yaml().replace("sources/doc", "sources/dok"),
    ),
    "new file naming nothing": (
        "flops/new.yaml",
        USER.replace("flops/user", "flops/new").replace("sources/doc", "sources/none"),
    ),
    "not YAML": ("flops/user.yaml", "kind: [\n"),
}


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    records = tmp_path / "records"
    files = {"sources/doc.yaml": source_yaml(), "flops/source-figure.yaml": _figure(4, 1)}
    files |= {f"flops/user{i}.yaml": USER.replace("flops/user", f"flops/user{i}") for i in range(6)}
    files["flops/user.yaml"] = USER
    write_tree(records, files)
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return records


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_check_equals_a_full_run_with_the_buffer_saved(root: Path, edit: str) -> None:
    name, text = EDITS[edit]
    engine = Engine(root)
    engine.snapshot()
    checked = engine.check({root / name: text.encode()})
    (root / name).write_text(text)
    full = validate(root, remember=False)
    files = {f"records/{p.relative_to(root).as_posix()}" for p in root.rglob("*.yaml")}
    for shown in sorted(files):
        expected = [f for f in full.findings if f.location.path == shown]
        assert checked.findings(shown) == expected, shown
    assert checked.rechecked < len(files) or edit == "source renamed away"


def test_a_buffer_equal_to_the_disk_checks_nothing(root: Path) -> None:
    engine = Engine(root)
    checked = engine.check({root / "flops" / "user.yaml": USER.encode()})
    assert checked.rechecked == 0 and checked.affected() == set()


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_the_edited_file_first_then_the_rest_equals_one_run(root: Path, edit: str) -> None:
    name, text = EDITS[edit]
    engine = Engine(root)
    plan = engine.plan({root / name: text.encode()})
    edited = plan.affected & plan.dirty.keys()
    assert edited == {f"records/{name}"}
    split = engine.run(plan, edited) | engine.run(plan, plan.affected - edited)
    assert split == Engine(root).check({root / name: text.encode()}).fresh
