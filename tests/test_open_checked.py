"""`open_kb(root, checked=result)`: the schema verdict of a validation, with no second schema run.

`kb build` validates, then opens the tree for its pages, whose typed views
(kb.kinds) exist only for records the schema stage passed. The verdict comes
from the validation's result: the schema findings it reported, and, for a
record that waives a schema code (a waived finding is not reported), the schema
stage again on that record alone.
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
    assert staged == [["sources/unused", "sources/waived"]]  # only the records that waive
    passed = {record.id for record in opened if views(opened).passed(record)}
    assert passed == {"sources/ok", "sources/unused"}


def test_without_a_result_there_is_no_verdict(tmp_path: Path) -> None:
    from kb.run import StageNotRun

    opened = open_kb(tree(tmp_path))
    with pytest.raises(StageNotRun):
        views(opened)
