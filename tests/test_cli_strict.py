"""A command line as strict as ruff: unknown codes, bad output paths, records/ found upward."""

from __future__ import annotations

import os
from pathlib import Path

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.commands import _codes
from tests.conftest import run_kb, source_yaml, write_tree

BROKEN_SOURCE = source_yaml().replace("status: draft", "status: nonsense")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A records tree with one schema error (SC001 at line 5) in tmp_path."""
    write_tree(tmp_path / "records", {"sources/doc.yaml": BROKEN_SOURCE})
    return tmp_path


# ---------------------------------------------------------------- rule codes


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--select", "SCOO1"], "unknown rule code or prefix: SCOO1; did you mean SC001?"),
        (["--ignore", "rf01"], "unknown rule code or prefix: RF01; did you mean RF001?"),
        (["--select", "SC,XQ"], "unknown rule code or prefix: XQ"),
        (["--select", "SC", "--select", "ZZ9,ZZ8"], "unknown rule codes or prefixes: ZZ9, ZZ8"),
        (["--select", "SC,"], "an empty code"),
        (["--ignore", ""], "an empty code"),
    ],
)
def test_unknown_codes_are_usage_errors_naming_them(
    tree: Path, args: list[str], message: str
) -> None:
    done = run_kb(["validate", *args], cwd=tree)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert done.stdout == ""


def test_a_typo_in_select_no_longer_hides_the_findings(tree: Path) -> None:
    """The measured case: `--select SCOO1` on a broken tree said "no findings", exit 0."""
    assert run_kb(["validate", "--select", "SCOO1"], cwd=tree).returncode == 2
    done = run_kb(["validate", "--select", "SC001"], cwd=tree)
    assert done.returncode == 1 and "records/sources/doc.yaml:5:1: SC001" in done.stdout


def test_known_codes_and_prefixes_in_any_case_and_with_commas(tree: Path) -> None:
    assert run_kb(["validate", "--select", "sc"], cwd=tree).returncode == 1
    assert run_kb(["validate", "--select", "rf,LD", "--select", "s"], cwd=tree).returncode == 1
    quiet = run_kb(["validate", "--select", "RF,LD"], cwd=tree)
    assert quiet.returncode == 0 and "no findings" in quiet.stdout
    ignored = run_kb(["validate", "--ignore", "SC001,ld"], cwd=tree)
    assert ignored.returncode == 0, ignored.stdout


def test_fail_on_takes_a_severity_only(tree: Path) -> None:
    done = run_kb(["validate", "--fail-on", "SC001"], cwd=tree)
    assert done.returncode == 2
    assert "Invalid value for '--fail-on'" in done.stderr


def test_explain_suggests_the_code_meant(tree: Path) -> None:
    done = run_kb(["explain", "SCOO1"], cwd=tree)
    assert done.returncode == 2
    assert "no rule 'SCOO1'; did you mean SC001?" in done.stderr


KNOWN = _codes.registered_codes()
code_text = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 ,",
                    max_size=12)


@given(st.lists(code_text, max_size=4))
@settings(max_examples=300, deadline=None)
def test_code_lists_are_accepted_exactly_when_every_entry_prefixes_a_code(
    values: list[str],
) -> None:
    """Property: the callback returns the codes iff each is a non-empty prefix of a real code."""
    entries = [part.strip().upper() for value in values for part in value.split(",")]
    valid = all(entry and any(code.startswith(entry) for code in KNOWN) for entry in entries)
    try:
        parsed = _codes.codes_callback(click.Context(click.Command("t")), click.Option(["--x"]),
                                       tuple(values))
    except click.BadParameter as exc:
        assert not valid
        unknown = [e for e in entries if not e or not any(c.startswith(e) for c in KNOWN)]
        for entry in unknown:
            assert (entry or "an empty code") in exc.message
    else:
        assert valid
        assert parsed == tuple(entries)


# ---------------------------------------------------------------- -o/--output


def test_output_into_a_missing_folder_is_a_usage_error(tree: Path) -> None:
    done = run_kb(["validate", "-o", str(tree / "missing" / "report.txt")], cwd=tree)
    assert done.returncode == 2, done.stderr
    assert "cannot write the report: No such file or directory" in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_output_below_a_file_is_a_usage_error(tree: Path) -> None:
    done = run_kb(["validate", "-o", "records/sources/doc.yaml/report.txt"], cwd=tree)
    assert done.returncode == 2
    assert "cannot write the report: Not a directory" in done.stderr


def test_a_failed_rename_leaves_no_temporary_file(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Permission trouble at the rename (tests run as root, so it is simulated)."""
    from click.testing import CliRunner

    from kb.cli import cli

    def refuse(source: str, target: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.chdir(tree)
    monkeypatch.setattr(os, "replace", refuse)
    done = CliRunner().invoke(cli, ["validate", "-o", "out/report.txt"])
    assert done.exit_code == 2  # the folder is missing
    (tree / "out").mkdir()
    done = CliRunner().invoke(cli, ["validate", "-o", "out/report.txt"])
    assert done.exit_code == 2
    assert "cannot write the report: Permission denied" in done.output
    assert list((tree / "out").iterdir()) == []


def test_output_is_written_whole(tree: Path) -> None:
    done = run_kb(["validate", "-o", "report.txt"], cwd=tree)
    assert done.returncode == 1 and done.stdout == ""
    assert "records/sources/doc.yaml:5:1: SC001" in (tree / "report.txt").read_text()
    assert sorted(p.name for p in tree.iterdir() if p.name.startswith(".report")) == []


# ---------------------------------------------------------------- records/ found upward


@pytest.mark.parametrize("where", ["records/sources", "records", "docs/deep", "."])
def test_a_bare_validate_finds_records_upward(tree: Path, where: str) -> None:
    (tree / where).mkdir(parents=True, exist_ok=True)
    done = run_kb(["validate"], cwd=tree / where)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "SC001" in done.stdout and "checked 1 records" in done.stdout
    shown = os.path.relpath(tree / "records" / "sources" / "doc.yaml", tree / where)
    assert f"{shown}:5:1: SC001" in done.stdout


@pytest.mark.parametrize("command", [["list"], ["show", "sources/doc"]])
def test_other_commands_find_records_upward(tree: Path, command: list[str]) -> None:
    done = run_kb(command, cwd=tree / "records" / "sources")
    assert done.returncode == 0, done.stderr
    assert "sources/doc" in done.stdout or "A document" in done.stdout


def test_no_records_anywhere_above_is_still_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = run_kb(["validate"], cwd=tmp_path / "empty")
    assert done.returncode == 2
    assert "no records folder" in done.stderr
