"""Program formats name files from the project folder, whatever the working directory; SARIF help.

GitHub reads annotation and code-scanning paths from the repository root, so json,
github and sarif give `records/...` from any folder kb runs in; SARIF's rules carry
`help` (GitHub shows it) and no dead `informationUri`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft4Validator

from tests.conftest import FIXTURES, run_kb, source_yaml, write_tree

BROKEN = "records/sources/doc.yaml"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("project")
    write_tree(top / "records", {"sources/doc.yaml": source_yaml(superseded_by="sources/gone")})
    (top / "elsewhere").mkdir()
    return top


@pytest.mark.parametrize("cwd", [".", "records/sources", "elsewhere"])
def test_json_paths_are_from_the_project_folder(project: Path, cwd: str) -> None:
    args = ["validate", "--output-format", "json"]
    if cwd == "elsewhere":
        args += ["--root", "../records"]
    done = run_kb(args, cwd=project / cwd)
    assert {f["path"] for f in json.loads(done.stdout)["findings"]} == {BROKEN}, done.stdout


def test_github_paths_from_a_subfolder(project: Path) -> None:
    done = run_kb(["validate", "--output-format", "github"], cwd=project / "records/sources")
    assert done.stdout.startswith(f"::error file={BROKEN},line="), done.stdout


def test_text_stays_relative_to_the_working_directory(project: Path) -> None:
    done = run_kb(["validate", "--output-format", "concise"], cwd=project / "records/sources")
    assert done.stdout.startswith("doc.yaml:"), done.stdout  # clickable where you are


def test_sarif_names_its_root_rules_carry_help_and_no_dead_link(project: Path) -> None:
    done = run_kb(["validate", "--output-format", "sarif"], cwd=project / "records/sources")
    document = json.loads(done.stdout)
    schema = json.loads((FIXTURES / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    assert not list(Draft4Validator(schema).iter_errors(document))
    (run,) = document["runs"]
    assert run["originalUriBaseIds"]["PROJECTROOT"]["uri"] == project.resolve().as_uri() + "/"
    artifact = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": BROKEN, "uriBaseId": "PROJECTROOT"}
    driver = run["tool"]["driver"]
    assert "kb.invalid" not in json.dumps(driver)
    for rule in driver["rules"]:
        assert rule["help"]["text"].strip() and f"kb explain {rule['id']}" in rule["help"]["text"]
        assert rule["help"]["markdown"].strip()
