"""`[tool.kb]` in pyproject.toml: found from the records folder upward; bad keys are exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import link_yaml, source_yaml, write_tree
from tests.inprocess import kb_in_process

LINK = link_yaml("basis: derived, source: sources/nowhere")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with records/ (one RF001 error, one PR003 warning) and no configuration yet."""
    files = {
        "sources/doc.yaml": source_yaml(notes='"about 17 units"'),
        "interconnects/link.yaml": LINK,
    }
    write_tree(tmp_path / "records", files)
    return tmp_path


def configure(folder: Path, table: str) -> None:
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "records"\n\n[tool.kb]\n' + table, encoding="utf-8"
    )


def codes(cwd: Path, *args: str) -> tuple[int, list[str]]:
    done = kb_in_process(["validate", "--output-format", "json", *args], cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, [f["code"] for f in json.loads(done.stdout)["findings"]]


def test_without_configuration_both_findings(project: Path) -> None:
    assert codes(project) == (1, ["RF001", "PR003"])


def test_ignore_and_fail_on_from_the_table(project: Path) -> None:
    configure(project, 'ignore = ["RF"]\nfail-on = "warning"\n')
    assert codes(project) == (1, ["PR003"])  # the warning fails the run now


def test_select_from_the_table_and_the_command_line_replaces_it(project: Path) -> None:
    configure(project, 'select = ["PR003"]\n')
    assert codes(project) == (0, ["PR003"])
    assert codes(project, "--select", "RF") == (1, ["RF001"])


def test_found_from_a_subfolder_and_above_the_records(project: Path) -> None:
    configure(project, 'select = ["PR"]\n')
    assert codes(project / "records" / "sources") == (0, ["PR003"])


def test_a_pyproject_without_the_table_is_passed_over(project: Path) -> None:
    configure(project, 'select = ["PR"]\n')
    inner = project / "records"
    (inner / "pyproject.toml").write_text("[tool.other]\nx = 1\n", encoding="utf-8")
    assert codes(project) == (0, ["PR003"])


def test_output_format_from_the_table(project: Path) -> None:
    configure(project, 'output-format = "concise"\n')
    done = kb_in_process(["validate"], cwd=project)
    assert not any(line.startswith("    hint:") for line in done.stdout.splitlines())
    assert kb_in_process(["validate", "--isolated"], cwd=project).stdout.count("    hint:") == 2


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('selct = ["RF"]\n', "unknown key 'selct' (did you mean 'select'?)"),
        ('select = ["RF999"]\n', "select: unknown rule code or prefix: RF999"),
        ('select = "RF"\n', "select must be a list of rule codes"),
        ('fail-on = "never"\n', "fail-on = 'never': expected one of error, warning, info"),
        ('output-format = "text"\n', "output-format = 'text': expected one of full, concise"),
        ("select = [\n", "not valid TOML"),
    ],
)
def test_a_bad_table_is_a_usage_error_naming_the_file(
    project: Path, table: str, message: str
) -> None:
    configure(project, table)
    done = kb_in_process(["validate"], cwd=project)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.startswith(f"kb: {project / 'pyproject.toml'}"), done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_isolated_ignores_a_bad_table(project: Path) -> None:
    configure(project, 'selct = ["RF"]\n')
    assert kb_in_process(["validate", "--isolated"], cwd=project).returncode == 1
