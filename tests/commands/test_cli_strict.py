"""A command line as strict as ruff: unknown codes, bad output paths, records/ found upward."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.commands import _codes
from tests.conftest import kb_executable, run_kb, source_yaml, write_tree
from tests.inprocess import kb_in_process

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
    done = kb_in_process(["validate", *args], cwd=tree)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert done.stdout == ""


def test_a_typo_in_select_no_longer_hides_the_findings(tree: Path) -> None:
    """The measured case: `--select SCOO1` on a broken tree said "no findings", exit 0."""
    assert kb_in_process(["validate", "--select", "SCOO1"], cwd=tree).returncode == 2
    done = kb_in_process(["validate", "--select", "SC001"], cwd=tree)
    assert done.returncode == 1 and "records/sources/doc.yaml:5:1: SC001" in done.stdout


def test_known_codes_and_prefixes_in_any_case_and_with_commas(tree: Path) -> None:
    assert kb_in_process(["validate", "--select", "sc"], cwd=tree).returncode == 1
    assert (
        kb_in_process(["validate", "--select", "rf,LD", "--select", "s"], cwd=tree).returncode == 1
    )
    quiet = kb_in_process(["validate", "--select", "RF,LD"], cwd=tree)
    assert quiet.returncode == 0 and "no findings" in quiet.stdout
    ignored = kb_in_process(["validate", "--ignore", "SC001,ld"], cwd=tree)
    assert ignored.returncode == 0, ignored.stdout


def test_fail_on_takes_a_severity_only(tree: Path) -> None:
    done = kb_in_process(["validate", "--fail-on", "SC001"], cwd=tree)
    assert done.returncode == 2
    assert "Invalid value for '--fail-on'" in done.stderr


def test_explain_suggests_the_code_meant(tree: Path) -> None:
    done = kb_in_process(["explain", "SCOO1"], cwd=tree)
    assert done.returncode == 2
    assert "no rule 'SCOO1'; did you mean SC001?" in done.stderr


KNOWN = _codes.registered_codes()
code_text = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 ,", max_size=12
)


@given(st.lists(code_text, max_size=4))
@settings(max_examples=300, deadline=None)
def test_code_lists_are_accepted_exactly_when_every_entry_prefixes_a_code(
    values: list[str],
) -> None:
    """Property: the callback returns the codes iff each is a non-empty prefix of a real code."""
    entries = [part.strip().upper() for value in values for part in value.split(",")]
    valid = all(entry and any(code.startswith(entry) for code in KNOWN) for entry in entries)
    try:
        parsed = _codes.codes_callback(
            click.Context(click.Command("t")), click.Option(["--x"]), tuple(values)
        )
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
    done = kb_in_process(["validate", "-o", str(tree / "missing" / "report.txt")], cwd=tree)
    assert done.returncode == 2, done.stderr
    assert "cannot write the report: No such file or directory" in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_output_below_a_file_is_a_usage_error(tree: Path) -> None:
    done = kb_in_process(["validate", "-o", "records/sources/doc.yaml/report.txt"], cwd=tree)
    assert done.returncode == 2
    assert "-o/--output records/sources/doc.yaml/report.txt: Not a directory" in done.stderr


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
    done = kb_in_process(["validate", "-o", "report.txt"], cwd=tree)
    assert done.returncode == 1 and done.stdout == ""
    assert "records/sources/doc.yaml:5:1: SC001" in (tree / "report.txt").read_text()
    assert sorted(p.name for p in tree.iterdir() if p.name.startswith(".report")) == []


# ---------------------------------------------------------------- records/ found upward


@pytest.mark.parametrize("where", ["records/sources", "records", "docs/deep", "."])
def test_a_bare_validate_finds_records_upward(tree: Path, where: str) -> None:
    (tree / where).mkdir(parents=True, exist_ok=True)
    done = kb_in_process(["validate"], cwd=tree / where)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "SC001" in done.stdout and "checked 1 records" in done.stdout
    shown = os.path.relpath(tree / "records" / "sources" / "doc.yaml", tree / where)
    assert f"{shown}:5:1: SC001" in done.stdout


@pytest.mark.parametrize("command", [["list"], ["show", "sources/doc"]])
def test_other_commands_find_records_upward(tree: Path, command: list[str]) -> None:
    done = kb_in_process(command, cwd=tree / "records" / "sources")
    assert done.returncode == 0, done.stderr
    assert "sources/doc" in done.stdout or "A document" in done.stdout


def test_no_records_anywhere_above_is_still_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = kb_in_process(["validate"], cwd=tmp_path / "empty")
    assert done.returncode == 2
    assert "no records folder" in done.stderr


# ---------------------------------------------------------------- named paths


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    """A clean records tree (one source), a README, and YAML outside records/."""
    write_tree(tmp_path / "records", {"sources/doc.yaml": source_yaml()})
    write_tree(
        tmp_path,
        {
            "README.md": "# notes\n",
            "other/x.yaml": source_yaml(),
            "records/empty/notes.txt": "not a record\n",
        },
    )
    return tmp_path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["README.md"], "README.md: is not a record file: records are .yaml files"),
        (["other/x.yaml"], "other/x.yaml: is not in the records tree"),
        (["records/empty"], "records/empty: holds no record files (*.yaml)"),
        (["records/empty/notes.txt"], "notes.txt: is not a record file"),
        (["--root", "records", "other"], "other: is not in the records tree records"),
        (["records/../README.md"], "is not a record file"),
    ],
)
def test_a_named_path_that_is_not_a_record_is_a_usage_error(
    clean: Path, args: list[str], message: str
) -> None:
    done = kb_in_process(["validate", *args], cwd=clean)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert "checked 0 records" not in done.stdout


def test_every_bad_path_is_named_at_once(clean: Path) -> None:
    done = kb_in_process(
        ["validate", "README.md", "records/sources/doc.yaml", "other/x.yaml"], cwd=clean
    )
    assert done.returncode == 2
    assert "README.md: is not a record file" in done.stderr
    assert "other/x.yaml: is not in the records tree" in done.stderr
    assert "doc.yaml:" not in done.stderr


@pytest.mark.parametrize(
    "named", [[], ["records"], ["records/sources"], ["records/sources/doc.yaml"]]
)
def test_records_of_the_tree_are_still_checked(clean: Path, named: list[str]) -> None:
    done = kb_in_process(["validate", *named], cwd=clean)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "checked 1 records: no findings\n"


# ---------------------------------------------------------------- .yml: refused loudly


@pytest.mark.parametrize("named", [[], ["records/sources/twin.yml"], ["records/sources"]])
def test_a_yml_record_is_refused_with_ld012_never_skipped(clean: Path, named: list[str]) -> None:
    (clean / "records" / "sources" / "twin.yml").write_text(source_yaml(), encoding="utf-8")
    for _ in range(2):  # the first run and the one answered from the snapshot agree
        done = kb_in_process(["validate", *named], cwd=clean)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "records/sources/twin.yml:1:1: LD012" in done.stdout
        assert "rename it to twin.yaml" in done.stdout


def test_the_pre_commit_hook_checks_yml_files_too() -> None:
    import yaml

    from tests.conftest import REPO

    # no `files:` filter and no names passed: kb walks records/ itself (a .yml is LD012)
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = next(h for h in hooks if h["id"] == "kb-validate")
    assert "files" not in hook and hook["pass_filenames"] is False


# ---------------------------------------------------------------- kb validate - (stdin)


def _stdin(
    cwd: Path, text: str | bytes, *args: str, real: bool = False
) -> subprocess.CompletedProcess[bytes]:
    """`kb validate ARGS` with `text` on stdin: in this process (tests/inprocess.py), or with
    `real` through the console script and a real pipe (one test here: the entry point)."""
    data = text.encode() if isinstance(text, str) else text
    if not real:
        done = kb_in_process(["validate", *args], cwd=cwd, input=data)
        return subprocess.CompletedProcess(
            done.args, done.returncode, done.stdout.encode(), done.stderr.encode()
        )
    return subprocess.run(
        [*kb_executable(), "validate", *args],
        cwd=cwd,
        input=data,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_stdin_is_checked_as_the_named_file(clean: Path) -> None:
    broken = source_yaml().replace("status: draft", "status: nonsense")
    done = _stdin(clean, broken, "-", "--stdin-filename", "records/sources/doc.yaml", real=True)
    assert done.returncode == 1, done.stderr
    assert b"records/sources/doc.yaml:5:1: SC001" in done.stdout
    assert (clean / "records" / "sources" / "doc.yaml").read_text() == source_yaml()  # untouched
    assert kb_in_process(["validate"], cwd=clean).returncode == 0  # the disk is still clean


def test_stdin_record_resolves_references_and_its_id_against_the_tree(clean: Path) -> None:
    from tests.commands.test_cli import LINK

    good = _stdin(clean, LINK, "-", "--stdin-filename", "records/interconnects/link.yaml")
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout == b"checked 1 records: no findings\n"
    dangling = LINK.replace("source: sources/doc", "source: sources/gone")
    done = _stdin(clean, dangling, "-", "--stdin-filename", "records/interconnects/link.yaml")
    assert done.returncode == 1 and b"records/interconnects/link.yaml:11:" in done.stdout
    assert b"RF001" in done.stdout
    moved = _stdin(clean, LINK, "-", "--stdin-filename", "records/interconnects/elsewhere.yaml")
    assert moved.returncode == 1 and b"ID001" in moved.stdout


def test_stdin_that_refutes_a_claim_elsewhere_reports_that_file(warm_copy: Path) -> None:
    """The README's example through an editor: the H100's HBM bandwidth changed, unsaved."""
    name = "records/hardware/nvidia-h100-sxm.yaml"
    text = (warm_copy.parent / name).read_text(encoding="utf-8")
    edited = text.replace(
        "bandwidth: {value: 3350, unit: GB/s", "bandwidth: {value: 3000, unit: GB/s"
    )
    assert edited != text
    done = _stdin(warm_copy.parent, edited, "-", "--stdin-filename", name)
    assert done.returncode == 1, done.stderr
    out = done.stdout.decode()
    assert any(
        line.startswith("records/flops/sched-tensor-parallel-crossover.yaml:") and " EQ007 " in line
        for line in out.splitlines()
    ), out
    assert f"see: {name}:" in out
    assert kb_in_process(["validate"], cwd=warm_copy.parent).returncode == 0  # disk unchanged


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"\xff\xfe", b"LD002"),
        (b"- a list\n", b"LD011"),
        (b"a: 1\na: 2\n", b"LD005"),
        (b"#" * 2_200_000, b"LD003"),
    ],
    # Named ids: a 2 MB parameter in the id would reach the environment (PYTEST_CURRENT_TEST).
    ids=["not-utf8", "not-a-mapping", "duplicate-key", "too-large"],
)
def test_bad_bytes_on_stdin_are_findings_at_the_filename(
    clean: Path, data: bytes, code: bytes
) -> None:
    done = _stdin(clean, data, "-", "--stdin-filename", "records/sources/doc.yaml")
    assert done.returncode == 1, done.stderr
    assert b"records/sources/doc.yaml:" in done.stdout and code in done.stdout
    assert done.stderr == b""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-"], "`-` needs --stdin-filename"),
        (["-", "records"], "`-` reads one record from stdin"),
        (["--stdin-filename", "records/sources/doc.yaml"], "--stdin-filename goes with PATH `-`"),
        (["-", "--stdin-filename", "README.md"], "README.md: is not a record file"),
        (["-", "--stdin-filename", "other/x.yaml"], "other/x.yaml: is not in the records tree"),
        (["-", "--stdin-filename", "records/sources"], "is a directory"),
    ],
)
def test_stdin_usage_errors(clean: Path, args: list[str], message: str) -> None:
    done = _stdin(clean, source_yaml(), *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr.decode()


@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
@settings(max_examples=60, deadline=None)
def test_any_bytes_on_stdin_give_findings_or_a_clean_run_never_a_fault(data: bytes) -> None:
    """Property (in-process, fast): whatever stdin holds, exit 0 or 1, findings at the name."""
    from click.testing import CliRunner

    from kb.cli import cli

    with tempfile.TemporaryDirectory() as folder:
        write_tree(Path(folder) / "records", {"sources/doc.yaml": source_yaml()})
        old = os.getcwd()
        os.chdir(folder)
        try:
            done = CliRunner().invoke(
                cli, ["validate", "-", "--stdin-filename", "records/sources/new.yaml"], input=data
            )
        finally:
            os.chdir(old)
    assert done.exit_code in (0, 1), done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)
    lines = [line for line in done.output.splitlines() if ": " in line and line[:1] != " "]
    assert all(line.startswith(("records/sources/new.yaml:", "checked ")) for line in lines), lines


# ---------------------------------------------------------------- no traceback, ever


def test_a_file_name_that_is_not_utf8_is_a_finding_not_a_crash(clean: Path) -> None:
    folder = os.fsencode(clean / "records" / "sources")
    with open(folder + b"/bad\xff.yaml", "wb") as handle:
        handle.write(source_yaml().encode())
    for args in (["validate"], ["validate"], ["validate", "--format", "json"], ["list"]):
        done = kb_in_process(args, cwd=clean)  # the last run below is the real `kb`
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr, args
        assert done.returncode in (0, 1), (args, done.stderr)
    done = run_kb(["validate"], cwd=clean)
    assert done.returncode == 1
    assert "records/sources/bad\\xff.yaml:1:1: LD002 the file name is not UTF-8" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["new", "source", "sources/x"], "cannot create records/sources: File exists"),
        (["build", "--out", "README.md/site"], "--out README.md/site: cannot write the site: "),
    ],
)
def test_os_errors_on_what_kb_writes_are_usage_errors(
    tmp_path: Path, args: list[str], message: str
) -> None:
    write_tree(tmp_path, {"README.md": "# notes\n", "records/sources": "a file, not a folder\n"})
    if args[0] == "build":
        (tmp_path / "records" / "sources").unlink()
        write_tree(tmp_path / "records", {"sources/doc.yaml": source_yaml()})
    done = kb_in_process(args, cwd=tmp_path)  # kb.cli.main's mapping, as tests/inprocess.py's
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_calc_refuses_a_number_too_large_to_be_finite() -> None:
    from tests.conftest import SHIPPED_RECORDS

    done = kb_in_process(
        [
            "calc",
            "flops/sched-tensor-parallel-crossover",
            "B_star",
            "--root",
            str(SHIPPED_RECORDS),
            "--set",
            "BW_link=1e999999 GB/s",
        ],
        cwd=SHIPPED_RECORDS,
    )
    assert done.returncode == 2
    assert "'1e999999 GB/s': 1e999999 is not a finite number" in done.stderr


def test_stdin_with_base_compares_stdin_not_the_file_on_disk(tmp_path: Path) -> None:
    from tests.conftest import git_repo_with

    top = git_repo_with(tmp_path / "records", {"sources/doc.yaml": source_yaml()})
    name = "records/sources/doc.yaml"
    changed = source_yaml().replace("title: A document", "title: Another document")
    done = _stdin(top, changed, "-", "--stdin-filename", name, "--base", "HEAD")
    assert done.returncode == 1, done.stdout + done.stderr
    assert b"records/sources/doc.yaml:4:1: VR003" in done.stdout
    same = _stdin(top, source_yaml(), "-", "--stdin-filename", name, "--base", "HEAD")
    assert same.returncode == 0, same.stdout
    (top / name).write_text(changed, encoding="utf-8")  # the disk changed; stdin holds the base
    assert (
        _stdin(top, source_yaml(), "-", "--stdin-filename", name, "--base", "HEAD").returncode == 0
    )
    (top / name).unlink()  # deleted on disk, still on stdin: not a deletion (VR004)
    back = _stdin(top, source_yaml(), "-", "--stdin-filename", name, "--base", "HEAD")
    assert back.returncode == 0, back.stdout
