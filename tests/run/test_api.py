"""kb.api takes a records root as a str as well as a Path (as Python's own path APIs do)."""

from __future__ import annotations

from pathlib import Path

from kb.api import open_kb, validate


def _tree(tmp_path: Path) -> Path:
    records = tmp_path / "records" / "sources"
    records.mkdir(parents=True)
    (records / "a.yaml").write_text(
        "id: sources/a\nkind: source\nversion: 1\ntitle: A\nurl: https://example.org/a\n"
        "history:\n  - version: 1\n    date: 2026-12-06\n    change: created\n"
    )
    return tmp_path / "records"


def test_a_str_root_gives_what_a_path_root_gives(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    as_path = validate(root, remember=False).findings
    as_str = validate(str(root), [str(root / "sources" / "a.yaml")], remember=False).findings
    assert as_str == as_path
    assert open_kb(str(root)).get("sources/a") is not None
