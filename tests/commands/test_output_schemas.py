"""The JSON outputs hold to the versioned schemas shipped in kb/data/output/ (the contract)."""

from __future__ import annotations

import fnmatch
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import REPO, source_yaml, write_tree
from tests.inprocess import kb_in_process

OUTPUT = REPO / "kb" / "data" / "output"


def schema(name: str) -> Draft202012Validator:
    document = json.loads((OUTPUT / name).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(document)
    return Draft202012Validator(document)


def holds(name: str, instance: Any) -> None:
    errors = [e.message for e in schema(name).iter_errors(instance)]
    assert not errors, errors


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Errors, warnings and a finding with related locations (a duplicate id)."""
    top = tmp_path_factory.mktemp("broken")
    files = {
        "sources/doc.yaml": source_yaml(notes='"about 17 units"', superseded_by="sources/gone"),
        "sources/twin.yaml": source_yaml("sources/doc"),
        "sources/bad.yaml": "kind: source\nid: sources/bad\ntitle: [\n",
    }
    write_tree(top / "records", files)
    return top


def test_validate_json_holds_to_validate_v1(broken: Path) -> None:
    done = kb_in_process(["validate", "--output-format", "json"], cwd=broken)
    document = json.loads(done.stdout)
    holds("validate.v1.schema.json", document)
    findings = document["findings"]
    assert {f["severity"] for f in findings} >= {"error", "warning"}
    assert any(f["related"] for f in findings)  # the schema's `related` items are exercised


def test_a_drifted_report_fails_the_schema(broken: Path) -> None:
    document = json.loads(kb_in_process(["validate", "--format", "json"], cwd=broken).stdout)
    document["findings"][0]["severity"] = "fatal"
    assert list(schema("validate.v1.schema.json").iter_errors(document))


def test_statistics_json_holds_to_statistics_v1(broken: Path) -> None:
    done = kb_in_process(["validate", "--statistics", "--output-format", "json"], cwd=broken)
    rows = json.loads(done.stdout)
    assert rows
    holds("statistics.v1.schema.json", rows)


def test_rules_json_holds_to_rules_v1() -> None:
    done = kb_in_process(["rules", "--format", "json"], cwd=REPO)
    rows = json.loads(done.stdout)
    holds("rules.v1.schema.json", rows)
    rf001 = next(row for row in rows if row["code"] == "RF001")
    assert rf001["name"] == "dangling-reference" and rf001["hint"]


def test_the_schemas_ship_in_the_package() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the suite also runs on 3.10
        import tomli as tomllib
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["kb"]
    names = sorted(OUTPUT.glob("*.schema.json"))
    assert {
        "plan.v1.schema.json",
        "rules.v1.schema.json",
        "statistics.v1.schema.json",
        "validate.v1.schema.json",
    } <= {p.name for p in names}  # the rest: tests/commands/test_json_contracts.py
    for path in names:
        relative = path.relative_to(REPO / "kb").as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), relative
