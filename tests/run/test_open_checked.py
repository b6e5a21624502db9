"""`open_kb(root, checked=result)`: the schema verdict of a validation, with no second schema run.

`kb build` validates, then opens the tree for its pages, whose typed views
(kb.kinds) exist only for records the schema stage passed. The verdict comes
from the validation's result: the schema findings of every file, those a record
waives (and so are not reported) included, kept in the run snapshot on that route.
The schema stage does not run again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import kb.checker
from kb.api import open_kb, validate
from kb.kinds import views
from tests.conftest import source_yaml, write_tree

WAIVER = "[{code: SC001, reason: the field is kept on purpose}]"


def tree(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "records",
        {
            "sources/ok.yaml": source_yaml("sources/ok"),
            "sources/bad.yaml": source_yaml("sources/bad", bogus="1"),
            "sources/waived.yaml": source_yaml("sources/waived", bogus="1", waivers=WAIVER),
            "sources/unused.yaml": source_yaml("sources/unused", waivers=WAIVER),
        },
    )


@pytest.mark.parametrize("remember", [True, False])  # the snapshot route and the full one
def test_the_views_see_the_records_the_validation_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, remember: bool
) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    root = tree(tmp_path)
    result = validate(root, remember=remember)
    reported = {(f.code, f.location.path.rsplit("/", 1)[-1]) for f in result.findings}
    assert ("SC001", "bad.yaml") in reported and ("SC001", "waived.yaml") not in reported
    staged: list[list[str]] = []
    real = kb.checker.schema_stage

    def counted(base: Any) -> Any:
        staged.append([record.id for record in base])
        return real(base)

    monkeypatch.setattr(kb.checker, "schema_stage", counted)
    opened = open_kb(root, checked=result)
    assert staged == []  # the validation's verdict, waived findings included
    passed = {record.id for record in opened if views(opened).passed(record)}
    assert passed == {"sources/ok", "sources/unused"}


def test_the_snapshot_keeps_the_waived_schema_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Served from the snapshot, after an edit elsewhere, and after an edit of the waiver."""
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    root = tree(tmp_path)

    def failing(result: Any) -> set[str]:
        return {f.location.path.rsplit("/", 1)[-1] for f in result.schema}

    first = validate(root)
    assert failing(first) == {"bad.yaml", "waived.yaml"}
    (waived,) = [f for f in first.schema if f.location.path.endswith("waived.yaml")]
    assert waived.code == "SC001" and waived.location.line > 0  # located, as reported ones
    assert validate(root).stats.mode == "snapshot"
    assert validate(root).schema == first.schema
    ok = root / "sources/ok.yaml"
    ok.write_text(ok.read_text() + "\n")
    again = validate(root)
    assert again.stats.mode in ("incremental", "snapshot")
    assert again.schema == first.schema
    path = root / "sources/waived.yaml"
    path.write_text(path.read_text().replace("bogus", "title_2"))  # still invalid, waived
    assert failing(validate(root)) == {"bad.yaml", "waived.yaml"}
    path.write_text(source_yaml("sources/waived", waivers=WAIVER))  # now valid
    assert failing(validate(root)) == {"bad.yaml"}


def test_without_a_result_there_is_no_verdict(tmp_path: Path) -> None:
    from kb.run import StageNotRun

    opened = open_kb(tree(tmp_path))
    with pytest.raises(StageNotRun):
        views(opened)
